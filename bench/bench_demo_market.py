"""The demo market against its calibration table and the index's volatility.

For every Friday of 2024 through 2026 (to late November) and every company of
``dataflows.demo_calibration`` (all 180 listed stocks of ``demo_identities``: the S&P 100 names, the
Hong Kong, Tokyo, London, Indian, Canadian, Australian and A-share listings), ``demo.calibration_check`` sets the demo market's figures beside the table's:
printed as the distribution (5th percentile, median, 95th percentile, worst) of each measure's
deviation, in units of its tolerance (1.0 = at the edge of ``TOLERANCE``), and the share of the
checks that fall within it (goal: all), and the P/E by case (in its band where the table's trailing
earnings are a clear profit; none shown for a loss; none or a large one near break-even). Then SPY's annualised volatility for each year 2023-2026
(goal: 12-22 %) and its worst week.
"""

from __future__ import annotations

import datetime as dt
import math
import statistics

from bench.bench_plans import fridays

GOALS = {
    "demo_calibration_misses": ("<=", 0),
    "demo_spy_vol_min": (">=", 0.12),
    "demo_spy_vol_max": ("<=", 0.22),
    "demo_spy_worst_week": (">=", -0.10),
}


def _deviation(key: str, got: float, want: float, tol: dict) -> float:
    """How far a figure stands from the table, in units of its tolerance (signed)."""
    if key in ("revenue", "debt", "eps"):
        return (got / want - 1.0) / tol[key]
    if key == "revenue_growth":
        return ((1.0 + got) / (1.0 + want) - 1.0) / tol[key]
    if key == "eps_mixed":  # a TTM of a profit and a loss: both EPS are fractions of the quarters' size
        return (got - want) / tol["eps"]
    if key in ("net_margin", "gross_margin"):
        return (got - want) / tol[key]
    return float("nan")


def _quantiles(values: list[float]) -> str:
    xs = sorted(values)
    pick = lambda q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
    worst = max(xs, key=abs)
    return f"p5 {pick(0.05):+.2f}  median {statistics.median(xs):+.2f}  p95 {pick(0.95):+.2f}  worst {worst:+.2f}"


def run() -> dict:
    from tradingagents.dataflows.demo import DemoProvider, calibration_check
    from tradingagents.dataflows.demo_calibration import TOLERANCE, table

    dates = fridays(dt.date(2024, 1, 1), dt.date(2026, 11, 30))
    deviations: dict[str, list[float]] = {}
    checks = misses = 0
    pe_cases = {"pe": [0, 0], "pe_loss": [0, 0], "pe_break_even": [0, 0]}  # [held, dates]
    drops: list[float] = []
    for ticker in table():
        for day in dates:
            for key, (got, want, ok) in calibration_check(ticker, day).items():
                checks += 1
                misses += not ok
                if key in pe_cases:
                    pe_cases[key][0] += ok
                    pe_cases[key][1] += 1
                elif key == "steady_drop":
                    drops.append(got)
                else:
                    deviations.setdefault(key, []).append(_deviation(key, got, want, TOLERANCE))
    print(f"  {len(table())} companies x {len(dates)} Fridays (2024-2026), deviation in units of the tolerance:")
    for key, values in deviations.items():
        tol = TOLERANCE["eps" if key == "eps_mixed" else key]
        print(f"    {key:<15} ±{tol:.0%}  {_quantiles(values)}  ({len(values)} checks)")
    held, seen = pe_cases["pe"]
    print(f"    P/E inside its band: {held} of {seen} dates where the table's trailing earnings are a clear profit; "
          f"no P/E shown: {pe_cases['pe_loss'][0]} of {pe_cases['pe_loss'][1]} where they are a loss; "
          f"none or above the band's low end: {pe_cases['pe_break_even'][0]} of {pe_cases['pe_break_even'][1]} "
          f"near break-even")
    worst = {key: max(abs(v) for v in values) for key, values in deviations.items()}
    print(f"    worst deviation of any measure: {max(worst.values()):.2f} of its tolerance ({max(worst, key=worst.get)}); "
          f"worst quarter-on-quarter revenue change {min(drops):+.1%} (limit −{TOLERANCE['steady_drop']:.0%})")

    p = DemoProvider()
    vols, worst_weeks = {}, {}
    for year in (2023, 2024, 2025, 2026):
        frame = p.ohlcv("SPY", f"{year}-01-01", f"{year}-12-31")
        closes = frame["Close"].tolist()
        r = [math.log(b / a) for a, b in zip(closes, closes[1:], strict=False)]
        vols[year] = statistics.stdev(r) * math.sqrt(252)
        worst_weeks[year] = float(frame["Close"].resample("W-FRI").last().pct_change().dropna().min())
        print(f"  SPY {year}: annualised volatility {vols[year]:.1%}, worst week {worst_weeks[year]:+.1%}")
    return {
        "demo_calibration_companies": len(table()),
        "demo_calibration_checks": checks, "demo_calibration_misses": misses,
        "demo_calibration_worst_deviation": round(max(worst.values()), 3),
        "demo_pe_in_band": held, "demo_pe_judged": seen,
        "demo_spy_vol_min": min(vols.values()), "demo_spy_vol_max": max(vols.values()),
        "demo_spy_worst_week": min(worst_weeks.values()),
    }


if __name__ == "__main__":
    print(run())
