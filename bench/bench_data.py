"""Benchmarks of the demo market and the analyst tools.

``demo_ohlcv_10y_ms``: 10 years of daily OHLCV for a ticker never seen before, with every in-process
cache cleared first (so it includes generating the path of its benchmark too); median over 7
different tickers. ``demo_ohlcv_10y_warm_ms``: the same request again (cached path). The tool
figures are one call each on a warm market, median of 5: ``tool_get_indicators_ms`` (macd, 30 days,
with ~1.4 years of warm-up rows), ``tool_get_stock_data_ms`` (3 months), ``tool_get_news_ms``
(3 months) and ``tool_all_analysts_ms`` (one call of every tool, as a full analyst round makes).
"""

from __future__ import annotations

import statistics
import tempfile
import time

from tradingagents.dataflows import demo
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.tools import make_tools

GOALS: dict[str, tuple[str, float]] = {
    "demo_ohlcv_10y_ms": ("<=", 50.0),
    "demo_ohlcv_10y_warm_ms": ("<=", 5.0),
    "tool_get_indicators_ms": ("<=", 50.0),
    "tool_all_analysts_ms": ("<=", 500.0),
}

AS_OF = "2024-05-10"


def _ms(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def run() -> dict:
    provider = get_provider({"data_vendor": "demo"})
    provider.ohlcv("WARMUP", "2020-01-01", "2020-02-01")  # imports and first-call costs
    cold = []
    for i in range(7):
        demo.clear_cache()
        ticker = f"BENCH{i}"
        t0 = time.perf_counter()
        df = provider.ohlcv(ticker, "2014-05-10", AS_OF)
        cold.append((time.perf_counter() - t0) * 1000)
        assert len(df) > 2500
    warm = _ms(lambda: provider.ohlcv("BENCH0", "2014-05-10", AS_OF), repeat=7)

    with tempfile.TemporaryDirectory() as home:
        tools = make_tools({"data_vendor": "demo", "home": home}, as_of=AS_OF)
        calls = {
            "get_stock_data": {"symbol": "NVDA", "start_date": "2024-02-10", "end_date": AS_OF},
            "get_indicators": {"symbol": "NVDA", "indicator": "macd", "curr_date": AS_OF, "look_back_days": 30},
            "get_fundamentals": {"ticker": "NVDA", "curr_date": AS_OF},
            "get_balance_sheet": {"ticker": "NVDA", "freq": "quarterly", "curr_date": AS_OF},
            "get_cashflow": {"ticker": "NVDA", "freq": "quarterly", "curr_date": AS_OF},
            "get_income_statement": {"ticker": "NVDA", "freq": "quarterly", "curr_date": AS_OF},
            "get_news": {"ticker": "NVDA", "start_date": "2024-02-10", "end_date": AS_OF},
            "get_global_news": {"curr_date": AS_OF, "look_back_days": 7, "limit": 10},
            "get_social_posts": {"ticker": "NVDA", "curr_date": AS_OF},
        }
        for name, args in calls.items():  # warm the market for NVDA
            tools[name].invoke(args)
        per_tool = {name: round(_ms(lambda n=name, a=args: tools[n].invoke(a)), 2) for name, args in calls.items()}
        all_ms = _ms(lambda: [tools[n].invoke(a) for n, a in calls.items()])

    return {
        "demo_ohlcv_10y_ms": round(statistics.median(cold), 2),
        "demo_ohlcv_10y_warm_ms": round(warm, 3),
        "tool_get_indicators_ms": per_tool["get_indicators"],
        "tool_get_stock_data_ms": per_tool["get_stock_data"],
        "tool_get_news_ms": per_tool["get_news"],
        "tool_all_analysts_ms": round(all_ms, 2),
        "tool_ms_by_name": per_tool,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
