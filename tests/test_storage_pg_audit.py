"""The audit trail on a desk database: a real PostgreSQL server on 127.0.0.1, the file trail's results."""

from __future__ import annotations

from tests import pg_server as _pg
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.storage.audit import FileAudit, PgAudit, open_audit

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

ACTIONS = [("sign_in", "ann@desk.example", "", {}), ("job_start", "ann@desk.example", "run NVDA 2024-05-10",
           {"kind": "run", "note": "'); DROP TABLE ta_audit; --"}), ("job_stop", "lead@desk.example", "run NVDA 2024-05-10",
           {"kind": "run"}), ("memory_clear", "bob@desk.example", "bull_memory", {"count": 3})]


def test_the_desk_trail_keeps_every_entry_in_order_like_the_file_trail(pg_url, ta_home):
    desk = resolve_config({"storage_url": pg_url})
    files = resolve_config({})
    for action, by, target, detail in ACTIONS:
        for cfg in (desk, files):
            storage.record_audit(cfg, action, by=by, target=target, **detail)
    assert isinstance(open_audit(desk), PgAudit) and isinstance(open_audit(files), FileAudit)
    on_desk, in_files = storage.read_audit(desk), storage.read_audit(files)
    strip = [{k: v for k, v in e.items() if k != "at"} for e in on_desk]
    assert strip == [{k: v for k, v in e.items() if k != "at"} for e in in_files]
    assert [(e["action"], e["by"]) for e in on_desk] == [(a, b) for a, b, _, _ in ACTIONS]
    assert on_desk[1]["detail"]["note"] == "'); DROP TABLE ta_audit; --"  # text travels as a parameter
    assert all(isinstance(e["at"], float) and e["at"] > 0 for e in on_desk)
    # another process (another machine of the desk) reads the same trail
    assert [e["action"] for e in PgAudit(url=pg_url).entries()] == [a for a, _, _, _ in ACTIONS]
