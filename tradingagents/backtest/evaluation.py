"""The backtest's evaluation beyond the paper's point figures: is the edge real?

From the series that ``equity.csv`` holds (so every figure can be recomputed from the saved files):

* ``score`` — each strategy's Jensen's alpha, its 95% stationary-bootstrap intervals (``cr_ci``,
  ``sharpe_ci``, ``alpha_ci``) and the team's one-sided ``p_value_vs_buy_hold`` (``bootstrap``);
* ``book`` — the watchlist as one portfolio (``PORTFOLIO``), equal or conviction weights
  (``positions.book_*``), its curves, metrics and the members' weights;
* ``control`` — the team and Buy & Hold on the no-edge random-walk worlds (``worlds``): the
  distribution of the team's excess cumulative return, and where the real result falls in it.

The rules and formulas are in docs/BACKTEST.md. ``bt`` is the running ``engine.Backtest`` (its spec, plans,
folder and ``world_config``), passed in: this module is below the engine and never imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tradingagents.backtest import baselines as bl
from tradingagents.backtest import bootstrap as bs
from tradingagents.backtest import metrics as mt
from tradingagents.backtest import positions as ps

TEAM = "TradingAgents"
BENCHMARK_PREFIX = "Benchmark"
PORTFOLIO = "PORTFOLIO"


def score(bt: Any, key: str, curves: Mapping[str, list[float]], metrics: dict[str, Any], out: dict[str, Any]) -> None:
    """Jensen's alpha, the bootstrap intervals and the team's p-value (``bootstrap``) into ``metrics``."""
    returns = {name: mt.equity_returns(curve) for name, curve in curves.items()}
    bench_name = next((n for n in curves if n.startswith(BENCHMARK_PREFIX)), None)
    bench = returns[bench_name] if bench_name else None
    ci = bs.intervals(returns, bench=bench, key=key, seed=bt.spec.seed, team=TEAM, buy_hold=bl.BUY_HOLD)
    out["blocks"][key] = bs.default_block_length(len(next(iter(returns.values()))))
    for name, m in metrics.items():
        m["alpha"] = bs.jensen_alpha(returns[name], bench, mt.TRADING_DAYS)
        m.update(ci[name])


def book(bt: Any, closes: Mapping[str, Sequence[float]], positions: Mapping[str, Mapping[str, Sequence[float]]],
         scored: Mapping[str, Sequence[tuple[str | None, float | None]]] | None = None, *,
         with_benchmark: bool = False, strategies: Sequence[str] | None = None):
    """The watchlist as one book: ``(days, curves, metrics, weight rows)`` (see positions.book_*).

    The book's days are the union of the members' days; a member's close is carried over a day
    it did not trade (a return of 0) and its position likewise (flat before its first day)."""
    days = sorted({d for p in bt.plans.values() for d in p.days})
    members = list(bt.plans)
    n = len(members)
    member_returns: dict[str, list[float]] = {}
    for t in members:
        series = pd.Series(list(closes[t]), index=bt.plans[t].days).reindex(days).ffill().bfill()
        member_returns[t] = ps.daily_returns(list(series))
    names = list(strategies) if strategies is not None else list(next(iter(positions.values())))
    cost = bt.spec.cost_bps
    curves: dict[str, list[float]] = {}
    metrics: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    for name in names:
        held = {t: list(pd.Series(list(positions[t][name]), index=bt.plans[t].days).reindex(days).ffill()
                        .fillna(0.0)) for t in members}
        exposures = ps.book_exposures(held, bt.spec.portfolio or "equal")
        curves[name] = ps.book_equity(member_returns, exposures, cost)
        decisions = scored.get(name) if scored is not None and name in scored else None
        metrics[name] = {**mt.strategy_metrics(curves[name], turnover=ps.book_turnover(exposures),
                                               decisions=decisions), "cost_bps": cost}
        if with_benchmark:
            for t in members:
                for i, d in enumerate(days):
                    x = exposures[t][i]
                    weight = 1.0 / n if bt.spec.portfolio == "equal" else abs(x)
                    rows.append({"date": d, "ticker": t, "strategy": name, "position": held[t][i],
                                 "weight": weight, "exposure": x})
    if with_benchmark and all(p.benchmark_closes is not None for p in bt.plans.values()):
        benches = sorted({p.benchmark for p in bt.plans.values()})
        bench_returns = {}
        for t in members:
            series = pd.Series(bt.plans[t].benchmark_closes, index=bt.plans[t].days).reindex(days).ffill().bfill()
            bench_returns[t] = ps.daily_returns(list(series))
        name = f"{BENCHMARK_PREFIX} ({' + '.join(benches)})"
        curves[name] = ps.book_equity(bench_returns, {t: [1.0 / n] * len(days) for t in members}, 0.0)
        metrics[name] = {**mt.strategy_metrics(curves[name], turnover=1.0), "cost_bps": 0.0}
    return days, curves, metrics, rows


def control(bt: Any, real: Mapping[str, Any]) -> dict[str, Any]:
    """The team and Buy & Hold on each no-edge world: per ticker (and the book) the distribution of
    the team's excess cumulative return over Buy & Hold, and where the real result falls in it."""
    from tradingagents.dataflows import worlds as wd
    from tradingagents.dataflows.interface import get_provider

    cost = bt.spec.cost_bps
    by_key: dict[str, list[dict[str, Any]]] = {}
    for k, variant in enumerate(bt.spec.control_variants, start=1):
        provider = get_provider(bt.world_config(variant))
        closes: dict[str, list[float]] = {}
        held: dict[str, dict[str, list[float]]] = {}
        for ticker, plan in bt.plans.items():
            frame = provider.ohlcv(ticker, plan.days[0], plan.days[-1])
            close = frame["Close"].astype(float)
            close = close[~close.index.duplicated(keep="last")]
            wclose = [float(x) for x in close.reindex(pd.DatetimeIndex(pd.to_datetime(plan.days))).ffill().bfill()]
            _decided, pos = bt.finished_positions(variant, ticker)
            closes[ticker] = wclose
            held[ticker] = {TEAM: pos, bl.BUY_HOLD: [1.0] * len(plan.days)}
            by_key.setdefault(ticker, []).append(
                _world_row(k, ps.equity_curve(wclose, pos, cost), ps.equity_curve(wclose, held[ticker][bl.BUY_HOLD], cost)))
        if bt.spec.portfolio:
            _days, curves, _m, _rows = book(bt, closes, held, strategies=(TEAM, bl.BUY_HOLD))
            by_key.setdefault(PORTFOLIO, []).append(_world_row(k, curves[TEAM], curves[bl.BUY_HOLD]))
    summary: dict[str, Any] = {}
    for key, rows in by_key.items():
        excess = [r["excess_cr"] for r in rows]
        team, bh = real[key][TEAM], real[key][bl.BUY_HOLD]
        real_excess = team["cr"] - bh["cr"]
        beat = sum(1 for x in excess if x > 0)
        summary[key] = {
            "worlds": len(rows), "beat_buy_hold": beat,
            "beat_buy_hold_sharpe": sum(1 for r in rows if r["team_sharpe"] is not None and r["buy_hold_sharpe"]
                                        is not None and r["team_sharpe"] > r["buy_hold_sharpe"] + 1e-12),
            "excess_cr": wd.summarise(excess),
            "team_cr": wd.summarise([r["team_cr"] for r in rows]),
            "team_sharpe": wd.summarise([r["team_sharpe"] for r in rows]),
            "real_excess_cr": real_excess,
            "real_beats_share_of_worlds": sum(1 for x in excess if x < real_excess) / len(rows),
            "by_world": rows,
            "text": (f"The team beat Buy & Hold in {beat} of {len(rows)} worlds with no edge; "
                     f"on the real prices its cumulative return over Buy & Hold's was "
                     f"{real_excess * 100:+.2f}%."),
        }
    return {"worlds": bt.spec.control, "seed": bt.spec.seed, "by_ticker": summary}


def _world_row(world: int, team: Sequence[float], buy_hold: Sequence[float]) -> dict[str, Any]:
    team_cr, bh_cr = mt.cumulative_return(team), mt.cumulative_return(buy_hold)
    return {"world": world, "team_cr": team_cr, "buy_hold_cr": bh_cr, "excess_cr": team_cr - bh_cr,
            "team_sharpe": mt.sharpe_ratio(team), "buy_hold_sharpe": mt.sharpe_ratio(buy_hold)}
