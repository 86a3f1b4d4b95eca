"""The trading graph as LangGraph's own server and Studio serve it (``langgraph.json`` at the root).

``langgraph dev`` (the ``langgraph-cli[inmem]`` package) loads ``make_graph``, the one factory named in
``langgraph.json``, and calls it for each run with the run's config. What the run asks for is read from
its ``configurable`` into :class:`Configuration` (typed as LangGraph's templates type it: a dataclass
whose fields carry their description, ``Configuration.from_runnable_config``); what it does not name
takes the engine's defaults, the offline engine and the demo market (``TRADINGAGENTS_*`` variables set
the rest: the home, keys, URLs).

The graph's input is the specification's initial state: ``company_of_interest`` and ``trade_date``, and
optionally ``asset_type``, ``past_context`` and ``instrument_context``. Two nodes:

* ``Prepare Run`` makes the checks ``propagate`` makes before any model call
  (``TradingAgentsGraph.checked_input``: the same errors, with the same messages, fail the run) and
  builds the initial state as ``propagate`` does (``TradingAgentsGraph.initial_state``: past decisions
  from the memory log, the instrument's context from the data provider);
* ``Trading Team`` runs the team: the StateGraph that ``TradingAgentsGraph.build_graph`` wires for the
  app (the same factory, nodes and edges), compiled without a checkpointer of its own so that it keeps
  its checkpoints in the server's (a subgraph: stream with ``stream_subgraphs=True`` to see each
  agent's update). The analysis date reaches the data tools as it does in the app, through the run
  config's ``configurable["as_of"]``, so no tool reads data dated after it.

The server runs the graph and keeps its threads; it does not save the run under the home, log the
decision or settle past ones: that is ``propagate``'s work around the same graph (the app and the CLI).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, fields
from typing import Any, NotRequired

from langchain_core.messages import RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Overwrite
from typing_extensions import TypedDict

from tradingagents.graph.analyst_execution import analysts_for_asset

__all__ = ["PREPARE_NODE", "TEAM_NODE", "Configuration", "ServedInput", "build_served_graph", "make_graph"]

PREPARE_NODE = "Prepare Run"
TEAM_NODE = "Trading Team"


class ServedInput(TypedDict):
    """The served graph's input: the specification's initial state (the rest is built by Prepare Run)."""

    company_of_interest: str
    trade_date: str
    asset_type: NotRequired[str]
    past_context: NotRequired[str]
    instrument_context: NotRequired[str]


@dataclass(kw_only=True)
class Configuration:
    """What a run of the served graph may set through its ``configurable`` (each field is a setting of
    ``tradingagents/config``, checked there; None keeps the setting's default)."""

    llm_provider: str = field(default="offline", metadata={
        "description": "The chat models' provider: offline (the deterministic engine, no key, no network), "
                       "openai, anthropic, google, openai_compatible or a preset (ollama, vllm, lmstudio, openrouter, "
                       "deepseek); its key from the server's environment."})
    quick_think_llm: str | None = field(default=None, metadata={
        "description": "The quick model (analysts, debaters, trader, risk analysts); None: the provider's default."})
    deep_think_llm: str | None = field(default=None, metadata={
        "description": "The deep model (Research Manager, Portfolio Manager); None: the provider's default."})
    backend_url: str | None = field(default=None, metadata={
        "description": "The OpenAI-compatible server's URL; None: the provider's own."})
    data_vendor: str = field(default="demo", metadata={
        "description": "The market data source: demo (the seeded synthetic market), yfinance or csv."})
    selected_analysts: list[str] | None = field(default=None, metadata={
        "description": "A subset of market, social, news, fundamentals (run in that order); None: all four."})
    max_debate_rounds: int = field(default=1, metadata={
        "description": "Bull/bear debate rounds before the Research Manager decides."})
    max_risk_discuss_rounds: int = field(default=1, metadata={
        "description": "Rounds of the aggressive/conservative/neutral risk debate."})
    analyst_execution: str | None = field(default=None, metadata={
        "description": "parallel (the analysts as concurrent branches) or sequential; None: the default."})
    max_cost_usd: float | None = field(default=None, metadata={
        "description": "A hard budget for the run's model calls in USD (each call reserves its worst case first; "
                       "the run fails with BudgetExceeded before the call that would pass it); None: no budget."})
    output_language: str | None = field(default=None, metadata={
        "description": "The language the agents write in (English by default)."})

    @classmethod
    def from_runnable_config(cls, config: RunnableConfig | None = None) -> Configuration:
        """The fields named in ``config["configurable"]`` (others are LangGraph's own keys and ignored)."""
        configurable = (config or {}).get("configurable") or {}
        names = {f.name for f in fields(cls) if f.init}
        return cls(**{k: v for k, v in configurable.items() if k in names})

    def settings(self):
        """The resolved, checked settings (a bad value raises the config's ``ConfigError``)."""
        from tradingagents.config import resolve_config

        given = {k: v for k, v in asdict(self).items() if v is not None}
        return resolve_config(given)


def build_served_graph(graph) -> Any:
    """The served graph of a ``TradingAgentsGraph``: Prepare Run → Trading Team, uncompiled."""
    from langchain_core.runnables.config import merge_configs

    from tradingagents.dataflows.tools import AS_OF_KEY
    from tradingagents.graph.run_support import _Budget
    from tradingagents.graph.setup import SCRATCHPAD_KEYS

    def prepare(state: dict[str, Any]) -> dict[str, Any]:
        checked = graph.checked_input(state.get("company_of_interest"), state.get("trade_date"),
                                      state.get("asset_type") or "stock")
        initial = graph.initial_state(checked["ticker"], checked["trade_date"], checked["asset_type"],
                                      checked["analysts"], checked["session_note"])
        for key in ("past_context", "instrument_context"):  # the caller's own, when given
            if state.get(key):
                initial[key] = state[key]
        # a thread run again starts afresh: no earlier run's messages, debate turns or memory records
        initial["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *initial["messages"]]
        for key in SCRATCHPAD_KEYS:
            if key in initial:
                initial[key] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *initial[key]]
        initial["debate_turns"] = Overwrite([])
        initial["memory_used"] = Overwrite(initial["memory_used"])
        return initial

    def compiled_team(analysts: list[str]):
        # the app's builder, compiled without a checkpointer: it keeps its checkpoints in the server's
        key = ("served", tuple(analysts), graph.analyst_execution, bool(graph.config.get("memory_enabled", True)))
        return graph.compiled_graphs.get(key, lambda: graph.build_graph(None, analysts).compile())

    stock_analysts = analysts_for_asset(graph.selected_analysts, "stock")
    # the team of a stock, compiled now and named in ``team`` below, so LangGraph knows it as the node's
    # subgraph: Studio draws its agents (xray) and its checkpoints nest under the node's
    stock_team = compiled_team(stock_analysts)

    def team(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        analysts = analysts_for_asset(graph.selected_analysts, state.get("asset_type") or "stock")
        inner = stock_team if analysts == stock_analysts else compiled_team(analysts)
        configurable = {**(config.get("configurable") or {}), AS_OF_KEY: state["trade_date"]}
        # the budget as propagate applies it: a RunGuard every model call of the team reserves from
        budget = _Budget(graph.config.get("max_cost_usd"), None, graph.config, state["company_of_interest"],
                         state["trade_date"])
        run_config = merge_configs({**config, "configurable": configurable}, {"callbacks": budget.callbacks()})
        final = inner.invoke(dict(state), run_config)
        update = {k: v for k, v in final.items() if k != "messages" and k not in SCRATCHPAD_KEYS}
        update["debate_turns"] = list(final.get("debate_turns") or [])[len(state.get("debate_turns") or []):]
        update["messages"] = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *(final.get("messages") or [])]
        return update

    builder = StateGraph(stock_team.builder.state_schema, input_schema=ServedInput)
    # the ignore: LangGraph reads a node's input hint at run time; `dict` gives prepare the whole input
    # (a TypedDict hint would filter it), and LangGraph's stubs admit only TypedDict-like hints
    builder.add_node(PREPARE_NODE, prepare)  # type: ignore[type-var]
    builder.add_node(TEAM_NODE, team)
    builder.add_edge(START, PREPARE_NODE)
    builder.add_edge(PREPARE_NODE, TEAM_NODE)
    builder.add_edge(TEAM_NODE, END)
    return builder


_CACHE: OrderedDict[str, Any] = OrderedDict()
_CACHE_LOCK = threading.Lock()
CACHE_SIZE = 8  # configurations kept compiled (the most recently used); another one is built again


def _served(configuration: Configuration):
    """The compiled served graph of one configuration, built once a process (the models, memories and
    compiled team are reused by every run and thread with that configuration)."""
    key = json.dumps(asdict(configuration), sort_keys=True, default=str)
    with _CACHE_LOCK:
        compiled = _CACHE.get(key)
        if compiled is None:
            from tradingagents.graph.trading_graph import TradingAgentsGraph

            settings = configuration.settings()
            graph = TradingAgentsGraph(settings["selected_analysts"], config=settings)
            compiled = build_served_graph(graph).compile(name="trading_agents")
            compiled.trading_graph = graph
            _CACHE[key] = compiled
            while len(_CACHE) > CACHE_SIZE:
                _CACHE.popitem(last=False)
        _CACHE.move_to_end(key)
        return compiled


async def make_graph(config: RunnableConfig):
    """The graph factory ``langgraph.json`` names: the served graph for the run's ``configurable``.

    Async so that building it (reading the memories, compiling) runs off the server's event loop.
    """
    return await asyncio.to_thread(_served, Configuration.from_runnable_config(config))
