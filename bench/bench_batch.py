"""Watchlist batch benchmarks: 20 tickers on one date (each measurement in a fresh home).

Figures:
- ``batch20_threads_offline_s`` / ``batch20_ray_offline_s``: a 20-ticker batch with the offline engine
  on the thread executor and on a local Ray (``max_concurrent_llm_calls`` 4, so four tickers at a
  time; Ray's four worker processes are started once, before the timing, as a desk's cluster would
  be). The offline engine is CPU-bound Python: threads share one GIL, Ray's processes do not, so
  Ray gains only as far as the machine has free cores. No goal: it shows what the cores give.
- ``one_run_fake300ms_s``: one run through the real langchain-openai client against the fake
  OpenAI server answering every call in 300 ms (``max_concurrent_llm_calls`` 16).
- ``batch20_fake300ms_s``: the 20-ticker batch with the same server and bound (threads: all the
  graphs share one bound of 16 calls in flight).
- ``batch20_vs_one_run``: the batch's wall time over one run's (goal ≤ 3: twenty tickers in at
  most three runs' time).
- ``batch3_cli_threads_s`` / ``batch3_cli_ray_s``: ``python -m tradingagents batch NVDA,AAPL,MSFT``
  (offline engine, a fresh process and home each, as every command is) with ``--executor threads``
  and ``--executor ray``, interleaved, the median of 3; ``batch3_ray_vs_threads`` their ratio (goal
  ≤ 1.5: a small batch on a local Ray runs on threads, said on screen); ``batch3_ray_token_notices``:
  lines of Ray's token notice those commands printed (goal 0).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOALS: dict[str, tuple[str, float]] = {
    "batch20_vs_one_run": ("<=", 3.0),
    "batch3_ray_vs_threads": ("<=", 1.5),
    "batch3_ray_token_notices": ("<=", 0),
}

DATE = "2024-05-10"
TICKERS = ["NVDA", "AAPL", "MSFT", "AMZN", "GOOGL", "META", "TSLA", "JPM", "V", "JNJ", "WMT", "PG", "XOM",
           "KO", "PEP", "NFLX", "0700.HK", "7203.T", "AZN.L", "BABA"]


def _batch(config: dict) -> float:
    from tradingagents.batch import run_batch

    with tempfile.TemporaryDirectory(prefix="ta_bench_batch_") as home:
        t0 = time.perf_counter()
        outcomes = run_batch(TICKERS, DATE, {**config, "home": home})
        elapsed = time.perf_counter() - t0
    bad = [(o.ticker, o.error) for o in outcomes if not o.ok]
    if bad:
        raise RuntimeError(f"batch tickers failed: {bad[:3]}")
    return elapsed


def _cli_batch3(executor: str) -> tuple[float, str]:
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_")}
    with tempfile.TemporaryDirectory(prefix="ta_bench_b3_") as home:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "tradingagents", "batch", "NVDA,AAPL,MSFT", DATE, "--home", home,
                               "--executor", executor], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"batch --executor {executor} exited {proc.returncode}: {proc.stderr[-1500:]}")
    return elapsed, proc.stderr


def run() -> dict:
    import statistics

    from tests.fake_openai import FakeOpenAIServer
    from tradingagents.executor import ensure_ray
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    out: dict = {}
    times: dict[str, list[float]] = {"threads": [], "ray": []}
    notices = 0
    for rep in range(3):
        for executor in (("threads", "ray") if rep % 2 == 0 else ("ray", "threads")):
            elapsed, err = _cli_batch3(executor)
            times[executor].append(elapsed)
            notices += err.lower().count("token authentication")
    out["batch3_cli_threads_s"] = round(statistics.median(times["threads"]), 2)
    out["batch3_cli_ray_s"] = round(statistics.median(times["ray"]), 2)
    out["batch3_ray_vs_threads"] = round(out["batch3_cli_ray_s"] / out["batch3_cli_threads_s"], 2)
    out["batch3_ray_token_notices"] = notices
    out["batch20_threads_offline_s"] = round(_batch({"max_concurrent_llm_calls": 4}), 2)
    import ray

    ensure_ray(None, 4)
    try:
        _batch({"max_concurrent_llm_calls": 4, "executor": "ray"})  # warm: workers started, engine imported
        out["batch20_ray_offline_s"] = round(_batch({"max_concurrent_llm_calls": 4, "executor": "ray"}), 2)
    finally:
        ray.shutdown()

    with FakeOpenAIServer(latency_s=0.3) as server:
        cfg = server.llm_config(max_concurrent_llm_calls=16, llm_timeout=30.0)
        with tempfile.TemporaryDirectory(prefix="ta_bench_one_") as home:
            t0 = time.perf_counter()
            TradingAgentsGraph(config={**cfg, "home": home}).propagate("NVDA", DATE)
            one = time.perf_counter() - t0
        out["one_run_fake300ms_s"] = round(one, 2)
        many = _batch(cfg)
        out["batch20_fake300ms_s"] = round(many, 2)
        out["batch20_vs_one_run"] = round(many / one, 2)
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=1))
