"""Issue 41, point 4: the reflections that settle due decisions before a run are model calls of that run.
Its budget refuses them when they do not fit, and its printed cost counts them: what the fake server
bills (counted by the server itself) never passes the budget, and the cost a run reports is the bill.

Real parts: the langchain-openai client against tests/fake_openai.py, the memory log, the demo market.
"""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAIServer
from tradingagents.batch import run_batch
from tradingagents.errors import BudgetExceeded
from tradingagents.graph.trading_graph import TradingAgentsGraph

OLD, DATE = "2024-01-10", "2024-05-10"
STEEP = {"fake-quick": [1000.0, 1000.0], "fake-deep": [1000.0, 50000.0]}


def _cfg(server, home, **extra):
    extra.setdefault("llm_max_output_tokens", 256)
    return server.llm_config(home=str(home), llm_pricing=STEEP, **extra)


def _decided(server, home, tickers=("NVDA",)):
    """A decision of each ticker on OLD, due for settlement on DATE; the server's counters start afresh."""
    for ticker in tickers:
        TradingAgentsGraph(config=_cfg(server, home)).propagate(ticker, OLD)
    server.reset_counters()


def _reflections(server) -> int:
    return sum(1 for body in server.chat_requests if "Realised return" in str(body.get("messages")))


@pytest.mark.parametrize("budget", [1.0, 3.0])
def test_a_runs_budget_holds_with_settlement_due(tmp_path, budget):
    with FakeOpenAIServer() as server:
        _decided(server, tmp_path)
        events = []
        graph = TradingAgentsGraph(config=_cfg(server, tmp_path, max_cost_usd=budget))
        with pytest.raises(BudgetExceeded):
            graph.propagate("NVDA", DATE, on_event=events.append)
        billed = server.billed_usd(STEEP)
        assert billed <= budget, f"billed ${billed:.4f} above the ${budget} budget"
        shown = [e.data["cost_usd"] for e in events if e.kind == "llm_usage"]
        if shown or budget >= 3.0:  # $3 always affords the settlement's first reflection
            assert shown and shown[-1] == pytest.approx(billed, abs=1e-6)  # the printed cost is the bill
        else:  # the first reflection's worst case (its prompt's length varies with the fake's answers) did not
            assert billed == 0.0  # fit: refused before any call, nothing billed and nothing to show


def test_the_reflections_are_counted_in_a_finished_runs_cost(tmp_path):
    with FakeOpenAIServer() as server:
        _decided(server, tmp_path)
        graph = TradingAgentsGraph(config=_cfg(server, tmp_path, max_cost_usd=100_000.0))
        graph.propagate("NVDA", DATE)
        assert _reflections(server) >= 1  # the due decision was settled by this run
        cost = graph.last_run["record"]["meta"]["usage"]["cost_usd"]
        assert cost == pytest.approx(server.billed_usd(STEEP), abs=1e-6)


def test_a_batchs_budget_holds_with_settlement_due(tmp_path):
    tickers = ["NVDA", "AAPL"]
    with FakeOpenAIServer() as server:
        _decided(server, tmp_path, tickers)
        outcomes = run_batch(tickers, DATE, _cfg(server, tmp_path, analyst_execution="sequential"), max_cost_usd=2.0)
        billed = server.billed_usd(STEEP)
        assert billed <= 2.0, f"billed ${billed:.4f} above the $2 batch budget"
        printed = sum(o.cost_usd or 0.0 for o in outcomes)
        assert printed == pytest.approx(billed, abs=1e-6)


def test_a_backtest_has_one_budget_over_all_its_steps(tmp_path, capsys, monkeypatch):
    """``backtest --max-cost``: every step's model calls (and its settlement's reflections) reserve from one
    budget; it stops with exit 5, billed within the budget, and prints what it spent; a larger one goes on."""
    import json

    from tradingagents.backtest.cli import main

    with FakeOpenAIServer() as server:
        args = ["NVDA", "--start", "2024-04-01", "--end", "2024-05-10", "--every", "5", "--provider",
                "openai_compatible", "--backend-url", server.base_url, "--quick-model", "fake-quick",
                "--deep-model", "fake-deep", "--home", str(tmp_path), "-q"]
        monkeypatch.setenv("TRADINGAGENTS_LLM_PRICING", json.dumps(STEEP))
        monkeypatch.setenv("TRADINGAGENTS_LLM_MAX_OUTPUT_TOKENS", "256")
        assert main([*args, "--max-cost", "6"]) == 5
        billed = server.billed_usd(STEEP)
        assert billed <= 6.0, f"billed ${billed:.4f} above the $6 backtest budget"
        err = capsys.readouterr().err
        assert "backtest's budget is reached" in err
        spent = float(err.split("Spent $", 1)[1].split(" ", 1)[0])
        assert spent == pytest.approx(billed, abs=1e-6)
        assert main([*args, "--max-cost", "-1"]) == 2
        assert "--max-cost" in capsys.readouterr().err
