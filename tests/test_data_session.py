"""Pre-run data checks: prices up to the analysis date, the session used, coverage of a window,
and tool results that name what is missing."""

from __future__ import annotations

import pandas as pd
import pytest

from tradingagents import errors
from tradingagents.config import resolve_config
from tradingagents.dataflows.csv_provider import EXPECTED_HEADER
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.provider import (
    DATA_UNAVAILABLE,
    NO_DATA,
    DataNotFound,
    MarketDataProvider,
    ProviderUnavailable,
)
from tradingagents.dataflows.session import check_prices, note_for, session_for, window_gap
from tradingagents.dataflows.tools import make_tools, missing_data, missing_from

DEMO = get_provider({"data_vendor": "demo"})


def write_csv(folder, ticker, closes: dict[str, float]):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [EXPECTED_HEADER] + [f"{d},{c},{c + 1},{c - 1},{c},1000" for d, c in closes.items()]
    (folder / f"{ticker}.csv").write_text("\n".join(lines) + "\n")


def business_days(start: str, end: str, base: float = 100.0) -> dict[str, float]:
    return {d.date().isoformat(): base + i for i, d in enumerate(pd.bdate_range(start, end))}


@pytest.fixture()
def csv_cfg(ta_home):
    return resolve_config({"data_vendor": "csv"}), ta_home / "data"


class Broken(MarketDataProvider):
    vendor = "broken"
    label = "Broken source"

    def ohlcv(self, ticker, start, end):
        raise KeyError("surprise")


def test_session_for_names_a_weekend_and_is_silent_on_a_trading_day():
    assert session_for(DEMO, "NVDA", "2024-05-10") == ("2024-05-10", None)
    assert session_for(DEMO, "NVDA", "2024-05-11") == (
        "2024-05-10", "no session on 2024-05-11 (Saturday); using 2024-05-10")
    assert session_for(DEMO, "NVDA", "2024-05-12")[1] == "no session on 2024-05-12 (Sunday); using 2024-05-10"
    assert note_for("2024-05-27", "2024-05-24").startswith("no session on 2024-05-27 (Monday: a holiday")


def test_check_prices_returns_the_session_used():
    assert check_prices(DEMO, "NVDA", "2024-05-10") == "2024-05-10"
    assert check_prices(DEMO, "7203.T", "2024-05-11") == "2024-05-10"


def test_check_prices_before_the_demo_market_starts_says_what_to_do():
    with pytest.raises(DataNotFound) as exc:
        check_prices(DEMO, "NVDA", "1999-06-01")
    assert "synthetic demo data" in str(exc.value) and "choose a later date" in str(exc.value)
    assert errors.exit_code_for(exc.value) == errors.EXIT_DATA_UNAVAILABLE


def test_check_prices_without_a_csv_file_names_the_file_and_the_header(csv_cfg):
    cfg, folder = csv_cfg
    with pytest.raises(errors.DataUnavailable) as exc:
        check_prices(get_provider(cfg), "NVDA", "2024-05-10")
    assert str(exc.value).startswith(f"No CSV file NVDA.csv in {folder}: add one with the header {EXPECTED_HEADER}")
    assert exc.value.exit_code == 3 and not exc.value.resumable


def test_check_prices_when_the_csv_stops_early(csv_cfg):
    cfg, folder = csv_cfg
    write_csv(folder, "ACME", business_days("2024-01-02", "2024-04-01"))
    with pytest.raises(DataNotFound) as exc:
        check_prices(get_provider(cfg), "ACME", "2024-05-10")
    text = str(exc.value)
    assert "only up to 2024-04-01" in text and "add rows up to 2024-05-10" in text and "ACME.csv" in text
    # prices up to the Friday serve a Saturday analysis
    write_csv(folder, "ACME", business_days("2024-01-02", "2024-05-10"))
    assert check_prices(get_provider(cfg), "ACME", "2024-05-11") == "2024-05-10"


def test_a_provider_bug_becomes_a_source_failure_that_names_the_source():
    with pytest.raises(ProviderUnavailable, match="Broken source failed while reading the prices of NVDA"):
        check_prices(Broken(), "NVDA", "2024-05-10")


def test_window_gap_tells_a_benchmark_that_stops_early(csv_cfg):
    cfg, folder = csv_cfg
    write_csv(folder, "BENCH", business_days("2024-04-01", "2024-05-08"))
    p = get_provider(cfg)
    assert window_gap(p, "BENCH", "2024-05-01", "2024-05-08") is None
    reason = window_gap(p, "BENCH", "2024-05-10", "2024-05-17")
    assert reason and "stop at 2024-05-08" in reason and "2024-05-17" in reason
    assert "no price of BENCH" in window_gap(p, "BENCH", "2023-01-02", "2023-01-09")
    assert window_gap(DEMO, "^N225", "2024-05-10", "2024-05-17") is None


def test_closes_between_keeps_only_real_sessions():
    class Messy(MarketDataProvider):
        label = "messy"

        def ohlcv(self, ticker, start, end):
            idx = pd.to_datetime(["2024-05-06", "2024-05-07", "2024-05-08", "2024-05-08", "2024-05-09",
                                  "2024-05-13"])
            return pd.DataFrame({"Open": 1.0, "High": 1.0, "Low": 1.0, "Volume": 1,
                                 "Close": [10.0, float("inf"), 11.0, 12.0, -1.0, 13.0]}, index=idx)

    closes = Messy().closes_between("X", "2024-05-06", "2024-05-10")
    assert list(closes.index.strftime("%Y-%m-%d")) == ["2024-05-06", "2024-05-08"]
    assert closes.tolist() == [10.0, 12.0]  # inf, negative and after-end rows gone; last duplicate wins


def test_tools_name_the_non_trading_day():
    tools = make_tools({"data_vendor": "demo"}, as_of="2024-05-11")
    out = tools["get_stock_data"].invoke({"symbol": "NVDA", "start_date": "2024-05-01", "end_date": "2024-05-11"})
    assert "# Note: no session on 2024-05-11 (Saturday); using 2024-05-10." in out
    ind = tools["get_indicators"].invoke({"symbol": "NVDA", "indicator": "rsi", "curr_date": "2024-05-11"})
    assert "no session on 2024-05-11 (Saturday)" in ind
    fund = tools["get_fundamentals"].invoke({"ticker": "NVDA", "curr_date": "2024-05-11"})
    assert "no session on 2024-05-11 (Saturday); using 2024-05-10" in fund
    weekday = make_tools({"data_vendor": "demo"}, as_of="2024-05-10")["get_stock_data"].invoke(
        {"symbol": "NVDA", "start_date": "2024-05-01", "end_date": "2024-05-10"})
    assert "no session" not in weekday


def test_failed_tools_say_exactly_what_was_missing(csv_cfg):
    class NoFundamentals(type(DEMO)):
        def fundamentals(self, ticker, as_of):
            raise ProviderUnavailable("Yahoo Finance could not be reached: check the network.")

    tools = make_tools(as_of="2024-05-10", provider=NoFundamentals())
    prices = tools["get_stock_data"].invoke({"symbol": "NVDA", "start_date": "2024-05-01", "end_date": "2024-05-10"})
    fund = tools["get_fundamentals"].invoke({"ticker": "nvda", "curr_date": "2024-05-10"})
    assert fund.startswith(f"{DATA_UNAVAILABLE} fundamentals of NVDA: Yahoo Finance could not be reached")
    assert missing_data(prices) is None
    assert missing_data(fund) == "fundamentals of NVDA: Yahoo Finance could not be reached: check the network."
    cfg, folder = csv_cfg
    write_csv(folder, "NVDA", business_days("2024-04-01", "2024-05-10"))
    csv_tools = make_tools(cfg, as_of="2024-05-10")
    news = csv_tools["get_news"].invoke({"ticker": "NVDA", "start_date": "2024-05-01", "end_date": "2024-05-10"})
    assert news.startswith(f"{NO_DATA} company news of NVDA:")
    lines = missing_from([prices, fund, news, fund])
    assert lines[0].startswith("fundamentals of NVDA:") and lines[1].startswith("company news of NVDA:")
    assert len(lines) == 2
