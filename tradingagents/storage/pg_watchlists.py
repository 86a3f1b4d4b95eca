"""Saved watchlists in the desk database, behind ``FileWatchlists``' interface.

One row a list in ``ta_watchlists`` (name, tickers as a JSON array, saved_at), made with the rest
of the schema (``storage.pg.SCHEMA``); saving a name again replaces its row. Names and tickers are
validated exactly as for the file (``storage.watchlists``), on the way in and on the way out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.storage.pg import database, storage_url
from tradingagents.storage.watchlists import Tickers, check_owner, checked, valid_name, valid_tickers


class PgWatchlists:
    """The watchlists of the desk database; see the module docstring."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self.url = url or storage_url(resolve_config(config))
        if not self.url:
            raise ValueError("PgWatchlists needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self._db = database(self.url)

    def list(self) -> dict[str, Tickers]:
        with self._db.transaction() as conn:
            return checked(conn.execute("SELECT name, tickers FROM ta_watchlists ORDER BY name").fetchall())

    def owners(self) -> dict[str, str]:
        with self._db.transaction() as conn:
            return {n: o for n, o in conn.execute("SELECT name, owner FROM ta_watchlists WHERE owner IS NOT NULL")}

    def save(self, name: str, tickers: str | Iterable[str], *, owner: str | None = None, lead: bool = False) -> Tickers:
        name, names = valid_name(name), valid_tickers(tickers)
        with self._db.transaction() as conn:
            row = conn.execute("SELECT owner FROM ta_watchlists WHERE name = %s FOR UPDATE", (name,)).fetchone()
            if row is not None:
                check_owner("save_watchlist", name, row[0], owner, lead)
            conn.execute("INSERT INTO ta_watchlists (name, tickers, owner) VALUES (%s, %s::jsonb, %s) ON CONFLICT "
                         "(name) DO UPDATE SET tickers = EXCLUDED.tickers, saved_at = now()",
                         (name, json.dumps(names), owner))
        return names

    def delete(self, name: str, *, owner: str | None = None, lead: bool = False) -> bool:
        name = valid_name(name)
        with self._db.transaction() as conn:
            row = conn.execute("SELECT owner FROM ta_watchlists WHERE name = %s FOR UPDATE", (name,)).fetchone()
            if row is None:
                return False
            check_owner("delete_watchlist", name, row[0], owner, lead)
            return conn.execute("DELETE FROM ta_watchlists WHERE name = %s", (name,)).rowcount > 0

    def __repr__(self) -> str:
        return f"PgWatchlists(url={self._db.label!r})"
