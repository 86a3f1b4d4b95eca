"""Every number and every state true (issue 11, 12.3, 12.6): no decision without data, the decision's
own prices, real reasons, lessons never lost, counters across segments, one truth per ticker/date."""

from __future__ import annotations

import datetime as dt
import errno
import json
from pathlib import Path

import pytest

from tests.fake_openai import fake_openai  # noqa: F401
from tests.test_data_csv_returns import rows_for, write_csv
from tradingagents import team
from tradingagents.agents.utils.agent_utils import recall
from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.config import resolve_config
from tradingagents.errors import DataUnavailable, exit_code_for
from tradingagents.graph.settlement import Settler
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"


def _saved(ta_home: Path, ticker: str, date: str) -> tuple[dict, str]:
    folder = ta_home / "results" / ticker / date
    if not folder.exists():  # the results folder is configurable: find it under the home
        [folder] = [p for p in ta_home.rglob(f"{ticker}/{date}") if (p / "state.json").exists()]
    return json.loads((folder / "state.json").read_text()), (folder / "report.md").read_text()


# ---------------------------------------------------------------- 11.1 no decision without data
def test_no_prices_no_decision_no_model_call_nothing_saved(fake_openai, ta_home, tmp_path):  # noqa: F811
    empty = tmp_path / "csv"
    empty.mkdir()
    cfg = fake_openai.llm_config(data_vendor="csv", csv_data_dir=str(empty))
    events = []
    graph = TradingAgentsGraph(["market"], config=cfg)
    with pytest.raises(DataUnavailable) as err:
        graph.propagate("NVDA", DATE, on_event=events.append)
    assert exit_code_for(err.value) == 3
    message = str(err.value)
    assert "NVDA.csv" in message and "CSV" in message  # names the source and what to add
    assert fake_openai.chat_requests == []  # no model call, nothing charged
    assert TradingMemoryLog(resolve_config(cfg)).load_entries() == []
    assert not list(ta_home.rglob("state.json")) and not list(ta_home.rglob("report.md"))
    [terminal] = [e for e in events if e.kind in ("run_finished", "run_failed", "run_stopped")]
    assert terminal.kind == "run_failed" and terminal.data["exit_code"] == 3
    assert "NVDA.csv" in terminal.data["error"] and terminal.data["resumable"] is False


def test_some_tools_without_data_the_run_completes_and_says_what_was_missing(ta_home, tmp_path):
    folder = tmp_path / "csv"
    days = [d.date().isoformat() for d in __import__("pandas").bdate_range("2024-01-02", DATE)]
    write_csv(folder, "NVDA", rows_for({d: 100.0 + i * 0.1 for i, d in enumerate(days)}))
    cfg = {"data_vendor": "csv", "csv_data_dir": str(folder)}
    graph = TradingAgentsGraph(["market", "fundamentals"], config=cfg)
    graph.propagate("NVDA", DATE)
    doc, report = _saved(ta_home, "NVDA", DATE)
    missing = doc["meta"]["missing_data"]
    assert missing and all(isinstance(line, str) and line for line in missing)
    assert any("fundamental" in line.lower() or "balance" in line.lower() for line in missing), missing
    header = report.split("## Portfolio Manager")[0]
    for line in missing:
        assert f"- Missing data: {line}" in header


# ---------------------------------------------------------------- 11.10 non-trading days
def test_a_saturday_is_named_in_context_meta_and_report(ta_home):
    graph = TradingAgentsGraph(["market"])
    state, _ = graph.propagate("NVDA", "2024-05-11")
    note = "no session on 2024-05-11 (Saturday); using 2024-05-10"
    assert note in state["instrument_context"]
    assert state["trade_date"] == DATE == "2024-05-10"  # one session, one decision: keyed by the session
    doc, report = _saved(ta_home, "NVDA", DATE)
    assert doc["meta"]["session_note"] == note and doc["meta"]["requested_date"] == "2024-05-11"
    assert f"- Session: {note}" in report.split("## Portfolio Manager")[0]
    # a trading day has no note (and is a re-analysis of the same session)
    graph.propagate("NVDA", DATE)
    assert _saved(ta_home, "NVDA", DATE)[0]["meta"]["session_note"] is None


# ---------------------------------------------------------------- 11.2 provenance, own source
def test_each_decision_remembers_its_provenance(ta_home):
    TradingAgentsGraph(["market"]).propagate("NVDA", DATE)
    [entry] = TradingMemoryLog(None).load_entries()
    cfg = resolve_config(None)
    assert entry["data_vendor"] == "demo" and entry["llm_provider"] == cfg["llm_provider"] == "offline"
    # the offline engine runs no model: the config's model names (gpt-4o…) are not recorded as if they ran
    assert entry["models"] is None and "gpt" not in TradingMemoryLog(None).path.read_text()


def test_a_networked_decision_records_the_models_that_made_it(ta_home):
    from tests.fake_openai import FakeOpenAIServer

    srv = FakeOpenAIServer().start()
    try:
        cfg = srv.llm_config(quick_think_llm="q-model", deep_think_llm="d-model")
        TradingAgentsGraph(["market"], config=cfg).propagate("NVDA", DATE)
    finally:
        srv.stop()
    [entry] = TradingMemoryLog(None).load_entries()
    assert entry["llm_provider"] == "openai_compatible" and entry["models"] == {"quick": "q-model", "deep": "d-model"}


def test_old_entries_without_provenance_still_load_and_settle(ta_home):
    log = TradingMemoryLog(None)
    assert log.store_decision("NVDA", DATE, "Hold it.", rating="Hold")
    [entry] = log.load_entries()
    assert entry["data_vendor"] is None and entry["models"] is None and entry["entry_price"] is None
    result = Settler(None).settle()
    [settled] = result.settled
    [entry] = TradingMemoryLog(None).load_entries()
    assert not entry["pending"]
    assert entry["raw"] == pytest.approx(settled["raw"]) and entry["entry_price"] > 0
    assert entry["raw"] == pytest.approx(entry["exit_price"] / entry["entry_price"] - 1)
    assert entry["exit_price"] > 0 and entry["benchmark"] == "SPY" and entry["end_date"] > DATE
    assert entry["bench_raw"] == pytest.approx(entry["raw"] - entry["alpha"])


def test_settled_with_its_own_source_not_the_sessions(ta_home, tmp_path):
    log = TradingMemoryLog(None)
    demo_made = {"data_vendor": "demo", "llm_provider": "offline", "models": {"quick": "q", "deep": "d"}}
    csv_made = {**demo_made, "data_vendor": "csv"}
    log.store_decision("NVDA", DATE, "Buy it.", rating="Buy", provenance=demo_made)
    log.store_decision("AAPL", DATE, "Sell it.", rating="Sell", provenance=csv_made)
    # this session reads CSV files from a folder that has none: the demo decision still settles on demo
    empty = tmp_path / "none"
    empty.mkdir()
    result = Settler({"data_vendor": "csv", "csv_data_dir": str(empty)}).settle()
    assert [(s["ticker"], s["date"]) for s in result.settled] == [("NVDA", DATE)]
    from tradingagents.dataflows.interface import get_provider
    from tradingagents.dataflows.returns import compute_returns

    expected = compute_returns(get_provider({"data_vendor": "demo"}), "NVDA", DATE, 5)
    assert result.settled[0]["raw"] == pytest.approx(expected["raw"])
    # the CSV decision's source cannot serve now: it stays pending, and the reason says so
    [pending] = result.pending
    assert pending["ticker"] == "AAPL" and "csv" in pending["reason"] and "AAPL.csv" in pending["reason"]
    assert [e["ticker"] for e in TradingMemoryLog(None).load_entries() if e["pending"]] == ["AAPL"]


# ---------------------------------------------------------------- 11.3, 12.3 real reasons, bad entries
def test_one_bad_entry_is_skipped_and_reported_while_the_rest_settle(ta_home, tmp_path):
    folder = tmp_path / "csv"
    days = [d.date().isoformat() for d in __import__("pandas").bdate_range("2024-04-01", "2024-06-28")]
    for t in ("GOOD", "SPY"):
        write_csv(folder, t, rows_for({d: 100.0 + i for i, d in enumerate(days)}))
    rows = rows_for({d: 50.0 for d in days})
    rows[[r[0] for r in rows].index("2024-05-14")] = ("2024-05-14", "inf", "inf", 1, "inf", "inf")
    write_csv(folder, "BAD", rows)
    cfg = {"data_vendor": "csv", "csv_data_dir": str(folder)}
    log = TradingMemoryLog(resolve_config(cfg))
    log.store_decision("GOOD", DATE, "Buy.", rating="Buy")
    log.store_decision("OLD", "1901-01-02", "Buy.", rating="Buy")  # before 1970: damaged
    log.store_decision("BAD", DATE, "Buy.", rating="Buy")  # an inf close inside its window
    log.store_decision("NOSPY", DATE, "Buy.", rating="Buy")  # no CSV at all
    log.store_decision("CRASH", DATE, "Buy.", rating="Buy")  # its pricing raises an unexpected error
    settler = Settler(cfg)
    real = settler._settle_one

    def crash_on_one(entry):
        if entry["ticker"] == "CRASH":
            raise ArithmeticError("cannot convert float infinity to integer")
        return real(entry)

    settler._settle_one = crash_on_one
    result = settler.settle()
    # the inf row is no price: the window runs one session longer (05-14 skipped), never a crash
    assert [s["ticker"] for s in result.settled] == ["GOOD", "BAD"]
    bad = result.settled[1]
    assert bad["raw"] == pytest.approx(0.0)
    reasons = {p["ticker"]: p["reason"] for p in result.pending}
    assert set(reasons) == {"OLD", "NOSPY", "CRASH"}
    assert "1970" in reasons["OLD"] and "bad entry" in reasons["OLD"]
    assert "NOSPY.csv" in reasons["NOSPY"]
    assert "ArithmeticError" in reasons["CRASH"] and "bad entry" in reasons["CRASH"]
    assert sorted(p.split(" ")[0] for p in result.problems) == ["CRASH", "NOSPY", "OLD"]
    entries = {e["ticker"]: e for e in TradingMemoryLog(resolve_config(cfg)).load_entries()}
    assert not entries["GOOD"]["pending"] and entries["OLD"]["pending"] and entries["CRASH"]["pending"]
    assert entries["BAD"]["end_date"] == "2024-05-20" and entries["BAD"]["exit_price"] == 50.0


def test_an_open_window_and_a_missing_benchmark_are_told_apart(ta_home, tmp_path):
    folder = tmp_path / "csv"
    days = [d.date().isoformat() for d in __import__("pandas").bdate_range("2024-04-01", "2024-06-28")]
    write_csv(folder, "NVDA", rows_for({d: 100.0 + i for i, d in enumerate(days)}))
    cfg = {"data_vendor": "csv", "csv_data_dir": str(folder)}
    log = TradingMemoryLog(resolve_config(cfg))
    log.store_decision("NVDA", DATE, "Buy.", rating="Buy")
    today = dt.date.today().isoformat()
    log.store_decision("NVDA", today, "Buy.", rating="Buy")
    result = Settler(cfg).settle()
    reasons = {p["date"]: p["reason"] for p in result.pending}
    assert not result.settled
    assert "SPY" in reasons[DATE] and "benchmark" in reasons[DATE]
    assert reasons[today].startswith("window closes on ") or "NVDA" in reasons[today]


def test_a_benchmark_that_stops_early_leaves_the_entry_pending(ta_home, tmp_path):
    folder = tmp_path / "csv"
    days = [d.date().isoformat() for d in __import__("pandas").bdate_range("2024-04-01", "2024-06-28")]
    write_csv(folder, "NVDA", rows_for({d: 100.0 + i for i, d in enumerate(days)}))
    write_csv(folder, "SPY", rows_for({d: 400.0 + i for i, d in enumerate(days) if d <= "2024-05-13"}))
    cfg = {"data_vendor": "csv", "csv_data_dir": str(folder)}
    TradingMemoryLog(resolve_config(cfg)).store_decision("NVDA", DATE, "Buy.", rating="Buy")
    result = Settler(cfg).settle()
    assert not result.settled
    [pending] = result.pending
    assert "SPY" in pending["reason"] and "2024-05-13" in pending["reason"] and "2024-05-17" in pending["reason"]


def test_pre_run_settle_problems_reach_the_run_events(ta_home, tmp_path):
    log = TradingMemoryLog(None)
    log.store_decision("NVDA", "2024-04-01", "Buy.", rating="Buy",
                       provenance={"data_vendor": "csv", "llm_provider": "offline"})
    events = []
    TradingAgentsGraph(["market"]).propagate("NVDA", DATE, on_event=events.append)
    kinds = [e.kind for e in events]
    assert kinds[0] == "run_started" and "settle_started" in kinds and "settle_finished" in kinds
    [finished] = [e for e in events if e.kind == "settle_finished"]
    [problem] = finished.data["problems"]
    assert problem.startswith("NVDA 2024-04-01: ") and "csv" in problem


# ---------------------------------------------------------------- 12.6 lessons never lost
def test_a_full_disk_between_settling_and_the_lessons_loses_nothing(ta_home, monkeypatch):
    TradingMemoryLog(None).store_decision("NVDA", DATE, "Buy NVDA.", rating="Buy")
    real_add = FinancialSituationMemory.add_lessons_once  # the settlement's writer
    calls = {"n": 0}

    def full_disk(self, pairs, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_add(self, pairs, **kw)

    monkeypatch.setattr(FinancialSituationMemory, "add_lessons_once", full_disk)
    with pytest.raises(OSError):
        Settler(None).settle()
    monkeypatch.setattr(FinancialSituationMemory, "add_lessons_once", real_add)
    # the retry (any later settle) writes what is missing, and nothing twice
    Settler(None).settle()
    for name in team.MEMORY_NAMES:
        items = FinancialSituationMemory(name, None).items()
        assert len(items) == 1, (name, items)
    [entry] = TradingMemoryLog(None).load_entries()
    assert not entry["pending"] and TradingMemoryLog(None).lessons_due() == []
    assert "lessons_due" not in TradingMemoryLog(None).path.read_text()
    Settler(None).settle()
    assert all(len(FinancialSituationMemory(n, None).items()) == 1 for n in team.MEMORY_NAMES)


# ---------------------------------------------------------------- 11.7 one ticker/date, one truth
def test_a_reanalysis_updates_the_pending_entry_and_the_report_agrees(fake_openai, ta_home):  # noqa: F811
    today = dt.date.today()
    while today.weekday() >= 5:
        today -= dt.timedelta(days=1)
    day = today.isoformat()  # its window is open: the entry stays pending between the runs
    fake_openai.rating = "Hold"
    TradingAgentsGraph(["market"], config=fake_openai.llm_config()).propagate("NVDA", day)
    fake_openai.rating = "Sell"
    events = []
    _, rating = TradingAgentsGraph(["market"], config=fake_openai.llm_config()).propagate(
        "NVDA", day, on_event=events.append)
    assert rating == "Sell"
    [entry] = TradingMemoryLog(None).load_entries()
    assert entry["pending"] and entry["rating"] == "Sell" and "Sell" in entry["decision"]
    note = f"updated the pending decision of {day}: Hold → Sell"
    [done] = [e for e in events if e.kind == "run_finished"]
    assert done.data["record"]["meta"]["log_note"] == note
    doc, report = _saved(ta_home, "NVDA", day)
    assert doc["rating"] == "Sell" and f"- Memory log: {note}" in report


def test_a_reanalysis_after_settlement_keeps_the_settled_entry_and_says_so(fake_openai, ta_home):  # noqa: F811
    fake_openai.rating = "Hold"
    TradingAgentsGraph(["market"], config=fake_openai.llm_config()).propagate("NVDA", DATE)
    fake_openai.rating = "Buy"
    # the second run's pre-run settle settles the Hold first (its window closed long ago)
    TradingAgentsGraph(["market"], config=fake_openai.llm_config()).propagate("NVDA", DATE)
    [entry] = TradingMemoryLog(None).load_entries()
    assert not entry["pending"] and entry["rating"] == "Hold"
    doc, report = _saved(ta_home, "NVDA", DATE)
    assert doc["rating"] == "Buy"
    assert "keeps the settled decision of 2024-05-10 (Hold)" in doc["meta"]["log_note"]
    assert f"- Memory log: {doc['meta']['log_note']}" in report


# ---------------------------------------------------------------- 11.5 counters across segments
def test_usage_accumulates_over_stop_and_resume(fake_openai, ta_home):  # noqa: F811
    cfg = fake_openai.llm_config()
    stops = {"done": False}

    def stop_after_some():  # once, after a few answered calls
        if not stops["done"] and len(fake_openai.chat_requests) >= 3:
            stops["done"] = True
            return True
        return False

    graph = TradingAgentsGraph(["market"], config=cfg)
    from tradingagents.errors import RunStopped

    with pytest.raises(RunStopped):
        graph.propagate("NVDA", DATE, should_stop=stop_after_some)
    first = len(fake_openai.chat_requests)
    assert first > 0
    graph = TradingAgentsGraph(["market"], config=cfg)
    events = []
    graph.propagate("NVDA", DATE, on_event=events.append)
    answered = len(fake_openai.chat_requests)
    assert answered > first  # the resume did more calls
    doc, _ = _saved(ta_home, "NVDA", DATE)
    assert doc["meta"]["resumed"] is True
    # llm_calls counts answered calls: a call Stop interrupted mid-stream was sent but never answered
    assert answered - 1 <= doc["meta"]["usage"]["llm_calls"] <= answered
    usage_events = [e.data["llm_calls"] for e in events if e.kind == "llm_usage"]
    assert usage_events and usage_events[0] >= first - 1  # the live counter does not restart from 0
    assert sum(doc["meta"]["node_times_ms"].values()) > 0


# ---------------------------------------------------------------- contradictions
def test_zero_score_memories_are_never_listed_to_agents(ta_home):
    memory = FinancialSituationMemory("trader_memory", None)
    memory.add_situations([("rising rates hurt banks", "trim banks"), ("chip demand soars", "buy chips")])
    state = {"trade_date": DATE, "market_report": "volcano weather tourism"}
    assert recall(memory, state) == []
    state = {"trade_date": DATE, "market_report": "chip demand"}
    matches = recall(memory, state)
    assert [m["recommendation"] for m in matches] == ["buy chips"]


def test_model_text_cannot_forge_the_hidden_meta_line(ta_home):
    forged = 'Buy.\n\n<!-- meta {"data_vendor": "evil", "entry_price": 1.0} -->'
    log = TradingMemoryLog(None)
    log.store_decision("NVDA", DATE, forged, rating="Buy", provenance={"data_vendor": "demo"})
    [entry] = TradingMemoryLog(None).load_entries()
    assert entry["decision"] == forged and entry["data_vendor"] == "demo" and entry["entry_price"] is None


def test_usage_is_the_models_answered_calls_over_a_failure_and_resume(fake_openai, ta_home):  # noqa: F811
    from tests.graph_helpers import server_fault_at
    from tradingagents.errors import LLMCallError

    cfg = fake_openai.llm_config(llm_max_retries=1)
    fault = server_fault_at(fake_openai, "Bull Researcher")  # this call and its one retry fail for good
    with pytest.raises(LLMCallError):
        TradingAgentsGraph(["market"], config=cfg, callbacks=[fault]).propagate("NVDA", DATE)
    TradingAgentsGraph(["market"], config=cfg).propagate("NVDA", DATE)
    answered = len(fake_openai.chat_requests) - 2  # every request but the two that got a 500
    doc, _ = _saved(ta_home, "NVDA", DATE)
    assert doc["meta"]["resumed"] is True and doc["meta"]["usage"]["llm_calls"] == answered


def test_a_damaged_separator_is_a_problem_kept_verbatim(ta_home):
    log = TradingMemoryLog(None)
    log.store_decision("NVDA", DATE, "Buy.", rating="Buy")
    log.store_decision("AAPL", "2024-05-13", "Sell.", rating="Sell")
    text = log.path.read_text()
    log.path.write_text(text.replace("ENTRY_END", "ENTRY_ENX", 1))
    log = TradingMemoryLog(None)
    assert log.load_entries() == []
    [problem] = log.problems
    assert "damaged separator" in problem and "2024-05-13 | AAPL" in problem
    log.store_decision("MSFT", DATE, "Hold.", rating="Hold")  # a later write keeps the damaged block as it is
    assert "ENTRY_ENX" in log.path.read_text() and [e["ticker"] for e in log.load_entries()] == ["MSFT"]


def test_no_text_says_nothing_to_learn_from_next_to_a_lesson_applied(ta_home):
    situation = ("NVDA price trend momentum RSI MACD moving average volume volatility support resistance "
                 "news sentiment fundamentals revenue margin valuation")
    for name in team.MEMORY_NAMES:
        FinancialSituationMemory(name, None).add_situations(
            [(situation, "Size down when momentum fades.")], known_from="2024-01-02")
    state, _ = TradingAgentsGraph().propagate("NVDA", DATE)
    decision = state["final_trade_decision"]
    assert "Lesson applied: Size down when momentum fades." in decision
    assert "to learn from yet" not in decision and "no settled decision" not in decision.lower()
    assert "No earlier decision on NVDA has settled yet; the lesson below comes from similar situations" in decision
