"""Batches on a real local Ray: the same results as on threads; a worker killed mid-run → the batch completes.

One Ray session for the module (local to this machine, two CPUs, no dashboard), shut down at the end.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import ray  # noqa: E402  (in requirements.txt: a missing ray fails here, never skips)

import tests.pg_server as _pg
from tests.graph_helpers import comparable
from tradingagents import batch
from tradingagents.executor import RayExecutor, get_executor
from tradingagents.storage import load_run

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures
DATE = "2024-05-10"
TICKERS = ["NVDA", "AAPL", "MSFT", "0700.HK"]


_STARTUP_STDERR: list[str] = []  # what this process printed on stderr while the module's session started


@pytest.fixture(scope="module")
def ray_session(tmp_path_factory):
    import sys

    from tradingagents.executor import ensure_ray

    err = tmp_path_factory.mktemp("ray") / "stderr.txt"
    sys.stderr.flush()
    saved = os.dup(2)
    with open(err, "w") as f:
        os.dup2(f.fileno(), 2)  # the file descriptor (Ray's own C++ lines) and sys.stderr (logging's)
        real, sys.stderr = sys.stderr, f
        try:
            ensure_ray(None, 2)
        finally:
            sys.stderr = real
            f.flush()
            os.dup2(saved, 2)
            os.close(saved)
    _STARTUP_STDERR.append(err.read_text(errors="replace"))
    yield ray
    ray.shutdown()


def _listening(pid: int) -> list[tuple[str, str, int]]:
    """(process name, address, port) of every listening TCP socket of ``pid`` and its descendants."""
    import psutil  # Ray ships it (ray/thirdparty_files, on sys.path once ray is imported)

    me = psutil.Process(pid)
    out = []
    for proc in [me, *me.children(recursive=True)]:
        try:
            conns = proc.net_connections(kind="inet")
            name = proc.name()
        except psutil.Error:  # a worker that ended meanwhile
            continue
        out += [(name, c.laddr.ip, c.laddr.port) for c in conns if c.status == psutil.CONN_LISTEN]
    return out


def _is_loopback(ip: str) -> bool:
    import ipaddress

    addr = ipaddress.ip_address(ip.split("%")[0])
    mapped = getattr(addr, "ipv4_mapped", None)
    return (mapped or addr).is_loopback


def test_a_local_ray_listens_on_the_loopback_only(ray_session):
    ray.get([ray.remote(_square_or_fail).remote(3)])  # a worker process is up too
    sockets = _listening(os.getpid())
    names = {name for name, _, _ in sockets}
    assert any("gcs" in n for n in names) and any("raylet" in n for n in names), sockets  # Ray's servers seen
    exposed = [s for s in sockets if not _is_loopback(s[1])]
    assert exposed == [], f"Ray listens beyond the loopback: {exposed}"
    assert {n["NodeManagerAddress"] for n in ray.nodes()} == {"127.0.0.1"}


def test_starting_a_local_ray_prints_no_token_notice(ray_session):
    from ray._private.authentication.authentication_token_setup import get_authentication_mode
    from ray._raylet import AuthenticationMode

    assert "token authentication" not in _STARTUP_STDERR[0].lower(), _STARTUP_STDERR[0]
    assert get_authentication_mode() == AuthenticationMode.TOKEN  # the notice is gone, the authentication stays


def test_executor_setting_chooses_ray_and_keeps_its_interface(ray_session):
    ex = get_executor({"executor": "ray", "max_concurrent_llm_calls": 3}, n_tasks=10)
    assert isinstance(ex, RayExecutor) and ex.max_workers == 3
    assert len(ray.nodes()) == 1  # a local Ray: this machine only
    results = ex.run(_square_or_fail, [1, 2, 3, 4])
    assert [r.value for r in results] == [1, None, 9, 16]
    assert isinstance(results[1].error, ValueError) and "two" in str(results[1].error)  # our error, unwrapped


def test_a_task_function_that_cannot_leave_the_process_runs_on_threads(ray_session, caplog):
    import threading

    lock = threading.Lock()

    def fn(x):  # a closure over a lock: not picklable
        with lock:
            return x + 1

    results = RayExecutor(2).run(fn, [1, 2])
    assert [r.value for r in results] == [2, 3]
    assert "on threads" in caplog.text


def test_stopping_a_ray_batch_starts_no_further_ticker(ray_session, tmp_path):
    stopped = {"now": False}

    def on_update(o):
        if o.status == "done":
            stopped["now"] = True  # stop as soon as the first ticker is finished

    cfg = {"home": str(tmp_path), "max_concurrent_llm_calls": 1, "executor": "ray"}
    outcomes = batch.run_batch(TICKERS, DATE, cfg, on_update=on_update, should_stop=lambda: stopped["now"])
    assert outcomes[0].status == "done" and {o.status for o in outcomes[1:]} == {"stopped"}
    assert batch.exit_code(outcomes) == 5
    again = batch.run_batch(TICKERS, DATE, cfg)  # running again finishes it, the first reused
    assert [o.status for o in again] == ["reused", "done", "done", "done"]


def _square_or_fail(x):
    if x == 2:
        raise ValueError("two is refused")
    return x * x


def test_batch_on_ray_gives_the_same_results_as_on_threads(ray_session, tmp_path):
    threads = batch.run_batch(TICKERS, DATE, {"home": str(tmp_path / "t"), "max_concurrent_llm_calls": 2})
    seen = []
    on_ray = batch.run_batch(TICKERS, DATE, {"home": str(tmp_path / "r"), "max_concurrent_llm_calls": 2,
                                             "executor": "ray"}, on_update=seen.append)
    assert [o.status for o in on_ray] == ["done"] * 4
    assert [(o.ticker, o.rating) for o in on_ray] == [(o.ticker, o.rating) for o in threads]
    assert {o.ticker for o in seen if o.status == "done"} == set(TICKERS)
    for t in TICKERS:  # the same saved reports and decisions (the offline engine is deterministic)
        a = load_run({"home": str(tmp_path / "t")}, t, DATE)
        b = load_run({"home": str(tmp_path / "r")}, t, DATE)
        assert comparable(a["state"]) == comparable(b["state"]) and a["rating"] == b["rating"]


def _killing_task(task):
    """Kill this Ray worker's own process mid-run on the first attempt (a marker file says which)."""
    from tradingagents.batch import run_ticker

    marker = Path(task["config"]["home"]) / f"killed-{task['ticker']}"
    if task["ticker"] != "AAPL" or marker.exists():
        return run_ticker(task)
    seen = {"usage": 0}

    def emit(doc):
        if doc["status"] == "running" and doc.get("cost_usd") is not None:
            seen["usage"] += 1
            if seen["usage"] == 4:  # a few model calls in, the checkpoint has some finished steps
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)

    return run_ticker(task, emit=emit)


@pytest.fixture(params=["files", "postgresql"])
def shared_storage(request) -> dict:
    """Where results and checkpoints live: files under the home, or the desk's database."""
    if request.param == "files":
        return {}
    return {"storage_url": request.getfixturevalue("pg_url")}


def test_a_worker_killed_mid_batch_is_retried_and_the_batch_completes(ray_session, tmp_path, monkeypatch,
                                                                       shared_storage):
    reference = batch.run_batch(TICKERS, DATE, {"home": str(tmp_path / "ref")})
    cfg = {"home": str(tmp_path), "max_concurrent_llm_calls": 2, "executor": "ray", **shared_storage}
    monkeypatch.setattr(batch, "run_ticker", _killing_task)
    outcomes = batch.run_batch(TICKERS, DATE, cfg)
    assert (tmp_path / "killed-AAPL").exists()  # the worker really died
    assert [o.status for o in outcomes] == ["done"] * 4, [o.error for o in outcomes]
    aapl = next(o for o in outcomes if o.ticker == "AAPL")
    assert aapl.resumed is True  # the retry continued from the dead worker's checkpoint
    assert [o.rating for o in outcomes] == [o.rating for o in reference]


def test_a_backtest_on_ray_runs_its_steps_in_ray_workers_with_the_same_results_as_threads(ray_session, tmp_path,
                                                                                           caplog):
    """Each (ticker, variant) task is a Ray task in a worker process: same decisions and metrics as threads."""
    import json

    from tradingagents.backtest import BacktestSpec, run_backtest

    spec = BacktestSpec.make("NVDA,AAPL", "2024-05-01", "2024-05-31", every=7, compare_memory=True)
    base = {"max_concurrent_llm_calls": 2, "selected_analysts": ["market"]}
    threads = run_backtest(spec, {**base, "home": str(tmp_path / "t")})
    events: list[dict] = []
    on_ray = run_backtest(spec, {**base, "home": str(tmp_path / "r"), "executor": "ray"}, on_progress=events.append)
    assert "on threads" not in caplog.text  # no fallback
    assert on_ray.status == "finished" and on_ray.metrics == threads.metrics
    for name in ("decisions.csv", "decisions_no_memory.csv", "equity.csv"):
        assert (on_ray.folder / name).read_text() == (threads.folder / name).read_text()
    steps = json.loads((on_ray.folder / "manifest.json").read_text())["steps"]
    infos = [info for variant in steps.values() for by_date in variant.values() for info in by_date.values()]
    assert len(infos) == 2 * 2 * 4 and all(info["pid"] != os.getpid() for info in infos)  # run by Ray workers
    finished = [e for e in events if e["kind"] == "step_finished"]
    assert len(finished) == len(infos) and finished[-1]["done"] == len(infos) and events[-1]["kind"] == "finished"


def _killing_backtest_task(payload):
    """Kill this Ray worker after AAPL's second step on the first attempt (a marker file says which)."""
    from tradingagents.backtest import engine
    from tradingagents.config import resolve_config

    marker = Path(payload["config"]["home"]) / "killed-AAPL"
    if payload["ticker"] != "AAPL" or payload["variant"] != engine.TEAM or marker.exists():
        return engine.ray_task(payload)
    done = []

    def finished(date, info):
        if info is not None:
            done.append(date)
            if len(done) == 2:
                marker.write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)

    engine.run_steps(resolve_config(payload["config"]), None, "AAPL", payload["steps"], lambda: False,
                     lambda _d: None, finished)
    raise AssertionError("the worker should have been killed")


def test_a_ray_worker_killed_mid_backtest_is_retried_without_redoing_its_finished_steps(ray_session, tmp_path,
                                                                                        monkeypatch):
    import json

    from tradingagents.backtest import BacktestSpec, engine, run_backtest

    spec = BacktestSpec.make("NVDA,AAPL", "2024-05-01", "2024-05-31", every=7)
    base = {"max_concurrent_llm_calls": 2, "selected_analysts": ["market"]}
    threads = run_backtest(spec, {**base, "home": str(tmp_path / "t")})
    monkeypatch.setattr(engine, "ray_task", _killing_backtest_task)
    on_ray = run_backtest(spec, {**base, "home": str(tmp_path / "r"), "executor": "ray"})
    killed = int((tmp_path / "r" / "killed-AAPL").read_text())
    assert on_ray.status == "finished" and on_ray.metrics == threads.metrics
    aapl = json.loads((on_ray.folder / "manifest.json").read_text())["steps"][engine.TEAM]["AAPL"]
    ordered = [aapl[d] for d in sorted(aapl)]
    assert [i["reused"] for i in ordered] == [True, True, False, False]  # the two finished before the kill
    assert all(i["pid"] != killed for i in ordered)  # all recorded by the retry, in another worker
