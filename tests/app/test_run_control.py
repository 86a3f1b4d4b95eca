"""The run registry's ownership, resume-with-new-settings, resume after a restart, stop and live text."""

from __future__ import annotations

import pytest

from studio.jobs import JobRegistry
from studio.runs import derive_progress
from tests.app.apptest_utils import stopping_factory
from tests.browser.harness import free_port
from tests.fake_openai import FakeOpenAIServer
from tradingagents.errors import LLMConfigError
from tradingagents.rating import RATINGS_5_TIER


def test_only_the_owner_may_stop_or_resume_others_may_watch(ta_home):
    holder: dict = {"owner": "browser-A"}
    reg = JobRegistry(graph_factory=stopping_factory(holder, "node_finished", "Market Analyst"))
    holder["reg"] = reg
    run_id = holder["id"] = reg.start_run("NVDA", "2024-05-10", ["market"], owner="browser-A")
    handle = reg.get(run_id)
    assert handle.wait(120) and handle.status == "stopped" and handle.resumable
    assert handle.progress().fraction > 0  # anyone may watch
    assert reg.resume(run_id, owner="browser-B") is False
    assert reg.resume(run_id) is False  # no owner at all is not the owner either
    assert handle.status == "stopped" and handle.attempts == 1
    holder["armed"] = False
    assert reg.resume(run_id, owner="browser-A") is True
    assert reg.stop(run_id, owner="browser-B") is False
    assert handle.wait(120) and handle.status == "finished", handle.error


def test_a_missing_key_is_refused_up_front_naming_the_key_and_starts_nothing(ta_home):
    reg = JobRegistry()
    with pytest.raises(LLMConfigError) as info:
        reg.start_run("NVDA", "2024-05-10", ["market"], {"llm_provider": "openai"})
    assert info.value.key_env == "OPENAI_API_KEY"
    with pytest.raises(LLMConfigError) as info:
        reg.start_run("NVDA", "2024-05-10", ["market"], {"llm_provider": "openai_compatible"})
    assert info.value.key == "backend_url"
    assert reg.list() == []


def test_resume_uses_the_settings_given_now_and_lists_what_changed(ta_home):
    reg = JobRegistry()
    cfg = {"llm_provider": "openai_compatible", "backend_url": f"http://127.0.0.1:{free_port()}/v1",
           "llm_max_retries": 0, "llm_timeout": 2.0, "quick_think_llm": "fake-quick", "deep_think_llm": "fake-deep"}
    run_id = reg.start_run("MSFT", "2024-05-10", ["market"], cfg, api_key="k1", owner="me")
    handle = reg.get(run_id)
    assert handle.wait(120) and handle.status == "failed" and handle.resumable
    with FakeOpenAIServer(rating="Overweight") as server:
        fixed = {**cfg, "backend_url": server.base_url, "max_debate_rounds": 3}
        assert reg.resume(run_id, owner="me", config=fixed, api_key="k2") is True
        assert handle.wait(120) and handle.status == "finished", handle.error
    assert handle.config["backend_url"] == server.base_url
    assert handle.config["max_debate_rounds"] == 1  # the checkpoint's own: rounds are not changed by a resume
    assert [c[0] for c in handle.config_changes] == ["Base URL"]
    assert handle.rating == "Overweight"
    # the counters and the elapsed time span both attempts
    assert handle.progress().elapsed_s >= handle.meta.get("elapsed_s", 0) - 1e-6


def test_after_a_restart_a_checkpointed_run_is_offered_and_resumes(ta_home):
    holder: dict = {}
    reg = JobRegistry(graph_factory=stopping_factory(holder, "node_finished", "Bull Researcher"))
    holder["reg"] = reg
    run_id = holder["id"] = reg.start_run("AAPL", "2024-05-10", ["market", "news"], {"max_debate_rounds": 2})
    assert reg.get(run_id).wait(120) and reg.get(run_id).status == "stopped"
    assert reg.checkpointed_runs() == []  # this registry still holds it

    restarted = JobRegistry()  # a new server process
    offered = restarted.checkpointed_runs()
    assert [(o["ticker"], o["date"], o["analysts"]) for o in offered] == [("AAPL", "2024-05-10", ["market", "news"])]
    assert "api_key" not in offered[0]["config"]
    new_id = restarted.adopt(offered[0], config={"llm_provider": "offline"}, owner="me")
    handle = restarted.get(new_id)
    assert handle.wait(120) and handle.status == "finished", handle.error
    assert handle.rating in RATINGS_5_TIER and handle.config["max_debate_rounds"] == 2
    starts = [e for e in handle.events if e.kind == "run_started"]
    assert starts[0].data["resumed"] is True
    assert restarted.checkpointed_runs() == []  # finished: the checkpoint is gone, nothing to offer


def test_stop_while_an_agent_runs_starts_no_further_agent(ta_home):
    holder: dict = {}
    reg = JobRegistry(graph_factory=stopping_factory(holder, "node_started", "Neutral Analyst"))
    holder["reg"] = reg
    run_id = holder["id"] = reg.start_run("NVDA", "2024-05-10", ["market"])
    handle = reg.get(run_id)
    assert handle.wait(120) and handle.status == "stopped"
    started = [e.node for e in handle.events if e.kind == "node_started"]
    assert started[-1] == "Neutral Analyst" and "Portfolio Manager" not in started


def test_live_text_settle_step_and_incremental_progress(ta_home):
    reg = JobRegistry()
    handle = reg.get(reg.start_run("NVDA", "2024-05-10", ["market"]))
    seen = []
    while not handle.wait(0.01):
        seen.append(handle.progress())  # folded incrementally while the run goes
    final = handle.progress()
    whole = derive_progress(handle.events, started_at=handle._started_at, finished_at=handle.finished_at)
    assert [(a.agent, a.status, a.runs) for a in final.agents] == [(a.agent, a.status, a.runs) for a in whole.agents]
    assert final.reports == whole.reports and final.counters == whole.counters
    kinds = [e.kind for e in handle.events]
    assert kinds[0] == "run_started"  # the settling of past decisions is the run's first step
    assert kinds.index("settle_started") < kinds.index("settle_finished") < kinds.index("node_started")
    assert final.settle["status"] == "done" and final.settle["settled"] == 0
    tokens = [e for e in handle.events if e.kind == "token"]
    assert tokens and all(e.data["text_delta"] for e in tokens)
    # the Market Analyst's streamed text is its report, as written
    market = "".join(e.data["text_delta"] for e in tokens if e.node == "Market Analyst")
    assert market and market[:60] in final.reports["market_report"]
    # the newest report is the last one that landed
    assert final.newest_report == "final_trade_decision" and list(final.reports)[-1] == "final_trade_decision"


def test_eta_comes_from_past_runs_with_the_same_configuration(ta_home):
    reg = JobRegistry()
    first = reg.wait(reg.start_run("NVDA", "2024-05-10", ["market"]))
    assert first.status == "finished" and first.expected_s is None  # nothing to learn from yet
    second = reg.wait(reg.start_run("AAPL", "2024-05-10", ["market"]))
    assert second.expected_s == pytest.approx(first.meta["elapsed_s"])
    other = reg.wait(reg.start_run("MSFT", "2024-05-10", ["news"]))  # other analysts: not comparable
    assert other.expected_s is None
    rounds = reg.wait(reg.start_run("AMD", "2024-05-10", ["market"], {"max_debate_rounds": 3}))
    assert rounds.expected_s is None


def test_after_a_restart_an_interrupted_run_stays_its_owners(ta_home):
    """Issue 41, point 7: after a restart anyone could resume anyone's interrupted run (saved as theirs)."""
    import pytest

    from tradingagents.errors import NotAllowed

    holder: dict = {"owner": "ann · 0123456789"}
    reg = JobRegistry(graph_factory=stopping_factory(holder, "node_finished", "Bull Researcher"))
    holder["reg"] = reg
    run_id = holder["id"] = reg.start_run("AAPL", "2024-05-10", ["market"], {}, owner="ann · 0123456789")
    assert reg.get(run_id).wait(120) and reg.get(run_id).status == "stopped"

    restarted = JobRegistry(is_desk_lead=lambda who: who == "lead · 9876543210")
    offered = restarted.checkpointed_runs()
    assert offered[0]["owner"] == "ann · 0123456789"
    with pytest.raises(NotAllowed, match="belongs to ann"):
        restarted.adopt(offered[0], config={"llm_provider": "offline"}, owner="bob · 1111111111")
    new_id = restarted.adopt(offered[0], config={"llm_provider": "offline"}, owner="lead · 9876543210")
    handle = restarted.get(new_id)
    assert handle.owner == "ann · 0123456789"  # continued by the lead, still Ann's
    assert handle.wait(120) and handle.status == "finished", handle.error


def test_the_live_box_keeps_the_last_words_until_the_next_agent_speaks(ta_home):
    """At a fast model's pace an agent's text is over between two polls of the page: the live box keeps the
    last words said (naming who said them) until the agent now running says its own."""
    reg = JobRegistry()
    handle = reg.wait(reg.start_run("NVDA", "2024-05-10", ["market"]))
    events = list(handle.events)
    first_token = next(i for i, e in enumerate(events) if e.kind == "token")
    speaker = events[first_token].agent or events[first_token].node
    # the next agent to start after the speaker's words, before it says anything
    nxt = next(i for i, e in enumerate(events) if i > first_token and e.kind == "node_started"
               and (e.agent or e.node) != speaker)
    silent = next((i for i, e in enumerate(events) if i > nxt and e.kind == "token"), len(events))
    quiet = derive_progress(events[:nxt + 1], started_at=handle._started_at)
    assert quiet.live_agent == speaker and quiet.live_text  # the last words stay, with their speaker's name
    said = "".join(e.data["text_delta"] for e in events[:nxt] if e.kind == "token" and (e.agent or e.node) == speaker)
    assert quiet.live_text == said
    if silent < len(events):  # once the next agent speaks, the box is its
        spoken = derive_progress(events[:silent + 1], started_at=handle._started_at)
        assert spoken.live_agent == (events[silent].agent or events[silent].node) and spoken.live_text
