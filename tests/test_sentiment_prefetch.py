"""The Sentiment Analyst fetches its posts and news itself and makes one model call, without tools.

Run inside a small LangGraph graph wired as ``graph/setup.py`` wires an analyst (agent, its router with
the full path map, the ``tools_social`` ToolNode, ``Msg Clear Sentiment``), with a chat model that
records what it is sent, the real data tools and the offline engine.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic import Field

from tests.graph_helpers import CallCounter
from tradingagents.agents import create_msg_delete, create_social_media_analyst, get_analyst_tools
from tradingagents.agents.analysts import social_media_analyst
from tradingagents.agents.utils.agent_states import AgentState
from tradingagents.agents.utils.agent_utils import plan_block, tool_error_message
from tradingagents.dataflows.tools import AS_OF_KEY, make_tools
from tradingagents.graph.conditional_logic import ConditionalLogic, analyst_path_map
from tradingagents.graph.propagation import Propagator
from tradingagents.graph.setup import ParallelAgentState, _scratchpad_node
from tradingagents.llm_clients.offline import OfflineChatModel
from tradingagents.llm_clients.offline.analysts import TOOL_NAMES, prompt_plan
from tradingagents.llm_clients.offline.common import signals_in
from tradingagents.team import ROLES

TICKER, DATE = "NVDA", "2024-05-10"
NODE, TOOLS, CLEAR = "Sentiment Analyst", "tools_social", "Msg Clear Sentiment"
ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")


class RecordingModel(BaseChatModel):
    """A chat model that keeps every message list it is sent and answers ``answer`` (or ``reply``)."""

    answer: str = "The mood is mixed."
    reply: AIMessage | None = None
    calls: list[list[Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls.append(list(messages))
        message = self.reply if self.reply is not None else AIMessage(content=self.answer)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def bind_tools(self, tools, **kwargs):  # noqa: ARG002
        raise AssertionError("the Sentiment Analyst must not bind tools")

    def prompt(self) -> str:
        [call] = self.calls
        return "\n".join(str(m.content) for m in call if isinstance(m, SystemMessage))


class ToolEvents(BaseCallbackHandler):
    def __init__(self) -> None:
        self.started: list[tuple[str, str | None]] = []
        self.ended = 0

    def on_tool_start(self, serialized, input_str, *, metadata=None, **kwargs):
        self.started.append((serialized.get("name"), (metadata or {}).get("langgraph_node")))

    def on_tool_end(self, output, **kwargs):
        self.ended += 1


class CountingToolNode:
    """The analyst's ToolNode, counting how often the graph routes to it."""

    def __init__(self, tools) -> None:
        self.node = ToolNode(tools, handle_tool_errors=tool_error_message)
        self.runs = 0

    def __call__(self, state, config):
        self.runs += 1
        return self.node.invoke(state, config)


def sentiment_graph(llm, tools, config: dict | None = None, *, parallel: bool = False):
    """agent → (router, full path map) → tools_social ⇄ agent | Msg Clear Sentiment → END."""
    role = ROLES["social"]
    agent = create_social_media_analyst(llm, tools, {"analyst_data": "prefetch", **(config or {})})
    clear = create_msg_delete()
    logic = ConditionalLogic()
    tool_node = CountingToolNode(tools)
    graph = StateGraph(ParallelAgentState if parallel else AgentState)
    if parallel:  # the parallel mode's scratchpad wrapper, which passes no config to the node
        graph.add_node(NODE, _scratchpad_node(agent, "social_messages"))
        graph.add_node(CLEAR, _scratchpad_node(clear, "social_messages"))
        router = logic.make_analyst_router(role.tool_node, role.clear_node, "social_messages")
    else:
        graph.add_node(NODE, agent)
        graph.add_node(CLEAR, clear)
        router = logic.should_continue_social
    graph.add_node(TOOLS, tool_node)
    graph.add_edge(START, NODE)
    graph.add_conditional_edges(NODE, router, analyst_path_map(TOOLS, CLEAR))
    graph.add_edge(TOOLS, NODE)
    graph.add_edge(CLEAR, END)
    return graph.compile(), tool_node


def run_node(llm, tools, config: dict | None = None, *, callbacks=(), configurable=None, parallel=False):
    """The analyst's update (from the graph's stream) and how often its ToolNode ran."""
    graph, tool_node = sentiment_graph(llm, tools, config, parallel=parallel)
    state = Propagator().create_initial_state(TICKER, DATE)
    run = {"callbacks": list(callbacks), "configurable": dict(configurable or {})}
    updates = [chunk[NODE] for chunk in graph.stream(state, run, stream_mode="updates") if NODE in chunk]
    assert len(updates) == 1, "the analyst ran once"
    update = updates[0]
    if parallel:
        update = {**update, "messages": update.pop("social_messages")}
    return update, tool_node


def test_one_model_call_no_tool_round_and_the_prompt_holds_the_fetched_posts_and_news():
    llm = RecordingModel()
    tools = get_analyst_tools("social", {}, as_of=DATE)
    counter = CallCounter()
    update, tool_node = run_node(llm, tools, callbacks=[counter])
    assert len(llm.calls) == 1 and counter.calls == {NODE: 1}
    assert tool_node.runs == 0  # the router went straight to Msg Clear Sentiment
    assert update["sentiment_report"] == "The mood is mixed." and update["sender"] == NODE
    request, *results, answer = update["messages"]
    assert [c["name"] for c in request.tool_calls] == ["get_social_posts", "get_news"]
    assert [r.tool_call_id for r in results] == [c["id"] for c in request.tool_calls]
    assert not answer.tool_calls and answer.content == "The mood is mixed."
    # the data in the prompt is what the tools answer for those calls, byte for byte
    by_name = {t.name: t for t in tools}
    prompt = llm.prompt()
    for call in request.tool_calls:
        text = by_name[call["name"]].invoke(call["args"])
        assert f"<{call['name']}>\n{text}\n</{call['name']}>" in prompt
    assert "Social posts about NVDA from 2024-05-04 to 2024-05-10" in prompt
    assert "# News about NVDA from 2024-05-03 to 2024-05-10" in prompt
    assert "Tools you can call" not in prompt and "Instrument: NVDA" in prompt
    # the model got the instructions and the user turn, never a tool message
    assert [type(m) for m in llm.calls[0]] == [SystemMessage, HumanMessage]
    # nothing in the prompt is dated after the analysis date (the tools clamp)
    assert max(ISO_DATE.findall(prompt)) == DATE


def test_the_fetch_plan_is_the_offline_engines_plan_for_the_role():
    tools = get_analyst_tools("social", {}, as_of=DATE)
    read = prompt_plan(plan_block(tools, social_media_analyst.FETCH_PLAN, {"company_of_interest": TICKER,
                                                                           "trade_date": DATE}))
    assert [name for name, _ in read] == [name for name, _ in social_media_analyst.FETCH_PLAN]


def test_no_data_answers_reach_the_prompt_and_the_offline_report_names_them(tmp_path):
    config = {"data_vendor": "csv", "csv_data_dir": str(tmp_path / "no_files_here")}
    llm = RecordingModel()
    update, _ = run_node(llm, get_analyst_tools("social", config, as_of=DATE), config)
    prompt = llm.prompt()
    posts = re.search(r"<get_social_posts>\n(.*?)\n</get_social_posts>", prompt, re.S).group(1)
    news = re.search(r"<get_news>\n(.*?)\n</get_news>", prompt, re.S).group(1)
    assert posts.startswith("NO_DATA_AVAILABLE:") and "social posts of NVDA" in posts
    assert news.startswith("NO_DATA_AVAILABLE:") and "company news of NVDA" in news
    assert "do not invent it" in prompt
    # the offline engine, given the same prompt, says the data is missing and reads no signal
    report, _ = run_node(OfflineChatModel(), get_analyst_tools("social", config, as_of=DATE), config)
    text = report["sentiment_report"]
    missing = text.split("### Missing data")[1] if "### Missing data" in text else ""
    # each missing source named by the data it gives, with the source's own words (not its sentinel)
    assert f"- {TOOL_NAMES['get_social_posts']}: the data source has no data" in missing, text
    assert f"- {TOOL_NAMES['get_news']}: the data source has no data" in missing and signals_in(text) == []


def _failing_news():
    def get_news(ticker: str, start_date: str, end_date: str) -> str:
        """Company news (a feed that is down)."""
        raise RuntimeError("feed down")

    return StructuredTool.from_function(get_news)


def test_a_tool_that_raises_answers_as_the_toolnode_would_and_the_node_goes_on():
    tools = [get_analyst_tools("social", {}, as_of=DATE)[0], _failing_news()]
    llm = RecordingModel()
    update, _ = run_node(llm, tools)
    request, posts, news, answer = update["messages"]
    assert (news.name, news.status) == ("get_news", "error") and posts.status == "success"
    # the ToolNode path's answer to the same call, exactly
    only_tools = StateGraph(AgentState)
    only_tools.add_node(TOOLS, ToolNode(tools, handle_tool_errors=tool_error_message))
    only_tools.add_edge(START, TOOLS)
    only_tools.add_edge(TOOLS, END)
    asked = AIMessage(content="", tool_calls=[request.tool_calls[1]])
    expected = only_tools.compile().invoke({"messages": [asked]})["messages"][-1]
    assert news.content == expected.content == (
        "DATA_UNAVAILABLE: the tool failed (RuntimeError: feed down). Treat this data as missing.")
    assert f"<get_news>\n{news.content}\n</get_news>" in llm.prompt()
    assert update["sentiment_report"] == answer.content


def test_a_planned_tool_it_was_not_given_is_named_missing_in_the_prompt():
    llm = RecordingModel()
    update, _ = run_node(llm, get_analyst_tools("social", {}, as_of=DATE)[:1])
    assert [c["name"] for c in update["messages"][0].tool_calls] == ["get_social_posts"]
    assert ("<get_news>\nDATA_UNAVAILABLE: this analyst was given no get_news tool. Treat this data as "
            "missing.\n</get_news>") in llm.prompt()


@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "parallel"])
def test_the_fetches_run_with_the_nodes_config_so_callbacks_and_the_run_date_reach_them(parallel):
    # shared tools read the run's analysis date from the RunnableConfig they are invoked with
    tools = [make_tools({}, per_run=True)[name] for name in ("get_social_posts", "get_news")]
    seen = ToolEvents()
    llm = RecordingModel()
    update, _ = run_node(llm, tools, callbacks=[seen], configurable={AS_OF_KEY: DATE}, parallel=parallel)
    # both inside the analyst's node (side by side: either may start first)
    assert sorted(seen.started) == [("get_news", NODE), ("get_social_posts", NODE)]
    assert seen.ended == 2
    _, posts, news, _ = update["messages"]
    assert posts.content.startswith("# Social posts about NVDA") and news.content.startswith("# News about NVDA")
    assert max(ISO_DATE.findall(llm.prompt())) == DATE


def test_a_tool_call_the_model_makes_up_is_dropped_and_never_routed():
    made_up = AIMessage(content="Report anyway.", tool_calls=[{"name": "get_news", "args": {}, "id": "x1"}])
    llm = RecordingModel(reply=made_up)
    update, tool_node = run_node(llm, get_analyst_tools("social", {}, as_of=DATE))
    assert tool_node.runs == 0 and len(llm.calls) == 1
    assert not update["messages"][-1].tool_calls and update["sentiment_report"] == "Report anyway."


def _loop_report(config: dict) -> str:
    """The sentiment report the offline engine writes through the tool loop (tools bound, a ToolNode)."""
    tools = get_analyst_tools("social", config, as_of=DATE)

    agent = create_social_media_analyst(OfflineChatModel(), tools, {**config, "analyst_data": "tools"})
    graph = StateGraph(AgentState)
    graph.add_node(NODE, agent)
    graph.add_node(TOOLS, ToolNode(tools, handle_tool_errors=tool_error_message))
    graph.add_edge(START, NODE)
    graph.add_node(CLEAR, lambda state: {})  # keeps the scratchpad, to look at
    graph.add_conditional_edges(NODE, ConditionalLogic().should_continue_social, analyst_path_map(TOOLS, CLEAR))
    graph.add_edge(TOOLS, NODE)
    graph.add_edge(CLEAR, END)
    final = graph.compile().invoke(Propagator().create_initial_state(TICKER, DATE))
    assert sum(1 for m in final["messages"] if isinstance(m, ToolMessage)) == 2  # a real tool round
    return final["sentiment_report"]


@pytest.mark.parametrize("language", ["English", "Chinese"])
def test_the_offline_report_from_the_prompt_is_the_one_the_tool_loop_writes(language):
    config = {"output_language": language}
    update, _ = run_node(OfflineChatModel(), get_analyst_tools("social", config, as_of=DATE), config)
    report = update["sentiment_report"]
    assert report == _loop_report(config)
    again, _ = run_node(OfflineChatModel(), get_analyst_tools("social", config, as_of=DATE), config)
    assert again["sentiment_report"] == report and again["messages"][-1].id == update["messages"][-1].id
    if language == "English":
        assert "Mood around NVDA in the week to 2024-05-10" in report
        assert re.search(r"- \*\*Social tone\*\*: \d+ of 16 posts read positive", report)
    else:
        assert "NVDA 情绪分析" in report and "Mood around" not in report


@pytest.mark.parametrize("shape", ["tools", "prefetch"])
@pytest.mark.parametrize("mode", ["sequential", "parallel"])
def test_the_run_pages_board_shows_the_sentiment_analysts_fetches(mode, shape):
    from studio.runs import ProgressFolder
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    events = []
    graph = TradingAgentsGraph(["social"], config={"analyst_execution": mode, "analyst_data": shape})
    state, _ = graph.propagate(TICKER, DATE, on_event=events.append)
    progress = ProgressFolder().feed(events).snapshot()
    fetched = [c for c in progress.tool_calls if c["agent"] == NODE]
    assert [c["tool"] for c in fetched] == ["get_social_posts", "get_news"]
    assert all(c["result_chars"] > 0 and c["result_preview"] for c in fetched)
    assert progress.counters["tool_calls"] == 2 and graph.last_run["usage_by_node"][NODE]["llm_calls"] == (1 if shape == "prefetch" else 2)
    board = {a.agent: a for a in progress.agents}
    assert board[NODE].status == "done" and state["sentiment_report"] == progress.reports["sentiment_report"]
