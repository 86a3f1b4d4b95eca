"""Half the bill: the input cost of one decision, ours beside the reference's, under OpenAI's prompt cache.

One decision of each side (our defaults; the reference's ``DEFAULT_CONFIG``; both with gpt-4o-mini as the
quick model and gpt-4o as the deep one) against ONE fake OpenAI-compatible server that gives both the
same answers (``uniform_responder.RecordingServer`` of the side-by-side folder: equal reply lengths)
and reports ``prompt_tokens_details.cached_tokens`` as OpenAI does (``tests/fake_openai.PromptCache``:
the longest prefix shared with an earlier request of the same model in the last 10 minutes, in
cl100k_base tokens, whole 128-token blocks from 1,024). The cache is emptied before each side's run, so
neither reads the other's prompts. Input cost = uncached tokens × input price + cached tokens × cached
price, summed over the run's requests:

- ``cache_input_cost_vs_ref``: ours / the reference's with cached input at a quarter of the input price
  (the goal's rule, OpenAI's discount for GPT-4.1 and o4-mini);
- ``cache_input_cost_vs_ref_list``: the same at the list prices of the models the runs name
  (``pricing.DEFAULT_PRICING`` and ``CACHED_INPUT_PRICING``: GPT-4o's cached input is half price);
- ``cache_*_prompt_tokens`` / ``cache_*_cached_tokens``: the tokens behind them (``ref`` = the reference);
  ``cache_*_deep_input_usd``: the part of the input cost the deep model's calls make (the judges);
- ``cache_ref_deep_share``: the reference's own judges' part of its input bill. A system whose two judges run
  on the same deep model and read what the reference's judges read (the debates, the plans) pays at least
  that much even if every other call were free: the first deep call of a decision cannot hit the cache (no
  earlier request of that model), so the goal (``<= 0.5``) is out of reach while this share is above it,
  unless the judges read less than the reference's do;
- ``critical_path_calls_ours`` / ``critical_path_calls_ref``: the model calls of a decision that run one
  after another (the longest chain of requests each starting after the previous one ended, at the
  server, each answer taking ``LATENCY_S``): our analysts run side by side, the reference's one after
  another.

Needs the side-by-side folder and the reference (see ``bench_reference.py``); without them it prints a
note and reports nothing.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_reference import locations, missing

GOALS: dict[str, tuple[str, float]] = {
    "cache_input_cost_vs_ref": ("<=", 0.5),
    "critical_path_calls_ours": ("<=", 10),  # 2 (the longest analyst's tool round and report) + 8 later roles
}

QUICK, DEEP = "gpt-4o-mini", "gpt-4o"
# each answer waits this long, so that calls made side by side overlap at the server (at 0 ms they would
# finish before the next one starts and every call would look sequential)
LATENCY_S = 0.1
TICKER, DATE = "NVDA", "2024-05-10"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def input_cost(records, prices: dict[str, tuple[float, float]]) -> float:
    """USD of the input of ``records`` ((model, prompt tokens, cached tokens) per request) at
    ``prices`` ({model: (input, cached input)} per 1M tokens)."""
    total = 0.0
    for model, prompt, cached in records:
        inp, cached_price = prices[model]
        total += ((prompt - cached) * inp + cached * cached_price) / 1_000_000
    return total


def run() -> dict:
    loc = locations()
    why = missing(loc)
    if why:
        print(f"  note: the bill is not measured beside the reference: {why}", flush=True)
        return {}
    os.environ.update({"PROJECT": str(Path(__file__).resolve().parents[1]), "OURS_PY": sys.executable,
                       "PEER_PY": str(loc["peer_py"]), "PEER_SRC": str(loc["peer_src"]),
                       "PERF_TMP": str(loc["perf_tmp"])})
    if str(loc["perf"]) not in sys.path:
        sys.path.insert(0, str(loc["perf"]))
    import bench_graph_side_by_side as side  # the side-by-side folder's workers and server
    from perf_paths import OURS_PY, PEER_PY, PEER_SRC, PERF_TMP, PROJECT, child_env
    from uniform_responder import RecordingServer, critical_path

    from tradingagents import pricing

    srv = RecordingServer(_free_port(), latency_s=LATENCY_S).start()
    workers = {
        "ours": side.Worker("cache_ours", OURS_PY, "worker_ours.py", child_env([PROJECT], OPENAI_API_KEY="sk-dummy")),
        "ref": side.Worker("cache_ref", PEER_PY, "worker_peer.py", child_env([PEER_SRC], OPENAI_API_KEY="sk-dummy")),
    }
    tmp = tempfile.mkdtemp(prefix="cache_", dir=PERF_TMP)
    out: dict = {}
    try:
        for name, worker in workers.items():
            srv.take_log()
            srv.prompt_cache.clear()
            home = tempfile.mkdtemp(prefix=f"{name}_", dir=tmp)
            worker.call({"cmd": "run", "home": home, "url": srv.base_url, "ticker": TICKER, "date": DATE})
            time.sleep(0.05)  # the last handler thread records its request
            log = srv.take_log()
            records = list(srv.prompt_cache.records)
            quarter = {m: (pricing.DEFAULT_PRICING[m][0], pricing.DEFAULT_PRICING[m][0] / 4) for m in (QUICK, DEEP)}
            listed = {m: (pricing.DEFAULT_PRICING[m][0], pricing.cached_input_price(m)) for m in (QUICK, DEEP)}
            out[f"cache_{name}_llm_calls"] = len(records)
            out[f"cache_{name}_prompt_tokens"] = sum(r[1] for r in records)
            out[f"cache_{name}_cached_tokens"] = sum(r[2] for r in records)
            out[f"cache_{name}_input_usd"] = round(input_cost(records, quarter), 6)
            out[f"cache_{name}_input_usd_list"] = round(input_cost(records, listed), 6)
            out[f"cache_{name}_deep_input_usd"] = round(input_cost([r for r in records if r[0] == DEEP], quarter), 6)
            out[f"critical_path_calls_{name}"] = critical_path(log)
    finally:
        for worker in workers.values():
            worker.close()
        srv.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    out["cache_input_cost_vs_ref"] = round(out["cache_ours_input_usd"] / out["cache_ref_input_usd"], 3)
    out["cache_ref_deep_share"] = round(out["cache_ref_deep_input_usd"] / out["cache_ref_input_usd"], 3)
    out["cache_input_cost_vs_ref_list"] = round(out["cache_ours_input_usd_list"] / out["cache_ref_input_usd_list"], 3)
    print(f"  input of one decision (cached at a quarter): ours ${out['cache_ours_input_usd']:.5f}, reference "
          f"${out['cache_ref_input_usd']:.5f}: {out['cache_input_cost_vs_ref']:.3f}x; at list prices "
          f"{out['cache_input_cost_vs_ref_list']:.3f}x; sequential model calls {out['critical_path_calls_ours']} vs "
          f"{out['critical_path_calls_ref']}; the reference's judges alone are {out['cache_ref_deep_share']:.2f} of its "
          f"bill; load average {Path('/proc/loadavg').read_text().split()[:3]}",
          flush=True)
    return out
