"""Routers of the conditional edges (docs/ARCHITECTURE.md, "The graph").

Every router returns a node name that is a key of the path map the graph attaches to its edge
(``DEBATE_PATH_MAP``, ``RISK_ANALYSIS_PATH_MAP``, ``analyst_path_map``), and every router falls back
to a safe destination when the state drifts (a missing key, a count of the wrong type, a speaker
label it does not know), so a drifted value can never crash the graph. Node names, speaking order
and speaker labels come from the roster (``tradingagents.team``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage

from tradingagents import team
from tradingagents.config import validate_rounds

# aliases of the roster's node names (the roster is the one place that declares them)
BULL, BEAR = (r.node for r in team.speakers("invest"))
RESEARCH_MANAGER = team.judge("invest").node
TRADER = team.ROLES["trader"].node
AGGRESSIVE, CONSERVATIVE, NEUTRAL = (r.node for r in team.speakers("risk"))
PORTFOLIO_MANAGER = team.judge("risk").node


def _debate_path_map(debate: str) -> dict[str, str]:
    nodes = [*(r.node for r in team.speakers(debate)), team.judge(debate).node]
    return {n: n for n in nodes}


DEBATE_PATH_MAP: dict[str, str] = _debate_path_map("invest")
RISK_ANALYSIS_PATH_MAP: dict[str, str] = _debate_path_map("risk")

# latest_speaker (the roster's speaker label, lower-cased) → the node that speaks next
_RISK_SPEAKERS = team.speakers("risk")
_RISK_ROTATION = {
    team.present(r.speaker).lower(): _RISK_SPEAKERS[(i + 1) % len(_RISK_SPEAKERS)].node
    for i, r in enumerate(_RISK_SPEAKERS)
}
_INVEST_SPEAKERS = team.speakers("invest")
_INVEST_ROTATION = {
    team.present(r.speaker).lower(): _INVEST_SPEAKERS[(i + 1) % len(_INVEST_SPEAKERS)].node
    for i, r in enumerate(_INVEST_SPEAKERS)
}
_ANALYST_BY_KEY = {r.key: r for r in team.ANALYSTS}


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


def analyst_path_map(tool_node: str, clear_node: str) -> dict[str, str]:
    return {tool_node: tool_node, clear_node: clear_node}


class ConditionalLogic:
    """Routing decisions: analysts' tool loops, the investment debate and the risk debate."""

    def __init__(self, max_debate_rounds: int = 1, max_risk_discuss_rounds: int = 1):
        # a junk value is a clear ConfigError (never silently 1): the same bound as the config's
        self.max_debate_rounds = validate_rounds(max_debate_rounds, "max_debate_rounds")
        self.max_risk_discuss_rounds = validate_rounds(max_risk_discuss_rounds, "max_risk_discuss_rounds")

    # ------------------------------------------------------------------ analysts
    def make_analyst_router(self, tool_node: str, clear_node: str, messages_key: str = "messages"):
        """A router for one analyst: loop to its tools while the last message has tool calls."""

        def route(state: Mapping[str, Any]) -> str:
            return tool_node if last_message_has_tool_calls(state.get(messages_key)) else clear_node

        route.__name__ = f"should_continue_{tool_node.removeprefix('tools_')}"
        return route

    def _analyst(self, key: str, state: Mapping[str, Any]) -> str:
        role = _ANALYST_BY_KEY[key]
        return team.present(role.tool_node if last_message_has_tool_calls(state.get("messages")) else role.clear_node)

    def should_continue_market(self, state: Mapping[str, Any]) -> str:
        return self._analyst("market", state)

    def should_continue_social(self, state: Mapping[str, Any]) -> str:
        return self._analyst("social", state)

    def should_continue_news(self, state: Mapping[str, Any]) -> str:
        return self._analyst("news", state)

    def should_continue_fundamentals(self, state: Mapping[str, Any]) -> str:
        return self._analyst("fundamentals", state)

    # ------------------------------------------------------------------ debates
    def should_continue_debate(self, state: Mapping[str, Any]) -> str:
        """Bull and Bear alternate until ``count ≥ 2·max_debate_rounds``, then the manager rules."""
        debate = state.get("investment_debate_state") or {}
        if _as_int(debate.get("count")) >= team.turns_per_round("invest") * self.max_debate_rounds:
            return RESEARCH_MANAGER
        current = str(debate.get("current_response") or "").lstrip().lower()
        for label, nxt in _INVEST_ROTATION.items():
            if current.startswith(label):
                return nxt
        return BULL

    def should_continue_risk_analysis(self, state: Mapping[str, Any]) -> str:
        """Aggressive → Conservative → Neutral → … until ``count ≥ 3·max_risk_discuss_rounds``."""
        risk = state.get("risk_debate_state") or {}
        if _as_int(risk.get("count")) >= team.turns_per_round("risk") * self.max_risk_discuss_rounds:
            return PORTFOLIO_MANAGER
        speaker = str(risk.get("latest_speaker") or "").strip().lower()
        for prefix, nxt in _RISK_ROTATION.items():
            if speaker.startswith(prefix):
                return nxt
        return AGGRESSIVE
