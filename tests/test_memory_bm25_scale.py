"""BM25 at scale: pruned top-n equals the full sort, the stored index reopens exactly, never stale."""

from __future__ import annotations

import math
import random
from collections import Counter

import numpy as np
import pytest
from rank_bm25 import BM25Plus

import tradingagents.memory.bm25 as bm25
import tradingagents.memory.situation_memory as situation_memory
from tradingagents.memory import FinancialSituationMemory, bm25_tokenize
from tradingagents.memory.bm25 import BM25Index
from tradingagents.memory.index_store import index_file


def _zipf_corpus(rng: random.Random, n_docs: int, vocab: int = 400, length: int = 12) -> list[str]:
    words = [f"w{i}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]
    docs = [" ".join(rng.choices(words, weights, k=rng.randint(1, length))) for _ in range(n_docs)]
    docs += docs[: n_docs // 10]  # exact duplicates: ties that must rank the older first
    return docs


def _expected(scores: np.ndarray, n: int, excluded=None) -> list[int]:
    ids = [i for i in range(len(scores)) if excluded is None or not excluded[i]]
    return sorted(ids, key=lambda i: (-scores[i], i))[:n]


@pytest.fixture
def always_prune(monkeypatch):
    monkeypatch.setattr(bm25, "_PRUNE_MIN_DOCS", 0)


@pytest.mark.parametrize("eager", [0, 10**9])  # weights per query's terms, or all at once
@pytest.mark.parametrize("dense_div", [4, 10**9])  # with and without dense weight arrays
def test_pruned_top_n_is_the_full_sort_bit_for_bit(always_prune, monkeypatch, dense_div, eager):
    monkeypatch.setattr(bm25, "_DENSE_DIV", dense_div)
    monkeypatch.setattr(bm25, "_EAGER_POSTINGS", eager)
    rng = random.Random(5)
    docs = _zipf_corpus(rng, 3000)
    tokens = [bm25_tokenize(d) for d in docs]
    index = BM25Index(1.5, 0.75)
    index.add_many(tokens)
    words = [f"w{i}" for i in range(400)] + ["unseen"]
    for k in range(60):
        if k == 30:  # a change invalidates every cached weight
            index.add(["w1", "w2", "w2"])
            tokens.append(["w1", "w2", "w2"])
            docs.append("w1 w2 w2")
        q = [rng.choice(words[: 5 + 8 * k]) for _ in range(rng.randint(1, 30))]  # repeats included
        scores = index.scores(q)
        excluded = np.array([rng.random() < 0.3 for _ in docs]) if k % 3 == 0 else None
        for n in (1, 3, 7):
            for doc_tokens in (None, tokens.__getitem__):
                ids, got = index.top(q, n, excluded, doc_tokens)
                assert ids.tolist() == _expected(scores, n, excluded), (q, n)
                assert got.tolist() == scores[ids].tolist()  # exact, not float32


def test_memory_ranking_matches_the_oracle_when_pruned(always_prune):
    rng = random.Random(9)
    docs = _zipf_corpus(rng, 1500, vocab=120, length=10)
    mem = FinancialSituationMemory("pruned")
    mem.add_situations([(d, str(i)) for i, d in enumerate(docs)])
    oracle = BM25Plus([bm25_tokenize(d) for d in docs], k1=1.5, b=0.75, delta=0)
    for _ in range(25):
        q = " ".join(rng.choice([f"w{i}" for i in range(120)]) for _ in range(rng.randint(2, 20)))
        ref = oracle.get_scores(bm25_tokenize(q))
        top = mem.get_memories(q, 5)
        assert [int(m["recommendation"]) for m in top] == _expected(np.array(mem.get_scores(q)), 5)
        np.testing.assert_allclose([m["similarity_score"] for m in top], ref[[int(m["recommendation"]) for m in top]]
                                   / ref.max(), rtol=1e-9)


def test_term_counts_above_255_widen_the_postings():
    mem = FinancialSituationMemory("counts")
    docs = ["spam " * 300 + "eggs", "spam eggs", "eggs " * 70_000]
    mem.add_situations([(d, str(i)) for i, d in enumerate(docs)])
    ref = BM25Plus([bm25_tokenize(d) for d in docs], k1=1.5, b=0.75, delta=0)
    for q in ("spam", "eggs", "spam eggs eggs"):
        np.testing.assert_allclose(mem.get_scores(q), ref.get_scores(bm25_tokenize(q)), rtol=1e-9)


# ---------------------------------------------------------------- the stored index
@pytest.fixture
def store_small(monkeypatch):
    monkeypatch.setattr(situation_memory.FinancialSituationMemory, "STORE_MIN_DOCS", 10)


def _fill(mem: FinancialSituationMemory, rng: random.Random, n: int, known_from=None) -> list[str]:
    docs = _zipf_corpus(rng, n, vocab=80)
    mem.add_situations([(d, f"r{i}") for i, d in enumerate(docs)], known_from=known_from)
    return docs


def _tokenised(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = situation_memory.bm25_tokenize
    monkeypatch.setattr(situation_memory, "bm25_tokenize", lambda t: seen.append(t) or real(t))
    return seen


def test_a_stored_index_reopens_without_tokenising_and_ranks_identically(store_small, monkeypatch):
    rng = random.Random(1)
    mem = FinancialSituationMemory("stored")
    _fill(mem, rng, 300)
    mem.add_situations([("a late lesson w1 w2", "late")], known_from="2024-06-03")
    mem.store_index()
    assert index_file(mem.path).exists()
    with open(mem.path, "a") as fh:
        fh.write("not json\n")  # a problem line after the stored part: read from the jsonl as usual
    mem.add_situations([("appended after the index w3", "after")])
    tokenised = _tokenised(monkeypatch)
    again = FinancialSituationMemory("stored")
    assert len(again) == len(mem) == 330 + 2
    assert tokenised == ["appended after the index w3"]  # only the line after the stored part
    assert again.items() == mem.items() and len(again.problems) == 1
    for _ in range(20):
        q = " ".join(rng.choice([f"w{i}" for i in range(80)]) for _ in range(6))
        assert again.get_scores(q) == mem.get_scores(q)
        assert again.get_memories(q, 4, as_of="2024-06-02") == mem.get_memories(q, 4, as_of="2024-06-02")
        assert again.get_memories(q, 4) == mem.get_memories(q, 4)
    assert "late" not in [m["recommendation"] for m in again.get_memories("a late lesson", 3, as_of="2024-06-02")]
    assert again.get_memories("a late lesson", 1, as_of="2024-06-03")[0]["recommendation"] == "late"
    # adding to a loaded index (views of the stored arrays) stays exact
    again.add_situations([("w1 w1 w2 brand new", "new")])
    docs = [s for s, _ in again.items()]
    oracle = BM25Plus([bm25_tokenize(d) for d in docs], k1=1.5, b=0.75, delta=0)
    np.testing.assert_allclose(again.get_scores("w1 brand"), oracle.get_scores(["w1", "brand"]), rtol=1e-9)


def test_the_index_is_written_on_its_own_as_the_memory_grows(store_small):
    mem = FinancialSituationMemory("grows")
    mem.add_situations([(f"lesson {i}", "r") for i in range(5)])
    assert not index_file(mem.path).exists()  # below the minimum
    mem.add_situations([(f"lesson {i}", "r") for i in range(5, 20)])
    assert index_file(mem.path).exists() and mem._stored_docs == 20


@pytest.mark.parametrize("damage", ["bytes", "truncated", "other_memory", "cleared", "rewritten"])
def test_a_stale_or_damaged_index_is_never_used(store_small, monkeypatch, damage):
    rng = random.Random(2)
    mem = FinancialSituationMemory("victim")
    _fill(mem, rng, 100)
    mem.store_index()
    stored = index_file(mem.path)
    if damage == "bytes":
        data = bytearray(stored.read_bytes())
        for k in range(200, len(data), 997):
            data[k] ^= 0x5A
        stored.write_bytes(bytes(data))
    elif damage == "truncated":
        stored.write_bytes(stored.read_bytes()[:-100])
    elif damage == "other_memory":
        other = FinancialSituationMemory("other")
        _fill(other, random.Random(3), 100)
        other.store_index()
        stored.write_bytes(index_file(other.path).read_bytes())
    elif damage == "cleared":
        kept = stored.read_bytes()
        mem.clear()
        assert not stored.exists()
        stored.write_bytes(kept)
        mem.add_situations([("only this one", "x")])
    else:  # same length, other content: the digest notices
        text = mem.path.read_bytes()
        mem.path.write_bytes(text.replace(b"w1 ", b"w9 "))
    fresh = FinancialSituationMemory("victim")
    pairs = []
    for line in mem.path.read_text().splitlines():
        import json

        try:
            rec = json.loads(line)
            pairs.append((rec["situation"], rec["recommendation"]))
        except ValueError:
            continue
    assert fresh.items() == pairs
    rebuilt_scores = BM25Plus([bm25_tokenize(s) for s, _ in pairs], k1=1.5, b=0.75, delta=0)
    np.testing.assert_allclose(fresh.get_scores("w1 w2"), rebuilt_scores.get_scores(["w1", "w2"]), rtol=1e-9)


def test_clear_removes_the_stored_index(store_small):
    mem = FinancialSituationMemory("wipe")
    _fill(mem, random.Random(4), 50)
    mem.store_index()
    mem.clear()
    assert not index_file(mem.path).exists() and len(FinancialSituationMemory("wipe")) == 0


def test_a_large_memory_read_from_its_jsonl_alone_stores_its_index_on_open(store_small, monkeypatch):
    mem = FinancialSituationMemory("legacy")
    monkeypatch.setattr(situation_memory.FinancialSituationMemory, "STORE_MIN_DOCS", 10**9)
    _fill(mem, random.Random(6), 40)  # as an older version wrote it: no stored index
    assert not index_file(mem.path).exists()
    monkeypatch.setattr(situation_memory.FinancialSituationMemory, "STORE_MIN_DOCS", 10)
    FinancialSituationMemory("legacy")
    assert index_file(mem.path).exists()
    tokenised = _tokenised(monkeypatch)
    assert FinancialSituationMemory("legacy").items() == mem.items() and tokenised == []


def test_a_failing_index_store_does_not_fail_the_add(store_small, monkeypatch, caplog):
    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(situation_memory, "save_index", refuse)
    mem = FinancialSituationMemory("full_disk")
    assert mem.add_situations([(f"lesson {i}", "r") for i in range(30)]) == 30
    assert len(FinancialSituationMemory("full_disk")) == 30 and "could not store the index" in caplog.text


def test_weights_of_an_old_version_are_let_go(monkeypatch):
    # Cached weights are views of one block per pass: stale weights left for a rarely queried term
    # would keep their whole block alive, and add/query cycles would grow memory without bound.
    monkeypatch.setattr(bm25, "_EAGER_POSTINGS", 0)
    index = BM25Index(1.5, 0.75)
    index._direct = lambda terms: False  # always through the weights (a small index skips them after adds)
    index.add_many([[f"w{i % 50}", f"w{i % 7}", "common"] for i in range(5000)])
    index.top(["w1", "w2", "common"], 3)
    assert {index.vocab[t] for t in ("w1", "w2")} <= set(index._w)
    for _ in range(5):
        index.add(["w3", "common"])
        index.top(["w3", "w4", "common"], 3)
        assert set(index._w) == {index.vocab[t] for t in ("w3", "w4", "common")}


def _term_by_term(index: BM25Index, query: list[str]) -> np.ndarray:
    # the reference arithmetic: each known query term's postings added in first-occurrence order,
    # a term's postings gathered from the flat arrays (its base slice, then its tail entries)
    norm = index.k1 * (1.0 - index.b + index.b * index.doc_len[: index.n_docs] / (index.total_len / index.n_docs))
    scores = np.zeros(index.n_docs)
    tail = index._tail_terms[: index._tail_n]
    for term, qf in Counter(query).items():
        if term in index.vocab:
            tid = index.vocab[term]
            s, e = (int(index.ptr[tid]), int(index.ptr[tid + 1])) if tid + 1 < len(index.ptr) else (0, 0)
            mine = np.flatnonzero(tail == tid)
            ids = np.concatenate((index.ids[s:e], index._tail_ids[mine]))
            tf = np.concatenate((index.tfs[s:e], index._tail_tfs[mine]))
            assert np.all(np.diff(ids) > 0) and len(ids) == index._df[tid]
            c = qf * math.log((index.n_docs + 1) / len(ids)) * (index.k1 + 1.0)
            scores[ids] += c * tf / (norm[ids] + tf)
    return scores


def test_queries_between_adds_are_exact_and_weigh_nothing(monkeypatch):
    # A small index queried once after every add (a run: recall, then a settled lesson) is scored
    # straight from its postings: the same ids and score bits as the full sort, and no weights
    # computed for the whole index (which every add would throw away again).
    rng = random.Random(21)
    docs = _zipf_corpus(rng, 300, vocab=600, length=60)
    index = BM25Index(1.5, 0.75)
    index.add_many(bm25_tokenize(d) for d in docs[:100])
    for k, doc in enumerate(docs[100:]):
        index.add(bm25_tokenize(doc))
        query = bm25_tokenize(rng.choice(docs)) * 2  # repeated terms: qf counts
        scores = index.scores(query)
        assert scores.tobytes() == _term_by_term(index, query).tobytes()
        ids, got = index.top(query, 3)
        assert ids.tolist() == _expected(scores, 3)
        assert got.tobytes() == scores[ids].tobytes()
        assert index._w_version != index._version or not (index._w or index._w_flat is not None)
        if k % 50 == 0:  # repeated queries at one version end up cached, with the same answer
            for _ in range(40):
                again, again_scores = index.top(query, 3)
                assert again.tolist() == ids.tolist() and again_scores.tobytes() == got.tobytes()
            assert index._w_version == index._version and (index._w or index._w_flat is not None)
