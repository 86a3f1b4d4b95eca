"""The run event contract: what a UI (the Streamlit app, the CLI) renders progress from.

No streamlit here. ``TradingAgentsGraph.propagate(..., on_event=callback)`` calls ``callback``
with one ``RunEvent`` at a time, from the thread that runs the graph, fed by LangGraph's own
stream. Events are plain data (JSON-serialisable via ``to_dict``) so they can be kept in a run
registry, shown after a refresh, or written to disk. Nothing in an event needs re-deriving: the
plan, the canonical debate speaker and round, and the saved record all come with it.

Every event has ``kind``, ``node`` (the LangGraph node, e.g. "Market Analyst", "tools_market",
"Msg Clear Market", or None for run-level events), ``agent`` (= ``role.node`` of the node's role,
the name the UI shows), ``team`` (= ``role.team``, one of ``team.TEAMS``), ``data`` and ``ts`` (epoch s).
``agent``/``team`` come from ``tradingagents.team.ROLE_BY_NODE``; node events also carry
``data["role"]`` = ``role.key`` ("market", "bull", "portfolio_manager", …).

Kinds (``EventKind``) and their ``data``:

- run_started:    {ticker, date, analysts: [keys], analyst_execution, resumed: bool, thread_id,
                   plan: team.plan(analysts) = [{team, agents: [node names in run order]}],
                   settings: {llm_provider, llm_label, quick_think_llm, deep_think_llm, data_vendor,
                              data_label, max_debate_rounds, max_risk_discuss_rounds},
                   warnings: [str] (e.g. a damaged checkpoint database moved aside),
                   earlier_engines: [{llm_provider, llm_label, quick_think_llm, deep_think_llm, nodes}]: the
                   checkpoint's finished nodes that ran on other models than this run's (a resume under
                   other models; [] otherwise; the saved meta's ``ran_on`` holds every group)}
- node_started:   {role}
- node_finished:  {role, duration_s, started_at}   (started_at = epoch s, for timelines)
- tool_call:      {role, tool, args, result_chars, result_preview}
- report:         {role, key, text}      key in team.OUTPUT_KEYS (market_report … final_trade_decision)
- debate_turn:    {role, debate: "invest"|"risk", speaker: role.speaker ("Bull", "Aggressive", …),
                   round: team.debate_round(debate, turn), turn: 1-based index within that debate,
                   text: that turn's own response only (no history, no "Bull:" label)}
- judge_decision: {role, debate, text}
- llm_usage:      {llm_calls, tool_calls, input_tokens, output_tokens, cached_input_tokens, cost_usd}   running totals over
                  every segment of the run (a resume continues them); cost_usd in USD at the pricing
                  table's prices, None when a model of the run has no price
- token:          {role, text_delta}   model text of the node's current call as it is written
                  (LangGraph's "messages" stream; buffered, at most ~4 events a second per node,
                  flushed before the node's report and node_finished); a new node_started begins a
                  new text.
                  {role, text_delta: "", restart: true} (sent at once, never throttled): the model is
                  retrying (or giving up on) its current call (an empty, cut or garbled answer), so
                  the text shown for the node so far is void; what follows is the new attempt's
- settle_started: {ticker}   the pre-run settling of this ticker's past decisions begins (right after
                  run_started, before the initial state reads the log)
- settle_finished: {ticker, settled: int, pending: int, problems: [str], error: str | None}   it ended
                  (a data outage counts as 0/0 with its error; the analysis goes on)
- run_finished:   {rating, elapsed_s, record}
- run_failed:     {error: a plain sentence (never a class name), error_type: the class name,
                   exit_code: errors.exit_code_for(exc), resumable: bool, record}
- run_stopped:    {resumable: bool, record}

``record`` = {results_path: str | None (the run folder), report_path, state_path, meta}; the paths
are None when nothing was saved (a failed or stopped run). ``meta`` is the run's meta as saved in
state.json (for a run that did not finish: what is known so far) and always includes
``usage`` {llm_calls, tool_calls, input_tokens, output_tokens}, ``elapsed_s``, ``node_times_ms``,
once finished ``decision`` (the decision card, ``graph/decision_card.py``), and ``debate_turns`` = [{debate, role, speaker, round, turn, text}] (the same records as the
debate_turn events, kept in the graph state so a resumed run still has every turn).

Every ``propagate`` call emits exactly one terminal event (run_finished, run_failed or
run_stopped), including a call refused by validation before anything ran (then run_failed with
no run_started before it), so no UI ever has to fabricate one. ``resumable`` is true only when
checkpoints are on and the error class says running again continues (``errors.is_resumable``).

The same contract as types: one ``TypedDict`` per kind for ``data`` (``RunStartedData`` …
``RunStoppedData``), and ``EVENT_DATA`` maps each kind to its type; a test checks that every event
of real runs has exactly the keys its type declares (``NotRequired`` ones only when sent).
"""

# no ``from __future__ import annotations`` here: Python 3.11's TypedDict reads ``NotRequired`` only
# from evaluated annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

from tradingagents import team
from tradingagents.errors import TradingAgentsError

EventKind = Literal[
    "run_started",
    "node_started",
    "node_finished",
    "tool_call",
    "report",
    "debate_turn",
    "judge_decision",
    "llm_usage",
    "token",
    "settle_started",
    "settle_finished",
    "run_finished",
    "run_failed",
    "run_stopped",
]
TERMINAL_KINDS: tuple[str, ...] = ("run_finished", "run_failed", "run_stopped")


# ---------------------------------------------------------------------------- the data of each kind
class PlanTeam(TypedDict):
    team: str
    agents: list[str]  # node names in run order


class RunSettings(TypedDict):
    llm_provider: str
    llm_label: str
    quick_think_llm: str | None
    deep_think_llm: str | None
    data_vendor: str
    data_label: str
    max_debate_rounds: int
    max_risk_discuss_rounds: int


class RunRecord(TypedDict):
    results_path: str | None  # the run folder; None when nothing was saved
    report_path: str | None
    state_path: str | None
    meta: dict[str, Any]  # the run's meta as saved (usage, elapsed_s, node_times_ms, debate_turns, …)


class RunStartedData(TypedDict):
    ticker: str
    date: str
    analysts: list[str]
    analyst_execution: str
    resumed: bool
    thread_id: str
    plan: list[PlanTeam]
    settings: RunSettings
    warnings: list[str]
    earlier_engines: list[dict[str, Any]]


class SettleStartedData(TypedDict):
    ticker: str


class SettleFinishedData(TypedDict):
    ticker: str
    settled: int
    pending: int
    problems: list[str]
    error: str | None


class NodeStartedData(TypedDict):
    role: str


class NodeFinishedData(TypedDict):
    role: str
    duration_s: float
    started_at: float


class ToolCallData(TypedDict):
    role: str
    tool: str | None
    args: dict[str, Any]
    result_chars: int
    result_preview: str


class ReportData(TypedDict):
    role: str
    key: str  # one of team.OUTPUT_KEYS
    text: str


class DebateTurnData(TypedDict):
    role: str
    debate: str  # "invest" | "risk"
    speaker: str  # role.speaker: "Bull", "Aggressive", …
    round: int
    turn: int
    text: str


class JudgeDecisionData(TypedDict):
    role: str
    debate: str
    text: str


class LlmUsageData(TypedDict):
    llm_calls: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cached_input_tokens: NotRequired[int]  # of the input tokens, those read from the provider's prompt cache
    cost_usd: float | None


class TokenData(TypedDict):
    role: str
    text_delta: str
    restart: NotRequired[bool]  # sent (True, with an empty delta) only when the call is retried


class RunFinishedData(TypedDict):
    rating: str
    elapsed_s: float
    record: RunRecord


class RunFailedData(TypedDict):
    error: str
    error_type: str
    exit_code: int
    resumable: bool
    record: RunRecord


class RunStoppedData(TypedDict):
    resumable: bool
    record: RunRecord


EVENT_DATA: dict[str, type] = {
    "run_started": RunStartedData,
    "settle_started": SettleStartedData,
    "settle_finished": SettleFinishedData,
    "node_started": NodeStartedData,
    "node_finished": NodeFinishedData,
    "tool_call": ToolCallData,
    "report": ReportData,
    "debate_turn": DebateTurnData,
    "judge_decision": JudgeDecisionData,
    "llm_usage": LlmUsageData,
    "token": TokenData,
    "run_finished": RunFinishedData,
    "run_failed": RunFailedData,
    "run_stopped": RunStoppedData,
}
"""Each event kind → the TypedDict of its ``data`` (the table above, as types)."""


@dataclass
class RunEvent:
    kind: EventKind
    node: str | None = None  # LangGraph node name, e.g. "Market Analyst", "tools_market"
    agent: str | None = None  # role.node of the node's role: the name the UI shows
    team: str | None = None  # role.team, one of team.TEAMS
    data: dict[str, Any] = field(default_factory=dict)
    ts: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


EventCallback = Callable[[RunEvent], None]


def make_event(kind: EventKind, node: str | None = None, **data: Any) -> RunEvent:
    """A RunEvent whose agent, team and ``data["role"]`` come from the roster (for node events)."""
    role = team.ROLE_BY_NODE.get(node) if node else None
    if role is not None:
        data = {"role": role.key, **data}
    return RunEvent(kind=kind, node=node, agent=role.node if role else None,
                    team=role.team if role else None, data=data)


def empty_record(meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``record`` of a run that saved nothing (failed, stopped, refused)."""
    return {"results_path": None, "report_path": None, "state_path": None, "meta": dict(meta or {})}


def describe_error(exc: BaseException) -> str:
    """A plain sentence for a failure: the message of our own errors, a short wrap for anything else."""
    message = " ".join(str(exc).split())
    if isinstance(exc, TradingAgentsError) and message:
        return message
    if isinstance(exc, KeyError | IndexError | AttributeError) or not message:
        detail = f" ({message})" if message else ""
        return ("The analysis stopped on an unexpected internal error" + detail
                + ". See the log for details; with checkpoints on, running it again resumes where it stopped.")
    return message if message.endswith((".", "!", "?")) else message + "."
