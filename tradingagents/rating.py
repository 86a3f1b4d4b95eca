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


def call_alpha(rating: str | None, alpha: float | None) -> float | None:
    """The alpha of following a call: long the alpha on a bullish tier, short it on a bearish one, 0 on
    Hold (``direction(rating) * alpha``; None when the alpha is not known). One rule for the team's call
    and the portfolio manager's own, so both are scored on the same return."""
    if alpha is None or float(alpha) != float(alpha):
        return None
    d = direction(rating)
    return d * float(alpha) if d else 0.0


# ---------------------------------------------------------------------------- colours
RATING_COLORS: dict[str, str] = dict(zip(RATINGS_5_TIER, ("#1DB954", "#7BD389", "#F2C94C", "#F2994A", "#EB5757"),
                                         strict=True))
"""The one colour of each tier (Buy green … Sell red): mid-tones that read on the app's light and dark pages."""


def _luminance(color: str) -> float:
    def channel(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two ``#rrggbb`` colours (1 to 21)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def darkened(color: str, against: str = "#ffffff", ratio: float = 4.5) -> str:
    """``color`` mixed toward black, in 5 % steps, until ``against`` (white text) reads on it at ``ratio``."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    for step in range(21):
        keep = 1 - step / 20
        out = f"#{round(r * keep):02x}{round(g * keep):02x}{round(b * keep):02x}"
        if contrast(out, against) >= ratio:
            return out
    return "#000000"


RATING_COLORS_ON_WHITE: dict[str, str] = {tier: darkened(c) for tier, c in RATING_COLORS.items()}
"""The same colours darkened until white text reads on them (WCAG AA, 4.5): badges and marks on a white page."""


# ---------------------------------------------------------------------------- a settled call, as agents read it
def settled_header(date: str, ticker: str, rating: str, raw: float, alpha: float, holding: int) -> str:
    """``[2024-01-02 | NVDA | Buy | return +1.2% | alpha -0.4% | 5d]``: how the past context names a
    settled decision. ``parse_settled_headers`` reads exactly this format back (one format, one place)."""
    return f"[{date} | {ticker} | {rating} | return {raw:+.1%} | alpha {alpha:+.1%} | {holding}d]"


_SETTLED_HEADER_RE = re.compile(
    r"\[(\d{4}-\d{2}-\d{2}) \| ([^|\]]+?) \| (" + "|".join(RATINGS_5_TIER) + r") \| "
    r"return ([+-]\d+(?:\.\d+)?)% \| alpha ([+-]\d+(?:\.\d+)?)% \| (\d+)d\]"
)


def parse_settled_headers(text: str | None) -> list[dict]:
    """Every ``settled_header`` in ``text``, in order: {date, ticker, rating, raw, alpha, holding}
    (raw and alpha as fractions, rounded to the 0.1 % the header shows)."""
    return [
        {"date": m.group(1), "ticker": m.group(2).strip(), "rating": m.group(3),
         "raw": round(float(m.group(4)) / 100, 6), "alpha": round(float(m.group(5)) / 100, 6),
         "holding": int(m.group(6))}
        for m in _SETTLED_HEADER_RE.finditer(text or "")
    ]
