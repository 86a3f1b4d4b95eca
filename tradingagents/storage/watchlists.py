"""Saved watchlists (named ticker lists) behind one interface: a JSON file or the desk database.

``open_watchlists(config)`` (in ``tradingagents.storage``) returns one of these; both have
``list()`` (name → tickers by name; entries that do not validate are left out),
``save(name, tickers)`` (save or replace; returns the validated tickers) and ``delete(name)``
(True when there was one). ``tradingagents.storage.list_watchlists`` / ``save_watchlist`` /
``delete_watchlist`` are those calls on the config's storage (the Watchlist page and ``batch @name``
use them).

Files: one JSON file at ``config["watchlists_path"]`` (default ``<home>/watchlists.json``),
``{"version": 1, "watchlists": {name: [tickers]}}``, rewritten whole with ``fileio.atomic_write``
under a file lock beside it (``watchlists.json.lock``), validated when read. The database keeps one
row a list in ``ta_watchlists`` (``pg_watchlists.PgWatchlists``), so every machine of the desk sees
the same watchlists.

A name is 1 to 60 letters, digits, spaces, dots, dashes or underscores; a list holds 1 to
``MAX_TICKERS`` valid tickers (what one batch runs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.fileio import atomic_write, remove_leftovers
from tradingagents.validation import validate_tickers

__all__ = ["FORMAT_VERSION", "MAX_TICKERS", "FileWatchlists", "checked", "valid_name", "valid_tickers"]

MAX_TICKERS = 200  # a watchlist is what one batch runs (tradingagents.batch takes the same limit)
FORMAT_VERSION = 1
LOCK_TIMEOUT_S = 10
_NAME = re.compile(r"^[\w .\-]{1,60}$")


def valid_name(name: object) -> str:
    text = str(name or "").strip()
    if not _NAME.match(text):
        raise ValidationError("A watchlist name is 1 to 60 letters, digits, spaces, dots, dashes or underscores.")
    return text


def valid_tickers(tickers: str | Iterable[str]) -> list[str]:
    """Tickers from "NVDA, AAPL msft" or a list (validated, upper-cased, at most MAX_TICKERS)."""
    return validate_tickers(tickers, limit=MAX_TICKERS, what="batch")


def checked(rows: Iterable[tuple[Any, Any]]) -> dict[str, list[str]]:
    """(name, tickers) pairs as stored → name → tickers, in their order; entries that do not validate are left out."""
    out: dict[str, list[str]] = {}
    for name, tickers in rows:
        try:
            out[valid_name(name)] = valid_tickers(tickers)
        except (ValidationError, TypeError):
            continue  # a hand-edited entry that does not validate is left out
    return out


class FileWatchlists:
    """The embedded default: one JSON file (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.path = Path(resolve_config(config)["watchlists_path"])

    def list(self) -> dict[str, list[str]]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.path} is not a readable watchlist file ({exc}); fix or remove it.") from None
        if not isinstance(doc, Mapping) or not isinstance(doc.get("watchlists") or {}, Mapping):
            return {}
        return checked((doc.get("watchlists") or {}).items())

    def save(self, name: str, tickers: str | Iterable[str]) -> list[str]:
        name, names = valid_name(name), valid_tickers(tickers)
        with self._lock():
            lists = self.list()
            lists[name] = names
            self._write(lists)
        return names

    def delete(self, name: str) -> bool:
        name = valid_name(name)
        with self._lock():
            lists = self.list()
            if name not in lists:
                return False
            del lists[name]
            self._write(lists)
        return True

    def _write(self, lists: Mapping[str, list[str]]) -> None:  # the lock held
        doc = {"version": FORMAT_VERSION, "watchlists": dict(sorted(lists.items()))}
        remove_leftovers(self.path)  # under the lock every temp file of ours is a killed writer's
        atomic_write(self.path, json.dumps(doc, indent=1))

    def _lock(self):
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S)

    def __repr__(self) -> str:
        return f"FileWatchlists(path={str(self.path)!r})"
