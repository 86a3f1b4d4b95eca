"""The Backtest page under AppTest: form, cost estimate, live progress, results, refresh, stop/resume."""

from __future__ import annotations

import datetime as dt
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from studio import backtest_view as view
from studio.jobs import JobRegistry
from tests.app.apptest_utils import texts

ROOT = Path(__file__).resolve().parents[2]
PAGE = "pages/backtest.py"


def _page(query: dict[str, str] | None = None) -> AppTest:
    """The page inside app.py's navigation once it is listed there, else the page file on its own."""
    if PAGE in (ROOT / "app.py").read_text(encoding="utf-8"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.run()
        at.switch_page(PAGE)
    else:
        at = AppTest.from_file(str(ROOT / PAGE), default_timeout=300)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def _until(at: AppTest, predicate, timeout: float = 300.0) -> AppTest:
    deadline = time.monotonic() + timeout
    while True:
        at.run()
        if predicate(at):
            return at
        assert time.monotonic() < deadline, f"not reached; exceptions={[e.value for e in at.exception]}; " \
                                            f"text={texts(at)[:1500]}"
        time.sleep(0.2)


def _fill(at: AppTest, tickers: str, start: dt.date, end: dt.date, every: int = 1) -> AppTest:
    at.text_input(key="bt_tickers").input(tickers)
    at.date_input(key="bt_start").set_value(start)
    at.date_input(key="bt_end").set_value(end)
    at.number_input(key="bt_every").set_value(every)
    return at.run()


def _done(at: AppTest) -> int:
    for el in at.html:
        value = str(el.value)
        if "ta-bt-state" in value:
            return int(value.split('data-done="')[1].split('"')[0])
    return -1


def _status(at: AppTest) -> str:
    for el in at.html:
        value = str(el.value)
        if "ta-bt-state" in value and "data-status=" in value:
            return value.split('data-status="')[1].split('"')[0]
    return "running" if any("ta-bt-state" in str(el.value) for el in at.html) else ""


def test_backtest_page_runs_live_and_shows_the_results(ta_home):
    at = _page()
    assert not at.exception
    _fill(at, "NVDA", dt.date(2024, 6, 3), dt.date(2024, 6, 21))
    assert "About 15 steps on the offline engine" in texts(at)
    at.button(key="bt_start_btn").click()
    at.run()
    backtest_id = at.query_params["bt"][0] if isinstance(at.query_params["bt"], list) else at.query_params["bt"]
    assert backtest_id.startswith("NVDA_2024-06-03_2024-06-21_")
    live_text = " ".join(str(p.proto.text) for p in at.get("progress"))
    assert "of 15" in live_text and live_text.startswith("Step ")  # live: "Step i of N · … ETA …"
    at = _until(at, lambda a: _status(a) == "finished")
    assert not at.exception
    tables = [df.value for df in at.dataframe]
    paper = next(t for t in tables if "Strategy" in t.columns)
    assert {"TradingAgents", "Buy & Hold", "MACD", "KDJ & RSI", "ZMR", "SMA"} <= set(paper["Strategy"])
    assert {"CR %", "ARR %", "SR", "MDD %"} <= set(paper.columns)
    # the intervals, the team's p-value and the default cost are shown beside the paper's columns
    assert {"CR 95% CI", "SR 95% CI", "Alpha 95% CI", "p vs B&H", "Cost bps"} <= set(paper.columns)
    bh = paper[paper["Strategy"] == "Buy & Hold"].iloc[0]
    assert bh["CR 95% CI"].startswith("[") and bh["Cost bps"] == 5.0
    # the verdict on top, the p-value beside the return, nothing annualised over 15 trading days
    assert list(paper.columns)[:5] == ["Ticker", "Strategy", "CR %", "CR 95% CI", "p vs B&H"]
    assert set(paper["ARR %"]) == {view.DASH} and "15 trading days are under a year" in texts(at)
    assert any("edge: " in str(m.value) and "pts against Buy & Hold, p = " in str(m.value) for m in at.markdown)
    steps = next(t for t in tables if "rating" in t.columns)
    assert len(steps) == 15
    labels = [t.label for t in at.tabs]
    assert {"Equity vs baselines", "Drawdown", "Ratings over the price"} <= set(labels)
    # each step links to its run and its debates (page links in the app; plain links when the page stands alone)
    at.selectbox(key="bt_step_pick").set_value(14)
    at.run()
    page_links = at.get("page_link")
    if page_links:
        shown = " ".join(str(el.proto) for el in page_links)
        assert "2024-06-21" in shown and "NVDA" in shown
    else:
        shown = " ".join(str(m.value) for m in at.markdown)
        assert "[Run NVDA 2024-06-21](./?ticker=NVDA&date=2024-06-21&lang=en)" in shown
        assert "[Debates NVDA 2024-06-21](./debates?ticker=NVDA&date=2024-06-21&lang=en)" in shown

    # folders are named from the home folder, never as the server's absolute paths
    shown = texts(at)
    saved = [c for c in shown.split("\n") if "Saved in" in c] or [shown[shown.find("Saved in"):][:200]]
    assert saved[0] == "Saved in `results/NVDA/2024-06-21`", saved
    assert f"Folder: `backtests/{backtest_id}`" in shown, shown[-600:]
    assert str(ta_home) not in shown
    # the past backtests list it as finished with every step, not as running (0/15)
    label = at.selectbox(key="bt_past_pick").format_func(0)
    assert "finished (15/15 steps)" in label and "running" not in label, label

    # a refresh (a new session with only the URL) shows the same finished backtest, read from disk
    fresh = _page({"bt": backtest_id})
    assert not fresh.exception and _status(fresh) == "finished"
    assert any("Strategy" in df.value.columns for df in fresh.dataframe)


def test_stop_and_resume_from_the_page(ta_home, monkeypatch):
    import threading

    from tradingagents.graph.trading_graph import TradingAgentsGraph

    real = TradingAgentsGraph.propagate
    calls: list[int] = []
    release = threading.Event()

    def gated(self, *args, **kwargs):  # from the third step on, wait until Stop has been pressed
        calls.append(1)
        if len(calls) > 2:
            release.wait(300)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(TradingAgentsGraph, "propagate", gated)
    at = _page()
    _fill(at, "AAPL", dt.date(2024, 6, 3), dt.date(2024, 6, 28))
    at.button(key="bt_start_btn").click()
    at.run()
    at = _until(at, lambda a: any(b.key == "bt_stop" for b in a.button) and _done(a) >= 2)
    at.button(key="bt_stop").click()
    at.run()  # the click has asked the backtest to stop: the held step may end now
    release.set()
    at = _until(at, lambda a: _status(a) == "stopped")
    assert "Resume continues where it stopped" in texts(at)
    done_at_stop = _done(at)
    assert 2 <= done_at_stop < 20
    at.button(key="bt_resume").click()
    at.run()
    at = _until(at, lambda a: _status(a) == "finished")
    assert not at.exception


def test_paid_model_shows_a_cost_estimate_and_needs_confirmation(ta_home):
    at = _page()
    at.session_state["set_provider"] = "openai"
    at.run()
    _fill(at, "NVDA,AAPL", dt.date(2024, 6, 3), dt.date(2024, 6, 28), every=5)
    shown = texts(at)
    assert "model calls" in shown and "8 steps" in shown
    assert at.button(key="bt_start_btn").disabled
    at.checkbox(key="bt_confirm").check()
    at.run()
    assert not at.button(key="bt_start_btn").disabled
    # bad input says what to do and starts nothing
    at.text_input(key="bt_tickers").input("NV/DA")
    at.run()
    assert "not allowed" in texts(at) and at.button(key="bt_start_btn").disabled


def test_registry_opens_a_backtest_from_disk_after_a_restart(ta_home):
    from tradingagents.backtest.engine import BacktestSpec

    reg = JobRegistry()
    spec = BacktestSpec.make("NVDA", "2024-06-03", "2024-06-07")
    bid = reg.start_backtest(spec, {})
    assert reg.backtest(bid).wait(300) and reg.backtest(bid).status == "finished"
    again = JobRegistry().backtest(bid, {})  # a new process knows only the folder
    assert again is not None and again.status == "finished" and again.backtest.done_steps() == 5
    assert again.owner is None and again.result == {"folder": str(again.backtest.folder)}
    assert JobRegistry().backtest("../etc", {}) is None and JobRegistry().backtest("nope", {}) is None


def test_another_browsers_backtest_is_watched_but_not_stopped(ta_home, monkeypatch):
    import threading

    from studio.ui import get_registry
    from tradingagents.backtest.engine import Backtest, BacktestSpec

    release = threading.Event()
    monkeypatch.setattr(Backtest, "run", lambda self, on_progress=None, should_stop=None: release.wait(300))
    get_registry.clear()
    bid = get_registry().start_backtest(BacktestSpec.make("NVDA", "2024-06-03", "2024-06-07"), {},
                                        owner="another-browser")
    try:
        at = _page({"bt": bid})
        assert not at.exception
        assert _status(at) == "running"  # anyone may watch
        assert not [b for b in at.button if b.key == "bt_stop"]
        assert "only that browser can stop or resume it" in texts(at)
        assert get_registry().backtest(bid).running
    finally:
        release.set()
        get_registry().backtest(bid).wait(300)
        get_registry.clear()


def test_the_budget_field_stops_a_backtest_within_its_budget(ta_home, monkeypatch):
    """Issue 41, point 4: a backtest had no overall budget ($9.47 billed, exit 0). The page's Budget field
    is the whole backtest's: it stops at a checkpoint, billed within it (counted by the fake server)."""
    import json

    from tests.fake_openai import FakeOpenAIServer

    steep = {"fake-quick": [1000.0, 1000.0], "fake-deep": [1000.0, 50000.0]}
    with FakeOpenAIServer() as server:
        monkeypatch.setenv("TRADINGAGENTS_LLM_PRICING", json.dumps(steep))
        monkeypatch.setenv("TRADINGAGENTS_LLM_MAX_OUTPUT_TOKENS", "256")
        at = _page()
        at.session_state["set_provider"] = "openai_compatible"
        at.session_state["set_base_url"] = server.base_url
        at.session_state["set_quick"], at.session_state["set_deep"] = "fake-quick", "fake-deep"
        at.run()
        _fill(at, "NVDA", dt.date(2024, 4, 1), dt.date(2024, 5, 10), every=5)
        at.number_input(key="bt_budget").set_value(4.0)
        at.checkbox(key="bt_confirm").check()
        at.run()
        at.button(key="bt_start_btn").click()
        at.run()
        _until(at, lambda a: _status(a) == "stopped", timeout=240)
        assert server.billed_usd(steep) <= 4.0
        assert "backtest's budget is reached" in texts(at)
