"""UI-neutral studio pieces: progress folding, debate parsing, charts data, export, highlighting."""

from __future__ import annotations

import pytest

from studio import charts, export
from studio.debates import split_history, turns_from_events, turns_from_state
from studio.memview import highlight_html, shared_terms, situation_from_state
from studio.runs import agent_plan, derive_progress, normalise_analysts
from tradingagents.graph.events import RunEvent
from tradingagents.validation import ValidationError


def ev(kind, node=None, agent=None, team=None, ts=0.0, **data):
    return RunEvent(kind=kind, node=node, agent=agent, team=team, data=data, ts=ts)


def test_agent_plan_follows_graph_order_and_selection():
    names = [a for a, _ in agent_plan(["news", "market"])]
    assert names[:2] == ["Market Analyst", "News Analyst"]
    assert names[-1] == "Portfolio Manager"
    assert "Sentiment Analyst" not in names


def test_normalise_analysts_rejects_empty_and_unknown():
    assert normalise_analysts(["fundamentals", "MARKET"]) == ["market", "fundamentals"]
    with pytest.raises(ValidationError, match="at least one analyst"):
        normalise_analysts([])
    with pytest.raises(ValidationError, match="Unknown analyst 'macro'"):
        normalise_analysts(["macro"])


def test_derive_progress_tracks_status_times_counters_and_reports():
    t = 1000.0
    events = [
        ev("run_started", ts=t),
        ev("node_started", "Market Analyst", "Market Analyst", "Analyst Team", ts=t + 1),
        ev("node_finished", "Market Analyst", "Market Analyst", "Analyst Team", ts=t + 2, duration_s=1.0),
        ev("node_started", "tools_market", "Market Analyst", "Analyst Team", ts=t + 2),
        ev("tool_call", "tools_market", "Market Analyst", "Analyst Team", ts=t + 2.5, tool="get_stock_data",
           args={"symbol": "NVDA"}, result_chars=120, result_preview="..."),
        ev("node_finished", "tools_market", "Market Analyst", "Analyst Team", ts=t + 3, duration_s=1.0),
        ev("report", "Market Analyst", "Market Analyst", "Analyst Team", ts=t + 3, key="market_report", text="Up."),
        ev("llm_usage", ts=t + 3, llm_calls=2, tool_calls=1, input_tokens=100, output_tokens=40),
        ev("node_started", "Bull Researcher", "Bull Researcher", "Research Team", ts=t + 4),
    ]
    p = derive_progress(events, ["market"], now=t + 5)
    by = {a.agent: a for a in p.agents}
    assert by["Market Analyst"].status == "done"
    assert by["Market Analyst"].started == t + 1 and by["Market Analyst"].finished == t + 3
    assert by["Bull Researcher"].status == "running" and p.current == "Bull Researcher"
    assert by["Trader"].status == "pending"
    assert p.reports == {"market_report": "Up."}
    assert p.counters == {"llm_calls": 2, "tool_calls": 1, "input_tokens": 100, "output_tokens": 40}
    assert p.tool_calls[0]["args"] == {"symbol": "NVDA"}
    assert p.elapsed_s == pytest.approx(5.0)
    assert 0 < p.fraction < 1
    assert [iv["node"] for iv in p.intervals] == ["Market Analyst", "tools_market", "Bull Researcher"]
    assert p.intervals[-1]["end"] is None
    assert list(p.teams)[0] == "Analyst Team"
    # a stop leaves no agent "running" and freezes the elapsed time
    p2 = derive_progress([*events, ev("run_stopped", ts=t + 6, resumable=True)], ["market"], now=t + 60)
    assert p2.current is None and p2.elapsed_s == pytest.approx(6.0)


def test_debate_turns_from_state_in_order_with_rounds():
    state = {
        "investment_debate_state": {
            "history": "\nBull Analyst: Growth is strong.\nMore lines.\nBear Analyst: Valuation.\n"
                       "Bull Analyst: Round two bull.\nBear Analyst: Round two bear.",
            "judge_decision": "**Recommendation**: Buy",
        },
        "trader_investment_plan": "FINAL TRANSACTION PROPOSAL: **BUY**",
        "risk_debate_state": {
            "history": "Aggressive Analyst: Go.\nConservative Analyst: Careful.\nNeutral Analyst: Balance.",
        },
        "final_trade_decision": "**Rating**: Overweight",
    }
    turns = turns_from_state(state)
    assert [(t.speaker, t.round) for t in turns if t.kind == "turn"] == [
        ("Bull Analyst", 1), ("Bear Analyst", 1), ("Bull Analyst", 2), ("Bear Analyst", 2),
        ("Aggressive Analyst", 1), ("Conservative Analyst", 1), ("Neutral Analyst", 1)]
    assert turns[0].text == "Growth is strong.\nMore lines."
    assert [t.speaker for t in turns if t.kind != "turn"] == ["Research Manager", "Trader", "Portfolio Manager"]
    assert turns[0].avatar != turns[1].avatar
    assert split_history("", "invest") == []


def test_debate_turns_from_events():
    turns = turns_from_events([
        ev("debate_turn", debate="invest", speaker="Bull Analyst", round=1, text="Bull Analyst: Yes."),
        ev("judge_decision", debate="invest", text="Plan"),
        ev("debate_turn", debate="risk", speaker="Neutral", round=1, text="Hmm"),
    ])
    assert [(t.speaker, t.text) for t in turns] == [("Bull Analyst", "Yes."), ("Research Manager", "Plan"),
                                                    ("Neutral Analyst", "Hmm")]


ENTRIES = [
    {"date": "2024-01-02", "ticker": "NVDA", "rating": "Buy", "pending": False, "raw": 0.05, "alpha": 0.03,
     "holding": 5, "decision": "d", "reflection": "r"},
    {"date": "2024-02-02", "ticker": "NVDA", "rating": "Sell", "pending": False, "raw": 0.02, "alpha": 0.01,
     "holding": 5, "decision": "d", "reflection": "r"},
    {"date": "2024-03-01", "ticker": "AAPL", "rating": "Hold", "pending": False, "raw": 0.0, "alpha": -0.01,
     "holding": 5, "decision": "d", "reflection": "r"},
    {"date": "2024-04-01", "ticker": "AAPL", "rating": "Buy", "pending": True, "raw": None, "alpha": None,
     "holding": None, "decision": "d", "reflection": ""},
]


def test_log_frame_and_rating_stats():
    df = charts.log_frame(ENTRIES)
    assert list(df["status"]) == ["settled", "settled", "settled", "pending"]
    stats = charts.rating_stats(df).set_index("rating")
    assert list(stats.index) == ["Buy", "Hold", "Sell"]  # tier order, pending excluded
    assert stats.loc["Buy", "hit_rate"] == 1.0 and stats.loc["Buy", "count"] == 1
    assert stats.loc["Sell", "hit_rate"] == 0.0  # sold but alpha was positive
    assert stats.loc["Hold", "hit_rate"] == 1.0  # |alpha| within the band
    cum = charts.cumulative_alpha_figure(df).data[0].y
    assert list(cum) == pytest.approx([3.0, 4.0, 3.0])
    assert len(charts.alpha_figure(df).data[0].x) == 3


def test_html_export_is_self_contained_and_escapes_model_text():
    state = {"company_of_interest": "NVDA", "trade_date": "2024-05-10",
             "market_report": "Trend up <script>alert(1)</script> & more",
             "final_trade_decision": "**Rating**: Buy\n\n## Executive Summary\nGo long."}
    page = export.report_html(state, "Buy", {"ticker": "NVDA", "date": "2024-05-10"}, closes=[1.0, 2.0, 1.5])
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<polyline" in page and "Buy" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in page
    md = export.report_markdown(state, "Buy", {"ticker": "NVDA", "date": "2024-05-10"})
    assert "Trend up" in md and "Buy" in md


def test_highlight_and_shared_terms():
    q = "Institutional selling in tech"
    s = "Volatility spike with institutional selling in high-beta <tech>"
    terms = shared_terms(q, s)
    assert terms == ["in", "institutional", "selling", "tech"]
    out = highlight_html(s, terms)
    assert "<mark>institutional</mark>" in out and "&lt;<mark>tech</mark>&gt;" in out
    assert "<mark>Volatility" not in out
    assert situation_from_state({"market_report": "A", "news_report": "B"}) == "A\n\nB"


def test_highlight_cjk_terms():
    out = highlight_html("利率上升 tech", ["利", "tech"])
    assert out == "<mark>利</mark>率上升 <mark>tech</mark>"


def test_hits_follow_the_engine_scale():
    from tradingagents.agents.utils.rating import RATING_SCORE, RATINGS_5_TIER

    assert {r: charts.is_hit(r, 0.05) for r in RATINGS_5_TIER} == {
        r: (RATING_SCORE[r] > 0) for r in RATINGS_5_TIER} | {"Hold": False}


def test_timeline_html_places_bars_on_a_shared_scale():
    ivs = [{"node": "Market Analyst", "agent": "Market Analyst", "team": "Analyst Team", "start": 10.0, "end": 12.0},
           {"node": "Bull Researcher", "agent": "Bull Researcher", "team": "Research Team", "start": 12.0,
            "end": None}]
    out = charts.timeline_html(ivs, now=14.0)
    assert 'left:0.00%;width:50.00%' in out and 'left:50.00%;width:50.00%' in out
    assert "bar live" in out and "<span>4.0s</span>" in out
    fig = charts.timeline_figure(ivs, now=14.0)
    assert [tuple(t.y) for t in fig.data] == [("Market Analyst",), ("Bull Researcher",)]


def test_provider_labels_keep_their_casing():
    from studio.ui import provider_label, provider_options

    assert provider_options()[0] == "offline"
    assert provider_label("offline") == "Offline engine (no LLM)"
    assert provider_label("lmstudio") == "LM Studio (local)"
    assert provider_label("nope") == "nope"


def test_llm_badge_names_the_server_and_models_without_credentials():
    from studio.ui import badges_html
    from tradingagents.default_config import resolve_config

    cfg = resolve_config({"llm_provider": "openai_compatible", "backend_url": "http://user:pw@127.0.0.1:9/v1",
                          "quick_think_llm": "q-model", "deep_think_llm": "d-model", "data_vendor": "csv"})
    out = badges_html(cfg)
    assert "OpenAI-compatible server at http://127.0.0.1:9/v1" in out and "q-model / d-model" in out
    assert "pw" not in out and "data: csv" in out
    assert "offline engine (no LLM)" in badges_html(resolve_config())
