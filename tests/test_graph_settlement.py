"""Settlement on its own (graph/settlement.py) and the memory_enabled switch."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.test_agents_nodes import PromptRecorder
from tests.test_data_csv_returns import write_csv
from tradingagents import team
from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.config import resolve_config
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.session import session_for
from tradingagents.graph.settlement import SETTLED_KEYS, Settler, SettleResult
from tradingagents.graph.trading_graph import TradingAgentsGraph


def _no_graph(monkeypatch):
    """Make building the agent graph (or the graph object) fail loudly."""
    from tradingagents.graph import setup, trading_graph

    def refuse(*_a, **_k):
        raise AssertionError("settling must not build the agent graph")

    monkeypatch.setattr(setup.GraphSetup, "__init__", refuse)
    monkeypatch.setattr(trading_graph.TradingAgentsGraph, "__init__", refuse)
    monkeypatch.setattr(trading_graph.TradingAgentsGraph, "build_graph", refuse)


def test_settler_settles_without_building_the_graph(monkeypatch):
    graph = TradingAgentsGraph(["market"])
    graph.propagate("NVDA", "2024-05-01")
    graph.propagate("7203.T", "2024-05-02")
    # logged under today's session (on a weekend or a holiday, the last one before it): its window is still open
    today = session_for(get_provider({"data_vendor": "demo"}), "AAPL", dt.date.today().isoformat())[0]
    graph.propagate("AAPL", dt.date.today().isoformat())
    _no_graph(monkeypatch)

    rec = PromptRecorder()
    settler = Settler(None)
    settler.llm.callbacks = [rec]
    result = settler.settle()
    assert isinstance(result, SettleResult)
    assert sorted((s["ticker"], s["date"]) for s in result.settled) == [("7203.T", "2024-05-02"),
                                                                         ("NVDA", "2024-05-01")]
    for s in result.settled:
        assert set(s) == set(SETTLED_KEYS) and s["reflection"].strip()
    by_ticker = {s["ticker"]: s for s in result.settled}
    assert by_ticker["7203.T"]["benchmark"] == "^N225" and by_ticker["NVDA"]["benchmark"] == "SPY"
    prompts = [m.content for call in rec.calls for m in call if m.type == "human"]
    assert any("\nAlpha vs ^N225: " in p for p in prompts) and any("\nAlpha vs SPY: " in p for p in prompts)
    # the one still open stays pending with the real reason
    [pending] = result.pending
    assert (pending["ticker"], pending["date"]) == ("AAPL", today)
    assert pending["reason"].startswith("window closes on ") and pending["reason"][-10:] > today
    assert result.problems == [f"AAPL {today}: {pending['reason']}"]
    # written: the log settled, one lesson per role memory (persisted, a fresh object reloads it)
    log = {(e["ticker"], e["date"]): e for e in TradingMemoryLog(None).load_entries()}
    assert not log[("NVDA", "2024-05-01")]["pending"] and log[("AAPL", today)]["pending"]
    for name in team.MEMORY_NAMES:
        assert len(FinancialSituationMemory(name)) == 2, name
    assert Settler(None).settle().settled == []  # nothing left to settle


def test_settler_builds_only_the_quick_model(monkeypatch):
    from tradingagents.llm_clients import factory

    kinds = []
    real = factory.create_llm

    def spy(config=None, kind="quick", **kw):
        kinds.append(kind)
        return real(config, kind, **kw)

    monkeypatch.setattr(factory, "create_llm", spy)
    Settler(None)
    assert kinds == ["quick"]


def test_settler_for_one_ticker_and_the_provider_error_as_reason(ta_home, monkeypatch):
    cfg = resolve_config({"data_vendor": "csv", "checkpoint_enabled": False})
    folder = Path(cfg["csv_data_dir"])
    folder.mkdir(parents=True, exist_ok=True)
    import pandas as pd

    rows = [(d.date().isoformat(), 10.0 + i, 10.1 + i, 9.9 + i, 10.0 + i, 1000)
            for i, d in enumerate(pd.bdate_range("2024-05-01", periods=20))]
    for name in ("ACME", "ACME.L", "SPY"):
        write_csv(folder, name, rows)
    graph = TradingAgentsGraph(["market"], config=cfg)
    graph.propagate("ACME", "2024-05-02")
    graph.propagate("ACME.L", "2024-05-02")  # its benchmark ^FTSE has no file
    _no_graph(monkeypatch)
    settler = Settler(cfg)
    assert settler.settle("SPY").settled == []
    result = settler.settle("ACME.L")
    assert result.settled == []
    [pending] = result.pending
    assert pending["ticker"] == "ACME.L" and "FTSE" in pending["reason"] and "window" not in pending["reason"]
    result = settler.settle()
    assert [s["ticker"] for s in result.settled] == ["ACME"] and [p["ticker"] for p in result.pending] == ["ACME.L"]


def test_graph_settle_pending_delegates_and_keeps_its_problems(monkeypatch):
    graph = TradingAgentsGraph(["market"])
    graph.propagate("NVDA", "2024-05-01")
    calls = []
    real = Settler.settle

    def spy(self, ticker=None):
        calls.append(ticker)
        return real(self, ticker)

    monkeypatch.setattr(Settler, "settle", spy)
    settled = graph.settle_pending("nvda")
    assert calls == ["nvda"] and [s["ticker"] for s in settled] == ["NVDA"]  # the settler validates it
    assert graph.settler.memories["trader_memory"] is graph.trader_memory  # lessons land where agents read
    assert len(graph.trader_memory) == 1 and graph.settle_problems == []


def test_settler_refuses_a_bad_ticker_clearly():
    from tradingagents.errors import ValidationError

    with pytest.raises(ValidationError, match="ticker"):
        Settler(None).settle("../etc")


# ---------------------------------------------------------------------------- memory_enabled
def test_memory_disabled_reads_and_writes_no_role_memory_and_no_past_context():
    cfg = {"memory_enabled": False, "analyst_execution": "sequential"}
    rec = PromptRecorder()
    graph = TradingAgentsGraph(["market"], config=cfg, callbacks=[rec])
    # a lesson that would match, put there by hand: the agents must not see it
    graph.trader_memory.add_situations([("NVDA price trend momentum market report", "SECRET LESSON")])
    graph.propagate("NVDA", "2024-05-01")
    state, _ = graph.propagate("NVDA", "2024-05-20")  # settles the first one on its way
    assert state["past_context"] == ""
    assert not any("SECRET LESSON" in t for t in rec.texts())
    entries = {e["date"]: e for e in TradingMemoryLog(None).load_entries()}
    assert not entries["2024-05-01"]["pending"] and entries["2024-05-01"]["reflection"]  # still logged
    lessons = graph.reflect_and_remember("+2.4%")
    assert set(lessons) == set(team.MEMORY_NAMES)  # computed, but not written
    assert len(graph.trader_memory) == 1 and all(len(graph.memories[n]) == 0 for n in team.MEMORY_NAMES
                                                  if n != "trader_memory")


def test_memory_enabled_reads_the_lessons():
    rec = PromptRecorder()
    graph = TradingAgentsGraph(["market"], config={"analyst_execution": "sequential"}, callbacks=[rec])
    graph.trader_memory.add_situations([("NVDA price trend momentum market report", "SECRET LESSON")])
    graph.propagate("NVDA", "2024-05-01")
    assert any("SECRET LESSON" in t for t in rec.texts())


@pytest.mark.parametrize("enabled", [True, False])
def test_settler_writes_lessons_only_when_memory_is_enabled(enabled):
    graph = TradingAgentsGraph(["market"], config={"memory_enabled": enabled})
    graph.propagate("NVDA", "2024-05-01")
    result = Settler({"memory_enabled": enabled}).settle()
    assert [s["ticker"] for s in result.settled] == ["NVDA"]
    assert len(FinancialSituationMemory("trader_memory")) == (1 if enabled else 0)
