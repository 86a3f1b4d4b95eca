"""From the Portfolio Manager's text to a 5-tier rating, deterministically and with no LLM call."""

from __future__ import annotations

from tradingagents.rating import RATINGS_5_TIER, parse_rating


class SignalProcessor:
    """Kept for the reference API (``process_signal``); the model argument is accepted and unused."""

    def __init__(self, quick_llm=None):
        del quick_llm  # accepted for the reference API, never called: the rating is parsed, not asked for

    def process_signal(self, full_signal: str | None, default: str = "Hold") -> str:
        rating = parse_rating(full_signal, default=default)
        return rating if rating in RATINGS_5_TIER else default


def process_signal(full_signal: str | None, default: str = "Hold") -> str:
    return SignalProcessor().process_signal(full_signal, default=default)


def state_rating(state, default: str = "Hold") -> str:
    """The rating of a final state: its ``final_rating`` (the Portfolio Manager's structured answer).

    Only a state without one (saved before the key existed, or built by hand) falls back to
    parsing ``final_trade_decision``; the text is never parsed over a structured rating.
    """
    rating = (state or {}).get("final_rating")
    if isinstance(rating, str) and rating in RATINGS_5_TIER:
        return rating
    return process_signal((state or {}).get("final_trade_decision"), default=default)
