"""What a new server does before its first request, and the engine's imports warmed in the background."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import streamlit as st

from studio.ui.frame import ENTRYPOINT
from tradingagents.config import (
    resolve_config,
)
from tradingagents.i18n import LANGUAGES as UI_LANGUAGES
from tradingagents.i18n import translator

WARM_MODULES = (
    "pandas",
    "plotly.graph_objects",
    "tradingagents.graph.trading_graph",
    "tradingagents.dataflows.interface",
    "tradingagents.dataflows.tools",
    "tradingagents.dataflows.returns",
    "tradingagents.llm_clients.factory",
    "tradingagents.llm_clients.offline",
    "tradingagents.llm_clients.usage",
    "tradingagents.graph.reflection",
    "langgraph.checkpoint.memory",
    "langgraph.checkpoint.sqlite",
)


WARM_UP_DELAY_S = 3.0  # after the first session's script run: let the browser load that page first
WARM_UP_ENV = "TRADINGAGENTS_STUDIO_WARM_UP"  # "0" turns it off (the bench compares both)


def _lower_this_threads_priority() -> None:
    """Best effort: nice this thread (Linux threads are tasks), so page loads get the CPU first."""

    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError, PermissionError):
        pass


def _warm(delay_s: float = WARM_UP_DELAY_S) -> None:
    """Import the engine, its data layer and plotly in the background so the first click does not pay.

    It waits ``delay_s`` first (the first page is still being sent and rendered then), runs at a lower
    CPU priority and pauses between modules, so a page load that overlaps it is not slowed.
    """
    import importlib
    import time

    _lower_this_threads_priority()
    time.sleep(delay_s)
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a failed warm-up only means the first run imports it itself
            pass
        time.sleep(0.02)  # give the server's threads the interpreter between modules
    try:
        warm_engine()
    except Exception:  # noqa: BLE001 - the first run then does this work itself
        pass


WARM_TICKER, WARM_DATE = "SPY", "2024-01-05"  # any instrument of the demo market


def warm_engine() -> None:
    """The one-time work of a process's first run, done where no user sees it: building a team (the role
    modules, the tools' schemas, the graph's first compile) and the demo market's first prices. It halves
    the time from a server's first click on Start to the model's first words (0.25 s to 0.12 s).

    The team is the offline engine on the demo market in a throwaway home, without the desk's database: no
    model is called, nothing leaves this machine, and nothing is written outside that folder (removed after)."""
    import tempfile

    from tradingagents.dataflows.interface import get_provider
    from tradingagents.dataflows.session import session_for
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    with tempfile.TemporaryDirectory(prefix="ta-warm-") as home:
        config = resolve_config({"home": home, "llm_provider": "offline", "data_vendor": "demo", "storage_url": ""})
        TradingAgentsGraph(config=config)
        session_for(get_provider(config), WARM_TICKER, WARM_DATE)


@st.cache_resource(show_spinner=False)
def warm_up() -> bool:
    """Once per server process (cached), after the first page is on screen (call it last in app.py)."""

    if os.environ.get(WARM_UP_ENV, "1").strip() == "0":
        return False
    threading.Thread(target=_warm, name="ta-warm-up", daemon=True).start()
    return True


@st.cache_resource(max_entries=4, show_spinner=False)
def _memory_log_of(path: str, signature: tuple[int, int, int] | None, _config: Any) -> Any:
    from studio.memlog_view import read_log

    return read_log(_config)


def memory_log(config: dict[str, Any]) -> Any:
    """The Memory log page's ``studio.memlog_view.Log`` of ``config``'s log.

    A log file is read once per version (its size, mtime and inode) for the whole server: one shared
    object (``st.cache_resource``), not a pickled copy per rerun; ``warm_server`` reads it at server
    start. A desk database's log is read on every call (it has no cheap version to key a cache by)."""
    from studio.memlog_view import file_signature, read_log
    from tradingagents.storage import storage_url

    if storage_url(config):
        return read_log(config)
    path = Path(config["memory_log_path"])
    return _memory_log_of(str(path), file_signature(path), config)


WARM_SERVER_TIMEOUT_S = 30.0
"""A server starts taking requests after this long even if ``warm_server`` has not finished (a log on a
slow disk): the first page then does the rest itself."""


def warm_server(root: Path = ENTRYPOINT.parent) -> list[str]:
    """What a new server does once, before it takes its first request, so a user's first page does not.

    A new server's first page paid for: compiling the app's script and the page (Streamlit compiles each
    with its "magic" on first use), the emoji catalogue (read once to check the page icon), the Markdown
    converter's first use, the translations, reading the Memory log (once per version of the log
    file; a desk database's log is read on every visit anyway) and the saved runs' rows (the Run page lists
    them: 0.36 s at 2,000 runs, then only new or changed files are read). Each step is best effort: one that fails
    is left to the first page, as before. Returns the names of the steps that failed.
    """
    import importlib
    import logging

    failed: list[str] = []

    def step(name: str, fn: Any) -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001 - the first page then does this work itself, as before
            failed.append(name)
            logging.getLogger(__name__).debug("warm_server: %s failed", name, exc_info=True)

    def bytecode() -> None:
        from streamlit.runtime import Runtime

        cache = getattr(Runtime.instance(), "_script_cache", None)  # Streamlit's compiled scripts (private)
        if cache is None:
            raise LookupError("Streamlit's script cache is not where this Streamlit keeps it")
        for script in [root / "app.py", *sorted((root / "pages").glob("*.py"))]:
            cache.get_bytecode(str(script))

    def markdown() -> None:
        from studio.memview import situation_html

        situation_html("**a** _b_\n\n- c\n- d\n\n| e | f |\n|---|---|\n| 1 | 2 |\n")

    def translations() -> None:
        for code in UI_LANGUAGES:
            translator(code)

    def memory_log_summary() -> None:
        from tradingagents.storage import storage_url

        config = resolve_config()
        if not storage_url(config):  # a desk database's log has no cache to fill
            memory_log(config)

    def saved_runs() -> None:
        from tradingagents.storage import list_runs, storage_url

        config = resolve_config()
        if not storage_url(config):  # the files' rows are kept per process; a desk database lists in SQL
            list_runs(config, include_previous=True)

    # the modules no step below imports (studio.memview and studio.memlog_view come with theirs)
    step("modules", lambda: [importlib.import_module(name) for name in ("streamlit.emojis", "studio.charts")])
    step("bytecode", bytecode)
    step("markdown", markdown)
    step("translations", translations)
    step("memory log", memory_log_summary)
    step("saved runs", saved_runs)
    return failed


@contextlib.asynccontextmanager
async def server_lifespan(_app: Any) -> Any:
    """The lifespan of app.py's ``st.App``: ``warm_server`` runs before the server takes its first request
    (at most ``WARM_SERVER_TIMEOUT_S``; the server starts anyway after that)."""
    import asyncio

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.to_thread(warm_server), WARM_SERVER_TIMEOUT_S)
    yield None


def skip_bare_python_check() -> None:
    """Spare a new server's first page Streamlit's check that the script runs under ``streamlit run``.

    Before the first element of a process, Streamlit walks the whole call stack with its source
    (``inspect.stack()`` in ``env_util.is_repl``) only to decide whether to print "use streamlit run":
    ~80 ms of the first page of every new server. This app only ever runs under ``streamlit run``
    (app.py calls this), so the check is marked done. A later Streamlit without that flag only
    brings the walk back; nothing else depends on it."""
    import streamlit.delta_generator as dg

    if hasattr(dg, "_use_warning_has_been_displayed"):
        dg._use_warning_has_been_displayed = True  # noqa: SLF001 - Streamlit's own once-per-process flag
