"""The Run page's decisions (``studio/run_view.py``), without Streamlit: the form's defaults and the config it
makes, what a link may fill in, a saved run's link, the board, the ended run's message, costs."""

from __future__ import annotations

import datetime as dt
from types import SimpleNamespace

from studio import run_view
from tradingagents.config import ROUND_LIMITS, resolve_config
from tradingagents.errors import UnknownInstrumentError
from tradingagents.i18n import translator
from tradingagents.validation import DATE_FLOOR

ZH = translator("zh")


def test_the_last_business_day_skips_the_weekend_and_today():
    assert run_view.last_business_day(dt.date(2024, 5, 13)) == dt.date(2024, 5, 10)  # a Monday: Friday
    assert run_view.last_business_day(dt.date(2024, 5, 15)) == dt.date(2024, 5, 14)
    assert run_view.last_business_day(dt.date(2024, 5, 12)) == dt.date(2024, 5, 10)  # a Sunday


def test_the_form_starts_from_the_resolved_settings_within_the_fields_bounds(monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_MAX_DEBATE_ROUNDS", "2")
    config = resolve_config()
    values = run_view.form_defaults(config, dt.date(2024, 5, 13))
    assert values["form_debate"] == 2 and values["form_date"] == dt.date(2024, 5, 10)
    assert values["form_analysts"] == list(config["selected_analysts"]) and values["form_ticker"] == "NVDA"
    assert run_view.form_defaults({**config, "max_debate_rounds": 99}, dt.date(2024, 5, 13))["form_debate"] == \
        ROUND_LIMITS[1]


def test_the_forms_values_make_the_runs_config():
    config = resolve_config({"llm_provider": "offline"})
    form = {"form_debate": 3, "form_risk": 2, "form_parallel": True, "form_pause": True, "form_presenter": True}
    before = dict(config)
    out = run_view.form_config(config, form)
    assert (out["max_debate_rounds"], out["max_risk_discuss_rounds"], out["analyst_execution"]) == (3, 2, "parallel")
    assert out["pause_before"] is True and out["allow_synthetic"] is False
    assert out["offline_stream_delay_s"] == run_view.PRESENTER_PACE_S
    paid = {**config, "llm_provider": "openai"}  # presenter pace is the offline engine's only
    assert run_view.form_config(paid, form)["offline_stream_delay_s"] == config["offline_stream_delay_s"]
    assert config == before  # the sidebar's config is not changed


def test_a_links_prefill_fills_only_what_the_form_can_show():
    today = dt.date(2024, 6, 1)
    values, problems = run_view.prefill_values(
        {"ticker": "AAPL" * 40, "date": "2024-05-10", "analysts": ["market", "nope", 3], "debate_rounds": 2,
         "risk_rounds": True}, today)
    assert values == {"form_ticker": ("AAPL" * 40)[:64], "form_date": dt.date(2024, 5, 10),
                      "form_analysts": ["market"], "form_debate": 2}
    assert problems == []
    values, problems = run_view.prefill_values({"date": "May 10", "debate_rounds": ROUND_LIMITS[1] + 1}, today)
    assert values == {} and "is not a date" in problems[0]
    early = (DATE_FLOOR - dt.timedelta(days=1)).isoformat()
    values, problems = run_view.prefill_values({"date": early}, today)
    assert values == {} and "outside the dates" in problems[0]
    values, problems = run_view.prefill_values({"date": "2030-01-01"}, today, ZH)  # after today; in Chinese
    assert values == {} and "2030-01-01" in problems[0] and "outside the dates" not in problems[0]


def test_a_saved_runs_link_names_its_folder_and_refuses_a_bad_backtest(tmp_path):
    config = {"results_dir": str(tmp_path / "results"), "backtests_dir": str(tmp_path / "bt")}
    assert run_view.saved_run_link({}, config) == (None, None)
    (ticker, date, cfg), problem = run_view.saved_run_link({"ticker": "NVDA", "date": "2024-05-10"}, config)
    assert (ticker, date, cfg["results_dir"], problem) == ("NVDA", "2024-05-10", config["results_dir"], None)
    linked, _problem = run_view.saved_run_link({"ticker": "NVDA", "date": "2024-05-10", "backtest": "b1",
                                                "variant": "with_memory"}, config)
    assert linked[2]["results_dir"] == str(tmp_path / "bt" / "b1" / "with_memory" / "results")
    for bad in ({"backtest": "../etc", "variant": "v"}, {"backtest": "b1"}):
        linked, problem = run_view.saved_run_link({"ticker": "NVDA", "date": "2024-05-10", **bad}, config)
        assert linked is None and "bad id or variant" in problem


def test_a_start_is_refused_while_the_same_ticker_and_date_runs():
    running = [SimpleNamespace(status="running", ticker="NVDA", date="2024-05-10"),
               SimpleNamespace(status="finished", ticker="AAPL", date="2024-05-10")]
    assert "already running" in run_view.busy_text(running, " nvda ", dt.date(2024, 5, 10))
    assert run_view.busy_text(running, "NVDA", "2024-05-09") is None
    assert run_view.busy_text(running, "AAPL", "2024-05-10") is None  # finished: may run again


def test_an_unknown_instrument_is_said_with_the_forms_own_way_out():
    exc = UnknownInstrumentError("unknown", ticker="NVDX", suggestions=("NVDA", "NVO"))
    text = run_view.unknown_instrument_text(exc)
    assert "did you mean NVDA / NVO?" in text and "Allow an invented instrument" in text
    assert "did you mean" not in run_view.unknown_instrument_text(UnknownInstrumentError("unknown", ticker="ZZZZ"))


def _progress(**kw):
    base = dict(settle=None, teams={}, intervals=[], agents=[], tool_calls=[], fraction=0.0)
    return SimpleNamespace(**{**base, **kw})


def test_the_board_shows_the_settlement_and_each_agent_with_its_finish_time():
    done = SimpleNamespace(agent="Market Analyst", status="done", started=1.0, finished=2.5, duration_s=1.5)
    waiting = SimpleNamespace(agent="Bull Researcher", status="pending", started=None, finished=None, duration_s=0.0)
    p = _progress(settle={"status": "done", "settled": 2, "pending": 1},
                  teams={"Analyst Team": [done], "Research Team": [waiting]},
                  intervals=[{"agent": "Market Analyst", "start": 1.0, "end": 2.5}, {"agent": "x", "start": 3.0}])
    board = run_view.agent_board_html(p)
    assert 'data-finishes="2.500"' in board and 'data-finished="2.500"' in board
    assert "2 settled · 1 pending" in board and 'data-status="pending"' in board
    running = run_view.agent_board_html(_progress(settle={"status": "running"}))
    assert 'data-step="settle" data-status="running"' in running
    assert "Bull ⇄ Bear → Research Manager" in run_view.flow_html()


def test_an_ended_run_gets_the_message_of_how_it_ended():
    def h(status, **kw):
        return SimpleNamespace(**{"status": status, "error_key": None, "error_key_env": None, "paused_before": None,
                                  **kw})

    assert run_view.ended_kind(h("failed", error_key_env="OPENAI_API_KEY")) == "config"
    assert run_view.ended_kind(h("failed")) == "failed" and run_view.ended_kind(h("crashed")) == "crashed"
    assert run_view.ended_kind(h("stopped", paused_before="portfolio_manager")) == "paused"
    assert run_view.ended_kind(h("stopped")) == "stopped"


def test_progress_label_timeline_and_tool_calls_use_the_roles_names():
    agent = SimpleNamespace(agent="Market Analyst", started=1.0, status="running")
    p = _progress(fraction=0.25, agents=[agent], intervals=[{"agent": "Market Analyst", "node": "Market Analyst"}],
                  tool_calls=[{"tool": "get_stock_data", "args": {"symbol": "NVDA"}, "agent": "Market Analyst",
                               "result_chars": 120}])
    assert run_view.progress_label(p, live=False, stopping=False) == "25% of agents done"
    assert run_view.progress_label(p, live=True, stopping=True) == "Stopping after the current step…"
    order, bars = run_view.timeline_rows(p, ZH)
    assert order == [ZH.p("role", "Market Analyst")] and bars[0]["node"] == order[0]
    assert run_view.tool_call_lines(p) == ["`get_stock_data(symbol='NVDA')` — Market Analyst · 120 chars"]
    assert run_view.changes_text([]) is None
    assert "Data source: demo → csv" in run_view.changes_text([("Data source", "demo", "csv")])


def test_costs_are_listed_most_expensive_first_and_estimates_say_their_source():
    meta = {"llm_provider": "openai", "usage": {"by_agent": {"Trader": 0.01, "Market Analyst": 0.2,
                                                             "Bear Researcher": None}}}
    rows = run_view.agent_costs(meta)
    assert [r["Agent"] for r in rows] == ["Market Analyst", "Trader", "Bear Researcher"]
    assert "no price" in run_view.cost_caption({"cost_usd": None}) + run_view.run_cost_caption({"cost_usd": None})
    assert "this run" in run_view.cost_caption({"cost_usd": 0.5, "source": "this run"})
    assert "3 past runs" in run_view.run_cost_caption({"cost_usd": 0.5, "source": "past runs", "runs": 3})
    assert "1 past run " in run_view.run_cost_caption({"cost_usd": 0.5, "source": "past runs", "runs": 1})
