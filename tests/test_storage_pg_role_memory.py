"""Role memories in a real PostgreSQL server: the file class's rankings, shared across processes."""

from __future__ import annotations

import pytest

from tests import pg_server as _pg
from tradingagents.agents.utils.memory import FinancialSituationMemory
from tradingagents.storage import open_role_memory
from tradingagents.storage.pg_role_memory import PgRoleMemory

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

PAIRS = [
    ("Rising yields and strong dollar pressure on growth and EM assets",
     "Reduce long-duration growth exposure; hedge FX risk; increase defensive allocation."),
    ("Volatility spike with institutional selling in high-beta tech", "Lower gross exposure and tighten stop-loss thresholds."),
    ("Earnings beat with raised guidance; momentum strong in semiconductors", "Add on pullbacks; trail the stop."),
    ("美联储加息，科技股承压，资金流出成长板块", "降低科技股仓位，增加防御性资产。"),
    ("Tech selling tech selling tech selling: a one-note situation", "Repeated words test term frequency."),
    ("Dividend stocks steady while rates rise", "Hold defensives."),
    ("", "An empty situation must not break the index."),
]
QUERIES = [
    "Institutional selling increases in tech while rates continue rising",
    "科技股 加息",
    "semiconductors momentum guidance",
    "nothing in common whatsoever zzz",
    "",
    "tech",
]


def test_seed_example_ranks_volatility_first_with_similarity_one(pg_url):
    mem = PgRoleMemory("bull_memory", {"storage_url": pg_url})
    mem.add_situations(PAIRS[:2])
    got = mem.get_memories("Institutional selling increases in tech while rates continue rising", n_matches=2)
    assert [g["matched_situation"] for g in got] == [PAIRS[1][0], PAIRS[0][0]]
    assert got[0]["similarity_score"] == 1.0 and 0 <= got[1]["similarity_score"] < 1


def test_rankings_and_scores_are_identical_to_the_file_memory(pg_url):
    cfg = {"storage_url": pg_url, "bm25_k1": 1.2, "bm25_b": 0.6}
    pg = PgRoleMemory("trader_memory", cfg)
    files = FinancialSituationMemory("trader_memory", {k: v for k, v in cfg.items() if k != "storage_url"})
    for (start, end), known in (((0, 3), None), ((3, 5), "2024-05-17"), ((5, 7), "2024-06-03")):
        batch = PAIRS[start:end]
        assert pg.add_situations(batch, known_from=known) == files.add_situations(batch, known_from=known)
    assert pg.items() == files.items() and len(pg) == len(files) == len(PAIRS)
    for query in QUERIES:
        assert pg.get_scores(query) == files.get_scores(query)
        for n in (0, 1, 3, 50):
            for as_of in (None, "2024-05-16", "2024-05-17", "2024-07-01"):
                assert pg.get_memories(query, n, as_of=as_of) == files.get_memories(query, n, as_of=as_of)
        assert pg.matched_terms(query, PAIRS[1][0]) == files.matched_terms(query, PAIRS[1][0])


def test_point_in_time_recall_hides_lessons_not_yet_knowable(pg_url):
    mem = PgRoleMemory("bear_memory", {"storage_url": pg_url})
    mem.add_situations([PAIRS[1]], known_from="2024-05-17")
    mem.add_situations([PAIRS[0]])  # always knowable
    query = "Institutional selling in tech"
    assert [m["matched_situation"] for m in mem.get_memories(query, 5, as_of="2024-05-16")] == [PAIRS[0][0]]
    assert mem.get_memories(query, 1, as_of="2024-05-17")[0]["matched_situation"] == PAIRS[1][0]
    assert mem.get_memories(query, 1)[0]["matched_situation"] == PAIRS[1][0]


def test_instances_see_each_others_additions_and_clears(pg_url):
    cfg = {"storage_url": pg_url}
    a = open_role_memory("invest_judge_memory", cfg)
    b = open_role_memory("invest_judge_memory", cfg)
    other_role = open_role_memory("bull_memory", cfg)
    assert isinstance(a, PgRoleMemory)
    a.add_situations(PAIRS[:2])
    assert b.count() == 2 and b.get_memories("volatility spike", 1)[0]["matched_situation"] == PAIRS[1][0]
    other_role.add_situations(PAIRS[2:3])
    assert len(a) == 2 and len(other_role) == 1
    b.clear()
    assert a.count() == 0 and a.get_memories("volatility", 3) == [] and len(other_role) == 1
    b.add_situations(PAIRS[5:6])
    a_again = PgRoleMemory("invest_judge_memory", cfg)
    assert a.items() == a_again.items() == [PAIRS[5]]


def test_a_bad_pair_adds_nothing_and_bad_names_are_refused(pg_url):
    mem = PgRoleMemory("risk_manager_memory", {"storage_url": pg_url})
    with pytest.raises(TypeError, match="Item 1"):
        mem.add_situations([PAIRS[0], ("only one",)])
    with pytest.raises(TypeError):
        mem.add_situations("not pairs")
    assert mem.count() == 0 and mem.add_situations([]) == 0
    with pytest.raises(ValueError, match="memory name"):
        PgRoleMemory("../etc", {"storage_url": pg_url})
    with pytest.raises(ValueError, match="n_matches"):
        mem.get_memories("x", -1)
