"""CSV provider (the user's own prices) and settlement returns aligned by date."""

from __future__ import annotations

import datetime as _dt

import pandas as pd
import pytest

from tradingagents.config import resolve_config
from tradingagents.dataflows.csv_provider import EXPECTED_HEADER
from tradingagents.dataflows.interface import NO_DATA, DataNotFound, get_provider
from tradingagents.dataflows.returns import compute_returns
from tradingagents.dataflows.tools import make_tools
from tradingagents.validation import InvalidTickerError, ValidationError


def write_csv(folder, ticker, rows, header=EXPECTED_HEADER):
    folder.mkdir(parents=True, exist_ok=True)
    lines = [header] + [",".join(str(x) for x in r) for r in rows]
    (folder / f"{ticker}.csv").write_text("\n".join(lines) + "\n")


def rows_for(closes: dict[str, float]):
    return [(d, c, c + 1, c - 1, c, 1000) for d, c in closes.items()]


@pytest.fixture()
def csv_home(ta_home):
    cfg = resolve_config({"data_vendor": "csv"})
    return cfg, ta_home / "data"


def test_default_folder_is_home_data_and_prices_are_read(csv_home):
    cfg, folder = csv_home
    write_csv(folder, "ACME", rows_for({"2024-05-08": 10.0, "2024-05-06": 9.0, "2024-05-07": 9.5, "2024-05-09": 11.0}))
    p = get_provider(cfg)
    assert p.label == f"CSV files in {folder}"
    df = p.ohlcv("acme", "2024-05-07", "2024-05-08")
    assert list(df.index.strftime("%Y-%m-%d")) == ["2024-05-07", "2024-05-08"]  # sorted, end inclusive
    assert list(df.columns) == ["Open", "High", "Low", "Close", "Volume"]
    assert df["Close"].tolist() == [9.5, 10.0]
    # the file changes → the provider sees the change
    write_csv(folder, "ACME", rows_for({"2024-05-07": 20.0, "2024-05-08": 21.0, "2024-05-09": 22.5}))
    assert p.ohlcv("ACME", "2024-05-01", "2024-05-09")["Close"].tolist() == [20.0, 21.0, 22.5]


def test_missing_file_and_missing_column_are_clear(csv_home):
    cfg, folder = csv_home
    p = get_provider(cfg)
    with pytest.raises(DataNotFound) as exc:
        p.ohlcv("NOPE", "2024-01-01", "2024-02-01")
    assert f"No CSV file NOPE.csv in {folder}: add one" in str(exc.value) and EXPECTED_HEADER in str(exc.value)
    write_csv(folder, "BAD", [("2024-05-06", 1, 2, 0.5, 1.5)], header="Date,Open,High,Low,Close")
    with pytest.raises(DataNotFound) as exc:
        p.ohlcv("BAD", "2024-01-01", "2024-06-01")
    assert "Volume" in str(exc.value) and "BAD.csv" in str(exc.value) and EXPECTED_HEADER in str(exc.value)
    (folder / "EMPTY.csv").write_text("")
    with pytest.raises(DataNotFound, match="EMPTY.csv"):
        p.ohlcv("EMPTY", "2024-01-01", "2024-06-01")
    tools = make_tools(cfg, as_of="2024-05-10")
    out = tools["get_stock_data"].invoke({"symbol": "NOPE", "start_date": "2024-01-01", "end_date": "2024-05-10"})
    assert out.startswith(NO_DATA) and "NOPE.csv" in out and EXPECTED_HEADER in out
    for name, args in {"get_fundamentals": {"ticker": "ACME", "curr_date": "2024-05-10"},
                       "get_social_posts": {"ticker": "ACME", "curr_date": "2024-05-10"},
                       "get_news": {"ticker": "ACME", "start_date": "2024-05-01", "end_date": "2024-05-10"}}.items():
        assert tools[name].invoke(args).startswith(NO_DATA), name


def test_csv_path_cannot_escape_the_folder(csv_home, tmp_path):
    cfg, folder = csv_home
    p = get_provider(cfg)
    for bad in ("../x", "/etc/passwd", "a\x00b", "..", ""):
        with pytest.raises(InvalidTickerError):
            p.ohlcv(bad, "2024-01-01", "2024-02-01")
    assert p.path_for("..A").parent == folder  # a leading dot is made safe, not a parent reference


def test_returns_on_a_known_calendar(csv_home):
    cfg, folder = csv_home
    # a holiday (05-08 missing) in the ticker's own calendar; the benchmark trades that day
    stock = {"2024-05-03": 100.0, "2024-05-06": 101.0, "2024-05-07": 102.0, "2024-05-09": 104.0,
             "2024-05-10": 103.0, "2024-05-13": 110.0, "2024-05-14": 111.0}
    bench = {"2024-05-03": 50.0, "2024-05-06": 50.5, "2024-05-07": 51.0, "2024-05-08": 51.5, "2024-05-09": 52.0,
             "2024-05-10": 52.5, "2024-05-13": 55.0, "2024-05-14": 54.0}
    write_csv(folder, "ACME", rows_for(stock))
    write_csv(folder, "SPY", rows_for(bench))
    p = get_provider(cfg)
    # decided on Saturday 2024-05-04: start = Friday's close; 3 trading days of ACME later = 05-09
    r = compute_returns(p, "ACME", "2024-05-04", holding_days=3, config=cfg)
    assert r["start_date"] == "2024-05-03" and r["end_date"] == "2024-05-09"
    assert r["raw"] == pytest.approx(104 / 100 - 1)
    assert r["alpha"] == pytest.approx((104 / 100 - 1) - (52.0 / 50.0 - 1))
    assert r["benchmark"] == "SPY" and r["holding"] == 3
    assert (r["start_close"], r["end_close"]) == (100.0, 104.0)
    r5 = compute_returns(p, "ACME", "2024-05-06", holding_days=5, config=cfg)
    assert r5["end_date"] == "2024-05-14" and r5["raw"] == pytest.approx(111 / 101 - 1)
    # the window has not closed in the data → pending
    assert compute_returns(p, "ACME", "2024-05-10", holding_days=5, config=cfg) is None
    # an explicit benchmark, aligned on or before each date
    write_csv(folder, "IDX", rows_for({"2024-05-02": 10.0, "2024-05-08": 12.0}))
    rb = compute_returns(p, "ACME", "2024-05-04", holding_days=3, benchmark="IDX", config=cfg)
    assert rb["alpha"] == pytest.approx(0.04 - (12.0 / 10.0 - 1))
    with pytest.raises(ValidationError):
        compute_returns(p, "ACME", "2024-05-04", holding_days=0)


def test_returns_pending_until_today_has_the_end_close():
    p = get_provider({"data_vendor": "demo"})
    today = _dt.date.today()
    assert compute_returns(p, "NVDA", today.isoformat()) is None
    past = (today - _dt.timedelta(days=60)).isoformat()
    r = compute_returns(p, "NVDA", past)
    assert r is not None and r["end_date"] <= today.isoformat()
    closes = p.ohlcv("NVDA", r["start_date"], r["end_date"])["Close"]
    assert len(closes) == 6 and r["raw"] == pytest.approx(closes.iloc[-1] / closes.iloc[0] - 1)
    spy = p.ohlcv("SPY", r["start_date"], r["end_date"])["Close"]
    assert r["alpha"] == pytest.approx(r["raw"] - (spy.iloc[-1] / spy.iloc[0] - 1))
    jp = compute_returns(p, "7203.T", "2024-05-10")
    assert jp["benchmark"] == "^N225"
    cfg = {"benchmark_ticker": "QQQ"}
    assert compute_returns(p, "7203.T", "2024-05-10", config=cfg)["benchmark"] == "QQQ"
    assert isinstance(pd.Timestamp(r["start_date"]), pd.Timestamp)


def test_vendor_comes_from_each_config_or_the_environment(csv_home, monkeypatch):
    cfg, folder = csv_home
    write_csv(folder, "ACME", rows_for({"2024-05-09": 7.0, "2024-05-10": 7.5}))
    args = {"symbol": "ACME", "start_date": "2024-05-01", "end_date": "2024-05-10"}
    csv_tools = make_tools(cfg, as_of="2024-05-10")
    demo_tools = make_tools({"data_vendor": "demo"}, as_of="2024-05-10")
    csv_out = csv_tools["get_stock_data"].invoke(args)
    demo_out = demo_tools["get_stock_data"].invoke(args)
    assert "2024-05-10,7.50,8.50,6.50,7.50,1000" in csv_out and "synthetic demo data" not in csv_out
    assert "synthetic demo data" in demo_out and "7.50,8.50,6.50,7.50,1000" not in demo_out
    monkeypatch.setenv("TRADINGAGENTS_DATA_VENDOR", "csv")
    assert get_provider().vendor == "csv"
    assert get_provider({"data_vendor": "demo"}).vendor == "demo"  # the caller's config wins


def test_a_symlinked_file_in_the_folder_is_read(csv_home, tmp_path):
    cfg, folder = csv_home
    elsewhere = tmp_path / "mine"
    write_csv(elsewhere, "REAL", rows_for({"2024-05-09": 3.0, "2024-05-10": 3.5}))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "LINKED.csv").symlink_to(elsewhere / "REAL.csv")
    assert get_provider(cfg).ohlcv("LINKED", "2024-05-01", "2024-05-10")["Close"].tolist() == [3.0, 3.5]
