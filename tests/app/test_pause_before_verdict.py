"""Pause before each verdict: the run waits before the Research Manager and the Portfolio Manager, the note
given there reaches the judge and the run's meta.pm_notes, and a paused run survives a server restart."""

from __future__ import annotations

import datetime as dt

import pytest

from studio.jobs import JobRegistry, steered_by_other
from studio.ui import get_registry
from tests.app.apptest_utils import form_button, new_app, texts
from tradingagents import storage
from tradingagents.errors import ValidationError


def _start_paused(at):
    at.text_input(key="form_ticker").input("NVDA")
    at.date_input(key="form_date").set_value(dt.date(2024, 5, 10))
    at.multiselect(key="form_analysts").set_value(["market"])
    at.checkbox(key="form_pause").check()
    form_button(at, "Start analysis").click()
    return at.run()


def _continue_with(at, note: str) -> None:
    [box] = [a for a in at.text_area if a.label.startswith("Your note to the")]
    box.input(note)
    form_button(at, "Continue").click()
    at.run()


def test_pause_before_each_verdict_then_continue_with_notes(ta_home):
    at = _start_paused(new_app("run"))
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(120)
    at.run()
    assert handle.paused_before == "research_manager"
    shown = texts(at)
    assert "Paused before the Research Manager" in shown
    assert "Bear Researcher" in shown and "Bull Researcher" in shown  # the debate so far, as bubbles
    _continue_with(at, "Earnings next week.")
    assert handle.wait(120)
    at.run()
    assert handle.paused_before == "portfolio_manager" and "Paused before the Portfolio Manager" in texts(at)
    _continue_with(at, "Keep it small.")
    assert handle.wait(120)
    at.run()
    assert handle.status == "finished"
    notes = storage.load_run(None, "NVDA", "2024-05-10")["meta"]["pm_notes"]
    assert [(n["before"], n["note"]) for n in notes] == [("research_manager", "Earnings next week."),
                                                        ("portfolio_manager", "Keep it small.")]
    assert "Keep it small." in texts(at)  # the result shows the notes


def test_a_paused_run_continues_after_a_server_restart(ta_home):
    at = _start_paused(new_app("run"))
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(120)
    # a restart: this server's registry forgets its jobs; the checkpoint and the offer stay
    get_registry.clear()
    again = new_app("run")  # without sign-in a browser is not known across a restart: whoever opens the app
    assert "Paused before the Research Manager" in texts(again)
    _continue_with(again, "Earnings next week.")
    run = get_registry().get(again.query_params["run"])
    assert run is not None and run.wait(120) and run.paused_before == "portfolio_manager"
    again.run()
    _continue_with(again, "Keep it small.")
    assert run.wait(120) and run.status == "finished"
    notes = storage.load_run(None, "NVDA", "2024-05-10")["meta"]["pm_notes"]
    assert [n["note"] for n in notes] == ["Earnings next week.", "Keep it small."]


def test_with_sign_in_only_the_owner_or_a_lead_steers_a_paused_run_after_a_restart(ta_home):
    assert steered_by_other("pm@desk", "other@desk") and not steered_by_other("pm@desk", "pm@desk")
    assert not steered_by_other("pm@desk", "lead@desk", lambda who: who == "lead@desk")
    assert not steered_by_other("a1b2c3browser", "another-browser")  # no sign-in: one's own machine
    offer = {"ticker": "NVDA", "date": "2024-05-10", "analysts": ["market"], "thread_id": "x", "owner": "pm@desk",
             "paused_before": "portfolio_manager", "config": {}}
    with pytest.raises(ValidationError, match="whoever started it"):
        JobRegistry().adopt(offer, owner="other@desk")
