"""The portfolio manager's notes to the judges: given up front (``--note``, ``--note-for``, config
``pm_notes``), read in that judge's prompt, kept in the run's ``meta.pm_notes`` and shown in the report."""

from __future__ import annotations

import json

import pytest

from tests.fake_openai import fake_openai  # noqa: F401
from tradingagents import cli, storage
from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
NOTE = "Earnings next week; keep it small."


def _prompt_of(requests, marker: str) -> str:
    [request] = [r for r in requests if marker in json.dumps(r["messages"], ensure_ascii=False)]
    return "\n".join(str(m.get("content")) for m in request["messages"])


def test_a_note_for_the_portfolio_manager_reaches_its_prompt_and_no_other(fake_openai):  # noqa: F811
    cfg = fake_openai.llm_config(analyst_execution="sequential", selected_analysts=["market"],
                                 pm_notes=[{"before": "portfolio_manager", "note": NOTE}], user="pm@desk")
    TradingAgentsGraph(config=cfg).propagate("NVDA", DATE)
    requests = fake_openai.chat_requests
    pm = _prompt_of(requests, "Make the final decision.")
    assert "<portfolio_manager_note>" in pm and NOTE in pm
    rm = _prompt_of(requests, "Judge the debate and write the investment plan.")
    assert NOTE not in rm and "portfolio_manager_note" not in rm
    assert sum(NOTE in json.dumps(r["messages"], ensure_ascii=False) for r in requests) == 1
    [note] = storage.load_run(cfg, "NVDA", DATE)["meta"]["pm_notes"]
    assert note["before"] == "portfolio_manager" and note["note"] == NOTE and note["by"] == "pm@desk" and note["at"]


def test_cli_note_goes_to_both_judges_is_kept_and_shown(capsys):
    assert cli.main(["NVDA", DATE, "--analysts", "market", "--quiet", "--note", NOTE,
                     "--note-for", "Portfolio Manager", "Half size at most."]) == 0
    capsys.readouterr()
    data = storage.load_run(None, "NVDA", DATE)
    notes = data["meta"]["pm_notes"]
    assert [(n["before"], n["note"]) for n in notes] == [
        ("research_manager", NOTE), ("portfolio_manager", NOTE), ("portfolio_manager", "Half size at most.")]
    assert data["state"]["pm_notes"] == notes
    assert cli.main(["show", "NVDA", DATE]) == 0
    report = capsys.readouterr().out
    assert "## Portfolio manager's notes" in report and "To the Portfolio Manager" in report and NOTE in report


def test_a_note_to_anyone_but_a_judge_is_refused_before_anything_runs(capsys):
    assert cli.main(["NVDA", DATE, "--note-for", "trader", "Buy it all."]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "--note/--note-for" in err and "research_manager" in err and "portfolio_manager" in err
    assert storage.list_runs(None) == []
    with pytest.raises(ConfigError, match="under 2000"):
        resolve_config({"pm_notes": [{"before": "portfolio_manager", "note": "x" * 2001}]})
    assert resolve_config({"pause_before": True})["pause_before"] == ["research_manager", "portfolio_manager"]
    assert resolve_config({"pause_before": "Portfolio Manager"})["pause_before"] == ["portfolio_manager"]


def test_questions_are_the_reports_appendix(capsys):
    assert cli.main(["NVDA", DATE, "--analysts", "market", "--quiet"]) == 0
    assert cli.main(["ask", "NVDA", DATE, "--agent", "trader", "What size?", "--by", "pm@desk"]) == 0
    capsys.readouterr()
    assert cli.main(["show", "NVDA", DATE]) == 0
    report = capsys.readouterr().out
    assert "## Questions to the team" in report and "pm@desk asked the Trader" in report and "> What size?" in report


def test_a_note_added_at_a_pause_reaches_the_judges_prompt_after_a_restart(fake_openai):  # noqa: F811
    from tradingagents.errors import RunPaused, ValidationError

    cfg = fake_openai.llm_config(analyst_execution="sequential", selected_analysts=["market"],
                                 pause_before=["portfolio_manager"])
    with pytest.raises(RunPaused) as paused:
        TradingAgentsGraph(config=cfg).propagate("NVDA", DATE)
    assert paused.value.before == "portfolio_manager" and cli.EXIT_STOPPED == paused.value.exit_code
    assert not any("Make the final decision." in json.dumps(r["messages"]) for r in fake_openai.chat_requests)
    # another graph object (a restarted server) reads the checkpoint and adds the note
    later = TradingAgentsGraph(config=cfg)
    assert later.paused_state("NVDA", DATE)["paused_before"] == "portfolio_manager"
    later.add_pm_note("NVDA", DATE, NOTE, by="pm@desk")
    assert [(e["action"], e["by"]) for e in storage.read_audit(cfg) if e["action"] == "pm_note"] == [
        ("pm_note", "pm@desk")]
    fake_openai.reset_counters()
    _state, rating = TradingAgentsGraph(config=cfg).propagate("NVDA", DATE)
    assert rating
    pm = _prompt_of(fake_openai.chat_requests, "Make the final decision.")
    assert NOTE in pm and "<portfolio_manager_note>" in pm
    # only the Portfolio Manager ran again: nothing before the pause was repeated
    assert len(fake_openai.chat_requests) == 1
    assert [n["note"] for n in storage.load_run(cfg, "NVDA", DATE)["meta"]["pm_notes"]] == [NOTE]
    with pytest.raises(ValidationError, match="not paused"):
        TradingAgentsGraph(config=cfg).add_pm_note("NVDA", DATE, "too late")
