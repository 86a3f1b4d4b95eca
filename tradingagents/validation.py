"""Validation of everything a user types before it reaches a path, a prompt or a provider."""

from __future__ import annotations

import datetime as _dt
import re

from tradingagents.errors import InvalidDateError, InvalidTickerError, ValidationError

TICKER_MAX_LEN = 32
_TICKER_RE = re.compile(r"^[A-Z0-9.^=_+\-]+$")
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


__all__ = ["InvalidDateError", "InvalidTickerError", "ValidationError", "validate_date", "validate_ticker",
           "safe_path_component"]


def _shown(value: object, limit: int = 40) -> str:
    """The user's input as quoted in a message: repr, cut short so a huge input stays readable."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def validate_ticker(ticker: object) -> str:
    """Return the ticker upper-cased, or raise InvalidTickerError saying what is accepted."""
    accepted = (
        "Use 1–32 characters: letters, digits and . ^ = _ + - (for example AAPL, BRK-B, "
        "7203.T, ^GSPC, EURUSD=X)."
    )
    if not isinstance(ticker, str):
        raise InvalidTickerError(f"The ticker must be text, not {type(ticker).__name__}. {accepted}")
    text = ticker.strip().upper()
    if not text:
        raise InvalidTickerError(f"The ticker is empty. {accepted}")
    if len(text) > TICKER_MAX_LEN:
        raise InvalidTickerError(
            f"The ticker is {len(text)} characters long; the limit is {TICKER_MAX_LEN}. {accepted}"
        )
    if not _TICKER_RE.match(text):
        bad = sorted({c for c in text if not re.match(r"[A-Z0-9.^=_+\-]", c)})
        shown = ", ".join(repr(c) for c in bad[:5])
        raise InvalidTickerError(f"The ticker {_shown(ticker)} contains {shown}, which is not allowed. {accepted}")
    if set(text) == {"."}:
        raise InvalidTickerError(f"The ticker {_shown(ticker)} is only dots. {accepted}")
    return text


def validate_date(value: object, *, allow_future: bool = False, today: _dt.date | None = None) -> str:
    """Return the date as ``YYYY-MM-DD``; a real date, not in the future unless allowed."""
    accepted = "Use an ISO date YYYY-MM-DD, for example 2024-05-10."
    if isinstance(value, _dt.datetime):
        day = value.date()
    elif isinstance(value, _dt.date):
        day = value
    elif isinstance(value, str):
        text = value.strip()
        if not _DATE_RE.match(text):
            raise InvalidDateError(f"The date {_shown(value)} is not in the form YYYY-MM-DD. {accepted}")
        try:
            day = _dt.date.fromisoformat(text)
        except ValueError:
            raise InvalidDateError(f"The date {_shown(value)} does not exist on the calendar. {accepted}") from None
    else:
        raise InvalidDateError(f"The date must be text or a date, not {type(value).__name__}. {accepted}")
    today = today or _dt.date.today()
    if not allow_future and day > today:
        raise InvalidDateError(
            f"The date {day.isoformat()} is in the future (today is {today.isoformat()}); "
            "an analysis can only use data up to today. Pick today or an earlier date."
        )
    if day.year < 1900:
        raise InvalidDateError(f"The date {day.isoformat()} is before 1900. {accepted}")
    return day.isoformat()


def safe_path_component(ticker: str) -> str:
    """A validated ticker as one safe path component (never '.', '..', '/', NUL)."""
    text = validate_ticker(ticker)
    # validate_ticker already excludes '/', NUL and all-dots; keep dots but never a leading one
    return "_" + text if text.startswith(".") else text
