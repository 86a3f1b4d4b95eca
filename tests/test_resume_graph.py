"""Resume from the per-ticker checkpoint: finished nodes never run twice, even after SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.graph_helpers import CallCounter, InjectedFault, comparable, fail_once_at
from tradingagents.graph import checkpointer as ckpt
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
ROOT = Path(__file__).resolve().parents[1]
SEQ = {"analyst_execution": "sequential"}  # one node per step: the failing node is exactly known


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An undisturbed offline run (its own home) and its model calls per node."""
    home = tmp_path_factory.mktemp("ref_home")
    counter = CallCounter()
    cfg = {"home": str(home), "analyst_execution": "sequential"}
    state, rating = TradingAgentsGraph(config=cfg, callbacks=[counter]).propagate("NVDA", DATE)
    return state, rating, dict(counter.calls)


@pytest.mark.parametrize(
    "node", ["Sentiment Analyst", "Fundamentals Analyst", "Bull Researcher", "Trader", "Conservative Analyst",
             "Portfolio Manager"],
)
def test_failure_at_a_node_resumes_there(reference, node):
    ref_state, ref_rating, ref_calls = reference
    counter = fail_once_at(node)
    graph = TradingAgentsGraph(config=SEQ, callbacks=[counter])
    events = []
    with pytest.raises(InjectedFault):
        graph.propagate("NVDA", DATE, on_event=events.append)
    assert events[-1].kind == "run_failed" and events[-1].data["resumable"]
    assert events[-1].data["error_type"] == "InjectedFault" and node in events[-1].data["error"]
    tid = graph.thread_id("NVDA", DATE)
    assert ckpt.has_checkpoint(graph.config, "NVDA", tid)
    first = dict(counter.calls)
    counter.reset()
    events.clear()

    state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
    second = dict(counter.calls)
    assert events[0].data["resumed"] is True
    assert rating == ref_rating and comparable(state) == comparable(ref_state)
    for name in set(ref_calls) | set(first) | set(second):
        assert first.get(name, 0) + second.get(name, 0) == ref_calls.get(name, 0) + (name == node), name
    # the resumed run started at the failed node: nothing before it was re-entered
    started = [e.node for e in events if e.kind == "node_started"]
    assert started[0] == node
    assert not ckpt.has_checkpoint(graph.config, "NVDA", tid)


def test_a_changed_graph_starts_fresh():
    graph = TradingAgentsGraph(["market"], config=SEQ, callbacks=[fail_once_at("Trader")])
    with pytest.raises(InjectedFault):
        graph.propagate("NVDA", DATE)
    assert graph.has_resumable_run("NVDA", DATE)
    for changed in (TradingAgentsGraph(["market", "news"], config=SEQ),
                    TradingAgentsGraph(["market"], config={**SEQ, "max_debate_rounds": 2}),
                    TradingAgentsGraph(["market"], config={"analyst_execution": "parallel"})):
        assert not changed.has_resumable_run("NVDA", DATE)
        counter = CallCounter()
        changed.user_callbacks.append(counter)
        events = []
        changed.propagate("NVDA", DATE, on_event=events.append)
        assert events[0].data["resumed"] is False
        assert counter.calls["Market Analyst"] >= 1
    # the original run can still resume from its own checkpoint
    assert graph.has_resumable_run("NVDA", DATE)


def test_checkpoint_disabled_means_no_database_and_no_resume(ta_home):
    graph = TradingAgentsGraph(["market"], config={"checkpoint_enabled": False},
                               callbacks=[fail_once_at("Trader")])
    events = []
    with pytest.raises(InjectedFault):
        graph.propagate("NVDA", DATE, on_event=events.append)
    assert events[-1].data["resumable"] is False
    assert not (ta_home / "checkpoints").exists() or not any((ta_home / "checkpoints").iterdir())
    counter = CallCounter()
    graph.user_callbacks[:] = [counter]
    graph.propagate("NVDA", DATE)
    assert counter.calls["Market Analyst"] >= 1  # started over


_CHILD = r"""
import os, sys, time
sys.path.insert(0, {root!r})
from tests.graph_helpers import CallCounter
from tradingagents.graph.trading_graph import TradingAgentsGraph

marker = {marker!r}
def on_call(node, n):
    with open({log!r}, "a") as fh:
        fh.write(node + "\n")
    if node == {node!r}:
        open(marker, "w").close()
        time.sleep(60)  # killed here, mid-node
TradingAgentsGraph(config={config!r}, callbacks=[CallCounter(on_call)]).propagate("NVDA", {date!r})
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode, node", [("sequential", "Research Manager"), ("parallel", "Bear Researcher")])
def test_sigkilled_process_resumes_from_its_checkpoint(reference, ta_home, tmp_path, mode, node):
    ref_state, ref_rating, ref_calls = reference
    marker, log = tmp_path / "reached", tmp_path / "calls.log"
    script = _CHILD.format(root=str(ROOT), marker=str(marker), log=str(log), node=node,
                           config={"analyst_execution": mode}, date=DATE)
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 300  # only catches a hang
        while not marker.exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.time() < deadline, "child never reached the node"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=300) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stderr.close()
    first = [line for line in log.read_text().splitlines() if line]

    counter = CallCounter()
    graph = TradingAgentsGraph(config={"analyst_execution": mode}, callbacks=[counter])
    assert graph.has_resumable_run("NVDA", DATE)
    state, rating = graph.propagate("NVDA", DATE)
    assert graph.last_run["resumed"]
    assert rating == ref_rating and comparable(state) == comparable(ref_state)
    # everything the killed process finished is not run again; the killed node runs once more
    done_before = {n for n in first if n != node}
    assert done_before and not done_before & set(counter.calls)
    assert counter.calls[node] == 1
