"""The run registry with the real offline engine: background run, progress, stop/resume, failure."""

from __future__ import annotations

import pytest

from studio.jobs import JobRegistry
from tests.app.apptest_utils import stopping_factory
from tests.browser.harness import free_port
from tradingagents import team
from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError
from tradingagents.graph.events import TERMINAL_KINDS, RunEvent
from tradingagents.rating import RATINGS_5_TIER
from tradingagents.validation import ValidationError


def test_offline_run_in_background_with_progress(ta_home):
    reg = JobRegistry()
    run_id = reg.start_run("nvda", "2024-05-10", ["news", "market"], {"max_debate_rounds": 2})
    handle = reg.get(run_id)
    assert handle.ticker == "NVDA" and handle.analysts == ["market", "news"]
    assert handle.wait(120), "the run did not finish"
    assert handle.status == "finished", handle.error
    assert handle.rating in RATINGS_5_TIER
    assert handle.final_state["final_trade_decision"].startswith(f"**Rating**: {handle.rating}")
    folder = ta_home / "results" / "NVDA" / "2024-05-10"
    assert handle.results_path == str(folder) and folder.is_dir()
    assert handle.record["state_path"] == str(folder / "state.json")
    assert handle.meta["ticker"] == "NVDA" and handle.meta["usage"]["llm_calls"] > 0
    assert [t["speaker"] for t in handle.meta["debate_turns"]] == ["Bull", "Bear"] * 2 + [
        "Aggressive", "Conservative", "Neutral"]
    assert [e.kind for e in handle.events if e.kind in TERMINAL_KINDS] == ["run_finished"]
    p = handle.progress()
    # the board is run_started's plan, agent for agent
    assert [(a.agent, a.team) for a in p.agents] == [
        (agent, g["team"]) for g in team.plan(["market", "news"]) for agent in g["agents"]]
    assert [a.status for a in p.agents] == ["done"] * len(p.agents)
    assert [a.agent for a in p.agents][:2] == ["Market Analyst", "News Analyst"]
    assert all(a.started <= a.finished for a in p.agents)
    assert p.fraction == 1.0 and p.current is None
    assert p.counters["llm_calls"] > 0 and p.counters["tool_calls"] == len(p.tool_calls) > 0
    assert {"market_report", "news_report", "final_trade_decision"} <= set(p.reports)
    assert "sentiment_report" not in p.reports
    # 2 debate rounds: bull and bear each spoke twice
    bull = next(a for a in p.agents if a.agent == "Bull Researcher")
    assert bull.runs == 2
    assert p.elapsed_s > 0
    assert reg.list()[0] is handle
    assert reg.stop(run_id) is False  # nothing to stop any more
    assert reg.resume(run_id) is False  # nor to resume


def test_validation_starts_nothing():
    reg = JobRegistry()
    with pytest.raises(ValidationError, match="not allowed"):
        reg.start_run("NV/DA", "2024-05-10", ["market"])
    with pytest.raises(ValidationError, match="future"):
        reg.start_run("NVDA", "2999-01-01", ["market"])
    with pytest.raises(ConfigError, match="at least one analyst"):
        reg.start_run("NVDA", "2024-05-10", [])
    with pytest.raises(ConfigError, match="from 1 to 10"):
        reg.start_run("NVDA", "2024-05-10", ["market"], {"max_debate_rounds": 99})
    assert reg.list() == []


def test_stop_between_nodes_then_resume_from_checkpoint(ta_home):
    holder: dict[str, object] = {}
    # the user presses Stop as soon as the market analyst has finished once
    reg = JobRegistry(graph_factory=stopping_factory(holder, "node_finished", "Market Analyst"))
    holder["reg"] = reg
    run_id = holder["id"] = reg.start_run("AAPL", "2024-05-10", ["market"])
    handle = reg.get(run_id)
    assert handle.wait(120)
    assert handle.status == "stopped" and handle.resumable
    before = handle.progress()
    assert before.current is None and 0 < before.fraction < 1.0
    assert not any(e.kind == "node_started" and e.agent == "Portfolio Manager" for e in handle.events)
    assert [e.kind for e in handle.events if e.kind in TERMINAL_KINDS] == ["run_stopped"]
    n_market = sum(1 for e in handle.events if e.kind == "node_started" and e.node == "Market Analyst")
    holder["armed"] = False  # no more stopping
    assert reg.resume(run_id) is True
    assert handle.wait(120)
    assert handle.status == "finished", handle.error
    assert handle.rating in RATINGS_5_TIER and handle.attempts == 2
    starts = [e for e in handle.events if e.kind == "run_started"]
    assert len(starts) == 2 and starts[1].data.get("resumed") is True
    # the resumed run continued after the finished node instead of starting over
    after = [e for e in handle.events[handle.events.index(starts[1]):] if e.kind == "node_started"]
    assert after[0].node != "Market Analyst" and n_market == 1
    assert all(a.status == "done" for a in handle.progress().agents)


def test_failed_run_shows_error_without_the_key_and_can_resume(ta_home):
    key = "sk-test-VERYSECRET-0123456789"
    reg = JobRegistry()
    cfg = {"llm_provider": "openai_compatible", "backend_url": f"http://127.0.0.1:{free_port()}/v1",
           "llm_max_retries": 0, "llm_timeout": 2.0, "quick_think_llm": "m", "deep_think_llm": "m"}
    run_id = reg.start_run("MSFT", "2024-05-10", ["market"], cfg, api_key=key)
    handle = reg.get(run_id)
    assert handle.wait(120)
    assert handle.status == "failed"
    assert handle.error and key not in handle.error
    failed = [e for e in handle.events if e.kind in TERMINAL_KINDS]
    assert [e.kind for e in failed] == ["run_failed"]  # the engine's own, not a second one
    assert handle.error == failed[0].data["error"] and handle.resumable is failed[0].data["resumable"] is True
    assert handle.results_path is None  # nothing was saved
    assert key not in repr(handle) and "api_key" not in handle.config
    assert resolve_config(handle.config)["llm_provider"] == "openai_compatible"
    for path in ta_home.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    # resume runs it again (and fails again the same way, since the server is still down)
    assert reg.resume(run_id) is True
    assert handle.wait(120) and handle.status == "failed" and handle.attempts == 2


def test_parallel_analysts_overlap_on_the_timeline():
    reg = JobRegistry()
    run_id = reg.start_run("NVDA", "2024-05-10", ["market", "social", "news", "fundamentals"],
                       {"analyst_execution": "parallel"})
    handle = reg.get(run_id)
    assert handle.wait(120) and handle.status == "finished", handle.error
    p = handle.progress()
    analysts = [a for a in p.agents if a.team == "Analyst Team"]
    assert len(analysts) == 4
    # side by side: every analyst started before any of them finished
    assert max(a.started for a in analysts) < min(a.finished for a in analysts)
    bull = next(a for a in p.agents if a.agent == "Bull Researcher")
    assert bull.started >= max(a.finished for a in analysts) - 1e-6


class _Engine:
    """A stand-in for the graph whose propagate misbehaves the given way (the real one never does)."""

    def __init__(self, behaviour):
        self.behaviour = behaviour

    def propagate(self, ticker, date, *, on_event, should_stop):
        on_event(RunEvent(kind="run_started", data={"plan": team.plan(["market"])}))
        return self.behaviour(on_event)


def _raise(_on_event):
    raise RuntimeError("worker died")


def _return_silently(_on_event):
    return {}, "Buy"


@pytest.mark.parametrize("behaviour, error", [(_raise, "worker died"),
                                              (_return_silently, "no error was raised")])
def test_a_worker_that_ends_without_a_terminal_event_is_a_crash_not_an_invented_event(behaviour, error):
    reg = JobRegistry(graph_factory=lambda **_: _Engine(behaviour))
    handle = reg.get(reg.start_run("NVDA", "2024-05-10", ["market"]))
    assert handle.wait(300)
    assert handle.status == "crashed" and error in handle.error and not handle.resumable
    assert [e.kind for e in handle.events] == ["run_started"]  # nothing fabricated
    assert handle.rating is None and handle.final_state is None and handle.record is None
    assert reg.resume(handle.run_id) is True and handle.wait(300) and handle.attempts == 2
