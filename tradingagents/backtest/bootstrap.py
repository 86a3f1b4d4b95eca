"""Confidence intervals and a p-value for a backtest: the stationary bootstrap (numpy only).

A backtest's daily returns are serially dependent (volatility clusters, positions persist), so
resampling single days would understate the uncertainty. The **stationary bootstrap** (Politis &
Romano, 1994) resamples blocks of consecutive days whose lengths are geometric with mean ``L``:

* a resampled series of length ``n`` starts at a uniformly drawn day; each next day is, with
  probability ``1 − 1/L``, the day after the previous one (wrapping from the last day to the
  first), and with probability ``1/L`` a new uniformly drawn day;
* ``L = max(1, round(n ** (1/3)))`` by default (``default_block_length``: 6 for a year of 252
  days, the usual ``n^(1/3)`` rate of a block length for a mean or a variance).

Within a ticker (or the portfolio) every strategy is resampled with the **same** indices (a paired
bootstrap), so their intervals and the difference between them see the same market days.

Per strategy, over ``reps`` resamples (2 000 by default), the 95% intervals are the 2.5th and
97.5th percentiles of the resampled statistic (percentile method):

* ``cr_ci`` of ``cr = Π(1 + r) − 1``;
* ``sharpe_ci`` of ``sharpe = mean(r)/std(r, ddof=1)·√P`` (``P`` bars a year; resamples with a
  zero standard deviation are left out; ``None`` when fewer than half remain);
* ``alpha_ci`` of Jensen's alpha against the benchmark's daily returns ``b``:
  ``alpha = (mean(r) − β·mean(b))·P`` with ``β = cov(r, b)/var(b)`` (ddof 1; ``None`` without a
  benchmark or when ``var(b)`` is 0).

``p_value_vs_buy_hold`` (the team only) is one-sided, H0: the team's mean daily return is not above
Buy & Hold's. With ``d = r_team − r_bh`` and ``d̄`` its mean, the resamples are of the centred
difference ``d − d̄`` (the null made true) and ``p = (1 + #{mean(d*) ≥ d̄}) / (reps + 1)``.

Reproducible: the generator is ``numpy.random.default_rng([seed, crc32(key)])`` for each ticker
key, so the same seed gives the same intervals, whatever the order the tickers are computed in.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

DEFAULT_REPS = 2000
DEFAULT_SEED = 7
LEVEL = 0.95


def default_block_length(n: int) -> int:
    """The mean block length ``max(1, round(n ** (1/3)))``."""
    return max(1, int(round(max(1, n) ** (1.0 / 3.0))))


def rng_for(seed: int, key: str) -> np.random.Generator:
    """The generator of one ticker's (or the portfolio's) resamples: independent of the order."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(key.encode("utf-8"))])


def stationary_indices(n: int, reps: int, block: float, rng: np.random.Generator) -> np.ndarray:
    """``reps × n`` day indices of the stationary bootstrap with mean block length ``block``."""
    if n < 1:
        raise ValueError("no days to resample")
    p_new = 1.0 / max(1.0, float(block))
    idx = np.empty((reps, n), dtype=np.int64)
    idx[:, 0] = rng.integers(0, n, size=reps)
    starts = rng.integers(0, n, size=(reps, n))
    jump = rng.random((reps, n)) < p_new
    for t in range(1, n):
        idx[:, t] = np.where(jump[:, t], starts[:, t], (idx[:, t - 1] + 1) % n)
    return idx


def _sharpe(r: np.ndarray, periods: float) -> np.ndarray:
    """Row-wise Sharpe (NaN where the standard deviation is 0)."""
    sd = r.std(axis=-1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = r.mean(axis=-1) / sd * math.sqrt(periods)
    return np.where(sd > 1e-15, out, np.nan)


def _alpha(r: np.ndarray, b: np.ndarray, periods: float) -> np.ndarray:
    """Row-wise Jensen's alpha, annualised (NaN where the benchmark does not move)."""
    rm = r.mean(axis=-1, keepdims=True)
    bm = b.mean(axis=-1, keepdims=True)
    n = r.shape[-1]
    var_b = ((b - bm) ** 2).sum(axis=-1) / max(1, n - 1)
    cov = ((r - rm) * (b - bm)).sum(axis=-1) / max(1, n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        beta = cov / var_b
    out = (rm[..., 0] - beta * bm[..., 0]) * periods
    return np.where(var_b > 1e-18, out, np.nan)


def jensen_alpha(returns: Sequence[float], bench: Sequence[float] | None, periods: float) -> float | None:
    """The point estimate of the annualised Jensen's alpha (``None`` without a moving benchmark)."""
    if bench is None or len(returns) < 2:
        return None
    value = float(_alpha(np.asarray(returns, float)[None, :], np.asarray(bench, float)[None, :], periods)[0])
    return None if math.isnan(value) else value


def _interval(values: np.ndarray, level: float = LEVEL) -> list[float] | None:
    ok = values[~np.isnan(values)]
    if len(ok) < max(2, len(values) // 2):
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(ok, [tail, 100.0 - tail])
    return [float(lo), float(hi)]


def intervals(
    returns: Mapping[str, Sequence[float]],
    *,
    bench: Sequence[float] | None,
    key: str,
    seed: int = DEFAULT_SEED,
    reps: int = DEFAULT_REPS,
    block: float | None = None,
    periods: float = 252.0,
    team: str | None = None,
    buy_hold: str | None = None,
) -> dict[str, dict[str, Any]]:
    """``{strategy: {cr_ci, sharpe_ci, alpha_ci}}`` (+ ``p_value_vs_buy_hold`` for ``team``).

    ``returns`` are the strategies' daily returns on the same days (``bench`` too, or ``None``);
    every strategy is resampled with the same indices (see the module rules)."""
    lengths = {len(v) for v in returns.values()}
    if bench is not None:
        lengths.add(len(bench))
    if len(lengths) != 1:
        raise ValueError(f"returns of different lengths: {sorted(lengths)}")
    n = lengths.pop()
    out: dict[str, dict[str, Any]] = {}
    if n < 2:
        return {name: {"cr_ci": None, "sharpe_ci": None, "alpha_ci": None} for name in returns}
    blk = float(block) if block else float(default_block_length(n))
    idx = stationary_indices(n, int(reps), blk, rng_for(seed, key))
    b_star = np.asarray(bench, float)[idx] if bench is not None else None
    for name, series in returns.items():
        r = np.asarray(series, float)
        r_star = r[idx]
        cr = np.prod(1.0 + r_star, axis=1) - 1.0
        out[name] = {"cr_ci": _interval(cr), "sharpe_ci": _interval(_sharpe(r_star, periods)),
                     "alpha_ci": _interval(_alpha(r_star, b_star, periods)) if b_star is not None else None}
    if team and buy_hold and team in returns and buy_hold in returns:
        out[team]["p_value_vs_buy_hold"] = p_value_greater(returns[team], returns[buy_hold], idx)
    return out


def p_value_greater(a: Sequence[float], b: Sequence[float], idx: np.ndarray) -> float:
    """One-sided bootstrap p-value of H0 ``mean(a − b) ≤ 0`` from the centred difference."""
    d = np.asarray(a, float) - np.asarray(b, float)
    observed = float(d.mean())
    centred = (d - observed)[idx].mean(axis=1)
    # differences that are exactly zero every day (identical strategies): no evidence at all
    if float(np.abs(d).max()) <= 1e-15:
        return 1.0
    return float((1 + int(np.sum(centred >= observed - 1e-15))) / (len(centred) + 1))
