"""A new server warms up before its first request (app.py's ``st.App`` and ``ui.server_lifespan``).

``streamlit run app.py`` finds the ``st.App`` in app.py and serves it; its lifespan runs
``ui.warm_server`` before the server answers anything, so the first page of a new server finds the
Memory log read, its scripts compiled and its modules imported. Every step is best effort, and the
server starts even when a step fails or hangs.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path

from tests.app.test_memory_pages import many_blocks, write_log
from tests.browser.harness import streamlit_server
from tradingagents.agents.utils.memory import TradingMemoryLog
from tradingagents.config import resolve_config
from tradingagents.memory.log_cache import cache_path

ROOT = Path(__file__).resolve().parents[2]

DISCOVER = """
import json, sys
from pathlib import Path
from streamlit.web.server.app_discovery import discover_asgi_app
import streamlit as st
found = discover_asgi_app(Path("app.py"))
sys.path.insert(0, ".")
import app  # as uvicorn imports it: a module, not Streamlit's __main__ script
from studio import ui
print(json.dumps([found.is_asgi_app, found.import_string, isinstance(app.app, st.App),
                  app.app._user_lifespan is ui.server_lifespan, hasattr(app, "PAGES")]))
"""


def test_streamlit_run_serves_app_py_as_an_st_app_whose_lifespan_warms_the_server(ta_home):
    # in a child process: constructing an st.App pins Streamlit's script folder for the whole process
    out = subprocess.run([sys.executable, "-c", DISCOVER], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=True)
    found, import_string, is_app, lifespan, routed = json.loads(out.stdout.strip().splitlines()[-1])
    assert found and import_string == "app:app" and is_app and lifespan
    assert not routed  # imported as a module, app.py defines the server and draws nothing


def test_warm_server_reads_the_memory_log_once_for_the_first_page(ta_home, monkeypatch):
    from studio import ui

    write_log(many_blocks(30))
    calls = []
    real = TradingMemoryLog.load_summary
    monkeypatch.setattr(TradingMemoryLog, "load_summary", lambda self, **kw: calls.append(1) or real(self, **kw))
    failed = ui.warm_server()
    assert "memory log" not in failed and "markdown" not in failed and "modules" not in failed
    assert calls == [1]
    log = ui.memory_log(resolve_config())  # what the page asks for: the warmed log, no second read
    assert calls == [1] and len(log.entries) == 30 and log.tickers == ["AAPL", "MSFT", "NVDA"]
    TradingMemoryLog(resolve_config()).store_decision("TSLA", "2024-07-01", "New one.", rating="Buy")
    assert len(ui.memory_log(resolve_config()).entries) == 31 and calls == [1, 1]  # a new version is read


def test_warm_server_lists_the_saved_runs_so_the_first_page_reads_none(ta_home, monkeypatch):
    from studio import ui
    from tradingagents.storage import files_runs, list_runs, save_run

    for ticker in ("NVDA", "AAPL"):
        save_run({}, {"company_of_interest": ticker, "trade_date": "2024-05-10"}, "Buy", {"llm_provider": "offline"})
    save_run({}, {"company_of_interest": "NVDA", "trade_date": "2024-05-10"}, "Sell", {"llm_provider": "offline"})
    files_runs._ROWS.clear()  # a new server's process
    read = []
    real = files_runs.load_document
    monkeypatch.setattr(files_runs, "load_document", lambda path: read.append(path) or real(path))
    assert "saved runs" not in ui.warm_server()
    assert len(read) == 3  # two runs and NVDA's earlier version
    assert len(list_runs(resolve_config(), include_previous=True)) == 3 and len(read) == 3  # the page reads none


def test_a_step_that_fails_is_left_to_the_first_page(ta_home, monkeypatch):
    from studio import ui

    monkeypatch.setenv("TRADINGAGENTS_HOLDING_DAYS", "not a number")  # resolve_config refuses it
    failed = ui.warm_server()
    assert "memory log" in failed and "saved runs" in failed and "markdown" not in failed


def test_the_server_starts_when_warming_up_hangs(ta_home, monkeypatch):
    from studio.ui import warmup  # the module whose lifespan calls them

    release = threading.Event()  # set only once the server is serving: a lifespan that waited would hang here
    monkeypatch.setattr(warmup, "warm_server", lambda: release.wait(600))
    monkeypatch.setattr(warmup, "WARM_SERVER_TIMEOUT_S", 0.2)

    async def start() -> str:
        async with warmup.server_lifespan(None):
            release.set()
            return "serving"

    assert asyncio.run(start()) == "serving"


def test_a_new_server_has_read_the_memory_log_before_its_first_request(ta_home):
    path = write_log(many_blocks(40))
    assert not cache_path(path).exists()
    with streamlit_server(ta_home, log_path=ta_home / "server.log"):
        # the server answers its health check only after the lifespan: the log was read (its entries
        # cache written) before any page was asked for
        assert cache_path(path).exists()


def test_the_engine_warm_up_calls_no_model_and_leaves_no_file_behind(ta_home, monkeypatch, tmp_path):
    """The background warm-up builds a team once so the first click does not: on the offline engine and
    the demo market, in a throwaway home, whatever the server is configured with (here a paid provider
    with no key and a desk database that is not there): nothing is written to the home or the database,
    no model is called, and its folder is gone after."""
    import tempfile

    from studio.ui import warmup
    from tradingagents.llm_clients.offline import OfflineChatModel

    monkeypatch.setenv("TRADINGAGENTS_LLM_PROVIDER", "openai")
    monkeypatch.setenv("TRADINGAGENTS_STORAGE_URL", "postgresql://desk@127.0.0.1:9/desk")  # nothing listens on 9
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    calls = []
    monkeypatch.setattr(OfflineChatModel, "_generate", lambda *a, **k: calls.append(a) or 1 / 0)
    before = sorted(ta_home.rglob("*"))
    warmup.warm_engine()
    assert calls == []
    assert sorted(ta_home.rglob("*")) == before
    assert list(tmp_path.iterdir()) == []
