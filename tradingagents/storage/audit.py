"""The desk's audit trail: an append-only, tamper-evident record of who did what (sign-ins, job starts,
stops and resumes, settlements, memory edits; the app's and the command line's), behind one interface
for both storages.

``record_audit(config, action, by=…, target=…, **detail)`` appends one entry; ``read_audit(config)``
returns them oldest first, each ``{"at": epoch seconds, "by": user, "action": …, "target": …,
"detail": {…}}``; ``verify_audit(config)`` checks the chain (``AuditCheck``). Nothing ever rewrites or
deletes an entry.

The chain: every entry carries ``prev``, the hash of the entry before it ("" for the first), and
``hash``, the SHA-256 of its canonical text (``canonical``: the sorted JSON of at, by, action,
target, detail and prev, every non-ASCII character escaped). An entry changed, removed or
inserted anywhere breaks the hash of that entry or the ``prev`` of the next: ``verify_audit`` names the
first that does not hold. Entries written before the chain existed (no hash) are counted, not checked.

Files: one JSON object a line at ``config["audit_path"]`` (default ``<home>/audit.jsonl``), ASCII only
(so a U+2028, U+2029 or U+0085 in a field is an escape, never a line break: lines are split on "\n"
only), appended under a file lock beside it (``audit.jsonl.lock``), which also makes reading the
previous hash and appending one step, and fsynced; a line that does not parse (a torn write of a
killed process) is skipped when read. A process parses and checks each line once (``_Trail``): a later read
takes the lines appended since, after comparing the bytes it read before with their BLAKE2b digest, so an
edit anywhere in them has the file read and checked again from its start. The desk database keeps one row an entry in ``ta_audit`` (made
with the rest of the schema, ``storage.pg.SCHEMA``) with its canonical text and hashes; appenders
take turns under an advisory lock, and triggers refuse UPDATE, DELETE and TRUNCATE for every login. A
process reads the rows after the last one it read, once the server's MD5 of the rows read before (each row
as one text) matches the one it kept; one who switches the triggers off to change a row has the trail read
and checked again from its first row. ``read_checked_audit`` gives the entries and the check of one read.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.i18n import N_
from tradingagents.storage.pg import database, pg_storable, storage_url
from tradingagents.storage.protocols import AuditTrail

__all__ = ["ACTIONS", "AUDIT_COLUMNS", "AuditCheck", "FileAudit", "PgAudit", "canonical", "open_audit", "read_audit",
           "read_checked_audit", "record_audit", "verify_audit"]

ACTIONS = ("sign_in", "sign_out", "job_start", "job_stop", "job_resume", "job_delete", "settle",
           "memory_add", "memory_retire", "memory_restore", "memory_edit", "pm_decision", "ask", "pm_note",
           "watchlist_save", "watchlist_delete")
"""The actions recorded (another action name is accepted too: the trail never refuses an entry)."""
AUDIT_COLUMNS = ("at", "by", "action", "target", "detail")
LOCK_TIMEOUT_S = 10


def _entry(action: str, by: str | None, target: str | None, detail: Mapping[str, Any],
           at: float | None = None, *, stored: bool = False) -> dict[str, Any]:
    """An entry's fields, made storable. ``stored``: read back from a trail, whose detail is JSON already (the
    round trip through JSON that turns a new entry's values into JSON ones is skipped)."""
    return {"at": float(at if at is not None else time.time()), "by": pg_storable(str(by or "unknown")),
            "action": pg_storable(str(action)), "target": pg_storable(str(target or "")),
            "detail": pg_storable(dict(detail) if stored else json.loads(json.dumps(dict(detail), default=str)))}


def canonical(entry: Mapping[str, Any], prev: str) -> str:
    """The text an entry's hash is taken of: its fields and the previous entry's hash, sorted, ASCII."""
    doc = {k: entry[k] for k in AUDIT_COLUMNS}
    doc["prev"] = prev
    return json.dumps(doc, sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


@dataclass(frozen=True)
class AuditCheck:
    """What ``verify_audit`` found: ``ok`` when every chained entry holds; ``entries`` read, ``chained``
    of them checked (the rest predate the chain), ``broken_at`` the 1-based number of the first entry
    that does not hold and ``problem`` why (None when ok)."""

    ok: bool
    entries: int
    chained: int
    broken_at: int | None = None
    problem: str | None = None
    reason: str | None = None  # a key of ``BREAKS``: translate ``BREAKS[reason]`` where it is shown


BREAKS = {
    "unhashed": N_("this entry has no hash, after chained ones: it was added or changed outside the app"),
    "fields": N_("this entry's fields differ from the text its hash was taken of: it was changed after it was "
                 "written"),
    "hash": N_("this entry's hash does not match its content: it was changed after it was written"),
    "order": N_("this entry does not follow the one before it: an entry before it was removed, inserted or changed"),
}
"""Why a chain breaks (``AuditCheck.reason``), in English; the Audit page shows them in the reader's language."""


def _same(body: str, entry: Mapping[str, Any], prev: str) -> bool:
    """Whether the stored columns say what the hashed text says (numbers compared as numbers: the database
    may write 1e+20 as 100000000000000000000)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("prev") == prev and all(doc.get(k) == entry[k] for k in AUDIT_COLUMNS)


class _Chain:
    """The chain check, fed one entry at a time (so a trail read before is checked only from where it ended)."""

    def __init__(self) -> None:
        self.entries = 0
        self.chained = 0
        self.last = ""
        self.started = False
        self.broken: tuple[int, str] | None = None  # (1-based entry, reason) of the first that does not hold

    def feed(self, entry: dict[str, Any], prev: str, digest: str, body: str | None) -> None:
        """One entry: its fields as stored, its prev, its hash and its stored canonical text (None: rebuild it
        from the fields). The first chained entry may follow unchained (older) ones."""
        self.entries += 1
        if self.broken is not None:
            return
        if not digest:
            if self.started:
                self.broken = (self.entries, "unhashed")
            return
        text = canonical(entry, prev) if body is None else body
        if body is not None and not _same(body, entry, prev):
            self.broken = (self.entries, "fields")
        elif _hash(text) != digest:
            self.broken = (self.entries, "hash")
        elif prev != self.last and (self.started or prev):
            self.broken = (self.entries, "order")
        else:
            self.started = True
            self.last = digest
            self.chained += 1

    def result(self) -> AuditCheck:
        if self.broken is None:
            return AuditCheck(True, self.entries, self.chained)
        at, reason = self.broken
        return AuditCheck(False, self.entries, self.chained, at, BREAKS[reason], reason)


def _parse(raw: bytes) -> dict[str, Any] | None:
    """One line of the file trail as its object, or None (blank, or torn by a killed writer)."""
    raw = raw.strip(b"\r ")
    if not raw:
        return None
    try:
        item = json.loads(raw.decode("utf-8"))
    except ValueError:
        return None
    return item if isinstance(item, dict) and item.get("action") else None


class _Trail:
    """What this process has read of one trail: a file's whole lines up to byte ``size`` (``digest``: their
    BLAKE2b), or the desk database's rows up to id ``size`` (``md5``: of their texts, as ``PgAudit`` has the
    server make them), as ``entries`` (``entries()``'s) and as the chain check fed to their end."""

    def __init__(self) -> None:
        self.size = 0
        self.digest = hashlib.blake2b().digest()
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.entries: list[dict[str, Any]] = []
        self.chain = _Chain()

    def add(self, item: Mapping[str, Any], prev: str, digest: str, body: str | None) -> None:
        """One entry: its fields as stored (at, by, action, target, detail), its chain fields."""
        self.entries.append(_entry(item["action"], item.get("by"), item.get("target"), item.get("detail") or {},
                                   item.get("at") or 0.0, stored=True))
        self.chain.feed({k: item.get(k) for k in AUDIT_COLUMNS}, prev, digest, body)

    def feed(self, lines: bytes) -> None:
        """Lines of the file (a blank or torn one is skipped)."""
        for item in (_parse(raw) for raw in lines.split(b"\n")):
            if item is not None:
                self.add(item, str(item.get("prev") or ""), str(item.get("hash") or ""), None)


# the trails read by this process (the Audit page reads the whole trail on every rerun: 0.7 s at 20,000 entries),
# by path or database, the last TRAIL_FILES; a trail of more than TRAIL_BUDGET entries is not kept (in memory)
_TRAILS: dict[str, _Trail] = {}
_TRAILS_LOCK = threading.Lock()
TRAIL_FILES = 4
TRAIL_BUDGET = 200_000


def _taken(key: str) -> _Trail | None:
    """The trail kept under ``key``, taken out (a concurrent read of the same trail starts afresh)."""
    with _TRAILS_LOCK:
        return _TRAILS.pop(key, None)


def _kept(key: str, trail: _Trail) -> None:
    if len(trail.entries) <= TRAIL_BUDGET:
        with _TRAILS_LOCK:
            _TRAILS[key] = trail
            while len(_TRAILS) > TRAIL_FILES:
                del _TRAILS[next(iter(_TRAILS))]


def _copies(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entries to hand out (what is kept for the next read is not): each and its detail copied."""
    return [{**e, "detail": dict(e["detail"])} for e in entries]


class FileAudit:
    """The embedded default: ``<home>/audit.jsonl`` (see the module docstring)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.path = Path(resolve_config(config)["audit_path"])

    def append(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Append ``entry`` chained to the last one (read under the same lock); returns it with prev and hash."""
        from filelock import FileLock

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S):
            with open(self.path, "a+b") as fh:
                prev = self._last_hash(fh)
                text = canonical(entry, prev)
                chained = {**{k: entry[k] for k in AUDIT_COLUMNS}, "prev": prev, "hash": _hash(text)}
                line = json.dumps(chained, sort_keys=True, ensure_ascii=True, allow_nan=False) + "\n"
                fh.seek(0, os.SEEK_END)
                if fh.tell():  # a killed writer's torn last line: end it, so this entry is whole on its own line
                    fh.seek(-1, os.SEEK_END)
                    if fh.read(1) != b"\n":
                        line = "\n" + line
                fh.seek(0, os.SEEK_END)
                fh.write(line.encode("ascii"))
                fh.flush()
                os.fsync(fh.fileno())
        return chained

    @staticmethod
    def _last_hash(fh: Any) -> str:
        """The hash of the file's last whole entry ("" when none has one), read from its end."""
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        block = 1 << 16
        tail = b""
        pos = end
        while pos > 0:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            tail = fh.read(step) + tail
            lines = tail.split(b"\n")
            for raw in reversed(lines[1:] if pos > 0 else lines):
                item = _parse(raw)
                if item is not None:
                    return str(item.get("hash") or "")
        return ""

    def _read(self) -> tuple[list[dict[str, Any]], AuditCheck]:
        """The trail's entries (copies) and its chain check. The file is read whole each time, but parsed and checked only
        from where this process last read it (``_Trail``): the bytes read before are first compared with what
        they were (their BLAKE2b), and a change anywhere in them has the file read again from its start."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        end = data.rfind(b"\n") + 1  # whole lines are kept; a line still being written is read but not kept
        view = memoryview(data)
        key = str(self.path)
        trail = _taken(key)
        seen = hashlib.blake2b()
        if trail is not None and trail.size <= end:
            seen.update(view[:trail.size])
        if trail is None or trail.size > end or seen.digest() != trail.digest:
            trail, seen = _Trail(), hashlib.blake2b()
        if end > trail.size:
            trail.feed(data[trail.size:end])
            seen.update(view[trail.size:end])
            trail.size, trail.digest = end, seen.digest()
        entries = _copies(trail.entries)
        chain = copy.copy(trail.chain)  # what the trail says now: it is kept, and another read may go on with it
        _kept(key, trail)
        if end < len(data):  # a last line with no line break yet (a hand-edited file's, or one being written)
            last = _Trail()
            last.chain = chain
            last.feed(data[end:])
            entries += _copies(last.entries)
        return entries, chain.result()

    def entries(self) -> list[dict[str, Any]]:
        return self._read()[0]

    def verify(self) -> AuditCheck:
        return self._read()[1]

    def entries_checked(self) -> tuple[list[dict[str, Any]], AuditCheck]:
        """The entries and the check of the chain they are, from one read (the Audit page's)."""
        return self._read()

    def __repr__(self) -> str:
        return f"FileAudit(path={str(self.path)!r})"


class PgAudit:
    """The trail of the desk database: ``ta_audit``, one row an entry."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self.url = url or storage_url(resolve_config(config))
        if not self.url:
            raise ValueError("PgAudit needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self._db = database(self.url)

    def append(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        """Append ``entry`` chained to the last row: appenders take turns (an advisory lock held to the commit)."""
        from tradingagents.storage.pg import LOCK_AUDIT, LOCK_NAMESPACE

        with self._db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_NAMESPACE, LOCK_AUDIT))
            row = conn.execute("SELECT entry_hash FROM ta_audit ORDER BY id DESC LIMIT 1").fetchone()
            prev = str(row[0] or "") if row else ""
            text = canonical(entry, prev)
            digest = _hash(text)
            conn.execute("INSERT INTO ta_audit (at, by_user, action, target, detail, body, prev_hash, entry_hash) "
                         "VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s, %s)",
                         (entry["at"], entry["by"], entry["action"], entry["target"], json.dumps(entry["detail"]),
                          text, prev, digest))
        return {**{k: entry[k] for k in AUDIT_COLUMNS}, "prev": prev, "hash": digest}

    # a row as one text, made by the server both when it is read and when the rows read before are checked
    _TEXT = "concat_ws(chr(31), id, at, by_user, action, target, detail::text, body, prev_hash, entry_hash)"

    def _read(self) -> tuple[list[dict[str, Any]], AuditCheck]:
        """The trail's entries (copies) and its chain check, with the rows added since this process last read it: the rows read before
        are first checked unchanged (the MD5 of their texts, which the server computes over them, against the one
        kept), and read again from the first when they are not."""
        key = f"pg:{self.url}"
        trail = _taken(key)
        with self._db.transaction() as conn:
            if trail is not None:
                row = conn.execute(f"SELECT md5(convert_to(coalesce(string_agg({self._TEXT}, chr(30) ORDER BY id), "
                                   "''), 'UTF8')) FROM ta_audit WHERE id <= %s", (trail.size,)).fetchone()
                if row is None or row[0] != trail.md5.hexdigest():
                    trail = None
            trail = trail or _Trail()
            rows = conn.execute("SELECT id, at, by_user, action, target, detail, body, prev_hash, entry_hash, "
                                f"{self._TEXT} FROM ta_audit WHERE id > %s ORDER BY id", (trail.size,)).fetchall()
        for rid, at, b, a, t, d, body, prev, digest, text in rows:
            trail.add({"at": at, "by": b, "action": a, "target": t,
                       "detail": d if isinstance(d, dict) else json.loads(d or "{}")},
                      str(prev or ""), str(digest or ""), body if digest else None)
            trail.md5.update((b"\x1e" if trail.size else b"") + text.encode("utf-8"))
            trail.size = rid
        out = _copies(trail.entries), trail.chain.result()
        _kept(key, trail)
        return out

    def entries(self) -> list[dict[str, Any]]:
        return self._read()[0]

    def verify(self) -> AuditCheck:
        return self._read()[1]

    def entries_checked(self) -> tuple[list[dict[str, Any]], AuditCheck]:
        """The entries and the check of the chain they are, from one read (the Audit page's)."""
        return self._read()

    def __repr__(self) -> str:
        return f"PgAudit(url={self._db.label!r})"


BACKENDS: tuple[type[AuditTrail], ...] = (FileAudit, PgAudit)  # mypy checks both against the protocol


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


def record_command(config: Mapping[str, Any] | None, action: str, target: str, **detail: Any) -> None:
    """The command line's entry (``via: cli``; ``by``: ``TRADINGAGENTS_USER`` or the OS user), as the app
    records its own. A trail that cannot be written is said on stderr; the command goes on."""
    import sys

    try:
        record_audit(config, action, target=target, via="cli", **detail)
    except Exception as exc:  # noqa: BLE001 - the action happens; say that its record did not
        print(f"The audit trail could not record {action}: {exc}", file=sys.stderr)


def read_audit(config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    return open_audit(config).entries()


def verify_audit(config: Mapping[str, Any] | None = None) -> AuditCheck:
    """Check the trail's hash chain (see the module docstring): ``AuditCheck``."""
    return open_audit(config).verify()


def read_checked_audit(config: Mapping[str, Any] | None = None) -> tuple[list[dict[str, Any]], AuditCheck]:
    """``read_audit`` and ``verify_audit`` of the same read of the trail."""
    return open_audit(config).entries_checked()
