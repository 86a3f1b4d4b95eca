"""Backtests: the team over a date range, scored against rule-based baselines like the paper.

``engine`` (the steps, resume, outputs), ``positions`` (rating → position → equity), ``baselines``,
``metrics``, ``report`` and ``cli``. A UI runs a backtest in the background as a job of its own
registry (the app's: ``studio.jobs``); the engine keeps none.
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
