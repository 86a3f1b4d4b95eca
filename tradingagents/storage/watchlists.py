"""Saved watchlists (named ticker lists) behind one interface: a JSON file or the desk database.

``open_watchlists(config)`` (in ``tradingagents.storage``) returns one of these; both have
``list()`` (name → tickers by name; entries that do not validate are left out),
``save(name, tickers, owner=, lead=)`` (save or replace; returns the validated tickers),
``delete(name, owner=, lead=)`` (True when there was one) and ``owners()`` (name → who saved it first).
Saving over or deleting a list is its owner's or a desk lead's (``tradingagents.ownership``, else
``NotAllowed``); a list saved before owners were kept is anyone's. ``tradingagents.storage.list_watchlists`` / ``save_watchlist`` /
``delete_watchlist`` are those calls on the config's storage (the Watchlist page and ``batch @name``
use them).

Files: one JSON file at ``config["watchlists_path"]`` (default ``<home>/watchlists.json``),
``{"version": 1, "watchlists": {name: [tickers]}, "owners": {name: owner}}``, rewritten whole with ``fileio.atomic_write``
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
from tradingagents.errors import ConfigError, NotAllowed, ValidationError
from tradingagents.fileio import atomic_write, remove_leftovers
from tradingagents.ownership import allowed
from tradingagents.validation import validate_tickers

__all__ = ["FORMAT_VERSION", "MAX_TICKERS", "FileWatchlists", "check_owner", "checked", "valid_name", "valid_tickers"]

MAX_TICKERS = 200  # a watchlist is what one batch runs (tradingagents.batch takes the same limit)
FORMAT_VERSION = 1
LOCK_TIMEOUT_S = 10
_NAME = re.compile(r"^[\w .\-]{1,60}$")


def valid_name(name: object) -> str:
    text = str(name or "").strip()
    if not _NAME.match(text):
        raise ValidationError("A watchlist name is 1 to 60 letters, digits, spaces, dots, dashes or underscores.")
    return text


Tickers = list[str]
"""A watchlist's tickers (the name the classes' annotations use: their method ``list`` hides the builtin)."""


def valid_tickers(tickers: str | Iterable[str]) -> list[str]:
    """Tickers from "NVDA, AAPL msft" or a list (validated, upper-cased, at most MAX_TICKERS)."""
    return validate_tickers(tickers, limit=MAX_TICKERS, what="batch")


def check_owner(action: str, name: str, existing: str | None, owner: str | None, lead: bool) -> None:
    """``NotAllowed`` unless the ownership table lets ``owner`` save over or delete the list ``name``."""
    if existing is not None and not allowed(action, who=owner, owner=existing, lead=lead):
        who = existing.split(" · ", 1)[0] if " · " in existing else "another browser"
        raise NotAllowed(f"The watchlist {name!r} was saved by {who}: only they or a desk lead can change or "
                         "delete it. Save yours under another name.")


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

    def _doc(self) -> Mapping[str, Any]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{self.path} is not a readable watchlist file ({exc}); fix or remove it.") from None
        return doc if isinstance(doc, Mapping) else {}

    def list(self) -> dict[str, Tickers]:
        doc = self._doc()
        if not isinstance(doc.get("watchlists") or {}, Mapping):
            return {}
        return checked((doc.get("watchlists") or {}).items())

    def owners(self) -> dict[str, str]:
        owners = self._doc().get("owners") or {}
        return {str(k): str(v) for k, v in owners.items() if isinstance(v, str)} if isinstance(owners, Mapping) else {}

    def save(self, name: str, tickers: str | Iterable[str], *, owner: str | None = None, lead: bool = False) -> Tickers:
        name, names = valid_name(name), valid_tickers(tickers)
        with self._lock():
            lists, owners = self.list(), self.owners()
            if name in lists:
                check_owner("save_watchlist", name, owners.get(name), owner, lead)
            elif owner is not None:
                owners[name] = owner
            lists[name] = names
            self._write(lists, owners)
        return names

    def delete(self, name: str, *, owner: str | None = None, lead: bool = False) -> bool:
        name = valid_name(name)
        with self._lock():
            lists, owners = self.list(), self.owners()
            if name not in lists:
                return False
            check_owner("delete_watchlist", name, owners.get(name), owner, lead)
            del lists[name]
            owners.pop(name, None)
            self._write(lists, owners)
        return True

    def _write(self, lists: Mapping[str, Tickers], owners: Mapping[str, str]) -> None:  # the lock held
        doc: dict[str, Any] = {"version": FORMAT_VERSION, "watchlists": dict(sorted(lists.items()))}
        kept = {k: v for k, v in sorted(owners.items()) if k in lists}
        if kept:  # a file without owners keeps the format it always had
            doc["owners"] = kept
        remove_leftovers(self.path)  # under the lock every temp file of ours is a killed writer's
        atomic_write(self.path, json.dumps(doc, indent=1))

    def _lock(self):
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S)

    def __repr__(self) -> str:
        return f"FileWatchlists(path={str(self.path)!r})"
