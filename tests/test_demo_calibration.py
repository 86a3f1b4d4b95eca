"""The demo market holds up to a committee's first questions: company sizes follow the calibration
table within its stated tolerance, the index moves like an index, the README's closes are the demo
market's, the news flow never goes quiet, and every figure still says it is synthetic."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pandas as pd
import pytest

from tradingagents.dataflows import demo
from tradingagents.dataflows.demo import DemoProvider, calibration_check
from tradingagents.dataflows.demo_calibration import TOLERANCE, table
from tradingagents.dataflows.demo_identities import table as identities

P = DemoProvider()
FIVE = ("NVDA", "AAPL", "MSFT", "0700.HK", "600519.SS")


def fridays(start: dt.date, end: dt.date, step: int = 1) -> list[str]:
    day = start + dt.timedelta(days=(4 - start.weekday()) % 7)
    out = []
    while day <= end:
        out.append(day.isoformat())
        day += dt.timedelta(days=7 * step)
    return out


@pytest.mark.parametrize("ticker", FIVE)
def test_five_companies_follow_the_table_every_friday_of_2025(ticker):
    misses = []
    for day in fridays(dt.date(2025, 1, 1), dt.date(2025, 12, 31)):
        for key, (got, want, ok) in calibration_check(ticker, day).items():
            if not ok:
                misses.append((day, key, got, want))
    assert misses == []


@pytest.mark.parametrize("ticker", list(table()))
def test_every_company_of_the_table_holds_over_2024_to_2026(ticker):
    misses = []
    for day in fridays(dt.date(2024, 1, 1), dt.date(2026, 11, 30), step=6):
        misses += [(day, key, got, want) for key, (got, want, ok) in calibration_check(ticker, day).items() if not ok]
    assert misses == []


def test_every_listed_stock_is_calibrated():
    """A committee may ask about any company the demo market knows by name: each has a row."""
    stocks = {t for t, row in identities().items() if row["kind"] == "stock"}
    assert len(stocks) == 180
    assert stocks == set(table())


@pytest.mark.parametrize("ticker", list(table()))
def test_a_row_can_be_followed(ticker):
    """Every year's gross margin clears its net margin (the generator keeps gross >= net + 2 points), the
    P/E band is a band, and the shares are the listing identity's within a third (Rio Tinto's row counts
    the plc's and the Ltd's shares: earnings are the group's)."""
    row = table()[ticker]
    assert all(row["gross_margin"] >= m + 0.02 for m in row["net_margin"].values())
    lo, hi = row["pe_band"]
    assert 0 < lo < hi
    if ticker not in ("GOOGL", "GOOG"):  # Alphabet's row counts every share class (12.4B), its identity one
        assert 0.75 < row["shares"] / identities()[ticker]["shares"] < 1.35
    assert all(v > 0 for v in row["revenue"].values()) and row["debt"] > 0


def test_figures_are_in_the_listings_currency():
    """Accounts are in the listing's currency (pounds for pence): HSBC's revenue is about HK$515B in Hong
    Kong and £51B in London, Alibaba's about US$137B in New York and HK$1.09T in Hong Kong."""
    def revenue(ticker: str) -> float:
        f = P.fundamentals(ticker, "2025-03-14")
        return f["revenue_ttm"]

    assert P.fundamentals("0005.HK", "2025-03-14")["financial_currency"] == "HKD"
    assert P.fundamentals("HSBA.L", "2025-03-14")["financial_currency"] == "GBP"
    assert 450e9 < revenue("0005.HK") < 580e9
    assert 45e9 < revenue("HSBA.L") < 58e9
    assert 120e9 < revenue("BABA") < 150e9
    assert 950e9 < revenue("9988.HK") < 1200e9
    assert 22e9 < revenue("AMD") < 30e9  # AMD's four quarters to December 2024: $25.8B
    assert 12e12 < revenue("6758.T") < 15e12  # Sony, in yen
    assert 8e12 < revenue("RELIANCE.NS") < 11e12  # Reliance, in rupees


def test_a_loss_shows_no_pe():
    """Intel lost $18.8B in 2024: the demo market reports the loss and no P/E, and the check says so."""
    f = P.fundamentals("INTC", "2025-01-17")
    assert f["net_income_ttm"] < 0 and f["pe_ratio_ttm"] is None
    check = calibration_check("INTC", "2025-01-17")
    assert "pe" not in check and check["pe_loss"][2]
    assert all(ok for _, _, ok in check.values())
    assert demo.pe_case(-10.0, 12.0, 100.0) == "loss"
    assert demo.pe_case(1.0, 12.0, 100.0) == "break_even"  # a profit netted against a loss near zero
    assert demo.pe_case(1.5, 1.5, 100.0) == "break_even"  # 1.5% of revenue: a P/E means nothing
    assert demo.pe_case(8.0, 8.0, 100.0) == "profit"


def test_the_figures_a_committee_quoted_are_the_right_size():
    nvda = P.fundamentals("NVDA", "2024-05-10")
    assert 70e9 < nvda["revenue_ttm"] < 90e9  # NVIDIA's four quarters to April 2024: $79.8B (not $340B a quarter)
    q = P.statements("NVDA", "income_statement", "quarterly", "2025-09-01").loc["Total Revenue"]
    assert 40e9 < q.iloc[0] < 50e9  # about $44-47B a quarter in mid 2025
    debt = P.statements("NVDA", "balance_sheet", "quarterly", "2025-09-01").loc["Total Debt"].iloc[0]
    assert 8e9 < debt < 12e9
    assert 0.08 < P.fundamentals("MSFT", "2025-03-14")["revenue_growth_yoy"] < 0.22
    assert 0.0 < P.fundamentals("AAPL", "2025-03-14")["revenue_growth_yoy"] < 0.12
    for day in fridays(dt.date(2024, 1, 1), dt.date(2026, 11, 30), step=4):  # Tencent's revenue never drops a quarter
        rev = P.statements("0700.HK", "income_statement", "quarterly", day).loc["Total Revenue"].tolist()
        assert all(b / a - 1.0 > -0.10 for a, b in zip(rev[1:], rev, strict=False)), day


def test_no_known_company_loses_a_quarter_of_its_revenue_in_a_quarter():
    """Companies outside the table earn what a year's average price supports: their revenue moves slowly."""
    worst = {}
    for ticker, row in identities().items():
        if row["kind"] != "stock":
            continue
        qs = [q for q in demo._all_quarters(ticker, demo.today().year)
              if pd.Timestamp("2024-01-01") <= q["period_end"] <= pd.Timestamp("2026-09-30")]
        worst[ticker] = min(b["revenue"] / a["revenue"] - 1.0 for a, b in zip(qs, qs[1:], strict=False))
    assert min(worst.values()) > -TOLERANCE["steady_drop"], min(worst, key=worst.get)


def annual_vol(ticker: str, year: int) -> float:
    closes = P.ohlcv(ticker, f"{year}-01-01", f"{year}-12-31")["Close"].tolist()
    r = [math.log(b / a) for a, b in zip(closes, closes[1:], strict=False)]
    m = sum(r) / len(r)
    return math.sqrt(sum((x - m) ** 2 for x in r) / (len(r) - 1) * 252)


@pytest.mark.parametrize("year", [2023, 2024, 2025])
def test_spy_moves_like_the_index(year):
    assert 0.12 <= annual_vol("SPY", year) <= 0.22
    weekly = P.ohlcv("SPY", f"{year}-01-01", f"{year}-12-31")["Close"].resample("W-FRI").last().pct_change().dropna()
    assert weekly.min() > -0.10  # no −12.8% week in an ordinary year


def test_the_readme_closes_are_the_demo_markets():
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    rows = [line.split(",") for line in text.splitlines() if line.startswith("2024-05-")]
    assert rows, "the README's CSV example moved"
    df = P.ohlcv("NVDA", "2024-05-01", "2024-05-10")
    for day, *_, close, _volume in rows:
        assert df.loc[day, "Close"] == pytest.approx(float(close), abs=0.005), day


@pytest.mark.parametrize("ticker", FIVE)
def test_several_company_headlines_every_week(ticker):
    items = P.news(ticker, "2025-01-06", "2025-12-28")
    weeks = pd.Series(1, index=pd.to_datetime([i["published"][:10] for i in items])).resample("W-SUN").sum()
    assert len(weeks) == 51 and weeks.min() >= 2 and weeks.median() >= 3
    assert all(i["synthetic"] and i["title"].startswith(demo.HEADLINE_MARK) for i in items)


def test_every_figure_still_says_it_is_synthetic():
    f = P.fundamentals("NVDA", "2025-06-13")
    assert f["data_source"] == demo.LABEL
    assert P.statements("NVDA", "income_statement", "quarterly", "2025-06-13").attrs["data_source"] == demo.LABEL
    assert P.ohlcv("NVDA", "2025-06-01", "2025-06-13").attrs["data_source"] == demo.LABEL
