"""The Run page's live view: presenter pace for the offline engine, a truthful ETA, the names of every
agent at work, and a form that Enter does not submit."""

from __future__ import annotations

import datetime as dt

from studio import runs
from studio.ui import get_registry
from tests.app.apptest_utils import new_app, start_offline_run
from tradingagents.config import resolve_config
from tradingagents.llm_clients.factory import create_llm


def test_eta_never_claims_zero_left_and_uses_this_runs_pace(ta_home):
    eta = runs.eta_text
    assert eta(60, 10, 0.0).startswith("About 50s left")
    assert eta(60, 50, 0.25).startswith("About 150s left")  # a quarter done in 50 s: ~150 s to go
    late = eta(5, 30, 0.0)
    assert "0s left" not in late and late.startswith("Taking longer than usual") and "30s so far" in late
    assert runs.working_label(["Market Analyst", "News Analyst", "Fundamentals Analyst"]) == (
        "Market Analyst, News Analyst and Fundamentals Analyst are working…")


def test_enter_does_not_submit_and_presenter_pace_slows_only_the_offline_words(ta_home):
    at = new_app("run")
    form = next(f for f in at.get("form"))
    assert form.proto.form.enter_to_submit is False
    at.toggle(key="form_presenter").set_value(True)
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.config["offline_stream_delay_s"] > 0
    assert create_llm(resolve_config({"offline_stream_delay_s": 0.04}), "quick").stream_delay_s == 0.04
    assert handle.wait(300)


def test_parallel_analysts_show_their_own_end_times_on_the_board(ta_home):
    """The four parallel analysts' Msg Clear nodes end together at the step's barrier; the board shows when
    each analyst's own work ended, as the timeline does."""
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    events = []
    cfg = resolve_config({"analyst_execution": "parallel"})
    TradingAgentsGraph(config=cfg).propagate("NVDA", "2024-05-10", on_event=events.append)
    p = runs.derive_progress(events)
    analysts = {a.agent: a for a in p.agents if a.team == "Analyst Team"}
    assert len(analysts) == 4
    for name, a in analysts.items():
        own = max(iv["end"] for iv in p.intervals if iv["node"] == name)
        assert a.finished == own, name
