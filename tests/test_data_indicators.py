"""Indicator values checked against numbers computed by hand, and point-in-time use."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tradingagents.dataflows.indicators import SUPPORTED_INDICATORS, compute_indicator
from tradingagents.validation import ValidationError

EXPECTED = {"close_50_sma", "close_200_sma", "close_10_ema", "macd", "macds", "macdh", "rsi", "boll",
            "boll_ub", "boll_lb", "atr", "vwma", "mfi"}


def frame(close, high=None, low=None, volume=None):
    n = len(close)
    idx = pd.bdate_range("2024-01-01", periods=n, name="Date")
    close = pd.Series(close, index=idx, dtype=float)
    return pd.DataFrame({
        "Open": close, "High": close + 1 if high is None else pd.Series(high, index=idx, dtype=float),
        "Low": close - 1 if low is None else pd.Series(low, index=idx, dtype=float), "Close": close,
        "Volume": pd.Series([100] * n if volume is None else volume, index=idx, dtype="int64"),
    })


def test_supported_names_and_descriptions():
    assert set(SUPPORTED_INDICATORS) == EXPECTED
    assert all(len(d) > 20 for d in SUPPORTED_INDICATORS.values())
    with pytest.raises(ValidationError, match="Accepted indicators: close_50_sma"):
        compute_indicator(frame([1, 2, 3]), "stochrsi")


def test_sma_and_boll_by_hand():
    close = list(range(1, 61))  # 1..60
    df = frame(close)
    sma = compute_indicator(df, "close_50_sma")
    assert math.isnan(sma.iloc[48])
    assert sma.iloc[49] == pytest.approx(25.5)  # mean 1..50
    assert sma.iloc[59] == pytest.approx(35.5)  # mean 11..60
    mid = compute_indicator(df, "boll")
    ub = compute_indicator(df, "boll_ub")
    lb = compute_indicator(df, "boll_lb")
    # last 20 closes 41..60: mean 50.5, population sd sqrt((20^2-1)/12)
    sd = math.sqrt((20**2 - 1) / 12)
    assert mid.iloc[-1] == pytest.approx(50.5)
    assert ub.iloc[-1] == pytest.approx(50.5 + 2 * sd)
    assert lb.iloc[-1] == pytest.approx(50.5 - 2 * sd)
    assert math.isnan(compute_indicator(df, "close_200_sma").iloc[-1])


def test_ema_and_macd_by_hand():
    df = frame([10, 11, 12, 11])
    ema = compute_indicator(df, "close_10_ema")
    a = 2 / 11
    e = [10.0]
    for c in (11, 12, 11):
        e.append(a * c + (1 - a) * e[-1])
    assert ema.tolist() == pytest.approx(e)
    a12, a26, a9 = 2 / 13, 2 / 27, 2 / 10
    e12, e26 = [10.0], [10.0]
    for c in (11, 12, 11):
        e12.append(a12 * c + (1 - a12) * e12[-1])
        e26.append(a26 * c + (1 - a26) * e26[-1])
    macd = [x - y for x, y in zip(e12, e26, strict=True)]
    sig = [macd[0]]
    for m in macd[1:]:
        sig.append(a9 * m + (1 - a9) * sig[-1])
    assert compute_indicator(df, "macd").tolist() == pytest.approx(macd)
    assert compute_indicator(df, "macds").tolist() == pytest.approx(sig)
    assert compute_indicator(df, "macdh").tolist() == pytest.approx([m - s for m, s in zip(macd, sig, strict=True)])


def test_rsi_by_hand():
    # 14 changes: seven +1 and seven -1 alternate → first RSI (simple Wilder seed by ewm) from averages
    closes = [100.0]
    for i in range(20):
        closes.append(closes[-1] + (2 if i % 3 == 0 else -1))
    df = frame(closes)
    rsi = compute_indicator(df, "rsi")
    deltas = np.diff(closes)
    gains = np.clip(deltas, 0, None)
    losses = np.clip(-deltas, 0, None)
    ag, al = gains[0], losses[0]
    for g, lo in zip(gains[1:], losses[1:], strict=True):
        ag = ag + (g - ag) / 14
        al = al + (lo - al) / 14
    assert rsi.iloc[-1] == pytest.approx(100 - 100 / (1 + ag / al))
    assert rsi.iloc[:14].isna().all() and not math.isnan(rsi.iloc[14])
    up_only = compute_indicator(frame([float(x) for x in range(1, 30)]), "rsi")
    assert up_only.iloc[-1] == pytest.approx(100.0)


def test_atr_vwma_mfi_by_hand():
    closes = [10.0, 11.0, 10.5, 12.0] + [12.0] * 16
    highs = [c + 0.5 for c in closes]
    lows = [c - 0.5 for c in closes]
    highs[2] = 12.0  # true range uses the previous close
    vols = [100, 200, 300, 400] + [100] * 16
    df = frame(closes, highs, lows, vols)
    tr = [1.0, max(1.0, abs(11.5 - 10), abs(10.5 - 10)), max(12.0 - 10.0, abs(12 - 11), abs(10 - 11)),
          max(1.0, abs(12.5 - 10.5), abs(11.5 - 10.5))] + [1.0] * 16
    atr = compute_indicator(df, "atr")
    v = tr[0]
    for x in tr[1:]:
        v = v + (x - v) / 14
    assert atr.iloc[-1] == pytest.approx(v)
    assert atr.iloc[:13].isna().all()
    vw = compute_indicator(df, "vwma")
    assert vw.iloc[-1] == pytest.approx(sum(c * w for c, w in zip(closes, vols, strict=True)) / sum(vols))
    # MFI over the last 14 changes
    tp = [(h + lo + c) / 3 for h, lo, c in zip(highs, lows, closes, strict=True)]
    pos = neg = 0.0
    for i in range(len(tp) - 14, len(tp)):
        flow = tp[i] * vols[i]
        if tp[i] > tp[i - 1]:
            pos += flow
        elif tp[i] < tp[i - 1]:
            neg += flow
    mfi = compute_indicator(df, "mfi")
    expected = 50.0 if pos + neg == 0 else 100 * pos / (pos + neg)
    assert mfi.iloc[-1] == pytest.approx(expected)
    df2 = frame([10, 11, 12, 11, 13, 12, 14, 13, 15, 14, 16, 15, 17, 16, 18, 17],
                volume=[100, 100, 100, 300, 100, 300, 100, 300, 100, 300, 100, 300, 100, 300, 100, 300])
    tp2 = df2["Close"].to_numpy()  # high/low symmetric around close → typical price = close
    pos = sum(tp2[i] * df2["Volume"].iloc[i] for i in range(2, 16) if tp2[i] > tp2[i - 1])
    neg = sum(tp2[i] * df2["Volume"].iloc[i] for i in range(2, 16) if tp2[i] < tp2[i - 1])
    assert compute_indicator(df2, "mfi").iloc[-1] == pytest.approx(100 * pos / (pos + neg))


def test_indicator_at_a_date_ignores_later_rows():
    rng = np.random.default_rng(1)
    closes = 100 * np.exp(np.cumsum(rng.normal(0, 0.02, 300)))
    df = frame(closes, closes * 1.01, closes * 0.99, rng.integers(100, 1000, 300))
    cut = df.index[250]
    for name in SUPPORTED_INDICATORS:
        full = compute_indicator(df, name).loc[:cut]
        part = compute_indicator(df.loc[:cut], name)
        pd.testing.assert_series_equal(full, part, check_names=False)
