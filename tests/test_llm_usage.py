"""UsageTracker: calls, tool calls and tokens per LangGraph node, through real callbacks."""

from __future__ import annotations

import threading
from operator import add
from typing import Annotated

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from tests.fake_openai import FakeOpenAIServer
from tradingagents.llm_clients import create_llm
from tradingagents.llm_clients.usage import UNKNOWN_NODE, UsageTracker, tokens_from_result

SYSTEM = SystemMessage("You are the market analyst.\nInstrument: NVDA\nAnalysis date: 2024-05-10")


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


@tool
def get_stock_data(symbol: str, start_date: str, end_date: str) -> str:
    """OHLCV rows."""
    return f"{symbol} rows {start_date}..{end_date}"


@tool
def get_indicators(symbol: str, indicator: str, curr_date: str) -> str:
    """An indicator."""
    return f"{symbol} {indicator}"


class State(MessagesState):
    report: str
    notes: Annotated[list[str], add]


def _graph(llm):
    tools = [get_stock_data, get_indicators]
    bound = llm.bind_tools(tools)

    def analyst(state):
        msg = bound.invoke([SYSTEM, *state["messages"]])
        return {"messages": [msg]}

    def writer(state):
        msg = llm.invoke([SYSTEM, HumanMessage("Write the summary.")])
        return {"report": msg.content}

    g = StateGraph(State)
    g.add_node("Market Analyst", analyst)
    g.add_node("tools_market", ToolNode(tools))
    g.add_node("Writer", writer)
    g.add_edge(START, "Market Analyst")
    g.add_conditional_edges("Market Analyst", tools_condition, {"tools": "tools_market", END: "Writer"})
    g.add_edge("tools_market", "Market Analyst")
    g.add_edge("Writer", END)
    return g.compile()


@pytest.mark.parametrize("placement", ["run_config", "model", "both"])
def test_counts_per_node_in_a_real_graph(server, placement):
    tracker = UsageTracker()
    llm = create_llm(server.llm_config(), callbacks=[tracker] if placement in ("model", "both") else None)
    config = {"callbacks": [tracker]} if placement in ("run_config", "both") else {}
    final = _graph(llm).invoke({"messages": [HumanMessage("Analyse NVDA.")], "notes": []}, config)
    assert "**Rating**" in final["report"]

    by_node = tracker.by_node()
    assert by_node["Market Analyst"]["llm_calls"] == 2  # tool calls, then the report
    assert by_node["Writer"]["llm_calls"] == 1
    assert len(server.requests) == 3
    if placement == "model":
        # tools report only to handlers in the run config
        assert "tools_market" not in by_node
    else:
        assert by_node["tools_market"]["tool_calls"] == 2
        assert by_node["tools_market"]["llm_calls"] == 0
    totals = tracker.totals()
    assert totals["llm_calls"] == 3
    ai = [m for m in final["messages"] if isinstance(m, AIMessage)]
    expected_in = sum(m.usage_metadata["input_tokens"] for m in ai)
    expected_out = sum(m.usage_metadata["output_tokens"] for m in ai)
    assert by_node["Market Analyst"]["input_tokens"] == expected_in
    assert by_node["Market Analyst"]["output_tokens"] == expected_out
    assert totals["input_tokens"] > expected_in and totals["output_tokens"] > expected_out  # + the Writer
    assert totals == {k: sum(n[k] for n in by_node.values()) for k in totals}


def test_on_change_reports_running_totals(server):
    seen = []
    tracker = UsageTracker(on_change=seen.append)
    _graph(create_llm(server.llm_config())).invoke({"messages": [HumanMessage("go")], "notes": []}, {"callbacks": [tracker]})
    assert seen, "on_change was never called"
    assert seen[-1] == tracker.totals()
    calls = [s["llm_calls"] for s in seen]
    assert calls == sorted(calls) and calls[-1] == 3
    assert [s["tool_calls"] for s in seen][-1] == 2


def test_thread_safe_under_parallel_calls():
    with FakeOpenAIServer(latency_s=0.02) as srv:
        tracker = UsageTracker()
        llm = create_llm(srv.llm_config(max_concurrent_llm_calls=8), callbacks=[tracker])
        outs = []
        lock = threading.Lock()

        def work(i):
            for _ in range(3):
                msg = llm.invoke([SYSTEM, HumanMessage(f"question {i}")])
                with lock:
                    outs.append(msg)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    totals = tracker.totals()
    assert totals["llm_calls"] == 24 == len(outs)
    assert totals["input_tokens"] == sum(m.usage_metadata["input_tokens"] for m in outs)
    assert totals["output_tokens"] == sum(m.usage_metadata["output_tokens"] for m in outs)
    assert set(tracker.by_node()) == {UNKNOWN_NODE}


def test_tokens_from_llm_output_when_messages_have_no_usage():
    result = LLMResult(
        generations=[[ChatGeneration(message=AIMessage(content="hi"))]],
        llm_output={"token_usage": {"prompt_tokens": 11, "completion_tokens": 4}},
    )
    assert tokens_from_result(result) == (11, 4)
    with_meta = LLMResult(
        generations=[[ChatGeneration(message=AIMessage(content="hi", usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}))]],
        llm_output={"token_usage": {"prompt_tokens": 11, "completion_tokens": 4}},
    )
    assert tokens_from_result(with_meta) == (3, 2)  # never counted twice
    assert tokens_from_result(LLMResult(generations=[])) == (0, 0)


def test_a_failed_call_is_not_an_answered_call(server):
    """llm_calls counts the model's answered calls (issue 11.5): one that fails for good is not one."""
    from tests.fake_openai import Fault
    from tradingagents.errors import LLMCallError

    tracker = UsageTracker()
    llm = create_llm(server.llm_config(llm_max_retries=0), callbacks=[tracker])
    server.inject(Fault.status(500))
    with pytest.raises(LLMCallError):
        llm.invoke("x")
    assert tracker.totals() == {"llm_calls": 0, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0,
                                "cached_input_tokens": 0}
    assert len(server.chat_requests) == 1  # it was sent, and failed
    llm.invoke("y")
    assert tracker.totals()["llm_calls"] == 1
    tracker.reset()
    assert tracker.totals()["llm_calls"] == 0 and tracker.by_node() == {}


def test_broken_on_change_never_breaks_a_call(server):
    def boom(_):
        raise RuntimeError("ui went away")

    tracker = UsageTracker(on_change=boom)
    llm = create_llm(server.llm_config(), callbacks=[tracker])
    assert "**Rating**" in llm.invoke([SYSTEM, HumanMessage("x")]).content
    assert tracker.totals()["llm_calls"] == 1
