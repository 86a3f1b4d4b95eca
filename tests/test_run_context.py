"""One run context and one derivation of a run's checkpoint thread (``graph/run_context.py``)."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from studio.runs import run_thread_id
from tradingagents.config import resolve_config
from tradingagents.graph.run_context import RunContext, run_signature_for, thread_id_for
from tradingagents.graph.trading_graph import TradingAgentsGraph


def test_the_thread_is_the_documented_hash_of_ticker_date_and_the_graphs_signature():
    cfg = resolve_config({"max_debate_rounds": 2, "selected_analysts": ["news", "market"]})
    signature = run_signature_for(cfg, ["news", "market"], "stock")
    assert "analysts=news,market" in signature and "debate=2" in signature
    want = hashlib.sha256(f"NVDA:2024-05-10:{signature}".encode()).hexdigest()[:16]
    assert thread_id_for("NVDA", "2024-05-10", cfg) == want
    # whatever changes the graph changes the thread (a changed graph never resumes an old checkpoint)
    assert thread_id_for("NVDA", "2024-05-10", cfg.replace(max_risk_discuss_rounds=3)) != want
    assert thread_id_for("NVDA", "2024-05-10", cfg, "etf") != want
    assert thread_id_for("NVDA", "2024-05-10", cfg, analysts=["market", "news"]) != want


def test_the_engine_and_the_app_derive_the_same_thread():
    cfg = resolve_config({"selected_analysts": ["market", "fundamentals"], "analyst_execution": "sequential"})
    graph = TradingAgentsGraph(config=cfg)
    for asset in ("stock", "crypto"):  # crypto runs without the fundamentals analyst
        assert graph.thread_id("nvda", "2024-05-10", asset) == thread_id_for("NVDA", "2024-05-10", cfg, asset)
    assert run_thread_id("NVDA", "2024-05-10", cfg) == graph.thread_id("NVDA", "2024-05-10")
    # a graph built with other analysts than its config's keys its threads by its own
    other = TradingAgentsGraph(["news"], config=cfg)
    assert other.thread_id("NVDA", "2024-05-10") == thread_id_for("NVDA", "2024-05-10", cfg, analysts=["news"])
    assert other.thread_id("NVDA", "2024-05-10") != graph.thread_id("NVDA", "2024-05-10")


def test_a_run_reads_one_frozen_context_and_keys_everything_by_its_session():
    graph = TradingAgentsGraph(config={"selected_analysts": ["market"]})
    events = []
    # a Saturday: the run is the Friday's session, as every step after the checks reads it
    _state, rating = graph.propagate("nvda", "2024-05-11", on_event=events.append)
    started = next(e for e in events if e.kind == "run_started")
    tid = thread_id_for("NVDA", "2024-05-10", graph.config)
    assert started.data["thread_id"] == graph.last_run["thread_id"] == tid
    assert started.data["date"] == graph.last_run["date"] == "2024-05-10"
    meta = graph.last_run["record"]["meta"]
    assert meta["requested_date"] == "2024-05-11" and meta["session_note"]
    assert meta["thread_id"] == tid and rating == meta["decision"]["rating"]
    # the steps in order: run_started, then settling (its own step), then the agents
    kinds = [e.kind for e in events]
    assert kinds.index("run_started") < kinds.index("settle_started") < kinds.index("node_started")
    assert kinds[-1] == "run_finished"

    ctx = RunContext(ticker="NVDA", trade_date="2024-05-10", requested_date="2024-05-11", asset_type="stock",
                     analysts=("market",), thread_id=tid, settings={}, reporter=None,
                     should_stop=None, started_at=0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.ticker = "AAPL"
    assert not ctx.stop_requested()
    assert dataclasses.replace(ctx, should_stop=lambda: True).stop_requested()
