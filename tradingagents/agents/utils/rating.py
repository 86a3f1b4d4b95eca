"""The rating scale, where the design map places it: re-exported from ``tradingagents.rating``.

The scale lives on the package's ground floor so that the memory log, the LLM layer and storage
(which sit below the agents) can use it without importing the agents.
"""

from tradingagents.rating import (  # noqa: F401
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
