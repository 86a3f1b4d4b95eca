"""The memory package: light to import, no cycles, and the seed's module path still names it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("tokens", "bm25", "files", "index_store", "log_format", "log_index", "situation_memory", "trading_log")


def _fresh(code: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(out.stdout)


def test_the_seed_path_and_the_package_name_the_same_objects():
    import tradingagents.memory as pkg
    from tradingagents.agents.utils import memory as seed

    for name in seed.__all__:
        assert getattr(seed, name) is getattr(pkg, name)
    assert set(seed.__all__) >= {"FinancialSituationMemory", "TradingMemoryLog", "SEPARATOR", "bm25_tokenize"}


def test_importing_the_memories_loads_neither_langgraph_nor_langchain_nor_the_agents():
    got = _fresh(
        "import json, sys\n"
        "import tradingagents.agents.utils.memory\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain',"
        " 'langchain_core', 'streamlit') or m.startswith('tradingagents.agents.') and"
        " m not in ('tradingagents.agents.utils', 'tradingagents.agents.utils.memory',"
        " 'tradingagents.agents.utils.rating'))))"
    )
    assert got == []


def test_every_module_imports_on_its_own_first():
    # no import cycle: each module can be the first one imported in a fresh interpreter
    for name in MODULES:
        assert _fresh(f"import json, tradingagents.memory.{name}; print(json.dumps(1))") == 1
