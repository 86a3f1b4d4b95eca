"""Backtest benchmarks (offline engine, demo market; each measurement in a fresh home).

Figures:
- ``backtest_6m_total_s``: a six-month daily backtest of one ticker (NVDA, 2024-06-03 → 2024-11-29,
  one decision per trading day), planning, every step and the outputs.
- ``backtest_6m_steps`` / ``backtest_step_mean_s``: its number of steps and their mean time (each
  step is one propagate: settle what is due, run the team, save, log).
- ``backtest_step_growth_ratio``: mean of the last ten steps' times over the first ten's. The log
  and the role memories grow as the backtest goes; a step must not get slower (goal ≤ 1.2). The
  times are the process's CPU time per step (``time.process_time``, all threads), because wall
  time on a machine shared with other jobs measures the neighbours; the wall-time ratio is
  reported beside it as ``backtest_step_growth_ratio_wall``.
- ``backtest_parallel_3_vs_1``: wall time of three tickers in parallel (max_concurrent_llm_calls 3)
  over one month, divided by one ticker's over the same month (1.0 = perfectly parallel, 3.0 =
  no gain). The offline engine is CPU-bound Python under one GIL, so this shows no gain (no goal).
- ``backtest_parallel_3_vs_1_llm``: the same with the real langchain-openai client against the fake
  OpenAI server answering in 100 ms (three steps per ticker): the steps wait on the model and the
  tickers overlap, as with a real provider (goal ≤ 1.5).
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
    "backtest_step_growth_ratio": ("<=", 1.2),
    "backtest_parallel_3_vs_1_llm": ("<=", 1.5),
}

START, END = "2024-06-03", "2024-11-29"
MONTH_END = "2024-06-28"


def _run(tickers: str, start: str, end: str, on_progress=None, **config):
    from tradingagents.backtest import BacktestSpec, run_backtest

    home = tempfile.mkdtemp(prefix="ta_bench_backtest_")
    _HOMES.append(home)
    spec = BacktestSpec.make(tickers, start, end, every=1)
    t0 = time.perf_counter()
    result = run_backtest(spec, {"home": home, **config}, on_progress=on_progress)
    return result, time.perf_counter() - t0


_HOMES: list[str] = []


class _CpuPerStep:
    """CPU seconds of each step of a one-ticker backtest (steps run one after another)."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self._t0 = 0.0

    def __call__(self, event: dict) -> None:
        if event["kind"] == "step_started":
            self._t0 = time.process_time()
        elif event["kind"] == "step_finished":
            self.times.append(time.process_time() - self._t0)


def _ratio(times: list[float]) -> float:
    first, last = times[:10], times[-10:]
    return (sum(last) / len(last)) / (sum(first) / len(first))


def run() -> dict:
    try:
        return _measure()
    finally:
        import shutil

        for home in _HOMES:
            shutil.rmtree(home, ignore_errors=True)
        _HOMES.clear()


def _measure() -> dict:
    from tradingagents.backtest import TEAM
    from tradingagents.backtest.engine import load_manifest

    _run("AAPL", START, "2024-06-07")  # warm-up: imports, demo paths
    cpu = _CpuPerStep()
    result, total = _run("NVDA", START, END, on_progress=cpu)
    steps = load_manifest(result.folder)["steps"][TEAM]["NVDA"]
    times = [steps[d]["elapsed_s"] for d in sorted(steps)]

    _, one = _run("NVDA", START, MONTH_END, max_concurrent_llm_calls=3)
    _, three = _run("NVDA,AAPL,MSFT", START, MONTH_END, max_concurrent_llm_calls=3)
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(latency_s=0.1) as server:
        llm = {**server.llm_config(), "max_concurrent_llm_calls": 3}
        _run("AAPL", START, "2024-06-04", **llm)  # warm-up: the client, its connection pool
        _, one_llm = _run("NVDA", START, "2024-06-05", **llm)
        _, three_llm = _run("NVDA,AAPL,MSFT", START, "2024-06-05", **llm)
    return {
        "backtest_1_ticker_3_steps_llm_s": round(one_llm, 3),
        "backtest_3_tickers_3_steps_llm_s": round(three_llm, 3),
        "backtest_parallel_3_vs_1_llm": round(three_llm / one_llm, 3),
        "backtest_6m_total_s": round(total, 3),
        "backtest_6m_steps": len(times),
        "backtest_step_mean_s": round(sum(times) / len(times), 4),
        "backtest_step_cpu_first10_mean_s": round(sum(cpu.times[:10]) / 10, 4),
        "backtest_step_cpu_last10_mean_s": round(sum(cpu.times[-10:]) / 10, 4),
        "backtest_step_growth_ratio": round(_ratio(cpu.times), 3),
        "backtest_step_growth_ratio_wall": round(_ratio(times), 3),
        "backtest_1_ticker_month_s": round(one, 3),
        "backtest_3_tickers_month_s": round(three, 3),
        "backtest_parallel_3_vs_1": round(three / one, 3),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
