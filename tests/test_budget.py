"""Budgets: max_cost_usd stops a run at a checkpoint (exit 5, resumable); a larger budget continues it.

Real parts: the langchain-openai client against tests/fake_openai.py, with a pricing override so the
fake models cost money, and the real SQLite checkpoints.
"""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAIServer
from tests.graph_helpers import CallCounter, comparable
from tradingagents.errors import BudgetExceeded, ConfigError, exit_code_for
from tradingagents.graph import checkpointer as ckpt
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
# dear enough that one run costs cents: the budget is hit after a few steps
PRICES = {"fake-quick": [1000.0, 4000.0], "fake-deep": [2000.0, 8000.0]}


def _cfg(server, tmp_path, name, **extra):
    extra.setdefault("llm_max_output_tokens", 256)  # the fake's answers fit; a budget reserves 256 an answer
    return server.llm_config(home=str(tmp_path / name), analyst_execution="sequential", llm_pricing=PRICES,
                             **extra)


def test_llm_usage_events_carry_the_running_cost(tmp_path):
    with FakeOpenAIServer() as server:
        events = []
        graph = TradingAgentsGraph(config=_cfg(server, tmp_path, "a"))
        graph.propagate("NVDA", DATE, on_event=events.append)
    costs = [e.data["cost_usd"] for e in events if e.kind == "llm_usage"]
    assert len(costs) > 3 and all(c is not None and c > 0 for c in costs)
    assert costs == sorted(costs)  # running: never goes down
    assert costs[-1] == pytest.approx(graph.last_run["record"]["meta"]["usage"]["cost_usd"])


def test_budget_stops_at_a_checkpoint_and_a_larger_budget_continues_without_redoing_work(tmp_path):
    with FakeOpenAIServer() as server:
        ref_counter = CallCounter()
        ref = TradingAgentsGraph(config=_cfg(server, tmp_path, "ref"), callbacks=[ref_counter])
        ref_state, ref_rating = ref.propagate("NVDA", DATE)
        full_cost = ref.last_run["record"]["meta"]["usage"]["cost_usd"]
        assert full_cost > 0
        ref_requests = len(server.chat_requests)
        server.reset_counters()

        budget = full_cost * 0.75  # the first call's worst case (the Market Analyst, its data in its prompt) is over half a run
        counter = CallCounter()
        graph = TradingAgentsGraph(config=_cfg(server, tmp_path, "b", max_cost_usd=budget), callbacks=[counter])
        events = []
        with pytest.raises(BudgetExceeded) as info:
            graph.propagate("NVDA", DATE, on_event=events.append)
        message = str(info.value)
        assert "budget" in message and "--max-cost" in message and f"${budget:.4f}" in message
        assert exit_code_for(info.value) == 5 and info.value.resumable
        assert events[-1].kind == "run_stopped" and events[-1].data["resumable"] is True
        spent = [e.data["cost_usd"] for e in events if e.kind == "llm_usage"][-1]
        assert spent <= budget  # stopped before the step that would have gone over
        tid = graph.thread_id("NVDA", DATE)
        assert ckpt.has_checkpoint(graph.config, "NVDA", tid)
        first = len(server.chat_requests)  # requests sent: a refused call never reaches the server
        assert 0 < first < ref_requests
        server.reset_counters()

        counter2 = CallCounter()
        again = TradingAgentsGraph(config=_cfg(server, tmp_path, "b", max_cost_usd=full_cost * 10),
                                   callbacks=[counter2])
        state, rating = again.propagate("NVDA", DATE)
        second = len(server.chat_requests)
    assert again.last_run["resumed"] is True
    assert rating == ref_rating and comparable(state) == comparable(ref_state)
    assert first + second == ref_requests  # no model call made twice
    entries = again.memory_log.load_entries()
    assert [(e["ticker"], e["date"]) for e in entries] == [("NVDA", DATE)]  # the decision logged once


def test_max_cost_must_be_a_positive_number():
    from tradingagents.config import resolve_config

    with pytest.raises(ConfigError, match="max_cost_usd"):
        resolve_config({"max_cost_usd": -1})
    with pytest.raises(ConfigError, match="max_cost_usd"):
        resolve_config({"max_cost_usd": "lots"})
    assert resolve_config({"max_cost_usd": "0.5"})["max_cost_usd"] == 0.5
    assert resolve_config({})["max_cost_usd"] is None


def test_cli_max_cost_exits_5_and_says_how_to_continue(tmp_path, monkeypatch, capsys):
    import json

    from tradingagents.cli import main

    monkeypatch.setenv("TRADINGAGENTS_LLM_PRICING", json.dumps(PRICES))
    with FakeOpenAIServer() as server:
        args = ["NVDA", DATE, "--provider", "openai_compatible", "--backend-url", server.base_url,
                "--quick-model", "fake-quick", "--deep-model", "fake-deep", "--home", str(tmp_path), "-q",
                "--sequential"]
        assert main([*args, "--max-cost", "0.01"]) == 5
        err = capsys.readouterr().err
        assert "Budget reached for NVDA" in err and "--max-cost" in err
        assert main([*args, "--max-cost", "1000"]) == 0
        assert "Rating:" in capsys.readouterr().out
        assert main([*args, "--max-cost", "-2"]) == 2
        assert "--max-cost" in capsys.readouterr().err
