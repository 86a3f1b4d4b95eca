"""The app's runs to offer after a server restart: one small document per checkpoint thread.

When the app starts a checkpointed run it keeps the run's *public* settings (``public_config``: no
key, token or password) under the run's checkpoint thread id, so that a new server process can list
the interrupted runs and resume one ("Resume after a server restart"). A finished run's document is
deleted. Files (the embedded default): ``<app_runs_dir>/<thread_id>.json``, each rewritten
atomically (temp file, fsync, ``os.replace``). Desk database: one row of ``ta_app_runs`` per thread,
so every machine of the desk sees the same offers. Reached through ``tradingagents.storage``::

    save_app_run(config, doc)            # doc: {thread_id, ticker, date, analysts, config, …}
    load_app_runs(config)                # {thread_id: doc}
    app_run(config, thread_id)           # doc or None
    delete_app_run(config, thread_id)
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tradingagents.config import public_config, resolve_config
from tradingagents.storage.pg import database, storage_url
from tradingagents.validation import ValidationError

_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def _thread(thread_id: Any) -> str:
    tid = str(thread_id or "")
    if not _THREAD_ID.match(tid):
        raise ValidationError(f"{tid[:40]!r} is not a checkpoint thread id (letters, digits, '_' or '-').")
    return tid


def _public(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What is kept: the document with its settings made public (the one place that masks them)."""
    out = dict(doc)
    out["thread_id"] = _thread(out.get("thread_id"))
    if isinstance(out.get("config"), Mapping):
        out["config"] = public_config(out["config"])
    return out


def _folder(config: Mapping[str, Any] | None) -> Path:
    return Path(resolve_config(config)["app_runs_dir"])


def save_app_run(config: Mapping[str, Any] | None, doc: Mapping[str, Any]) -> None:
    """Keep (or replace) the document of ``doc["thread_id"]`` (OSError / StorageError on failure)."""
    kept = _public(doc)
    text = json.dumps(kept, default=str, ensure_ascii=False)
    url = storage_url(config)
    if url:
        with database(url).transaction() as conn:
            conn.execute("INSERT INTO ta_app_runs (thread_id, doc) VALUES (%s, %s::jsonb) ON CONFLICT (thread_id) "
                         "DO UPDATE SET doc = EXCLUDED.doc, saved_at = now()", (kept["thread_id"], text))
        return
    from tradingagents.fileio import atomic_write

    atomic_write(_folder(config) / f"{kept['thread_id']}.json", text.encode("utf-8"))


def _valid(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("config"), dict)


def load_app_runs(config: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Every kept document by thread id; an unreadable or damaged one is left out."""
    url = storage_url(config)
    if url:
        with database(url).transaction() as conn:
            rows = conn.execute("SELECT thread_id, doc FROM ta_app_runs ORDER BY saved_at DESC").fetchall()
        return {tid: doc for tid, doc in rows if _valid(doc)}
    out: dict[str, dict[str, Any]] = {}
    folder = _folder(config)
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.json")):
        if not _THREAD_ID.match(path.stem):
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _valid(doc):
            out[path.stem] = doc
    return out


def app_run(config: Mapping[str, Any] | None, thread_id: str) -> dict[str, Any] | None:
    """The document kept for ``thread_id``, or None."""
    tid = _thread(thread_id)
    url = storage_url(config)
    if url:
        with database(url).transaction() as conn:
            row = conn.execute("SELECT doc FROM ta_app_runs WHERE thread_id = %s", (tid,)).fetchone()
        return row[0] if row and _valid(row[0]) else None
    try:
        doc = json.loads((_folder(config) / f"{tid}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if _valid(doc) else None


def delete_app_run(config: Mapping[str, Any] | None, thread_id: str) -> None:
    """Forget the document of ``thread_id`` (nothing happens when there is none)."""
    tid = _thread(thread_id)
    url = storage_url(config)
    if url:
        with database(url).transaction() as conn:
            conn.execute("DELETE FROM ta_app_runs WHERE thread_id = %s", (tid,))
        return
    (_folder(config) / f"{tid}.json").unlink(missing_ok=True)
