"""Saved watchlists and batches in the desk's PostgreSQL database (a real throwaway server)."""

from __future__ import annotations

import tests.pg_server as _pg
from tradingagents import batch, storage

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures
DATE = "2024-05-10"


def test_two_homes_on_one_database_share_watchlists_and_batch_results(pg_url, tmp_path):
    a = {"home": str(tmp_path / "a"), "storage_url": pg_url}
    b = {"home": str(tmp_path / "b"), "storage_url": pg_url}
    storage.save_watchlist("morning", "NVDA,AAPL", a)
    storage.save_watchlist("morning", "NVDA,AAPL,MSFT", b)  # replaces, never duplicates
    assert storage.list_watchlists(a) == {"morning": ["NVDA", "AAPL", "MSFT"]}
    assert not (tmp_path / "a" / "watchlists.json").exists()  # in the database, not a file
    first = batch.run_batch("NVDA,AAPL", DATE, a)
    assert all(o.status == "done" for o in first), [o.error for o in first]
    # the other machine's batch reuses the runs saved in the database
    second = batch.run_batch("NVDA,AAPL,MSFT", DATE, b)
    assert [o.status for o in second] == ["reused", "reused", "done"]
    assert [o.rating for o in second[:2]] == [o.rating for o in first]
    assert storage.delete_watchlist("morning", b) and storage.list_watchlists(a) == {}
