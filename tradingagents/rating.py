"""The five-tier rating scale and a deterministic parser."""

from __future__ import annotations

import re

RATINGS_5_TIER = ("Buy", "Overweight", "Hold", "Underweight", "Sell")
# How bullish each tier is, for charts and scoring: Buy 2 … Sell -2.
RATING_SCORE = {"Buy": 2, "Overweight": 1, "Hold": 0, "Underweight": -1, "Sell": -2}

_SYNONYMS = {
    "strong buy": "Buy",
    "buy": "Buy",
    "accumulate": "Overweight",
    "outperform": "Overweight",
    "overweight": "Overweight",
    "hold": "Hold",
    "neutral": "Hold",
    "underweight": "Underweight",
    "underperform": "Underweight",
    "reduce": "Underweight",
    "strong sell": "Sell",
    "sell": "Sell",
}
_WORDS = sorted(_SYNONYMS, key=len, reverse=True)
_WORD_ALT = "|".join(re.escape(w) for w in _WORDS)
# "**Rating**: X", "Rating - X", "Final Rating: **X**", "rating = X" …
_LABEL_RE = re.compile(
    r"(?:final\s+)?(?:rating|recommendation|decision)\s*\**\s*[:=\-–—]+\s*\**\s*(" + _WORD_ALT + r")\b",
    re.IGNORECASE,
)
_PROPOSAL_RE = re.compile(r"final transaction proposal\s*:\s*\**\s*(" + _WORD_ALT + r")\b", re.IGNORECASE)
_ANY_RE = re.compile(r"\b(" + _WORD_ALT + r")\b", re.IGNORECASE)


def normalize_rating(word: str) -> str | None:
    """Map a word such as 'strong buy' or 'OVERWEIGHT' to a tier, or None."""
    return _SYNONYMS.get(re.sub(r"\s+", " ", word.strip().lower()))


def parse_rating(text: str | None, default: str | None = "Hold") -> str | None:
    """Extract the rating from model text, deterministically.

    An explicit label ("**Rating**: Underweight") beats any earlier prose mention; the last label
    wins if there are several. Without a label, a FINAL TRANSACTION PROPOSAL counts, then the
    first tier word in the text. ``default`` is returned when nothing is found (None lets the
    caller see that).
    """
    if not text:
        return default
    for regex in (_LABEL_RE, _PROPOSAL_RE):
        matches = regex.findall(text)
        if matches:
            return normalize_rating(matches[-1])
    match = _ANY_RE.search(text)
    if match:
        return normalize_rating(match.group(1))
    return default


# ---------------------------------------------------------------------------- direction and "was it right"
BULLISH = frozenset({"Buy", "Overweight"})
BEARISH = frozenset({"Underweight", "Sell"})
HOLD_BAND = 0.02
"""A Hold was right when the alpha stayed within ±2 % (the stock did about what the benchmark did)."""


def direction(rating: str | None) -> int:
    """+1 for a bullish tier, −1 for a bearish one, 0 for Hold (or an unknown rating)."""
    tier = normalize_rating(str(rating or "")) or "Hold"
    return 1 if tier in BULLISH else -1 if tier in BEARISH else 0


def was_right(rating: str | None, alpha: float | None) -> bool | None:
    """The one rule for "was the call right", used by reflections, charts and the offline engine.

    On the exact alpha (never a rounded one): bullish tiers need alpha > 0, bearish tiers
    alpha < 0, Hold |alpha| ≤ ``HOLD_BAND``. None when the alpha is not known (pending).
    """
    if alpha is None:
        return None
    alpha = float(alpha)
    if alpha != alpha:  # NaN: not known
        return None
    d = direction(rating)
    if d > 0:
        return alpha > 0
    if d < 0:
        return alpha < 0
    return abs(alpha) <= HOLD_BAND
