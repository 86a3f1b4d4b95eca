"""The desk's own documents (the book, the schedules, the scheduler's state and digests) and its claims.

``open_desk_docs(config)`` returns one of two stores with one interface:

* ``get(name)`` → the JSON document stored under ``name`` (None when there is none);
* ``update(name, fn)`` → ``fn(old or None)`` stored as the new document, read and written under one
  lock (a file lock, or the row's lock in the database), so two writers never lose each other's change;
* ``claim(key, doc)`` → True for the one caller that claims ``key`` first, False for every other, on
  this machine or another of the desk (the scheduler claims "job@due time" before it runs a job, so
  two schedulers never run a job twice); ``claimed(key)`` reads the claim's document, and
  ``takeover(key, old, new)`` replaces a claim that is still ``old`` (one caller wins: the scheduler takes
  over the claim of a run whose process died).

Files: ``<desk_dir>/<name>.json`` (default ``<home>/desk/``), rewritten whole with
``fileio.atomic_write`` under ``<name>.json.lock``; a claim is a file written (under one lock, only
when it is not there) in ``<desk_dir>/claims/``. The database: rows of ``ta_desk_docs`` and ``ta_desk_claims`` (made with the
rest of the schema, ``storage.pg.SCHEMA``). Names are checked (letters of any script, digits, ``_ - . @ : +``), so a
name never walks out of the folder.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.fileio import atomic_write, remove_leftovers
from tradingagents.storage.pg import database, storage_url

__all__ = ["FileDeskDocs", "PgDeskDocs", "open_desk_docs"]

LOCK_TIMEOUT_S = 30
_NAME = re.compile(r"^\w[\w.\-@:+]{0,159}$")


def _name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name) or ".." in name:
        raise ValidationError(f"{str(name)[:40]!r} is not a desk document name.")
    return name


def _file_name(key: str) -> str:
    """A claim key as a file name on every file system (':' and '+' are not safe everywhere)."""
    safe = re.sub(r"[^A-Za-z0-9_.\-@]", "_", key)
    return f"{safe[:80]}-{hashlib.sha256(key.encode()).hexdigest()[:12]}.json"


class FileDeskDocs:
    """The embedded default: JSON files under ``desk_dir`` (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.dir = Path(resolve_config(config)["desk_dir"])

    def _path(self, name: str) -> Path:
        return self.dir / f"{_name(name)}.json"

    def get(self, name: str) -> Any:
        path = self._path(name)
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path} is not readable JSON ({exc}); fix or remove it.") from None

    def update(self, name: str, fn: Callable[[Any], Any]) -> Any:
        from filelock import FileLock

        path = self._path(name)
        self.dir.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            new = fn(self.get(name))
            text = json.dumps(new, indent=1, sort_keys=True, allow_nan=False)
            remove_leftovers(path)
            atomic_write(path, text)
        return new

    def claim(self, key: str, doc: Mapping[str, Any] | None = None) -> bool:
        from filelock import FileLock

        folder = self.dir / "claims"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / _file_name(_name(key))
        with FileLock(str(folder / ".claims.lock"), timeout=LOCK_TIMEOUT_S):
            if path.exists():
                return False
            atomic_write(path, json.dumps({"key": key, **dict(doc or {})}, default=str))
        return True

    def takeover(self, key: str, old: Mapping[str, Any], doc: Mapping[str, Any]) -> bool:
        """Replace the claim of ``key`` by ``doc`` if it is still ``old`` (one caller wins)."""
        from filelock import FileLock

        folder = self.dir / "claims"
        path = folder / _file_name(_name(key))
        with FileLock(str(folder / ".claims.lock"), timeout=LOCK_TIMEOUT_S):
            if self.claimed(key) != dict(old):
                return False
            atomic_write(path, json.dumps({"key": key, **dict(doc)}, default=str))
        return True

    def claimed(self, key: str) -> dict[str, Any] | None:
        path = self.dir / "claims" / _file_name(_name(key))
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {"key": key}  # a claim torn by a killed writer is still a claim

    def __repr__(self) -> str:
        return f"FileDeskDocs(dir={str(self.dir)!r})"


class PgDeskDocs:
    """The desk database's documents and claims (``ta_desk_docs``, ``ta_desk_claims``)."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self.url = url or storage_url(resolve_config(config))
        if not self.url:
            raise ValueError("PgDeskDocs needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self._db = database(self.url)

    def get(self, name: str) -> Any:
        with self._db.transaction() as conn:
            row = conn.execute("SELECT doc FROM ta_desk_docs WHERE name = %s", (_name(name),)).fetchone()
        return None if row is None else row[0]

    def update(self, name: str, fn: Callable[[Any], Any]) -> Any:
        name = _name(name)
        with self._db.transaction() as conn:
            conn.execute("INSERT INTO ta_desk_docs (name, doc) VALUES (%s, 'null'::jsonb) ON CONFLICT (name) DO NOTHING",
                         (name,))
            row = conn.execute("SELECT doc FROM ta_desk_docs WHERE name = %s FOR UPDATE", (name,)).fetchone()
            new = fn(row[0] if row else None)
            conn.execute("UPDATE ta_desk_docs SET doc = %s::jsonb, saved_at = now() WHERE name = %s",
                         (json.dumps(new, allow_nan=False), name))
        return new

    def claim(self, key: str, doc: Mapping[str, Any] | None = None) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute("INSERT INTO ta_desk_claims (key, doc) VALUES (%s, %s::jsonb) ON CONFLICT (key) DO NOTHING",
                               (_name(key), json.dumps({"key": key, **dict(doc or {})}, default=str)))
            return cur.rowcount == 1

    def takeover(self, key: str, old: Mapping[str, Any], doc: Mapping[str, Any]) -> bool:
        with self._db.transaction() as conn:
            cur = conn.execute("UPDATE ta_desk_claims SET doc = %s::jsonb, claimed_at = now() WHERE key = %s AND doc = %s::jsonb",
                               (json.dumps({"key": key, **dict(doc)}, default=str), _name(key), json.dumps(dict(old))))
            return cur.rowcount == 1

    def claimed(self, key: str) -> dict[str, Any] | None:
        with self._db.transaction() as conn:
            row = conn.execute("SELECT doc FROM ta_desk_claims WHERE key = %s", (_name(key),)).fetchone()
        return None if row is None else row[0]

    def __repr__(self) -> str:
        return f"PgDeskDocs(url={self._db.label!r})"


def open_desk_docs(config: Mapping[str, Any] | None = None) -> FileDeskDocs | PgDeskDocs:
    cfg = resolve_config(config)
    if storage_url(cfg):
        return PgDeskDocs(cfg)
    return FileDeskDocs(cfg)
