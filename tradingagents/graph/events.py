"""The run event API: what a UI (the Streamlit app, the CLI) renders progress from.

No streamlit here. ``TradingAgentsGraph.propagate(..., on_event=callback)`` calls ``callback``
with one ``RunEvent`` at a time, from the thread that runs the graph, fed by LangGraph's own
stream. Events are plain data (JSON-serialisable via ``to_dict``) so they can be kept in a run
registry, shown after a refresh, or written to disk.

Kinds (``EventKind``) and their ``data``:
- run_started:    {ticker, date, analysts, analyst_execution, resumed: bool, thread_id}
- node_started:   {}                        node = graph node name, agent = display name, team
- node_finished:  {duration_s, started_at}  (same node/agent/team; started_at = epoch s, for timelines)
- tool_call:      {tool, args, result_chars, result_preview}
- report:         {key, text}               key in market_report|sentiment_report|news_report|
                                            fundamentals_report|investment_plan|
                                            trader_investment_plan|final_trade_decision
- debate_turn:    {debate: "invest"|"risk", speaker, round, text}
- judge_decision: {debate: "invest"|"risk", text}
- llm_usage:      {llm_calls, tool_calls, input_tokens, output_tokens}   running totals
- run_finished:   {rating, results_path, elapsed_s}
- run_failed:     {error, error_type, resumable: bool}
- run_stopped:    {resumable: bool}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

EventKind = Literal[
    "run_started",
    "node_started",
    "node_finished",
    "tool_call",
    "report",
    "debate_turn",
    "judge_decision",
    "llm_usage",
    "run_finished",
    "run_failed",
    "run_stopped",
]

TEAMS = ("Analyst Team", "Research Team", "Trading Team", "Risk Management", "Portfolio Management")


@dataclass
class RunEvent:
    kind: EventKind
    node: str | None = None  # LangGraph node name, e.g. "Market Analyst", "tools_market"
    agent: str | None = None  # display name of the agent the node belongs to
    team: str | None = None  # one of TEAMS
    data: dict[str, Any] = field(default_factory=dict)
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunEvent:
        return cls(**d)


EventCallback = Callable[[RunEvent], None]


from tradingagents.errors import RunStopped  # noqa: E402,F401  (one error hierarchy)
