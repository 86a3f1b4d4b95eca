"""The offline engine's trade plans over a year of weekly decisions on five demo tickers.

For every Friday of 2024 and each of NVDA, AAPL, MSFT, JPM and XOM on the demo market, the levels a
long and a short call would get (``offline.roles.plan_levels``) from what the tools give the Trader:
the recent closes (``trader.recent_prices``) and the ATR the market report quotes (the 14-day ATR of
``dataflows.indicators``). Reports the smallest and the median reward:risk (goal: every plan ≥ 1.5)
and how many plans had a stop or a target on the wrong side of the entry (goal: none).
"""

from __future__ import annotations

import datetime as dt
import statistics

TICKERS = ("NVDA", "AAPL", "MSFT", "JPM", "XOM")
GOALS = {"plans_min_reward_risk": (">=", 1.5), "plans_wrong_side": ("<=", 0)}


def fridays(start: dt.date, end: dt.date, step: int = 1) -> list[str]:
    day = start + dt.timedelta(days=(4 - start.weekday()) % 7)
    out = []
    while day <= end:
        out.append(day.isoformat())
        day += dt.timedelta(days=7 * step)
    return out


def plans(tickers=TICKERS, dates=None) -> list[dict]:
    """One record per (ticker, date, side): entry, target, stop, reward_risk (levels None: no plan)."""
    from tradingagents.agents.trader.trader import recent_prices
    from tradingagents.config import resolve_config
    from tradingagents.dataflows.indicators import compute_indicator
    from tradingagents.dataflows.interface import get_provider
    from tradingagents.llm_clients.offline.roles import plan_levels

    cfg = resolve_config({"data_vendor": "demo"})
    dates = dates or fridays(dt.date(2024, 1, 1), dt.date(2024, 12, 31))
    provider = get_provider(cfg)
    out = []
    for ticker in tickers:
        frame = provider.ohlcv(ticker, "2023-06-01", dates[-1])
        if "Date" in frame.columns:
            frame = frame.set_index("Date")
        atr = compute_indicator(frame, "atr")
        for date in dates:
            closes = [float(line.split(": ")[1]) for line in recent_prices(cfg, ticker, date).splitlines()
                      if ": " in line and line[:4].isdigit()]
            window = atr[[str(i)[:10] <= date for i in atr.index]]
            for side in (1, -1):
                levels = plan_levels(side, closes[-1], float(window.iloc[-1]), closes)
                out.append({"ticker": ticker, "date": date, "side": side, "entry": closes[-1],
                            **(levels or {"target": None, "stop": None, "reward_risk": None})})
    return out


def run() -> dict:
    made = [p for p in plans() if p["target"] is not None]
    wrong = sum(1 for p in made if (p["target"] - p["entry"]) * p["side"] <= 0 or (p["entry"] - p["stop"]) * p["side"] <= 0)
    ratios = [p["reward_risk"] for p in made]
    return {"plans": len(made), "plans_min_reward_risk": min(ratios),
            "plans_median_reward_risk": statistics.median(ratios), "plans_wrong_side": wrong}


if __name__ == "__main__":
    print(run())
