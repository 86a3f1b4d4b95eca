"""Rule-based baselines of the TradingAgents paper, on the same prices and days as the team.

Each rule turns the daily OHLCV into the position held after each trading day's close, from the
closes up to and including that day only (it never looks ahead). The positions then go through
the same equity rule as the team's (``positions.equity_curve``: a position decided at a close
earns the next close-to-close return, equity from 1.0 on the first day, the same ``cost_bps``).
Indicators are computed over the range plus ``WARMUP_DAYS`` calendar days of earlier prices (they
were known on the first day); where a rule has not enough history yet its position is flat.
"long" is 1.0; "short" is −1.0 only with ``allow_short`` (else flat, 0.0). The rules, exactly:

* **Buy & Hold** — long on every day of the range (short never).
* **MACD** (12, 26, 9) — ``MACD = EMA12(close) − EMA26(close)``, ``signal = EMA9(MACD)`` (pandas
  ``ewm(span, adjust=False)`` from the first warm-up row); long when MACD > signal, else short.
* **KDJ & RSI** — KDJ (9, 3, 3): ``RSV = 100·(C − L9)/(H9 − L9)`` over the last 9 days' low and
  high (50 when H9 = L9), ``K = ⅔·K' + ⅓·RSV``, ``D = ⅔·D' + ⅓·K`` (both from 50), ``J = 3K − 2D``;
  RSI(14) with Wilder smoothing. Long when K > D and RSI < 70 (momentum up, not overbought);
  short when K < D and RSI > 30; flat otherwise.
* **ZMR** (zero-mean reversion) — ``z = (C − SMA20)/SD20`` (20-day mean and sample standard
  deviation of the close). Enter long when z < −1, hold until z ≥ 0 (the price is back at its
  mean), then flat; enter short when z > 1, hold until z ≤ 0. The state carries from day to day.
* **SMA** crossover — long when SMA20(close) > SMA50(close), else short.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

WARMUP_DAYS = 200
"""Calendar days of prices before the range's first day that the indicators may use."""

BUY_HOLD, MACD, KDJ_RSI, ZMR, SMA = "Buy & Hold", "MACD", "KDJ & RSI", "ZMR", "SMA"
BASELINES = (BUY_HOLD, MACD, KDJ_RSI, ZMR, SMA)


def _ema(s: pd.Series, span: int) -> pd.Series:
    return s.ewm(span=span, adjust=False).mean()


def rsi(close: pd.Series, n: int = 14) -> pd.Series:
    """RSI with Wilder smoothing (NaN for the first n rows)."""
    delta = close.diff()
    gain = delta.clip(lower=0.0).ewm(alpha=1.0 / n, adjust=False, min_periods=n).mean()
    loss = (-delta.clip(upper=0.0)).ewm(alpha=1.0 / n, adjust=False, min_periods=n).mean()
    out = 100.0 - 100.0 / (1.0 + gain / loss)
    return out.where(loss > 0, 100.0).where(gain.notna())


def kdj(df: pd.DataFrame, n: int = 9) -> tuple[pd.Series, pd.Series, pd.Series]:
    low = df["Low"].astype(float).rolling(n, min_periods=n).min()
    high = df["High"].astype(float).rolling(n, min_periods=n).max()
    close = df["Close"].astype(float)
    span = high - low
    rsv = (100.0 * (close - low) / span.where(span > 0)).where(span > 0, 50.0).where(low.notna())
    k_vals, d_vals = [], []
    k = d = 50.0
    for value in rsv:
        if np.isnan(value):
            k_vals.append(np.nan)
            d_vals.append(np.nan)
            continue
        k = 2.0 / 3.0 * k + value / 3.0
        d = 2.0 / 3.0 * d + k / 3.0
        k_vals.append(k)
        d_vals.append(d)
    ks = pd.Series(k_vals, index=df.index)
    ds = pd.Series(d_vals, index=df.index)
    return ks, ds, 3.0 * ks - 2.0 * ds


def _sign(long: pd.Series, short: pd.Series, allow_short: bool) -> pd.Series:
    out = pd.Series(0.0, index=long.index)
    out[long.fillna(False).astype(bool)] = 1.0
    if allow_short:
        out[short.fillna(False).astype(bool)] = -1.0
    return out


def buy_and_hold(df: pd.DataFrame, allow_short: bool = False) -> pd.Series:
    return pd.Series(1.0, index=df.index)


def macd(df: pd.DataFrame, allow_short: bool = False) -> pd.Series:
    close = df["Close"].astype(float)
    line = _ema(close, 12) - _ema(close, 26)
    signal = _ema(line, 9)
    return _sign(line > signal, line < signal, allow_short)


def kdj_rsi(df: pd.DataFrame, allow_short: bool = False) -> pd.Series:
    k, d, _ = kdj(df)
    r = rsi(df["Close"].astype(float))
    ok = k.notna() & d.notna() & r.notna()
    return _sign(ok & (k > d) & (r < 70), ok & (k < d) & (r > 30), allow_short)


def zmr(df: pd.DataFrame, allow_short: bool = False) -> pd.Series:
    close = df["Close"].astype(float)
    mean = close.rolling(20, min_periods=20).mean()
    sd = close.rolling(20, min_periods=20).std(ddof=1)
    z = (close - mean) / sd.where(sd > 0)
    state = 0.0
    out = []
    for value in z:
        if np.isnan(value):
            state = 0.0
        elif state == 0.0:
            if value < -1.0:
                state = 1.0
            elif allow_short and value > 1.0:
                state = -1.0
        elif state > 0 and value >= 0.0:
            state = 0.0
        elif state < 0 and value <= 0.0:
            state = 0.0
        out.append(state)
    return pd.Series(out, index=df.index)


def sma_cross(df: pd.DataFrame, allow_short: bool = False) -> pd.Series:
    close = df["Close"].astype(float)
    fast = close.rolling(20, min_periods=20).mean()
    slow = close.rolling(50, min_periods=50).mean()
    ok = fast.notna() & slow.notna()
    return _sign(ok & (fast > slow), ok & (fast < slow), allow_short)


RULES: dict[str, Callable[[pd.DataFrame, bool], pd.Series]] = {
    BUY_HOLD: buy_and_hold,
    MACD: macd,
    KDJ_RSI: kdj_rsi,
    ZMR: zmr,
    SMA: sma_cross,
}


def baseline_positions(df: pd.DataFrame, days: Sequence[str], allow_short: bool = False) -> dict[str, list[float]]:
    """``{baseline: [position after each day's close]}`` for ``days`` (ISO dates, all in ``df``).

    ``df`` holds the warm-up rows and the range, indexed by date; each rule sees it whole but every
    value at a day depends on rows up to that day only.
    """
    idx = pd.DatetimeIndex(pd.to_datetime(list(days)))
    out: dict[str, list[float]] = {}
    for name, rule in RULES.items():
        series = rule(df, allow_short)
        out[name] = [float(x) for x in series.reindex(idx).fillna(0.0)]
    return out
