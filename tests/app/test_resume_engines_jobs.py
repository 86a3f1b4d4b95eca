"""The Run page's jobs: a resume under other models is in the run's events; Start afresh discards the checkpoint."""

from __future__ import annotations

from studio.jobs import JobRegistry
from tests.fake_openai import FakeOpenAIServer, Fault

DATE = "2024-05-10"
OFFLINE = {"llm_provider": "offline"}


def _bull(body: dict) -> bool:
    # the role's own instructions open the message after the team's shared context
    return any(str(m.get("content") or "").startswith("You are the Bull Researcher") for m in body.get("messages") or [])


def _failed_networked_run(reg: JobRegistry, server: FakeOpenAIServer):
    server.inject(Fault(kind="status", times=None, status_code=500, when=_bull))
    cfg = server.llm_config(llm_max_retries=0)
    run_id = reg.start_run("NVDA", DATE, ["market"], cfg, api_key="k", owner="me")
    handle = reg.get(run_id)
    assert handle.wait(120) and handle.status == "failed" and handle.resumable, handle.error
    return run_id, handle


def test_resume_under_other_models_is_in_the_events_and_the_meta(ta_home):
    reg = JobRegistry()
    with FakeOpenAIServer() as server:
        run_id, handle = _failed_networked_run(reg, server)
    assert reg.resume(run_id, owner="me", config=OFFLINE) is True
    assert handle.wait(120) and handle.status == "finished", handle.error
    progress = handle.progress()
    assert [g["llm_provider"] for g in progress.earlier_engines] == ["openai_compatible"]
    assert "Market Analyst" in progress.earlier_engines[0]["nodes"]
    assert progress.engine["llm_provider"] == "offline"
    assert {g["llm_provider"] for g in handle.meta["ran_on"]} == {"openai_compatible", "offline"}


def test_start_afresh_discards_the_checkpoint(ta_home):
    reg = JobRegistry()
    with FakeOpenAIServer() as server:
        run_id, handle = _failed_networked_run(reg, server)
    assert reg.resume(run_id, owner="me", config=OFFLINE, fresh=True) is True
    assert handle.wait(120) and handle.status == "finished", handle.error
    assert handle.progress().earlier_engines == [] and handle.meta["resumed"] is False
    assert [g["llm_provider"] for g in handle.meta["ran_on"]] == ["offline"]


def test_a_new_run_with_start_afresh_does_not_resume(ta_home):
    reg = JobRegistry()
    with FakeOpenAIServer() as server:
        _failed_networked_run(reg, server)
    handle = reg.get(reg.start_run("NVDA", DATE, ["market"], OFFLINE, owner="me", fresh=True))
    assert handle.wait(120) and handle.status == "finished", handle.error
    assert handle.meta["resumed"] is False and [g["llm_provider"] for g in handle.meta["ran_on"]] == ["offline"]


def test_the_run_page_says_so_and_offers_start_afresh(ta_home):
    """The Run page (AppTest): a failed run offers Start afresh beside Resume; resumed under other models
    it says which models the checkpoint was begun with."""
    from streamlit.testing.v1 import AppTest

    from studio.ui import get_registry
    from tests.app.apptest_utils import APP, texts

    reg = get_registry()
    with FakeOpenAIServer() as server:
        run_id, handle = _failed_networked_run(reg, server)
    reg.get(run_id).owner = None  # claimed by whoever resumes it: this test's browser may press the buttons
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["run"] = run_id
    at.run()
    assert not at.exception
    labels = [str(b.label) for b in at.button]
    assert "Resume" in labels and "Start afresh" in labels
    assert reg.resume(run_id, config=OFFLINE) is True
    assert handle.wait(120) and handle.status == "finished", handle.error
    at.run()
    assert not at.exception
    shown = texts(at) + " ".join(w.value for w in at.warning)
    assert "resumed a checkpoint begun under other models" in shown and "fake-quick" in shown, shown[:2000]
    assert "more than one engine made this decision" in shown
