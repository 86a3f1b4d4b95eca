"""create_llm against the fake server end to end: tools → ToolNode → report, structured, plain,
and the max_concurrent_llm_calls bound across parallel branches."""

from __future__ import annotations

import threading
import time
from typing import Literal

import pytest
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from pydantic import BaseModel

from tests.fake_openai import FakeOpenAIServer
from tradingagents.llm_clients import UsageTracker, create_llm, create_llms, invoke_structured
from tradingagents.rating import parse_rating

CALLS: list[tuple[str, dict]] = []


@tool
def get_stock_data(symbol: str, start_date: str, end_date: str) -> str:
    """OHLCV rows of a symbol between two dates."""
    CALLS.append(("get_stock_data", {"symbol": symbol, "start_date": start_date, "end_date": end_date}))
    return f"{symbol}: close 101.5 on {end_date}"


@tool
def get_news(ticker: str, curr_date: str, look_back_days: int) -> str:
    """News headlines."""
    CALLS.append(("get_news", {"ticker": ticker, "curr_date": curr_date, "look_back_days": look_back_days}))
    return f"{ticker}: no news"


class Verdict(BaseModel):
    rating: Literal["Buy", "Overweight", "Hold", "Underweight", "Sell"]
    executive_summary: str
    price_target: float | None = None


def _prompt(ticker="TSLA", date="2024-03-15"):
    return SystemMessage(f"You are an analyst.\nInstrument: {ticker}\nAnalysis date: {date}")


def test_agent_loop_with_tool_node_through_create_llm():
    CALLS.clear()
    with FakeOpenAIServer(rating="Buy") as server:
        tracker = UsageTracker()
        llm = create_llm(server.llm_config())
        bound = llm.bind_tools([get_stock_data, get_news])

        def agent(state):
            return {"messages": [bound.invoke([_prompt(), *state["messages"]])]}

        g = StateGraph(MessagesState)
        g.add_node("Market Analyst", agent)
        g.add_node("tools_market", ToolNode([get_stock_data, get_news]))
        g.add_edge(START, "Market Analyst")
        g.add_conditional_edges("Market Analyst", tools_condition, {"tools": "tools_market", END: END})
        g.add_edge("tools_market", "Market Analyst")
        final = g.compile().invoke({"messages": [HumanMessage("Start.")]}, {"callbacks": [tracker]})

        assert CALLS == [
            ("get_stock_data", {"symbol": "TSLA", "start_date": "2024-02-14", "end_date": "2024-03-15"}),
            ("get_news", {"ticker": "TSLA", "curr_date": "2024-03-15", "look_back_days": 7}),
        ]
        tool_msgs = [m for m in final["messages"] if isinstance(m, ToolMessage)]
        assert [m.content for m in tool_msgs] == ["TSLA: close 101.5 on 2024-03-15", "TSLA: no news"]
        report = final["messages"][-1].content
        assert parse_rating(report) == "Buy" and "2 tool result(s)" in report
        # the second request carried the tool results back in OpenAI's format
        assert [m["role"] for m in server.requests[1]["messages"]][-2:] == ["tool", "tool"]
        assert tracker.totals()["llm_calls"] == 2 and tracker.totals()["tool_calls"] == 2

        obj, raw = invoke_structured(create_llm(server.llm_config(), "deep"), Verdict, [_prompt(), HumanMessage("Decide.")])
        assert isinstance(obj, Verdict) and obj.rating == "Buy"
        assert server.requests[-1]["model"] == "fake-deep"


def _burst(llm, n):
    errors: list[BaseException] = []

    def one(i):
        try:
            llm.invoke([_prompt(), HumanMessage(f"branch {i}")])
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return time.monotonic() - started, errors


@pytest.mark.parametrize("bound", [1, 2, 4])
def test_concurrency_bound_is_never_exceeded(bound):
    with FakeOpenAIServer(latency_s=0.12) as server:
        llm = create_llm(server.llm_config(max_concurrent_llm_calls=bound))
        elapsed, errors = _burst(llm, 8)
        assert errors == []
        assert len(server.requests) == 8
        assert server.max_in_flight == bound  # reached, never exceeded
        assert elapsed >= 0.12 * (8 // bound) * 0.9


def test_without_the_bound_the_same_burst_overlaps_more():
    # the control for the test above: the server does see more than `bound` at once when allowed
    with FakeOpenAIServer(latency_s=0.12) as server:
        elapsed, errors = _burst(create_llm(server.llm_config(max_concurrent_llm_calls=16)), 8)
        assert errors == [] and server.max_in_flight > 4


def test_quick_and_deep_share_the_bound_in_parallel_branches():
    with FakeOpenAIServer(latency_s=0.1) as server:
        quick, deep = create_llms(server.llm_config(max_concurrent_llm_calls=2))
        bq = quick.bind_tools([get_stock_data])

        def branch(name, model):
            def node(state):
                msg = model.invoke([_prompt(), HumanMessage(name)])
                return {"messages": [msg]}

            return node

        g = StateGraph(MessagesState)
        names = ["market", "social", "news", "fundamentals", "judge"]
        for name in names:
            g.add_node(name, branch(name, deep if name == "judge" else bq))
            g.add_edge(START, name)
            g.add_edge(name, END)
        final = g.compile().invoke({"messages": [HumanMessage("go")]})
        assert len(final["messages"]) == 1 + len(names)
        assert server.max_in_flight == 2
        assert {r["model"] for r in server.requests} == {"fake-quick", "fake-deep"}
