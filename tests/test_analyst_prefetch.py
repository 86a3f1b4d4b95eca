"""The analysts that fetch their data themselves and make one model call, without tools (beside the
Sentiment Analyst, whose own tests are in test_sentiment_prefetch.py).

Each runs inside a small LangGraph graph wired as ``graph/setup.py`` wires an analyst (agent, its
router with the full path map, its ToolNode, its Msg Clear node), with a chat model that records what
it is sent, the real data tools and the offline engine.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode

from tests.graph_helpers import CallCounter
from tests.test_sentiment_prefetch import CountingToolNode, RecordingModel, ToolEvents
from tradingagents import agents
from tradingagents.agents import create_msg_delete, get_analyst_tools
from tradingagents.agents.analysts import fundamentals_analyst, market_analyst, news_analyst
from tradingagents.agents.utils.agent_states import AgentState
from tradingagents.agents.utils.agent_utils import block_tag, plan_block, tool_error_message
from tradingagents.dataflows.tools import AS_OF_KEY, make_tools
from tradingagents.graph.analyst_execution import ANALYST_SPECS
from tradingagents.graph.conditional_logic import ConditionalLogic, analyst_path_map
from tradingagents.graph.propagation import Propagator
from tradingagents.graph.setup import ParallelAgentState, _scratchpad_node
from tradingagents.llm_clients.offline import OfflineChatModel
from tradingagents.llm_clients.offline.analysts import TOOL_NAMES, prompt_plan
from tradingagents.llm_clients.offline.common import signals_in

TICKER, DATE = "NVDA", "2024-05-10"
ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")

# analyst key → (its module, the tools it calls in order, the prompt of its system prompt function)
ANALYSTS: dict[str, tuple[Any, list[str], str]] = {
    "market": (market_analyst, ["get_stock_data", "get_indicators"], "market_system_prompt"),
    "news": (news_analyst, ["get_news", "get_global_news"], "news_system_prompt"),
    "fundamentals": (fundamentals_analyst, ["get_fundamentals", "get_income_statement", "get_balance_sheet",
                                            "get_cashflow"], "fundamentals_system_prompt"),
}
KEYS = list(ANALYSTS)
# a line each block of the NVDA demo data starts with, to show the data is the tools' own
FIRST_LINES = {
    "get_news": "# News about NVDA from 2024-05-03 to 2024-05-10",
    "get_global_news": "# Global and macro news from 2024-05-04 to 2024-05-10",
}


def analyst_graph(key: str, llm, tools, config: dict | None = None, *, parallel: bool = False):
    """agent → (router, full path map) → its ToolNode ⇄ agent | its Msg Clear → END."""
    spec = ANALYST_SPECS[key]
    agent = getattr(agents, spec.factory)(llm, tools, {"analyst_data": "prefetch", **(config or {})})
    clear = create_msg_delete()
    logic = ConditionalLogic()
    tool_node = CountingToolNode(tools)
    graph = StateGraph(ParallelAgentState if parallel else AgentState)
    if parallel:  # the parallel mode's scratchpad wrapper, which passes no config to the node
        graph.add_node(spec.agent_node, _scratchpad_node(agent, spec.messages_key))
        graph.add_node(spec.clear_node, _scratchpad_node(clear, spec.messages_key))
        router = logic.make_analyst_router(spec.tool_node, spec.clear_node, spec.messages_key)
    else:
        graph.add_node(spec.agent_node, agent)
        graph.add_node(spec.clear_node, clear)
        router = getattr(logic, f"should_continue_{key}")
    graph.add_node(spec.tool_node, tool_node)
    graph.add_edge(START, spec.agent_node)
    graph.add_conditional_edges(spec.agent_node, router, analyst_path_map(spec.tool_node, spec.clear_node))
    graph.add_edge(spec.tool_node, spec.agent_node)
    graph.add_edge(spec.clear_node, END)
    return graph.compile(), tool_node


def run_node(key, llm, tools, config=None, *, callbacks=(), configurable=None, parallel=False):
    """The analyst's update (from the graph's stream) and its ToolNode (how often it ran)."""
    spec = ANALYST_SPECS[key]
    graph, tool_node = analyst_graph(key, llm, tools, config, parallel=parallel)
    state = Propagator().create_initial_state(TICKER, DATE)
    run = {"callbacks": list(callbacks), "configurable": dict(configurable or {})}
    updates = [c[spec.agent_node] for c in graph.stream(state, run, stream_mode="updates") if spec.agent_node in c]
    assert len(updates) == 1, "the analyst ran once"
    update = updates[0]
    if parallel:
        update = {**update, "messages": update.pop(spec.messages_key)}
    return update, tool_node


def block(prompt: str, name: str) -> str:
    return re.search(rf"<{name}(?: [a-z_]+=\"[^\"\n]*\")*>\n(.*?)\n</{name}>", prompt, re.S).group(1)


@pytest.mark.parametrize("key", KEYS)
def test_one_model_call_no_tool_round_and_the_prompt_holds_the_fetched_data(key):
    spec, (_, names, _) = ANALYST_SPECS[key], ANALYSTS[key]
    llm = RecordingModel(answer="The report.")
    tools = get_analyst_tools(key, {}, as_of=DATE)
    counter = CallCounter()
    update, tool_node = run_node(key, llm, tools, callbacks=[counter])
    assert len(llm.calls) == 1 and counter.calls == {spec.agent_node: 1}
    assert tool_node.runs == 0  # the router went straight to the Msg Clear node
    assert update[spec.report_key] == "The report." and update["sender"] == spec.agent_node
    request, *results, answer = update["messages"]
    assert [c["name"] for c in request.tool_calls] == names
    assert [r.tool_call_id for r in results] == [c["id"] for c in request.tool_calls]
    assert all(isinstance(r, ToolMessage) and r.status == "success" for r in results)
    assert not answer.tool_calls and answer.content == "The report."
    # the data in the prompt is what the tools answer for those calls, byte for byte, in the plan's order
    by_name = {t.name: t for t in tools}
    prompt = llm.prompt()
    at = 0
    for call in request.tool_calls:
        text = by_name[call["name"]].invoke(call["args"])
        found = prompt.find(f"<{block_tag(call['name'], call['args'])}>\n{text}\n</{call['name']}>", at)
        assert found > at, call["name"]
        at = found
    for name in names:
        if name in FIRST_LINES:
            assert block(prompt, name).startswith(FIRST_LINES[name]), name
    assert "Tools you can call" not in prompt and "Instrument: NVDA" in prompt
    assert "NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is missing" in re.sub(r"\s+", " ", prompt)
    assert [type(m) for m in llm.calls[0]] == [SystemMessage, HumanMessage]
    # nothing in the prompt is dated after the analysis date (the tools clamp)
    assert max(ISO_DATE.findall(prompt)) == DATE


@pytest.mark.parametrize("key", KEYS)
def test_the_fetch_plan_is_the_offline_engines_plan_for_the_role(key):
    """One home: the engine keeps no plan; it reads the role's (the data plan of its tools-shape prompt)."""
    module, names, _ = ANALYSTS[key]
    tools = get_analyst_tools(key, {}, as_of=DATE)
    plan = getattr(module, "fetch_plan_for", lambda _tools: module.FETCH_PLAN)(tools)
    read = prompt_plan(plan_block(tools, plan, {"company_of_interest": TICKER, "trade_date": DATE}))
    assert [name for name, _ in read] == [name for name, _ in plan] == names
    assert [name for name, _ in module.FETCH_PLAN] == names or key == "market"


@pytest.mark.parametrize("key", KEYS)
def test_no_data_answers_reach_the_prompt_and_the_offline_report_names_them(key, tmp_path):
    spec, (_, names, _) = ANALYST_SPECS[key], ANALYSTS[key]
    config = {"data_vendor": "csv", "csv_data_dir": str(tmp_path / "no_files_here")}
    llm = RecordingModel()
    run_node(key, llm, get_analyst_tools(key, config, as_of=DATE), config)
    prompt = llm.prompt()
    for name in set(names):
        assert block(prompt, name).startswith("NO_DATA_AVAILABLE:"), name
    # the offline engine, given the same prompt, says the data is missing and reads no signal
    update, _ = run_node(key, OfflineChatModel(), get_analyst_tools(key, config, as_of=DATE), config)
    text = update[spec.report_key]
    assert "### Missing data" in text and signals_in(text) == []
    for name in set(names):  # each missing source named by the data it gives (the tool's name is not shown)
        assert f"- {TOOL_NAMES[name]}" in text.split("### Missing data")[1], name


def _failing(tool):
    """``tool`` with the same name and arguments, whose data source is down."""

    def down(**kwargs):
        raise RuntimeError("feed down")

    return StructuredTool.from_function(down, name=tool.name, description=tool.description,
                                        args_schema=tool.args_schema)


@pytest.mark.parametrize("key", KEYS)
def test_a_tool_that_raises_answers_as_the_toolnode_would_and_the_node_goes_on(key):
    spec = ANALYST_SPECS[key]
    good = get_analyst_tools(key, {}, as_of=DATE)
    tools = [*good[:-1], _failing(good[-1])]
    llm = RecordingModel()
    update, _ = run_node(key, llm, tools)
    request, *results, answer = update["messages"]
    failed = [r for r in results if r.status == "error"]
    assert [r.name for r in failed] == [good[-1].name] * len(failed) and failed
    assert all(r.status == "success" for r in results if r.name != good[-1].name)
    # the ToolNode path's answer to the same call, exactly
    only_tools = StateGraph(AgentState)
    only_tools.add_node("tools", ToolNode(tools, handle_tool_errors=tool_error_message))
    only_tools.add_edge(START, "tools")
    only_tools.add_edge("tools", END)
    call = next(c for c in request.tool_calls if c["id"] == failed[0].tool_call_id)
    expected = only_tools.compile().invoke({"messages": [AIMessage(content="", tool_calls=[call])]})["messages"][-1]
    assert failed[0].content == expected.content == (
        "DATA_UNAVAILABLE: the tool failed (RuntimeError: feed down). Treat this data as missing.")
    assert f"<{block_tag(good[-1].name, call['args'])}>\n{failed[0].content}\n</{good[-1].name}>" in llm.prompt()
    assert update[spec.report_key] == answer.content


@pytest.mark.parametrize("key", KEYS)
def test_a_planned_tool_it_was_not_given_is_named_missing_in_the_prompt(key):
    _, names, _ = ANALYSTS[key]
    llm = RecordingModel()
    update, _ = run_node(key, llm, get_analyst_tools(key, {}, as_of=DATE)[1:])
    assert names[0] not in [c["name"] for c in update["messages"][0].tool_calls]
    assert (f"<{names[0]}>\nDATA_UNAVAILABLE: this analyst was given no {names[0]} tool. Treat this data as "
            "missing.\n</") in llm.prompt()


@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "parallel"])
@pytest.mark.parametrize("key", KEYS)
def test_the_fetches_run_with_the_nodes_config_so_callbacks_and_the_run_date_reach_them(key, parallel):
    spec, (_, names, _) = ANALYST_SPECS[key], ANALYSTS[key]
    # shared tools read the run's analysis date from the RunnableConfig they are invoked with
    shared = make_tools({}, per_run=True)
    tools = [shared[name] for name in dict.fromkeys(names)]
    seen = ToolEvents()
    llm = RecordingModel()
    update, _ = run_node(key, llm, tools, callbacks=[seen], configurable={AS_OF_KEY: DATE}, parallel=parallel)
    # all inside the analyst's node (side by side: any may start first)
    assert sorted(seen.started) == sorted((name, spec.agent_node) for name in names)
    assert seen.ended == len(names)
    _, *results, _ = update["messages"]
    assert all(r.status == "success" for r in results)
    for name in names:
        if name in FIRST_LINES:
            assert block(llm.prompt(), name).startswith(FIRST_LINES[name]), name
    assert max(ISO_DATE.findall(llm.prompt())) == DATE


@pytest.mark.parametrize("key", KEYS)
def test_a_tool_call_the_model_makes_up_is_dropped_and_never_routed(key):
    spec = ANALYST_SPECS[key]
    made_up = AIMessage(content="Report anyway.", tool_calls=[{"name": "get_news", "args": {}, "id": "x1"}])
    llm = RecordingModel(reply=made_up)
    update, tool_node = run_node(key, llm, get_analyst_tools(key, {}, as_of=DATE))
    assert tool_node.runs == 0 and len(llm.calls) == 1
    assert not update["messages"][-1].tool_calls and update[spec.report_key] == "Report anyway."


def _loop_report(key: str, config: dict) -> str:
    """The report the offline engine writes through the tool loop (tools bound, a ToolNode round)."""
    spec = ANALYST_SPECS[key]
    tools = get_analyst_tools(key, config, as_of=DATE)

    agent = getattr(agents, spec.factory)(OfflineChatModel(), tools, {**config, "analyst_data": "tools"})
    graph = StateGraph(AgentState)
    graph.add_node(spec.agent_node, agent)
    graph.add_node(spec.tool_node, ToolNode(tools, handle_tool_errors=tool_error_message))
    graph.add_edge(START, spec.agent_node)
    graph.add_node(spec.clear_node, lambda state: {})  # keeps the scratchpad, to look at
    graph.add_conditional_edges(spec.agent_node, getattr(ConditionalLogic(), f"should_continue_{key}"),
                                analyst_path_map(spec.tool_node, spec.clear_node))
    graph.add_edge(spec.tool_node, spec.agent_node)
    graph.add_edge(spec.clear_node, END)
    final = graph.compile().invoke(Propagator().create_initial_state(TICKER, DATE))
    assert any(isinstance(m, ToolMessage) for m in final["messages"])  # a real tool round
    return final[spec.report_key]


@pytest.mark.parametrize("language", ["English", "Chinese"])
@pytest.mark.parametrize("key", KEYS)
def test_the_offline_report_from_the_prompt_is_the_one_the_tool_loop_writes(key, language):
    spec = ANALYST_SPECS[key]
    config = {"output_language": language}
    update, _ = run_node(key, OfflineChatModel(), get_analyst_tools(key, config, as_of=DATE), config)
    report = update[spec.report_key]
    assert report == _loop_report(key, config)
    again, _ = run_node(key, OfflineChatModel(), get_analyst_tools(key, config, as_of=DATE), config)
    assert again[spec.report_key] == report and again["messages"][-1].id == update["messages"][-1].id
    assert "### Missing data" not in report and "### 缺失数据" not in report
    assert signals_in(report)  # the demo data gives signals
    english_title = {"news": "## News analysis of NVDA", "fundamentals": "## Fundamentals analysis of NVDA",
                     "market": "## Market analysis of NVDA"}[key]
    assert (english_title in report) == (language == "English")


@pytest.mark.parametrize("shape", ["tools", "prefetch"])
@pytest.mark.parametrize("mode", ["sequential", "parallel"])
@pytest.mark.parametrize("key", KEYS)
def test_the_run_pages_board_shows_the_analysts_fetches(key, mode, shape):
    from studio.runs import ProgressFolder
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    spec, (_, names, _) = ANALYST_SPECS[key], ANALYSTS[key]
    events = []
    graph = TradingAgentsGraph([key], config={"analyst_execution": mode, "analyst_data": shape})
    state, _ = graph.propagate(TICKER, DATE, on_event=events.append)
    progress = ProgressFolder().feed(events).snapshot()
    fetched = [c for c in progress.tool_calls if c["agent"] == spec.agent_node]
    assert [c["tool"] for c in fetched] == names
    assert all(c["result_chars"] > 0 and c["result_preview"] for c in fetched)
    assert progress.counters["tool_calls"] == len(names)
    assert graph.last_run["usage_by_node"][spec.agent_node]["llm_calls"] == (1 if shape == "prefetch" else 2)
    board = {a.agent: a for a in progress.agents}
    assert board[spec.agent_node].status == "done" and state[spec.report_key] == progress.reports[spec.report_key]


def _waiting_tools(n: int, barrier, threads: list) -> list:
    """n tools that note the thread they ran on, then wait (``barrier`` None: not) for each other."""
    def make(i: int):
        def fetch(ticker: str) -> str:
            threads.append((i, threading.current_thread()))
            if barrier is not None:
                barrier.wait()  # only passes once every call has started: they run side by side
            return f"answer {i} for {ticker}"
        return StructuredTool.from_function(fetch, name=f"tool_{i}", description=f"tool {i}")
    return [make(i) for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 4])
def test_a_nodes_fetches_run_side_by_side_first_on_its_own_thread_answers_in_call_order(n):
    from tradingagents.agents.utils.agent_utils import fetch_tool_data

    threads: list = []
    barrier = threading.Barrier(n, timeout=120)  # the timeout only catches a hang (calls run one by one)
    tools = _waiting_tools(n, barrier, threads)
    plan = [(t.name, {}) for t in tools]
    request, results, blocks = fetch_tool_data(tools, plan, {"company_of_interest": TICKER, "trade_date": DATE},
                                               {}, node="Test Analyst")
    assert [c["name"] for c in request.tool_calls] == [t.name for t in tools]
    assert [r.content for r in results] == [f"answer {i} for {TICKER}" for i in range(n)]
    assert [r.tool_call_id for r in results] == [c["id"] for c in request.tool_calls]
    assert blocks == [(f"tool_{i}", f"answer {i} for {TICKER}") for i in range(n)]
    ran_on = dict(threads)
    assert ran_on[0] is threading.current_thread()  # the first call needs no thread of its own
    assert len({id(t) for t in ran_on.values()}) == n  # the others, one each, beside it


def test_max_concurrency_bounds_a_nodes_fetches_one_runs_them_in_order_on_its_thread():
    from tradingagents.agents.utils.agent_utils import fetch_tool_data

    threads: list = []
    tools = _waiting_tools(3, None, threads)
    _, results, _ = fetch_tool_data(tools, [(t.name, {}) for t in tools], {"company_of_interest": TICKER,
                                    "trade_date": DATE}, {"max_concurrency": 1}, node="Test Analyst")
    assert [i for i, _ in threads] == [0, 1, 2]
    assert all(t is threading.current_thread() for _, t in threads)
    assert [r.content for r in results] == [f"answer {i} for {TICKER}" for i in range(3)]



@pytest.mark.parametrize("local", [True, False])
def test_a_local_sources_fetches_run_on_the_nodes_thread_a_remote_ones_side_by_side(local):
    """The demo market and CSV files wait for nothing: their calls run one after another on the node's
    thread. A source over the network has them side by side, one thread each beside the node's."""
    from tradingagents.agents.utils.agent_utils import fetch_tool_data
    from tradingagents.dataflows.csv_provider import CSVProvider
    from tradingagents.dataflows.demo import DemoProvider
    from tradingagents.dataflows.provider import MarketDataProvider
    from tradingagents.dataflows.tools import clear_result_cache

    assert DemoProvider.local and CSVProvider.local and not MarketDataProvider.local
    threads: set = set()

    class Source(DemoProvider):  # the demo market's data, from a source that is local or not
        def ohlcv(self, *args):
            threads.add(threading.current_thread())
            return super().ohlcv(*args)

        def fundamentals(self, *args):
            threads.add(threading.current_thread())
            return super().fundamentals(*args)

    Source.local = local
    clear_result_cache()
    tools = make_tools({"data_vendor": "demo"}, as_of=DATE, provider=Source())
    chosen = [tools["get_stock_data"], tools["get_fundamentals"]]
    _, results, _ = fetch_tool_data(chosen, [(t.name, {}) for t in chosen],
                                    {"company_of_interest": TICKER, "trade_date": DATE}, {}, node="Test Analyst")
    assert all(r.content and "DATA_UNAVAILABLE" not in r.content for r in results)
    assert threading.current_thread() in threads
    assert len(threads) == (1 if local else 2)
