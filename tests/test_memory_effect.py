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
