"""Backtests: the team over a date range, scored against rule-based baselines like the paper.

``engine`` (the steps, resume, outputs), ``positions`` (rating → position → equity), ``baselines``,
``metrics``, ``report``, ``registry`` (background backtests for a UI) and ``cli``.
"""

from tradingagents.backtest.engine import (
    STRATEGIES,
    TEAM,
    TEAM_NO_MEMORY,
    Backtest,
    BacktestResult,
    BacktestSpec,
    backtest_id,
    list_backtests,
    run_backtest,
)

__all__ = ["STRATEGIES", "TEAM", "TEAM_NO_MEMORY", "Backtest", "BacktestResult", "BacktestSpec", "backtest_id",
           "list_backtests", "run_backtest"]
