"""Is the edge real? Costs by default, bootstrap intervals, the no-edge control, the book, bar intervals."""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tradingagents.backtest import bootstrap as bs
from tradingagents.backtest import positions as ps
from tradingagents.backtest.engine import (
    CONTROL_PREFIX,
    PORTFOLIO,
    TEAM,
    Backtest,
    BacktestSpec,
    backtest_id,
    run_backtest,
    variant_config,
)
from tradingagents.dataflows import worlds as wd
from tradingagents.dataflows.interface import get_provider
from tradingagents.validation import ValidationError

START, END = "2024-06-03", "2024-08-30"  # 65 trading days of the demo market


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _curves(folder: Path, ticker: str) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for row in _read_csv(folder / "equity.csv"):
        if row["ticker"] == ticker:
            out.setdefault(row["strategy"], []).append(float(row["equity"]))
    return out


def _loop_stationary_sharpe_interval(x: list[float], block: float, reps: int, seed: int) -> tuple[float, float]:
    """An independent stationary bootstrap (a plain loop, Python's own generator): the 95%
    percentile interval of the annualised Sharpe ratio."""
    rng = random.Random(seed)
    n = len(x)
    stats = []
    for _ in range(reps):
        i = rng.randrange(n)
        sample = []
        for _ in range(n):
            sample.append(x[i])
            i = rng.randrange(n) if rng.random() < 1.0 / block else (i + 1) % n
        mean = sum(sample) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in sample) / (n - 1))
        if sd > 0:
            stats.append(mean / sd * math.sqrt(252))
    stats.sort()
    return stats[int(0.025 * len(stats))], stats[int(0.975 * len(stats)) - 1]


# ---------------------------------------------------------------------------------------- costs
def test_costs_are_on_by_default_and_zero_is_the_papers_setting():
    spec = BacktestSpec.make("NVDA", START, END)
    assert spec.cost_bps == 5.0
    assert BacktestSpec.make("NVDA", START, END, cost_bps=0).cost_bps == 0.0
    # a backtest made before the new options keeps its id (they are left out at their defaults)
    assert set(spec.to_dict()) == {"tickers", "start", "end", "every", "compare_memory", "allow_short", "cost_bps"}
    assert backtest_id(spec) != backtest_id(BacktestSpec.make("NVDA", START, END, seed=8))
    with pytest.raises(ValidationError, match="portfolio needs at least two"):
        BacktestSpec.make("NVDA", START, END, portfolio="equal")
    with pytest.raises(ValidationError, match="portfolio must be one of"):
        BacktestSpec.make("NVDA,AAPL", START, END, portfolio="kelly")
    with pytest.raises(ValidationError, match="control must be from 0"):
        BacktestSpec.make("NVDA", START, END, control=-1)


# ---------------------------------------------------------------------------------------- bootstrap
def test_stationary_indices_are_blocks_of_the_documented_mean_length():
    rng = np.random.default_rng(1)
    idx = bs.stationary_indices(500, 200, 6.0, rng)
    assert idx.shape == (200, 500) and idx.min() >= 0 and idx.max() < 500
    runs = np.diff(idx, axis=1) == 1  # a continuation (no wrap at 499 -> 0 counted: rare)
    breaks = (~runs).sum()
    mean_block = idx.size / (breaks + idx.shape[0])
    assert mean_block == pytest.approx(6.0, rel=0.08)
    assert bs.default_block_length(252) == 6 and bs.default_block_length(20) == 3 and bs.default_block_length(1) == 1


def test_p_value_one_sided_against_buy_and_hold():
    r = list(np.random.default_rng(3).normal(0.0005, 0.01, 250))
    same = bs.intervals({"T": r, "B": r}, bench=None, key="k", team="T", buy_hold="B")
    assert same["T"]["p_value_vs_buy_hold"] == 1.0
    better = bs.intervals({"T": [x + 0.002 for x in r], "B": r}, bench=None, key="k", team="T", buy_hold="B")
    assert better["T"]["p_value_vs_buy_hold"] < 0.01
    worse = bs.intervals({"T": [x - 0.002 for x in r], "B": r}, bench=None, key="k", team="T", buy_hold="B")
    assert worse["T"]["p_value_vs_buy_hold"] > 0.99
    # Jensen's alpha: a strategy that is 2x the benchmark plus 1 bp a day has alpha 252 bp and beta 2
    b = r
    s = [2 * x + 0.0001 for x in b]
    assert bs.jensen_alpha(s, b, 252) == pytest.approx(0.0252, rel=1e-9)


def test_buy_hold_sharpe_interval_agrees_with_an_independent_bootstrap_and_seeds_reproduce(ta_home):
    spec = BacktestSpec.make("NVDA", START, END, every=20)
    result = run_backtest(spec, {})
    raw = (result.folder / "metrics.json").read_bytes()
    metrics = json.loads(raw)
    bh = metrics["NVDA"]["Buy & Hold"]
    for strategy, m in metrics["NVDA"].items():
        for key in ("cr_ci", "sharpe_ci"):
            if m[key] is not None:
                assert m[key][0] <= m[key][1], (strategy, key)
    assert bh["cr_ci"][0] < bh["cr"] < bh["cr_ci"][1]
    assert bh["sharpe_ci"][0] < bh["sharpe"] < bh["sharpe_ci"][1]
    assert 0.0 < metrics["NVDA"][TEAM]["p_value_vs_buy_hold"] <= 1.0
    assert "p_value_vs_buy_hold" not in bh
    assert metrics["bootstrap"]["reps"] == bs.DEFAULT_REPS and metrics["bootstrap"]["seed"] == bs.DEFAULT_SEED

    # the independent bootstrap of Buy & Hold's daily returns, from equity.csv
    curve = _curves(result.folder, "NVDA")["Buy & Hold"]
    returns = [curve[i] / curve[i - 1] - 1 for i in range(1, len(curve))]
    block = round(len(returns) ** (1 / 3))
    assert metrics["bootstrap"]["mean_block_length"]["NVDA"] == block
    lo, hi = _loop_stationary_sharpe_interval(returns, block, 2000, seed=12345)
    width = hi - lo
    # sampling error of a 2.5% quantile from 2000 resamples is ~6% of the interval's half-width per
    # estimate: 12% of the width is ~4 standard errors of the difference of two estimates
    assert bh["sharpe_ci"][0] == pytest.approx(lo, abs=0.12 * width)
    assert bh["sharpe_ci"][1] == pytest.approx(hi, abs=0.12 * width)

    # the same backtest writes the same bytes
    again = Backtest(spec, {})
    assert again.done_steps() == again.total_steps
    again.write_outputs()
    assert (result.folder / "metrics.json").read_bytes() == raw

    # another seed: other intervals (its steps are taken from the saved runs), overlapping
    other = run_backtest(BacktestSpec.make("NVDA", START, END, every=20, seed=8), {})
    assert other.folder != result.folder
    o = other.metrics["NVDA"]["Buy & Hold"]
    assert o["sharpe"] == bh["sharpe"] and o["cr"] == bh["cr"]
    assert o["sharpe_ci"] != bh["sharpe_ci"] and o["cr_ci"] != bh["cr_ci"]
    for key in ("cr_ci", "sharpe_ci"):
        assert max(o[key][0], bh[key][0]) < min(o[key][1], bh[key][1]), key


# ---------------------------------------------------------------------------------------- the control
def test_a_world_is_a_matched_seeded_point_in_time_random_walk(ta_home):
    real = get_provider({}).ohlcv("NVDA", "2023-01-03", "2024-12-31")["Close"].astype(float)
    params = wd.matched_params(list(real))
    spec = wd.world_spec(7, 1, "2024-01-02", {"NVDA": {**params, "level": 100.0}})
    world = get_provider({"synthetic_world": spec})
    assert isinstance(world, wd.WorldProvider) and get_provider({"synthetic_world": spec}) is world
    frame = world.ohlcv("NVDA", "2022-01-03", "2024-12-31")
    assert list(frame.index) == list(get_provider({}).ohlcv("NVDA", "2022-01-03", "2024-12-31").index)
    assert float(frame.loc["2024-01-02", "Close"]) == pytest.approx(100.0)
    lr = np.diff(np.log(frame["Close"].to_numpy()))
    n = len(lr)
    assert lr.std(ddof=1) == pytest.approx(params["sigma"], rel=4 / math.sqrt(2 * n))
    assert abs(lr.mean() - params["mu"]) < 4 * params["sigma"] / math.sqrt(n)
    assert ((frame["High"] >= frame[["Open", "Close"]].max(axis=1)) & (frame["Low"] <= frame[["Open", "Close"]].min(axis=1))).all()
    # point in time: nothing after the end asked for, and the past does not change with the end
    part = world.ohlcv("NVDA", "2024-01-02", "2024-03-01")
    assert part.index.max() <= pd.Timestamp("2024-03-01")
    assert part["Close"].tolist() == frame.loc["2024-01-02":"2024-03-01", "Close"].tolist()
    # another world, other prices; a ticker outside the world is the real source's
    other = get_provider({"synthetic_world": wd.world_spec(7, 2, "2024-01-02", {"NVDA": {**params, "level": 100.0}})})
    assert other.ohlcv("NVDA", "2024-01-02", "2024-03-01")["Close"].tolist() != part["Close"].tolist()
    assert world.ohlcv("AAPL", "2024-01-02", "2024-03-01").equals(get_provider({}).ohlcv("AAPL", "2024-01-02", "2024-03-01"))


def test_control_runs_the_team_on_no_edge_worlds_and_reports_the_distribution(ta_home):
    spec = BacktestSpec.make("NVDA,AAPL", START, END, every=10, control=2, portfolio="equal")
    bt = Backtest(spec, {})
    assert bt.total_steps == sum(len(p.steps) for p in bt.plans.values()) * 3
    result = bt.run()
    control = json.loads((result.folder / "metrics.json").read_text())["control"]
    assert control["worlds"] == 2 and set(control["by_ticker"]) == {"NVDA", "AAPL", PORTFOLIO}
    for ticker in ("NVDA", "AAPL"):
        c = control["by_ticker"][ticker]
        assert [r["world"] for r in c["by_world"]] == [1, 2]
        assert c["beat_buy_hold"] == sum(r["excess_cr"] > 0 for r in c["by_world"])
        # a team that stayed flat in a world has no Sharpe ratio (None): it did not beat Buy & Hold's
        assert c["beat_buy_hold_sharpe"] == sum(r["team_sharpe"] is not None and r["buy_hold_sharpe"] is not None
                                                and r["team_sharpe"] > r["buy_hold_sharpe"] + 1e-12
                                                for r in c["by_world"])
        assert f"in {c['beat_buy_hold']} of 2 worlds with no edge" in c["text"]
        real = result.metrics[ticker]
        assert c["real_excess_cr"] == pytest.approx(real[TEAM]["cr"] - real["Buy & Hold"]["cr"])
        plan = bt.plans[ticker]
        for row in c["by_world"]:
            variant = f"{CONTROL_PREFIX}{row['world']}"
            cfg = variant_config(bt.config, variant, bt.folder, bt.world(variant))
            # the world's steps ran on the world's prices, in their own folder, learning on their own
            assert Path(cfg["results_dir"]).is_relative_to(bt.folder / "control")
            closes = get_provider(cfg).ohlcv(ticker, plan.days[0], plan.days[-1])["Close"].astype(float).tolist()
            assert closes != plan.closes
            decided = bt.decisions(variant, ticker)[ticker]
            assert sorted(decided) == plan.steps
            pos = ps.positions_from_decisions(plan.days, decided, bt.position_map)
            team = ps.equity_curve(closes, pos, 5.0)
            assert row["team_cr"] == pytest.approx(team[-1] - 1, rel=1e-12)
            assert row["buy_hold_cr"] == pytest.approx(ps.equity_curve(closes, [1.0] * len(closes), 5.0)[-1] - 1)
    md = (result.folder / "report.md").read_text()
    assert "## No-edge control (2 random-walk worlds)" in md and "worlds with no edge" in md


# ---------------------------------------------------------------------------------------- the book
def test_book_equity_with_one_member_is_the_single_ticker_rule():
    closes = [10.0, 10.5, 10.2, 11.0, 10.8]
    pos = [0.5, 0.5, 1.0, 0.0, 1.0]
    r = ps.daily_returns(closes)
    assert ps.book_equity({"A": r}, {"A": pos}, 7.0) == pytest.approx(ps.equity_curve(closes, pos, 7.0), rel=1e-14)
    x = ps.book_exposures({"A": [1.0, 0.5, 0.0], "B": [0.5, 0.5, 0.0]}, "conviction")
    assert x == {"A": [2 / 3, 0.5, 0.0], "B": [1 / 3, 0.5, 0.0]}
    assert ps.book_exposures({"A": [1.0], "B": [0.5]}, "equal") == {"A": [0.5], "B": [0.25]}


@pytest.mark.parametrize("weighting", ["equal", "conviction"])
def test_portfolio_equity_follows_from_members_returns_and_weights(ta_home, weighting):
    spec = BacktestSpec.make("NVDA,AAPL,MSFT", START, END, every=5, portfolio=weighting)
    result = run_backtest(spec, {})
    folder = result.folder
    metrics = json.loads((folder / "metrics.json").read_text())
    book = metrics[PORTFOLIO]
    assert {TEAM, "Buy & Hold", "MACD", "KDJ & RSI", "ZMR", "SMA", "Benchmark (SPY)"} <= set(book)
    for key in ("cr_ci", "sharpe_ci", "alpha_ci"):
        assert book[TEAM][key] is not None
    assert book[TEAM]["decisions"] == sum(metrics[t][TEAM]["decisions"] for t in ("NVDA", "AAPL", "MSFT"))

    weights = _read_csv(folder / "weights.csv")
    assert list(weights[0]) == ["date", "ticker", "strategy", "position", "weight", "exposure"]
    decisions = {(d["ticker"], d["date"]): float(d["position"]) for d in _read_csv(folder / "decisions.csv")}
    curves = _curves(folder, PORTFOLIO)
    days = [r["date"] for r in _read_csv(folder / "equity.csv") if r["ticker"] == PORTFOLIO and r["strategy"] == TEAM]
    members = ("NVDA", "AAPL", "MSFT")
    returns = {}
    for t in members:
        c = get_provider({}).ohlcv(t, START, END)["Close"].astype(float)
        c = c.reindex(pd.DatetimeIndex(pd.to_datetime(days))).ffill()
        returns[t] = list(c.pct_change().iloc[1:])
    for strategy in (TEAM, "MACD", "SMA"):
        rows = [w for w in weights if w["strategy"] == strategy]
        x = {t: [float(w["exposure"]) for w in rows if w["ticker"] == t] for t in members}
        p = {t: [float(w["position"]) for w in rows if w["ticker"] == t] for t in members}
        for i in range(len(days)):
            gross = sum(abs(p[t][i]) for t in members)
            for t in members:
                want = p[t][i] / 3 if weighting == "equal" else (p[t][i] / gross if gross else 0.0)
                assert x[t][i] == pytest.approx(want, abs=1e-15)
                if strategy == TEAM and (t, days[i]) in decisions:
                    assert p[t][i] == decisions[(t, days[i])]
        e, prev = [1.0], dict.fromkeys(members, 0.0)
        for i in range(1, len(days)):
            gain = sum(x[t][i - 1] * returns[t][i - 1] for t in members)
            cost = 5 / 10_000 * sum(abs(x[t][i - 1] - prev[t]) for t in members)
            e.append(e[-1] * (1 + gain - cost))
            prev = {t: x[t][i - 1] for t in members}
        assert curves[strategy] == pytest.approx(e, rel=1e-12), strategy
        assert book[strategy]["cr"] == pytest.approx(e[-1] - 1, rel=1e-12)


# ---------------------------------------------------------------------------------------- bars
def test_weekly_bars_are_refused_with_what_to_do(ta_home):
    from tests.test_data_csv_returns import rows_for, write_csv

    weekly = pd.date_range("2024-01-05", "2024-06-28", freq="W-FRI")
    write_csv(ta_home / "data", "ACME", rows_for({d.date().isoformat(): 10.0 + i for i, d in enumerate(weekly)}))
    write_csv(ta_home / "data", "SPY", rows_for({d.date().isoformat(): 50.0 + i for i, d in enumerate(weekly)}))
    with pytest.raises(ValidationError, match=r"weekly bars \(a median of 7 days apart\).*needs daily bars"):
        Backtest(BacktestSpec.make("ACME", "2024-02-01", "2024-06-28"), {"data_vendor": "csv"})
