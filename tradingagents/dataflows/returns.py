"""Realised return and alpha of a decision over its holding window (aligned by date)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import Any

import pandas as pd

from tradingagents.dataflows.interface import MarketDataProvider, clip_frame, today
from tradingagents.default_config import benchmark_for, resolve_config
from tradingagents.validation import ValidationError, validate_date, validate_ticker

# Calendar days of history fetched before the decision date to find "the last close before it".
_LOOK_BEFORE = 14


def _closes(provider: MarketDataProvider, ticker: str, start: str, end: str) -> pd.Series:
    df = provider.ohlcv(ticker, start, end)
    df = clip_frame(df, start, end)
    if df.empty or "Close" not in df.columns:
        return pd.Series(dtype=float)
    s = df["Close"].astype(float).dropna()
    return s[~s.index.duplicated(keep="last")]


def _on_or_before(series: pd.Series, day: pd.Timestamp) -> tuple[pd.Timestamp, float] | None:
    pos = series.index.searchsorted(day, side="right") - 1
    if pos < 0:
        return None
    return series.index[pos], float(series.iloc[pos])


def compute_returns(
    provider: MarketDataProvider,
    ticker: str,
    trade_date: str,
    holding_days: int = 5,
    benchmark: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Raw return and alpha of ``ticker`` from ``trade_date`` over ``holding_days`` trading days.

    start = the close on the decision date, or the last close before it; end = the close
    ``holding_days`` trading days later on the ticker's own calendar; the benchmark's return is
    taken over the same dates (its close on or before each). Returns ``None`` while the window has
    not closed (the end close does not exist yet, as of today) — the entry stays pending.
    Raises ``ValidationError`` for a bad ticker, date or holding period, and whatever the provider
    raises (``ProviderUnavailable``, ``DataNotFound``) when data cannot be read.
    """
    t = validate_ticker(ticker)
    d = validate_date(trade_date)
    if isinstance(holding_days, bool) or not isinstance(holding_days, int) or holding_days < 1:
        raise ValidationError(f"holding_days must be a whole number of trading days ≥ 1, not {holding_days!r}.")
    bench = validate_ticker(benchmark) if benchmark else benchmark_for(t, resolve_config(config))
    day = pd.Timestamp(d)
    now = today().isoformat()
    fetch_start = (day - pd.Timedelta(days=_LOOK_BEFORE)).date().isoformat()
    # enough calendar days to hold `holding_days` trading days even across long holidays
    horizon = (day + pd.Timedelta(days=holding_days * 2 + 14)).date().isoformat()
    fetch_end = min(horizon, now)
    closes = _closes(provider, t, fetch_start, fetch_end)
    start = _on_or_before(closes, day)
    if start is None:
        # nothing in the two weeks before: look further back once
        wider = (day - pd.Timedelta(days=370)).date().isoformat()
        closes = _closes(provider, t, wider, fetch_end)
        start = _on_or_before(closes, day)
        if start is None:
            return None
    start_day, start_close = start
    after = closes.loc[closes.index > start_day]
    if len(after) < holding_days:
        if horizon < now:
            # a very sparse calendar: extend once to today before calling it pending
            closes = _closes(provider, t, fetch_start, now)
            after = closes.loc[closes.index > start_day]
        if len(after) < holding_days:
            return None
    end_day = after.index[holding_days - 1]
    end_close = float(after.iloc[holding_days - 1])
    if end_day.date() > _dt.date.fromisoformat(now):
        return None
    if start_close <= 0:
        return None
    raw = end_close / start_close - 1.0
    bcloses = _closes(provider, bench, (start_day - pd.Timedelta(days=_LOOK_BEFORE)).date().isoformat(),
                      end_day.date().isoformat())
    b0 = _on_or_before(bcloses, start_day)
    b1 = _on_or_before(bcloses, end_day)
    if b0 is None or b1 is None or b0[1] <= 0:
        return None
    bench_raw = b1[1] / b0[1] - 1.0
    return {
        "raw": float(raw),
        "alpha": float(raw - bench_raw),
        "holding": int(holding_days),
        "start_date": start_day.date().isoformat(),
        "end_date": end_day.date().isoformat(),
        "benchmark": bench,
        "start_close": float(start_close),
        "end_close": float(end_close),
        "benchmark_raw": float(bench_raw),
    }
