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
from tradingagents.storage.watchlists import checked, valid_name, valid_tickers


class PgWatchlists:
    """The watchlists of the desk database; see the module docstring."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self.url = url or storage_url(resolve_config(config))
        if not self.url:
            raise ValueError("PgWatchlists needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self._db = database(self.url)

    def list(self) -> dict[str, list[str]]:
        with self._db.transaction() as conn:
            return checked(conn.execute("SELECT name, tickers FROM ta_watchlists ORDER BY name").fetchall())

    def save(self, name: str, tickers: str | Iterable[str]) -> list[str]:
        name, names = valid_name(name), valid_tickers(tickers)
        with self._db.transaction() as conn:
            conn.execute("INSERT INTO ta_watchlists (name, tickers) VALUES (%s, %s::jsonb) ON CONFLICT (name) "
                         "DO UPDATE SET tickers = EXCLUDED.tickers, saved_at = now()", (name, json.dumps(names)))
        return names

    def delete(self, name: str) -> bool:
        name = valid_name(name)
        with self._db.transaction() as conn:
            return conn.execute("DELETE FROM ta_watchlists WHERE name = %s", (name,)).rowcount > 0

    def __repr__(self) -> str:
        return f"PgWatchlists(url={self._db.label!r})"
