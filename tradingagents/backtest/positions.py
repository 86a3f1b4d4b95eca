"""Ratings → target positions → daily equity (UI-neutral, pure functions on plain lists).

Rules (the issue's, in one place):

* A rating maps to a target position. Default, long-only: Buy 1.0, Overweight 0.5, Hold keeps the
  current position, Underweight 0.0, Sell 0.0. With ``allow_short``: Underweight −0.5, Sell −1.0.
  Before the first decision the position is flat (0.0), so a first Hold stays flat.
* The position decided at a day's close earns the *next* trading day's close-to-close return.
* Equity is marked on every trading day of the range and starts at 1.0 on the first:
  ``e[0] = 1``; ``e[t] = e[t-1] · (1 + p[t-1]·r[t] − c·|p[t-1] − p[t-2]|)`` with
  ``r[t] = close[t]/close[t-1] − 1``, ``p[t]`` the position held after the close of day t
  (``p[-1] = 0``) and ``c = cost_bps / 10 000``. A change of position made at a close is charged
  once, on the next day's mark, in proportion to the size of the change (no cost by default).
* Turnover is ``Σ |p[t] − p[t-1]|`` over the days whose position earns a return (t = 0 … n−2), the
  entry from flat included: a buy-and-hold has turnover 1.0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tradingagents.rating import RATINGS_5_TIER, normalize_rating
from tradingagents.validation import ValidationError

HOLD = None  # "keep the current position"
LONG_ONLY: Mapping[str, float | None] = {"Buy": 1.0, "Overweight": 0.5, "Hold": HOLD, "Underweight": 0.0,
                                         "Sell": 0.0}
WITH_SHORT: Mapping[str, float | None] = {**LONG_ONLY, "Underweight": -0.5, "Sell": -1.0}


def position_map(allow_short: bool = False, overrides: Mapping[str, float | None] | None = None) -> dict:
    """The rating → target position map (``None`` = keep), validated; ``overrides`` replace tiers."""
    out = dict(WITH_SHORT if allow_short else LONG_ONLY)
    for key, value in (overrides or {}).items():
        tier = normalize_rating(str(key))
        if tier is None:
            raise ValidationError(f"Unknown rating {key!r} in the position map; use {', '.join(RATINGS_5_TIER)}.")
        if value is not None:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ValidationError(f"The position for {tier} must be a number or 'keep', not {value!r}.") from None
            if not -1.0 <= value <= 1.0:
                raise ValidationError(f"The position for {tier} must be between -1 and 1, got {value}.")
            if value < 0 and not allow_short:
                raise ValidationError(f"A short position for {tier} needs allow_short (--allow-short).")
        out[tier] = value
    return out


def target_position(rating: str | None, current: float, mapping: Mapping[str, float | None]) -> float:
    """The position after a decision: the map's value for the tier, or ``current`` for keep/unknown."""
    tier = normalize_rating(str(rating or "")) or "Hold"
    value = mapping.get(tier, HOLD)
    return float(current) if value is None else float(value)


def positions_from_decisions(
    days: Sequence[str], decisions: Mapping[str, str], mapping: Mapping[str, float | None]
) -> list[float]:
    """The position held after each day's close: changed on a decision day, carried otherwise."""
    out: list[float] = []
    current = 0.0
    for day in days:
        if day in decisions:
            current = target_position(decisions[day], current, mapping)
        out.append(current)
    return out


def daily_returns(closes: Sequence[float]) -> list[float]:
    """``r[t] = close[t]/close[t-1] − 1`` for t ≥ 1 (one fewer than the closes)."""
    return [float(closes[i]) / float(closes[i - 1]) - 1.0 for i in range(1, len(closes))]


def equity_curve(closes: Sequence[float], positions: Sequence[float], cost_bps: float = 0.0) -> list[float]:
    """Daily equity from 1.0 (see the module rules); ``positions[t]`` is held after day t's close."""
    if len(closes) != len(positions):
        raise ValueError(f"{len(closes)} closes but {len(positions)} positions")
    if not closes:
        return []
    c = float(cost_bps) / 10_000.0
    equity = [1.0]
    prev = 0.0
    for t, r in enumerate(daily_returns(closes), start=1):
        p = float(positions[t - 1])
        equity.append(equity[-1] * (1.0 + p * r - c * abs(p - prev)))
        prev = p
    return equity


def turnover(positions: Sequence[float]) -> float:
    """``Σ |p[t] − p[t-1]|`` over t = 0 … n−2 with p[-1] = 0 (the last day's change earns nothing)."""
    total, prev = 0.0, 0.0
    for p in list(positions)[:-1]:
        total += abs(float(p) - prev)
        prev = float(p)
    return total


# ---------------------------------------------------------------------------------------- the book
WEIGHTINGS = ("equal", "conviction")


def book_exposures(positions: Mapping[str, Sequence[float]], weighting: str) -> dict[str, list[float]]:
    """Each member's exposure (fraction of the book's equity) after each close.

    ``equal``: ``x_i = p_i / N`` (each member has a 1/N sleeve, held at its position);
    ``conviction``: ``x_i = p_i / Σ_j |p_j|`` (the book split in proportion to the members' target
    positions, so a Buy gets twice an Overweight; flat when every member is flat)."""
    if weighting not in WEIGHTINGS:
        raise ValidationError(f"portfolio must be one of {', '.join(WEIGHTINGS)}, not {weighting!r}.")
    names = list(positions)
    n_days = {len(v) for v in positions.values()}
    if len(n_days) != 1:
        raise ValueError("members' positions on different days")
    days = n_days.pop()
    out: dict[str, list[float]] = {k: [] for k in names}
    for t in range(days):
        ps_t = [float(positions[k][t]) for k in names]
        if weighting == "equal":
            xs = [p / len(names) for p in ps_t]
        else:
            gross = sum(abs(p) for p in ps_t)
            xs = [p / gross if gross > 0 else 0.0 for p in ps_t]
        for k, x in zip(names, xs, strict=True):
            out[k].append(x)
    return out


def book_equity(returns: Mapping[str, Sequence[float]], exposures: Mapping[str, Sequence[float]],
                cost_bps: float = 0.0) -> list[float]:
    """The book's daily equity from 1.0: ``e[t] = e[t-1]·(1 + Σ_i x_i[t-1]·r_i[t] − c·Σ_i |x_i[t-1] − x_i[t-2]|)``.

    ``returns[i]`` are member i's close-to-close returns on the book's days (one fewer than the
    days), ``exposures[i][t]`` its exposure after day t's close (``x[-1] = 0``); with one member of
    exposure ``p`` this is ``equity_curve`` exactly."""
    names = list(exposures)
    if not names:
        return []
    days = len(exposures[names[0]])
    c = float(cost_bps) / 10_000.0
    equity = [1.0]
    prev = dict.fromkeys(names, 0.0)
    for t in range(1, days):
        gain = sum(float(exposures[k][t - 1]) * float(returns[k][t - 1]) for k in names)
        cost = c * sum(abs(float(exposures[k][t - 1]) - prev[k]) for k in names)
        equity.append(equity[-1] * (1.0 + gain - cost))
        prev = {k: float(exposures[k][t - 1]) for k in names}
    return equity


def book_turnover(exposures: Mapping[str, Sequence[float]]) -> float:
    """``Σ_i turnover(x_i)``: the book's total change of exposure (entry from flat included)."""
    return sum(turnover(x) for x in exposures.values())
