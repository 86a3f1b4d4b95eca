"""The specification's analyst loop is the default (``analyst_data: tools``): each analyst's model is
offered its tools, its ToolNode runs the calls, the next request carries the answers. ``prefetch`` keeps
the one-call shape; a server that refuses tools makes that analyst fall back to it for the run."""

from __future__ import annotations

import json

import pytest

from tests.fake_openai import Fault, fake_openai, is_analyst_call  # noqa: F401
from tradingagents import cli, team
from tradingagents.agents import get_analyst_tools
from tradingagents.agents.utils.agent_utils import plan_block, refuses_tools
from tradingagents.config import DEFAULT_CONFIG, ConfigError, resolve_config
from tradingagents.errors import LLMCallError
from tradingagents.graph.conditional_logic import ConditionalLogic
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients.offline.analysts import prompt_plan

DATE = "2024-05-10"


def _requests_of(server, role: team.Role) -> list[dict]:
    return [r for r in server.chat_requests if is_analyst_call(r, role.node)]


def _graph(server, **extra) -> TradingAgentsGraph:
    return TradingAgentsGraph(config=server.llm_config(checkpoint_enabled=False, **extra))


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
def test_each_analyst_asks_for_its_data_and_gets_the_answers(fake_openai, mode):  # noqa: F811
    graph = _graph(fake_openai, analyst_execution=mode)
    events = []
    state, _ = graph.propagate("NVDA", DATE, on_event=events.append)
    for role in team.ANALYSTS:
        first, *rest = _requests_of(fake_openai, role)
        assert rest, role.node  # at least two requests: the tool round, then the report
        offered = sorted(t["function"]["name"] for t in first["tools"])
        assert offered, role.node
        assert not any(m.get("role") == "tool" for m in first["messages"])
        answered = [m for m in rest[0]["messages"] if m.get("role") == "tool"]
        assert answered, role.node
        # the tool answers in the next request are what the ToolNode returned for the model's calls
        asked = [m for m in rest[0]["messages"] if m.get("role") == "assistant" and m.get("tool_calls")]
        ids = {c["id"] for m in asked for c in m["tool_calls"]}
        assert {m["tool_call_id"] for m in answered} == ids
        assert state[role.output_key].strip()
    # the market model asked one indicator (the fake asks rsi): that indicator, and only it, came back
    market = _requests_of(fake_openai, team.ROLES["market"])[1]
    calls = {c["id"]: c for m in market["messages"] if m.get("tool_calls") for c in m["tool_calls"]}
    ind = [m for m in market["messages"] if m.get("role") == "tool"
           and calls[m["tool_call_id"]]["function"]["name"] == "get_indicators"]
    assert len(ind) == 1 and json.loads(calls[ind[0]["tool_call_id"]]["function"]["arguments"])["indicator"] == "rsi"
    assert "rsi" in ind[0]["content"] and "macd" not in ind[0]["content"] and "atr" not in ind[0]["content"]
    # the ToolNodes ran (the board's tool_call events name them) and the meta says which shape ran
    assert any(e.kind == "node_started" and e.node.startswith("tools_") for e in events) or any(
        e.kind == "tool_call" for e in events)
    meta = graph.last_run["record"]["meta"]
    assert meta["analyst_data"] == "tools" and meta["analyst_data_notes"] == []


def test_prefetch_makes_one_request_per_analyst_without_tools(fake_openai):  # noqa: F811
    graph = _graph(fake_openai, analyst_data="prefetch")
    graph.propagate("NVDA", DATE)
    for role in team.ANALYSTS:
        requests = _requests_of(fake_openai, role)
        assert len(requests) == 1 and not requests[0].get("tools"), role.node
    assert not any(r.get("tools") for r in fake_openai.chat_requests if not r.get("tool_choice"))
    assert graph.last_run["record"]["meta"]["analyst_data"] == "prefetch"


def test_a_server_that_refuses_tools_makes_the_analysts_fall_back(fake_openai):  # noqa: F811
    fake_openai.inject(Fault.no_tools(times=None))
    graph = _graph(fake_openai)
    state, rating = graph.propagate("NVDA", DATE)
    assert rating
    meta = graph.last_run["record"]["meta"]
    notes = meta["analyst_data_notes"]
    assert meta["analyst_data"] == "tools"
    assert sorted(n.split(":")[0] for n in notes) == sorted(r.node for r in team.ANALYSTS)
    assert all("refused tool calls" in n and "does not support tools" in n for n in notes)
    assert set(notes) <= set(meta["warnings"])
    for role in team.ANALYSTS:
        tools_offered, *after = _requests_of(fake_openai, role)
        assert tools_offered.get("tools") and after and not after[-1].get("tools")  # refused, then prefetch
        assert "refused tool calls" in state[role.output_key]


def test_refuses_tools_reads_a_400_naming_tools_only():
    assert refuses_tools(LLMCallError("does not support tools", status=400))
    assert refuses_tools(LLMCallError("'function calling' is not enabled", status=400))
    assert not refuses_tools(LLMCallError("bad request: context too long", status=400))
    assert not refuses_tools(LLMCallError("tools: rate limited", status=429))
    assert not refuses_tools(ValueError("tools"))


def test_the_config_key_its_check_and_its_environment(monkeypatch):
    assert DEFAULT_CONFIG["analyst_data"] == "tools"
    assert resolve_config({"analyst_data": "PREFETCH"})["analyst_data"] == "prefetch"
    with pytest.raises(ConfigError, match="analyst_data"):
        resolve_config({"analyst_data": "psychic"})
    monkeypatch.setenv("TRADINGAGENTS_ANALYST_DATA", "prefetch")
    assert resolve_config()["analyst_data"] == "prefetch"


def test_the_cli_flag_picks_the_shape(fake_openai, capsys):  # noqa: F811
    args = ["NVDA", DATE, "--provider", "openai_compatible", "--backend-url", fake_openai.base_url,
            "--quick-model", "fake-quick", "--deep-model", "fake-deep", "--analysts", "market", "--quiet",
            "--no-checkpoint"]
    assert cli.main([*args, "--analyst-data", "prefetch"]) == 0
    assert len(_requests_of(fake_openai, team.ROLES["market"])) == 1
    fake_openai.reset_counters()
    assert cli.main(args) == 0
    first, *rest = _requests_of(fake_openai, team.ROLES["market"])
    assert first.get("tools") and rest
    assert cli.main([*args, "--analyst-data", "psychic"]) == cli.EXIT_BAD_INPUT


def test_offline_engine_makes_the_analysts_planned_calls_through_the_loop(tmp_path):
    """Offline, the tool loop runs (a ToolNode round per analyst), the engine makes exactly the calls of
    the analyst's own plan (read from its prompt), and the reports equal the prefetch shape's. Each shape in
    a home of its own: the second run would otherwise settle the first's decision, whose reflection's model
    calls count in that run too."""
    states, usage = {}, {}
    for shape in ("tools", "prefetch"):
        graph = TradingAgentsGraph(config=dict(DEFAULT_CONFIG, checkpoint_enabled=False, analyst_data=shape,
                                               home=str(tmp_path / shape)))
        events = []
        states[shape], _ = graph.propagate("NVDA", DATE, on_event=events.append)
        usage[shape] = graph.last_run["usage"]
        if shape == "tools":
            ran = {e.node for e in events if e.kind == "node_started"}
            assert {r.tool_node for r in team.ANALYSTS} <= ran
    for key in team.REPORT_KEYS:
        assert states["tools"][key] == states["prefetch"][key], key
    assert usage["tools"]["tool_calls"] == usage["prefetch"]["tool_calls"]
    assert usage["tools"]["llm_calls"] == usage["prefetch"]["llm_calls"] + len(team.ANALYSTS)


def test_the_plan_block_is_the_analysts_fetch_plan():
    from tradingagents.agents.analysts import market_analyst

    tools = get_analyst_tools("market", {}, as_of=DATE)
    state = {"company_of_interest": "NVDA", "trade_date": DATE}
    plan = prompt_plan("instructions\n\n" + plan_block(tools, market_analyst.fetch_plan_for(tools), state))
    assert [name for name, _ in plan] == ["get_stock_data", "get_indicators"]
    assert plan[1][1]["indicator"] == ",".join(market_analyst.INDICATORS)
    assert plan[0][1]["start_date"] == "2024-02-09" and plan[0][1]["end_date"] == DATE


def test_the_routers_and_path_maps_send_tool_calls_to_the_toolnode():
    from langchain_core.messages import AIMessage, HumanMessage

    logic = ConditionalLogic()
    asking = {"messages": [HumanMessage("x"), AIMessage("", tool_calls=[{"name": "get_news", "args": {}, "id": "1"}])]}
    done = {"messages": [HumanMessage("x"), AIMessage("the report")]}
    for role in team.ANALYSTS:
        route = getattr(logic, f"should_continue_{role.key}")
        assert route(asking) == role.tool_node and route(done) == role.clear_node
