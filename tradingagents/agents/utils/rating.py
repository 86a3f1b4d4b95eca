"""The rating scale under the specification's name: re-exported from ``tradingagents.rating``.

The scale lives on the package's ground floor (the memory log, the LLM layer and storage sit below
the agents); the project imports it from there, and this name stays for code written against the
documents.
"""

from tradingagents.rating import (
    BEARISH,
    BULLISH,
    HOLD_BAND,
    RATING_SCORE,
    RATINGS_5_TIER,
    direction,
    normalize_rating,
    parse_rating,
    was_right,
)

__all__ = [
    "BEARISH",
    "BULLISH",
    "HOLD_BAND",
    "RATING_SCORE",
    "RATINGS_5_TIER",
    "direction",
    "normalize_rating",
    "parse_rating",
    "was_right",
]
