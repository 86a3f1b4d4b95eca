"""The whole graph offline: order of nodes, events, results, the log, settlement, validation."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.graph_helpers import CallCounter
from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.session import session_for
from tradingagents.errors import ConfigError, RunStopped
from tradingagents.graph import checkpointer as ckpt
from tradingagents.graph.events import RunEvent
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.rating import RATINGS_5_TIER
from tradingagents.storage.files_runs import list_runs, load_run
from tradingagents.team import TEAMS
from tradingagents.validation import ValidationError

DATE = "2024-05-10"
AGENT_NODES = {"Market Analyst", "Sentiment Analyst", "News Analyst", "Fundamentals Analyst", "Bull Researcher",
               "Bear Researcher", "Research Manager", "Trader", "Aggressive Analyst", "Conservative Analyst",
               "Neutral Analyst", "Portfolio Manager"}
# each analyst's data: (node, its ToolNode, [(tool, args)] in order): the calls its model asks for (the
# offline engine follows the analyst's plan) or, in the prefetch shape, the node makes itself
PREFETCHED = [
    ("Market Analyst", "tools_market", [
        ("get_stock_data", {"symbol": "NVDA", "start_date": "2024-02-09", "end_date": DATE}),
        ("get_indicators", {"symbol": "NVDA", "indicator": "close_50_sma,close_200_sma,macd,macds,rsi,boll_ub,"
                            "boll_lb,atr", "curr_date": DATE, "look_back_days": 30})]),
    ("Sentiment Analyst", "tools_social", [
        ("get_social_posts", {"ticker": "NVDA", "curr_date": DATE, "look_back_days": 7}),
        ("get_news", {"ticker": "NVDA", "start_date": "2024-05-03", "end_date": DATE})]),
    ("News Analyst", "tools_news", [
        ("get_news", {"ticker": "NVDA", "start_date": "2024-05-03", "end_date": DATE}),
        ("get_global_news", {"curr_date": DATE, "look_back_days": 7, "limit": 10})]),
    ("Fundamentals Analyst", "tools_fundamentals", [
        ("get_fundamentals", {"ticker": "NVDA", "curr_date": DATE})]
     + [(name, {"ticker": "NVDA", "freq": "quarterly", "curr_date": DATE})
        for name in ("get_income_statement", "get_balance_sheet", "get_cashflow")]),
]


def _agents_in_order(events):
    out = []
    for e in events:
        if e.kind == "node_started" and e.node in AGENT_NODES and (not out or out[-1] != e.node):
            out.append(e.node)
    return out


@pytest.mark.parametrize("shape", ["tools", "prefetch"])
def test_full_offline_run_events_results_and_log(ta_home, shape):
    events: list[RunEvent] = []
    graph = TradingAgentsGraph(config={"analyst_execution": "sequential", "analyst_data": shape})  # the sequential chain (docs/ARCHITECTURE.md, "The graph")
    state, rating = graph.propagate("nvda", DATE, on_event=events.append)
    assert rating in RATINGS_5_TIER
    assert state["final_trade_decision"].startswith(f"**Rating**: {rating}")
    for key in ("market_report", "sentiment_report", "news_report", "fundamentals_report",
                "investment_plan", "trader_investment_plan"):
        assert state[key].strip(), key
    assert "NVDA" in state["instrument_context"] and "data:" in state["instrument_context"]

    # the order of docs/ARCHITECTURE.md, "The graph"
    assert _agents_in_order(events) == [
        "Market Analyst", "Sentiment Analyst", "News Analyst", "Fundamentals Analyst", "Bull Researcher",
        "Bear Researcher", "Research Manager", "Trader", "Aggressive Analyst", "Conservative Analyst",
        "Neutral Analyst", "Portfolio Manager"]
    # events: framing, pairing, teams, counters
    assert events[0].kind == "run_started" and events[0].data["resumed"] is False
    assert events[-1].kind == "run_finished" and events[-1].data["rating"] == rating
    started = Counter(e.node for e in events if e.kind == "node_started")
    finished = Counter(e.node for e in events if e.kind == "node_finished")
    assert started == finished
    assert all(e.team in TEAMS for e in events if e.kind.startswith("node_"))
    tool_events = [e for e in events if e.kind == "tool_call"]
    assert tool_events and all(e.data["tool"] and e.data["result_chars"] > 0 for e in tool_events)
    assert all(isinstance(e.data["args"], dict) for e in tool_events)
    reports = {e.data["key"] for e in events if e.kind == "report"}
    assert reports == {"market_report", "sentiment_report", "news_report", "fundamentals_report",
                       "investment_plan", "trader_investment_plan", "final_trade_decision"}
    turns = [(e.data["debate"], e.data["speaker"], e.data["round"]) for e in events if e.kind == "debate_turn"]
    assert turns == [("invest", "Bull", 1), ("invest", "Bear", 1), ("risk", "Aggressive", 1),
                     ("risk", "Conservative", 1), ("risk", "Neutral", 1)]
    assert [e.data["debate"] for e in events if e.kind == "judge_decision"] == ["invest", "risk"]
    usage = [e.data for e in events if e.kind == "llm_usage"]
    assert usage and all(a["llm_calls"] <= b["llm_calls"] for a, b in zip(usage, usage[1:], strict=False))
    # the Market, Sentiment, News and Fundamentals Analysts (tools: 2 each, the tool round and the report;
    # prefetch: 1 each, with their own fetches), Bull, Bear, Research Manager, Trader, three risk analysts,
    # Portfolio Manager (1 each)
    per_analyst = 2 if shape == "tools" else 1
    assert usage[-1]["llm_calls"] == graph.last_run["usage"]["llm_calls"] == 4 * per_analyst + 8
    assert usage[-1]["tool_calls"] == len(tool_events)
    by_node = graph.last_run["usage_by_node"]
    for node, tools_node, calls in PREFETCHED:
        caller = tools_node if shape == "tools" else node
        assert by_node[node]["llm_calls"] == per_analyst and by_node[caller]["tool_calls"] == len(calls), node
        assert (tools_node in started) == (shape == "tools")  # the ToolNode runs the model's calls
        fetched = [e for e in tool_events if e.node == caller]
        assert all(e.agent == node for e in fetched)
        assert [(e.data["tool"], e.data["args"]) for e in fetched] == calls, node
    json.dumps([e.to_dict() for e in events])  # plain data

    # (4) saved, logged as pending; (5) checkpoint cleared
    saved = load_run(None, "NVDA", DATE)
    assert saved["rating"] == rating and saved["state"]["final_trade_decision"] == state["final_trade_decision"]
    assert list_runs(None)[0]["ticker"] == "NVDA"
    assert (ta_home / "results" / "NVDA" / DATE / "report.md").read_text().startswith(f"# NVDA — {DATE}")
    [entry] = TradingMemoryLog(None).get_pending_entries("NVDA")
    assert (entry["date"], entry["rating"]) == (DATE, rating)
    assert ckpt.list_checkpoints(graph.config) == []


@pytest.mark.parametrize("selected", [["news", "market"], ["fundamentals"], ["social", "news", "fundamentals"]])
def test_any_subset_in_any_order(selected):
    events = []
    graph = TradingAgentsGraph(selected, config={"analyst_execution": "sequential"})
    state, _ = graph.propagate("AAPL", DATE, on_event=events.append)
    names = {"market": "Market Analyst", "social": "Sentiment Analyst", "news": "News Analyst",
             "fundamentals": "Fundamentals Analyst"}
    assert _agents_in_order(events)[: len(selected)] == [names[k] for k in selected]
    keys = {"market": "market_report", "social": "sentiment_report", "news": "news_report",
            "fundamentals": "fundamentals_report"}
    for key, report in keys.items():
        assert bool(state[report].strip()) == (key in selected), report
    assert state["final_trade_decision"].startswith("**Rating**:")


def test_crypto_drops_the_fundamentals_analyst():
    events = []
    # the demo market does not list BTC-USD: an invented instrument, allowed on purpose
    state, _ = TradingAgentsGraph(config={"allow_synthetic": True}).propagate("BTC-USD", DATE, "crypto",
                                                                             on_event=events.append)
    assert "Fundamentals Analyst" not in {e.node for e in events}
    assert state["fundamentals_report"] == "" and state["market_report"]
    assert events[0].data["analysts"] == ["market", "social", "news"]


def test_rounds_come_from_config():
    events = []
    graph = TradingAgentsGraph(["market"], config={"max_debate_rounds": 2, "max_risk_discuss_rounds": 2})
    state, _ = graph.propagate("MSFT", DATE, on_event=events.append)
    turns = Counter(e.data["debate"] for e in events if e.kind == "debate_turn")
    assert turns == {"invest": 4, "risk": 6}
    assert state["investment_debate_state"]["count"] == 4 and state["risk_debate_state"]["count"] == 6
    rounds = [e.data["round"] for e in events if e.kind == "debate_turn" and e.data["debate"] == "invest"]
    assert rounds == [1, 1, 2, 2]


def test_recursion_limit_comes_from_config():
    from tradingagents.errors import ConfigError

    # the limit is the config's; reaching it is a plain message naming the setting (exit 2), not a traceback
    with pytest.raises(ConfigError, match="max_recur_limit=5"):
        TradingAgentsGraph(["market"], config={"max_recur_limit": 5}).propagate("MSFT", DATE)


def test_debug_prints_each_node_update(capsys):
    TradingAgentsGraph(["market"], config={"analyst_data": "prefetch"}, debug=True).propagate("MSFT", DATE)
    out = capsys.readouterr().out
    for node in ("==== Market Analyst ====", "==== Portfolio Manager ===="):
        assert node in out
    assert "==== tools_market ====" not in out  # the Market Analyst fetches its data itself
    assert "final_trade_decision" in out


@pytest.mark.parametrize(
    "ticker, date",
    [("", DATE), ("NV DA", DATE), ("../etc", DATE), ("/abs/path", DATE), ("A\x00B", DATE), ("Ä" * 3, DATE),
     ("X" * 500, DATE), ("NVDA", "2024-13-01"), ("NVDA", "10/05/2024"), ("NVDA", "2999-01-01"),
     ("NVDA", "../2024-05-10"), ("NVDA", None)],
)
def test_bad_input_is_refused_before_any_model_call(ta_home, ticker, date):
    counter = CallCounter()
    events = []
    graph = TradingAgentsGraph(callbacks=[counter])
    before = sorted(p for p in ta_home.rglob("*"))
    with pytest.raises(ValidationError) as info:
        graph.propagate(ticker, date, on_event=events.append)
    assert str(info.value).strip()
    assert sum(counter.calls.values()) == 0
    assert sorted(p for p in ta_home.rglob("*")) == before  # nothing written
    assert [e.kind for e in events] == ["run_failed"] and events[0].data["resumable"] is False


def test_bad_asset_type_and_analysts_are_refused():
    with pytest.raises(ValidationError, match="asset type"):
        TradingAgentsGraph().propagate("NVDA", DATE, "beanie-babies")
    with pytest.raises(ConfigError, match="unknown analyst 'tarot'"):
        TradingAgentsGraph(["market", "tarot"])


def test_second_run_settles_the_first_and_feeds_memories_and_context():
    graph = TradingAgentsGraph(["market"])
    _, first_rating = graph.propagate("NVDA", "2024-05-01")
    assert len(graph.bull_memory) == 0
    events = []
    state, _ = graph.propagate("NVDA", "2024-05-20", on_event=events.append)
    entries = {e["date"]: e for e in TradingMemoryLog(None).load_entries()}
    first = entries["2024-05-01"]
    assert not first["pending"] and first["holding"] == 5
    alpha = first["alpha"]
    assert first["reflection"].strip() and (f"{alpha:+.1%}" in first["reflection"] or f"{alpha:+.2%}" in first["reflection"])
    assert entries["2024-05-20"]["pending"]
    # the settled decision is in the second run's past context (its window closed before 2024-05-20)
    assert "2024-05-01" in state["past_context"]
    # one lesson per role, persisted (a fresh memory object reloads it)
    for name in ("bull_memory", "bear_memory", "trader_memory", "invest_judge_memory", "risk_manager_memory"):
        assert len(getattr(graph, name)) == 1, name
        assert len(FinancialSituationMemory(name, graph.config)) == 1
    assert first_rating == first["rating"]


def test_settle_pending_only_settles_closed_windows(monkeypatch):
    import datetime as dt

    graph = TradingAgentsGraph(["market"])
    graph.propagate("NVDA", "2024-05-01")
    graph.propagate("AAPL", "2024-05-02")
    assert graph.settle_pending("MSFT") == []
    settled = graph.settle_pending("AAPL")
    assert [(s["ticker"], s["date"]) for s in settled] == [("AAPL", "2024-05-02")]
    assert set(settled[0]) == {"ticker", "date", "rating", "raw", "alpha", "holding", "benchmark", "reflection"}
    assert settled[0]["benchmark"] == "SPY" and "SPY" in settled[0]["reflection"]
    assert graph.settle_pending() and graph.settle_pending() == []  # NVDA now, then nothing left
    # a decision whose window has not closed stays pending (logged under today's session: on a weekend or a
    # holiday, the last one before it)
    today = session_for(get_provider({"data_vendor": "demo"}), "TSLA", dt.date.today().isoformat())[0]
    graph.propagate("TSLA", dt.date.today().isoformat())
    assert graph.settle_pending("TSLA") == []
    assert TradingMemoryLog(None).get_pending_entries("TSLA")
    [problem] = graph.settle_problems
    assert problem.startswith(f"TSLA {today}: window closes on ") and problem[-10:] > today


def test_reflect_and_remember_writes_one_lesson_per_role():
    graph = TradingAgentsGraph(["market"])
    with pytest.raises(RuntimeError, match="propagate"):
        graph.reflect_and_remember(0.02)
    graph.propagate("NVDA", DATE)
    lessons = graph.reflect_and_remember({"raw": 0.05, "alpha": 0.02, "holding": 5})
    assert set(lessons) == {"bull_memory", "bear_memory", "trader_memory", "invest_judge_memory",
                            "risk_manager_memory"}
    assert all(len(m) == 1 for m in graph.memories.values())


def test_stop_between_nodes_then_resume_finishes(ta_home):
    events = []
    seen = []

    def should_stop():
        return "Bull Researcher" in seen

    def on_event(e):
        events.append(e)
        if e.kind == "node_finished":
            seen.append(e.node)

    graph = TradingAgentsGraph()
    with pytest.raises(RunStopped):
        graph.propagate("NVDA", DATE, on_event=on_event, should_stop=should_stop)
    assert events[-1].kind == "run_stopped" and events[-1].data["resumable"] is True
    assert graph.has_resumable_run("NVDA", DATE)
    assert not (ta_home / "results" / "NVDA" / DATE).exists()
    events.clear()
    state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
    assert events[0].data["resumed"] is True
    assert "Market Analyst" not in {e.node for e in events if e.kind == "node_started"}
    assert "Bull Researcher" not in {e.node for e in events if e.kind == "node_started"}
    reference, ref_rating = TradingAgentsGraph(config={"home": str(ta_home / "ref")}).propagate("NVDA", DATE)
    assert rating == ref_rating and state["final_trade_decision"] == reference["final_trade_decision"]
    assert not graph.has_resumable_run("NVDA", DATE)


def test_a_failing_event_callback_does_not_break_the_run():
    def bad(event):
        raise ValueError("display bug")

    _, rating = TradingAgentsGraph(["market"]).propagate("NVDA", DATE, on_event=bad)
    assert rating in RATINGS_5_TIER
