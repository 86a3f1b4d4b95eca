"""Checks the graph runs before the first model call, and the session an analysis date maps to.

* ``check_prices(provider, ticker, as_of)`` — can the source serve the ticker's prices up to the
  analysis date? Returns the session date used; raises ``DataUnavailable`` (CLI exit 3) with a
  message that names the source and says what to do.
* ``session_for(provider, ticker, date)`` — ``(session_date, note)``: the last trading session on or
  before ``date`` and, when that is not ``date`` itself, a note such as
  "no session on 2024-05-11 (Saturday); using 2024-05-10".
* ``window_gap(provider, ticker, start, end)`` — why a holding window is not covered by a ticker's
  prices (e.g. a benchmark whose prices stop early), or None when it is.
"""

from __future__ import annotations

import datetime as _dt

import numpy as np
import pandas as pd

from tradingagents.dataflows.provider import (
    DataNotFound,
    DataUnavailable,
    MarketData,
    ProviderUnavailable,
    check_ticker,
    clip_frame,
)
from tradingagents.validation import validate_date

# A last session older than this before the analysis date means the prices stop early.
MAX_SESSION_GAP_DAYS = 10  # a week-long holiday (Golden Week, Lunar New Year) plus a weekend
_LOOK_BACK_DAYS = 14


def _last_session(provider: MarketData, ticker: str, day: str) -> pd.Timestamp | None:
    start = (pd.Timestamp(day) - pd.Timedelta(days=_LOOK_BACK_DAYS)).date().isoformat()
    try:
        df = provider.ohlcv(ticker, start, day)
    except DataUnavailable:
        raise
    except Exception as exc:  # a provider bug or a broken file: still the source's failure
        raise ProviderUnavailable(
            f"{provider.label} failed while reading the prices of {ticker} ({type(exc).__name__}: "
            f"{str(exc)[:200]}); try again, or choose the demo market."
        ) from exc
    df = clip_frame(df, start, day)
    if df.empty or "Close" not in df.columns:
        return None
    closes = pd.to_numeric(df["Close"], errors="coerce").astype("float64")
    closes = closes[np.isfinite(closes.to_numpy()) & (closes.to_numpy() > 0)]
    return None if closes.empty else closes.index[-1]


def note_for(day: str, session: str) -> str | None:
    """ "no session on 2024-05-11 (Saturday); using 2024-05-10", or None when ``session`` is ``day``."""
    if session >= day:
        return None
    weekday = _dt.date.fromisoformat(day).strftime("%A")
    why = weekday if weekday in ("Saturday", "Sunday") else f"{weekday}: a holiday, or no data for that day"
    return f"no session on {day} ({why}); using {session}"


def session_for(provider: MarketData, ticker: str, date: str) -> tuple[str, str | None]:
    """The last trading session of ``ticker`` on or before ``date``, and a note when it is not ``date``.

    Raises ``DataNotFound`` when the source has no session within two weeks before ``date``, and what
    the provider raises when it cannot serve (``ProviderUnavailable``…).
    """
    t = check_ticker(ticker)
    day = validate_date(date)
    last = _last_session(provider, t, day)
    if last is None:
        raise DataNotFound(
            f"{provider.label} has no price of {t} in the {_LOOK_BACK_DAYS} days up to {day}: "
            f"{provider.missing_prices_hint(t, day)}."
        )
    session = last.date().isoformat()
    return session, note_for(day, session)


def check_prices(provider: MarketData, ticker: str, as_of: str) -> str:
    """Before the first model call: the source can serve the ticker's prices up to ``as_of``.

    Returns the session date the analysis uses (``as_of``, or the last session before it). Raises
    ``DataUnavailable`` — ``ProviderUnavailable`` when the source cannot be reached or fails,
    ``DataNotFound`` when it has no (recent enough) prices — whose message names the source and
    what to do, e.g. "Yahoo Finance could not be reached: check the network, or choose the demo
    market…" or "No CSV file NVDA.csv in /data: add one with the header Date,Open,…".
    """
    t = check_ticker(ticker)
    day = validate_date(as_of)
    last = _last_session(provider, t, day)
    if last is None:
        # tell "prices stop early" apart from "no prices at all" with one wider look
        wider = (pd.Timestamp(day) - pd.Timedelta(days=3650)).date().isoformat()
        try:
            older = clip_frame(provider.ohlcv(t, wider, day), wider, day)
        except DataUnavailable:
            older = None
        hint = provider.missing_prices_hint(t, day)
        if older is not None and len(older):
            latest = older.index[-1].date().isoformat()
            raise DataNotFound(
                f"{provider.label} has prices of {t} only up to {latest}, not up to the analysis date {day}: {hint}."
            )
        raise DataNotFound(f"{provider.label} has no price of {t} up to {day}: {hint}.")
    gap = (pd.Timestamp(day) - last).days
    if gap > MAX_SESSION_GAP_DAYS:
        raise DataNotFound(
            f"{provider.label} has prices of {t} only up to {last.date()}, {gap} days before the analysis "
            f"date {day}: {provider.missing_prices_hint(t, day)}."
        )
    return last.date().isoformat()


def window_gap(provider: MarketData, ticker: str, start: str, end: str) -> str | None:
    """Why ``ticker``'s prices do not cover the holding window ``start``..``end`` (both session dates of
    the decision's own ticker), or None when they do: a close on or within a week before ``start``
    and one on or after ``end``'s week, so an alpha covers the same days as the return.

    Example reason: "benchmark prices of ^N225 stop at 2024-05-08, before the window's end 2024-05-17".
    """
    t = check_ticker(ticker)
    s, e = validate_date(start), validate_date(end)
    look = (pd.Timestamp(s) - pd.Timedelta(days=MAX_SESSION_GAP_DAYS)).date().isoformat()
    closes = provider.closes_between(t, look, e)
    if closes.empty:
        return f"{provider.label} has no price of {t} between {look} and {e}"
    first_ok = closes.index[closes.index <= pd.Timestamp(s)]
    if len(first_ok) == 0:
        return f"{provider.label} has no price of {t} on or in the week before the window's start {s}"
    last = closes.index[-1]
    if (pd.Timestamp(e) - last).days > 3:
        return f"prices of {t} from {provider.label} stop at {last.date()}, before the window's end {e}"
    return None


__all__ = ["MAX_SESSION_GAP_DAYS", "check_prices", "note_for", "session_for", "window_gap"]
