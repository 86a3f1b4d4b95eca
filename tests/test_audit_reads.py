"""The file trail is parsed and checked once per line in a process: a later read takes only what was appended
(the Audit page reads the whole trail on every rerun), and still sees any change to what it read before.

Real parts: the trail file, its lock, the hash chain, a PostgreSQL server on 127.0.0.1 (tests/pg_server.py)."""

from __future__ import annotations

import json
import os

import pytest

from tests import pg_server as _pg
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.storage import audit
from tradingagents.storage.audit import read_checked_audit, verify_audit

pg_server, pg_url = _pg.pg_server, _pg.pg_url


@pytest.fixture
def parsed(monkeypatch):
    """The lines of the file that reads took in (parsed and checked), in order."""
    seen: list[bytes] = []
    real = audit._Trail.feed

    def counting(self, lines: bytes) -> None:
        seen.extend(lines.split(b"\n"))
        real(self, lines)

    monkeypatch.setattr(audit._Trail, "feed", counting)
    return seen


def _record(cfg, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        storage.record_audit(cfg, "job_start", by="ann@desk.example", target=f"run NVDA #{i}", i=i)


def test_a_later_read_parses_only_the_appended_lines(ta_home, parsed):
    cfg = resolve_config({})
    _record(cfg, 5)
    assert [e["detail"]["i"] for e in storage.read_audit(cfg)] == [0, 1, 2, 3, 4]
    assert verify_audit(cfg).chained == 5
    first = len([r for r in parsed if r.strip()])
    assert first == 5  # read once for both the entries and the check
    _record(cfg, 3, start=5)
    parsed.clear()
    entries = storage.read_audit(cfg)
    check = verify_audit(cfg)
    assert [e["detail"]["i"] for e in entries] == list(range(8))
    assert check.ok and check.entries == check.chained == 8
    assert len([r for r in parsed if r.strip()]) == 3  # the three new lines, not the eight


def test_an_edit_of_a_line_read_before_is_seen_even_with_the_same_size_and_time(ta_home):
    cfg = resolve_config({})
    _record(cfg, 6)
    assert verify_audit(cfg).ok
    path = cfg["audit_path"]
    before = os.stat(path)
    lines = open(path, encoding="ascii").read().split("\n")
    doc = json.loads(lines[2])
    doc["target"] = doc["target"].replace("#2", "#9")  # the same length: the file's size does not change
    lines[2] = json.dumps(doc, sort_keys=True)
    with open(path, "r+", encoding="ascii") as fh:  # rewritten in place, the same inode
        fh.write("\n".join(lines))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and its time put back
    assert os.stat(path).st_size == before.st_size
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 3 and check.reason == "hash"
    assert [e["target"] for e in storage.read_audit(cfg)][2] == "run NVDA #9"


def test_a_trail_cut_short_or_replaced_is_read_again_from_its_start(ta_home):
    cfg = resolve_config({})
    _record(cfg, 6)
    path = cfg["audit_path"]
    whole = open(path, encoding="ascii").read()
    assert verify_audit(cfg).entries == 6
    open(path, "w", encoding="ascii").write("".join(whole.splitlines(keepends=True)[:4]))
    assert [e["detail"]["i"] for e in storage.read_audit(cfg)] == [0, 1, 2, 3]
    assert verify_audit(cfg).entries == 4
    os.remove(path)
    assert storage.read_audit(cfg) == [] and verify_audit(cfg).entries == 0
    _record(cfg, 2, start=10)  # a new trail at the same path
    assert [e["detail"]["i"] for e in storage.read_audit(cfg)] == [10, 11]
    check = verify_audit(cfg)
    assert check.ok and check.chained == 2


def test_a_last_line_without_a_line_break_is_read_and_then_kept_once(ta_home, parsed):
    cfg = resolve_config({})
    _record(cfg, 3)
    path = cfg["audit_path"]
    text = open(path, encoding="ascii").read()
    open(path, "w", encoding="ascii").write(text.rstrip("\n"))  # a hand-edited file that lost its last line break
    assert [e["detail"]["i"] for e in storage.read_audit(cfg)] == [0, 1, 2]
    assert verify_audit(cfg).chained == 3
    _record(cfg, 2, start=3)  # the writer ends that line before its own
    entries = storage.read_audit(cfg)
    assert [e["detail"]["i"] for e in entries] == [0, 1, 2, 3, 4]
    check = verify_audit(cfg)
    assert check.ok and check.entries == check.chained == 5


def test_a_break_found_before_stays_in_every_later_check(ta_home):
    cfg = resolve_config({})
    _record(cfg, 4)
    path = cfg["audit_path"]
    lines = open(path, encoding="ascii").read().split("\n")
    doc = json.loads(lines[1])
    doc["by"] = "mallory@desk.example"
    lines[1] = json.dumps(doc, sort_keys=True)
    open(path, "w", encoding="ascii").write("\n".join(lines))
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 2
    _record(cfg, 3, start=4)  # entries appended after the break are counted; the break is still named
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 2 and check.entries == 7 and check.chained == 1


def test_entries_handed_out_are_copies(ta_home):
    cfg = resolve_config({})
    _record(cfg, 2)
    first = storage.read_audit(cfg)
    first[0]["by"] = "changed"
    first[0]["detail"]["i"] = 99
    first.clear()
    again = storage.read_audit(cfg)
    assert [(e["by"], e["detail"]["i"]) for e in again] == [("ann@desk.example", 0), ("ann@desk.example", 1)]


def test_the_desk_trail_is_read_from_the_last_row_read_and_a_row_changed_before_is_seen(pg_url, ta_home,
                                                                                         monkeypatch):
    import psycopg

    added: list[str] = []
    real = audit._Trail.add
    monkeypatch.setattr(audit._Trail, "add", lambda self, item, *chain: (added.append(item["target"]),
                                                                        real(self, item, *chain))[1])
    cfg = resolve_config({"storage_url": pg_url})
    _record(cfg, 5)
    entries, check = read_checked_audit(cfg)
    assert [e["detail"]["i"] for e in entries] == list(range(5)) and check.ok and check.chained == 5
    assert len(added) == 5
    _record(cfg, 2, start=5)
    added.clear()
    entries, check = read_checked_audit(cfg)
    assert [e["detail"]["i"] for e in entries] == list(range(7)) and check.ok and check.chained == 7
    assert added == ["run NVDA #5", "run NVDA #6"]  # the two new rows only
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the database's owner removes a row read before
        conn.execute("ALTER TABLE ta_audit DISABLE TRIGGER ta_audit_no_change")
        conn.execute("DELETE FROM ta_audit WHERE id = 3")
        conn.execute("ALTER TABLE ta_audit ENABLE TRIGGER ta_audit_no_change")
    added.clear()
    entries, check = read_checked_audit(cfg)
    assert len(added) == 6  # read again from the first row
    assert [e["detail"]["i"] for e in entries] == [0, 1, 3, 4, 5, 6]
    assert not check.ok and check.broken_at == 3 and check.reason == "order"


def test_readers_beside_writers_see_a_chain_that_holds_and_never_shrinks(ta_home):
    import threading

    cfg = resolve_config({})
    writers, each, readers = 4, 15, 3
    go = threading.Barrier(writers + readers)
    done = threading.Event()
    seen: list[list[tuple[int, bool, int]]] = [[] for _ in range(readers)]
    errors: list[BaseException] = []

    def write(n: int) -> None:
        try:
            go.wait(timeout=60)
            for i in range(each):
                storage.record_audit(cfg, "job_start", by=f"w{n}@desk.example", target=f"run #{n}.{i}", n=n, i=i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def read(k: int) -> None:
        try:
            go.wait(timeout=60)
            while not done.is_set():
                entries, check = read_checked_audit(cfg)
                seen[k].append((len(entries), check.ok, check.chained))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    lookers = [threading.Thread(target=read, args=(k,)) for k in range(readers)]
    for t in threads + lookers:
        t.start()
    for t in threads:
        t.join(120)
    done.set()
    for t in lookers:
        t.join(120)
    assert not errors, errors
    for reads in seen:
        assert reads and all(ok and n == chained for n, ok, chained in reads), reads
        assert [n for n, _, _ in reads] == sorted(n for n, _, _ in reads)  # a later read never has fewer
    entries, check = read_checked_audit(cfg)
    assert check.ok and check.chained == len(entries) == writers * each
    assert sorted((e["detail"]["n"], e["detail"]["i"]) for e in entries) == [(n, i) for n in range(writers)
                                                                            for i in range(each)]
