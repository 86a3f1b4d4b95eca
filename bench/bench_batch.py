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
}

DATE = "2024-05-10"
TICKERS = ["NVDA", "AAPL", "MSFT", "AMZN", "GOOGL", "META", "TSLA", "JPM", "V", "JNJ", "WMT", "PG", "XOM",
           "KO", "PEP", "NFLX", "0700.HK", "7203.T", "SAP.DE", "BABA"]


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


def run() -> dict:
    from tests.fake_openai import FakeOpenAIServer
    from tradingagents.executor import ensure_ray
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    out: dict = {}
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
