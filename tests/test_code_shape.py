"""The app's code keeps the shape docs/ARCHITECTURE.md describes: short functions, thin pages, a Streamlit
package split by concern, and Streamlit imported only where it may be.

Read from the source (AST), so a long function or a fat page fails here by name.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_FUNCTION_LINES = 80
SHORT_FUNCTION_DIRS = ("studio", "pages", "tradingagents/graph")
MAX_RUN_PAGE_LINES = 250
MAX_UI_MODULE_LINES = 350


def _files(*dirs: str) -> list[Path]:
    return sorted(f for d in dirs for f in (ROOT / d).rglob("*.py"))


def long_functions(*dirs: str) -> list[str]:
    """Every function (methods and nested ones too) longer than ``MAX_FUNCTION_LINES``, from ``def`` to its end."""
    out = []
    for f in _files(*dirs):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    out.append(f"{f.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    return out


def test_no_function_of_the_app_or_the_graph_is_over_80_lines():
    assert long_functions(*SHORT_FUNCTION_DIRS) == []


def test_the_run_page_is_thin_and_each_ui_module_small():
    assert len((ROOT / "pages" / "run.py").read_text(encoding="utf-8").splitlines()) < MAX_RUN_PAGE_LINES
    big = [f"{f.relative_to(ROOT)} ({n} lines)" for f in _files("studio/ui")
           if (n := len(f.read_text(encoding="utf-8").splitlines())) >= MAX_UI_MODULE_LINES]
    assert big == []
    assert not (ROOT / "studio" / "ui.py").exists()  # a module beside the package would shadow nothing, confuse all


def _imports_streamlit(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "streamlit" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            return True
    return False


def test_only_studio_ui_imports_streamlit_in_studio_and_never_the_engine():
    wrong = [str(f.relative_to(ROOT)) for f in _files("studio", "tradingagents")
             if _imports_streamlit(f) and "studio/ui/" not in f.relative_to(ROOT).as_posix()]
    assert wrong == []
    assert _imports_streamlit(ROOT / "studio" / "ui" / "frame.py")  # the scan finds what it looks for


def _is_router_check(stmt: ast.stmt) -> bool:
    text = ast.unparse(stmt)
    return "ui.require_router()" in text


def test_every_page_checks_its_router_first_and_ends_with_main():
    for f in _files("pages"):
        body = [s for s in ast.parse(f.read_text(encoding="utf-8")).body
                if not isinstance(s, (ast.Import, ast.ImportFrom))
                and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]  # the docstring
        assert body and _is_router_check(body[0]), f"{f.name}: ui.require_router() comes first"
        assert ast.unparse(body[-1]) == "main()", f"{f.name}: main() comes last"
