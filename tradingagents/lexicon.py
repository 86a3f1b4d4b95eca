"""The word lexicon that reads the tone of a post or a headline: one place for it, with no imports of the
engine, so the data tools (``dataflows.tools``: the tone tally under the headlines), the demo market (a
translated headline's tone) and the offline engine (its sentiment and news signals) read tone alike, and a
data tool does not load the offline engine to count words."""

from __future__ import annotations

import re

# word stems, matched at word starts
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


def _lexicon(words: tuple[str, ...]) -> re.Pattern[str]:
    # longest first so that e.g. "sell-off" is found before "sell"
    return re.compile(r"(?<![a-z])(" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + ")")


_POSITIVE_RE = _lexicon(POSITIVE_WORDS)
_NEGATIVE_RE = _lexicon(NEGATIVE_WORDS)


def tone(text: str) -> int:
    """Distinct positive minus distinct negative lexicon words in a text (lower-cased, word starts)."""
    low = f" {text.lower()} "
    return len(set(_POSITIVE_RE.findall(low))) - len(set(_NEGATIVE_RE.findall(low)))
