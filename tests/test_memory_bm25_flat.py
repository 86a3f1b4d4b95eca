"""The flat BM25 postings: base + tail give the same bits however the documents arrived; old stored
indexes are rebuilt, never misread; no Python object per term."""

from __future__ import annotations

import gc
import json
import random
import zipfile

import numpy as np
import pytest
from rank_bm25 import BM25Plus

import tradingagents.memory.bm25 as bm25
import tradingagents.memory.situation_memory as situation_memory
from tradingagents.memory import FinancialSituationMemory, bm25_tokenize
from tradingagents.memory.bm25 import BM25Index
from tradingagents.memory.index_store import FORMAT, index_file


def _docs(rng: random.Random, n: int, vocab: int = 300) -> list[list[str]]:
    words = [f"w{i}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]
    return [rng.choices(words, weights, k=rng.randint(0, 25)) for _ in range(n)]


def _expected(scores: np.ndarray, n: int) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:n]


# merged after every add, now and then, never (queries through the tail), or by the first query
@pytest.mark.parametrize(("tail_min", "query_merges"), [(1, False), (40, False), (1 << 16, False), (1 << 16, True)])
def test_any_mix_of_bulk_and_single_adds_gives_the_same_bits(monkeypatch, tail_min, query_merges):
    monkeypatch.setattr(bm25, "_TAIL_MIN", tail_min)
    if not query_merges:
        monkeypatch.setattr(bm25, "_QUERY_MERGE_MAX", 0)
        monkeypatch.setattr(bm25, "_QUERY_MERGE_DIV", 1 << 40)
    rng = random.Random(tail_min)
    docs = _docs(rng, 900)
    docs[5] = ["heavy"] * 300 + ["w1"]  # a count above 255: the frequencies widen
    docs[700] = ["heavier"] * 70_000  # above 65535, arriving in the tail
    bulk = BM25Index(1.5, 0.75)
    bulk.add_many(docs)
    mixed = BM25Index(1.5, 0.75)
    mixed.add_many(docs[:100])
    for d in docs[100:600]:
        mixed.add(d)
    mixed.add_many(docs[600:670])  # few: into the tail
    for d in docs[670:]:
        mixed.add(d)
    assert mixed.n_postings == bulk.n_postings and mixed.n_docs == bulk.n_docs
    oracle = BM25Plus(docs, k1=1.5, b=0.75, delta=0)
    words = [f"w{i}" for i in range(300)] + ["heavy", "heavier", "unseen"]
    for _ in range(40):
        q = [rng.choice(words) for _ in range(rng.randint(1, 20))]
        a, b = bulk.scores(q), mixed.scores(q)
        assert a.tobytes() == b.tobytes()
        np.testing.assert_allclose(a, oracle.get_scores(q), rtol=1e-9)
        for n in (1, 5):
            ids_a, got_a = bulk.top(q, n)
            ids_b, got_b = mixed.top(q, n, None, docs.__getitem__)
            assert ids_a.tolist() == ids_b.tolist() == _expected(a, n)
            assert got_a.tobytes() == got_b.tobytes() == a[ids_a].tobytes()
    mixed.compact()
    assert mixed._tail_n == 0 and mixed.ptr.tobytes() == bulk.ptr.tobytes()
    assert mixed.ids.tobytes() == bulk.ids.tobytes() and np.array_equal(mixed.tfs, bulk.tfs)


def test_a_small_index_queried_between_adds_keeps_no_tail():
    # a role memory in a long-lived process: one lesson added, then a query, again and again; the
    # query merges the new postings so that the next one gathers base slices only
    rng = random.Random(7)
    docs = _docs(rng, 200)
    index = BM25Index(1.5, 0.75)
    for k, doc in enumerate(docs):
        index.add(doc)
        assert index._tail_n == len(set(doc))
        ids, _ = index.top(["w1", "w2", "w30"], 2)
        assert index._tail_n == 0 and len(index.ptr) == len(index.vocab) + 1
        assert ids.tolist() == _expected(index.scores(["w1", "w2", "w30"]), 2)
        assert index.n_docs == k + 1


def test_the_index_keeps_no_python_object_per_term():
    index = BM25Index(1.5, 0.75)
    before = len(gc.get_objects())
    index.add_many([[f"term{i}", f"term{i + 1}", "shared"] for i in range(20_000)])
    for i in range(500):
        index.add([f"late{i}", "shared"])
    index.top(["term5", "late3", "shared"], 3)
    assert len(index.vocab) > 20_000
    assert len(gc.get_objects()) - before < 1000  # the strings are not tracked; no postings object per term


@pytest.fixture
def store_small(monkeypatch):
    monkeypatch.setattr(situation_memory.FinancialSituationMemory, "STORE_MIN_DOCS", 10)


def _as_format_1(path) -> None:
    """Rewrite a stored index as the previous format wrote it (per-term max_tf, format 1)."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes())
    meta["format"] = 1
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    ptr = arrays["ptr"]
    arrays["max_tf"] = np.array([int(arrays["tfs"][s:e].max()) for s, e in zip(ptr[:-1], ptr[1:], strict=True)])
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def test_an_index_stored_by_the_previous_format_is_rebuilt_and_stored_again(store_small, monkeypatch):
    assert FORMAT == 2
    rng = random.Random(3)
    mem = FinancialSituationMemory("old_format")
    docs = [" ".join(d) or "empty" for d in _docs(rng, 200, vocab=60)]
    mem.add_situations([(d, f"r{i}") for i, d in enumerate(docs)])
    mem.store_index()
    _as_format_1(index_file(mem.path))
    with zipfile.ZipFile(index_file(mem.path)) as z:
        assert "max_tf.npy" in z.namelist()
    seen: list[str] = []
    real = situation_memory.bm25_tokenize
    monkeypatch.setattr(situation_memory, "bm25_tokenize", lambda t: seen.append(t) or real(t))
    again = FinancialSituationMemory("old_format")
    assert len(seen) == len(docs)  # read from the jsonl, not from the old arrays
    assert again.items() == mem.items()
    for q in ("w1 w2", "w3 w3 w7", "w50"):
        assert again.get_scores(q) == mem.get_scores(q)
        assert again.get_memories(q, 3) == mem.get_memories(q, 3)
    with np.load(index_file(mem.path), allow_pickle=False) as z:  # stored again, in this format
        assert json.loads(z["meta"].tobytes())["format"] == FORMAT and "max_tf" not in z.files
    seen.clear()
    assert FinancialSituationMemory("old_format").items() == mem.items() and seen == []


def test_a_reopened_index_takes_new_documents_exactly(store_small):
    rng = random.Random(8)
    mem = FinancialSituationMemory("reopened")
    docs = [" ".join(d) or "empty" for d in _docs(rng, 120, vocab=50)]
    mem.add_situations([(d, "r") for d in docs])
    mem.store_index()
    again = FinancialSituationMemory("reopened")
    for i in range(30):  # into the tail of the loaded base
        docs.append(f"w{i % 7} brand{i} w{i % 3}")
        again.add_situations([(docs[-1], "x")])
    oracle = BM25Plus([bm25_tokenize(d) for d in docs], k1=1.5, b=0.75, delta=0)
    for q in ("w1 brand3", "w2 w2 brand29", "brand0"):
        np.testing.assert_allclose(again.get_scores(q), oracle.get_scores(bm25_tokenize(q)), rtol=1e-9)
