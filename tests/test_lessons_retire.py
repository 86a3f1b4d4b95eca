"""Lessons that can be retired (kept, no longer retrieved, reversible) and written once under
concurrency, on the file memory and on a real PostgreSQL server."""

from __future__ import annotations

import os

import pytest

from tests import pg_server as _pg
from tradingagents import storage, team
from tradingagents.config import resolve_config
from tradingagents.graph.settlement import Settler
from tradingagents.memory.situation_memory import FinancialSituationMemory, lesson_id

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

PAIRS = [
    ("Volatility spike with institutional selling in high-beta tech", "Lower gross exposure and tighten stops."),
    ("Earnings beat with raised guidance; momentum strong in semiconductors", "Add on pullbacks; trail the stop."),
    ("Tech selling after a volatility spike in semiconductors", "Wait for the selling to exhaust itself."),
]
QUERY = "volatility spike and selling in tech semiconductors"


@pytest.fixture(params=["files", "pg"])
def cfg(request):
    if request.param == "files":
        return resolve_config({})
    return resolve_config({"storage_url": request.getfixturevalue("pg_url")})


def test_a_retired_lesson_is_kept_but_never_retrieved_and_can_be_restored(cfg):
    mem = storage.open_role_memory("bull_memory", cfg)
    mem.add_situations(PAIRS)
    before = [m["id"] for m in mem.recall_lessons(QUERY, 3)]
    assert len(before) == 3
    gone = before[0]
    assert mem.retire(gone) is True and mem.retire(gone) is False  # the second changes nothing
    got = mem.recall_lessons(QUERY, 3)
    assert gone not in [m["id"] for m in got] and len(got) == 2
    assert got[0]["similarity_score"] == 1.0  # the best remaining lesson scores 1
    assert mem.get_memories(QUERY, 3) == [{k: m[k] for k in ("matched_situation", "recommendation",
                                                               "similarity_score")} for m in got]
    assert mem.count() == 3 and len(mem.items()) == 3  # still stored
    assert {x["id"]: x["retired"] for x in mem.lessons()}[gone] is True
    # another instance (another process, another machine of the desk) sees it retired
    other = storage.open_role_memory("bull_memory", cfg)
    assert other.retired_ids() == {gone}
    assert gone not in [m["id"] for m in other.recall_lessons(QUERY, 3)]
    # and a lesson retired there is restored here
    assert other.retire(gone, False) is True
    assert [m["id"] for m in mem.recall_lessons(QUERY, 3)] == before
    assert storage.open_role_memory("bull_memory", cfg).retired_ids() == frozenset()
    with pytest.raises(KeyError):
        mem.retire("0123456789ab")


def test_retiring_every_lesson_leaves_nothing_to_recall_and_clear_forgets_retirements(cfg):
    mem = storage.open_role_memory("bear_memory", cfg)
    mem.add_situations(PAIRS[:2])
    for item in mem.lessons():
        mem.retire(item["id"])
    assert mem.recall_lessons(QUERY, 5) == [] and mem.count() == 2
    mem.clear()
    mem.add_situations(PAIRS[:2])
    assert len(mem.recall_lessons(QUERY, 5)) == 2  # a cleared memory starts with nothing retired


def test_add_lessons_once_skips_a_lesson_or_a_source_already_held(cfg):
    mem = storage.open_role_memory("trader_memory", cfg)
    assert mem.add_lessons_once([PAIRS[0], PAIRS[0], PAIRS[1]], known_from="2024-05-17") == 2
    assert mem.add_lessons_once([PAIRS[0]]) == 0
    mem.add_situations([PAIRS[2]])  # the specification's writer stores what it is given
    assert mem.add_lessons_once([PAIRS[2]]) == 0  # whichever writer stored it
    assert mem.add_lessons_once([("new situation", "new lesson")], source="NVDA 2024-05-10") == 1
    # the same decision settled again (another model answer, another text) adds nothing
    assert mem.add_lessons_once([("new situation", "another text")], source="NVDA 2024-05-10") == 0
    again = storage.open_role_memory("trader_memory", cfg)  # a new instance reads the sources back
    assert again.add_lessons_once([("x", "y")], source="NVDA 2024-05-10") == 0
    assert again.count() == 4
    assert {x["id"] for x in again.lessons()} == {lesson_id(*p) for p in [*PAIRS, ("new situation", "new lesson")]}


def test_lesson_ids_are_the_same_on_both_backends(pg_url):
    files = FinancialSituationMemory("risky_memory", None)
    desk = storage.open_role_memory("risky_memory", resolve_config({"storage_url": pg_url}))
    for mem in (files, desk):
        mem.add_situations(PAIRS)
    assert [x["id"] for x in files.lessons()] == [x["id"] for x in desk.lessons()]
    assert [m["id"] for m in files.recall_lessons(QUERY, 3)] == [m["id"] for m in desk.recall_lessons(QUERY, 3)]


DATES = ["2024-05-06", "2024-05-07", "2024-05-08"]


def _slow_reads() -> None:
    """A slow disk or network: every memory re-read takes a little longer (widens any window between a
    check and a write; a check made under the memory's lock has none)."""
    import time

    from tradingagents.storage.pg_role_memory import PgRoleMemory

    for cls in (FinancialSituationMemory, PgRoleMemory):
        real = cls._sync

        def slow(self, real=real):
            time.sleep(0.005)
            return real(self)

        cls._sync = slow


def _settle_at_once(cfg, n_procs: int) -> None:
    """``n_procs`` forked processes settle the same log at the same moment (a pipe is their start line)."""
    from tradingagents.storage.pg import close_databases

    close_databases()  # no pool crosses the fork
    read, write = os.pipe()
    pids = []
    for _ in range(n_procs):
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                os.close(write)
                _slow_reads()
                os.read(read, 1)  # wait for the start
                Settler(cfg).settle()
                code = 0
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(read)
    os.write(write, b"x" * n_procs)
    os.close(write)
    codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    assert codes == [0] * n_procs


@pytest.mark.parametrize("trial", range(2))
def test_processes_settling_the_same_log_at_once_write_each_lesson_once(cfg, trial):
    log = storage.open_memory_log(cfg)
    for day in DATES:
        log.store_decision("NVDA", day, f"Buy NVDA on {day}.", rating="Buy")
    _settle_at_once(cfg, 6)
    entries = storage.open_memory_log(cfg).load_entries()
    assert [e["pending"] for e in entries] == [False] * len(DATES)
    counts = {name: storage.open_role_memory(name, cfg).count() for name in team.MEMORY_NAMES}
    assert counts == {name: len(DATES) for name in team.MEMORY_NAMES}  # 3 decisions × 5 roles = 15 lessons
    assert storage.open_memory_log(cfg).lessons_due() == []
