"""Prompts laid out stable first, and the bill that follows (issue 48, goal 2).

Real parts: the langchain-openai client against tests/fake_openai.py, which reports
``prompt_tokens_details.cached_tokens`` as OpenAI does; the demo market; the whole graph.
"""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAIServer, agentic_responder
from tradingagents import team
from tradingagents.agents.utils.agent_utils import TEAM_PREAMBLE, team_context
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients.usage import usage_from_result

PRICES = {"fake-quick": [1.0, 4.0, 0.25], "fake-deep": [2.0, 8.0, 0.5]}
LATER = [r.node for r in team.ROLES.values() if not r.is_analyst]


def long_answers(body: dict) -> dict:
    """The fake's agent, with reports as long as a real model's (~1,000 tokens each)."""
    answer = agentic_responder(body)
    if answer.get("content") and not body.get("response_format"):
        # prose without figures (the evidence ledger checks every figure an answer quotes)
        answer["content"] += "\n\n" + " ".join(["The trend, the breadth and the news flow agree on the week."] * 80)
    return answer


def _system(body: dict) -> str:
    return next((str(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "system"), "")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with FakeOpenAIServer(responder=long_answers) as server:
        graph = TradingAgentsGraph(config=server.llm_config(home=str(home), llm_pricing=PRICES,
                                                            max_cost_usd=1_000_000.0))
        final_state, _rating = graph.propagate("NVDA", "2024-05-10")
        yield {"server": server, "state": final_state, "meta": graph.last_run["record"]["meta"],
               "requests": server.chat_requests}


def test_every_later_role_opens_with_the_same_team_context(run):
    shared = team_context(run["state"])  # the preamble, the header, the four reports, no stage material
    later = [b for b in run["requests"] if _system(b).startswith(TEAM_PREAMBLE)]
    assert len(later) >= len(LATER)  # each of the eight later roles at least once
    for body in later:
        assert _system(body).startswith(shared)
        # the role's own instructions come after it, in the next message
        assert body["messages"][1]["content"].startswith("You are the ")
    # the reports appear once each, in the roster's order
    system = _system(later[0])
    positions = [system.index(f"<{key}>") for key in team.REPORT_KEYS]
    assert positions == sorted(positions)


def test_usage_records_cached_tokens_per_agent_and_the_cost_is_the_providers_bill(run):
    usage, server = run["meta"]["usage"], run["server"]
    assert usage["cached_input_tokens"] > 0
    assert usage["cached_input_tokens"] == sum(c for _m, _p, c in server.prompt_cache.records)
    assert usage["input_tokens"] == sum(p for _m, p, _c in server.prompt_cache.records)
    # every role after the analysts read the team's shared start from the cache (the deep ones included:
    # the Portfolio Manager shares it with the Research Manager)
    for node in ("Bear Researcher", "Trader", "Aggressive Analyst", "Neutral Analyst", "Portfolio Manager"):
        inp, cached = usage["cached_by_agent"][node]
        assert 1024 <= cached < inp, node
    # the run's cost is what the server bills, cached input at its price
    assert usage["cost_usd"] == pytest.approx(server.billed_usd(PRICES), rel=1e-9)
    uncached = sum(((i * PRICES[m][0]) + o * PRICES[m][1]) / 1e6 for m, i, o, _c in server.billed)
    assert usage["cost_usd"] < uncached


def test_usage_from_result_reads_openais_field_when_no_usage_metadata():
    class Result:
        generations: list = []
        llm_output = {"token_usage": {"prompt_tokens": 2000, "completion_tokens": 10,
                                      "prompt_tokens_details": {"cached_tokens": 1152}}}

    assert usage_from_result(Result()) == (2000, 10, 1152)
