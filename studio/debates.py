"""Turn a run's state (or its event list) into an ordered list of debate turns for display.

UI-neutral: the Debates page renders the ``Turn`` list as chat bubbles, and replay steps through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

INVEST_SPEAKERS = ("Bull Analyst", "Bear Analyst")
RISK_SPEAKERS = ("Aggressive Analyst", "Conservative Analyst", "Neutral Analyst")

AVATARS = {
    "Bull Analyst": ":material/trending_up:",
    "Bear Analyst": ":material/trending_down:",
    "Research Manager": ":material/gavel:",
    "Trader": ":material/swap_horiz:",
    "Aggressive Analyst": ":material/local_fire_department:",
    "Conservative Analyst": ":material/shield:",
    "Neutral Analyst": ":material/balance:",
    "Portfolio Manager": ":material/account_balance:",
}

_SPLIT = {
    "invest": re.compile(r"(?:^|\n)\s*(Bull Analyst|Bear Analyst)\s*:\s*"),
    "risk": re.compile(r"(?:^|\n)\s*(Aggressive Analyst|Conservative Analyst|Neutral Analyst)\s*:\s*"),
}


@dataclass(frozen=True)
class Turn:
    section: str  # "invest" | "risk"
    kind: str  # "turn" | "verdict" | "proposal"
    speaker: str
    text: str
    round: int | None = None

    @property
    def avatar(self) -> str:
        return AVATARS.get(self.speaker, ":material/chat:")


def split_history(history: str, debate: str) -> list[tuple[str, str]]:
    """[(speaker, text)] from a debate history string where each turn starts 'X Analyst:'."""
    if not history:
        return []
    regex = _SPLIT[debate]
    parts = regex.split(history)
    out: list[tuple[str, str]] = []
    # parts = [preamble, speaker1, text1, speaker2, text2, …]
    for i in range(1, len(parts) - 1, 2):
        text = parts[i + 1].strip()
        if text:
            out.append((parts[i], text))
    return out


def _history_turns(debate: dict[str, Any], kind: str, per_round: int) -> list[Turn]:
    """The speaking turns of one debate's history, numbered by round."""
    return [Turn(kind, "turn", speaker, text, i // per_round + 1)
            for i, (speaker, text) in enumerate(split_history(debate.get("history", ""), kind))]


def turns_from_state(state: dict[str, Any] | None) -> list[Turn]:
    """The whole debate sequence of a finished (or partial) run, in speaking order."""
    state = state or {}
    out: list[Turn] = []
    inv = state.get("investment_debate_state") or {}
    out += _history_turns(inv, "invest", len(INVEST_SPEAKERS))
    verdict = inv.get("judge_decision") or state.get("investment_plan") or ""
    if verdict:
        out.append(Turn("invest", "verdict", "Research Manager", verdict.strip()))
    trader = state.get("trader_investment_plan") or ""
    if trader:
        out.append(Turn("invest", "proposal", "Trader", trader.strip()))
    risk = state.get("risk_debate_state") or {}
    out += _history_turns(risk, "risk", len(RISK_SPEAKERS))
    final = state.get("final_trade_decision") or risk.get("judge_decision") or ""
    if final:
        out.append(Turn("risk", "verdict", "Portfolio Manager", final.strip()))
    return out


def turns_from_events(events: list[Any]) -> list[Turn]:
    """Debate turns as they arrive during a live run (from debate_turn / judge_decision / report events)."""
    out: list[Turn] = []
    for ev in events:
        data = getattr(ev, "data", {}) or {}
        if ev.kind == "debate_turn":
            speaker = str(data.get("speaker") or ev.agent or "")
            if speaker and not speaker.endswith("Analyst") and speaker in ("Bull", "Bear", "Aggressive",
                                                                          "Conservative", "Neutral"):
                speaker = f"{speaker} Analyst"
            text = str(data.get("text") or "")
            text = re.sub(r"^\s*" + re.escape(speaker) + r"\s*:\s*", "", text)
            out.append(Turn(str(data.get("debate") or "invest"), "turn", speaker, text.strip(),
                            data.get("round")))
        elif ev.kind == "judge_decision":
            debate = str(data.get("debate") or "invest")
            speaker = "Research Manager" if debate == "invest" else "Portfolio Manager"
            out.append(Turn(debate, "verdict", speaker, str(data.get("text") or "").strip()))
        elif ev.kind == "report" and data.get("key") == "trader_investment_plan":
            out.append(Turn("invest", "proposal", "Trader", str(data.get("text") or "").strip()))
    return out
