"""The desk's audit trail: an append-only record of who did what (sign-ins, job starts, stops and
resumes, settlements, memory edits), behind one interface for both storages.

``record_audit(config, action, by=…, target=…, **detail)`` appends one entry; ``read_audit(config)``
returns them oldest first, each ``{"at": epoch seconds, "by": user, "action": …, "target": …,
"detail": {…}}``. Nothing ever rewrites or deletes an entry.

Files: one JSON object a line at ``config["audit_path"]`` (default ``<home>/audit.jsonl``),
appended under a file lock beside it (``audit.jsonl.lock``) and fsynced; a line that does not parse
(a torn write of a killed process) is skipped when read. The desk database keeps one row an entry
in ``ta_audit`` (made with the rest of the schema, ``storage.pg.SCHEMA``), so every machine of the
desk writes one trail.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.storage.pg import database, storage_url

__all__ = ["ACTIONS", "AUDIT_COLUMNS", "FileAudit", "PgAudit", "open_audit", "read_audit", "record_audit"]

ACTIONS = ("sign_in", "sign_out", "job_start", "job_stop", "job_resume", "job_delete", "settle",
           "memory_add", "memory_retire", "memory_restore", "memory_edit", "pm_decision", "ask", "pm_note")
"""The actions recorded (another action name is accepted too: the trail never refuses an entry)."""
AUDIT_COLUMNS = ("at", "by", "action", "target", "detail")
LOCK_TIMEOUT_S = 10


def _entry(action: str, by: str | None, target: str | None, detail: Mapping[str, Any],
           at: float | None = None) -> dict[str, Any]:
    return {"at": float(at if at is not None else time.time()), "by": str(by or "unknown"),
            "action": str(action), "target": str(target or ""),
            "detail": json.loads(json.dumps(dict(detail), default=str))}


class FileAudit:
    """The embedded default: ``<home>/audit.jsonl`` (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.path = Path(resolve_config(config)["audit_path"])

    def append(self, entry: Mapping[str, Any]) -> None:
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(dict(entry), ensure_ascii=False, sort_keys=True) + "\n"
        with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S):
            with open(self.path, "a+b") as fh:
                if fh.tell():  # a killed writer's torn last line: end it, so this entry is whole on its own line
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":
                        line = "\n" + line
                fh.write(line.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())

    def entries(self) -> list[dict[str, Any]]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        out = []
        for line in text.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a torn last line of a killed writer
            if isinstance(item, dict) and item.get("action"):
                out.append(_entry(item["action"], item.get("by"), item.get("target"),
                                  item.get("detail") or {}, item.get("at") or 0.0))
        return out

    def __repr__(self) -> str:
        return f"FileAudit(path={str(self.path)!r})"


class PgAudit:
    """The trail of the desk database: ``ta_audit``, one row an entry."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self.url = url or storage_url(resolve_config(config))
        if not self.url:
            raise ValueError("PgAudit needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self._db = database(self.url)

    def append(self, entry: Mapping[str, Any]) -> None:
        with self._db.transaction() as conn:
            conn.execute("INSERT INTO ta_audit (at, by_user, action, target, detail) VALUES (%s, %s, %s, %s, "
                         "%s::jsonb)", (entry["at"], entry["by"], entry["action"], entry["target"],
                                        json.dumps(entry["detail"])))

    def entries(self) -> list[dict[str, Any]]:
        with self._db.transaction() as conn:
            rows = conn.execute("SELECT at, by_user, action, target, detail FROM ta_audit ORDER BY id").fetchall()
        return [_entry(a, b, t, d if isinstance(d, dict) else json.loads(d or "{}"), at) for at, b, a, t, d in rows]

    def __repr__(self) -> str:
        return f"PgAudit(url={self._db.label!r})"


def open_audit(config: Mapping[str, Any] | None = None) -> FileAudit | PgAudit:
    return PgAudit(config) if storage_url(config) else FileAudit(config)


def default_user(config: Mapping[str, Any] | None = None) -> str:
    """``config["user"]`` (the app's signed-in e-mail, ``TRADINGAGENTS_USER``), else the OS user."""
    user = (config or {}).get("user") if config is not None else None
    if user:
        return str(user)
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name in this environment (a container without passwd entry)
        return "unknown"


def record_audit(config: Mapping[str, Any] | None, action: str, *, by: str | None = None, target: str | None = None,
                 **detail: Any) -> dict[str, Any]:
    """Append one entry (``by`` defaults to ``default_user(config)``); returns it."""
    entry = _entry(action, by or default_user(config), target, detail)
    open_audit(config).append(entry)
    return entry


def read_audit(config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    return open_audit(config).entries()
