"""Routers of the conditional edges (DESIGN §2).

Every router returns a node name that is a key of the path map the graph attaches to its edge
(``DEBATE_PATH_MAP``, ``RISK_ANALYSIS_PATH_MAP``, ``analyst_path_map``), and every router falls back
to a safe destination when the state drifts (a missing key, a count of the wrong type, a speaker
label it does not know), so a drifted value can never crash the graph.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage

BULL = "Bull Researcher"
BEAR = "Bear Researcher"
RESEARCH_MANAGER = "Research Manager"
TRADER = "Trader"
AGGRESSIVE = "Aggressive Analyst"
CONSERVATIVE = "Conservative Analyst"
NEUTRAL = "Neutral Analyst"
PORTFOLIO_MANAGER = "Portfolio Manager"

DEBATE_PATH_MAP: dict[str, str] = {BULL: BULL, BEAR: BEAR, RESEARCH_MANAGER: RESEARCH_MANAGER}
RISK_ANALYSIS_PATH_MAP: dict[str, str] = {
    AGGRESSIVE: AGGRESSIVE,
    CONSERVATIVE: CONSERVATIVE,
    NEUTRAL: NEUTRAL,
    PORTFOLIO_MANAGER: PORTFOLIO_MANAGER,
}

# latest_speaker → who speaks next
_RISK_ROTATION = {"aggressive": CONSERVATIVE, "conservative": NEUTRAL, "neutral": AGGRESSIVE}


def _as_int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def last_message_has_tool_calls(messages: Any) -> bool:
    """True when the last message is an AI message that asks for tool calls."""
    if not messages:
        return False
    last = messages[-1]
    if isinstance(last, AIMessage):
        return bool(last.tool_calls)
    if isinstance(last, Mapping):  # a dict-shaped message (never produced by our nodes, but cheap)
        return bool(last.get("tool_calls"))
    return bool(getattr(last, "tool_calls", None))


def analyst_path_map(tools_node: str, clear_node: str) -> dict[str, str]:
    return {tools_node: tools_node, clear_node: clear_node}


class ConditionalLogic:
    """Routing decisions: analysts' tool loops, the investment debate and the risk debate."""

    def __init__(self, max_debate_rounds: int = 1, max_risk_discuss_rounds: int = 1):
        self.max_debate_rounds = max(1, _as_int(max_debate_rounds))
        self.max_risk_discuss_rounds = max(1, _as_int(max_risk_discuss_rounds))

    # ------------------------------------------------------------------ analysts
    def make_analyst_router(self, tools_node: str, clear_node: str, messages_key: str = "messages"):
        """A router for one analyst: loop to its tools while the last message has tool calls."""

        def route(state: Mapping[str, Any]) -> str:
            return tools_node if last_message_has_tool_calls(state.get(messages_key)) else clear_node

        route.__name__ = f"should_continue_{tools_node.removeprefix('tools_')}"
        return route

    def should_continue_market(self, state: Mapping[str, Any]) -> str:
        return "tools_market" if last_message_has_tool_calls(state.get("messages")) else "Msg Clear Market"

    def should_continue_social(self, state: Mapping[str, Any]) -> str:
        return "tools_social" if last_message_has_tool_calls(state.get("messages")) else "Msg Clear Sentiment"

    def should_continue_news(self, state: Mapping[str, Any]) -> str:
        return "tools_news" if last_message_has_tool_calls(state.get("messages")) else "Msg Clear News"

    def should_continue_fundamentals(self, state: Mapping[str, Any]) -> str:
        if last_message_has_tool_calls(state.get("messages")):
            return "tools_fundamentals"
        return "Msg Clear Fundamentals"

    # ------------------------------------------------------------------ debates
    def should_continue_debate(self, state: Mapping[str, Any]) -> str:
        """Bull and Bear alternate until ``count ≥ 2·max_debate_rounds``, then the manager rules."""
        debate = state.get("investment_debate_state") or {}
        if _as_int(debate.get("count")) >= 2 * self.max_debate_rounds:
            return RESEARCH_MANAGER
        current = str(debate.get("current_response") or "").lstrip()
        if current.lower().startswith("bull"):
            return BEAR
        return BULL

    def should_continue_risk_analysis(self, state: Mapping[str, Any]) -> str:
        """Aggressive → Conservative → Neutral → … until ``count ≥ 3·max_risk_discuss_rounds``."""
        risk = state.get("risk_debate_state") or {}
        if _as_int(risk.get("count")) >= 3 * self.max_risk_discuss_rounds:
            return PORTFOLIO_MANAGER
        speaker = str(risk.get("latest_speaker") or "").strip().lower()
        for prefix, nxt in _RISK_ROTATION.items():
            if speaker.startswith(prefix):
                return nxt
        return AGGRESSIVE
