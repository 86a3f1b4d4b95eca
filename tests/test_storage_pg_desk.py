"""The desk's documents on a desk database (a real PostgreSQL server on 127.0.0.1): the book, one claim
per key across connections, and a whole scheduled run whose state lives in the database."""

from __future__ import annotations

import datetime as dt
import threading

from tests import pg_server as _pg
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.storage.book import import_book_csv, load_book
from tradingagents.storage.desk import FileDeskDocs, PgDeskDocs, open_desk_docs

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures


def test_the_book_and_claims_live_in_the_desk_database(pg_url, ta_home):
    desk = resolve_config({"storage_url": pg_url})
    assert isinstance(open_desk_docs(desk), PgDeskDocs) and isinstance(open_desk_docs({}), FileDeskDocs)
    import_book_csv(desk, "b.csv", text="ticker,shares,cost_basis\nNVDA,10,100\n", cash=5000.0)
    assert load_book(desk).positions[0].ticker == "NVDA" and load_book({}) is None  # not in the files
    assert [e["action"] for e in storage.read_audit(desk)] == ["book_import"]
    # many claimers of one key at once: exactly one wins, on any connection
    wins: list[bool] = []
    threads = [threading.Thread(target=lambda: wins.append(PgDeskDocs(url=pg_url).claim("job@2024-05-13T06:30+00:00")))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(wins) == [False] * 7 + [True]
    assert PgDeskDocs(url=pg_url).claimed("job@2024-05-13T06:30+00:00")["key"] == "job@2024-05-13T06:30+00:00"
    # concurrent updates of one document lose nothing (the row is locked while it is rewritten)
    docs = PgDeskDocs(url=pg_url)
    adders = [threading.Thread(target=lambda: docs.update("counter", lambda old: (old or 0) + 1)) for _ in range(10)]
    for t in adders:
        t.start()
    for t in adders:
        t.join(60)
    assert docs.get("counter") == 10


def test_a_scheduled_run_on_the_desk_database(pg_url, ta_home, monkeypatch):
    from tradingagents.desk.scheduler import run_due
    from tradingagents.desk.schedules import add_schedule

    monkeypatch.setenv("TRADINGAGENTS_SELECTED_ANALYSTS", "market")
    desk = resolve_config({"storage_url": pg_url})
    storage.save_watchlist("morning", "NVDA", desk)
    add_schedule(desk, {"name": "morning", "watchlist": "@morning", "at": "07:30", "tz": "Europe/London"})
    monday = dt.datetime.fromisoformat("2024-05-13T07:31+01:00")
    (report,) = run_due(desk, monday)
    assert report.status == "ran" and report.session == "2024-05-10"
    assert storage.load_run(desk, "NVDA", "2024-05-10")["rating"]
    (again,) = run_due(desk, monday)
    assert again.status == "not_due"


def test_a_claim_is_taken_over_once(pg_url, ta_home):
    docs = PgDeskDocs(url=pg_url)
    assert docs.claim("job@x", {"pid": 1})
    old = docs.claimed("job@x")
    assert docs.takeover("job@x", old, {"pid": 2}) and not docs.takeover("job@x", old, {"pid": 3})
    assert docs.claimed("job@x")["pid"] == 2
