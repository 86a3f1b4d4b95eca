"""UI-neutral studio pieces: progress folding, debate parsing, charts data, export, highlighting."""

from __future__ import annotations

import pytest

from studio import charts, export
from studio.debates import turns_from_events, turns_from_saved
from studio.memview import (
    ROLES,
    display_terms,
    entry_html,
    highlight_html,
    shared_terms,
    situation_from_state,
    situation_html,
)
from studio.runs import REPORT_TITLES, derive_progress, graph_order
from tradingagents import team
from tradingagents.errors import ConfigError
from tradingagents.graph.events import RunEvent
from tradingagents.rating import RATING_COLORS, RATINGS_5_TIER, was_right


def ev(kind, node=None, agent=None, team=None, ts=0.0, **data):
    return RunEvent(kind=kind, node=node, agent=agent, team=team, data=data, ts=ts)


def test_graph_order_uses_the_engine_normaliser_and_roster_order():
    assert graph_order(["fundamentals", "MARKET"]) == ["market", "fundamentals"]
    with pytest.raises(ConfigError, match="at least one analyst"):
        graph_order([])
    with pytest.raises(ConfigError, match="unknown analyst 'macro'"):
        graph_order(["macro"])


def test_ui_tables_are_the_roster_s():
    assert list(REPORT_TITLES) == list(team.OUTPUT_KEYS)
    assert list(ROLES) == list(team.MEMORY_NAMES)
    assert ROLES["invest_judge_memory"] == "Research Manager"
    assert list(RATING_COLORS) == list(RATINGS_5_TIER) and list(charts.TEAM_COLORS) == list(team.TEAMS)


PLAN = team.plan(["market"])


def test_the_board_is_the_run_started_plan():
    t = 1000.0
    # a plan the roster would not produce: the board shows what the engine said, in its order
    plan = [{"team": "Research Team", "agents": ["Bear Researcher", "Bull Researcher"]},
            {"team": "Portfolio Management", "agents": ["Portfolio Manager"]}]
    p = derive_progress([ev("run_started", ts=t, plan=plan)], now=t + 1)
    assert [(a.agent, a.team, a.status) for a in p.agents] == [
        ("Bear Researcher", "Research Team", "pending"), ("Bull Researcher", "Research Team", "pending"),
        ("Portfolio Manager", "Portfolio Management", "pending")]
    assert list(p.teams) == ["Research Team", "Portfolio Management"] and p.fraction == 0.0
    # before run_started arrives there is no board to invent
    assert derive_progress([], now=t).agents == []
    # a resumed attempt keeps what the first one finished, under the new plan
    first = [ev("run_started", ts=t, plan=PLAN),
             ev("node_started", "Market Analyst", "Market Analyst", "Analyst Team", ts=t + 1),
             ev("node_finished", "Market Analyst", "Market Analyst", "Analyst Team", ts=t + 2),
             ev("run_stopped", ts=t + 3, resumable=True, record={})]
    again = derive_progress([*first, ev("run_started", ts=t + 10, plan=PLAN, resumed=True)], now=t + 11)
    by = {a.agent: a.status for a in again.agents}
    assert by["Market Analyst"] == "done" and by["Bull Researcher"] == "pending"
    assert [a.agent for a in again.agents] == [n for g in PLAN for n in g["agents"]]


def test_derive_progress_tracks_status_times_counters_and_reports():
    t = 1000.0
    events = [
        ev("run_started", ts=t, plan=PLAN),
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
    p = derive_progress(events, now=t + 5)
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
    p2 = derive_progress([*events, ev("run_stopped", ts=t + 6, resumable=True, record={})], now=t + 60)
    assert p2.current is None and p2.elapsed_s == pytest.approx(6.0)


def _rec(debate, role, speaker, rnd, turn, text):
    return {"debate": debate, "role": role, "speaker": speaker, "round": rnd, "turn": turn, "text": text}


TURNS = [_rec("invest", "bull", "Bull", 1, 1, "Growth is strong.\nBear Analyst: quoted, not a turn."),
         _rec("invest", "bear", "Bear", 1, 2, "Valuation."),
         _rec("invest", "bull", "Bull", 2, 3, "Round two bull."),
         _rec("risk", "aggressive", "Aggressive", 1, 1, "Go."),
         _rec("risk", "neutral", "Neutral", 1, 2, "Balance.")]
STATE = {
    # the history text says something else entirely: it must not be read
    "investment_debate_state": {"history": "Bull Analyst: X\nBear Analyst: Y", "judge_decision": "**Recommendation**: Buy"},
    "trader_investment_plan": "FINAL TRANSACTION PROPOSAL: **BUY**",
    "risk_debate_state": {"history": "Conservative Analyst: Z", "judge_decision": ""},
    "final_trade_decision": "**Rating**: Overweight",
}


def test_saved_debate_comes_from_meta_debate_turns_not_the_history_text():
    turns = turns_from_saved(STATE, {"debate_turns": TURNS})
    assert [(t.speaker, t.round) for t in turns if t.kind == "turn"] == [
        ("Bull Researcher", 1), ("Bear Researcher", 1), ("Bull Researcher", 2),
        ("Aggressive Analyst", 1), ("Neutral Analyst", 1)]
    assert turns[0].text == "Growth is strong.\nBear Analyst: quoted, not a turn."
    assert [(t.kind, t.speaker) for t in turns if t.kind != "turn"] == [
        ("verdict", "Research Manager"), ("proposal", "Trader"), ("verdict", "Portfolio Manager")]
    assert turns[-1].text == "**Rating**: Overweight"  # the PM's output key when the judge field is empty
    assert turns[0].avatar != turns[1].avatar
    # a run with records but no turn yet shows none (no fallback to the text)
    assert [t.kind for t in turns_from_saved(STATE, {"debate_turns": []})] == ["verdict", "proposal", "verdict"]


def test_runs_saved_before_turn_records_fall_back_to_each_speaker_s_own_history():
    state = {"investment_debate_state": {"bull_history": "Bull Analyst: a\nBull Analyst: b",
                                         "bear_history": "Bear Analyst: c", "history": "ignored"},
             "risk_debate_state": {"neutral_history": "Neutral Analyst: n", "history": "ignored"}}
    turns = turns_from_saved(state, {})
    assert [(t.kind, t.speaker, t.text) for t in turns] == [
        ("history", "Bull Researcher", "Bull Analyst: a\nBull Analyst: b"),
        ("history", "Bear Researcher", "Bear Analyst: c"),
        ("history", "Neutral Analyst", "Neutral Analyst: n")]


def test_live_debate_comes_from_debate_turn_events():
    turns = turns_from_events([
        ev("debate_turn", "Bull Researcher", **TURNS[0]),
        ev("report", "Research Manager", key="investment_plan", text="Plan"),
        ev("judge_decision", "Research Manager", role="research_manager", debate="invest", text="Plan"),
        ev("report", "Trader", key="trader_investment_plan", text="Proposal"),
        ev("debate_turn", "Neutral Analyst", **TURNS[4]),
        ev("debate_turn", "Nobody", debate="risk", role="x", speaker="Nobody", round=1, turn=3, text="?"),
    ])
    assert [(t.kind, t.speaker, t.round, t.text) for t in turns] == [
        ("turn", "Bull Researcher", 1, TURNS[0]["text"]), ("verdict", "Research Manager", None, "Plan"),
        ("proposal", "Trader", None, "Proposal"), ("turn", "Neutral Analyst", 1, "Balance.")]


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
    assert stats.loc["Buy", "hits"] == 1 and stats.loc["Sell", "hits"] == 0


def test_cumulative_alpha_is_per_ticker_never_across_tickers():
    df = charts.log_frame(ENTRIES)
    cum = charts.cumulative_alpha_by_ticker(df)
    by = {t: list(part["cum_alpha"]) for t, part in cum.groupby("ticker")}
    assert by["NVDA"] == pytest.approx([0.03, 1.03 * 1.01 - 1]) and by["AAPL"] == pytest.approx([-0.01])
    fig = charts.cumulative_alpha_figure(df)
    assert {t.name: list(t.y) for t in fig.data} == {"AAPL": pytest.approx([-1.0]),
                                                    "NVDA": pytest.approx([3.0, (1.03 * 1.01 - 1) * 100])}
    # daily decisions with 5-day windows overlap: only one per closed window counts (not a sum of 5 alphas)
    daily = [dict(ENTRIES[0], date=f"2024-01-{d:02d}", alpha=0.02) for d in (2, 3, 4, 5, 8, 9, 10, 11, 12, 15)]
    cum = charts.cumulative_alpha_by_ticker(charts.log_frame(daily))
    assert list(cum["date"]) == ["2024-01-02", "2024-01-09"]
    assert cum["cum_alpha"].iloc[-1] == pytest.approx(1.02 ** 2 - 1)
    many = [dict(ENTRIES[0], ticker=f"T{i:02d}") for i in range(20)]
    assert len(charts.cumulative_alpha_figure(charts.log_frame(many), max_tickers=5).data) == 5


def test_equity_curve_follows_direction_and_compounds_against_the_benchmark():
    e = [dict(ENTRIES[0], date="2024-01-02", rating="Buy", raw=0.10, alpha=0.04),        # long: +10 %
         dict(ENTRIES[0], date="2024-01-09", rating="Sell", raw=-0.05, alpha=-0.02,       # short: +5 %
              bench_raw=-0.03, end_date="2024-01-16"),
         dict(ENTRIES[0], date="2024-01-16", rating="Hold", raw=0.02, alpha=0.01),        # flat: 0 %
         dict(ENTRIES[0], date="2024-01-23", rating="Buy", pending=True, raw=None, alpha=None)]
    curve = charts.equity_curve(charts.log_frame(e))
    assert list(curve["strategy"]) == pytest.approx([1.10, 1.10 * 1.05, 1.10 * 1.05])
    # benchmark: raw − alpha where the log has no benchmark return, the logged one otherwise
    assert list(curve["benchmark"]) == pytest.approx([1.06, 1.06 * 0.97, 1.06 * 0.97 * 1.01])
    # each point on the day its window closed (logged, else decision date + holding business days)
    assert list(curve["when"]) == ["2024-01-09", "2024-01-16", "2024-01-23"]
    assert list(curve["when"]) == sorted(curve["when"])  # never back to an earlier day: no cliff
    wiped = charts.equity_curve(charts.log_frame([dict(ENTRIES[0], rating="Sell", raw=1.5, alpha=1.0)]))
    assert list(wiped["strategy"]) == [0.0]  # a short losing more than everything is floored at 0


def test_hit_rate_chart_is_bars_only_with_counts_and_round_ticks():
    fig = charts.hit_rate_figure(charts.rating_stats(charts.log_frame(ENTRIES)))
    assert [t.type for t in fig.data] == ["bar"]  # no average-alpha line across categorical ratings
    assert list(fig.data[0].x) == ["Buy", "Hold", "Sell"]
    assert list(fig.data[0].text) == ["100% · 1 of 1", "100% · 1 of 1", "0% · 0 of 1"]
    assert list(fig.layout.yaxis.tickvals) == [0, 25, 50, 75, 100]


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


def test_hit_rate_is_rating_was_right_on_the_exact_alpha():
    # AAPL 2024-06-10 Overweight: raw -0.9 %, alpha +0.004 % (shown as +0.0 %): was_right says right
    aapl = {"date": "2024-06-10", "ticker": "AAPL", "rating": "Overweight", "pending": False, "raw": -0.009,
            "alpha": 0.00004, "holding": 5, "decision": "d", "reflection": "r"}
    edge = [dict(aapl, date=f"2024-07-0{i}", rating=r, alpha=a) for i, (r, a) in enumerate(
        [("Overweight", 0.0), ("Hold", 0.02), ("Hold", -0.0200001), ("Sell", -0.00001), ("Underweight", 0.0)], 1)]
    df = charts.log_frame([aapl, *edge])
    stats = charts.rating_stats(df).set_index("rating")
    for rating in stats.index:
        alphas = [e["alpha"] for e in [aapl, *edge] if e["rating"] == rating]
        assert stats.loc[rating, "hit_rate"] == sum(bool(was_right(rating, a)) for a in alphas) / len(alphas)
    assert stats.loc["Overweight", "hit_rate"] == 0.5  # the AAPL call right, the zero-alpha one not
    assert stats.loc["Hold", "hit_rate"] == 0.5 and stats.loc["Sell", "hit_rate"] == 1.0


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
    from tradingagents.config import resolve_config

    cfg = resolve_config({"llm_provider": "openai_compatible", "backend_url": "http://user:pw@127.0.0.1:9/v1",
                          "quick_think_llm": "q-model", "deep_think_llm": "d-model", "data_vendor": "csv"})
    out = badges_html(cfg)
    assert "OpenAI-compatible server at http://127.0.0.1:9/v1" in out and "q-model / d-model" in out
    assert "pw" not in out and "data: csv" in out
    assert "offline engine (no LLM)" in badges_html(resolve_config())


def test_display_terms_drop_numbers_stop_words_and_lone_letters():
    assert display_terms(["the", "rsi", "70", "q3", "a", "利", "selling", "RSI"]) == ["rsi", "利", "selling"]


def test_situation_html_renders_markdown_and_runs_nothing():
    out = situation_html("# Up\n\n**tech** <img src=x onerror=alert(1)> [a](javascript:alert(1)) "
                         "[b](https://ok.example) ![pic](http://x/y.png) &amp", ["tech", "amp", "x"])
    assert "<h1>Up</h1>" in out and "<strong><mark>tech</mark></strong>" in out
    assert "<img" not in out and "javascript:" not in out and "&lt;img src=" in out  # raw HTML is text
    assert '<a href="https://ok.example">b</a>' in out and "pic" in out
    assert "&<mark>amp</mark>;" not in out  # never inside an entity


def test_situation_html_keeps_no_state_between_texts():
    # one converter is kept per thread: what one text defines (a link reference) must not reach the next
    import markdown

    defines = "See [the filing][f].\n\n[f]: https://sec.example/f\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    uses = "Same words, [the filing][f], no definition.\n\n1. one\n2. two"
    assert '<a href="https://sec.example/f">the filing</a>' in situation_html(defines)
    assert "<a " not in situation_html(uses) and "[the filing][f]" in situation_html(uses)
    for text in (defines, uses, "# Title\n\n* x\n* y"):
        assert situation_html(text) == markdown.markdown(text, extensions=["tables", "sane_lists"])


def test_entry_html_is_a_closed_details_with_its_label_escaped():
    out = entry_html("2024-05-10 · NVDA · Buy · alpha +2.0% <b>", ("Decision", "<p>Go <strong>long</strong>.</p>"),
                     who="Run by ann@desk.example · settled by bob", reflection=("Reflection", "<p>Right.</p>"))
    assert out.startswith('<details class="ta-entry"><summary>2024-05-10 · NVDA · Buy · alpha +2.0% &lt;b&gt;</summary>')
    assert "<details open" not in out and out.endswith("</details>")
    decision, who, reflection = out.index("Go <strong>long"), out.index("Run by ann@"), out.index("Right.")
    assert decision < who < reflection  # the decision, who ran and settled it, then the reflection
    bare = entry_html("x", ("Decision", "<p>Wait.</p>"))
    assert "ta-entry-who" not in bare and "Reflection" not in bare


def test_figures_are_written_for_people():
    from tradingagents import figures

    assert figures.money(105743196183) == "$105.74B"
    assert figures.money(-2_100_000, "EUR") == "-€2.1M"
    assert figures.money(950, "CHF") == "950 CHF"
    assert figures.price(1234.5) == "$1,234.50" and figures.price(250, "GBp") == "250.00p"
    assert figures.pct(0.0321) == "+3.2%" and figures.pct(-0.5, signed=False) == "-50.0%"
    for absent in (None, float("nan"), float("inf"), "n/a", True):
        assert figures.money(absent) == figures.pct(absent) == figures.price(absent) == figures.DASH
    assert figures.text(None) == figures.text("None") == figures.text("") == figures.DASH


def test_backtest_states_agree_and_never_read_none():
    from studio import backtest_view as view

    assert view.steps_note({"done": 0, "total": 26}, 0) == "No step has finished yet."
    # the bar says 22 of 26 while the saved table lags: the caption says so, not "no step has finished"
    note = view.steps_note({"done": 22, "total": 26, "status": "running"}, 0)
    assert note.startswith("22 of 26 steps have finished") and "No step" not in note
    assert view.steps_note({"done": 3, "total": 3}, 3) is None
    row = {"id": "b1", "status": "running", "done": 0, "total": 26,
           "args": {"spec": {"tickers": ["NVDA"], "start": "2024-01-02", "end": "2024-03-01"}}}
    assert view.past_label(row, {"status": "finished", "done": 26, "total": 26}).endswith("finished (26/26 steps)")
    assert "None" not in view.past_label({"id": "b2", "status": None, "done": None, "total": None, "args": {}})
    table = view.paper_table({"NVDA": {"TradingAgents": {"cr": 0.1, "arr": None, "sr": None, "mdd": -0.05}}})
    assert len(table) == 1 and "None" not in table.to_string() and "nan" not in table.to_string().lower()
    frame = view.steps_frame({"steps": {view.TEAM: {"NVDA": {"2024-01-02": {"rating": None, "elapsed_s": None}}}}})
    assert "None" not in frame.drop(columns=["run folder"]).to_string()


def test_watchlist_counts_agree_and_tiles_read_as_cards():
    from studio import watchlist_view as view
    from tradingagents.batch import TickerOutcome

    some = {"done": 4, "total": 4, "ok": 3, "cost_usd": 0.0, "exit_code": 1}
    assert view.summary_text(some, False) == "3 of 4 analysed · 1 did not finish"  # never "4/4 finished"
    assert view.end_text(some).startswith("1 of 4 tickers did not finish")
    every = {"done": 2, "total": 3, "ok": 2, "cost_usd": 0.0, "exit_code": None}
    assert view.summary_text(every, True) == "2 of 3 analysed · 1 to go"
    assert view.end_text({"done": 3, "total": 3, "ok": 3}) == "Finished: all 3 tickers analysed."
    import dataclasses

    fields = {f.name for f in dataclasses.fields(TickerOutcome)}
    outcome = TickerOutcome(**{k: v for k, v in {"ticker": "NVDA", "date": "2024-05-10", "status": "done",
                                                   "rating": "Buy", "cost_usd": 0.0}.items() if k in fields})
    tile = view.tile_html(outcome)
    assert 'class="ta-tile-link"' in tile and "Open run →" in tile and "./?ticker=NVDA" in tile


def test_the_decision_marker_points_the_way_of_the_rating():
    assert charts.decision_marker("Overweight", 110.0, 100.0)[:2] == ("triangle-up", 98.0)
    assert charts.decision_marker("Buy", 110.0, 100.0)[0] == "triangle-up"
    assert charts.decision_marker("Sell", 110.0, 100.0)[0] == "triangle-down"
    assert charts.decision_marker("Underweight", 110.0, 100.0)[0] == "triangle-down"
    assert charts.decision_marker("Hold", 110.0, 100.0)[0] == charts.decision_marker(None, 110.0, 100.0)[0] == "diamond"


def test_history_says_shared_values_once_instead_of_on_every_row():
    from studio import compare

    rows = [{"Ticker": "NVDA", "Rating": "Underweight", "LLM": "offline engine", "Data": "demo", "By": "ann",
             "Cost": "$0.00"},
            {"Ticker": "AAPL", "Rating": "Buy", "LLM": "offline engine", "Data": "demo", "By": "bob",
             "Cost": "$0.00"}]
    table, shared = compare.split_constant(rows)
    assert shared == {"LLM": "offline engine", "Data": "demo", "Cost": "$0.00"}
    assert [sorted(r) for r in table] == [["By", "Rating", "Ticker"]] * 2
    assert compare.split_constant(rows[:1]) == (rows[:1], {})  # one row keeps every column


def test_log_charts_draw_a_long_line_thinned_keeping_its_ends():
    """20,000 log entries must not become 15,000 markers: a line keeps at most MAX_LINE_POINTS points,
    the first and the last among them; a short line is drawn whole."""
    import pandas as pd

    from studio import charts

    n = 5_000
    curve = pd.DataFrame({"when": pd.date_range("2000-01-03", periods=n).strftime("%Y-%m-%d"),
                          "strategy": [1.0 + i / n for i in range(n)], "benchmark": [1.0] * n})
    fig = charts.equity_figure(curve)
    ys = list(fig.data[0].y)
    assert len(ys) <= charts.MAX_LINE_POINTS and ys[0] == 1.0 and ys[-1] == curve["strategy"].iloc[-1]
    assert len(charts.equity_figure(curve.head(50)).data[0].y) == 50


def test_the_bare_python_check_is_marked_done_so_the_first_element_walks_no_stack(monkeypatch):
    """app.py spares a new server's first page Streamlit's "use streamlit run" stack walk (~60-80 ms)."""
    import streamlit.delta_generator as dg
    from streamlit import env_util

    from studio import ui

    def walked():
        raise AssertionError("Streamlit walked the call stack (env_util.is_repl) at the first element")

    monkeypatch.setattr(env_util, "is_repl", walked)
    monkeypatch.setattr(dg, "_use_warning_has_been_displayed", False)
    with pytest.raises(AssertionError, match="walked"):  # the check this spares is Streamlit's real one
        dg._maybe_print_use_warning()
    monkeypatch.setattr(dg, "_use_warning_has_been_displayed", False)
    ui.skip_bare_python_check()
    dg._maybe_print_use_warning()  # marked done: no walk
    assert dg._use_warning_has_been_displayed is True
