"""The blind switch of the Run and Watchlist pages: the run goes through the job registry's run path with
graph.blind_run's map (the models see an alias and a shifted calendar), and what the page shows and the
desk stores is in real names, dates and prices."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from tests.app.apptest_utils import new_app, run_until, start_offline_run, texts
from tests.app.test_watchlist_page import _state
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.dataflows.blind import alias_for
from tradingagents.dataflows.interface import get_provider

DATE = "2024-05-10"


def _rating_shown(at) -> bool:
    return any('data-rating="' in h.value for h in at.html)


def test_the_run_pages_blind_switch_runs_blind_and_shows_real_names(ta_home):
    from studio.ui import get_registry

    before = {j.id for j in get_registry().list()}  # the registry is the server process's, shared by tests
    at = new_app("run")
    at.checkbox(key="form_blind").check()  # a form field: sent with the submit
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10))
    run_until(at, _rating_shown)
    assert not at.exception
    [job] = [j for j in get_registry().list("run") if j.id not in before]
    assert job.blind and job.status == "finished" and job.ticker == "NVDA"
    alias = alias_for("NVDA")
    shown = texts(at) + "".join(str(h.value) for h in at.html)
    assert "NVDA" in shown and alias not in shown and "1996-05-10" not in shown
    close = float(get_provider(resolve_config()).ohlcv("NVDA", "2024-05-01", DATE)["Close"].iloc[-1])
    assert f"close {close:.2f}" in job.final_state["market_report"]  # real prices on screen too
    real = Path(job.results_path)
    assert real == Path(ta_home) / "results" / "NVDA" / DATE  # saved where every run is (issue 39.7)
    assert f"close {close:.2f}" in (real / "report.md").read_text()
    # the models saw the alias: its desk holds the run under the alias; the real desk lists it, marked blind
    assert list((Path(ta_home) / "blind" / "desk" / "results").iterdir())[0].name == alias
    assert [(r["ticker"], r["blind"]) for r in storage.list_runs()] == [("NVDA", True)]
    assert [(e["ticker"], e["blind"]) for e in storage.open_memory_log().load_entries()] == [("NVDA", True)]


def test_the_watchlist_pages_blind_switch_runs_each_ticker_blind(ta_home):
    from studio.ui import get_registry

    before = {j.id for j in get_registry().list()}
    at = new_app("watchlist")
    at.text_area(key="wl_tickers").input("NVDA, AAPL").run()
    at.checkbox(key="wl_blind").check().run()
    at.button(key="wl_start").click().run()
    deadline = time.monotonic() + 300  # only catches a hang
    while _state(at).get("status") != "finished":
        assert time.monotonic() < deadline, texts(at)[:1500]
        time.sleep(0.3)
        at.run()
    assert not at.exception
    [job] = [j for j in get_registry().list("batch") if j.id not in before]
    assert job.blind
    outcomes = {o.ticker: o for o in job.snapshot()}
    assert {t: o.status for t, o in outcomes.items()} == {"NVDA": "done", "AAPL": "done"}
    for ticker, o in outcomes.items():
        assert Path(o.results_path) == Path(ta_home) / "results" / ticker / o.date
        report = (Path(o.results_path) / "report.md").read_text()
        # every watchlist ticker is in each run's map: neither alias is left in either report
        assert alias_for("NVDA") not in report and alias_for("AAPL") not in report and ticker in report
    assert sorted((r["ticker"], r["blind"]) for r in storage.list_runs()) == [("AAPL", True), ("NVDA", True)]
    # each tile opens its run: the link is a saved run's like any other, and the Run page finds it
    tiles = "".join(str(h.value) for h in at.html if "ta-tile" in str(h.value))
    assert tiles.count("?ticker=") == 2 and "blind=1" not in tiles
    from streamlit.testing.v1 import AppTest

    from tests.app.apptest_utils import APP

    run_page = AppTest.from_file(APP, default_timeout=300)
    for k, v in {"ticker": "NVDA", "date": outcomes["NVDA"].date}.items():
        run_page.query_params[k] = v
    run_page.run()
    assert not run_page.exception and not run_page.error, [e.value for e in run_page.error]
    assert f"Saved run: NVDA as of {outcomes['NVDA'].date}" in texts(run_page)
