"""What the demo market's company figures are calibrated to: real approximate sizes, 2023-2026 (a data table).

The demo market's prices and headlines are synthetic, but a committee checks a company's size first:
NVIDIA's quarterly revenue, Apple's growth, Toyota's leverage. For the companies below, the demo
market's fundamentals and statements follow this table (within ``TOLERANCE``) instead of being
derived from the price path. Figures are approximate public figures from memory of the companies'
reports, rounded, mapped onto calendar years and quarters (a fiscal quarter ending in April counts
as the calendar quarter ending in March; a fiscal year as the calendar year it mostly covers); 2026
and the latest quarters are extrapolations of the reported trend, not reported figures. They give
the order of magnitude; they are not a data source, and every figure the demo market shows stays
labelled "synthetic demo data".

Amounts are in billions of the currency the listing is quoted in (Tencent's RMB accounts are shown in
HKD at about 1.09 HKD per CNY; a London listing quoted in pence has accounts in pounds).

Columns: ``ticker | revenue per calendar year 2023,2024,2025,2026 | net margin % (one, or four by
year) | gross margin % | total debt | diluted shares (billions) | trailing P/E band 2024-2026
(lo-hi) | quarterly revenue (optional: YYYYQn=value, where the fiscal quarters matter)``.

Between the points, annual revenue is interpolated log-linearly (each year's value sits at its
mid-year, a quarter's at its mid-quarter), so a quarter's revenue is a quarter of the annual rate
at its middle; before the first point it shrinks back at the table's whole trend (3-15% a year), after
the last it continues at the last year's trend (-5% to +12% a year).
"""

from __future__ import annotations

import functools
import math
from typing import Any

YEARS = (2023, 2024, 2025, 2026)

# How far the demo market's figures may stand from the table, for the dates 2024-01-01..2026-12-31.
# revenue, EPS, debt and growth (1 + growth): relative; margins: absolute (fraction points); the P/E
# must lie in the row's band (which already spans the real range with room on both sides).
TOLERANCE = {
    "revenue": 0.10,          # a quarter's revenue within ±10% of the table's rate for that quarter
    "net_margin": 0.03,       # TTM net margin within ±3 points of the table's
    "gross_margin": 0.03,     # TTM gross margin within ±3 points
    "revenue_growth": 0.08,   # a quarter's revenue over the same quarter a year before: within ±8% of the table's ratio
    "debt": 0.15,             # total debt within ±15%
    "eps": 0.15,              # TTM EPS within ±15% of the table's TTM net income / shares
    "steady_drop": 0.25,      # no quarter-on-quarter revenue drop this large for a company in the table
}

_TABLE = """
NVDA|60.9,130.5,215.8,338.0|42,55.5,53,53|75|10|24.6|25-100|2022Q1=8.29,2022Q2=6.70,2022Q3=5.93,2022Q4=6.05,2023Q1=7.19,2023Q2=13.51,2023Q3=18.12,2023Q4=22.10,2024Q1=26.04,2024Q2=30.04,2024Q3=35.08,2024Q4=39.33,2025Q1=44.06,2025Q2=46.74,2025Q3=57.01,2025Q4=68.0,2026Q1=74.0,2026Q2=81.0,2026Q3=88.0,2026Q4=95.0
AAPL|385.7,395.8,435.0,460.0|25.5|46.5|100|15.2|20-48|
MSFT|227.6,261.8,305.0,350.0|36|69.5|60|7.47|22-50|
GOOGL|307.4,350.0,402.0,450.0|24,28.6,31,30|58|28|12.4|14-42|
GOOG|307.4,350.0,402.0,450.0|24,28.6,31,30|58|28|12.4|14-42|
AMZN|574.8,638.0,717.0,790.0|5.3,9.3,10.8,10.5|48.5|130|10.7|25-90|
META|134.9,164.5,201.0,235.0|29,37.9,30,33|81.5|50|2.6|14-45|
TSLA|96.8,97.7,94.8,100.0|15.5,7.3,4,5|18|13.5|3.5|30-650|
JPM|158.1,177.6,182.0,188.0|31.4,33,31.5,31|90|450|2.87|7-20|
XOM|344.6,349.6,325.0,320.0|10.4,9.6,8.9,9|30|41|4.35|8-25|
KO|45.8,47.1,48.0,50.0|23.4,22.6,26,26|60.5|45|4.32|16-36|
PG|83.0,84.0,84.9,86.5|17.5,17.7,19,19|51|35|2.45|17-35|
WMT|648,681,710,740|2.4,2.85,2.9,2.9|24.1|60|8.05|20-50|
V|33.4,36.5,40.5,44.5|54|80|22|2.0|22-42|
MA|25.1,28.2,32.5,36.0|45.5|76|18.5|0.92|26-48|
LLY|34.1,45.0,65.0,80.0|15.4,23.5,31,31|81|36|0.90|25-160|
BAC|98.6,101.9,108.0,113.0|26.6,26.1,27.5,27.5|90|290|7.8|8-18|
WFC|82.6,82.3,84.0,87.0|23,24,25,25|90|175|3.45|7-18|
COST|245,260,280,300|2.9|12.6|8|0.444|32-70|
ORCL|51.5,55.0,61.0,72.0|19.8,20.5,21.7,21|71|100|2.85|20-80|
0941.HK|1100,1135,1145,1160|13.1,13.3,13.5,13.5|30|35|21.4|6-18|
7203.T|43500,47500,48500,50000|10.5,10.5,8,8|20|38000|13.0|5-16|
0700.HK|664,720,807,883|19.5,29,29,29|53|330|9.4|10-40|
600519.SS|150.6,174.1,183.0,190.0|49.5|92|0.1|1.256|14-40|
601398.SS|843,822,820,825|44|90|1100|356.4|3.5-10|
600036.SS|339.1,337.5,338.0,342.0|44|90|230|25.2|3.5-11|
601318.SS|913.8,1028.9,1060,1090|9.4,12.3,13,13|90|300|18.2|4-14|
600900.SS|78.1,84.5,86.0,88.0|38.5|60|290|24.5|13-32|
601857.SS|3011,2938,2850,2850|5.4,5.6,5.5,5.5|22|350|183|5-15|
600276.SS|22.8,28.0,31.5,34.0|18.9,22.6,24,24|86|1|6.38|30-95|
000858.SZ|83.3,89.2,75.0,75.0|35.7,35.7,33,33|77|0.1|3.88|10-35|
300750.SZ|401.0,362.0,400.0,450.0|11,14,17,17|24.4|100|4.4|12-35|
000333.SZ|373.7,409.1,455.0,480.0|9,9.4,9.5,9.5|26.5|65|7.6|8-20|
002594.SZ|602.3,777.1,820.0,900.0|5,5.2,4,4|20|35|2.91|12-40|
000001.SZ|164.7,146.7,135.0,132.0|28,30,31,31|90|350|19.4|3-9|
"""


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(","))


@functools.lru_cache(maxsize=1)
def table() -> dict[str, dict[str, Any]]:
    """Every calibrated company by ticker: annual revenue, margins, debt, shares, P/E band (in units)."""
    out: dict[str, dict[str, Any]] = {}
    for line in _TABLE.strip().splitlines():
        ticker, rev, margin, gross, debt, shares, band, quarters = line.split("|")
        revenue = _floats(rev)
        margins = _floats(margin)
        if len(margins) == 1:
            margins = margins * len(YEARS)
        if len(revenue) != len(YEARS) or len(margins) != len(YEARS):
            raise ValueError(f"demo calibration row {ticker}: four years of revenue and margin expected")
        lo, hi = (float(x) for x in band.split("-"))
        quarterly = {}
        for item in filter(None, quarters.split(",")):
            key, value = item.split("=")
            quarterly[key] = float(value) * 1e9
        out[ticker] = {
            "revenue": {y: v * 1e9 for y, v in zip(YEARS, revenue, strict=True)},
            "net_margin": {y: m / 100.0 for y, m in zip(YEARS, margins, strict=True)},
            "gross_margin": float(gross) / 100.0, "debt": float(debt) * 1e9,
            "shares": float(shares) * 1e9, "pe_band": (lo, hi), "quarterly": quarterly,
        }
    return out


def calibrated(ticker: str) -> dict[str, Any] | None:
    """The calibration row of a ticker, or None (its figures are then derived from its price path)."""
    return table().get(ticker)


def _year_frac(day) -> float:
    """A date as a fractional year (2024-07-01 ~ 2024.5)."""
    return day.year + (day.timetuple().tm_yday - 0.5) / (366 if day.year % 4 == 0 else 365)


def _points(row: dict[str, Any]) -> list[tuple[float, float]]:
    """(fractional year, annualised revenue) points, oldest first: quarters where given, else years."""
    pts: dict[float, float] = {}
    quarterly = row["quarterly"]
    covered = {int(k[:4]) for k in quarterly}
    for year, value in row["revenue"].items():
        if year not in covered:
            pts[year + 0.5] = value
    for key, value in quarterly.items():
        year, q = int(key[:4]), int(key[5])
        pts[year + (q - 1) * 0.25 + 0.125] = value * 4.0
    return sorted(pts.items())


_LATER_GROWTH = (-0.05, 0.12)  # after the table: its last year's trend, bounded per year
_EARLIER_GROWTH = (0.03, 0.15)  # before it: the table's whole trend, bounded (a company grew into its size)


def revenue_rate(row: dict[str, Any], day) -> float:
    """The annualised revenue the table implies at a date (log-linear between points)."""
    pts = _points(row)
    x = _year_frac(day)
    if x <= pts[0][0]:
        (x0, v0), (x1, v1) = pts[0], pts[-1]
        g = min(math.log1p(_EARLIER_GROWTH[1]), max(math.log1p(_EARLIER_GROWTH[0]), math.log(v1 / v0) / (x1 - x0)))
        return v0 * math.exp(g * (x - x0))
    if x >= pts[-1][0]:
        (x0, v0), (x1, v1) = pts[max(-5, -len(pts))], pts[-1]
        g = min(math.log1p(_LATER_GROWTH[1]), max(math.log1p(_LATER_GROWTH[0]), math.log(v1 / v0) / (x1 - x0)))
        return v1 * math.exp(g * (x - x1))
    for (x0, v0), (x1, v1) in zip(pts, pts[1:], strict=False):
        if x0 <= x <= x1:
            w = (x - x0) / (x1 - x0)
            return math.exp(math.log(v0) + w * (math.log(v1) - math.log(v0)))
    return pts[-1][1]  # pragma: no cover - the loop covers every x inside the table


def net_margin(row: dict[str, Any], day) -> float:
    """The table's net margin at a date (linear between mid-years, flat outside them)."""
    x = _year_frac(day) - 0.5
    years = sorted(row["net_margin"])
    if x <= years[0]:
        return row["net_margin"][years[0]]
    if x >= years[-1]:
        return row["net_margin"][years[-1]]
    y0 = int(math.floor(x))
    w = x - y0
    return row["net_margin"][y0] * (1 - w) + row["net_margin"][y0 + 1] * w


def quarter_revenue(row: dict[str, Any], quarter_end) -> float:
    """The table's revenue for the calendar quarter ending on ``quarter_end`` (a date)."""
    import datetime as dt

    mid = quarter_end - dt.timedelta(days=45)
    return revenue_rate(row, mid) / 4.0


__all__ = ["TOLERANCE", "YEARS", "calibrated", "net_margin", "quarter_revenue", "revenue_rate", "table"]
