"""Technical indicators on a daily OHLCV frame (pandas only, textbook definitions).

Callers pass only the rows up to the analysis date, so no indicator can see a later price. The
exponential averages start at the first row (``adjust=False``); the tools feed ~1.5 years of
warm-up rows, after which the start point no longer matters at two decimals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tradingagents.validation import ValidationError

SUPPORTED_INDICATORS: dict[str, str] = {
    "close_50_sma": "50-day simple moving average of the close: medium-term trend and dynamic support/resistance.",
    "close_200_sma": "200-day simple moving average of the close: long-term trend benchmark (golden/death cross).",
    "close_10_ema": "10-day exponential moving average of the close: responsive short-term trend.",
    "macd": "MACD line: 12-day EMA minus 26-day EMA of the close; momentum via EMA differences.",
    "macds": "MACD signal line: 9-day EMA of the MACD line; crossovers with MACD flag momentum shifts.",
    "macdh": "MACD histogram: MACD line minus its signal line; momentum strength and divergence.",
    "rsi": "14-day Relative Strength Index (Wilder smoothing), 0-100: above 70 overbought, below 30 oversold.",
    "boll": "Bollinger middle band: 20-day simple moving average of the close.",
    "boll_ub": "Bollinger upper band: 20-day SMA + 2 standard deviations (population) of the close.",
    "boll_lb": "Bollinger lower band: 20-day SMA - 2 standard deviations (population) of the close.",
    "atr": "14-day Average True Range (Wilder smoothing): volatility in price units, for stops and sizing.",
    "vwma": "20-day volume-weighted moving average of the close: trend confirmed by volume.",
    "mfi": "14-day Money Flow Index, 0-100, from typical price and volume: above 80 overbought, below 20 oversold.",
}

# How many rows an indicator needs before its first value (used to fetch enough history).
WARMUP_ROWS = {"close_200_sma": 200, "close_50_sma": 50}


def accepted_text() -> str:
    return ", ".join(SUPPORTED_INDICATORS)


def check_indicator(name: object) -> str:
    key = name.strip().lower() if isinstance(name, str) else ""
    if key not in SUPPORTED_INDICATORS:
        shown = repr(name)[:60]
        raise ValidationError(f"Unknown indicator {shown}. Accepted indicators: {accepted_text()}.")
    return key


def _ema(s: pd.Series, span: int) -> pd.Series:
    return s.ewm(span=span, adjust=False).mean()


def _wilder(s: pd.Series, n: int) -> pd.Series:
    return s.ewm(alpha=1.0 / n, adjust=False, min_periods=n).mean()


def compute_indicator(df: pd.DataFrame, name: str) -> pd.Series:
    """The indicator ``name`` for every row of ``df`` (NaN where there is not enough history yet)."""
    key = check_indicator(name)
    close = df["Close"].astype(float)
    if key == "close_50_sma":
        out = close.rolling(50, min_periods=50).mean()
    elif key == "close_200_sma":
        out = close.rolling(200, min_periods=200).mean()
    elif key == "close_10_ema":
        out = _ema(close, 10)
    elif key in ("macd", "macds", "macdh"):
        macd = _ema(close, 12) - _ema(close, 26)
        signal = _ema(macd, 9)
        out = {"macd": macd, "macds": signal, "macdh": macd - signal}[key]
    elif key == "rsi":
        delta = close.diff()
        gain = _wilder(delta.clip(lower=0.0), 14)
        loss = _wilder((-delta).clip(lower=0.0), 14)
        rs = gain / loss
        out = 100.0 - 100.0 / (1.0 + rs)
        out = out.where(loss != 0, 100.0).where(gain.notna())
    elif key in ("boll", "boll_ub", "boll_lb"):
        mid = close.rolling(20, min_periods=20).mean()
        sd = close.rolling(20, min_periods=20).std(ddof=0)
        out = {"boll": mid, "boll_ub": mid + 2 * sd, "boll_lb": mid - 2 * sd}[key]
    elif key == "atr":
        high, low = df["High"].astype(float), df["Low"].astype(float)
        prev = close.shift(1)
        tr = pd.concat([high - low, (high - prev).abs(), (low - prev).abs()], axis=1).max(axis=1)
        tr.iloc[0] = high.iloc[0] - low.iloc[0] if len(tr) else np.nan
        out = _wilder(tr, 14)
    elif key == "vwma":
        vol = df["Volume"].astype(float)
        num = (close * vol).rolling(20, min_periods=20).sum()
        den = vol.rolling(20, min_periods=20).sum()
        out = (num / den).where(den > 0)
    else:  # mfi
        high, low, vol = df["High"].astype(float), df["Low"].astype(float), df["Volume"].astype(float)
        tp = (high + low + close) / 3.0
        flow = tp * vol
        up = tp.diff() > 0
        down = tp.diff() < 0
        pos = flow.where(up, 0.0).rolling(14, min_periods=14).sum()
        neg = flow.where(down, 0.0).rolling(14, min_periods=14).sum()
        pos.iloc[:14] = np.nan  # the first row has no previous typical price
        total = pos + neg
        out = (100.0 * pos / total).where(total > 0, 50.0).where(pos.notna())
    out = out.astype(float)
    out.name = key
    return out
