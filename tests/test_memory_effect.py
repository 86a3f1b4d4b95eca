"""The ablation's memory_effect: which decisions differ with and without memory, and what it earned."""

from __future__ import annotations

import pytest

from tradingagents.backtest.memory_effect import describe, memory_effect


def test_memory_effect_names_the_differing_decisions_and_their_alpha_difference():
    with_m = [{"ticker": "NVDA", "date": "2024-01-02", "rating": "Hold", "alpha": 0.03},
              {"ticker": "NVDA", "date": "2024-01-09", "rating": "Overweight", "alpha": 0.02},
              {"ticker": "AAPL", "date": "2024-01-02", "rating": "Sell", "alpha": None}]
    without = [{"ticker": "NVDA", "date": "2024-01-02", "rating": "Hold", "alpha": 0.03},
               {"ticker": "NVDA", "date": "2024-01-09", "rating": "Underweight", "alpha": 0.02},
               {"ticker": "AAPL", "date": "2024-01-02", "rating": "Hold", "alpha": None}]
    effect = memory_effect(with_m, without)
    assert effect["compared"] == 3 and effect["differing"] == 2
    assert [(d["ticker"], d["date"], d["without_memory"], d["with_memory"]) for d in effect["decisions"]] == [
        ("AAPL", "2024-01-02", "Hold", "Sell"), ("NVDA", "2024-01-09", "Underweight", "Overweight")]
    # Overweight instead of Underweight on a +2 % alpha day: +1*0.02 - (-1)*0.02
    assert effect["decisions"][1]["alpha_difference"] == pytest.approx(0.04)
    assert effect["alpha_difference"] == pytest.approx(0.04)
    text = describe(effect)
    assert "Memory changed 2 of 3 decisions" in text and "NVDA 2024-01-09: Underweight without memory" in text


def test_identical_runs_have_no_effect():
    rows = [{"ticker": "NVDA", "date": "2024-01-02", "rating": "Buy", "alpha": 0.01}]
    assert memory_effect(rows, rows) == {"compared": 1, "differing": 0, "alpha_difference": 0.0, "decisions": []}


def test_paired_effect_compares_hit_rate_and_long_only_return_with_an_interval():
    from tradingagents.backtest.memory_effect import paired_effect

    def row(date, rating, raw, alpha, ticker="NVDA"):
        return {"ticker": ticker, "date": date, "rating": rating, "raw": raw, "alpha": alpha}

    without = [row("2024-01-02", "Buy", -0.04, -0.03), row("2024-01-09", "Hold", 0.02, 0.01),
               row("2024-01-16", "Sell", 0.03, 0.02), row("2024-01-23", "Buy", 0.01, None)]
    with_m = [row("2024-01-02", "Buy", -0.04, -0.03), row("2024-01-09", "Underweight", 0.02, 0.01),
              row("2024-01-16", "Overweight", 0.03, 0.02), row("2024-01-23", "Buy", 0.01, None)]
    effect = paired_effect(with_m, without)
    assert effect["decisions"] == 3 and effect["changed"] == 2  # the unsettled fourth is not compared
    # hits: without Buy(-3%) no, Hold(+1%) yes, Sell(+2%) no = 1/3; with: no, no, Overweight(+2%) yes = 1/3
    assert effect["hit_rate_diff"] == pytest.approx(0.0)
    # long-only: without 1.0·-4% + 1.0·2% (Hold keeps) + 0·3% = -2%; with -4% + 0·2% + 0.5·3% = -2.5%
    assert effect["return_without"] == pytest.approx(-0.02) and effect["return_with"] == pytest.approx(-0.025)
    assert effect["return_diff"] == pytest.approx(-0.005)
    lo, hi = effect["return_diff_ci"]
    assert lo <= effect["return_diff"] <= hi
    assert paired_effect(with_m, without) == effect  # seeded: the same interval every time


def test_the_effect_is_described_in_chinese_with_chinese_ratings():
    from tradingagents.i18n import translator

    with_m = [{"ticker": "NVDA", "date": "2024-01-09", "rating": "Overweight", "alpha": 0.02}]
    without = [{"ticker": "NVDA", "date": "2024-01-09", "rating": "Underweight", "alpha": 0.02}]
    text = describe(memory_effect(with_m, without), t=translator("zh"))
    assert text.splitlines() == ["记忆改变了 1 个决策中的 1 个（这些交易日的超额收益(alpha)差额为 +4.00%）。",
                                 "  NVDA 2024-01-09：无记忆时为减持，有记忆时为增持（超额收益(alpha) +2.00%，差额 +4.00%）"]
