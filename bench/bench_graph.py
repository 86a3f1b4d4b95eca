"""Graph benchmarks: offline run time, per-node times, LLM round trips and the parallel speed-up.

Figures:
- ``offline_run_s``: one full offline propagate (4 analysts, 1 round each), after a warm-up run.
- ``node_times_ms``: per node, from that same run (summed over a node's invocations).
- ``llm_latency_run_s`` / ``llm_sequential_round_trips``: a full run through the real
  langchain-openai client against the fake OpenAI server answering in 200 ms; wall time, and the
  number of model calls on the critical path (analyst branches overlap in parallel mode).
- ``peak_rss_mb``: peak resident memory of a fresh process doing one offline run.
- ``parallel_run_speedup`` / ``parallel_analyst_stage_speedup``: fake server at 300 ms per call,
  sequential vs parallel analysts measured side by side in one bench run (alternated twice, the
  best of each, so a noisy neighbour on a shared machine does not decide the figure).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOALS: dict[str, tuple[str, float]] = {
    "offline_run_s": ("<=", 1.5),
    "peak_rss_mb": ("<=", 400.0),
    "parallel_run_speedup": (">=", 1.4),
    "parallel_analyst_stage_speedup": (">=", 2.5),
}

TICKER = "NVDA"
DATE = "2024-05-10"
ANALYST_NODES = {
    "Market Analyst", "Sentiment Analyst", "News Analyst", "Fundamentals Analyst",
    "tools_market", "tools_social", "tools_news", "tools_fundamentals",
    "Msg Clear Market", "Msg Clear Sentiment", "Msg Clear News", "Msg Clear Fundamentals",
}
BRANCH_OF = {
    "Market Analyst": "market", "tools_market": "market", "Msg Clear Market": "market",
    "Sentiment Analyst": "social", "tools_social": "social", "Msg Clear Sentiment": "social",
    "News Analyst": "news", "tools_news": "news", "Msg Clear News": "news",
    "Fundamentals Analyst": "fundamentals", "tools_fundamentals": "fundamentals",
    "Msg Clear Fundamentals": "fundamentals",
}


def _home(tag: str) -> str:
    return tempfile.mkdtemp(prefix=f"ta_bench_{tag}_")


def _graph(config: dict):
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    return TradingAgentsGraph(config=config)


def _timed_run(config: dict, date: str = DATE) -> tuple[float, dict, list]:
    events: list = []
    graph = _graph(config)
    t0 = time.perf_counter()
    graph.propagate(TICKER, date, on_event=events.append)
    return time.perf_counter() - t0, graph.last_run, events


def _analyst_stage_s(events: list) -> float:
    """From the first analyst node's start to the last analyst node's finish."""
    starts = [e.ts for e in events if e.kind == "node_started" and e.node in ANALYST_NODES]
    ends = [e.ts for e in events if e.kind == "node_finished" and e.node in ANALYST_NODES]
    return max(ends) - min(starts)


def critical_path_calls(usage_by_node: dict, parallel: bool) -> int:
    """Model calls on the critical path: analyst branches overlap in parallel mode."""
    branches: dict[str, int] = {}
    rest = 0
    for node, counts in usage_by_node.items():
        calls = int(counts.get("llm_calls", 0))
        if node in BRANCH_OF:
            branches[BRANCH_OF[node]] = branches.get(BRANCH_OF[node], 0) + calls
        else:
            rest += calls
    analysts = (max(branches.values()) if branches else 0) if parallel else sum(branches.values())
    return analysts + rest


def bench_offline() -> dict:
    cfg = {"home": _home("offline"), "llm_provider": "offline", "data_vendor": "demo",
           "checkpoint_enabled": True}
    _timed_run(cfg, "2024-05-09")  # warm-up: imports, data generation, caches
    elapsed, last, _ = _timed_run(cfg, DATE)
    return {"offline_run_s": round(elapsed, 4),
            "node_times_ms": {k: round(v, 2) for k, v in sorted(last["node_times_ms"].items())}}


def bench_llm_latency() -> dict:
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(latency_s=0.2) as server:
        cfg = {"home": _home("llm"), **server.llm_config(), "data_vendor": "demo"}
        elapsed, last, _ = _timed_run(cfg)
        from tradingagents.config import resolve_config

        parallel = resolve_config(cfg)["analyst_execution"] == "parallel"
        trips = critical_path_calls(last.get("usage_by_node") or {}, parallel)
    return {"llm_latency_run_s": round(elapsed, 3), "llm_sequential_round_trips": trips}


def bench_parallel(repeats: int = 2) -> dict:
    """Sequential and parallel runs alternated ``repeats`` times on one server; best of each."""
    from tests.fake_openai import FakeOpenAIServer

    seq_runs, par_runs, seq_stages, par_stages = [], [], [], []
    with FakeOpenAIServer(latency_s=0.3) as server:
        base = {**server.llm_config(), "data_vendor": "demo", "max_concurrent_llm_calls": 4}
        for i in range(repeats):
            for mode, runs, stages in (("sequential", seq_runs, seq_stages), ("parallel", par_runs, par_stages)):
                elapsed, _, events = _timed_run({**base, "home": _home(f"{mode}{i}"), "analyst_execution": mode})
                runs.append(elapsed)
                stages.append(_analyst_stage_s(events))
    seq_s, par_s = min(seq_runs), min(par_runs)
    seq_stage, par_stage = min(seq_stages), min(par_stages)
    return {
        "sequential_run_s": round(seq_s, 3),
        "parallel_run_s": round(par_s, 3),
        "parallel_run_speedup": round(seq_s / par_s, 3),
        "sequential_analyst_stage_s": round(seq_stage, 3),
        "parallel_analyst_stage_s": round(par_stage, 3),
        "parallel_analyst_stage_speedup": round(seq_stage / par_stage, 3),
    }


# VmHWM: the peak resident size of this process image. ru_maxrss would carry the parent's over exec: a child of
# `python -m bench`, started after the memory benches had grown it to ~500 MB, reported ~500 MB for a 181 MB run
_RSS_SCRIPT = """
import re, sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tradingagents.graph.trading_graph import TradingAgentsGraph
TradingAgentsGraph(config={{"llm_provider": "offline", "data_vendor": "demo"}}).propagate("NVDA", "2024-05-10")
print(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
"""


def bench_peak_rss() -> dict:
    env = {**os.environ, "TRADINGAGENTS_HOME": _home("rss")}
    proc = subprocess.run([sys.executable, "-c", _RSS_SCRIPT.format(root=str(ROOT))], capture_output=True,
                          text=True, env=env, timeout=300, check=True)
    kib = int(proc.stdout.strip().splitlines()[-1])
    return {"peak_rss_mb": round(kib / 1024.0, 1)}


def run() -> dict:
    out: dict = {}
    out.update(bench_offline())
    out.update(bench_peak_rss())
    out.update(bench_llm_latency())
    out.update(bench_parallel())
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
