"""The one job registry: the ownership rule and the key rule for every kind, and secrets used as they are.

Runs use a stand-in engine and batches and backtests a stand-in for their work (``run_batch``,
``Backtest.run``) that waits for Stop and records the key it was given: what is tested is the
registry's rule, not the engines (tests/app/test_runs.py and the page tests run the real ones).
"""

from __future__ import annotations

import json
import threading

import pytest

from studio.jobs import BacktestJob, BatchJob, JobRegistry, RunJob, may_control
from tests import pg_server as _pg
from tradingagents import storage, team
from tradingagents.batch import TickerOutcome
from tradingagents.errors import RunStopped
from tradingagents.graph.events import RunEvent

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures
KEY_A = "sk-owner-A-0123456789"
LEAD = "desk-lead"


class _StoppingEngine:
    """An engine whose runs stop at once, resumable."""

    def propagate(self, ticker, date, *, on_event, should_stop):
        on_event(RunEvent(kind="run_started", data={"plan": team.plan(["market"])}))
        on_event(RunEvent(kind="run_stopped", data={"resumable": True, "record": {}}))
        return {}, None


def _registry(keys: list) -> JobRegistry:
    """A registry whose runs stop at once (resumable) and record the key each attempt was given."""

    def factory(*, selected_analysts, config, api_key):
        keys.append(api_key)
        return _StoppingEngine()

    return JobRegistry(graph_factory=factory, is_desk_lead=lambda who: who == LEAD)


@pytest.fixture
def fake_batch(monkeypatch):
    """``run_batch`` that marks its tickers running, waits for Stop, and records its key."""
    keys: list = []
    started = threading.Event()

    def run_batch(tickers, date, config, *, max_cost_usd, api_key, on_update, should_stop):
        keys.append(api_key)
        for t in tickers:
            on_update(TickerOutcome(t, date, status="running"))
        started.set()
        while not should_stop():
            threading.Event().wait(0.01)
        for t in tickers:
            on_update(TickerOutcome(t, date, status="stopped", resumable=True, error="stopped"))

    monkeypatch.setattr("tradingagents.batch.run_batch", run_batch)
    return keys, started


@pytest.fixture
def fake_backtest_run(monkeypatch):
    """``Backtest.run`` that waits for Stop and records the key the backtest holds."""
    from tradingagents.backtest.engine import Backtest

    keys: list = []
    started = threading.Event()

    def run(self, on_progress=None, should_stop=None):
        keys.append(self._api_key)
        started.set()
        while not should_stop():
            threading.Event().wait(0.01)
        self.manifest.set(status="stopped", error=None)  # as the engine records a stop
        raise RunStopped("stopped")

    monkeypatch.setattr(Backtest, "run", run)
    return keys, started


def test_the_one_rule():
    assert may_control("A", "A") and not may_control("A", "B") and not may_control("A", None)
    assert may_control(None, "B") and may_control(None, None)  # nobody's job is anyone's
    assert may_control("A", LEAD, lambda who: who == LEAD) and not may_control("A", "B", lambda who: who == LEAD)


def test_a_run_of_another_owner_cannot_be_stopped_or_resumed_nor_on_its_key(ta_home):
    keys: list = []
    reg = _registry(keys)
    run_id = reg.start_run("NVDA", "2024-05-10", ["market"], api_key=KEY_A, owner="A")
    job = reg.get(run_id, "run")
    assert isinstance(job, RunJob) and job.wait(300) and job.status == "stopped" and job.resumable
    assert job.progress().agents  # anyone may watch
    assert reg.resume(run_id, owner="B") is False and reg.resume(run_id) is False
    assert reg.resume(run_id, owner="B", api_key="sk-B-0123456789") is False  # not even on B's own key
    assert job.attempts == 1 and keys == [KEY_A]
    # a desk lead may resume it, but never on the owner's key
    assert reg.resume(run_id, owner=LEAD) is True and job.wait(300)
    assert keys == [KEY_A, None] and job.owner == "A"
    # the owner's resume without a key given keeps the key this job holds (its own)... which is now
    # none, since the lead's resume ran without one; with a key, the owner's key is used again
    assert reg.resume(run_id, owner="A", api_key=KEY_A) is True and job.wait(300)
    assert reg.resume(run_id, owner="A") is True and job.wait(300)
    assert keys == [KEY_A, None, KEY_A, KEY_A]
    assert KEY_A not in repr(job)


def test_a_batch_of_another_owner_cannot_be_stopped_or_resumed_nor_on_its_key(ta_home, fake_batch):
    keys, started = fake_batch
    reg = JobRegistry(is_desk_lead=lambda who: who == LEAD)
    batch_id = reg.start_batch(["NVDA", "AAPL"], "2024-05-10", {}, api_key=KEY_A, owner="A")
    job = reg.get(batch_id, "batch")
    assert isinstance(job, BatchJob) and started.wait(300)
    assert job.running and job.progress()["total"] == 2  # anyone may watch
    assert reg.stop(batch_id, owner="B") is False and reg.stop(batch_id) is False
    assert not job.wait(0.2) and job.running and not job.stopping  # still running: nobody stopped it
    assert reg.stop(batch_id, owner="A") is True
    assert job.wait(300) and job.status == "finished"
    assert [o.status for o in job.result] == ["stopped", "stopped"]
    assert reg.resume(batch_id, owner="B") is False and len(keys) == 1
    started.clear()
    assert reg.resume(batch_id, owner=LEAD) is True and started.wait(300)
    assert keys == [KEY_A, None]  # the lead's resume never spends the owner's key
    assert job.stop(LEAD) and job.wait(300)
    started.clear()
    assert reg.resume(batch_id, owner="A", api_key=KEY_A) is True and started.wait(300)
    assert job.stop("A") and job.wait(300) and keys == [KEY_A, None, KEY_A]
    assert reg.get(batch_id, "run") is None  # a batch is no run


def test_a_backtest_of_another_owner_cannot_be_stopped_or_resumed_nor_on_its_key(ta_home, fake_backtest_run):
    from tradingagents.backtest.engine import BacktestSpec

    keys, started = fake_backtest_run
    reg = JobRegistry(is_desk_lead=lambda who: who == LEAD)
    spec = BacktestSpec.make("NVDA", "2024-06-03", "2024-06-07")
    bid = reg.start_backtest(spec, {}, api_key=KEY_A, owner="A")
    job = reg.backtest(bid)
    assert isinstance(job, BacktestJob) and started.wait(300)
    assert reg.start_backtest(spec, {}, owner="B") == bid and reg.backtest(bid) is job  # B watches A's
    assert reg.stop(bid, owner="B") is False and job.running
    assert reg.stop(bid, owner="A") is True and job.wait(300) and job.status == "stopped"
    assert reg.resume(bid, owner="B") is False and reg.resume(bid, owner="B", api_key="sk-B-0123456789") is False
    assert keys == [KEY_A]
    started.clear()
    assert reg.resume(bid, owner="A") is True and started.wait(300)  # the owner keeps its key
    assert job.stop("A") and job.wait(300) and keys == [KEY_A, KEY_A]
    started.clear()
    assert reg.resume(bid, owner=LEAD) is True and started.wait(300)  # a lead: never on the owner's key
    assert job.stop(LEAD) and job.wait(300) and keys == [KEY_A, KEY_A, None] and job.owner == "A"


def test_a_backtest_stays_its_owners_after_a_restart_and_the_same_form_takes_nothing_over(ta_home,
                                                                                          fake_backtest_run):
    """Issue 41, point 7: after a restart anyone could claim any backtest, and Start backtest with the same
    form took over someone's stopped one. The owner is kept in the backtest's folder."""
    from tradingagents.backtest.engine import BacktestSpec
    from tradingagents.errors import NotAllowed

    keys, started = fake_backtest_run
    ANN, BOB = "ann@desk.example · 0123456789", "bob@desk.example · 1111111111"  # signed-in people
    spec = BacktestSpec.make("NVDA", "2024-06-03", "2024-06-07")
    first = JobRegistry(is_desk_lead=lambda who: who == LEAD)
    bid = first.start_backtest(spec, {}, api_key=KEY_A, owner=ANN)
    assert started.wait(300) and first.stop(bid, owner=ANN) and first.backtest(bid).wait(300)
    with pytest.raises(NotAllowed, match="belongs to ann@desk.example"):
        first.start_backtest(spec, {}, api_key="sk-B-0123456789", owner=BOB)
    restarted = JobRegistry(is_desk_lead=lambda who: who == LEAD)  # a new server process: the folder is all it knows
    job = restarted.backtest(bid, {})
    assert job is not None and job.owner == ANN and job.status == "stopped"
    assert restarted.resume(bid, owner=BOB, api_key="sk-B-0123456789") is False
    with pytest.raises(NotAllowed):
        restarted.start_backtest(spec, {}, api_key="sk-B-0123456789", owner=BOB)
    started.clear()
    assert restarted.resume(bid, owner=ANN, api_key=KEY_A) is True and started.wait(300)
    assert job.owner == ANN and keys == [KEY_A, KEY_A]
    assert restarted.stop(bid, owner=LEAD) is True and job.wait(300)  # a lead may


def _stand_in_factory(seen: list):
    def factory(*, selected_analysts, config, api_key):
        seen.append(dict(config))
        return _StoppingEngine()

    return factory


def test_a_run_works_with_its_real_settings_and_saves_only_public_ones(ta_home, pg_url):
    password_url = pg_url.replace("postgresql://postgres@", "postgresql://postgres:s3cr3t-pw@")
    backend = "http://alice:hunter2-pass@127.0.0.1:9/v1"
    cfg = {"llm_provider": "openai_compatible", "backend_url": backend, "quick_think_llm": "m",
           "deep_think_llm": "m", "storage_url": password_url}
    seen: list = []
    reg = JobRegistry(graph_factory=_stand_in_factory(seen))
    job = reg.get(reg.start_run("NVDA", "2024-05-10", ["market"], cfg, api_key="sk-0123456789", owner="A"))
    assert job.wait(300) and job.status == "stopped", job.error
    # the work got the settings as given: the database's password and the server's credentials
    assert seen[0]["storage_url"] == password_url and seen[0]["backend_url"] == backend
    assert job.config["storage_url"] == password_url and job.config["backend_url"] == backend
    # what was saved for Resume after a restart (in the desk database) has neither
    kept = storage.app_run(job.config, job.thread_id)
    assert kept is not None and kept["ticker"] == "NVDA"
    text = json.dumps(kept)
    assert "s3cr3t-pw" not in text and "hunter2-pass" not in text and "alice:" not in text
    assert "sk-0123456789" not in text
    # a resume with the settings on screen keeps them real too
    assert reg.resume(job.id, owner="A", config=cfg) is True and job.wait(300)
    assert seen[1]["storage_url"] == password_url and seen[1]["backend_url"] == backend


def test_a_run_on_files_saves_its_offer_without_credentials(ta_home):
    from tradingagents.config import resolve_config

    backend = "http://alice:hunter2-pass@127.0.0.1:9/v1"
    seen: list = []
    reg = JobRegistry(graph_factory=_stand_in_factory(seen))
    job = reg.get(reg.start_run("NVDA", "2024-05-10", ["market"], {
        "llm_provider": "openai_compatible", "backend_url": backend, "quick_think_llm": "m",
        "deep_think_llm": "m"}, api_key="sk-0123456789"))
    assert job.wait(300) and seen[0]["backend_url"] == backend
    path = ta_home / "checkpoints" / "app_runs" / f"{job.thread_id}.json"
    assert resolve_config()["app_runs_dir"] == str(path.parent) and path.is_file()
    raw = path.read_text(encoding="utf-8")
    assert "hunter2-pass" not in raw and "alice" not in raw and "sk-0123456789" not in raw
    assert json.loads(raw)["config"]["backend_url"] == "http://***@127.0.0.1:9/v1"


class _SpeakingEngine:
    """An engine that writes its first words when ``speak`` is set and ends (stopped) when ``end`` is."""

    def __init__(self, speak: threading.Event, end: threading.Event, words: str = "Momentum holds"):
        self.speak, self.end, self.words = speak, end, words

    def propagate(self, ticker, date, *, on_event, should_stop):
        on_event(RunEvent(kind="run_started", data={"plan": team.plan(["market"])}))
        # a retried call's restart carries no words: nothing to show yet
        on_event(RunEvent(kind="token", node="Market Analyst", data={"role": "market", "text_delta": "",
                                                                      "restart": True}))
        assert self.speak.wait(300)
        if self.words:
            on_event(RunEvent(kind="token", node="Market Analyst", data={"role": "market", "text_delta": self.words}))
        assert self.end.wait(300)
        on_event(RunEvent(kind="run_stopped", data={"resumable": True, "record": {}}))
        return {}, None


def test_the_page_after_start_can_wait_for_the_first_words_and_never_longer_than_the_run(ta_home):
    speak, end = threading.Event(), threading.Event()
    reg = JobRegistry(graph_factory=lambda **_: _SpeakingEngine(speak, end))
    job = reg.get(reg.start_run("NVDA", "2024-05-10", ["market"], owner="A"), "run")
    assert job.wait_for_words(0.05) is False  # started, no words yet (the restart's empty delta is none)
    speak.set()
    assert job.wait_for_words(300) is True and job.status == "running"  # the words, while it still runs
    assert job.progress().live_text == "Momentum holds"
    end.set()
    assert job.wait(300) and job.status == "stopped"

    # a run that ends without a word does not keep the page waiting
    speak2, end2 = threading.Event(), threading.Event()
    reg2 = JobRegistry(graph_factory=lambda **_: _SpeakingEngine(speak2, end2, words=""))
    job2 = reg2.get(reg2.start_run("NVDA", "2024-05-10", ["market"], owner="A"), "run")
    speak2.set()
    assert job2.wait_for_words(0.05) is False
    end2.set()
    assert job2.wait_for_words(300) is True and job2.wait(300) and job2.status == "stopped"
    # a resume waits for its own words, not the last attempt's
    speak2.clear(), end2.clear()
    assert reg2.resume(job2.run_id, owner="A") is True
    assert job2.wait_for_words(0.05) is False
    speak2.set(), end2.set()
    assert job2.wait(300) and job2.wait_for_words(0) is True
