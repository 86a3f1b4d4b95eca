"""Analyst tools: names, clamps to the analysis date, formats, sentinels and data faults."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from langchain_core.tools import BaseTool

from tradingagents.agents import analyst_tool_names, get_analyst_tools
from tradingagents.dataflows.indicators import SUPPORTED_INDICATORS
from tradingagents.dataflows.interface import (
    DATA_UNAVAILABLE,
    NO_DATA,
    DataNotFound,
    MarketDataProvider,
    ProviderUnavailable,
    get_provider,
)
from tradingagents.dataflows.tools import TOOL_NAMES, make_tools

AS_OF = "2024-05-10"
DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


@pytest.fixture(scope="module")
def tools():
    return make_tools({"data_vendor": "demo"}, as_of=AS_OF)


def dates_in(text: str) -> list[str]:
    return DATE_RE.findall(text)


def test_tool_names_and_analyst_sets(tools):
    assert set(tools) == set(TOOL_NAMES)
    assert all(isinstance(t, BaseTool) and t.name == n for n, t in tools.items())
    analyst_tools = {key: analyst_tool_names(key) for key in ("market", "social", "news", "fundamentals")}
    assert analyst_tools == {
        "market": ["get_stock_data", "get_indicators"], "social": ["get_social_posts", "get_news"],
        "news": ["get_news", "get_global_news"],
        "fundamentals": ["get_fundamentals", "get_balance_sheet", "get_cashflow", "get_income_statement"]}
    for analyst, names in analyst_tools.items():
        assert [t.name for t in get_analyst_tools(analyst, {"data_vendor": "demo"}, as_of=AS_OF)] == names
    with pytest.raises(ValueError, match="Accepted: market, social, news, fundamentals"):
        get_analyst_tools("macro")


def test_stock_data_is_a_csv_table_matching_the_provider(tools):
    out = tools["get_stock_data"].invoke({"symbol": "NVDA", "start_date": "2024-04-01", "end_date": AS_OF})
    assert "synthetic demo data" in out.splitlines()[0]
    rows = [line for line in out.splitlines() if DATE_RE.match(line)]
    df = get_provider().ohlcv("NVDA", "2024-04-01", AS_OF)
    assert len(rows) == len(df)
    d, o, h, lo, c, v = rows[-1].split(",")
    last = df.iloc[-1]
    assert d == AS_OF and float(c) == pytest.approx(round(last["Close"], 2)) and int(v) == last["Volume"]
    assert "Date,Open,High,Low,Close,Volume" in out


def test_every_tool_clamps_to_the_analysis_date(tools):
    late = "2024-08-30"
    calls = {
        "get_stock_data": {"symbol": "NVDA", "start_date": "2024-04-01", "end_date": late},
        "get_indicators": {"symbol": "NVDA", "indicator": "rsi", "curr_date": late, "look_back_days": 200},
        "get_fundamentals": {"ticker": "NVDA", "curr_date": late},
        "get_balance_sheet": {"ticker": "NVDA", "freq": "quarterly", "curr_date": late},
        "get_cashflow": {"ticker": "NVDA", "freq": "quarterly", "curr_date": late},
        "get_income_statement": {"ticker": "NVDA", "freq": "annual", "curr_date": late},
        "get_news": {"ticker": "NVDA", "start_date": "2024-01-01", "end_date": late},
        "get_global_news": {"curr_date": late, "look_back_days": 90, "limit": 50},
        "get_social_posts": {"ticker": "NVDA", "curr_date": late, "look_back_days": 30},
    }
    for name, args in calls.items():
        out = tools[name].invoke(args)
        assert not out.startswith((NO_DATA, DATA_UNAVAILABLE, "INVALID")), (name, out[:200])
        assert max(dates_in(out)) <= AS_OF, name
        assert "synthetic demo data" in out, name
    # the same calls without an analysis date reach later data (so the clamp is what cut them)
    free = make_tools({"data_vendor": "demo"})
    out = free["get_stock_data"].invoke(calls["get_stock_data"])
    assert max(dates_in(out)) > AS_OF


def test_a_range_entirely_after_the_analysis_date_is_no_data(tools):
    out = tools["get_stock_data"].invoke({"symbol": "NVDA", "start_date": "2024-06-01", "end_date": "2024-06-30"})
    assert out.startswith(NO_DATA) and "not estimate or invent" in out and "synthetic demo data" in out
    out = tools["get_news"].invoke({"ticker": "NVDA", "start_date": "2024-06-01", "end_date": "2024-06-30"})
    assert out.startswith(NO_DATA)


def test_indicator_lines_are_parseable_and_match_compute(tools):
    out = tools["get_indicators"].invoke({"symbol": "NVDA", "indicator": "macd", "curr_date": AS_OF,
                                          "look_back_days": 20})
    lines = out.splitlines()
    assert lines[0].startswith("# macd for NVDA") and SUPPORTED_INDICATORS["macd"] in lines[1]
    values = dict(line.split(": ") for line in lines if DATE_RE.match(line))
    assert max(values) == AS_OF and min(values) >= "2024-04-20"
    assert all(re.fullmatch(r"-?\d+\.\d{2}", v) for v in values.values())
    from tradingagents.dataflows.indicators import compute_indicator

    hist = get_provider().ohlcv("NVDA", "2015-01-01", AS_OF)
    assert float(values[AS_OF]) == pytest.approx(round(compute_indicator(hist, "macd").iloc[-1], 2), abs=0.011)
    several = tools["get_indicators"].invoke({"symbol": "NVDA", "indicator": "rsi, atr", "curr_date": AS_OF})
    assert "# rsi for NVDA" in several and "# atr for NVDA" in several


def test_bad_arguments_list_what_is_accepted(tools):
    out = tools["get_indicators"].invoke({"symbol": "NVDA", "indicator": "supertrend", "curr_date": AS_OF})
    assert out.startswith("INVALID_ARGUMENT:") and all(n in out for n in SUPPORTED_INDICATORS)
    out = tools["get_stock_data"].invoke({"symbol": "NV DA/..", "start_date": "2024-01-01", "end_date": AS_OF})
    assert out.startswith("INVALID_ARGUMENT:") and "letters, digits" in out
    out = tools["get_stock_data"].invoke({"symbol": "NVDA", "start_date": "yesterday", "end_date": AS_OF})
    assert out.startswith("INVALID_ARGUMENT:") and "YYYY-MM-DD" in out
    out = tools["get_balance_sheet"].invoke({"ticker": "NVDA", "freq": "weekly", "curr_date": AS_OF})
    assert out.startswith("INVALID_ARGUMENT:") and "quarterly, annual" in out
    out = tools["get_stock_data"].invoke({"symbol": "NVDA"})  # missing arguments: schema error, no crash
    assert out.startswith("INVALID_ARGUMENT:")
    out = tools["get_global_news"].invoke({"curr_date": AS_OF, "limit": "lots"})
    assert out.startswith("INVALID_ARGUMENT:") and "whole number" in out


def test_statements_and_fundamentals_text(tools):
    out = tools["get_income_statement"].invoke({"ticker": "NVDA", "freq": "quarterly", "curr_date": AS_OF})
    header = out.splitlines()[1].split(",")
    assert header[0] == "Item" and all(d <= AS_OF for d in header[1:])
    assert any(line.startswith("Total Revenue,") for line in out.splitlines())
    f = tools["get_fundamentals"].invoke({"ticker": "NVDA", "curr_date": AS_OF})
    assert "market_cap: " in f and "pe_ratio_ttm: " in f and "synthetic demo data" in f


class _Faulty(MarketDataProvider):
    label = "faulty test source"

    def __init__(self, mode: str):
        self.mode = mode

    def _fail(self):
        if self.mode == "raise":
            raise ProviderUnavailable("the server said 503")
        if self.mode == "crash":
            raise KeyError("boom")
        if self.mode == "missing":
            raise DataNotFound("nothing here")

    def ohlcv(self, ticker, start, end):
        self._fail()
        if self.mode == "empty":
            return pd.DataFrame()
        if self.mode == "garbage":
            return "not a frame"
        idx = pd.bdate_range("2023-01-02", "2023-12-29", name="Date")  # stale: ends months before
        if self.mode == "future":
            idx = pd.bdate_range("2024-04-01", "2024-06-28", name="Date")  # leaks rows after the date
        return pd.DataFrame({"Open": 1.0, "High": 2.0, "Low": 0.5, "Close": 1.5, "Volume": 10}, index=idx)

    def fundamentals(self, ticker, as_of):
        self._fail()
        return {}

    def statements(self, ticker, kind, freq, as_of):
        self._fail()
        return pd.DataFrame()

    def news(self, ticker, start, end):
        self._fail()
        if self.mode == "future":
            return [{"title": "from the future", "published": "2024-06-01T10:00:00", "summary": "", "source": "x"}]
        return []

    def global_news(self, as_of, look_back_days=7):
        return self.news("X", as_of, as_of)

    def social(self, ticker, as_of, look_back_days=7):
        return self.news(ticker, as_of, as_of)


ALL_CALLS = {
    "get_stock_data": {"symbol": "NVDA", "start_date": "2024-01-01", "end_date": AS_OF},
    "get_indicators": {"symbol": "NVDA", "indicator": "rsi", "curr_date": AS_OF},
    "get_fundamentals": {"ticker": "NVDA", "curr_date": AS_OF},
    "get_balance_sheet": {"ticker": "NVDA", "curr_date": AS_OF},
    "get_cashflow": {"ticker": "NVDA", "curr_date": AS_OF},
    "get_income_statement": {"ticker": "NVDA", "curr_date": AS_OF},
    "get_news": {"ticker": "NVDA", "start_date": "2024-05-01", "end_date": AS_OF},
    "get_global_news": {"curr_date": AS_OF},
    "get_social_posts": {"ticker": "NVDA", "curr_date": AS_OF},
}


@pytest.mark.parametrize("mode,prefix", [("raise", DATA_UNAVAILABLE), ("crash", DATA_UNAVAILABLE),
                                         ("missing", NO_DATA), ("empty", NO_DATA)])
def test_faults_become_sentinels(mode, prefix):
    tools = make_tools(as_of=AS_OF, provider=_Faulty(mode))
    for name, args in ALL_CALLS.items():
        out = tools[name].invoke(args)
        assert out.startswith(prefix), (mode, name, out)
        assert "faulty test source" in out
    if mode == "raise":
        assert "503" in tools["get_stock_data"].invoke(ALL_CALLS["get_stock_data"])


def test_stale_and_malformed_prices_and_leaked_future_rows():
    stale = make_tools(as_of=AS_OF, provider=_Faulty("stale"))
    out = stale["get_stock_data"].invoke(ALL_CALLS["get_stock_data"])
    assert out.startswith(NO_DATA)  # nothing in 2024 at all
    out = stale["get_indicators"].invoke(ALL_CALLS["get_indicators"])
    assert out.startswith(DATA_UNAVAILABLE) and "stale" in out and "2023-12-29" in out
    out = stale["get_stock_data"].invoke({"symbol": "NVDA", "start_date": "2023-06-01", "end_date": AS_OF})
    assert out.startswith(DATA_UNAVAILABLE) and "stale" in out
    garbage = make_tools(as_of=AS_OF, provider=_Faulty("garbage"))
    assert garbage["get_stock_data"].invoke(ALL_CALLS["get_stock_data"]).startswith(DATA_UNAVAILABLE)
    future = make_tools(as_of=AS_OF, provider=_Faulty("future"))
    out = future["get_stock_data"].invoke(ALL_CALLS["get_stock_data"])
    assert max(dates_in(out)) == AS_OF
    assert future["get_news"].invoke(ALL_CALLS["get_news"]).startswith(NO_DATA)


def test_tools_work_inside_a_langgraph_toolnode():
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    builder = StateGraph(MessagesState)
    builder.add_node("tools_market", ToolNode(get_analyst_tools("market", as_of=AS_OF)))
    builder.add_edge(START, "tools_market")
    builder.add_edge("tools_market", END)
    graph = builder.compile()
    msg = AIMessage(content="", tool_calls=[
        {"name": "get_indicators", "args": {"symbol": "NVDA", "indicator": "bogus", "curr_date": AS_OF},
         "id": "c1", "type": "tool_call"},
        {"name": "get_stock_data", "args": {"symbol": "NVDA", "start_date": "2024-05-06", "end_date": "2025-01-01"},
         "id": "c2", "type": "tool_call"}])
    result = graph.invoke({"messages": [msg]})
    contents = {m.tool_call_id: m.content for m in result["messages"][1:]}
    assert contents["c1"].startswith("INVALID_ARGUMENT:")
    assert max(dates_in(contents["c2"])) == AS_OF


def test_tool_functions_have_evaluated_type_hints():
    """LangChain reads each tool function's type hints on every call: string annotations (a
    ``from __future__ import annotations`` in the tools module) would be compiled again each time."""
    from tradingagents.config import resolve_config
    from tradingagents.dataflows.tools import make_tools

    tools = make_tools(resolve_config({"data_vendor": "demo"}), as_of="2024-05-10")
    assert tools
    for name, tool in tools.items():
        hints = getattr(tool, "func", None).__annotations__
        assert hints and not any(isinstance(h, str) for h in hints.values()), name


def test_the_tools_read_as_langchains_structured_tools_same_schema_same_run_parameters():
    import inspect

    from langchain_core.tools import StructuredTool

    for name, tool in make_tools({}, as_of="2024-05-10").items():
        plain = StructuredTool.from_function(func=tool.func, name=name, description=tool.description)
        assert isinstance(tool, StructuredTool)
        assert tool.args == plain.args and tool.tool_call_schema.model_json_schema() == \
            plain.tool_call_schema.model_json_schema(), name
        # the signatures LangChain reads on every call: worked out once, the same as computed afresh
        assert list(inspect.signature(tool._run).parameters) == list(inspect.signature(plain._run).parameters)
        assert inspect.signature(tool.func) == inspect.signature(tool.func.__wrapped__)
