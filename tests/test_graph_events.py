"""The event contract (graph/events.py): roster-derived node metadata, plan, settings, debate turns,
the saved record, and exactly one terminal event per propagate call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.graph_helpers import fail_once_at
from tradingagents import team
from tradingagents.errors import EXIT_BAD_INPUT, EXIT_ERROR, EXIT_LLM_FAILURE, LLMCallError, RunStopped
from tradingagents.graph.events import TERMINAL_KINDS, describe_error, make_event
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.storage.files_runs import load_run

DATE = "2024-05-10"


def _run(config=None, **kwargs):
    events = []
    graph = TradingAgentsGraph(config={"analyst_execution": "sequential", **(config or {})}, **kwargs)
    state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
    return graph, events, state, rating


def _terminal(events):
    return [e for e in events if e.kind in TERMINAL_KINDS]


def test_node_events_carry_role_agent_and_team_from_the_roster():
    graph, events, _, _ = _run()
    node_events = [e for e in events if e.node]
    assert node_events
    for e in node_events:
        role = team.ROLE_BY_NODE[e.node]
        assert (e.agent, e.team, e.data["role"]) == (role.node, role.team, role.key)
    # the Market Analyst's model asks for its data: its tools_market step runs the calls, on its behalf
    assert any(e.kind == "node_started" and e.node == "tools_market" for e in events)
    fetched = [e for e in events if e.kind == "tool_call" and e.node == "tools_market"]
    assert fetched and all(e.agent == "Market Analyst" and e.data["role"] == "market" for e in fetched)


def test_run_started_carries_the_plan_and_the_settings():
    _, events, _, _ = _run(config={"selected_analysts": ["news", "market"], "max_debate_rounds": 2})
    started = events[0]
    assert started.kind == "run_started"
    assert started.data["plan"] == team.plan(["news", "market"])
    assert started.data["plan"][0] == {"team": "Analyst Team", "agents": ["News Analyst", "Market Analyst"]}
    settings = started.data["settings"]
    assert settings["llm_provider"] == "offline" and settings["data_vendor"] == "demo"
    assert settings["max_debate_rounds"] == 2 and settings["max_risk_discuss_rounds"] == 1
    assert settings["llm_label"] and settings["data_label"]
    assert set(settings) == {"llm_provider", "llm_label", "quick_think_llm", "deep_think_llm", "data_vendor",
                             "data_label", "max_debate_rounds", "max_risk_discuss_rounds"}


def test_debate_turns_carry_canonical_speaker_round_turn_and_only_their_own_text():
    _, events, state, _ = _run(config={"max_debate_rounds": 2, "max_risk_discuss_rounds": 1})
    turns = [e.data for e in events if e.kind == "debate_turn"]
    assert [(t["debate"], t["speaker"], t["round"], t["turn"]) for t in turns] == [
        ("invest", "Bull", 1, 1), ("invest", "Bear", 1, 2), ("invest", "Bull", 2, 3), ("invest", "Bear", 2, 4),
        ("risk", "Aggressive", 1, 1), ("risk", "Conservative", 1, 2), ("risk", "Neutral", 1, 3)]
    assert [t["role"] for t in turns[:2]] == ["bull", "bear"]
    history = state["investment_debate_state"]["history"]
    for t in turns:
        assert t["text"] and "\n" not in t["text"][:1]
        assert not t["text"].startswith(("Bull Analyst:", "Bear Analyst:", "Aggressive Analyst:"))
        if t["debate"] == "invest":
            assert f"{t['speaker']} Analyst: {t['text']}" in history
    judges = [(e.data["debate"], e.data["role"]) for e in events if e.kind == "judge_decision"]
    assert judges == [("invest", "research_manager"), ("risk", "portfolio_manager")]


def test_run_finished_carries_the_record_and_the_meta_keeps_the_turns():
    graph, events, state, rating = _run()
    [finished] = _terminal(events)
    assert finished is events[-1] and finished.kind == "run_finished"
    assert set(finished.data) == {"rating", "elapsed_s", "record"}
    record = finished.data["record"]
    folder = Path(record["results_path"])
    assert Path(record["report_path"]) == folder / "report.md" and Path(record["report_path"]).is_file()
    assert Path(record["state_path"]) == folder / "state.json" and Path(record["state_path"]).is_file()
    meta = record["meta"]
    assert meta["usage"]["llm_calls"] == graph.last_run["usage"]["llm_calls"] > 0
    assert {"tool_calls", "input_tokens", "output_tokens"} <= set(meta["usage"])
    assert meta["elapsed_s"] > 0 and meta["node_times_ms"]["Portfolio Manager"] > 0
    turns = [e.data for e in events if e.kind == "debate_turn"]
    assert meta["debate_turns"] == [{k: t[k] for k in ("debate", "role", "speaker", "round", "turn", "text")}
                                    for t in turns]
    saved = load_run(None, "NVDA", DATE)
    assert saved["meta"]["debate_turns"] == meta["debate_turns"]
    assert saved["meta"] == meta  # the record is what was saved
    assert "debate_turns" not in state  # the turns live in the meta, not twice in state.json
    json.dumps([e.to_dict() for e in events])


@pytest.mark.parametrize("ticker, date", [("../etc", DATE), ("NVDA", "2024-13-01"), (None, DATE)])
def test_a_refused_input_emits_exactly_one_terminal_event(ticker, date):
    events = []
    graph = TradingAgentsGraph()
    with pytest.raises(ValueError):
        graph.propagate(ticker, date, on_event=events.append)
    assert [e.kind for e in events] == ["run_failed"]
    data = events[0].data
    assert data["exit_code"] == EXIT_BAD_INPUT and data["resumable"] is False
    assert data["record"]["results_path"] is None and data["record"]["meta"]["usage"]["llm_calls"] == 0
    assert data["error_type"] not in data["error"]


def test_a_failure_mid_run_emits_one_run_failed_with_a_sentence_and_the_partial_record():
    events = []
    graph = TradingAgentsGraph(config={"analyst_execution": "sequential"}, callbacks=[fail_once_at("Trader")])
    with pytest.raises(Exception, match="injected failure"):
        graph.propagate("NVDA", DATE, on_event=events.append)
    [failed] = _terminal(events)
    assert failed is events[-1] and failed.kind == "run_failed"
    assert failed.data["error_type"] == "InjectedFault"
    assert "InjectedFault" not in failed.data["error"] and failed.data["error"].endswith(".")
    assert failed.data["exit_code"] == EXIT_ERROR
    assert failed.data["resumable"] is True  # checkpoints on, an unexpected failure keeps its checkpoint
    record = failed.data["record"]
    assert record["results_path"] is None and record["state_path"] is None
    assert record["meta"]["usage"]["llm_calls"] > 0
    assert [t["speaker"] for t in record["meta"]["debate_turns"]] == ["Bull", "Bear"]


def test_a_failure_without_checkpoints_is_not_resumable():
    events = []
    graph = TradingAgentsGraph(config={"checkpoint_enabled": False}, callbacks=[fail_once_at("Trader")])
    with pytest.raises(Exception, match="injected failure"):
        graph.propagate("NVDA", DATE, on_event=events.append)
    [failed] = _terminal(events)
    assert failed.data["resumable"] is False


def test_a_stop_emits_one_run_stopped_with_a_record():
    events = []
    graph = TradingAgentsGraph()
    with pytest.raises(RunStopped):
        graph.propagate("NVDA", DATE, on_event=events.append, should_stop=lambda: True)
    [stopped] = _terminal(events)
    assert stopped.kind == "run_stopped" and stopped.data["resumable"] is True
    assert stopped.data["record"]["results_path"] is None and "usage" in stopped.data["record"]["meta"]


def test_describe_error_is_a_sentence_and_never_a_class_name():
    assert describe_error(LLMCallError("The model server answered 500; try again later.")) == (
        "The model server answered 500; try again later.")
    text = describe_error(KeyError("market_report"))
    assert "KeyError" not in text and "market_report" in text and text.endswith(".")
    assert describe_error(RuntimeError("")).endswith(".") and "RuntimeError" not in describe_error(RuntimeError(""))
    assert LLMCallError.exit_code == EXIT_LLM_FAILURE


def test_make_event_without_a_node_has_no_role():
    event = make_event("llm_usage", None, llm_calls=1)
    assert (event.agent, event.team, event.data) == (None, None, {"llm_calls": 1})


def test_a_resumed_run_keeps_every_debate_turn_in_its_record():
    events, seen = [], []

    def on_event(e):
        events.append(e)
        if e.kind == "node_finished":
            seen.append(e.node)

    graph = TradingAgentsGraph()
    with pytest.raises(RunStopped):
        graph.propagate("NVDA", DATE, on_event=on_event, should_stop=lambda: "Bear Researcher" in seen)
    [stopped] = _terminal(events)
    assert [t["speaker"] for t in stopped.data["record"]["meta"]["debate_turns"]] == ["Bull", "Bear"]
    events.clear()
    graph.propagate("NVDA", DATE, on_event=events.append)
    assert events[0].data["resumed"] is True
    # the resumed run emits only the turns it ran, but its record has all of them
    assert [e.data["speaker"] for e in events if e.kind == "debate_turn"] == ["Aggressive", "Conservative",
                                                                              "Neutral"]
    meta = _terminal(events)[0].data["record"]["meta"]
    assert [(t["speaker"], t["turn"]) for t in meta["debate_turns"]] == [
        ("Bull", 1), ("Bear", 2), ("Aggressive", 1), ("Conservative", 2), ("Neutral", 3)]


# ---------------------------------------------------------------- the contract as types
def _keys_fit(event) -> str | None:
    """None when ``event.data`` has every required key of its kind's TypedDict and no other key."""
    from tradingagents.graph.events import EVENT_DATA

    spec = EVENT_DATA[event.kind]
    keys = set(event.data)
    missing, extra = spec.__required_keys__ - keys, keys - spec.__required_keys__ - spec.__optional_keys__
    if missing or extra:
        return f"{event.kind}: missing {sorted(missing)}, not declared {sorted(extra)}"
    return None


def test_every_kind_has_a_typeddict_and_every_event_of_real_runs_has_exactly_its_keys():
    import typing

    from tradingagents.graph.events import EVENT_DATA, EventKind, RunRecord, RunSettings

    assert set(EVENT_DATA) == set(typing.get_args(EventKind))
    # a finished run (parallel analysts, so the scratchpad tool events count too), a failed and a stopped one
    _, events, _, _ = _run({"analyst_execution": "parallel"})
    failed_events: list = []
    graph = TradingAgentsGraph(config={"analyst_execution": "sequential"}, callbacks=[fail_once_at("Trader")])
    with pytest.raises(Exception, match="injected failure"):
        graph.propagate("NVDA", DATE, on_event=failed_events.append)
    stopped_events: list = []
    with pytest.raises(RunStopped):
        TradingAgentsGraph().propagate("NVDA", DATE, on_event=stopped_events.append, should_stop=lambda: True)
    everything = events + failed_events + stopped_events
    assert {e.kind for e in everything} == set(EVENT_DATA)  # every kind was seen
    assert [problem for e in everything if (problem := _keys_fit(e))] == []
    # the nested records keep their shapes too
    for e in everything:
        if "record" in e.data:
            assert set(e.data["record"]) == RunRecord.__required_keys__, e.kind
        if e.kind == "run_started":
            assert set(e.data["settings"]) == RunSettings.__required_keys__
            assert all(set(p) == {"team", "agents"} for p in e.data["plan"])


def test_a_key_the_types_do_not_declare_is_caught():
    from tradingagents.graph.events import make_event

    assert _keys_fit(make_event("token", "Trader", text_delta="x")) is None
    assert _keys_fit(make_event("token", "Trader", text_delta="", restart=True)) is None
    assert "not declared ['colour']" in _keys_fit(make_event("token", "Trader", text_delta="x", colour=1))
    assert "missing ['text']" in _keys_fit(make_event("report", "Trader", key="trader_investment_plan"))
