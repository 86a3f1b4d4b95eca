"""Validation of everything a user types before it reaches a path, a prompt or a provider."""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from tradingagents.errors import InvalidDateError, InvalidTickerError, ValidationError

TICKER_MAX_LEN = 32
_TICKER_RE = re.compile(r"^[A-Z0-9.^=_+\-]+$")
_TYPED_RE = re.compile(r"[A-Za-z0-9.^=_+\-]")  # what may be typed (before upper-casing)
# the earliest analysis date: market data, holding windows and settlement all assume the epoch on
DATE_FLOOR = _dt.date(1970, 1, 1)
# the earliest date of a data range or a stored date (price history can go back further)
HISTORY_FLOOR = _dt.date(1900, 1, 1)
# a results folder / database name never starts with "."; a leading dot is written as "%2E"
# ("%" is not in the ticker alphabet, so no other ticker's name can collide with it)
_LEADING_DOT = "%2E"
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


__all__ = ["DATE_FLOOR", "HISTORY_FLOOR", "InvalidDateError", "InvalidTickerError", "ValidationError", "safe_path_component",
           "ticker_from_path_component", "validate_date", "validate_ticker"]


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
    typed = ticker.strip()
    if not typed:
        raise InvalidTickerError(f"The ticker is empty. {accepted}")
    odd = sorted({c for c in typed if not _TYPED_RE.match(c)})
    if any(ord(c) > 127 for c in odd):
        # upper-casing would turn "ß" into "SS" and "ﬁ" into "FI", and NFKC full-width "ＮＶＤＡ"
        # into NVDA: a different ticker than the one typed, so it is refused, never rewritten
        folded = unicodedata.normalize("NFKC", typed).upper()
        hint = f" If you meant {folded!r}, type it in plain ASCII." if _TICKER_RE.match(folded or "-") else ""
        shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in odd[:5])
        raise InvalidTickerError(
            f"The ticker {_shown(ticker)} contains {shown}: only plain ASCII letters, digits and symbols "
            f"are accepted.{hint} {accepted}"
        )
    text = typed.upper()
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


def validate_date(
    value: object, *, allow_future: bool = False, today: _dt.date | None = None, earliest: _dt.date | None = None
) -> str:
    """Return the date as ``YYYY-MM-DD``; a real date, not in the future unless allowed.

    ``earliest`` defaults to ``DATE_FLOOR`` (1970-01-01) for an analysis date and to
    ``HISTORY_FLOOR`` (1900-01-01) with ``allow_future`` (data ranges, dates already stored).
    """
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
    floor = earliest or (HISTORY_FLOOR if allow_future else DATE_FLOOR)
    if day < floor:
        why = " (market data and settlement start there)" if floor == DATE_FLOOR else ""
        raise InvalidDateError(
            f"The date {day.isoformat()} is before {floor.isoformat()}, the earliest date accepted{why}. "
            "Pick a later date."
        )
    return day.isoformat()


def safe_path_component(ticker: str) -> str:
    """A validated ticker as one safe path component (never '.', '..', '/', NUL); one-to-one.

    Plain tickers are their own name (``BRK-B``, ``7203.T``, ``_.A``); only a leading dot is
    escaped, as ``%2E`` (``.A`` → ``%2EA``), so two tickers never share a results folder.
    """
    text = validate_ticker(ticker)
    # validate_ticker already excludes '/', NUL, '%' and all-dots; keep dots but never a leading one
    return _LEADING_DOT + text[1:] if text.startswith(".") else text


def ticker_from_path_component(name: str) -> str:
    """The ticker a ``safe_path_component`` name stands for (its inverse)."""
    return "." + name[len(_LEADING_DOT):] if name.startswith(_LEADING_DOT) else name


def validate_tickers(value: str | Iterable[Any] | None, *, limit: int, what: str) -> list[str]:
    """Tickers from "NVDA, AAPL msft" or a list: validated, upper-cased, duplicates dropped, order kept.

    At least one, at most ``limit`` (``what`` names the job in the message: "backtest", "batch").
    """
    parts = re.split(r"[\s,;]+", value) if isinstance(value, str) else list(value or [])
    out: list[str] = []
    for part in parts:
        if not isinstance(part, str):
            raise InvalidTickerError(f"Tickers must be text, not {type(part).__name__}.")
        if not part.strip():
            continue
        ticker = validate_ticker(part)
        if ticker not in out:
            out.append(ticker)
    if not out:
        raise InvalidTickerError("Give at least one ticker, for example NVDA or NVDA,AAPL,MSFT.")
    if len(out) > limit:
        raise InvalidTickerError(f"A {what} takes at most {limit} tickers, not {len(out)}: split the list.")
    return out
