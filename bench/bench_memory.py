"""Benchmarks of the per-role BM25 memories and the markdown memory log.

BM25: ``get_memories`` p50 at 1k/10k/100k stored situations and its speed-up over
``rank_bm25.BM25Okapi.get_scores`` on the same tokenised corpus, measured in the same run; 10,000
situations added one call at a time (persisted, as in use) then one query. Memory log:
``get_past_context`` on a 10,000-entry log (p50 with the instance warm, and the first call of a
new instance, which reads and parses the file) and settling 100 pending entries in one batch.
Everything runs in a temporary home.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

from rank_bm25 import BM25Okapi

from tradingagents.memory import SEPARATOR, FinancialSituationMemory, TradingMemoryLog, bm25_tokenize
from tradingagents.memory.log_format import render_block

GOALS: dict[str, tuple[str, float]] = {
    "bm25_query_ms_1k": ("<=", 10.0),
    "bm25_query_ms_10k": ("<=", 10.0),
    "bm25_query_ms_100k": ("<=", 10.0),
    "bm25_speedup_vs_rank_bm25_100k": (">=", 20.0),
    "bm25_add_10k_then_query_s": ("<=", 3.0),
    "memlog_past_context_ms_10k": ("<=", 50.0),
    "memlog_past_context_cold_ms_10k": ("<=", 50.0),
    "memlog_store_cold_ms_10k": ("<=", 20.0),
}

_WORDS = (
    "rising falling yields dollar strong weak pressure growth value em assets volatility spike institutional "
    "selling buying high beta tech semis energy oil gas rates inflation cpi fed hike cut earnings beat miss "
    "guidance raised lowered margin expansion compression revenue demand supply chain inventory buyback "
    "dividend debt credit spreads widening tightening momentum breakout breakdown support resistance rsi "
    "macd overbought oversold volume surge drought rally selloff rotation defensive cyclical consumer "
    "staples utilities banks regional liquidity crunch china tariffs export controls ai datacenter capex "
    "cloud subscription churn pricing power downgrade upgrade analyst target short interest squeeze options "
    "gamma hedging recession soft landing unemployment payrolls wages housing mortgage commodity gold copper"
).split()
_FILLER = "the a in of with and on to while as after amid".split()


def _median_ms(fn, items) -> float:
    samples = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _situation(rng: random.Random) -> str:
    # Zipf-ish: a few words are common, most are rare; plus short function words
    n = rng.randint(8, 18)
    words = [_WORDS[min(int(rng.paretovariate(1.1)) - 1, len(_WORDS) - 1)] if rng.random() < 0.5
             else rng.choice(_WORDS) for _ in range(n)]
    for _ in range(rng.randint(1, 4)):
        words.insert(rng.randrange(len(words) + 1), rng.choice(_FILLER))
    return " ".join(words).capitalize()


def _time_ms(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _bm25(home: str, rng: random.Random) -> dict:
    out: dict = {}
    queries = [_situation(rng) for _ in range(60)]
    corpus_all = [_situation(rng) for _ in range(100_000)]
    for label, size in (("1k", 1_000), ("10k", 10_000), ("100k", 100_000)):
        corpus = corpus_all[:size]
        mem = FinancialSituationMemory(f"bench_{label}", {"home": home})
        mem.add_situations([(s, f"advice {i}") for i, s in enumerate(corpus)])
        mem.get_memories(queries[0], 2)  # warm
        ours = _median_ms(lambda q, m=mem: m.get_memories(q, 2), queries)
        okapi = BM25Okapi([bm25_tokenize(s) for s in corpus])
        n_ref = 3 if size >= 100_000 else 10
        ref = _median_ms(lambda q, o=okapi: o.get_scores(bm25_tokenize(q)), queries[:n_ref])
        out[f"bm25_query_ms_{label}"] = round(ours, 3)
        out[f"bm25_speedup_vs_rank_bm25_{label}"] = round(ref / ours, 1)
        del okapi
    mem = FinancialSituationMemory("bench_add", {"home": home})
    pairs = [(s, "advice") for s in corpus_all[:10_000]]
    t0 = time.perf_counter()
    for pair in pairs:
        mem.add_situations([pair])
    mem.get_memories(queries[1], 2)
    out["bm25_add_10k_then_query_s"] = round(time.perf_counter() - t0, 3)
    return out


def _memlog(home: str, rng: random.Random) -> dict:
    out: dict = {}
    tickers = [f"T{i:03d}" for i in range(200)] + ["NVDA"] * 20
    log_path = Path(home) / "memory" / "bench_log.md"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    blocks, pending = [], []
    for i in range(10_000):
        ticker = tickers[i % len(tickers)]
        date = f"{2000 + i // 366:04d}-{1 + (i // 28) % 12:02d}-{1 + i % 28:02d}"
        decision = f"{_situation(rng)}. " * 6
        if i % 50 == 7 and len(pending) < 250:
            blocks.append(render_block(date, ticker, "Hold", decision).raw)
            pending.append((ticker, date))
        else:
            blocks.append(
                render_block(date, ticker, "Buy", decision, raw=rng.uniform(-0.1, 0.1),
                              alpha=rng.uniform(-0.05, 0.05), holding=5, reflection=_situation(rng) + ".").raw
            )
    # the file as store_decision/batch settlement would have left it (built in one go: faster setup)
    log_path.write_text("".join(b + SEPARATOR for b in blocks))
    cfg = {"memory_log_path": str(log_path)}

    t0 = time.perf_counter()
    fresh = TradingMemoryLog(cfg)
    ctx = fresh.get_past_context("NVDA")
    out["memlog_past_context_cold_ms_10k"] = round((time.perf_counter() - t0) * 1000, 2)
    assert ctx and len(fresh.load_entries()) == 10_000
    out["memlog_past_context_ms_10k"] = round(_time_ms(lambda: fresh.get_past_context("NVDA"), 30), 3)

    def updates(keys):
        return [
            {"ticker": t, "date": d, "raw": 0.01, "alpha": 0.002, "holding": 5, "reflection": "Settled in the bench."}
            for t, d in keys
        ]

    # warm: the instance that has read the log already (as the graph's memory_log has)
    t0 = time.perf_counter()
    settled = fresh.batch_update_with_outcomes(updates(pending[:100]))
    out["memlog_settle_100_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    assert settled == 100
    # cold: a new instance that reads and parses the 10k-entry file first
    t0 = time.perf_counter()
    settled = TradingMemoryLog(cfg).batch_update_with_outcomes(updates(pending[100:200]))
    out["memlog_settle_100_cold_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    assert settled == 100
    # cold store: a new instance appends one pending decision to the 10k-entry log (as a new
    # process would), the log and its index as settlement left them; median of 15 distinct keys
    samples = []
    for k in range(15):
        t0 = time.perf_counter()
        assert TradingMemoryLog(cfg).store_decision("NEW", f"2030-01-{k + 1:02d}", "**Rating**: Buy\nGo long.")
        samples.append((time.perf_counter() - t0) * 1000)
    out["memlog_store_cold_ms_10k"] = round(statistics.median(samples), 2)
    return out


def run() -> dict:
    rng = random.Random(20240510)
    with tempfile.TemporaryDirectory(prefix="ta_bench_memory_") as home:
        figures = _bm25(home, rng)
        figures.update(_memlog(home, rng))
    return figures


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
