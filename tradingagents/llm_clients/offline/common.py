"""Shared pieces of the offline engine (the scale comes from ``rating.py``, the reports from ``team.py``): prompt parsing, signals, tone lexicon and the scoring scale.

**Signals.** Every offline analyst report lists its readings as lines of the form::

    - **Trend**: close 110.50 is above close_50_sma 105.20 → bullish

Downstream roles (researchers, managers, trader, risk analysts) read those lines back from the
reports in their prompts — they never see anything else, like an LLM.

**Scoring** (used by the Research Manager, shown in its plan, and re-used by the Portfolio
Manager): each signal counts +1 when bullish, −1 when bearish, 0 when neutral. With ``n`` signals
and net score ``s`` the ratio ``s / n`` maps to the five tiers:

==================  ===========
ratio               tier
==================  ===========
≥ +0.40             Buy
+0.15 … +0.40       Overweight
−0.15 … +0.15       Hold (both ends excluded)
−0.40 … −0.15       Underweight
≤ −0.40             Sell
==================  ===========

No signal at all (every tool failed) gives Hold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tradingagents.llm_presets import OFFLINE_LABEL
from tradingagents.rating import RATINGS_5_TIER, direction
from tradingagents.team import ANALYSTS

FOOTER = f"_Written by the {OFFLINE_LABEL} from the data in this run; no language model was used._"

# The scale is rating.py's; these are views of it, not copies.
TIERS = RATINGS_5_TIER
BULLISH_TIERS = tuple(t for t in TIERS if direction(t) > 0)
BEARISH_TIERS = tuple(t for t in TIERS if direction(t) < 0)
TIER_ACTION = {t: ("BUY" if direction(t) > 0 else "SELL" if direction(t) < 0 else "HOLD") for t in TIERS}
BUY_AT, OVERWEIGHT_AT = 0.40, 0.15  # ratio thresholds (mirrored for the bearish tiers)
TIER_ALT = "|".join(TIERS)
"""A regex alternation of the five tiers (for the grammar of the engine's own lines)."""

_INSTRUMENT_RE = re.compile(r"^Instrument:\s*(\S+)", re.MULTILINE)
_DATE_RE = re.compile(r"^Analysis date:\s*(\d{4}-\d{2}-\d{2})", re.MULTILINE)
_SIGNAL_RE = re.compile(
    r"^- \*\*(?P<name>[^*\n]+)\*\*: (?P<detail>[^\n]+?) → (?P<dir>bullish|bearish|neutral)(?P<rest>[^\n]*)$",
    re.MULTILINE,
)
_RECOMMENDATION_RE = re.compile(r"\*\*Recommendation\*\*\s*:\s*\**\s*(" + TIER_ALT + r")\b")
_PROPOSAL_RE = re.compile(r"FINAL TRANSACTION PROPOSAL\s*:\s*\**\s*(BUY|HOLD|SELL)\b", re.IGNORECASE)

SOURCES = {r.output_key: r.output_key.replace("_", " ") for r in ANALYSTS}  # type: ignore[union-attr]
"""Each analyst report's prompt tag → how a turn names it ("market report", …), from the roster."""

# Tone lexicon for posts and headlines: word stems, matched at word starts.
POSITIVE_WORDS = (
    "beat", "beats", "bullish", "surge", "soar", "jump", "rally", "rallies", "gain", "record", "upgrade",
    "strong", "strength", "growth", "grow", "raise", "raised", "raises", "outperform", "optimis", "positive",
    "rise", "rises", "rising", "rose", "boost", "expand", "profit", "win", "wins", "love", "buying", "buy ",
    "upside", "momentum", "breakout", "exceed", "robust", "accelerat", "higher", "up ", "climb", "recover",
    "partnership", "approval", "launch", "dividend increase", "moon", "tops", "soars", "🚀",
)
NEGATIVE_WORDS = (
    "miss", "misses", "bearish", "plunge", "slump", "drop", "fall", "falls", "fell", "decline", "downgrade",
    "weak", "weakness", "cut", "cuts", "lawsuit", "probe", "investigation", "loss", "losses", "concern",
    "warn", "warning", "tumble", "sell-off", "selloff", "selling", "downside", "pessimis", "negative",
    "lower", "down ", "slow", "slowdown", "recall", "layoff", "risk", "fear", "crash", "dump", "overvalued",
    "bubble", "default", "inflation", "recession", "tariff", "headwind", "slide", "sink", "sank", "bleed",
    "heavy", "breaking",
)


@dataclass(frozen=True)
class Signal:
    name: str
    detail: str
    direction: str  # bullish | bearish | neutral
    rest: str = ""
    source: str = ""

    def line(self) -> str:
        return f"- **{self.name}**: {self.detail} → {self.direction}{self.rest}"

    @property
    def value(self) -> int:
        return {"bullish": 1, "bearish": -1}.get(self.direction, 0)


def instrument_of(text: str) -> str:
    match = _INSTRUMENT_RE.search(text)
    return match.group(1) if match else "the instrument"


def date_of(text: str) -> str:
    match = _DATE_RE.search(text)
    return match.group(1) if match else "the analysis date"


def tag(text: str, name: str) -> str:
    """The content of ``<name>…</name>`` in a prompt ('' when absent or '(none)')."""
    match = re.search(rf"^<{re.escape(name)}>\n(.*?)\n</{re.escape(name)}>\s*$", text, re.DOTALL | re.MULTILINE)
    if not match:
        return ""
    body = match.group(1).strip()
    return "" if body == "(none)" else body


def signals_in(text: str, source: str = "") -> list[Signal]:
    return [
        Signal(m.group("name").strip(), m.group("detail").strip(), m.group("dir"), m.group("rest"), source)
        for m in _SIGNAL_RE.finditer(text or "")
    ]


def signals_from_prompt(text: str) -> list[Signal]:
    """Every signal line of the four reports in a prompt, in report order."""
    out: list[Signal] = []
    for key, label in SOURCES.items():
        out.extend(signals_in(tag(text, key), label))
    return out


@dataclass(frozen=True)
class Score:
    bullish: int
    bearish: int
    neutral: int

    @property
    def n(self) -> int:
        return self.bullish + self.bearish + self.neutral

    @property
    def net(self) -> int:
        return self.bullish - self.bearish

    @property
    def ratio(self) -> float:
        return self.net / self.n if self.n else 0.0

    @property
    def tier(self) -> str:
        return tier_for_ratio(self.ratio)


def score_of(signals: Iterable[Signal]) -> Score:
    items = list(signals)
    return Score(
        bullish=sum(1 for s in items if s.direction == "bullish"),
        bearish=sum(1 for s in items if s.direction == "bearish"),
        neutral=sum(1 for s in items if s.direction == "neutral"),
    )


def tier_for_ratio(ratio: float) -> str:
    if ratio >= BUY_AT:
        return "Buy"
    if ratio >= OVERWEIGHT_AT:
        return "Overweight"
    if ratio <= -BUY_AT:
        return "Sell"
    if ratio <= -OVERWEIGHT_AT:
        return "Underweight"
    return "Hold"


def toward_hold(tier: str) -> str:
    """One notch toward Hold (Buy→Overweight, Sell→Underweight, the rest → Hold)."""
    return {"Buy": "Overweight", "Sell": "Underweight"}.get(tier, "Hold")


direction_of_tier = direction


SCALE_TEXT = (
    "Each analyst signal counts +1 when bullish, −1 when bearish and 0 when neutral; the net score "
    "divided by the number of signals maps to the scale: at least +0.40 Buy, at least +0.15 "
    "Overweight, between −0.15 and +0.15 Hold, at most −0.15 Underweight, at most −0.40 Sell."
)


def recommendation_in(text: str) -> str | None:
    match = _RECOMMENDATION_RE.search(text or "")
    return match.group(1) if match else None


def proposal_in(text: str) -> str | None:
    matches = _PROPOSAL_RE.findall(text or "")
    return matches[-1].upper() if matches else None




def _lexicon(words: tuple[str, ...]) -> re.Pattern[str]:
    # longest first so that e.g. "sell-off" is found before "sell"
    return re.compile(r"(?<![a-z])(" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")")


_POSITIVE_RE = _lexicon(POSITIVE_WORDS)
_NEGATIVE_RE = _lexicon(NEGATIVE_WORDS)


def tone(text: str) -> int:
    """Distinct positive minus distinct negative lexicon words in a text (lower-cased, word starts)."""
    low = f" {text.lower()} "
    return len(set(_POSITIVE_RE.findall(low))) - len(set(_NEGATIVE_RE.findall(low)))


def clip(text: str, limit: int = 180) -> str:
    """``text`` on one line, cut at a word boundary (never mid-number) with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + " …"


def article(word: str) -> str:
    """'a' or 'an' before ``word`` (by its first letter)."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def join_names(names: list[str]) -> str:
    if not names:
        return "none"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def pct(x: float) -> str:
    """The memory log's return format: ``+3.2%``."""
    return f"{x:+.1%}"
