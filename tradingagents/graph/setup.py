"""Builds the StateGraph, sequential or with the analysts as parallel branches (docs/ARCHITECTURE.md,
"The graph").

Sequential: START → analysts in the selected order (each: agent ⇄ tools, then its Msg Clear node)
→ Bull ⇄ Bear → Research Manager → Trader → Aggressive → Conservative → Neutral (rotating) →
Portfolio Manager → END.

Parallel: START fans out to every selected analyst at once. Each branch keeps its private message
scratchpad in its own state key (``<key>_messages``; ``ToolNode(messages_key=...)`` and thin
wrappers that show the agent its scratchpad as ``messages``), so no analyst sees another's tool
messages; reports land in the shared report keys; Bull Researcher waits for every branch's
Msg Clear node (a join edge). Nodes keep the same names in both modes, so events, checkpoints and
per-node figures read the same.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Annotated, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode

from tradingagents import team
from tradingagents.agents.utils.agent_states import AgentState, declare_keys
from tradingagents.agents.utils.agent_utils import tool_error_message
from tradingagents.config import check_execution
from tradingagents.graph.analyst_execution import (
    ANALYST_SPECS,
    AnalystNodeSpec,
    build_analyst_execution_plan,
)
from tradingagents.graph.conditional_logic import (
    AGGRESSIVE,
    BEAR,
    BULL,
    CONSERVATIVE,
    DEBATE_PATH_MAP,
    NEUTRAL,
    PORTFOLIO_MANAGER,
    RESEARCH_MANAGER,
    RISK_ANALYSIS_PATH_MAP,
    TRADER,
    ConditionalLogic,
    analyst_path_map,
)


class ParallelAgentState(AgentState):
    """AgentState plus one private message scratchpad per analyst branch."""

    market_messages: Annotated[list, add_messages]
    social_messages: Annotated[list, add_messages]
    news_messages: Annotated[list, add_messages]
    fundamentals_messages: Annotated[list, add_messages]


# a roster analyst beyond the four gets its scratchpad from the roster (no line here)
declare_keys(ParallelAgentState, {spec.messages_key: Annotated[list, add_messages] for spec in ANALYST_SPECS.values()})
SCRATCHPAD_KEYS = tuple(spec.messages_key for spec in ANALYST_SPECS.values())


def _paths(path_map: Mapping[str, str]) -> dict[Hashable, str]:
    """A router's path map as LangGraph's ``add_conditional_edges`` types it (a copy: the map is a fact)."""
    return {key: node for key, node in path_map.items()}


def _scratchpad_node(node: Callable[..., dict], messages_key: str):
    """Run ``node`` with its branch scratchpad shown as ``messages``; write messages back there."""

    # the run config goes through to a node that takes one (LangGraph hands it to a parameter named
    # ``config``): without it the node rebuilds it from the context, a copy of LangGraph's whole config
    takes_config = "config" in inspect.signature(node).parameters

    def wrapped(state: Mapping[str, Any], config=None) -> dict:
        view = dict(state)
        view["messages"] = list(state.get(messages_key) or [])
        update = dict((node(view, config) if takes_config else node(view)) or {})
        if "messages" in update:
            update[messages_key] = update.pop("messages")
        return update

    wrapped.__name__ = getattr(node, "__name__", "node")
    return wrapped


class CompiledGraphCache:
    """Compiled graphs by shape (analysts, execution mode, …), so a graph is compiled once and reused.

    A compiled graph holds no run state (the state lives in the checkpointer, the analysis date in the
    run config), so runs of any ticker and date share it. Bounded: the ``maxsize`` most recently used
    shapes are kept.
    """

    def __init__(self, maxsize: int = 8):
        self.maxsize = maxsize
        self._graphs: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        self.compiles = 0  # how many graphs were compiled (tests and benches read it)

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        with self._lock:  # held while compiling: two first runs of one shape compile it once
            graph = self._graphs.get(key)
            if graph is None:
                graph = build()
                self.compiles += 1
                self._graphs[key] = graph
                while len(self._graphs) > self.maxsize:
                    self._graphs.popitem(last=False)
            self._graphs.move_to_end(key)
            return graph

    def __len__(self) -> int:
        return len(self._graphs)


class GraphSetup:
    """Creates the nodes from the agent factories and wires them."""

    def __init__(
        self,
        quick_llm,
        deep_llm,
        memories: Mapping[str, Any],
        conditional_logic: ConditionalLogic,
        config: Mapping[str, Any],
        tools_for: Callable[[str], list],
    ):
        self.quick_llm = quick_llm
        self.deep_llm = deep_llm
        self.memories = memories
        self.logic = conditional_logic
        self.config = config
        self.tools_for = tools_for  # analyst key → list of tools (already bound to the analysis date)

    def _analyst_nodes(self, spec: AnalystNodeSpec):
        from tradingagents import agents

        tools = self.tools_for(spec.key)
        factory = getattr(agents, spec.factory)
        agent = factory(self.quick_llm, tools, self.config)
        clear = agents.create_msg_delete()
        return agent, clear, tools

    def setup_graph(self, selected_analysts=None, analyst_execution: str | None = None, *,
                    entry: str | None = None) -> StateGraph:
        """The team's graph; ``entry`` (a node after the analysts: a what-if fork's re-entry point)
        starts the graph there instead, without the analysts' nodes (their reports come in the input)."""
        from tradingagents import agents

        mode = check_execution(analyst_execution)  # the config's one rule (None: its default)
        plan = build_analyst_execution_plan(selected_analysts)
        parallel = mode == "parallel"
        workflow = StateGraph(ParallelAgentState if parallel else AgentState)
        if entry is not None:
            role = team.ROLE_BY_NODE.get(entry)
            if role is None or role.is_analyst or role.node != entry:
                raise ValueError(f"A graph can be entered at a node after the analysts, not at {entry!r}.")
            plan = []

        for spec in plan:
            agent, clear, tools = self._analyst_nodes(spec)
            if parallel:
                workflow.add_node(spec.agent_node, _scratchpad_node(agent, spec.messages_key))
                workflow.add_node(spec.clear_node, _scratchpad_node(clear, spec.messages_key))
                workflow.add_node(
                    spec.tool_node,
                    ToolNode(tools, messages_key=spec.messages_key, handle_tool_errors=tool_error_message),
                )
                router = self.logic.make_analyst_router(spec.tool_node, spec.clear_node, spec.messages_key)
            else:
                workflow.add_node(spec.agent_node, agent)
                workflow.add_node(spec.clear_node, clear)
                workflow.add_node(spec.tool_node, ToolNode(tools, handle_tool_errors=tool_error_message))
                router = self.logic.make_analyst_router(spec.tool_node, spec.clear_node)
            workflow.add_conditional_edges(
                spec.agent_node, router, _paths(analyst_path_map(spec.tool_node, spec.clear_node))
            )
            workflow.add_edge(spec.tool_node, spec.agent_node)

        # every other role of the roster: its factory, its model tier and (if it has one) its memory
        for role in team.ROSTER:
            if role.is_analyst:
                continue
            factory = getattr(agents, team.present(role.factory))
            llm = self.deep_llm if role.model == "deep" else self.quick_llm
            if role.memory:
                node = factory(llm, self.memories[role.memory], self.config)
            else:
                node = factory(llm, self.config)
            workflow.add_node(role.node, node)

        if entry is not None:
            workflow.add_edge(START, entry)
        elif parallel:
            for spec in plan:
                workflow.add_edge(START, spec.agent_node)
            clears = [spec.clear_node for spec in plan]
            workflow.add_edge(clears if len(clears) > 1 else clears[0], BULL)
        else:
            workflow.add_edge(START, plan[0].agent_node)
            for here, nxt in zip(plan, plan[1:], strict=False):
                workflow.add_edge(here.clear_node, nxt.agent_node)
            workflow.add_edge(plan[-1].clear_node, BULL)

        workflow.add_conditional_edges(BULL, self.logic.should_continue_debate, _paths(DEBATE_PATH_MAP))
        workflow.add_conditional_edges(BEAR, self.logic.should_continue_debate, _paths(DEBATE_PATH_MAP))
        workflow.add_edge(RESEARCH_MANAGER, TRADER)
        workflow.add_edge(TRADER, AGGRESSIVE)
        for node in (AGGRESSIVE, CONSERVATIVE, NEUTRAL):
            workflow.add_conditional_edges(node, self.logic.should_continue_risk_analysis,
                                           _paths(RISK_ANALYSIS_PATH_MAP))
        workflow.add_edge(PORTFOLIO_MANAGER, END)
        return workflow
