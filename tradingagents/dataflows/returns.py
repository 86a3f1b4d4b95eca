"""Realised return and alpha of a decision over its holding window (aligned by date), and the
parser of returns a user gives by hand (``reflect_and_remember("+2.4%")``)."""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from tradingagents.config import benchmark_for, resolve_config
from tradingagents.dataflows.provider import MarketData, clip_frame, today
from tradingagents.validation import ValidationError, validate_date

# Calendar days of history fetched before the decision date to find "the last close before it".
_LOOK_BEFORE = 14

_PERCENT_RE = re.compile(r"^([+-]?)\s*(\d+(?:\.\d*)?|\.\d+)\s*%$")
_RETURN_KEYS = ("raw", "alpha", "holding", "end_date")


def parse_return(value: object, what: str = "return") -> float:
    """A return as a fraction: a number (0.024) or a percent string ("+2.4%", "-0.8 %") → 0.024, -0.008.

    Anything else (a bare string such as "2.4", a bool, NaN, infinity) raises ValidationError that
    says which forms are accepted.
    """
    accepted = f"Give {what} as a fraction (0.024) or a percent string (\"+2.4%\", \"-0.8 %\")."
    if isinstance(value, bool) or value is None:
        raise ValidationError(f"{what} is {value!r}, not a return. {accepted}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().replace("\u2212", "-")  # a typographic minus counts as one
        match = _PERCENT_RE.match(text)
        if not match:
            shown = repr(value) if len(value) <= 40 else repr(value[:39] + "…")
            raise ValidationError(f"{what} {shown} is not a return. {accepted}")
        number = float(match.group(2)) / 100.0 * (-1.0 if match.group(1) == "-" else 1.0)
    else:
        raise ValidationError(f"{what} must be a number or a percent string, not {type(value).__name__}. {accepted}")
    if not math.isfinite(number):
        raise ValidationError(f"{what} is {number}, not a finite return. {accepted}")
    return number


def parse_returns(returns: object, *, holding_days: int) -> dict[str, Any]:
    """``{raw, alpha, holding, end_date}`` from a number, a percent string or a dict {raw, alpha?, holding?,
    end_date?}. Without an alpha the raw return stands in for it; ``end_date`` is None when not given."""
    if isinstance(returns, Mapping):
        unknown = [str(k) for k in returns if k not in _RETURN_KEYS]
        if unknown:
            raise ValidationError(
                f"Unknown key(s) in the returns: {', '.join(unknown)}. Use raw, and optionally alpha, holding "
                "(trading days) and end_date (YYYY-MM-DD)."
            )
        if "raw" not in returns:
            raise ValidationError("The returns need a 'raw' return, e.g. {'raw': 0.024, 'alpha': 0.011}.")
        raw = parse_return(returns["raw"], "the raw return")
        alpha = parse_return(returns["alpha"], "the alpha") if returns.get("alpha") is not None else raw
        holding = returns.get("holding", holding_days)
        if isinstance(holding, bool) or not isinstance(holding, int) or holding < 1:
            raise ValidationError(f"holding must be a whole number of trading days ≥ 1, not {holding!r}.")
        end_date = validate_date(returns["end_date"], allow_future=True) if returns.get("end_date") else None
    else:
        raw = alpha = parse_return(returns, "the return")
        holding, end_date = int(holding_days), None
    if raw < -1.0:
        raise ValidationError(f"A raw return of {raw:+.1%} is impossible (a position cannot lose more than all of it).")
    return {"raw": raw, "alpha": alpha, "holding": int(holding), "end_date": end_date}


def _closes(provider: MarketData, ticker: str, start: str, end: str) -> pd.Series:
    """The valid closes; ``attrs["dropped_days"]``: days whose row the source had but could not use (a
    bad close here, or a row the provider dropped), so a window never silently steps over one."""
    df = provider.ohlcv(ticker, start, end)
    dropped = set(df.attrs.get("dropped_days") or [])
    df = clip_frame(df, start, end)
    if df.empty or "Close" not in df.columns:
        out = pd.Series(dtype=float)
        out.attrs["dropped_days"] = sorted(dropped)
        return out
    s = pd.to_numeric(df["Close"], errors="coerce").astype(float)
    valid = s.map(math.isfinite) & (s > 0)  # an inf, NaN or non-positive close is no price
    dropped |= {d.date().isoformat() for d in s.index[~valid]}
    s = s[valid]
    s = s[~s.index.duplicated(keep="last")]
    s.attrs["dropped_days"] = sorted(dropped - {d.date().isoformat() for d in s.index})
    return s


def _on_or_before(series: pd.Series, day: pd.Timestamp) -> tuple[pd.Timestamp, float] | None:
    pos = series.index.searchsorted(day, side="right") - 1
    if pos < 0:
        return None
    return series.index[pos], float(series.iloc[pos])


def compute_returns(
    provider: MarketData,
    ticker: str,
    trade_date: str,
    holding_days: int = 5,
    benchmark: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The outcome of ``returns_or_reason``, or None while the entry stays pending."""
    return returns_or_reason(provider, ticker, trade_date, holding_days, benchmark, config)[0]


def returns_or_reason(
    provider: MarketData,
    ticker: str,
    trade_date: str,
    holding_days: int = 5,
    benchmark: str | None = None,
    config: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """Raw return and alpha of ``ticker`` from ``trade_date`` over ``holding_days`` trading days.

    start = the close on the decision date, or the last close before it; end = the close
    ``holding_days`` trading days later on the ticker's own calendar; the benchmark's return is
    taken over the same dates (its close on or before each). Returns ``(outcome, "")``, or
    ``(None, reason)`` while the entry stays pending — "window closes on YYYY-MM-DD" when the end
    close does not exist yet (as of today), or what is missing.
    ``ticker`` and ``trade_date`` arrive validated (propagate's input, the memory log's parsed
    entries); they are not validated again here. Raises ``ValidationError`` for a bad holding
    period, and whatever the provider raises (``ProviderUnavailable``, ``DataNotFound``) when data
    cannot be read.
    """
    t, d = str(ticker), str(trade_date)
    if isinstance(holding_days, bool) or not isinstance(holding_days, int) or holding_days < 1:
        raise ValidationError(f"holding_days must be a whole number of trading days ≥ 1, not {holding_days!r}.")
    bench = str(benchmark).strip().upper() if benchmark else benchmark_for(t, resolve_config(config))
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
            return None, f"no close of {t} on or before {d} in the data source"
    start_day, start_close = start
    after = closes.loc[closes.index > start_day]
    if len(after) < holding_days:
        if horizon < now:
            # a very sparse calendar: extend once to today before calling it pending
            closes = _closes(provider, t, fetch_start, now)
            after = closes.loc[closes.index > start_day]
        if len(after) < holding_days:
            expected = (start_day + pd.offsets.BDay(holding_days)).date()
            if expected.isoformat() > now:
                return None, f"window closes on {expected.isoformat()}"
            return None, (f"only {len(after)} of {holding_days} trading days of {t} after "
                          f"{start_day.date().isoformat()} are in the data source so far")
    end_day = after.index[holding_days - 1]
    end_close = float(after.iloc[holding_days - 1])
    skipped = [d for d in closes.attrs.get("dropped_days", [])
               if start_day.date().isoformat() < d <= end_day.date().isoformat()]
    note = None
    if skipped:  # the window was counted past a dropped row: it ends later than the calendar says; say so
        more = f" and {len(skipped) - 1} more" if len(skipped) > 1 else ""
        note = (f"the price row of {t} on {skipped[0]}{more} was dropped by the data source (its close or "
                f"volume is not usable), so the {holding_days}-day window from {start_day.date().isoformat()} "
                f"was counted past it and ends on {end_day.date().isoformat()}; fix that row for the exact window")
    if end_day.date() > _dt.date.fromisoformat(now):
        return None, f"window closes on {end_day.date().isoformat()}"
    if start_close <= 0:
        return None, f"the close of {t} on {start_day.date().isoformat()} is not a positive price"
    raw = end_close / start_close - 1.0
    from tradingagents.dataflows.session import window_gap
    from tradingagents.errors import DataUnavailable

    try:
        gap = window_gap(provider, bench, start_day.date().isoformat(), end_day.date().isoformat())
    except DataUnavailable as exc:  # the benchmark's own data is missing: name it as the benchmark's
        return None, f"benchmark {bench} has no prices for {start_day.date()}..{end_day.date()}: {exc}"
    if gap is not None:  # the alpha must cover the same days as the return
        return None, f"benchmark {bench}: {gap}"
    bcloses = _closes(provider, bench, (start_day - pd.Timedelta(days=_LOOK_BEFORE)).date().isoformat(),
                      end_day.date().isoformat())
    b0 = _on_or_before(bcloses, start_day)
    b1 = _on_or_before(bcloses, end_day)
    if b0 is None or b1 is None or b0[1] <= 0:
        return None, (f"no close of the benchmark {bench} for {start_day.date().isoformat()} to "
                      f"{end_day.date().isoformat()} in the data source")
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
        "note": note,
    }, ""
