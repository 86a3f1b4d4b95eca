"""Per-role BM25 memories: ranking (rank-bm25's BM25Plus delta 0 as oracle), CJK, persistence, threads."""

from __future__ import annotations

import json
import random
import threading

import numpy as np
import pytest
from rank_bm25 import BM25Okapi, BM25Plus

from tradingagents.agents.utils.memory import (
    ROLE_NAMES,
    FinancialSituationMemory,
    bm25_tokenize,
)

SEED = [
    (
        "Rising yields and strong dollar pressure on growth and EM assets",
        "Reduce long-duration growth exposure; hedge FX risk; increase defensive allocation.",
    ),
    (
        "Volatility spike with institutional selling in high-beta tech",
        "Lower gross exposure and tighten stop-loss thresholds.",
    ),
]
SEED_QUERY = "Institutional selling increases in tech while rates continue rising"


# ---------------------------------------------------------------- ranking
def test_seed_example_ranks_the_tech_selloff_first_with_similarity_one():
    mem = FinancialSituationMemory("bull_memory")
    mem.add_situations(SEED)
    out = mem.get_memories(SEED_QUERY, n_matches=2)
    assert [m["matched_situation"] for m in out] == [SEED[1][0], SEED[0][0]]
    assert out[0]["recommendation"] == SEED[1][1]
    assert out[0]["similarity_score"] == 1.0
    assert 0.0 < out[1]["similarity_score"] < 1.0  # "rising" is shared, so not zero
    assert set(out[0]) == {"matched_situation", "recommendation", "similarity_score"}


def test_okapi_idf_vanishes_where_ours_does_not():
    """The reason for the non-negative IDF: BM25Okapi scores the seed example 0/0 and one memory < 0."""
    corpus = [bm25_tokenize(s) for s, _ in SEED]
    q = bm25_tokenize(SEED_QUERY)
    assert list(BM25Okapi(corpus).get_scores(q)) == [0.0, 0.0]
    assert BM25Okapi(corpus[:1]).get_scores(q)[0] < 0
    mem = FinancialSituationMemory("trader_memory")
    mem.add_situations(SEED[:1])
    assert mem.get_scores(SEED_QUERY)[0] > 0
    assert mem.get_memories(SEED_QUERY)[0]["similarity_score"] == 1.0


def _random_corpus(rng: random.Random, n_docs: int, vocab: int):
    words = [f"w{i}" for i in range(vocab)]
    docs = []
    for _ in range(n_docs):
        length = rng.randint(0, 12)
        docs.append(" ".join(rng.choice(words) for _ in range(length)))
    return words, docs


@pytest.mark.parametrize("seed", range(12))
def test_scores_match_bm25plus_delta0_on_random_corpora(seed):
    rng = random.Random(seed)
    words, docs = _random_corpus(rng, rng.randint(1, 60), rng.randint(2, 25))
    if not any(d.split() for d in docs):
        docs[0] = words[0]
    mem = FinancialSituationMemory(f"oracle{seed}")
    mem.add_situations([(d, f"advice {i}") for i, d in enumerate(docs)])
    oracle = BM25Plus([bm25_tokenize(d) for d in docs], k1=1.5, b=0.75, delta=0)
    for _ in range(10):
        # repeated words and words never stored included
        query = " ".join(rng.choice(words + ["unseen", "zzz"]) for _ in range(rng.randint(1, 8)))
        ours = np.array(mem.get_scores(query))
        ref = oracle.get_scores(bm25_tokenize(query))
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
        # get_memories ranks by exactly those scores and normalises by the best one
        top = mem.get_memories(query, n_matches=5)
        best = ref.max()
        expected = sorted(range(len(docs)), key=lambda i: (-ref[i], i))[:5]
        assert [t["recommendation"] for t in top] == [f"advice {i}" for i in expected]
        for t, i in zip(top, expected, strict=True):
            assert t["similarity_score"] == pytest.approx(ref[i] / (best if best > 0 else 1.0))


def test_scores_stay_exact_while_adding_one_at_a_time():
    """avgdl and IDF move with every add; the index must follow (no stale precomputed scores)."""
    rng = random.Random(7)
    words, docs = _random_corpus(rng, 40, 15)
    docs = [d or words[1] for d in docs]
    mem = FinancialSituationMemory("incremental")
    for i, d in enumerate(docs, 1):
        mem.add_situations([(d, "a")])
        oracle = BM25Plus([bm25_tokenize(x) for x in docs[:i]], k1=1.5, b=0.75, delta=0)
        q = " ".join(rng.choice(words) for _ in range(4))
        np.testing.assert_allclose(mem.get_scores(q), oracle.get_scores(bm25_tokenize(q)), rtol=1e-9, atol=1e-12)


def test_k1_and_b_come_from_config():
    rng = random.Random(3)
    words, docs = _random_corpus(rng, 30, 10)
    docs = [d or words[0] for d in docs]
    mem = FinancialSituationMemory("tuned", {"bm25_k1": 0.9, "bm25_b": 0.3})
    mem.add_situations([(d, "") for d in docs])
    q = "w1 w2 w3 w1"
    ref = BM25Plus([bm25_tokenize(d) for d in docs], k1=0.9, b=0.3, delta=0).get_scores(bm25_tokenize(q))
    np.testing.assert_allclose(mem.get_scores(q), ref, rtol=1e-9)
    default = BM25Plus([bm25_tokenize(d) for d in docs], k1=1.5, b=0.75, delta=0).get_scores(bm25_tokenize(q))
    assert not np.allclose(mem.get_scores(q), default)


@pytest.mark.parametrize("bad", [{"bm25_k1": "high"}, {"bm25_k1": -1.0}, {"bm25_b": 1.5}, {"bm25_b": float("nan")}])
def test_bad_bm25_settings_are_refused_clearly(bad):
    with pytest.raises(ValueError, match="bm25"):
        FinancialSituationMemory("bull_memory", bad)


def test_ties_rank_the_older_memory_first():
    mem = FinancialSituationMemory("ties")
    mem.add_situations([("alpha beta", "first"), ("gamma", "second"), ("alpha beta", "third")])
    assert [m["recommendation"] for m in mem.get_memories("alpha", 3)] == ["first", "third", "second"]
    # a query that matches nothing: all scores 0, denominator 1, insertion order
    out = mem.get_memories("nothing here", 2)
    assert [(m["recommendation"], m["similarity_score"]) for m in out] == [("first", 0.0), ("second", 0.0)]


def test_top_n_selection_is_exact_on_a_larger_corpus():
    rng = random.Random(11)
    words, docs = _random_corpus(rng, 3000, 40)
    mem = FinancialSituationMemory("large")
    mem.add_situations([(d, str(i)) for i, d in enumerate(docs)])
    for _ in range(5):
        q = " ".join(rng.choice(words) for _ in range(3))
        scores = np.array(mem.get_scores(q))
        want = sorted(range(len(docs)), key=lambda i: (-scores[i], i))[:7]
        assert [int(m["recommendation"]) for m in mem.get_memories(q, 7)] == want


# ---------------------------------------------------------------- tokenising
def test_english_tokens_are_lowercased_word_runs():
    assert bm25_tokenize("High-Beta TECH's sell-off, 2024!") == ["high", "beta", "tech", "s", "sell", "off", "2024"]


def test_chinese_situations_match_each_other():
    mem = FinancialSituationMemory("bear_memory")
    mem.add_situations(
        [
            ("美联储加息导致美元走强", "降低新兴市场敞口"),
            ("机构集中抛售高估值科技股", "收紧止损"),
            ("Rising yields hit growth stocks", "hedge duration"),
        ]
    )
    out = mem.get_memories("科技股遭遇抛售", n_matches=3)
    assert out[0]["matched_situation"] == "机构集中抛售高估值科技股"
    assert out[0]["similarity_score"] == 1.0
    assert all(m["similarity_score"] == 0.0 for m in out[1:])
    terms = mem.matched_terms("科技股遭遇抛售", "机构集中抛售高估值科技股")
    assert "科技" in terms and "抛售" in terms and "遭遇" not in terms


def test_cjk_runs_inside_mixed_text_split_into_unigrams_and_bigrams():
    assert bm25_tokenize("NVDA股价 up") == ["nvda", "股", "价", "股价", "up"]
    assert bm25_tokenize("円安") == ["円", "安", "円安"]


def test_matched_terms_lists_shared_query_tokens_once_in_query_order():
    terms = FinancialSituationMemory.matched_terms(SEED_QUERY + " tech", SEED[1][0])
    assert terms == ["institutional", "selling", "in", "tech"]


# ---------------------------------------------------------------- API edges
def test_empty_memory_and_n_matches_edges():
    mem = FinancialSituationMemory("risk_manager_memory")
    assert mem.get_memories("anything", 3) == []
    assert len(mem) == 0 and mem.count() == 0
    mem.add_situations(SEED)
    assert mem.get_memories(SEED_QUERY, 0) == []
    assert len(mem.get_memories(SEED_QUERY, 10**9)) == 2
    with pytest.raises(ValueError, match="0 or more"):
        mem.get_memories(SEED_QUERY, -1)
    with pytest.raises(TypeError, match="whole number"):
        mem.get_memories(SEED_QUERY, 1.5)
    with pytest.raises(TypeError):
        mem.get_memories(None, 1)


def test_add_checks_every_pair_before_writing_anything():
    mem = FinancialSituationMemory("invest_judge_memory")
    with pytest.raises(TypeError, match="Item 1"):
        mem.add_situations([("ok", "fine"), ("only one",)])
    with pytest.raises(TypeError):
        mem.add_situations("not a list")
    assert len(mem) == 0 and not mem.path.exists()
    assert mem.add_situations([]) == 0


@pytest.mark.parametrize("name", ["", "../evil", "a/b", "..", "x" * 65, "name with space", "a\x00b", 3, None])
def test_role_names_must_be_safe_file_names(name):
    with pytest.raises(ValueError, match="Invalid memory name"):
        FinancialSituationMemory(name)


def test_graph_role_names_are_accepted():
    for name in ROLE_NAMES:
        assert FinancialSituationMemory(name).name == name


# ---------------------------------------------------------------- persistence
def test_memories_persist_under_memory_dir_and_reload(tmp_path):
    cfg = {"memory_dir": str(tmp_path / "mem")}
    mem = FinancialSituationMemory("bull_memory", cfg)
    mem.add_situations(SEED)
    mem.add_situations([("line\nbreak \u2028 and \"quotes\"", "multi\nline")])
    assert mem.path == tmp_path / "mem" / "bull_memory.jsonl"
    again = FinancialSituationMemory("bull_memory", cfg)
    assert again.items() == mem.items()
    assert again.get_memories(SEED_QUERY, 2) == mem.get_memories(SEED_QUERY, 2)
    assert len(FinancialSituationMemory("bear_memory", cfg)) == 0  # roles are separate


def test_default_memory_dir_is_under_the_home(ta_home):
    mem = FinancialSituationMemory("trader_memory")
    mem.add_situations(SEED)
    assert mem.path == ta_home / "memory" / "trader_memory.jsonl"
    assert len(mem.path.read_text().splitlines()) == 2


def test_other_instances_see_new_memories_without_reopening():
    a = FinancialSituationMemory("bull_memory")
    b = FinancialSituationMemory("bull_memory")
    a.add_situations(SEED[:1])
    b.add_situations(SEED[1:])
    assert len(a) == 2 and len(b) == 2
    assert a.get_memories(SEED_QUERY, 1)[0]["matched_situation"] == SEED[1][0]


def test_clear_forgets_on_disk_too():
    mem = FinancialSituationMemory("bull_memory")
    mem.add_situations(SEED)
    other = FinancialSituationMemory("bull_memory")
    mem.clear()
    assert len(mem) == 0 and mem.get_memories(SEED_QUERY, 2) == []
    assert len(FinancialSituationMemory("bull_memory")) == 0
    assert len(other) == 0  # an older instance notices the file was replaced
    mem.add_situations(SEED[:1])
    assert len(FinancialSituationMemory("bull_memory")) == 1


def test_torn_final_line_is_ignored_then_cut_by_the_next_writer():
    mem = FinancialSituationMemory("bull_memory")
    mem.add_situations(SEED[:1])
    with open(mem.path, "ab") as fh:  # a writer killed half-way through its line
        fh.write(b'{"situation": "half wri')
    fresh = FinancialSituationMemory("bull_memory")
    assert len(fresh) == 1 and fresh.problems == []
    fresh.add_situations(SEED[1:])
    lines = mem.path.read_text().splitlines()
    assert [json.loads(x)["situation"] for x in lines] == [SEED[0][0], SEED[1][0]]
    assert len(FinancialSituationMemory("bull_memory")) == 2


def test_complete_final_line_without_newline_is_kept():
    mem = FinancialSituationMemory("bull_memory")
    mem.path.parent.mkdir(parents=True, exist_ok=True)
    mem.path.write_text(json.dumps({"situation": "hand written", "recommendation": "kept"}))  # no newline
    mem.add_situations(SEED[:1])
    assert [s for s, _ in FinancialSituationMemory("bull_memory").items()] == ["hand written", SEED[0][0]]


def test_unreadable_lines_are_skipped_and_reported():
    mem = FinancialSituationMemory("bull_memory")
    mem.path.parent.mkdir(parents=True, exist_ok=True)
    mem.path.write_text(
        json.dumps({"situation": "a b", "recommendation": "1"}) + "\nnot json at all\n"
        + json.dumps({"situation": 5, "recommendation": "x"}) + "\n"
        + json.dumps({"situation": "c d", "recommendation": "2"}) + "\n"
    )
    fresh = FinancialSituationMemory("bull_memory")
    assert [r for _, r in fresh.items()] == ["1", "2"]
    assert len(fresh.problems) == 2 and "line 2" in fresh.problems[0] and "line 3" in fresh.problems[1]


# ---------------------------------------------------------------- threads
def test_concurrent_adds_and_queries_from_threads_lose_nothing():
    mem = FinancialSituationMemory("bull_memory")
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for i in range(40):
                mem.add_situations([(f"thread{k} item{i} selling tech", f"{k}:{i}")])
                mem.get_memories("selling tech", 3)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(mem) == 240
    reloaded = FinancialSituationMemory("bull_memory")
    assert sorted(r for _, r in reloaded.items()) == sorted(f"{k}:{i}" for k in range(6) for i in range(40))
    oracle = BM25Plus([bm25_tokenize(s) for s, _ in reloaded.items()], k1=1.5, b=0.75, delta=0)
    np.testing.assert_allclose(mem.get_scores("thread3 item7"), oracle.get_scores(["thread3", "item7"]))


def test_one_situation_recalled_from_every_role_is_tokenised_once(monkeypatch):
    import tradingagents.memory.situation_memory as situation_memory

    seen: list[str] = []
    real = situation_memory.bm25_tokenize
    monkeypatch.setattr(situation_memory, "bm25_tokenize", lambda t: seen.append(t) or real(t))
    situation_memory._cached_tokens.cache_clear()
    mems = [FinancialSituationMemory(f"once{i}") for i in range(3)]
    for i, mem in enumerate(mems):
        mem.add_situations([(f"rates rising tech weak {i}", f"lesson {i}"), ("oil supply shock", "hedge")])
    query = "tech weak as rates keep rising"
    got = [mem.get_memories(query, n_matches=2) for mem in mems]
    assert seen.count(query) == 1
    assert [[m["recommendation"] for m in g] for g in got] == [[f"lesson {i}", "hedge"] for i in range(3)]
    assert [m["similarity_score"] for m in got[0]] == [1.0, 0.0]  # no term in common with the oil lesson
