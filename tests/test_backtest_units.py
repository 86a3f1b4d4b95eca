"""Backtest arithmetic against small hand-computed series: positions, equity, metrics, baselines, executor."""

from __future__ import annotations

import math
import threading
import time

import pandas as pd
import pytest

from tradingagents.backtest import baselines as bl
from tradingagents.backtest import metrics as mt
from tradingagents.backtest import positions as ps
from tradingagents.backtest.engine import BacktestSpec, backtest_id
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.executor import ThreadExecutor, get_executor

DAYS = ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05"]


# ---------------------------------------------------------------------------------------- positions
def test_default_map_is_long_only_and_short_map_shorts():
    long_only, short = ps.position_map(False), ps.position_map(True)
    assert long_only == {"Buy": 1.0, "Overweight": 0.5, "Hold": None, "Underweight": 0.0, "Sell": 0.0}
    assert short == {"Buy": 1.0, "Overweight": 0.5, "Hold": None, "Underweight": -0.5, "Sell": -1.0}
    assert ps.target_position("Hold", 0.5, long_only) == 0.5  # keep
    assert ps.target_position("Sell", 1.0, short) == -1.0
    assert ps.target_position("strong buy", 0.0, long_only) == 1.0  # synonyms through the one parser
    assert ps.target_position(None, 0.5, long_only) == 0.5  # unknown = Hold = keep


def test_position_map_overrides_are_validated():
    assert ps.position_map(False, {"overweight": 0.75})["Overweight"] == 0.75
    with pytest.raises(ValidationError, match="allow_short"):
        ps.position_map(False, {"Sell": -1})
    with pytest.raises(ValidationError, match="between -1 and 1"):
        ps.position_map(True, {"Buy": 2})
    with pytest.raises(ValidationError, match="Unknown rating"):
        ps.position_map(False, {"Moon": 1})


def test_positions_carry_between_decisions_and_start_flat():
    m = ps.position_map(False)
    assert ps.positions_from_decisions(DAYS, {DAYS[0]: "Hold", DAYS[2]: "Overweight"}, m) == [0.0, 0.0, 0.5, 0.5]
    assert ps.positions_from_decisions(DAYS, {DAYS[0]: "Buy", DAYS[2]: "Hold", DAYS[3]: "Sell"}, m) == [1, 1, 1, 0]


def test_equity_position_at_close_earns_next_day():
    closes = [100.0, 110.0, 99.0, 99.0]
    positions = [1.0, 1.0, 0.5, 0.5]
    # e1 = 1·(1 + 1·0.10); e2 = 1.1·(1 + 1·(−0.10)); e3 = 0.99·(1 + 0.5·0)
    assert ps.equity_curve(closes, positions) == pytest.approx([1.0, 1.1, 0.99, 0.99], abs=1e-12)
    # the day-0 decision alone decides day 1: flat on day 0 earns nothing of the +10 %
    assert ps.equity_curve(closes, [0.0, 1.0, 1.0, 1.0]) == pytest.approx([1.0, 1.0, 0.9, 0.9], abs=1e-12)


def test_costs_are_charged_on_position_changes():
    closes = [100.0, 110.0, 99.0, 99.0]
    positions = [1.0, 1.0, 0.5, 0.5]
    c = 10 / 10_000
    e1 = 1.0 * (1 + 0.10 - c * 1.0)  # entry from flat
    e2 = e1 * (1 - 0.10 - c * 0.0)
    e3 = e2 * (1 + 0.0 - c * 0.5)  # 1.0 → 0.5 at day 2's close, charged on day 3
    assert ps.equity_curve(closes, positions, cost_bps=10) == pytest.approx([1.0, e1, e2, e3], abs=1e-12)
    assert ps.turnover(positions) == pytest.approx(1.5)  # 1 (entry) + 0 + 0.5; the last day earns nothing
    assert ps.turnover([1.0, 1.0, 1.0]) == 1.0
    with pytest.raises(ValueError):
        ps.equity_curve(closes, positions[:2])


# ---------------------------------------------------------------------------------------- metrics
def test_metrics_by_hand():
    e = [1.0, 1.1, 0.99, 1.089]
    r = [0.1, -0.1, 0.1]
    mean = 0.1 / 3
    std = math.sqrt(((0.1 - mean) ** 2 * 2 + (-0.1 - mean) ** 2) / 2)
    m = mt.strategy_metrics(e, turnover=2.0)
    assert m["cr"] == pytest.approx(0.089)
    assert m["arr"] == pytest.approx(1.089 ** (252 / 3) - 1)
    assert m["sharpe"] == pytest.approx(mean / std * math.sqrt(252))
    assert m["mdd"] == pytest.approx(1 - 0.99 / 1.1)  # a positive fraction
    assert m["turnover"] == 2.0 and m["days"] == 4
    assert m["hit_rate"] is None and m["avg_alpha"] is None  # a baseline has no decisions
    assert mt.equity_returns(e) == pytest.approx(r)


def test_metrics_edge_cases():
    flat = mt.strategy_metrics([1.0, 1.0, 1.0])
    assert flat["cr"] == 0 and flat["sharpe"] is None and flat["mdd"] == 0
    assert mt.max_drawdown([1.0, 2.0, 1.0, 3.0, 1.5]) == pytest.approx(0.5)
    assert mt.sharpe_ratio([1.0, 1.1]) is None  # one return: no sample std


def test_hit_rate_uses_the_one_rule():
    decisions = [("Buy", 0.01), ("Sell", 0.02), ("Hold", 0.01), ("Hold", -0.05), ("Buy", None)]
    hit, alpha = mt.decision_scores(decisions)
    assert hit == pytest.approx(2 / 4)  # Buy right, Sell wrong, Hold within ±2 % right, Hold −5 % wrong
    assert alpha == pytest.approx((0.01 + 0.02 + 0.01 - 0.05) / 4)
    assert mt.decision_scores([("Buy", None)]) == (None, None)


# ---------------------------------------------------------------------------------------- baselines
def _frame(closes, highs=None, lows=None) -> pd.DataFrame:
    idx = pd.bdate_range("2024-01-01", periods=len(closes))
    return pd.DataFrame({"Open": closes, "High": highs or closes, "Low": lows or closes, "Close": closes,
                         "Volume": [1000] * len(closes)}, index=idx)


def test_kdj_by_hand():
    closes = [100.0] * 9 + [110.0]
    df = _frame(closes, highs=[110.0] * 10, lows=[90.0] * 10)
    k, d, j = bl.kdj(df)
    assert k.iloc[:8].isna().all()
    assert k.iloc[8] == pytest.approx(50.0) and d.iloc[8] == pytest.approx(50.0)  # RSV 50 from K = D = 50
    assert k.iloc[9] == pytest.approx(2 / 3 * 50 + 100 / 3)  # RSV 100
    assert d.iloc[9] == pytest.approx(2 / 3 * 50 + k.iloc[9] / 3)
    assert j.iloc[9] == pytest.approx(3 * k.iloc[9] - 2 * d.iloc[9])


def test_sma_crossover_by_hand():
    closes = [100.0 + i for i in range(60)]  # rising: SMA20 > SMA50 as soon as both exist
    pos = bl.sma_cross(_frame(closes))
    assert list(pos.iloc[:49]) == [0.0] * 49 and list(pos.iloc[49:]) == [1.0] * 11
    falling = [200.0 - i for i in range(60)]
    assert set(bl.sma_cross(_frame(falling))) == {0.0}
    assert list(bl.sma_cross(_frame(falling), allow_short=True).iloc[49:]) == [-1.0] * 11


def test_macd_follows_the_trend():
    up = [100.0 * 1.01**i for i in range(40)]
    down = [100.0 * 0.99**i for i in range(40)]
    assert list(bl.macd(_frame(up)).iloc[1:]) == [1.0] * 39  # MACD above its (lagging) signal
    assert set(bl.macd(_frame(down))) == {0.0}
    assert list(bl.macd(_frame(down), allow_short=True).iloc[1:]) == [-1.0] * 39


def test_zmr_enters_below_minus_one_and_exits_at_the_mean():
    closes = [100.0, 101.0] * 10  # 20 days around 100.5
    closes[19] = 98.0  # z well below −1 on day 19
    closes += [101.0, 101.0]
    pos = bl.zmr(_frame(closes))
    assert list(pos.iloc[:19]) == [0.0] * 19  # not enough history before day 19
    assert pos.iloc[19] == 1.0  # long on the dip
    assert pos.iloc[20] == 0.0  # back above its mean: flat


def test_buy_and_hold_and_positions_on_days():
    df = _frame([100.0, 101.0, 102.0])
    days = [d.date().isoformat() for d in df.index]
    out = bl.baseline_positions(df, days[1:])
    assert set(out) == set(bl.BASELINES) and out["Buy & Hold"] == [1.0, 1.0]


# ---------------------------------------------------------------------------------------- spec & id
def test_spec_validation_and_stable_id():
    spec = BacktestSpec.make(" nvda, AAPL ,nvda", "2024-06-03", "2024-11-29", 5)
    assert spec.tickers == ("NVDA", "AAPL") and spec.every == 5
    cfg = {"llm_provider": "offline"}
    assert backtest_id(spec, cfg) == backtest_id(BacktestSpec.make("NVDA,AAPL", "2024-06-03", "2024-11-29", 5), cfg)
    assert backtest_id(spec, cfg) != backtest_id(spec, {"max_debate_rounds": 2})
    assert backtest_id(spec, cfg).startswith("NVDA-AAPL_2024-06-03_2024-11-29_")
    for bad, match in (((",", "2024-06-03", "2024-07-01"), "at least one ticker"),
                       (("NVDA", "2024-07-01", "2024-06-03"), "before the end"),
                       (("NVDA", "2024-06-03", "2024-07-01", 0), "every"),
                       (("NV/DA", "2024-06-03", "2024-07-01"), "not allowed"),
                       (("NVDA", "2999-01-01", "2999-02-01"), "future")):
        with pytest.raises(ValidationError, match=match):
            BacktestSpec.make(*bad)
    with pytest.raises(ValidationError, match="cost_bps"):
        BacktestSpec.make("NVDA", "2024-06-03", "2024-07-01", cost_bps=-1)


# ---------------------------------------------------------------------------------------- executor
def test_thread_executor_is_bounded_keeps_order_and_isolates_failures():
    running, peak = [0], [0]
    lock = threading.Lock()

    def work(task):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        if task == "bad":
            raise ValueError("boom")
        return task.lower()

    seen = []
    results = ThreadExecutor(2).run(work, ["A", "B", "bad", "C", "D"], on_done=lambda r: seen.append(r.index))
    assert [r.value for r in results] == ["a", "b", None, "c", "d"]
    assert isinstance(results[2].error, ValueError) and not results[2].ok and results[0].ok
    assert peak[0] == 2 and sorted(seen) == [0, 1, 2, 3, 4]


def test_get_executor_bounds_by_max_concurrent_llm_calls():
    assert get_executor({"max_concurrent_llm_calls": 3}, n_tasks=10).max_workers == 3
    assert get_executor({"max_concurrent_llm_calls": 3}, n_tasks=2).max_workers == 2
    with pytest.raises(ConfigError, match="(?i)unknown executor"):
        get_executor({"executor": "quantum"})
    with pytest.raises(ConfigError):
        ThreadExecutor(0)
