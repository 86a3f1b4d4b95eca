"""The demo market: determinism (across processes), realism, point-in-time, consistency, labels."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tradingagents.dataflows import demo
from tradingagents.dataflows.interface import DataNotFound, get_provider, today
from tradingagents.default_config import BENCHMARK_MAP
from tradingagents.validation import InvalidDateError, InvalidTickerError

ROOT = Path(__file__).resolve().parents[1]
P = get_provider({"data_vendor": "demo"})

_DIGEST_SCRIPT = """
import hashlib, json, sys
from tradingagents.dataflows.interface import get_provider
p = get_provider({"data_vendor": "demo"})
out = {}
for t in ("NVDA", "7203.T", "SPY"):
    df = p.ohlcv(t, "2015-01-01", "2024-05-10")
    out[t] = hashlib.sha256(df.to_csv().encode()).hexdigest()
out["news"] = hashlib.sha256(json.dumps(p.news("NVDA", "2024-01-01", "2024-05-10")).encode()).hexdigest()
out["fund"] = hashlib.sha256(json.dumps(p.fundamentals("NVDA", "2024-05-10"), default=str).encode()).hexdigest()
print(json.dumps(out))
"""


def _digests_here() -> dict[str, str]:
    out = {}
    for t in ("NVDA", "7203.T", "SPY"):
        out[t] = hashlib.sha256(P.ohlcv(t, "2015-01-01", "2024-05-10").to_csv().encode()).hexdigest()
    out["news"] = hashlib.sha256(json.dumps(P.news("NVDA", "2024-01-01", "2024-05-10")).encode()).hexdigest()
    out["fund"] = hashlib.sha256(json.dumps(P.fundamentals("NVDA", "2024-05-10"), default=str).encode()).hexdigest()
    return out


def test_same_bytes_in_another_process_with_a_different_hash_seed(ta_home):
    env = {"PYTHONHASHSEED": "12345", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
           "TRADINGAGENTS_HOME": str(ta_home), "TZ": "Asia/Tokyo"}
    proc = subprocess.run([sys.executable, "-c", _DIGEST_SCRIPT], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == _digests_here()


def test_path_up_to_a_date_does_not_depend_on_how_far_it_is_generated():
    # the generator runs through the end of the current year; a shorter horizon gives the same prefix
    long_df, _ = demo._path("ACME", today().year)
    short_df, _ = demo._path("ACME", 2012)
    pd.testing.assert_frame_equal(long_df.loc[:"2012-12-31"], short_df)
    assert demo.earnings_calendar("ACME", 2012) == demo.earnings_calendar("ACME", today().year)[: len(
        demo.earnings_calendar("ACME", 2012))]


def test_different_tickers_differ_and_every_benchmark_exists():
    a = P.ohlcv("AAA", "2020-01-01", "2020-03-01")["Close"]
    b = P.ohlcv("AAB", "2020-01-01", "2020-03-01")["Close"]
    assert not np.allclose(a.to_numpy(), b.to_numpy())
    for bench in {"SPY", *BENCHMARK_MAP.values()}:
        df = P.ohlcv(bench, "2000-01-01", today().isoformat())
        assert df.index[0] == pd.Timestamp("2000-01-03"), bench
        assert len(df) > 6000, bench


def test_bars_are_coherent_business_days_and_never_after_end_or_today():
    df = P.ohlcv("NVDA", "2000-01-01", "2030-12-31")  # a future end is clamped to today
    assert df.index.max() <= pd.Timestamp(today())
    assert (df.index.day_of_week < 5).all()
    assert df.index.is_monotonic_increasing and df.index.is_unique
    assert (df["High"] >= df[["Open", "Close"]].max(axis=1)).all()
    assert (df["Low"] <= df[["Open", "Close"]].min(axis=1)).all()
    assert (df["Low"] > 0).all() and (df["Volume"] > 0).all()
    part = P.ohlcv("NVDA", "2024-05-01", "2024-05-10")
    assert part.index.min() >= pd.Timestamp("2024-05-01")
    assert part.index.max() == pd.Timestamp("2024-05-10")  # end inclusive (a Friday)
    assert list(part.columns) == ["Open", "High", "Low", "Close", "Volume"]


def test_dynamics_cluster_jump_and_follow_the_benchmark():
    s = P.ohlcv("MSFT", "2001-01-01", "2024-12-31")["Close"]
    m = P.ohlcv("SPY", "2001-01-01", "2024-12-31")["Close"]
    r = np.log(s).diff().dropna()
    rm = np.log(m).diff().dropna()
    beta = demo.profile("MSFT")["beta"]
    assert 0.3 < r.corr(rm) < 0.98
    est_beta = np.cov(r, rm)[0, 1] / rm.var()
    assert abs(est_beta - beta) < 0.25
    absr = rm.abs()
    assert absr.autocorr(lag=1) > 0.1  # volatility clustering
    kurt = ((rm - rm.mean()) ** 4).mean() / rm.var() ** 2
    assert kurt > 4  # fat tails (jumps, clustering)
    yearly = m.resample("YE").last().pct_change().dropna()
    assert (yearly > 0.1).any() and (yearly < -0.1).any()  # bull years and drawdown years
    assert 0.10 < rm.std() * np.sqrt(252) < 0.40


def test_validation_errors_come_from_the_foundation():
    with pytest.raises(InvalidTickerError):
        P.ohlcv("../etc/passwd", "2024-01-01", "2024-02-01")
    with pytest.raises(InvalidDateError):
        P.ohlcv("NVDA", "2024-13-01", "2024-02-01")
    with pytest.raises(InvalidDateError):
        P.fundamentals("NVDA", "2999-01-01")


def test_fundamentals_are_consistent_with_price_and_point_in_time():
    f = P.fundamentals("NVDA", "2024-05-10")
    close = P.ohlcv("NVDA", "2024-05-01", "2024-05-10")["Close"].iloc[-1]
    assert f["price"] == pytest.approx(close)
    assert f["market_cap"] == pytest.approx(close * f["shares_outstanding"], rel=1e-6)
    assert f["pe_ratio_ttm"] == pytest.approx(f["price"] / f["eps_ttm"], rel=0.01)
    assert f["last_earnings_date"] <= "2024-05-10"
    assert f["data_source"] == "synthetic demo data"
    # a weekend analysis date uses Friday's close
    sat = P.fundamentals("NVDA", "2024-05-11")
    assert sat["price_date"] == "2024-05-10"
    for key in ("price_to_book", "profit_margin", "revenue_growth_yoy", "debt_to_equity", "dividend_yield"):
        assert isinstance(f[key], float)


def test_statements_never_show_a_period_reported_after_as_of():
    cal = demo.earnings_calendar("NVDA", today().year)
    qe, edate, _ = next(c for c in cal if c[1] > pd.Timestamp("2024-04-01"))
    before = (edate - pd.Timedelta(days=1)).date().isoformat()
    on = edate.date().isoformat()
    q_before = P.statements("NVDA", "income_statement", "quarterly", before)
    q_on = P.statements("NVDA", "income_statement", "quarterly", on)
    assert qe not in q_before.columns and qe in q_on.columns
    assert all(c <= pd.Timestamp(on) for c in q_on.columns)
    annual = P.statements("NVDA", "balance_sheet", "annual", on)
    assert all(c.month == 12 and c.day == 31 for c in annual.columns)
    cf = P.statements("NVDA", "cashflow", "quarterly", on)
    assert (cf.loc["Free Cash Flow"] - cf.loc["Operating Cash Flow"] - cf.loc["Capital Expenditure"]).abs().max() <= 2
    with pytest.raises(DataNotFound):
        P.statements("SPY", "income_statement", "quarterly", on)


def test_news_is_dated_inside_the_window_and_follows_the_path():
    items = P.news("NVDA", "2023-01-01", "2024-05-10")
    assert items and all("2023-01-01" <= it["published"][:10] <= "2024-05-10" for it in items)
    kinds = {it["kind"] for it in items}
    assert {"earnings", "guidance", "large_move"} <= kinds
    assert all("synthetic demo data" in it["source"] and "synthetic demo data" in it["summary"] for it in items)
    df = P.ohlcv("NVDA", "2022-11-01", "2024-05-10")
    r = df["Close"].pct_change()
    for it in (i for i in items if i["kind"] == "large_move"):
        move = r.loc[it["published"][:10]]
        assert ("jump" in it["title"]) == (move > 0)
    # earnings headlines agree with the statements of that quarter
    e = next(i for i in items if i["kind"] == "earnings")
    day = e["published"][:10]
    eps = P.statements("NVDA", "income_statement", "quarterly", day).iloc[:, 0]["Diluted EPS"]
    assert f"EPS {eps:.2f}" in e["title"]


def test_global_news_and_social_posts():
    g = P.global_news("2024-05-10", 7)
    assert g and all("2024-05-04" <= it["published"][:10] <= "2024-05-10" for it in g)
    posts = P.social("NVDA", "2024-05-10", 30)
    assert posts and all(p["published"][:10] <= "2024-05-10" for p in posts)
    assert all("synthetic demo data" in p["text"] for p in posts)
    # tone follows the trailing 5-day return
    closes = P.ohlcv("NVDA", "2024-01-01", "2024-05-10")["Close"]
    wk = closes.pct_change(5)
    score = {"bullish": 1, "neutral": 0, "bearish": -1}
    by_day: dict[str, list[int]] = {}
    for p in P.social("NVDA", "2024-05-10", 120):
        by_day.setdefault(p["published"][:10], []).append(score[p["tone"]])
    days = sorted(by_day)
    tone = pd.Series([np.mean(by_day[d]) for d in days], index=pd.to_datetime(days))
    assert tone.corr(wk.reindex(tone.index)) > 0.4


def test_identity_is_labelled_and_uses_the_suffix():
    ident = P.identity("7203.T")
    assert ident["currency"] == "JPY" and "Tokyo" in ident["exchange"]
    assert ident["data_source"] == "synthetic demo data"
    assert set(ident) >= {"name", "sector", "industry", "exchange", "currency"}
    assert P.identity("^N225")["sector"] == "Index"
    assert P.label == "synthetic demo data"


def test_provider_instances_are_cached_per_vendor_and_paths(tmp_path):
    assert get_provider({"data_vendor": "demo"}) is get_provider(None)
    a = get_provider({"data_vendor": "csv", "csv_data_dir": str(tmp_path / "a")})
    b = get_provider({"data_vendor": "csv", "csv_data_dir": str(tmp_path / "b")})
    assert a is not b and a is get_provider({"data_vendor": "csv", "csv_data_dir": str(tmp_path / "a")})
    with pytest.raises(ValueError, match="Accepted: demo, yfinance, csv"):
        get_provider({"data_vendor": "bloomberg"})
