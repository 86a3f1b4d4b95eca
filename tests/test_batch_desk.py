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


def test_watchlists_saved_by_the_earlier_code_are_read_and_bad_rows_left_out(pg_url, tmp_path):
    import psycopg

    from tradingagents.storage.pg_watchlists import PgWatchlists

    # the table as the earlier code made it on first use, with a list it saved and a hand-edited row
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE ta_watchlists (name text PRIMARY KEY, tickers jsonb NOT NULL, "
                     "saved_at timestamptz NOT NULL DEFAULT now())")
        conn.execute("INSERT INTO ta_watchlists (name, tickers) VALUES ('asia', '[\"0700.HK\", \"7203.T\"]'), "
                     "('bad', '[\"$$$\"]'), ('../x', '[\"NVDA\"]')")
    cfg = {"home": str(tmp_path), "storage_url": pg_url}
    lists = storage.open_watchlists(cfg)
    assert isinstance(lists, PgWatchlists) and repr(lists) == f"PgWatchlists(url={storage.redact_url(pg_url)!r})"
    assert storage.list_watchlists(cfg) == {"asia": ["0700.HK", "7203.T"]}
    assert storage.save_watchlist("asia", "7203.T", cfg) == ["7203.T"]
    assert storage.list_watchlists(cfg) == {"asia": ["7203.T"]}
    assert not storage.delete_watchlist("nope", cfg)
