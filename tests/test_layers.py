"""The engine's layers as docs/ARCHITECTURE.md draws them: no upward import, no cycle, a light memory layer.

The diagram is read from the document itself (the lines under ``tradingagents/``, top first), so the
picture and the code cannot drift apart: a new module must be drawn before this passes. Every
``import`` counts, also one inside a function (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tradingagents"
ENTRY = "__main__.py"


def diagram_levels() -> list[list[str]]:
    """The engine's lines of the layer diagram, top first: each a list of units ("graph/", "cli.py")."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    lines = block.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("tradingagents/"))
    levels: list[list[str]] = []
    carry = False  # the previous line's names ended with a comma: this line goes on with them
    for line in lines[start + 1:]:
        m = re.match(r"^\s+((?:[a-z_][a-z0-9_]*(?:\.py|/)(?:,\s?|\s|$))+)", line)
        if not m:
            continue
        names = re.findall(r"[a-z_][a-z0-9_]*(?:\.py|/)", m.group(1))
        if carry:
            levels[-1].extend(names)
        else:
            levels.append(names)
        carry = m.group(1).rstrip().endswith(",")
    return levels


def _modules() -> dict[str, Path]:
    out = {}
    for f in PACKAGE.rglob("*.py"):
        parts = f.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


MODULES = _modules()


def unit(module: str) -> str | None:
    """``tradingagents.storage.pg`` → "storage/", ``tradingagents.fileio`` → "fileio.py"; None for the package."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    return parts[1] + "/" if (PACKAGE / parts[1]).is_dir() else parts[1] + ".py"


def imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports (anywhere in it), as the longest known name."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()

    def known(name: str) -> str:
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        return name

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(known(a.name) for a in node.names if a.name.split(".")[0] == "tradingagents")
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            if base.split(".")[0] != "tradingagents":
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                found.add(full if full in MODULES else known(base))
    found.discard(module)
    return found


def test_the_diagram_names_every_part_of_the_engine_once():
    levels = diagram_levels()
    drawn = [u for level in levels for u in level]
    assert len(drawn) == len(set(drawn)), drawn
    units = {unit(m) for m in MODULES} - {None}
    assert units - set(drawn) == set(), "draw these in docs/ARCHITECTURE.md's layer diagram"
    assert set(drawn) - units == set(), "the diagram names parts that do not exist"
    assert levels[0] == [ENTRY] and "fileio.py" in levels[-1] and "storage/" in drawn


def test_each_layer_imports_only_the_layers_below_it():
    levels = diagram_levels()
    rank = {u: i for i, level in enumerate(levels) for u in level}
    ground = len(levels) - 1
    wrong = []
    for module in MODULES:
        here = unit(module)
        for target in imports(module):
            there = unit(target)
            if here is None or there is None or there == here:
                continue
            if rank[there] > rank[here] or (rank[there] == rank[here] == ground):
                continue
            wrong.append(f"{module} imports {target} ({here} is not above {there})")
    assert wrong == []


def test_no_module_of_the_package_imports_itself_in_a_circle():
    graph = {}
    for module in MODULES:
        edges = set()
        for target in imports(module):  # importing a.b.c runs a/__init__ and a/b/__init__ too
            parts = target.split(".")
            for i in range(2, len(parts) + 1):
                name = ".".join(parts[:i])
                if name in MODULES and name != module and not module.startswith(name + "."):
                    edges.add(name)
        graph[module] = edges
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = [stack.pop()]
            while comp[-1] != v:
                comp.append(stack.pop())
            if len(comp) > 1:
                cycles.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in graph:
            if v not in index:
                visit(v)
    finally:  # the process's limit is every later test's too (a nested-JSON refusal relies on it)
        sys.setrecursionlimit(limit)
    assert cycles == []


def _loaded_by(statement: str) -> list[str]:
    code = f"import sys; {statement}; print(' '.join(m for m in sys.modules if m.startswith('tradingagents')))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_atomic_write_and_the_memories_load_nothing_above_them():
    # a fresh interpreter: the memory layer (the Memory pages, ``settle``) never pulls storage in
    loaded = _loaded_by("import tradingagents.memory, tradingagents.memory.trading_log")
    assert not [m for m in loaded if m.startswith(("tradingagents.storage", "tradingagents.graph",
                                                   "tradingagents.agents"))], loaded
    assert sorted(_loaded_by("import tradingagents.fileio")) == ["tradingagents", "tradingagents.fileio"]


def test_the_news_tools_count_tone_without_loading_the_offline_engine():
    # the headline tone tally is data: a run on a real provider must not pay for importing the offline
    # engine (its role writers, Babel) the first time a news tool answers
    statement = ("from tradingagents.dataflows.tools import make_tools; "
                 "tools = make_tools({'data_vendor': 'demo'}, as_of='2024-05-10'); "
                 "text = tools['get_news'].invoke({'ticker': 'NVDA', 'start_date': '2024-05-01', "
                 "'end_date': '2024-05-10'}); "
                 "assert '# Headline tone (word lexicon):' in text, text[:400]")
    loaded = _loaded_by(statement)
    assert "tradingagents.lexicon" in loaded
    assert not [m for m in loaded if m.startswith("tradingagents.llm_clients")], loaded
