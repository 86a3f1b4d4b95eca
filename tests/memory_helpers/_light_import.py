"""Import the memory module without running ``tradingagents/agents/__init__.py``.

That package initialiser imports every agent (langgraph, langchain: seconds of start-up on a busy
CI machine). The helpers only exercise the memories (``agents/utils/memory.py``, which re-exports
the ``tradingagents.memory`` package, and ``rating.py`` which it uses), so they register the two
parent packages as bare packages pointing at their real folders; the modules themselves are the
real ones.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def load_memory_module():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    for name, folder in (
        ("tradingagents.agents", ROOT / "tradingagents" / "agents"),
        ("tradingagents.agents.utils", ROOT / "tradingagents" / "agents" / "utils"),
    ):
        if name not in sys.modules:
            pkg = types.ModuleType(name)
            pkg.__path__ = [str(folder)]
            sys.modules[name] = pkg
    from tradingagents.agents.utils import memory

    return memory
