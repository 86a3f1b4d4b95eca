"""Routers, the analyst plan, signal processing and saved results (no models involved)."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from tradingagents.agents.utils.agent_states import empty_invest_debate_state, empty_risk_debate_state
from tradingagents.errors import ConfigError
from tradingagents.graph.analyst_execution import (
    ANALYST_SPECS,
    analysts_for_asset,
    build_analyst_execution_plan,
)
from tradingagents.graph.conditional_logic import (
    DEBATE_PATH_MAP,
    RISK_ANALYSIS_PATH_MAP,
    ConditionalLogic,
)
from tradingagents.graph.propagation import Propagator
from tradingagents.graph.signal_processing import SignalProcessor
from tradingagents.storage.files_runs import list_runs, load_run, render_report_markdown, save_run
from tradingagents.validation import ValidationError


def _tool_msg():
    return AIMessage(content="", tool_calls=[{"name": "get_stock_data", "args": {}, "id": "c1"}])


# ------------------------------------------------------------------ routers
@pytest.mark.parametrize(
    "method, tools, clear",
    [
        ("should_continue_market", "tools_market", "Msg Clear Market"),
        ("should_continue_social", "tools_social", "Msg Clear Sentiment"),
        ("should_continue_news", "tools_news", "Msg Clear News"),
        ("should_continue_fundamentals", "tools_fundamentals", "Msg Clear Fundamentals"),
    ],
)
def test_analyst_routers_loop_on_tool_calls(method, tools, clear):
    route = getattr(ConditionalLogic(), method)
    assert route({"messages": [HumanMessage("x"), _tool_msg()]}) == tools
    assert route({"messages": [HumanMessage("x"), AIMessage("report")]}) == clear
    assert route({"messages": []}) == clear
    assert route({}) == clear


def test_scratchpad_router_reads_its_own_key():
    route = ConditionalLogic().make_analyst_router("tools_news", "Msg Clear News", "news_messages")
    assert route({"messages": [_tool_msg()], "news_messages": [AIMessage("done")]}) == "Msg Clear News"
    assert route({"messages": [AIMessage("x")], "news_messages": [_tool_msg()]}) == "tools_news"


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_debate_alternates_and_stops_at_two_per_round(rounds):
    logic = ConditionalLogic(max_debate_rounds=rounds)
    debate = empty_invest_debate_state()
    route = []
    speaker = "Bull Researcher"  # the graph enters the debate at Bull
    while speaker != "Research Manager":
        route.append(speaker)
        debate["count"] += 1
        debate["current_response"] = ("Bull Analyst: up" if speaker.startswith("Bull") else "Bear Analyst: down")
        speaker = logic.should_continue_debate({"investment_debate_state": debate})
        assert speaker in DEBATE_PATH_MAP
    assert route == ["Bull Researcher", "Bear Researcher"] * rounds


@pytest.mark.parametrize("rounds", [1, 2])
def test_risk_rotation_and_stop(rounds):
    logic = ConditionalLogic(max_risk_discuss_rounds=rounds)
    risk = empty_risk_debate_state()
    speaker, seen = "Aggressive Analyst", []
    while speaker != "Portfolio Manager":
        seen.append(speaker)
        risk["count"] += 1
        risk["latest_speaker"] = speaker.split()[0]
        speaker = logic.should_continue_risk_analysis({"risk_debate_state": risk})
        assert speaker in RISK_ANALYSIS_PATH_MAP
    assert seen == ["Aggressive Analyst", "Conservative Analyst", "Neutral Analyst"] * rounds


def test_drifted_state_never_routes_outside_the_path_maps():
    logic = ConditionalLogic()
    for debate in ({}, {"count": "many", "current_response": None}, {"count": None}, None):
        assert logic.should_continue_debate({"investment_debate_state": debate}) in DEBATE_PATH_MAP
    for risk in ({}, {"count": "x", "latest_speaker": "Martian"}, {"latest_speaker": 3}, None):
        assert logic.should_continue_risk_analysis({"risk_debate_state": risk}) in RISK_ANALYSIS_PATH_MAP
    assert logic.should_continue_risk_analysis({"risk_debate_state": {"latest_speaker": "Martian"}}) == (
        "Aggressive Analyst"
    )
    assert logic.should_continue_debate({"investment_debate_state": {"count": 99}}) == "Research Manager"


# ------------------------------------------------------------------ analyst plan
def test_plan_keeps_the_selected_order_and_names():
    plan = build_analyst_execution_plan(["news", "market"])
    assert [s.key for s in plan] == ["news", "market"]
    assert plan[1].agent_node == "Market Analyst" and plan[1].tool_node == "tools_market"
    social = ANALYST_SPECS["social"]
    assert (social.agent_node, social.clear_node, social.report_key) == (
        "Sentiment Analyst", "Msg Clear Sentiment", "sentiment_report")
    assert [s.key for s in build_analyst_execution_plan("market, sentiment,market")] == ["market", "social"]
    assert [s.key for s in build_analyst_execution_plan(None)] == ["market", "social", "news", "fundamentals"]


@pytest.mark.parametrize("bad", [[], ["astrology"], "", [None], ["market", "crystal ball"]])
def test_plan_refuses_bad_selections_clearly(bad):
    with pytest.raises(ConfigError, match="(?i)analyst"):
        build_analyst_execution_plan(bad)


def test_crypto_drops_fundamentals():
    assert analysts_for_asset(["market", "fundamentals", "news"], "crypto") == ["market", "news"]
    assert analysts_for_asset(["fundamentals"], "stock") == ["fundamentals"]
    with pytest.raises(ValidationError, match="[Cc]rypto"):
        analysts_for_asset(["fundamentals"], "crypto")


def test_execution_mode_has_one_rule_the_configs(monkeypatch):
    from tradingagents import config
    from tradingagents.graph import analyst_execution
    from tradingagents.graph.setup import GraphSetup

    assert config.check_execution("Parallel") == "parallel"
    assert config.check_execution(" sequential ") == "sequential"
    # unset means the config's default, wherever it is read
    assert config.check_execution(None) == config.DEFAULTS["analyst_execution"] == "parallel"
    assert config.resolve_config({"analyst_execution": None}).analyst_execution == "parallel"
    assert config.CHECKS["analyst_execution"] is config.check_execution
    assert not hasattr(analyst_execution, "normalize_execution_mode")  # no second rule beside it
    assert GraphSetup.setup_graph.__defaults__ == (None, None)  # the graph's default is the config's too
    with pytest.raises(ConfigError, match="analyst_execution='warp'.*parallel or sequential"):
        config.check_execution("warp")
    monkeypatch.setenv("TRADINGAGENTS_ANALYST_EXECUTION", "warp")
    with pytest.raises(ConfigError, match="TRADINGAGENTS_ANALYST_EXECUTION='warp'"):
        config.resolve_config({})


def test_propagator_graph_args_carry_recursion_limit_and_thread():
    args = Propagator(max_recur_limit=42).get_graph_args(thread_id="abc")
    assert args["config"]["recursion_limit"] == 42
    assert args["config"]["configurable"]["thread_id"] == "abc"


# ------------------------------------------------------------------ signal processing
@pytest.mark.parametrize(
    "text, rating",
    [
        ("**Rating**: Underweight\n\nWe considered a Buy earlier.", "Underweight"),
        ("Executive summary… FINAL TRANSACTION PROPOSAL: **SELL**", "Sell"),
        ("no tier here", "Hold"),
        (None, "Hold"),
    ],
)
def test_process_signal_is_a_parser(text, rating):
    class Exploding:
        def invoke(self, *a, **k):
            raise AssertionError("process_signal must not call a model")

    assert SignalProcessor(Exploding()).process_signal(text) == rating


# ------------------------------------------------------------------ results
def _state(ticker="NVDA", date="2024-05-10"):
    return {
        "messages": [HumanMessage("Continue the analysis of NVDA as of 2024-05-10.")],
        "company_of_interest": ticker,
        "trade_date": date,
        "market_report": "RSI 55.",
        "sentiment_report": "",
        "news_report": "Earnings beat.",
        "fundamentals_report": "",
        "investment_debate_state": {**empty_invest_debate_state(), "history": "Bull Analyst: up\nBear Analyst: down"},
        "investment_plan": "**Recommendation**: Buy",
        "trader_investment_plan": "FINAL TRANSACTION PROPOSAL: **BUY**",
        "risk_debate_state": {**empty_risk_debate_state(), "history": "Aggressive Analyst: go"},
        "final_trade_decision": "**Rating**: Buy\n\n### Executive Summary\nGo long.",
    }


def test_save_load_and_list_runs(ta_home):
    cfg = {"home": str(ta_home)}
    meta = {"analysts": ["market", "news"], "llm_provider": "offline", "data_vendor": "demo",
            "config": {"llm_provider": "offline", "openai_api_key": "sk-SECRET", "home": str(ta_home)}}
    folder = save_run(cfg, _state(), "Buy", meta)
    assert folder == ta_home / "results" / "NVDA" / "2024-05-10"
    doc = json.loads((folder / "state.json").read_text())
    assert doc["rating"] == "Buy" and doc["state"]["messages"][0]["type"] == "human"
    assert "sk-SECRET" not in (folder / "state.json").read_text()
    report = (folder / "report.md").read_text()
    assert report.startswith("# NVDA — 2024-05-10: **Buy**")
    assert "Earnings beat." in report and "Bull Analyst: up" in report
    assert "Sentiment Analyst" not in report  # not selected, not produced
    save_run(cfg, _state("AAPL", "2024-05-09"), "Hold", {"llm_provider": "offline"})
    runs = list_runs(cfg)
    assert [(r["ticker"], r["rating"]) for r in runs] == [("AAPL", "Hold"), ("NVDA", "Buy")]
    assert runs[1]["path"] == str(folder) and runs[1]["data_vendor"] == "demo"
    loaded = load_run(cfg, "nvda", "2024-05-10")
    assert loaded["rating"] == "Buy" and loaded["state"]["news_report"] == "Earnings beat."
    assert loaded["meta"]["analysts"] == ["market", "news"]
    # no temp files left behind
    assert sorted(p.name for p in folder.iterdir()) == ["report.md", "state.json"]


def test_list_runs_skips_broken_files_and_load_run_explains_missing(ta_home):
    cfg = {"home": str(ta_home)}
    bad = ta_home / "results" / "X" / "2024-01-01"
    bad.mkdir(parents=True)
    (bad / "state.json").write_text("{not json")
    assert list_runs(cfg) == []
    with pytest.raises(FileNotFoundError, match="No saved run for MSFT on 2024-01-02"):
        load_run(cfg, "MSFT", "2024-01-02")
    with pytest.raises(ValidationError):
        load_run(cfg, "../etc", "2024-01-02")


def test_report_markdown_mentions_model_and_data_labels():
    text = render_report_markdown(_state(), "Buy", {"llm_label": "offline engine (no LLM)",
                                                     "data_label": "synthetic demo data"})
    assert "offline engine (no LLM)" in text and "synthetic demo data" in text
    assert text.index("Portfolio Manager's decision") < text.index("Analyst reports")
