"""Parallel analysts: same final state, private scratchpads, side-by-side events, branch resume."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from langchain_core.callbacks import BaseCallbackHandler

from tests.graph_helpers import CallCounter, InjectedFault, comparable
from tradingagents.agents import get_analyst_tools
from tradingagents.graph.setup import SCRATCHPAD_KEYS
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
ANALYST_AGENTS = {"Market Analyst": "market", "Sentiment Analyst": "social", "News Analyst": "news",
                  "Fundamentals Analyst": "fundamentals"}
# the analysts that fetch their data themselves and make one model call (no tool round)
# the analysts that fetch their data themselves (analyst_data "prefetch"); by default ("tools") none does
PREFETCHING: set[str] = set()
ALL_ANALYSTS = {"Market Analyst", "Sentiment Analyst", "News Analyst", "Fundamentals Analyst"}


@pytest.mark.parametrize("selected", [None, ["news", "market"], ["fundamentals", "social"]])
def test_parallel_and_sequential_give_identical_final_states(ta_home, selected):
    seq_state, seq_rating = TradingAgentsGraph(
        selected, config={"analyst_execution": "sequential", "home": str(ta_home / "s")}).propagate("NVDA", DATE)
    par_state, par_rating = TradingAgentsGraph(
        selected, config={"analyst_execution": "parallel", "home": str(ta_home / "p")}).propagate("NVDA", DATE)
    assert par_rating == seq_rating
    assert comparable(par_state) == comparable(seq_state)
    assert not set(SCRATCHPAD_KEYS) & set(par_state)  # scratchpads never leak into the result


class _SeenMessages(BaseCallbackHandler):
    def __init__(self):
        self.seen: dict[str, list] = {}

    def on_chat_model_start(self, serialized, messages, *, run_id, metadata=None, **kwargs):
        node = (metadata or {}).get("langgraph_node", "?")
        self.seen.setdefault(node, []).extend(messages[0])


@pytest.mark.parametrize("shape", ["tools", "prefetch"])
def test_each_branch_sees_only_its_own_tool_messages(shape):
    spy = _SeenMessages()
    prefetching = ALL_ANALYSTS if shape == "prefetch" else PREFETCHING
    TradingAgentsGraph(config={"analyst_execution": "parallel", "analyst_data": shape},
                       callbacks=[spy]).propagate("NVDA", DATE)
    own_tools = {key: {t.name for t in get_analyst_tools(key, None, as_of=DATE)} for key in ANALYST_AGENTS.values()}
    every_tool = set().union(*own_tools.values())
    for node, key in ANALYST_AGENTS.items():
        tool_msgs = [m for m in spy.seen[node] if m.type == "tool"]
        if node in prefetching:  # it fetches its data itself: the answers are in its prompt
            prompt = "\n".join(str(m.content) for m in spy.seen[node] if m.type == "system")
            assert not tool_msgs and all(re.search(rf"<{name}[ >]", prompt) for name in own_tools[key])
            assert not any(re.search(rf"<{name}[ >]", prompt) for name in every_tool - own_tools[key])
        else:
            assert tool_msgs, node
        assert {m.name for m in tool_msgs} <= own_tools[key], node
        # a branch never sees another branch's model turns either
        ai_calls = {c["name"] for m in spy.seen[node] if m.type == "ai" for c in m.tool_calls}
        assert ai_calls <= own_tools[key], node


def test_branch_events_overlap_in_time_for_a_timeline():
    events = []
    TradingAgentsGraph(config={"analyst_execution": "parallel"}).propagate("NVDA", DATE, on_event=events.append)
    spans = {}
    for e in events:
        if e.node in ANALYST_AGENTS and e.kind in ("node_started", "node_finished"):
            first, last = spans.get(e.node, (None, None))
            spans[e.node] = (first if first is not None else e.ts, e.ts)
    assert set(spans) == set(ANALYST_AGENTS)
    # every branch starts before any branch finishes its last step: they run side by side
    assert max(s for s, _ in spans.values()) < min(end for _, end in spans.values())
    finished = [e for e in events if e.kind == "node_finished" and e.node in ANALYST_AGENTS]
    assert all(e.data["duration_s"] >= 0 and e.agent == e.node and e.team == "Analyst Team" for e in finished)
    bull = next(e.ts for e in events if e.kind == "node_started" and e.node == "Bull Researcher")
    assert bull >= max(end for _, end in spans.values())  # the debate starts when all are done


# a branch's only call (News), a tool-loop branch's second call (Market), the first node after the branches
@pytest.mark.parametrize("node, call", [("News Analyst", 1), ("Market Analyst", 1), ("Bull Researcher", 1)])
def test_failure_in_one_branch_resumes_without_rerunning_finished_branches(ta_home, node, call):
    ref = CallCounter()
    ref_state, _ = TradingAgentsGraph(
        config={"analyst_execution": "parallel", "home": str(ta_home / "ref")}, callbacks=[ref]
    ).propagate("NVDA", DATE)

    def on_call(at, n):
        if at == node and n == call and not fired:
            fired.append(1)
            raise InjectedFault(f"injected at {node} call {call}")

    fired: list = []
    counter = CallCounter(on_call)
    graph = TradingAgentsGraph(config={"analyst_execution": "parallel"}, callbacks=[counter])
    events = []
    with pytest.raises(InjectedFault):
        graph.propagate("NVDA", DATE, on_event=events.append)
    # a node whose finish was reported had its writes checkpointed (durability "sync")
    finished = Counter(e.node for e in events if e.kind == "node_finished")
    assert finished[node] == call - 1
    assert sum(finished[n] for n in ANALYST_AGENTS if n != node) >= 3 * (call - 1)
    counter.reset()
    events.clear()
    state, _ = graph.propagate("NVDA", DATE, on_event=events.append)
    second = dict(counter.calls)
    assert graph.last_run["resumed"]
    assert comparable(state) == comparable(ref_state)
    # the failed step runs again once; a step whose finish was reported never runs again. (A sibling
    # step still in flight when the failure aborted the superstep may run again: LangGraph keeps
    # the writes of the tasks that completed, not of the ones it cut off.)
    assert second[node] == ref.calls[node] - (call - 1)
    for name in set(ref.calls) | set(second):
        assert second.get(name, 0) <= ref.calls[name] - finished[name], name
    if call == 2:  # every branch's first step finished a superstep before the failure
        assert all(second.get(n, 0) <= ref.calls[n] - 1 for n in ANALYST_AGENTS)
    if node not in ANALYST_AGENTS:  # every branch had finished: no analyst runs again
        assert finished.keys() >= set(ANALYST_AGENTS) and not any(second.get(n) for n in ANALYST_AGENTS)
    for name in ("Bull Researcher", "Research Manager", "Portfolio Manager"):
        assert second[name] == ref.calls[name]  # the rest of the graph ran exactly once


def test_stop_mid_branches_then_resume_matches_an_undisturbed_run(ta_home):
    from tradingagents.errors import RunStopped

    ref_state, ref_rating = TradingAgentsGraph(
        config={"analyst_execution": "parallel", "home": str(ta_home / "ref")}).propagate("NVDA", DATE)
    seen: list[str] = []
    graph = TradingAgentsGraph(config={"analyst_execution": "parallel"})
    with pytest.raises(RunStopped):
        # stop once the News Analyst's one call (after its own fetches) has finished
        graph.propagate("NVDA", DATE, should_stop=lambda: "News Analyst" in seen,
                        on_event=lambda e: seen.append(e.node) if e.kind == "node_finished" else None)
    assert "Bull Researcher" not in seen
    assert graph.has_resumable_run("NVDA", DATE), seen
    counter = CallCounter()
    graph.user_callbacks.append(counter)
    events = []
    state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
    assert graph.last_run["resumed"] is True, [(e.kind, e.node, e.data.get("resumed")) for e in events][:8]
    assert rating == ref_rating
    assert comparable(state) == comparable(ref_state)
    # every analyst's first step had finished before the stop: only the second call of those with a tool
    # round runs now (the one call of those that fetch their data themselves was their first step)
    assert all(counter.calls[n] == 1 for n in ANALYST_AGENTS if n not in PREFETCHING)
    assert all(counter.calls[n] == 0 for n in PREFETCHING)
