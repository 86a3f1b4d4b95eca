"""Hostile tickers and dates through every provider method and every tool.

Each call either works, raises one of the documented errors (validation, no data, unavailable),
or — for tools — returns a sentinel. No file is ever created outside the home.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
import yfinance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tradingagents.dataflows.interface import (
    DATA_UNAVAILABLE,
    NO_DATA,
    DataNotFound,
    ProviderUnavailable,
    get_provider,
)
from tradingagents.dataflows.tools import INVALID, make_tools
from tradingagents.validation import ValidationError

HOSTILE = [
    "../../etc/passwd", "/etc/passwd", "..", ".", "...", "A\x00B", "\x00", "C:\\Windows\\system32", "A" * 20_000,
    "%2e%2e%2f", "~", "~root", "CON", "NUL", "$(touch /tmp/pwned)", "`id`", "\u202eAAPL", "NVDA\n", "ＮＶＤＡ",
    "..A", "A..", "^", "=", "-", "+", "_", "a/b", "a\\b", " ", "", "\t", "😀", "ß", "İ", "DROP TABLE cache;--",
    "x' OR '1'='1", "1" * 32, "B" * 33, "2024-05-10",
]
HOSTILE_DATES = [
    "2024-02-30", "0000-01-01", "9999-12-31", "2024-05-10T00:00", "../2024-05-10", "2024-5-1", "", " ",
    "1" * 20_000, "2024-05-10\x00", "１９９９-01-01", "1899-12-31", "2024-05-10", "2030-01-01",
]
tickers = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=60), st.text(alphabet="A.^=_+-/\\\x00", max_size=8))
dates = st.one_of(st.sampled_from(HOSTILE_DATES), st.text(max_size=20), st.dates().map(str))
OK_ERRORS = (ValidationError, DataNotFound, ProviderUnavailable)
SKIP = {".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", ".hypothesis", "node_modules"}


def snapshot(*roots: Path, exclude: Path) -> set[str]:
    seen = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in SKIP and Path(dirpath, d) != exclude]
            for name in filenames:
                seen.add(os.path.join(dirpath, name))
    return seen


class EmptyTicker:
    seen: list[str] = []

    def __init__(self, ticker):
        EmptyTicker.seen.append(ticker)

    def history(self, **kwargs):
        return pd.DataFrame()

    info = property(lambda self: {})
    news = property(lambda self: [])
    quarterly_income_stmt = income_stmt = property(lambda self: pd.DataFrame())
    quarterly_balance_sheet = balance_sheet = property(lambda self: pd.DataFrame())
    quarterly_cashflow = cashflow = property(lambda self: pd.DataFrame())


@pytest.fixture()
def providers(ta_home, monkeypatch, tmp_path_factory):
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))  # a relative path would land in this session's temp
    monkeypatch.setattr(yfinance, "Ticker", EmptyTicker)
    EmptyTicker.seen = []
    (ta_home / "data").mkdir()
    (ta_home / "data" / "AAPL.csv").write_text("Date,Open,High,Low,Close,Volume\n2024-05-10,1,2,0.5,1.5,10\n")
    return {v: get_provider({"data_vendor": v}) for v in ("demo", "csv", "yfinance")}


def _call_all(p, t, d, n=3):
    today = pd.Timestamp.today().normalize()
    calls = [
        lambda: p.ohlcv(t, d, d), lambda: p.ohlcv(t, "2024-01-01", d), lambda: p.fundamentals(t, d),
        lambda: p.statements(t, "balance_sheet", "quarterly", d), lambda: p.statements(t, d, d, d),
        lambda: p.news(t, d, "2024-05-10"), lambda: p.global_news(d, n), lambda: p.social(t, d, n),
        lambda: p.identity(t),
    ]
    for call in calls:
        try:
            out = call()
        except OK_ERRORS as exc:
            assert str(exc).strip(), "errors must say what is wrong"
            continue
        if isinstance(out, pd.DataFrame) and isinstance(out.index, pd.DatetimeIndex) and len(out):
            assert out.index.max() <= today


@pytest.mark.slow
@settings(max_examples=120, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(t=tickers, d=dates, n=st.one_of(st.integers(-10**12, 10**12), st.floats(), st.text(max_size=5), st.none()))
def test_provider_methods_give_clear_errors_or_data(providers, ta_home, tmp_path_factory, t, d, n):
    base = tmp_path_factory.getbasetemp()  # this session's temp: the home's siblings and the cwd
    # an absolute or ~ path given as a ticker must never become a file either
    absolute = [os.path.expanduser(t[:200] + sfx) for sfx in ("", ".csv", ".sqlite")
                if t.startswith(("/", "~")) and "\x00" not in t]
    before = snapshot(base, exclude=ta_home)
    existed = {a for a in absolute if os.path.lexists(a)}
    for p in providers.values():
        _call_all(p, t, d, n)
    after = snapshot(base, exclude=ta_home)
    assert not (after - before), f"files created outside the home: {sorted(after - before)[:5]}"
    assert {a for a in absolute if os.path.lexists(a)} == existed
    for seen in EmptyTicker.seen:  # only validated tickers ever reach Yahoo
        assert seen == seen.strip().upper() and "/" not in seen and "\x00" not in seen and len(seen) <= 32


@pytest.mark.slow
@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(t=tickers, d=dates, n=st.one_of(st.integers(-10**9, 10**9), st.text(max_size=5), st.none()))
def test_tools_always_answer_with_text(providers, ta_home, t, d, n):
    prefixes = (NO_DATA, DATA_UNAVAILABLE, INVALID, "#")
    for vendor, p in providers.items():
        tools = make_tools(as_of="2024-05-10", provider=p)
        args = {
            "get_stock_data": {"symbol": t, "start_date": d, "end_date": d},
            "get_indicators": {"symbol": t, "indicator": t, "curr_date": d, "look_back_days": n},
            "get_fundamentals": {"ticker": t, "curr_date": d},
            "get_balance_sheet": {"ticker": t, "freq": t, "curr_date": d},
            "get_cashflow": {"ticker": t, "curr_date": d},
            "get_income_statement": {"ticker": t, "freq": "annual", "curr_date": d},
            "get_news": {"ticker": t, "start_date": d, "end_date": d},
            "get_global_news": {"curr_date": d, "look_back_days": n, "limit": n},
            "get_social_posts": {"ticker": t, "curr_date": d, "look_back_days": n},
        }
        for name, a in args.items():
            out = tools[name].invoke(a)
            assert isinstance(out, str) and out.startswith(prefixes), (vendor, name, out[:200])
            for arg in (t, d):  # a huge argument is never echoed back whole
                assert not (len(arg) > 1000 and arg in out), (vendor, name)
            if vendor == "demo":
                assert "synthetic demo data" in out


def test_known_hostile_tickers_are_rejected_with_the_accepted_form(providers):
    for t in ("../../etc/passwd", "A\x00B", "B" * 33, "😀", ""):
        with pytest.raises(ValidationError, match="letters, digits|empty|limit"):
            providers["csv"].ohlcv(t, "2024-01-01", "2024-02-01")
