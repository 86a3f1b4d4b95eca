"""The audit trail is append-only and tamper-evident (issue 41, point 5): a hash chain that verifies after
8 concurrent writers and fails after an entry is edited or removed; fields holding U+2028, U+2029 or
U+0085 stay one entry; on the desk database no login can UPDATE, DELETE or TRUNCATE it.

Real parts: the file lock, a real PostgreSQL server on 127.0.0.1 (tests/pg_server.py)."""

from __future__ import annotations

import json
import threading

import pytest

from tests import pg_server as _pg
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.storage.audit import verify_audit

pg_server, pg_url = _pg.pg_server, _pg.pg_url
WRITERS, EACH = 8, 12


def _write_concurrently(cfg) -> None:
    go = threading.Barrier(WRITERS)
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            go.wait(timeout=60)
            for i in range(EACH):
                storage.record_audit(cfg, "job_start", by=f"user{n}@desk.example", target=f"run T{n} #{i}", n=n, i=i)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors


def test_eight_concurrent_writers_leave_a_chain_that_verifies_and_an_edit_breaks_it(ta_home):
    cfg = resolve_config({})
    _write_concurrently(cfg)
    check = verify_audit(cfg)
    assert check.ok and check.entries == check.chained == WRITERS * EACH, check
    assert len({(e["detail"]["n"], e["detail"]["i"]) for e in storage.read_audit(cfg)}) == WRITERS * EACH
    path = cfg["audit_path"]
    lines = open(path, encoding="ascii").read().split("\n")
    original = list(lines)
    # a colleague changes who did something
    doc = json.loads(lines[10])
    doc["by"] = "someone-else@desk.example"
    lines[10] = json.dumps(doc, sort_keys=True)
    open(path, "w", encoding="ascii").write("\n".join(lines))
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 11 and "changed" in check.problem
    # ... or removes an entry (the next one no longer follows)
    open(path, "w", encoding="ascii").write("\n".join(original[:20] + original[21:]))
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 21 and "removed" in check.problem
    # ... or recomputes the edited entry's hash: the next entry's prev gives it away
    from tradingagents.storage.audit import _hash, canonical

    doc = json.loads(original[5])
    doc["target"] = "nothing happened"
    doc["hash"] = _hash(canonical(doc, doc["prev"]))
    open(path, "w", encoding="ascii").write("\n".join(original[:5] + [json.dumps(doc)] + original[6:]))
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 7


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\u0085", "\r", "\x00"])
def test_a_line_separator_in_a_field_stays_one_entry(ta_home, char):
    cfg = resolve_config({})
    storage.record_audit(cfg, "sign_in", by="ann@desk.example")
    storage.record_audit(cfg, "memory_add", by=f"mallory{char}@desk.example", target=f"bull{char}memory",
                         advice=f"buy{char}everything")
    storage.record_audit(cfg, "sign_out", by="ann@desk.example")
    entries = storage.read_audit(cfg)
    assert [e["action"] for e in entries] == ["sign_in", "memory_add", "sign_out"]
    kept = "\ufffd" if char == "\x00" else char  # PostgreSQL holds no NUL: both storages keep U+FFFD
    assert entries[1]["target"] == f"bull{kept}memory" and entries[1]["detail"]["advice"] == f"buy{kept}everything"
    assert verify_audit(cfg).ok
    assert open(cfg["audit_path"], "rb").read().isascii()


def test_entries_from_before_the_chain_are_counted_not_checked(ta_home):
    cfg = resolve_config({})
    with open(cfg["audit_path"], "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"at": 1.0, "by": "old@desk.example", "action": "sign_in", "target": "", "detail": {}})
                 + "\n{torn")
    storage.record_audit(cfg, "sign_in", by="ann@desk.example")
    storage.record_audit(cfg, "sign_out", by="ann@desk.example")
    check = verify_audit(cfg)
    assert check.ok and (check.entries, check.chained) == (3, 2)
    with open(cfg["audit_path"], "a", encoding="utf-8") as fh:  # an unchained entry slipped in after them
        fh.write(json.dumps({"at": 2.0, "by": "x", "action": "sign_in", "target": "", "detail": {}}) + "\n")
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 4


def test_the_desk_trail_is_append_only_and_its_chain_holds(pg_url, ta_home):
    import psycopg

    cfg = resolve_config({"storage_url": pg_url})
    _write_concurrently(cfg)
    storage.record_audit(cfg, "memory_add", by="ann@desk.example", target="bull\u2028memory", big=1e20, small=0.1)
    check = verify_audit(cfg)
    assert check.ok and check.chained == WRITERS * EACH + 1, check
    with psycopg.connect(pg_url, autocommit=True) as conn:  # the desk's login (here even a superuser)
        for sql in ("UPDATE ta_audit SET by_user = 'x' WHERE id = 3", "DELETE FROM ta_audit WHERE id = 3",
                    "TRUNCATE ta_audit"):
            with pytest.raises(psycopg.Error, match="append-only"):
                conn.execute(sql)
        # one who can switch the triggers off (the database's owner) edits a row: verification says so
        conn.execute("ALTER TABLE ta_audit DISABLE TRIGGER ta_audit_no_change")
        conn.execute("UPDATE ta_audit SET by_user = 'someone-else@desk.example' WHERE id = 5")
        conn.execute("ALTER TABLE ta_audit ENABLE TRIGGER ta_audit_no_change")
    check = verify_audit(cfg)
    assert not check.ok and check.broken_at == 5, check


def test_the_command_line_writes_the_trail_too(ta_home, monkeypatch):
    from tradingagents.backtest.cli import main as backtest_main
    from tradingagents.cli import main

    monkeypatch.setenv("TRADINGAGENTS_USER", "ops@desk.example")
    assert main(["NVDA", "2024-01-10", "-q"]) == 0
    assert main(["batch", "NVDA,AAPL", "2024-05-10", "-q"]) == 0
    assert main(["settle"]) == 0
    assert backtest_main(["NVDA", "--start", "2024-05-01", "--end", "2024-05-10", "--every", "5", "-q"]) == 0
    entries = storage.read_audit(resolve_config({}))
    assert [(e["action"], e["target"].split(" ")[-1]) for e in entries][1:3] == [
        ("job_start", "2024-05-10"), ("settle", "decision(s)")]
    assert [e["target"].split(" ")[0] for e in entries if e["action"] == "job_start"] == ["run", "batch", "backtest"]
    assert {e["by"] for e in entries} == {"ops@desk.example"} and all(e["detail"]["via"] == "cli" for e in entries)
    assert verify_audit(resolve_config({})).ok
