"""Metrics of one (ticker, strategy), exactly as the TradingAgents paper and the issue define them.

From the daily equity ``e`` (``n = len(e) − 1`` daily returns ``r[t] = e[t]/e[t-1] − 1``):

* ``cr = e[-1]/e[0] − 1`` (cumulative return)
* ``arr = (e[-1]/e[0]) ** (252/n) − 1`` (annualised return)
* ``sharpe = mean(r) / std(r, ddof=1) · √252`` (risk-free rate 0; ``None`` when std is 0 or n < 2)
* ``mdd = max(1 − e/cummax(e))`` (maximum drawdown, a positive fraction; 0 when never below a peak)

Of the decisions (TradingAgents strategies only; ``None`` for the rule-based baselines):

* ``hit_rate`` — the share of decisions with a known alpha that were right by
  ``rating.was_right`` (the one rule), over the config's ``holding_days`` from the decision date;
* ``avg_alpha`` — the mean of those alphas;

and ``turnover`` (``positions.turnover``: Σ|Δposition|, the entry from flat included).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tradingagents.rating import was_right

TRADING_DAYS = 252
META_KEYS = ("bootstrap", "control", "memory_effect")
"""The keys of metrics.json that are not a ticker (or ``PORTFOLIO``)."""


def by_ticker(metrics: dict[str, Any]) -> dict[str, Any]:
    """metrics.json's ``{ticker: {strategy: {…}}}`` part (without ``bootstrap``, ``control`` and ``memory_effect``)."""
    return {k: v for k, v in metrics.items() if k not in META_KEYS}


def equity_returns(equity: Sequence[float]) -> list[float]:
    return [float(equity[i]) / float(equity[i - 1]) - 1.0 for i in range(1, len(equity))]


def cumulative_return(equity: Sequence[float]) -> float:
    return float(equity[-1]) / float(equity[0]) - 1.0


def annualised_return(equity: Sequence[float]) -> float | None:
    n = len(equity) - 1
    if n < 1:
        return None
    return (float(equity[-1]) / float(equity[0])) ** (TRADING_DAYS / n) - 1.0


def sharpe_ratio(equity: Sequence[float]) -> float | None:
    r = equity_returns(equity)
    if len(r) < 2:
        return None
    mean = sum(r) / len(r)
    var = sum((x - mean) ** 2 for x in r) / (len(r) - 1)
    std = math.sqrt(var)
    if std <= 1e-15:
        return None
    return mean / std * math.sqrt(TRADING_DAYS)


def max_drawdown(equity: Sequence[float]) -> float:
    peak = -math.inf
    worst = 0.0
    for x in equity:
        peak = max(peak, float(x))
        worst = max(worst, 1.0 - float(x) / peak)
    return worst


def decision_scores(decisions: Sequence[tuple[str | None, float | None]]) -> tuple[float | None, float | None]:
    """``(hit_rate, avg_alpha)`` of (rating, alpha) pairs; pairs with an unknown alpha are left out."""
    known = [(rating, float(alpha)) for rating, alpha in decisions if alpha is not None and alpha == alpha]
    if not known:
        return None, None
    hits = sum(bool(was_right(rating, alpha)) for rating, alpha in known)
    return hits / len(known), sum(a for _, a in known) / len(known)


def strategy_metrics(
    equity: Sequence[float],
    *,
    turnover: float | None = None,
    decisions: Sequence[tuple[str | None, float | None]] | None = None,
) -> dict[str, Any]:
    """``{cr, arr, sharpe, mdd, hit_rate, avg_alpha, turnover, days, decisions}`` of one curve."""
    if len(equity) < 1:
        raise ValueError("no equity to measure")
    hit, alpha = decision_scores(decisions) if decisions is not None else (None, None)
    return {
        "cr": cumulative_return(equity),
        "arr": annualised_return(equity),
        "sharpe": sharpe_ratio(equity),
        "mdd": max_drawdown(equity),
        "hit_rate": hit,
        "avg_alpha": alpha,
        "turnover": turnover,
        "days": len(equity),
        "decisions": len(decisions) if decisions is not None else None,
    }
