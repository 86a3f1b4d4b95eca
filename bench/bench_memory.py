"""Benchmarks of the per-role BM25 memories and the markdown memory log.

BM25, against bm25s (``requirements-bench.txt``) measured in the same run on the same corpus:
40-token situations drawn from a 50,000-word Zipf vocabulary (exponent 1), 60 queries of the same
kind, top 3. ``bm25_vs_bm25s_<size>`` is ours/bm25s query p50 (``get_memories(q, 3)`` against
``BM25.retrieve([tokens], k=3)``, both including tokenising the query with our tokeniser) at 10k,
100k and 1M situations; at 10k and 100k both sides live in this process and are timed query by
query in turn (three rounds of the 60 queries). At 1M each side builds in a process of its own, one
after the other, so that its resident memory after building (above the corpus, which both hold:
``bm25_rss_mb_1m`` ours, ``bm25s_rss_mb_1m``) is measured alone; bm25s indexes with its own
tokeniser there, as it is used. Both processes then stay up and the parent times their queries in
turn, as at 10k and 100k. Also: reopening a stored 100k memory (new instance and first query), adding one situation
then querying at 100k, our p50 against ``rank_bm25.BM25Okapi.get_scores`` at 100k, and 10,000
situations added one call at a time then one query.

Memory log: ``get_past_context`` on a 10,000-entry log (p50 with the instance warm, and the first
call of a new instance, which parses the whole file: the median of five new instances, and the
slowest), ``entry_status`` (what every run asks before it logs its decision: it built every entry,
~60 ms at 10,000, before it read the parsed blocks), settling 100 pending entries in one batch, ``store_decision`` from a
new instance (the cold store, an append), and ``memlog_store_first_ms_10k``: ``store_decision`` on a
copy of the log that this code never indexed (a copy or a migration: no ``.idx`` beside it; the
keys are read from the tags; median of five copies; ``bench_reference`` compares it with the
reference's store). Everything runs in a temporary home.
"""

from __future__ import annotations

import gc
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from tradingagents.memory import (
    SEPARATOR,
    FinancialSituationMemory,
    TradingMemoryLog,
    bm25_tokenize,
    trading_log,
)
from tradingagents.memory.log_format import render_block

GOALS: dict[str, tuple[str, float]] = {
    "bm25_vs_bm25s_10k": ("<=", 1.0),
    "bm25_vs_bm25s_100k": ("<=", 1.0),
    "bm25_vs_bm25s_1m": ("<=", 1.0),
    "bm25_rss_vs_bm25s_10k": ("<=", 1.0),
    "bm25_rss_vs_bm25s_100k": ("<=", 1.0),
    "bm25_rss_vs_bm25s_1m": ("<=", 1.0),
    "bm25_reopen_s_100k": ("<=", 0.5),
    "bm25_add_one_then_query_ms_100k": ("<=", 10.0),
    "bm25_query_ms_10k": ("<=", 10.0),
    "bm25_query_ms_100k": ("<=", 10.0),
    "bm25_speedup_vs_rank_bm25_100k": (">=", 20.0),
    "bm25_add_10k_then_query_s": ("<=", 3.0),
    "memlog_past_context_ms_10k": ("<=", 50.0),
    "memlog_past_context_cold_ms_10k": ("<=", 50.0),
    "memlog_store_cold_ms_10k": ("<=", 20.0),
    "memlog_entry_status_ms_10k": ("<=", 5.0),
}

VOCAB = 50_000
DOC_TOKENS = 40
QUERIES = 60
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _words() -> list[str]:
    """50,000 distinct lower-case pseudo-words (two to five letters)."""
    out = []
    for i in range(VOCAB):
        word, x = "", i + 26
        while x:
            word, x = _LETTERS[x % 26] + word, x // 26
        out.append(word)
    return out


def _zipf_texts(n: int, seed: int) -> list[str]:
    words = np.array(_words(), dtype=object)
    p = 1.0 / np.arange(1, VOCAB + 1)
    rng = np.random.default_rng(seed)
    out: list[str] = []
    for start in range(0, n, 100_000):  # in chunks: the token matrix of 1M x 40 is 320 MB
        ids = rng.choice(VOCAB, size=(min(100_000, n - start), DOC_TOKENS), p=p / p.sum())
        out.extend(" ".join(row) for row in words[ids].tolist())
    return out


def _corpus(n: int) -> tuple[list[str], list[str]]:
    return _zipf_texts(n, 20240510), _zipf_texts(QUERIES, 7)


def _median_ms(fn, items) -> float:
    samples = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _time_ms(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _bm25s():
    import bm25s  # bench-only dependency

    return bm25s


def _ours_p50(mem: FinancialSituationMemory, queries: list[str]) -> float:
    mem.get_memories(queries[0], 3)  # warm
    return _median_ms(lambda q: mem.get_memories(q, 3), queries)


def _bm25s_p50(retriever, queries: list[str]) -> float:
    def query(q):
        retriever.retrieve([bm25_tokenize(q)], k=3, show_progress=False, n_threads=0)

    query(queries[0])  # warm
    return _median_ms(query, queries)


def _interleaved_p50(sides: dict, queries: list[str], rounds: int = 3) -> dict[str, float]:
    """p50 (ms) of each side's query function, timed query by query in turn (the order alternating),
    so that a load swing on the shared machine falls on both sides alike."""
    for fn in sides.values():
        fn(queries[0])  # warm
    samples: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for r in range(rounds):
        for j, q in enumerate(queries):
            for name in names if (r + j) % 2 == 0 else names[::-1]:
                t0 = time.perf_counter()
                sides[name](q)
                samples[name].append((time.perf_counter() - t0) * 1000)
    return {name: statistics.median(v) for name, v in samples.items()}


def _bm25_side_by_side(home: str) -> dict:
    out: dict = {}
    bm25s = _bm25s()
    corpus, queries = _corpus(100_000)
    for label, size in (("10k", 10_000), ("100k", 100_000)):
        docs = corpus[:size]
        mem = FinancialSituationMemory(f"bench_{label}", {"home": home})
        mem.add_situations([(s, f"advice {i}") for i, s in enumerate(docs)])
        retriever = bm25s.BM25(method="bm25+", delta=0.0)
        retriever.index([bm25_tokenize(s) for s in docs], show_progress=False)
        p50 = _interleaved_p50({
            "ours": lambda q, m=mem: m.get_memories(q, 3),
            "bm25s": lambda q, r=retriever: r.retrieve([bm25_tokenize(q)], k=3, show_progress=False, n_threads=0),
        }, queries)
        ours, theirs = p50["ours"], p50["bm25s"]
        out[f"bm25_query_ms_{label}"] = round(ours, 3)
        out[f"bm25s_query_ms_{label}"] = round(theirs, 3)
        out[f"bm25_vs_bm25s_{label}"] = round(ours / theirs, 3)
        del retriever
    # rank-bm25 on the 100k corpus (3 queries: it scores every document in Python)
    okapi = BM25Okapi([bm25_tokenize(s) for s in corpus])
    ref = _median_ms(lambda q, o=okapi: o.get_scores(bm25_tokenize(q)), queries[:3])
    out["bm25_speedup_vs_rank_bm25_100k"] = round(ref / out["bm25_query_ms_100k"], 1)
    del okapi
    # reopening the stored 100k memory: a new instance and its first query
    gc.collect()
    t0 = time.perf_counter()
    again = FinancialSituationMemory("bench_100k", {"home": home})
    again.get_memories(queries[1], 3)
    out["bm25_reopen_s_100k"] = round(time.perf_counter() - t0, 3)
    assert len(again) == 100_000
    # add one, then query (the next query sees it: weights depend on N and avgdl)
    samples = []
    for i in range(20):
        t0 = time.perf_counter()
        again.add_situations([(corpus[i], f"again {i}")])
        top = again.get_memories(queries[i % QUERIES], 3)
        samples.append((time.perf_counter() - t0) * 1000)
        assert top
    out["bm25_add_one_then_query_ms_100k"] = round(statistics.median(samples), 3)
    # 10,000 situations added one call at a time (each persisted), then one query
    mem = FinancialSituationMemory("bench_add", {"home": home})
    t0 = time.perf_counter()
    for s in corpus[:10_000]:
        mem.add_situations([(s, "advice")])
    mem.get_memories(queries[1], 3)
    out["bm25_add_10k_then_query_s"] = round(time.perf_counter() - t0, 3)
    return out


def _settled_rss_mb() -> float:
    """Resident memory after a full collection and handing freed C-heap pages back (malloc_trim)."""
    from tradingagents.memory.bm25 import release_heap

    gc.collect()
    release_heap()
    return _rss_mb()


def _child(side: str, home: str, size: int = 1_000_000) -> None:
    """One side at ``size`` documents, alone in this process: it builds, prints its build time and resident
    memory (one JSON line), then answers ``<query index>`` lines on stdin with the query's time in ms,
    so that the parent can time both sides' queries in turn."""
    corpus, queries = _corpus(size)
    pairs = [(s, f"advice {i}") for i, s in enumerate(corpus)] if side == "ours" else None
    before = _settled_rss_mb()
    t0 = time.perf_counter()
    if side == "ours":
        engine = FinancialSituationMemory(f"bench_rss_{size}", {"home": home})  # a new memory per size
        engine.add_situations(pairs)

        def query(q):
            engine.get_memories(q, 3)
    else:
        bm25s = _bm25s()
        tokens = bm25s.tokenize(corpus, stopwords=None, show_progress=False)
        engine = bm25s.BM25(method="bm25+", delta=0.0)
        engine.index(tokens, show_progress=False)
        del tokens

        def query(q):
            engine.retrieve([bm25_tokenize(q)], k=3, show_progress=False, n_threads=0)
    build_s = time.perf_counter() - t0
    rss = _settled_rss_mb() - before
    query(queries[0])  # warm
    print(json.dumps({"rss_mb": rss, "build_s": build_s, "queries": len(queries)}), flush=True)
    for line in sys.stdin:
        q = queries[int(line)]
        t0 = time.perf_counter()
        query(q)
        print((time.perf_counter() - t0) * 1000, flush=True)


def _bm25_rss(home: str, size: int, label: str, rounds: int = 3) -> dict:
    """Resident memory of each side's index at ``size`` documents, each built alone in a process of its
    own (one after the other); at 1M also both sides' query p50, timed query by query in turn (the
    order alternating) while both processes are up, so that a load swing falls on both alike."""
    procs: dict[str, subprocess.Popen] = {}
    got: dict[str, dict] = {}
    try:
        for side in ("ours", "bm25s"):
            err = Path(home) / f"bm25_{label}_{side}.stderr"
            with open(err, "w") as errors:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "bench.bench_memory", "--child", side, home, str(size)],
                    cwd=Path(__file__).resolve().parents[1], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                    stderr=errors, text=True,
                )
            procs[side] = proc
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the {label} {side} run failed:\n{err.read_text()[-2000:]}")
            got[side] = json.loads(line)
        samples: dict[str, list[float]] = {"ours": [], "bm25s": []}
        if label == "1m":
            names = list(procs)
            for r in range(rounds):
                for j in range(got["ours"]["queries"]):
                    for side in names if (r + j) % 2 == 0 else names[::-1]:
                        procs[side].stdin.write(f"{j}\n")
                        procs[side].stdin.flush()
                        samples[side].append(float(procs[side].stdout.readline()))
    finally:
        for proc in procs.values():
            try:
                proc.stdin.close()
            except OSError:
                pass
            try:
                proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
    ours, theirs = got["ours"], got["bm25s"]
    out = {
        f"bm25_rss_mb_{label}": round(ours["rss_mb"], 1),
        f"bm25s_rss_mb_{label}": round(theirs["rss_mb"], 1),
        f"bm25_rss_vs_bm25s_{label}": round(ours["rss_mb"] / theirs["rss_mb"], 3),
    }
    if label == "1m":
        p50 = {side: statistics.median(v) for side, v in samples.items()}
        out.update({
            "bm25_query_ms_1m": round(p50["ours"], 3),
            "bm25s_query_ms_1m": round(p50["bm25s"], 3),
            "bm25_vs_bm25s_1m": round(p50["ours"] / p50["bm25s"], 3),
            "bm25_build_s_1m": round(ours["build_s"], 1),
            "bm25s_build_s_1m": round(theirs["build_s"], 1),
        })
    return out


_WORDS = _words()[:300]


def _situation(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(8, 18))).capitalize()


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

    firsts = []
    for k in range(5):  # a copy has no index beside it: the first store reads the keys from the tags
        copy = log_path.with_name(f"copy_{k}.md")
        shutil.copyfile(log_path, copy)
        t0 = time.perf_counter()
        assert TradingMemoryLog({"memory_log_path": str(copy)}).store_decision("NEW", "2030-02-01", "**Rating**: Buy\nGo.")
        firsts.append((time.perf_counter() - t0) * 1000)
        for leftover in (copy, Path(f"{copy}.idx"), Path(f"{copy}.lock")):
            leftover.unlink(missing_ok=True)
    out["memlog_store_first_ms_10k"] = round(statistics.median(firsts), 2)

    colds = []
    for _ in range(5):  # each a new instance that parses the whole file: the median, as noise is large here
        trading_log._SHARED.clear()  # as in a new process: no instance has read this version yet
        t0 = time.perf_counter()
        fresh = TradingMemoryLog(cfg)
        ctx = fresh.get_past_context("NVDA")
        colds.append((time.perf_counter() - t0) * 1000)
    out["memlog_past_context_cold_ms_10k"] = round(statistics.median(colds), 2)
    out["memlog_past_context_cold_max_ms_10k"] = round(max(colds), 2)
    # a new instance in a process that has read this version (each run's graph opens its own log)
    out["memlog_past_context_new_instance_ms_10k"] = round(
        _time_ms(lambda: TradingMemoryLog(cfg).get_past_context("NVDA"), 30), 3)
    assert ctx and len(fresh.load_entries()) == 10_000
    out["memlog_past_context_ms_10k"] = round(_time_ms(lambda: fresh.get_past_context("NVDA"), 30), 3)
    # what every run asks before it logs its decision (the instance has read the log, as the graph's has)
    assert fresh.entry_status(*pending[0]) == ("pending", "Hold")
    out["memlog_entry_status_ms_10k"] = round(_time_ms(lambda: fresh.entry_status("NVDA", "2031-01-02"), 30), 3)

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
    # cold: a new instance that reads and parses the 10k-entry file first (as in a new process)
    trading_log._SHARED.clear()
    t0 = time.perf_counter()
    settled = TradingMemoryLog(cfg).batch_update_with_outcomes(updates(pending[100:200]))
    out["memlog_settle_100_cold_ms"] = round((time.perf_counter() - t0) * 1000, 2)
    assert settled == 100
    # cold store: a new instance appends one pending decision to the 10k-entry log (as a new
    # process would), the log and its index as settlement left them; median of 15 distinct keys
    samples = []
    for k in range(15):
        trading_log._SHARED.clear()
        t0 = time.perf_counter()
        assert TradingMemoryLog(cfg).store_decision("NEW", f"2030-01-{k + 1:02d}", "**Rating**: Buy\nGo long.")
        samples.append((time.perf_counter() - t0) * 1000)
    out["memlog_store_cold_ms_10k"] = round(statistics.median(samples), 2)
    return out


def run() -> dict:
    rng = random.Random(20240510)
    with tempfile.TemporaryDirectory(prefix="ta_bench_memory_") as home:
        figures = _bm25_side_by_side(home)
        for size, label in ((10_000, "10k"), (100_000, "100k"), (1_000_000, "1m")):
            figures.update(_bm25_rss(home, size, label))
        figures.update(_memlog(home, rng))
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        print(json.dumps(run(), indent=2))
