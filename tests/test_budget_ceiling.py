"""A budget is a hard ceiling, with a steep pricing table ($1,000 per 1M tokens; the deep model, the
Portfolio Manager's and the Research Manager's, writes at $50,000 per 1M): what the provider bills
never passes ``max_cost_usd``, the run stops resumable (exit 5, never 0 above the budget), and a
larger budget continues it. The same for a batch's budget across tickers running at once.

Real parts: the langchain-openai client against tests/fake_openai.py (which honours ``max_tokens``
and records what each answer bills), SQLite checkpoints, the CLI's ``main``.
"""

from __future__ import annotations

import json
import threading

import pytest

from tests.fake_openai import FakeOpenAIServer
from tradingagents import pricing
from tradingagents.batch import exit_code, run_batch
from tradingagents.errors import BudgetExceeded, exit_code_for
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
STEEP = {"fake-quick": [1000.0, 1000.0], "fake-deep": [1000.0, 50000.0]}


def _cfg(server, home, **extra):
    extra.setdefault("llm_max_output_tokens", 256)
    return server.llm_config(home=str(home), llm_pricing=STEEP, **extra)


@pytest.mark.parametrize("budget", [0.5, 3.0, 20.0])
@pytest.mark.parametrize("execution", ["parallel", "sequential"])
def test_a_run_never_spends_above_its_budget_and_continues_with_a_larger_one(tmp_path, budget, execution):
    with FakeOpenAIServer() as server:
        graph = TradingAgentsGraph(config=_cfg(server, tmp_path, max_cost_usd=budget,
                                               analyst_execution=execution))
        events = []
        with pytest.raises(BudgetExceeded) as info:
            graph.propagate("NVDA", DATE, on_event=events.append)
        billed = server.billed_usd(STEEP)
        assert billed <= budget, f"billed ${billed:.4f} above the ${budget} budget"
        assert exit_code_for(info.value) == 5 and info.value.resumable
        assert events[-1].kind == "run_stopped" and events[-1].data["resumable"] is True
        shown = [e.data["cost_usd"] for e in events if e.kind == "llm_usage"]
        assert all(c <= budget for c in shown)

        server.reset_counters()
        again = TradingAgentsGraph(config=_cfg(server, tmp_path, max_cost_usd=100_000.0,
                                               analyst_execution=execution))
        _state, rating = again.propagate("NVDA", DATE)
    assert rating == "Hold"
    assert again.last_run["record"]["meta"]["usage"]["cost_usd"] <= 100_000.0


def test_four_parallel_analysts_share_one_reservation(tmp_path):
    """Each first call of the four analysts fits the budget alone; together they do not: the ledger
    admits only as many as fit, whatever the threads' timing."""
    gate = threading.Barrier(4, timeout=1.0)

    def delay(_body):  # the calls that are sent wait for each other: they are in flight together
        try:
            gate.wait()
        except threading.BrokenBarrierError:
            pass
        return 0.0

    with FakeOpenAIServer(chunk_delay_s=delay) as server:
        ref = TradingAgentsGraph(config=_cfg(server, tmp_path / "ref", analyst_execution="parallel"))
        ref.propagate("NVDA", DATE)
        first_four = server.chat_requests[:4]
        # an upper bound of each first call's reservation (the JSON of its messages and tools, in bytes)
        worst = max(pricing.cost_usd(b["model"], len(json.dumps(b["messages"]).encode())
                                     + len(json.dumps(b.get("tools")).encode()) + 64, 256, STEEP)
                    for b in first_four)
        server.reset_counters()
        gate.reset()
        budget = worst * 1.5  # any one first call fits; four together do not
        graph = TradingAgentsGraph(config=_cfg(server, tmp_path / "b", max_cost_usd=budget,
                                               analyst_execution="parallel"))
        with pytest.raises(BudgetExceeded):
            graph.propagate("NVDA", DATE)
        assert server.billed_usd(STEEP) <= budget
        assert 1 <= len(server.billed) < 4


def test_the_cli_exits_5_never_0_above_the_budget_and_resumes(tmp_path, monkeypatch, capsys):
    from tradingagents.cli import main

    monkeypatch.setenv("TRADINGAGENTS_LLM_PRICING", json.dumps(STEEP))
    monkeypatch.setenv("TRADINGAGENTS_LLM_MAX_OUTPUT_TOKENS", "256")
    with FakeOpenAIServer() as server:
        args = ["NVDA", DATE, "--provider", "openai_compatible", "--backend-url", server.base_url,
                "--quick-model", "fake-quick", "--deep-model", "fake-deep", "--home", str(tmp_path), "-q"]
        assert main([*args, "--max-cost", "20"]) == 5
        assert server.billed_usd(STEEP) <= 20
        err = capsys.readouterr().err
        assert "Budget reached for NVDA" in err and "--max-cost" in err and "Traceback" not in err
        assert main([*args, "--max-cost", "100000"]) == 0


def test_a_batch_never_spends_above_its_budget(tmp_path):
    tickers = ["NVDA", "AAPL", "MSFT"]
    with FakeOpenAIServer() as server:
        cfg = _cfg(server, tmp_path)
        outcomes = run_batch(tickers, DATE, cfg, max_cost_usd=4.0)
        assert server.billed_usd(STEEP) <= 4.0
        assert exit_code(outcomes) == 5
        assert any(o.status == "budget" and o.resumable for o in outcomes)

        server.reset_counters()
        again = run_batch(tickers, DATE, cfg, max_cost_usd=100_000.0)
    assert exit_code(again) == 0 and all(o.ok for o in again)


def test_the_offline_engine_costs_nothing_and_a_budget_does_not_stop_it(tmp_path):
    graph = TradingAgentsGraph(config={"home": str(tmp_path), "llm_provider": "offline", "max_cost_usd": 0.0001})
    _state, rating = graph.propagate("NVDA", DATE)
    assert rating
    assert graph.last_run["record"]["meta"]["usage"]["cost_usd"] == 0.0


@pytest.mark.parametrize("streaming", [True, False])
def test_the_answer_limit_is_sent_and_a_cut_answer_is_never_saved_as_complete(tmp_path, streaming):
    with FakeOpenAIServer() as server:
        graph = TradingAgentsGraph(config=_cfg(server, tmp_path, llm_max_output_tokens=16, max_cost_usd=1e6,
                                               llm_max_retries=0, llm_streaming=streaming))
        with pytest.raises(Exception) as info:
            graph.propagate("NVDA", DATE)
        assert all((r.get("max_completion_tokens") or r.get("max_tokens")) == 16 for r in server.chat_requests)
    assert "finish_reason length" in str(info.value) and exit_code_for(info.value) == 4
