"""yfinance provider, replayed at the ``yfinance.Ticker`` boundary from recorded-shape fixtures."""

from __future__ import annotations

import json
from pathlib import Path

import curl_cffi.requests.exceptions as curl_exc
import pandas as pd
import pytest
import yfinance
from yfinance.exceptions import YFRateLimitError, YFTzMissingError

from tradingagents.config import resolve_config
from tradingagents.dataflows.interface import (
    DATA_UNAVAILABLE,
    NO_DATA,
    DataNotFound,
    ProviderUnavailable,
    get_provider,
)
from tradingagents.dataflows.tools import make_tools
from tradingagents.dataflows.yfinance_provider import SNAPSHOT_NOTE, UNREACHABLE, YFinanceProvider

DATA = Path(__file__).parent / "data" / "yfinance"


def load_history() -> pd.DataFrame:
    df = pd.read_csv(DATA / "AAPL_history.csv", index_col=0)
    df.index = pd.to_datetime(df.index, utc=True).tz_convert("America/New_York")
    df.index.name = "Date"
    return df


def close_on(df: pd.DataFrame, day: str) -> float:
    return float(df.loc[df.index.strftime("%Y-%m-%d") == day, "Close"].iloc[0])


def load_statement(name: str) -> pd.DataFrame:
    df = pd.read_csv(DATA / f"AAPL_{name}.csv", index_col=0)
    df.columns = pd.to_datetime(df.columns)
    return df


class FakeTicker:
    """Stands in for yfinance.Ticker: serves the fixtures, or fails as told."""

    created: list[str] = []
    plan: list[object] = []  # exceptions to raise on the next data accesses, in order

    def __init__(self, ticker):
        self.ticker = ticker
        FakeTicker.created.append(ticker)

    def _maybe_fail(self):
        if FakeTicker.plan:
            exc = FakeTicker.plan.pop(0)
            if exc is not None:
                raise exc

    def _known(self):
        return self.ticker in ("AAPL", "SPY")

    def history(self, period="1mo", interval="1d", start=None, end=None, auto_adjust=True, **kwargs):
        self._maybe_fail()
        assert auto_adjust is False  # the provider keeps the traded close
        if not self._known():
            return pd.DataFrame(columns=["Open", "High", "Low", "Close", "Adj Close", "Volume"])
        return load_history()

    @property
    def info(self):
        self._maybe_fail()
        return json.loads((DATA / "AAPL_info.json").read_text()) if self._known() else {"trailingPegRatio": None}

    @property
    def news(self):
        self._maybe_fail()
        return json.loads((DATA / "AAPL_news.json").read_text()) if self._known() else []

    def _stmt(self, name):
        self._maybe_fail()
        return load_statement(name) if self._known() else pd.DataFrame()

    quarterly_income_stmt = property(lambda self: self._stmt("quarterly_income_stmt"))
    income_stmt = property(lambda self: self._stmt("income_stmt"))
    quarterly_balance_sheet = property(lambda self: self._stmt("quarterly_balance_sheet"))
    balance_sheet = property(lambda self: self._stmt("balance_sheet"))
    quarterly_cashflow = property(lambda self: self._stmt("quarterly_cashflow"))
    cashflow = property(lambda self: self._stmt("cashflow"))


@pytest.fixture(autouse=True)
def fake_yf(monkeypatch):
    FakeTicker.created = []
    FakeTicker.plan = []
    monkeypatch.setattr(yfinance, "Ticker", FakeTicker)
    return FakeTicker


@pytest.fixture()
def prov(ta_home):
    sleeps: list[float] = []
    p = YFinanceProvider(ta_home / "cache", backoff=0.5, sleep=sleeps.append)
    p.sleeps = sleeps
    return p


def test_history_is_tz_naive_clipped_and_cached_on_disk(prov, ta_home, fake_yf):
    df = prov.ohlcv("aapl", "2024-04-01", "2024-05-10")
    assert df.index.tz is None and df.index.name == "Date"
    assert list(df.columns) == ["Open", "High", "Low", "Close", "Volume"]
    assert df.index.min() >= pd.Timestamp("2024-04-01") and df.index.max() == pd.Timestamp("2024-05-10")
    src = load_history()
    assert df["Close"].iloc[-1] == pytest.approx(close_on(src, "2024-05-10"))
    assert (ta_home / "cache" / "yfinance_cache.sqlite").exists()
    before = len(fake_yf.created)
    # a new provider on the same cache folder does not refetch (the run is repeated)
    again = YFinanceProvider(ta_home / "cache")
    pd.testing.assert_frame_equal(again.ohlcv("AAPL", "2024-04-01", "2024-05-10"), df, check_freq=False)
    assert len(fake_yf.created) == before and again.calls == 0


def test_rate_limit_retries_with_backoff_then_succeeds(prov, fake_yf):
    fake_yf.plan = [YFRateLimitError(), YFRateLimitError(), None]
    df = prov.ohlcv("AAPL", "2024-05-01", "2024-05-10")
    assert len(df) == 8
    assert prov.sleeps == [0.5, 1.0]


def test_rate_limit_gives_up_after_three_retries(prov, fake_yf):
    fake_yf.plan = [YFRateLimitError()] * 4
    with pytest.raises(ProviderUnavailable, match="rate limited"):
        prov.ohlcv("AAPL", "2024-05-01", "2024-05-10")
    assert prov.sleeps == [0.5, 1.0, 2.0]
    assert prov.calls == 4


def test_connection_error_is_a_plain_unavailable_message(ta_home, fake_yf):
    cfg = {"data_vendor": "yfinance", "data_retry_backoff": 0}
    p = get_provider(cfg)
    assert p.label == "Yahoo Finance" and p.cache_dir == Path(resolve_config(cfg)["data_cache_dir"])
    fake_yf.plan = [curl_exc.ConnectionError("Failed to resolve 'query2.finance.yahoo.com'")]
    with pytest.raises(ProviderUnavailable) as exc:
        p.ohlcv("AAPL", "2024-05-01", "2024-05-10")
    assert str(exc.value) == UNREACHABLE
    fake_yf.plan = [curl_exc.Timeout("timed out")]
    out = make_tools(cfg, as_of="2024-05-10")["get_stock_data"].invoke(
        {"symbol": "AAPL", "start_date": "2024-05-01", "end_date": "2024-05-10"})
    assert out.startswith(DATA_UNAVAILABLE) and "check the network, or choose the demo market" in out


def test_unknown_ticker_is_no_data(prov, fake_yf):
    with pytest.raises(DataNotFound, match="no prices for ZZZZ"):
        prov.ohlcv("ZZZZ", "2024-05-01", "2024-05-10")
    fake_yf.plan = [YFTzMissingError("QQQQ")]
    with pytest.raises(DataNotFound):
        prov.ohlcv("QQQQ", "2024-05-01", "2024-05-10")
    with pytest.raises(DataNotFound):
        prov.fundamentals("ZZZZ", "2024-05-10")


def test_fundamentals_are_marked_as_a_current_snapshot_for_past_dates(prov):
    f = prov.fundamentals("AAPL", "2024-05-10")
    assert f["market_cap"] == 2905000000000 and f["pe_ratio_ttm"] == 29.6 and f["name"] == "Apple Inc."
    assert SNAPSHOT_NOTE in f["note"]
    close = close_on(load_history(), "2024-05-10")
    assert f["market_cap_at_analysis_date"] == pytest.approx(round(close * 15204100000, 0))
    ident = prov.identity("AAPL")
    assert ident == {"name": "Apple Inc.", "sector": "Technology", "industry": "Consumer Electronics",
                     "exchange": "NasdaqGS", "currency": "USD", "data_source": "Yahoo Finance"}


def test_statements_hide_periods_not_yet_reported(prov):
    q = prov.statements("AAPL", "income_statement", "quarterly", "2024-05-10")
    # 2024-03-31 ended 40 days before: not assumed reported yet (45-day lag)
    assert pd.Timestamp("2024-03-31") not in q.columns and pd.Timestamp("2023-12-31") in q.columns
    q2 = prov.statements("AAPL", "income_statement", "quarterly", "2024-05-20")
    assert pd.Timestamp("2024-03-31") in q2.columns
    a = prov.statements("AAPL", "balance_sheet", "annual", "2023-12-01")
    assert list(a.columns) == [pd.Timestamp(d) for d in ("2022-09-30", "2021-09-30", "2020-09-30")]
    with pytest.raises(DataNotFound):
        prov.statements("AAPL", "cashflow", "annual", "2020-10-01")
    out = make_tools({"data_vendor": "yfinance"}, as_of="2024-05-10", provider=prov)["get_income_statement"].invoke(
        {"ticker": "AAPL", "freq": "quarterly", "curr_date": "2024-05-10"})
    assert "Diluted EPS,2.18" in out and "2024-03-31" not in out and "(source: Yahoo Finance)" in out


def test_news_window_and_structure(prov):
    items = prov.news("AAPL", "2024-04-20", "2024-05-10")
    assert [i["title"] for i in items] == ["Apple shares rise after record buyback announcement",
                                          "Apple's iPhone sales slip in China"]
    first = items[0]
    assert first["published"] == "2024-05-03T13:45:00" and first["source"] == "Reuters"
    assert first["summary"].startswith("Apple announced")
    assert prov.global_news("2024-06-06", 7)[0]["title"] == "Apple to unveil AI features at WWDC"
    tools = make_tools(as_of="2024-05-10", provider=prov)
    out = tools["get_news"].invoke({"ticker": "AAPL", "start_date": "2024-04-01", "end_date": "2024-06-30"})
    assert "WWDC" not in out and "buyback" in out
    assert tools["get_social_posts"].invoke({"ticker": "AAPL", "curr_date": "2024-05-10"}).startswith(NO_DATA)


class _Resp:
    def __init__(self, status):
        self.status_code = status


def test_http_answers_are_told_apart_from_no_connection(prov, fake_yf):
    fake_yf.plan = [curl_exc.HTTPError("HTTP Error 404", response=_Resp(404))]
    with pytest.raises(DataNotFound, match="404"):
        prov.fundamentals("AAPL", "2024-05-10")
    fake_yf.plan = [curl_exc.HTTPError("HTTP Error 503", response=_Resp(503))]
    with pytest.raises(ProviderUnavailable, match="HTTP 503") as exc:
        prov.ohlcv("AAPL", "2024-05-01", "2024-05-10")
    assert str(exc.value) != UNREACHABLE
    fake_yf.plan = [curl_exc.HTTPError("HTTP Error 429", response=_Resp(429)), None]
    assert len(prov.ohlcv("AAPL", "2024-05-01", "2024-05-10")) == 8
    assert prov.sleeps == [0.5]


def test_placeholder_identity_and_fundamental_values_are_dropped(prov, monkeypatch):
    info = {"longName": "  ", "shortName": "None", "sector": "n/a", "industry": "-", "exchange": "null",
            "fullExchangeName": "NasdaqGS", "currency": "USD", "trailingPE": "None", "marketCap": 100,
            "beta": " "}
    monkeypatch.setattr(FakeTicker, "info", property(lambda self: dict(info)))
    ident = prov.identity("AAPL")
    assert ident == {"name": "AAPL", "exchange": "NasdaqGS", "currency": "USD", "data_source": "Yahoo Finance"}
    fund = prov.fundamentals("AAPL", "2024-05-10")
    assert "pe_ratio_ttm" not in fund and "beta" not in fund and "sector" not in fund
    assert fund["market_cap"] == 100


def test_check_prices_offline_names_yahoo_and_what_to_do(prov, fake_yf):
    from tradingagents.dataflows.session import check_prices
    from tradingagents.errors import exit_code_for

    fake_yf.plan = [curl_exc.ConnectionError("Failed to resolve 'query2.finance.yahoo.com'")]
    with pytest.raises(ProviderUnavailable) as exc:
        check_prices(prov, "NVDA", "2024-05-10")
    assert str(exc.value).startswith("Yahoo Finance could not be reached: check the network")
    assert "demo market" in str(exc.value) and exit_code_for(exc.value) == 3
    with pytest.raises(DataNotFound, match="no prices for ZZZZ.*as Yahoo Finance spells it"):
        check_prices(prov, "ZZZZ", "2024-05-10")
