"""Role memories are point in time: a back-dated analysis never recalls a lesson learnt later."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tradingagents.agents.utils.agent_utils import recall
from tradingagents.agents.utils.memory import FinancialSituationMemory
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.validation import ValidationError


def _mem(name="bull_memory"):
    return FinancialSituationMemory(name, resolve_config())


def test_as_of_hides_lessons_knowable_only_later():
    mem = _mem()
    mem.add_situations([("tech selloff on rising yields", "old lesson")])  # always knowable
    mem.add_situations([("tech selloff with heavy volume", "june lesson")], known_from="2024-06-10")
    query = "tech selloff heavy volume"
    assert [m["recommendation"] for m in mem.get_memories(query, 2)] == ["june lesson", "old lesson"]
    before = mem.get_memories(query, 2, as_of="2024-06-07")
    assert [m["recommendation"] for m in before] == ["old lesson"]
    assert before[0]["similarity_score"] == 1.0  # normalised among what may be seen
    on_the_day = mem.get_memories(query, 2, as_of="2024-06-10")
    assert [m["recommendation"] for m in on_the_day] == ["june lesson", "old lesson"]
    # persisted: a new instance knows the dates too
    again = _mem()
    assert [m["recommendation"] for m in again.get_memories(query, 5, as_of="2024-01-01")] == ["old lesson"]


def test_as_of_and_known_from_are_validated():
    mem = _mem()
    with pytest.raises(ValidationError):
        mem.add_situations([("a", "b")], known_from="10/06/2024")
    assert len(mem) == 0  # nothing written
    mem.add_situations([("a", "b")], known_from="2024-06-10")
    with pytest.raises(ValidationError):
        mem.get_memories("a", 1, as_of="../x")
    assert mem.get_memories("a", 1, as_of="2024-06-09") == []


def test_recall_passes_the_analysis_date():
    mem = _mem()
    mem.add_situations([("momentum breakdown", "future lesson")], known_from="2024-07-01")
    assert recall(mem, {"trade_date": "2024-06-28"}, "momentum breakdown") == []
    assert recall(mem, {"trade_date": "2024-07-01"}, "momentum breakdown")[0]["recommendation"] == "future lesson"


def test_settlement_dates_each_lesson_at_its_window_close(ta_home):
    cfg = resolve_config({"checkpoint_enabled": False})
    graph = TradingAgentsGraph(["market"], config=cfg)
    graph.propagate("NVDA", "2024-05-01")
    graph.propagate("NVDA", "2024-06-03")  # settles the May decision
    settled = [e for e in graph.memory_log.load_entries() if not e["pending"]]
    assert [e["date"] for e in settled] == ["2024-05-01"]
    lines = (Path(cfg["memory_dir"]) / "bull_memory.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 1 and records[0]["known_from"] == "2024-05-08"  # five business days later
    # a back-dated analysis before the window closed cannot see it; one after it can
    assert graph.bull_memory.get_memories(records[0]["situation"], 1, as_of="2024-05-07") == []
    assert len(graph.bull_memory.get_memories(records[0]["situation"], 1, as_of="2024-05-08")) == 1


def test_past_context_waits_for_the_real_window_close_across_a_holiday(ta_home):
    """A five-session window from Friday 2024-12-20 closes on 12-30 (Christmas is no session); counting
    weekdays would call it closed on 12-27 and show a back-dated analysis an outcome not yet known."""
    from tradingagents.agents.utils.memory import TradingMemoryLog

    log = TradingMemoryLog(None)
    log.store_decision("NVDA", "2024-12-20", "**Rating**: Buy\nholiday window")
    log.store_decision("NVDA", "2024-11-01", "**Rating**: Sell\nold entry")
    log.batch_update_with_outcomes([
        {"ticker": "NVDA", "date": "2024-12-20", "raw": 0.02, "alpha": 0.01, "holding": 5,
         "reflection": "holiday lesson", "end_date": "2024-12-30"},
        {"ticker": "NVDA", "date": "2024-11-01", "raw": -0.01, "alpha": 0.0, "holding": 5,
         "reflection": "november lesson"},  # no end_date recorded: weekdays counted (11-08)
    ])
    assert "holiday lesson" not in log.get_past_context("NVDA", as_of="2024-12-27")
    assert "november lesson" in log.get_past_context("NVDA", as_of="2024-12-27")
    assert "holiday lesson" in log.get_past_context("NVDA", as_of="2024-12-30")
    assert "november lesson" not in log.get_past_context("NVDA", as_of="2024-11-07")
    assert "november lesson" in log.get_past_context("NVDA", as_of="2024-11-08")
    # a new instance reads the close date back from the file
    assert "holiday lesson" not in TradingMemoryLog(None).get_past_context("NVDA", as_of="2024-12-27")
