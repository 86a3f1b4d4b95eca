"""Memory's effect on the offline team over a year of weekly decisions on five demo tickers.

A real backtest (``backtest.engine``) of NVDA, AAPL, MSFT, JPM and XOM on the demo market, one decision
every five trading days through 2024, with ``compare_memory``: the team with its memory (the log's past
decisions and the roles' lessons) and the same team without it, on the same days. From the two memory
logs' settled decisions, ``backtest.memory_effect.paired_effect`` gives the hit rate and the long-only
return of each and the difference with a 95 % interval (paired decisions resampled). Goals: memory does
not make the team worse, on hit rate or on return (point estimates ≥ 0; the intervals are reported
beside them). Runs in a temporary home (a few minutes: about 530 offline runs).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TICKERS = ("NVDA", "AAPL", "MSFT", "JPM", "XOM")
START, END, EVERY = "2024-01-02", "2024-12-31", 5
GOALS = {"memory_hit_rate_diff": (">=", 0.0), "memory_return_diff_pts": (">=", 0.0)}


def _rows(log_path: Path) -> list[dict]:
    from tradingagents.memory.trading_log import TradingMemoryLog

    return [e for e in TradingMemoryLog({"memory_log_path": str(log_path)}).load_entries() if not e["pending"]]


def measure(home: str | None = None) -> dict:
    from tradingagents.backtest.engine import BacktestSpec, run_backtest
    from tradingagents.backtest.memory_effect import paired_effect

    home = home or tempfile.mkdtemp(prefix="bench-memory-")
    os.environ["TRADINGAGENTS_HOME"] = home
    spec = BacktestSpec.make(",".join(TICKERS), START, END, EVERY, compare_memory=True)
    result = run_backtest(spec, {"home": home, "data_vendor": "demo", "llm_provider": "offline",
                                 "max_concurrent_llm_calls": 2})
    from tradingagents.config import resolve_config

    desk_log = Path(resolve_config({"home": home})["memory_log_path"])
    return paired_effect(_rows(desk_log), _rows(result.folder / "no_memory" / "memory" / "trading_memory.md"))


def run() -> dict:
    effect = measure()
    lo, hi = effect["hit_rate_diff_ci"]
    rlo, rhi = effect["return_diff_ci"]
    return {
        "memory_decisions": effect["decisions"], "memory_changed": effect["changed"],
        "memory_hit_rate_with": effect["hit_rate_with"], "memory_hit_rate_without": effect["hit_rate_without"],
        "memory_hit_rate_diff": effect["hit_rate_diff"], "memory_hit_rate_diff_lo": lo,
        "memory_hit_rate_diff_hi": hi,
        "memory_return_diff_pts": round(effect["return_diff"] * 100, 3),
        "memory_return_diff_lo_pts": round(rlo * 100, 3), "memory_return_diff_hi_pts": round(rhi * 100, 3),
    }


if __name__ == "__main__":
    print(run())
