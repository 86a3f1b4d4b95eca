"""Hardening: data faults, hostile input, secrets on disk, concurrent runs (threads and processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer
from tests.graph_helpers import CallCounter, fail_once_at
from tradingagents.agents.utils.memory import TradingMemoryLog
from tradingagents.dataflows.demo import DemoProvider
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients.offline.analysts import TOOL_NAMES
from tradingagents.validation import ValidationError

DATE = "2024-05-10"
ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ data faults
def test_data_faults_complete_the_run_and_the_report_says_what_was_missing(monkeypatch, ta_home):
    real_ohlcv = DemoProvider.ohlcv

    def news_down(self, *args, **kwargs):
        raise RuntimeError("news feed down")

    def stale_prices(self, ticker, start, end):  # prices up to the date, but not the tool's whole window
        df = real_ohlcv(self, ticker, start, end)
        return df[df.index >= "2024-05-06"] if ticker == "NVDA" else df

    def no_identity(self, ticker):
        raise ConnectionError("reference data down")

    monkeypatch.setattr(DemoProvider, "news", news_down)
    monkeypatch.setattr(DemoProvider, "ohlcv", stale_prices)
    monkeypatch.setattr(DemoProvider, "identity", no_identity)
    state, rating = TradingAgentsGraph().propagate("NVDA", DATE)
    assert state["final_trade_decision"].startswith(f"**Rating**: {rating}")
    assert "identity unavailable" in state["instrument_context"]
    news = TOOL_NAMES["get_news"]  # the missing source named by the data it gives ("company news feed")
    assert "Missing data" in state["news_report"] and f"- {news}" in state["news_report"]
    report = (ta_home / "results" / "NVDA" / DATE / "report.md").read_text()
    assert "Missing data" in report and f"- {news}" in report


def test_empty_or_stale_price_tables_stop_before_any_model_call(monkeypatch, ta_home):
    """No decision without data (issue 11.1): prices that are missing or stop weeks before the
    date refuse the run (exit 3) before any model call; nothing is saved or logged."""
    import pandas as pd

    from tradingagents.errors import DataUnavailable, exit_code_for

    real_ohlcv = DemoProvider.ohlcv
    for fake in (lambda self, t, s, e: pd.DataFrame(
                     columns=["Open", "High", "Low", "Close", "Volume"], index=pd.DatetimeIndex([], name="Date")),
                 lambda self, t, s, e: (lambda df: df[df.index < "2024-02-01"])(real_ohlcv(self, t, s, e))):
        monkeypatch.setattr(DemoProvider, "ohlcv", fake)
        counter = CallCounter()
        with pytest.raises(DataUnavailable) as err:
            TradingAgentsGraph(["market", "news"], callbacks=[counter]).propagate("AAPL", DATE)
        assert exit_code_for(err.value) == 3 and "AAPL" in str(err.value)
        assert sum(counter.calls.values()) == 0
        assert not list(ta_home.rglob("state.json")) and not (ta_home / "memory" / "trading_memory.md").exists()


# ------------------------------------------------------------------ hostile input
@pytest.mark.parametrize(
    "ticker, date",
    [("../../escape", DATE), ("/etc/passwd", DATE), ("C:\\x", DATE), ("NV\x00DA", DATE), ("𝐍𝐕𝐃𝐀", DATE),
     ("ＮＶＤＡ", DATE), ("A" * 10_000, DATE), ("..", DATE), (".", DATE), ("NVDA", "2024-05-10/../../x"),
     ("NVDA", "2024-05-10\x00"), ("NVDA", "９９９９-01-01"), ("NVDA", "1" * 10_000), (["NVDA"], DATE), (None, DATE)],
)
def test_hostile_input_is_refused_and_writes_nothing_anywhere(ta_home, ticker, date):
    parent = ta_home.parent
    counter = CallCounter()
    graph = TradingAgentsGraph(callbacks=[counter])
    before_home = sorted(ta_home.rglob("*"))
    before_parent = sorted(parent.iterdir())
    with pytest.raises(ValidationError) as info:
        graph.propagate(ticker, date)
    message = str(info.value)
    assert ("ticker" in message.lower() or "date" in message.lower()) and len(message) < 600
    assert sum(counter.calls.values()) == 0
    assert sorted(ta_home.rglob("*")) == before_home
    assert sorted(parent.iterdir()) == before_parent


# ------------------------------------------------------------------ secrets
def _files_containing(root: Path, secret: bytes) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and secret in path.read_bytes():
            hits.append(str(path))
    return hits


def test_api_keys_never_reach_any_file_under_the_home(ta_home, monkeypatch):
    param_key = "sk-PARAM-" + "Q7x" * 12
    env_key = "sk-ENV-" + "Z9w" * 12
    with FakeOpenAIServer() as server:
        # a key passed to the graph (an OpenAI-compatible server)
        graph = TradingAgentsGraph(["market"], config=server.llm_config(), api_key=param_key)
        graph.propagate("NVDA", "2024-05-01")
        assert any(param_key in h.get("authorization", "") for h in server.headers)
        # a key from OPENAI_API_KEY (provider openai pointed at the server); a failed run keeps a checkpoint
        monkeypatch.setenv("OPENAI_API_KEY", env_key)
        cfg = server.llm_config(llm_provider="openai")
        failing = TradingAgentsGraph(["market"], config=cfg, callbacks=[fail_once_at("Trader")])
        with pytest.raises(RuntimeError):
            failing.propagate("NVDA", "2024-05-20")  # settles 2024-05-01 first (memory log, memories)
        assert any(env_key in h.get("authorization", "") for h in server.headers)
        assert failing.has_resumable_run("NVDA", "2024-05-20")
    files = [p for p in ta_home.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert "state.json" in names and "report.md" in names and any(p.suffix.startswith(".sqlite") or
                                                                    "checkpoint" in str(p) for p in files)
    assert TradingMemoryLog(None).load_entries()[0]["reflection"]  # the log was written
    for secret in (param_key, env_key):
        assert _files_containing(ta_home, secret.encode()) == []


# ------------------------------------------------------------------ concurrency
def test_two_dates_of_one_ticker_at_once_in_threads(ta_home):
    results, errors = {}, []

    def run(date, mode):
        try:
            state, rating = TradingAgentsGraph(config={"analyst_execution": mode}).propagate("NVDA", date)
            results[date] = rating
        except Exception as exc:  # surfaced below
            errors.append(repr(exc))

    threads = [threading.Thread(target=run, args=("2024-05-09", "sequential")),
               threading.Thread(target=run, args=("2024-05-10", "parallel"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert errors == []
    assert set(results) == {"2024-05-09", "2024-05-10"}
    logged = {(e["ticker"], e["date"]): e["rating"] for e in TradingMemoryLog(None).load_entries()}
    assert logged == {("NVDA", d): r for d, r in results.items()}
    assert (ta_home / "results" / "NVDA" / "2024-05-09" / "state.json").exists()
    assert (ta_home / "results" / "NVDA" / "2024-05-10" / "state.json").exists()


@pytest.mark.slow
def test_two_dates_of_one_ticker_at_once_in_processes(ta_home):
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "tradingagents", "NVDA", d, "--quiet", "--analysts", "market,news"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for d in ("2024-05-08", "2024-05-10")]
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err.decode()
        assert b"Rating: " in out
    dates = sorted(e["date"] for e in TradingMemoryLog(None).load_entries() if e["ticker"] == "NVDA")
    assert dates == ["2024-05-08", "2024-05-10"]


def test_the_same_ticker_and_date_twice_at_once_is_refused_and_the_first_completes(ta_home):
    from tradingagents.graph.trading_graph import RunAlreadyActive

    cfg = {"selected_analysts": ["market"]}
    reached, release = threading.Event(), threading.Event()
    outcome = {}

    def hold_at_first_step():  # polled between supersteps: park the first run there
        reached.set()
        release.wait(60)
        return False

    def first():
        outcome["first"] = TradingAgentsGraph(config=cfg).propagate("NVDA", "2024-05-10", should_stop=hold_at_first_step)

    worker = threading.Thread(target=first)
    worker.start()
    assert reached.wait(60)
    events = []
    with pytest.raises(RunAlreadyActive, match="already running"):
        TradingAgentsGraph(config=cfg).propagate("NVDA", "2024-05-10", on_event=events.append)
    assert events[-1].kind == "run_failed" and events[-1].data["error_type"] == "RunAlreadyActive"
    # another date of the same ticker is not blocked
    TradingAgentsGraph(config=cfg).propagate("NVDA", "2024-05-09")
    release.set()
    worker.join(120)
    assert outcome["first"][1]
    assert [e["date"] for e in TradingMemoryLog(None).load_entries()] == ["2024-05-09", "2024-05-10"]
