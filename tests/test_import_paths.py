"""One import path per fact: the project imports each module where it lives, never a shim.

The specification's names (``/work/shared``'s SEED_API: ``tradingagents.agents.utils.memory``,
``tradingagents.agents.utils.rating``, ``tradingagents.graph.checkpointer``) stay for code written
against the documents; nothing inside the project (the engine, the studio, the pages, the app)
imports them. An AST scan, so a docstring that mentions a name is no import.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIMS = {
    "tradingagents.agents.utils.memory": "tradingagents.memory",
    "tradingagents.agents.utils.rating": "tradingagents.rating",
    "tradingagents.graph.checkpointer": "tradingagents.storage.sqlite_checkpoint",
}
"""Each specification name → the module that holds its facts."""
GONE = ("tradingagents.graph.results", "tradingagents.llm_clients.presets")


def _project_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for folder in ("tradingagents", "studio", "pages"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, dotted module) of every import in the file, ``from a import b`` giving ``a`` and ``a.b``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return out


def test_nothing_inside_the_project_imports_a_shim_or_a_removed_module():
    shims = set(SHIMS)
    offenders = []
    for path in _project_files():
        if _module_of(path) in shims:
            continue
        for line, name in _imports(path):
            if name in shims or name in GONE:
                offenders.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert offenders == []


def test_the_specifications_names_are_the_real_objects():
    for shim, home in SHIMS.items():
        module, real = importlib.import_module(shim), importlib.import_module(home)
        names = getattr(module, "__all__", None)
        assert names, f"{shim} lists what it re-exports"
        for name in names:
            assert getattr(module, name) is getattr(real, name), f"{shim}.{name}"
    from tradingagents.graph import checkpointer

    assert {"thread_id", "get_checkpointer", "checkpoint_step", "clear_checkpoint"} <= set(checkpointer.__all__)
    for gone in GONE:
        assert importlib.util.find_spec(gone) is None, gone


def test_no_module_swaps_itself_in_sys_modules():
    offenders = []
    for path in _project_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules"
                                                     for t in node.targets)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_each_label_and_colour_has_one_home():
    from studio import charts, compare, ui
    from tradingagents import llm_presets, rating, team, vendors
    from tradingagents.default_config import DATA_VENDORS

    assert set(vendors.VENDOR_LABELS) == set(DATA_VENDORS)
    assert ui.vendor_label is compare.vendor_label is vendors.vendor_label
    assert ui.provider_label("offline") == compare.provider_label("offline") == "Offline engine (no LLM)"
    assert llm_presets.provider_label("offline") == llm_presets.OFFLINE_LABEL
    assert charts.RATING_COLORS is rating.RATING_COLORS and list(rating.RATING_COLORS) == list(rating.RATINGS_5_TIER)
    for tier, color in rating.RATING_COLORS_ON_WHITE.items():
        assert rating.contrast(color, "#ffffff") >= 4.5, tier  # the export's white badge text reads
        assert rating.contrast(rating.RATING_COLORS[tier], "#0E1117") >= 4.5, tier  # the app's dark pill text
    assert list(team.REPORT_TITLES) == list(team.OUTPUT_KEYS)
    assert [team.REPORT_TITLES[r.output_key] for r in team.ANALYSTS] == ["Market", "Sentiment", "News", "Fundamentals"]


def test_one_stable_id_keeps_the_persisted_values():
    from tradingagents.ids import stable_id

    full = stable_id("placeholder", "NVDA", "2024-05-10", "")
    assert len(full) == 64 and stable_id("placeholder", "NVDA", "2024-05-10", "", length=24) == full[:24]
    # the Msg Clear placeholder id saved in checkpoints and states (24 characters, as before)
    assert full[:24] == "9b3bac2c47d3dc0f40fdbc22"
    from langchain_core.messages import HumanMessage

    from tradingagents.agents.utils.agent_utils import create_msg_delete

    update = create_msg_delete()({"company_of_interest": "NVDA", "trade_date": "2024-05-10",
                                  "messages": [HumanMessage("x", id="a")]})
    assert update["messages"][-1].id == "placeholder-9b3bac2c47d3dc0f40fdbc22"
