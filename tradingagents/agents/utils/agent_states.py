"""The graph's state contract (docs/ARCHITECTURE.md, "State")."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langgraph.graph import MessagesState
from typing_extensions import TypedDict

from tradingagents import team


def _keep_last(left, right):
    """Reducer that lets parallel branches write disjoint keys without conflicts."""
    return right if right is not None else left


def merge_memory_used(left, right):
    """Reducer of ``memory_used``: past decisions from the newest writer that has them, lessons merged
    per memory name with each lesson once (by id), in the order the roles were given them."""
    left, right = dict(left or {}), dict(right or {})
    out = {"past_decisions": list(right.get("past_decisions") or left.get("past_decisions") or []),
           "lessons": {k: list(v) for k, v in (left.get("lessons") or {}).items()}}
    for name, items in (right.get("lessons") or {}).items():
        have = out["lessons"].setdefault(name, [])
        seen = {i.get("id") for i in have}
        have.extend(i for i in items if i.get("id") not in seen)
    return out


class InvestDebateState(TypedDict):
    bull_history: str
    bear_history: str
    history: str
    current_response: str
    judge_decision: str
    count: int


class RiskDebateState(TypedDict):
    aggressive_history: str
    conservative_history: str
    neutral_history: str
    history: str
    latest_speaker: str
    current_aggressive_response: str
    current_conservative_response: str
    current_neutral_response: str
    judge_decision: str
    count: int


class AgentState(MessagesState):
    company_of_interest: str
    trade_date: str
    asset_type: str
    sender: Annotated[str, _keep_last]
    instrument_context: str
    past_context: str
    # the desk's book as the Portfolio Manager reads it (graph/book_view.py; "" without a book)
    portfolio_context: str
    # what the roles were given from memory (DESIGN §7): {"past_decisions": [...], "lessons": {memory: [...]}}
    memory_used: Annotated[dict, merge_memory_used]

    market_report: Annotated[str, _keep_last]
    sentiment_report: Annotated[str, _keep_last]
    news_report: Annotated[str, _keep_last]
    fundamentals_report: Annotated[str, _keep_last]

    investment_debate_state: InvestDebateState
    investment_plan: str
    trader_investment_plan: str
    risk_debate_state: RiskDebateState
    final_trade_decision: str
    # the Portfolio Manager's rating as it answered it (structured), never re-parsed from the text
    final_rating: str
    # one record per debate turn, appended by the debaters: {debate, role, speaker, round, turn, text}
    debate_turns: Annotated[list, operator.add]
    # the portfolio manager's notes to the judges, {before, note, by, at}: given up front (config pm_notes) or
    # added at a pause before a verdict (the run's checkpoint is updated, then continued)
    pm_notes: Annotated[list, operator.add]
    # why an analyst ran in another data shape than the config's (a server that refused tools)
    analyst_data_notes: Annotated[list, operator.add]
    # every tool answer an analyst's report was written from: {role, tool, args, text} (the evidence ledger's data)
    tool_answers: Annotated[list, operator.add]


def declare_keys(state_cls: type, keys: dict[str, Any]) -> None:
    """Declare the state keys of ``keys`` (name → annotation) that ``state_cls`` does not declare yet: a
    roster analyst beyond the specification's four gets its report key here, from the roster, so adding
    an analyst needs no line in this file (LangGraph reads a state's keys from its annotations)."""
    for name, annotation in keys.items():
        if name not in state_cls.__annotations__:
            state_cls.__annotations__[name] = annotation


declare_keys(AgentState, {key: Annotated[str, _keep_last] for key in team.REPORT_KEYS})


def turn_record(role: team.Role, count: int, text: str) -> dict[str, Any]:
    """The record of the debate turn that brought ``role``'s debate to ``count`` turns."""
    return {
        "debate": role.debate,
        "role": role.key,
        "speaker": role.speaker,
        "round": team.debate_round(role.debate, count),  # type: ignore[arg-type]
        "turn": int(count),
        "text": text,
    }


def empty_invest_debate_state() -> InvestDebateState:
    return InvestDebateState(
        bull_history="", bear_history="", history="", current_response="", judge_decision="", count=0
    )


def empty_risk_debate_state() -> RiskDebateState:
    return RiskDebateState(
        aggressive_history="",
        conservative_history="",
        neutral_history="",
        history="",
        latest_speaker="",
        current_aggressive_response="",
        current_conservative_response="",
        current_neutral_response="",
        judge_decision="",
        count=0,
    )
