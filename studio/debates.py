"""The debate turns of a run, for display, from what the engine recorded (never parsed out of text).

UI-neutral: the Debates page renders the ``Turn`` list as chat bubbles, and replay steps through it.
A live run's turns are its ``debate_turn`` / ``judge_decision`` events; a saved run's are its
``meta["debate_turns"]`` (the same records) plus the judges' and the trader's saved outputs. A run
saved before the engine kept per-turn records falls back to each speaker's own saved history,
one bubble per speaker. Speakers, judges and output keys come from the roster.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tradingagents import team
from tradingagents.i18n import N_, Translator, translator

EN = translator("en")

AVATARS = {
    "bull": ":material/trending_up:",
    "bear": ":material/trending_down:",
    "research_manager": ":material/gavel:",
    "trader": ":material/swap_horiz:",
    "aggressive": ":material/local_fire_department:",
    "conservative": ":material/shield:",
    "neutral": ":material/balance:",
    "portfolio_manager": ":material/account_balance:",
}
TRADER = team.ROLES["trader"]
DEBATE_STATE_KEYS = {"invest": "investment_debate_state", "risk": "risk_debate_state"}


@dataclass(frozen=True)
class Turn:
    debate: str  # "invest" | "risk"
    kind: str  # "turn" | "history" (every turn of one speaker, old saved runs) | "verdict" | "proposal"
    role: str  # the roster key of who speaks
    text: str
    round: int | None = None

    @property
    def speaker(self) -> str:
        """The name the UI shows: the role's node name ("Bull Researcher", "Neutral Analyst", …)."""
        return team.ROLES[self.role].node

    def speaker_in(self, t: Translator = EN) -> str:
        """The speaker's name in ``t``'s language (the roster's names: core.po's "role" context)."""
        return role_name(self.role, t=t)

    @property
    def avatar(self) -> str:
        return AVATARS.get(self.role, ":material/chat:")


def role_name(role: str, *, t: Translator = EN) -> str:
    """A roster key's node name ("Bull Researcher") in ``t``'s language."""
    return t.p("role", team.ROLES[role].node)


DEBATE_TITLES = {"invest": N_("Investment debate"), "risk": N_("Risk debate")}
"""Each debate's title (the roster's ``team.DEBATE_TITLES``, marked for the catalogue)."""


def debate_title(debate: str, *, t: Translator = EN) -> str:
    """"Investment debate — Bull · Bear", "Risk debate — Aggressive · Conservative · Neutral" in ``t``'s language."""
    title = t(DEBATE_TITLES.get(debate, team.DEBATE_TITLES[debate]))
    return f"{title} — {' · '.join(t.p('speaker', r.speaker) for r in team.speakers(debate))}"


def _turn_of(record: Mapping[str, Any]) -> Turn | None:
    """A Turn from one debate-turn record {debate, role, speaker, round, turn, text}."""
    debate = str(record.get("debate") or "")
    if debate not in team.DEBATES:
        return None
    role = team.ROLES.get(str(record.get("role") or ""))
    if role is None or role.debate != debate:
        role = team.speaker_role(debate, str(record.get("speaker") or ""))
    if role is None:
        return None
    text = str(record.get("text") or "").strip()
    rnd = record.get("round")
    return Turn(debate, "turn", role.key, text, int(rnd) if rnd is not None else None)


def _turn_event(data: Mapping[str, Any]) -> Turn | None:
    return _turn_of(data)


def _judge_event(data: Mapping[str, Any]) -> Turn | None:
    if data.get("debate") not in team.DEBATES:
        return None
    return Turn(data["debate"], "verdict", team.judge(data["debate"]).key, str(data.get("text") or "").strip())


def _report_event(data: Mapping[str, Any]) -> Turn | None:
    if data.get("key") != TRADER.output_key:
        return None
    return Turn("invest", "proposal", TRADER.key, str(data.get("text") or "").strip())


TURN_OF_EVENT: dict[str, Callable[[Mapping[str, Any]], Turn | None]] = {
    "debate_turn": _turn_event,
    "judge_decision": _judge_event,
    "report": _report_event,  # the trader's proposal, between the two debates
}
"""The event kinds the Debates page draws, each with what it makes of the event's data (or None)."""


def turns_from_events(events: Iterable[Any]) -> list[Turn]:
    """Debate turns as they arrive during a live run, in arrival order."""
    out: list[Turn] = []
    for ev in events:
        handler = TURN_OF_EVENT.get(ev.kind)
        turn = handler(getattr(ev, "data", None) or {}) if handler is not None else None
        if turn is not None:
            out.append(turn)
    return out


def _speaker_histories(debate_state: Mapping[str, Any], debate: str) -> list[Turn]:
    """Old saved runs: each speaker's own saved history (``<key>_history``), one bubble each."""
    out = []
    for role in team.speakers(debate):
        text = str(debate_state.get(f"{role.key}_history") or "").strip()
        if text:
            out.append(Turn(debate, "history", role.key, text))
    return out


def turns_from_saved(state: Mapping[str, Any] | None, meta: Mapping[str, Any] | None) -> list[Turn]:
    """The whole debate sequence of a saved (or finished) run, in speaking order."""
    state, meta = state or {}, meta or {}
    records = meta.get("debate_turns")
    recorded = [t for t in (_turn_of(r) for r in records or [] if isinstance(r, Mapping)) if t is not None]
    out: list[Turn] = []
    for debate in team.DEBATES:
        debate_state = state.get(DEBATE_STATE_KEYS[debate]) or {}
        if isinstance(records, list):
            out += [t for t in recorded if t.debate == debate]
        else:
            out += _speaker_histories(debate_state, debate)
        judge = team.judge(debate)
        verdict = str(debate_state.get("judge_decision") or state.get(judge.output_key) or "").strip()
        if verdict:
            out.append(Turn(debate, "verdict", judge.key, verdict))
        if debate == "invest":  # the trader proposes between the two debates
            proposal = str(state.get(TRADER.output_key) or "").strip()
            if proposal:
                out.append(Turn(debate, "proposal", TRADER.key, proposal))
    return out


# ---------------------------------------------------------------------------------------------
# which of the opponent's points a turn answers (a deterministic word-overlap match)
# ---------------------------------------------------------------------------------------------
ANSWERS_CAPTION = N_(
    "“Answers” shows the opponent's point this turn quotes, or else the sentence of the opponent's previous "
    "turn that has the most words in common with it."
)
_WORD = re.compile(r"[^\W\d_]{3,}")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
STOPWORDS = frozenset(
    "the and but for are was were this that these those with from into onto than then their there they them "
    "its it's our ours you your his her has have had not nor all any can could would should will shall may "
    "might must been being also only very more most less such each which what when where who whom why how "
    "over under about above below again once here just one two per via yet still because while whereas "
    "round point main this is my me we us i am on in of to at as by or an be do so if no".split()
)


def terms(text: str) -> set[str]:
    """The content words of ``text``: letters only (no numbers), lower case, without stop-words."""
    return {w.lower() for w in _WORD.findall(text)} - STOPWORDS


def sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE.split(text or ""):
        clean = re.sub(r"\*\*|__|`|^[#>\s]+", "", part).strip()
        if len(terms(clean)) >= 2:
            out.append(clean)
    return out


_QUOTED = re.compile(r"[“\"]([^”\"\n]{12,})[”\"]")


def answered_point(text: str, opponent_text: str) -> tuple[str, int] | None:
    """The opponent's sentence ``text`` answers, and how many terms they share.

    A sentence of the opponent that ``text`` quotes (“…”) wins: that is the point it answers. Otherwise
    the sentence sharing the most terms with ``text`` (ties: the earliest)."""
    mine = terms(text)
    opponent_plain = re.sub(r"\*\*|__|`", "", opponent_text or "")
    for quoted in _QUOTED.findall(text or ""):
        core = re.sub(r"\*\*|__|`", "", quoted).strip().rstrip(".")
        if core.split(": ", 1)[-1] in opponent_plain:
            return core, len(terms(core))
    best: tuple[str, int] | None = None
    for sentence in sentences(opponent_text):
        shared = len(mine & terms(sentence))
        if shared >= 2 and (best is None or shared > best[1]):
            best = (sentence, shared)
    return best


def rebuttals(turns: list[Turn]) -> dict[int, tuple[str, str]]:
    """For each debate turn (by index): (opponent role, the opponent sentence it answers).

    The opponent is the latest earlier turn of the same debate by another speaker.
    """
    out: dict[int, tuple[str, str]] = {}
    for i, turn in enumerate(turns):
        if turn.kind not in ("turn", "history"):
            continue
        for prev in reversed(turns[:i]):
            if prev.debate == turn.debate and prev.kind in ("turn", "history") and prev.role != turn.role:
                match = answered_point(turn.text, prev.text)
                if match is not None:
                    out[i] = (prev.role, match[0])
                break
    return out


def replay_step(step: int, total: int, action: str) -> int:
    """The replay position after ``action`` (start, back, next, end, tick), always in 1..total."""
    if total <= 0:
        return 0
    step = min(max(step, 1), total)
    return {"start": 1, "back": max(1, step - 1), "next": min(total, step + 1), "tick": min(total, step + 1),
            "end": total}.get(action, step)
