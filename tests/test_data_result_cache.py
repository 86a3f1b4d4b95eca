"""The in-process cache of tool results (demo market): the same bytes as without it, never a result
of another analysis date, never a result of a replaced data method, nothing cached for other sources."""

from __future__ import annotations

import re

import pytest
from langchain_core.runnables import RunnableConfig

from tradingagents.dataflows import tools as T
from tradingagents.dataflows.demo import DemoProvider
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.provider import MarketDataProvider

DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
LATE, EARLY = "2024-05-10", "2024-03-01"

# one call of every tool, with arguments that reach past EARLY (so a later run's result would leak)
CALLS = [
    ("get_stock_data", {"symbol": "NVDA", "start_date": "2024-01-02", "end_date": LATE}),
    ("get_indicators", {"symbol": "NVDA", "indicator": "rsi,macd", "curr_date": LATE, "look_back_days": 30}),
    ("get_fundamentals", {"ticker": "NVDA", "curr_date": LATE}),
    ("get_balance_sheet", {"ticker": "NVDA", "freq": "quarterly", "curr_date": LATE}),
    ("get_cashflow", {"ticker": "NVDA", "freq": "annual", "curr_date": LATE}),
    ("get_income_statement", {"ticker": "NVDA", "curr_date": LATE}),
    ("get_news", {"ticker": "NVDA", "start_date": "2024-01-02", "end_date": LATE}),
    ("get_global_news", {"curr_date": LATE, "look_back_days": 7}),
    ("get_social_posts", {"ticker": "NVDA", "curr_date": LATE}),
]


@pytest.fixture(autouse=True)
def empty_cache(ta_home):
    T.clear_result_cache()
    yield
    T.clear_result_cache()


def run_config(as_of: str) -> RunnableConfig:
    return {"configurable": {T.AS_OF_KEY: as_of}}


def uncached(name: str, args: dict, as_of: str) -> str:
    """What the tool computes with no cache at all (a fresh tool set, the cache emptied first)."""
    T.clear_result_cache()
    out = T.make_tools({"data_vendor": "demo"}, as_of=as_of)[name].invoke(args)
    T.clear_result_cache()
    return out


@pytest.mark.parametrize("name,args", CALLS, ids=[c[0] for c in CALLS])
def test_a_cached_result_is_the_same_bytes_as_a_computed_one(name, args):
    tools = T.shared_tools({"data_vendor": "demo"})
    first = tools[name].invoke(args, config=run_config(LATE))
    assert len(T._RESULTS) == 1  # it was kept
    again = tools[name].invoke(args, config=run_config(LATE))
    assert again == first == uncached(name, args, LATE)
    assert not first.startswith((T.INVALID, T.NO_DATA, T.DATA_UNAVAILABLE)), first[:200]


@pytest.mark.parametrize("name,args", CALLS, ids=[c[0] for c in CALLS])
def test_a_result_of_a_later_analysis_date_never_answers_an_earlier_run(name, args):
    """Same tool, same arguments, the runs' dates differ: a key without the date would hand the
    earlier run the later run's data."""
    expected = uncached(name, args, EARLY)
    tools = T.shared_tools({"data_vendor": "demo"})
    late = tools[name].invoke(args, config=run_config(LATE))
    early = tools[name].invoke(args, config=run_config(EARLY))
    assert early != late
    assert early == expected
    body = "\n".join(line for line in early.splitlines() if not line.startswith("# "))
    assert all(d <= EARLY for d in DATE_RE.findall(body)), [d for d in DATE_RE.findall(body) if d > EARLY][:5]
    # and the later run still gets its own (both are kept, under their own dates)
    assert tools[name].invoke(args, config=run_config(LATE)) == late
    assert len(T._RESULTS) == 2


def test_one_date_tools_share_the_cache_with_per_run_tools_only_under_the_same_date():
    name, args = CALLS[0]
    fixed = T.make_tools({"data_vendor": "demo"}, as_of=EARLY)[name].invoke(args)
    per_run = T.shared_tools({"data_vendor": "demo"})[name].invoke(args, config=run_config(LATE))
    assert fixed != per_run and max(DATE_RE.findall(fixed.split("\n", 2)[-1])) <= EARLY


def test_a_replaced_data_method_is_called_not_answered_from_the_cache(monkeypatch):
    tools = T.shared_tools({"data_vendor": "demo"})
    name, args = CALLS[0]
    real = tools[name].invoke(args, config=run_config(LATE))

    def down(self, ticker, start, end):
        raise T.ProviderUnavailable("the demo feed is down (test)")

    monkeypatch.setattr(DemoProvider, "ohlcv", down)
    out = tools[name].invoke(args, config=run_config(LATE))
    assert out.startswith(T.DATA_UNAVAILABLE) and "down (test)" in out
    monkeypatch.undo()
    assert tools[name].invoke(args, config=run_config(LATE)) == real


def test_failures_and_bad_arguments_are_not_kept():
    tools = T.shared_tools({"data_vendor": "demo"})
    out = tools["get_stock_data"].invoke({"symbol": "NVDA", "start_date": "2024-13-40", "end_date": LATE},
                                         config=run_config(LATE))
    assert out.startswith(T.INVALID)
    # no run date: the per-run tool refuses, and nothing is kept under a missing date
    assert tools["get_global_news"].invoke({"curr_date": LATE}).startswith(T.INVALID)
    assert len(T._RESULTS) == 0


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(T, "RESULT_CACHE_MAX", 3)
    tools = T.shared_tools({"data_vendor": "demo"})
    for days in range(1, 7):
        tools["get_global_news"].invoke({"curr_date": LATE, "look_back_days": days}, config=run_config(LATE))
    assert len(T._RESULTS) == 3


def test_sources_without_a_token_are_never_cached(tmp_path):
    """A live or file source (and the base class) gives no token: every call reaches the source."""
    calls = []

    class Counting(MarketDataProvider):
        label = "counting"

        def global_news(self, as_of, look_back_days=7):
            calls.append(as_of)
            return [{"title": "x", "published": as_of, "source": "s", "summary": ""}]

    tools = T.make_tools(provider=Counting(), as_of=LATE)
    a = tools["get_global_news"].invoke({"curr_date": LATE})
    b = tools["get_global_news"].invoke({"curr_date": LATE})
    assert a == b and len(calls) == 2 and len(T._RESULTS) == 0
    assert get_provider({"data_vendor": "csv", "csv_data_dir": str(tmp_path)}).cache_token() is None


def test_clear_result_cache_drops_the_kept_results():
    T.shared_tools({"data_vendor": "demo"})["get_global_news"].invoke({"curr_date": LATE}, config=run_config(LATE))
    assert len(T._RESULTS) == 1
    T.clear_result_cache()
    assert len(T._RESULTS) == 0
