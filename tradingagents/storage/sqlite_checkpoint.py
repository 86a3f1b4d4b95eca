"""Per-ticker SQLite checkpoints, so an interrupted run resumes from its last finished node.

One database per ticker, ``<checkpoint_dir>/<TICKER>.sqlite`` (the ticker made safe for a path),
used through LangGraph's ``SqliteSaver`` on a connection opened with ``check_same_thread=False``
and a 30 s busy timeout, in WAL mode. The thread id folds in the run's signature (selected
analysts, debate and risk rounds, asset type, analyst execution), so a changed graph never
resumes an old checkpoint::

    sig = run_signature(["market", "news"], 1, 1, "stock")
    tid = thread_id("NVDA", "2024-05-10", sig)
    with get_checkpointer(config, "NVDA") as saver:
        graph = workflow.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": tid}}
        if has_checkpoint(config, "NVDA", tid):
            graph.invoke(None, cfg, durability="sync")      # resume
        else:
            graph.invoke(initial_state, cfg, durability="sync")
    clear_checkpoint(config, "NVDA", tid)

Each saver holds a connection of its own: no two savers ever share one. SQLite's locking with the
busy timeout makes two threads (two dates of one ticker) safe on one database file, and one saver
object is itself safe across threads (SqliteSaver serialises on a lock).

A closed saver's connection is kept open for the next use of the same file (``_IdleConnections``,
a few per process): opening, checking and setting up a database, and the WAL checkpoint with its
fsync that SQLite runs when the last connection closes, cost more than everything a run's
checkpoints write. A kept connection is handed out again only while the file (and its WAL) is as
that connection left it: a file replaced, moved aside, truncated or written by anyone else is
opened and checked afresh. The kept connections close at exit (and are never used in a forked child).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from langgraph.checkpoint.sqlite import SqliteSaver

from tradingagents.config import resolve_config
from tradingagents.storage.checkpoint_rows import checkpoint_row, step_of, thread_config
from tradingagents.validation import safe_path_component

DB_SUFFIX = ".sqlite"
BUSY_TIMEOUT_S = 30.0
CORRUPT_MARK = ".corrupt-"
COMPACT_MIN_BYTES = 1 << 20  # free space that makes clearing a thread VACUUM the database

log = logging.getLogger(__name__)

# the columns LangGraph's SqliteSaver reads and writes (``writes.task_path`` it adds itself)
_COLUMNS = {
    "checkpoints": {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint",
                    "metadata"},
    "writes": {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "type", "value"},
}


class _Damaged(sqlite3.DatabaseError):
    """The file opens but is not a checkpoint database we can use (wrong schema, failed check)."""


def _is_damaged(exc: BaseException) -> bool:
    """A database error that retrying cannot fix: garbage, truncation, a foreign schema."""
    if isinstance(exc, _Damaged):
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    text = str(exc).lower()
    return any(w in text for w in ("not a database", "malformed", "file is encrypted", "no such column",
                                   "has no column"))


def _check_database(conn: sqlite3.Connection) -> None:
    """Raise ``_Damaged`` unless the database passes SQLite's quick check and has our tables' columns."""
    row = conn.execute("PRAGMA quick_check(1)").fetchone()
    if not row or str(row[0]).lower() != "ok":
        raise _Damaged(f"integrity check failed: {row[0] if row else 'no answer'}")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    for table, needed in _COLUMNS.items():
        if table in tables:
            have = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
            missing = needed - have
            if missing:
                raise _Damaged(f"table {table} lacks the columns {', '.join(sorted(missing))}")


def move_aside(path: Path, reason: object) -> Path | None:
    """Rename a damaged database (and its -wal/-shm) to ``<name>.corrupt-<UTC timestamp>``; log it.

    Returns the new path, or None when the file was already gone (another run moved it first).
    """
    _IDLE.discard(path)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}{CORRUPT_MARK}{stamp}-{n}")
    try:
        os.replace(path, target)
    except FileNotFoundError:
        return None
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        try:
            os.replace(side, Path(str(target) + suffix))
        except FileNotFoundError:
            pass
    log.warning("The checkpoint database %s was damaged (%s); moved it aside to %s and starting fresh.",
                path, reason, target.name)
    return target


def run_signature(
    selected_analysts: Iterable[str],
    max_debate_rounds: int,
    max_risk_discuss_rounds: int,
    asset_type: str = "stock",
    analyst_execution: str | None = None,
) -> str:
    """A readable string that changes whenever the shape of the graph changes (``analyst_execution``
    None: the config's default, by the config's one rule for that key)."""
    from tradingagents.config import check_execution

    analyst_execution = check_execution(analyst_execution)
    analysts = ",".join(str(a).strip().lower() for a in selected_analysts)
    return (
        f"analysts={analysts}|debate={int(max_debate_rounds)}|risk={int(max_risk_discuss_rounds)}"
        f"|asset={str(asset_type).strip().lower()}|exec={str(analyst_execution).strip().lower()}"
    )


def thread_id(ticker: str, trade_date: str, signature: str) -> str:
    """``sha256(f"{TICKER}:{date}:{signature}")[:16]`` (ticker upper-cased).

    The ticker and date arrive validated (``TradingAgentsGraph.propagate`` / ``.thread_id`` check
    them once, at the edge); nothing here builds a path from them.
    """
    return hashlib.sha256(f"{str(ticker).strip().upper()}:{trade_date}:{signature}".encode()).hexdigest()[:16]


def checkpoint_path(config: Mapping[str, Any] | None, ticker: str) -> Path:
    """The database file of a ticker (inside ``checkpoint_dir``, whatever the ticker)."""
    cfg = resolve_config(config)
    return Path(cfg["checkpoint_dir"]) / f"{safe_path_component(ticker)}{DB_SUFFIX}"


def _connect(path: Path) -> sqlite3.Connection:
    return _open(path)[0]


def _open(path: Path) -> tuple[sqlite3.Connection, bool]:
    """``(connection, fresh)``: ``fresh`` when the file was new, so ``_prepare`` made its tables."""
    fresh = not path.exists()
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_S)
    try:
        _prepare(conn, fresh=fresh)
    except BaseException:
        conn.close()
        raise
    return conn, fresh


def _prepare(conn: sqlite3.Connection, *, fresh: bool = False) -> None:
    # Switching a new database to WAL needs an exclusive lock and SQLite answers "database is
    # locked" at once, without its busy handler, when another connection (two runs of one ticker
    # starting together) is doing the same: retry with a short backoff up to the busy timeout.
    # A file this connection has just created holds nothing yet: its switch to WAL needs no fsync (a
    # header torn by a power cut is a damaged database, moved aside by the next run). 0.8 ms a new file.
    if fresh:
        conn.execute("PRAGMA synchronous=OFF")
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
    if fresh:
        # its empty tables too: created under synchronous=NORMAL they cost ~3 ms of syncs, for a file
        # that holds nothing a power cut could lose (its first checkpoint is written under NORMAL)
        SqliteSaver(conn).setup()
    conn.execute("PRAGMA synchronous=NORMAL")


def _file_state(path: Path) -> tuple | None:
    """What a kept connection must find unchanged to be used again: the database file's and its WAL's
    device, inode, size and modification time (None when the database file is gone)."""
    out: list = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(str(path) + suffix)
        except FileNotFoundError:
            if not suffix:
                return None
            out.append(None)
            continue
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


class _Kept:
    """A connection handed back: its WAL is written back into the file by a thread (``tidy``), which
    then records the file's state (None: the connection is not fit to lend)."""

    __slots__ = ("conn", "state", "tidy")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.state: tuple | None = None
        self.tidy: threading.Thread | None = None

    def wait(self) -> None:
        if self.tidy is not None and self.tidy is not threading.current_thread():
            self.tidy.join()

    def write_back(self, path: Path) -> None:
        # every frame of the WAL written back into the file first: a kept connection that is later closed
        # because the file changed (garbage written over it, say) then has nothing left to write into it
        try:
            busy, frames, written = self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        except sqlite3.Error:
            return
        if not busy and frames == written:
            self.state = _file_state(path)


class _IdleConnections:
    """Connections of closed savers, kept open for the next saver of the same file (see the module
    docstring). Each is lent to one saver at a time; at most ``MAX`` are kept, the oldest closed first.
    A connection being written back is already in the table: whoever asks for its file meanwhile
    waits for it, so no second connection opens the file while it is busy."""

    MAX = 4

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: OrderedDict[str, _Kept] = OrderedDict()
        self._pid = os.getpid()

    def take(self, path: Path) -> sqlite3.Connection | None:
        """The kept connection of ``path`` when the file is as it left it, else None (it is closed)."""
        with self._lock:
            if self._pid != os.getpid():
                return None
            kept = self._idle.pop(str(path), None)
        if kept is None:
            return None
        kept.wait()
        if kept.state is not None and _file_state(path) == kept.state:
            return kept.conn
        _close_quietly(kept.conn)
        return None

    def give(self, path: Path, conn: sqlite3.Connection) -> None:
        """Keep ``conn`` for the next saver of ``path`` (closed instead when it cannot be kept). Its
        write-back runs off the caller's path, in a thread: it costs an fsync."""
        if conn.in_transaction or self._pid != os.getpid():
            _close_quietly(conn)
            return
        kept = _Kept(conn)
        kept.tidy = threading.Thread(target=kept.write_back, args=(path,), name="checkpoint-keep", daemon=True)
        evicted: list[_Kept] = []
        with self._lock:
            old = self._idle.pop(str(path), None)
            if old is not None:
                evicted.append(old)
            self._idle[str(path)] = kept
            while len(self._idle) > self.MAX:
                evicted.append(self._idle.popitem(last=False)[1])
            kept.tidy.start()
        if evicted:  # closing the last connection of a file checkpoints its WAL: off the caller's path too
            threading.Thread(target=_close_kept, args=(evicted,), name="checkpoint-close", daemon=True).start()

    def discard(self, path: Path) -> None:
        """Close the kept connection of ``path`` (before the file is moved, removed or replaced)."""
        with self._lock:
            kept = self._idle.pop(str(path), None)
        if kept is not None:
            _close_kept([kept])

    def settle(self) -> None:
        """Wait until every connection handed back is written back (tests; the end of a process)."""
        with self._lock:
            kept = list(self._idle.values())
        for k in kept:
            k.wait()

    def close_all(self) -> None:
        with self._lock:
            kept = list(self._idle.values()) if self._pid == os.getpid() else []
            self._idle.clear()
        _close_kept(kept)

    def forget_after_fork(self) -> None:
        # a child must neither use nor close its parent's connections (closing one checkpoints the WAL
        # under the parent's feet): they are dropped without being closed, and kept from being freed
        # (the parent's lock may have been held by a thread the child does not have: never taken here)
        self._lock = threading.Lock()
        _ORPHANS.extend(k.conn for k in self._idle.values())
        self._idle = OrderedDict()
        self._pid = os.getpid()


def _close_kept(kept: list[_Kept]) -> None:
    for k in kept:
        k.wait()
        _close_quietly(k.conn)


def _close_quietly(conn: sqlite3.Connection) -> None:
    try:
        conn.close()
    except sqlite3.Error:
        pass


_ORPHANS: list[sqlite3.Connection] = []
_IDLE = _IdleConnections()
atexit.register(_IDLE.close_all)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_IDLE.forget_after_fork)


def _borrow(path: Path) -> tuple[sqlite3.Connection, bool, bool]:
    """``(connection, checked, set_up)``: a kept connection of ``path`` (checked and set up when it was
    opened), else a new one (``set_up`` when the file was new and ``_prepare`` made its tables)."""
    conn = _IDLE.take(path)
    if conn is not None:
        return conn, True, True
    conn, fresh = _open(path)
    return conn, False, fresh


class _Deferred:
    """The cursor a checkpoint write sees: it collects the write's statements for the saver's next flush."""

    __slots__ = ("ops",)

    def __init__(self) -> None:
        self.ops: list[tuple[bool, str, Any]] = []

    def execute(self, sql: str, params: Any = ()) -> None:
        self.ops.append((False, sql, params))

    def executemany(self, sql: str, rows: Any) -> None:
        self.ops.append((True, sql, list(rows)))


class TickerCheckpointer(SqliteSaver):
    """A ``SqliteSaver`` bound to one ticker's database; a context manager that closes it.

    ``warnings`` lists what went wrong on the way that the run should show (a damaged database
    moved aside). Closing it hands its connection back for the next saver of the file (see the
    module docstring) unless it closes on an error.

    Its checkpoint writes (``put``, ``put_writes``) are serialised (and the run's counters taken,
    see ``CheckpointRouter``) when the graph hands them over, and queued; ``flush`` writes
    everything queued, in order, in one transaction on the calling thread. A step's checkpoint
    (``put``) flushes at once, with the writes of the step's tasks: one commit a step. The writes
    of a task that finished beside others still running (the parallel analysts) wait for the next
    flush: a run flushes before every model and tool call (``graph.run_support.checkpoint_fence``),
    so a killed process never loses a finished call. Whatever reads or deletes, and ``close``,
    flushes first. A write that failed is raised by that flush and by every checkpoint call after it.
    """

    def __init__(self, conn: sqlite3.Connection, *, path: Path, ticker: str) -> None:
        super().__init__(conn)
        self.path = path
        self.ticker = ticker
        self.warnings: list[str] = []
        self._closed = False
        self._deferring = threading.local()
        self._queued: list[list] = []  # the statements of the writes handed over, in order, not yet written
        self._failed: BaseException | None = None

    # ------------------------------------------------------------------ deferred writes
    @contextlib.contextmanager
    def cursor(self, transaction: bool = True):
        if getattr(self._deferring, "on", False):
            deferred = _Deferred()
            yield deferred
            self._hand_over(deferred.ops)
            return
        self.flush()
        with super().cursor(transaction) as cur:
            yield cur

    def put(self, config, checkpoint, metadata, new_versions):
        saved = self._deferred(super().put, config, checkpoint, metadata, new_versions)
        # the end of a step: written now, with the step's writes, in one transaction. LangGraph saves a
        # step (durability "sync") before it starts the next one's tasks, so nothing else runs yet; the
        # parallel analysts' first tool calls would otherwise write it while they all start at once
        self.flush()
        return saved

    def put_writes(self, config, writes, task_id, task_path=""):
        return self._deferred(super().put_writes, config, writes, task_id, task_path)

    def _deferred(self, write, *args):
        self._raise_failure()
        if not self.is_setup:
            with self.lock:
                self.setup()
        self._deferring.on = True
        try:
            return write(*args)
        finally:
            self._deferring.on = False

    def _hand_over(self, ops: list) -> None:
        if ops:
            with self.lock:
                self._queued.append(ops)

    def _raise_failure(self) -> None:
        if self._failed is not None:
            raise self._failed

    def flush(self) -> None:
        """Write every checkpoint write handed over so far, in order, in one transaction (raises one that
        failed)."""
        # under the lock even when nothing is queued: a flush in progress on another thread may hold
        # the writes this call must find in the database when it returns
        with self.lock:
            self._raise_failure()
            batch, self._queued = self._queued, []
            if not batch:
                return
            cur = self.conn.cursor()
            try:
                for ops in batch:
                    for many, sql, params in ops:
                        (cur.executemany if many else cur.execute)(sql, params)
                self.conn.commit()
            except BaseException as exc:
                self.conn.rollback()
                self._failed = exc
                raise
            finally:
                cur.close()

    # ------------------------------------------------------------------ life cycle
    def close(self, *, keep: bool = True) -> None:
        if self._closed:
            return
        try:
            self.flush()
        except BaseException as exc:  # noqa: BLE001 - the run reports its own error; the file is not kept
            log.warning("checkpoint writes to %s failed: %s", self.path, exc)
            keep = False
        with self.lock:
            if self._closed:
                return
            self._closed = True
            if keep:
                _IDLE.give(self.path, self.conn)
            else:
                _close_quietly(self.conn)

    def clear_thread(self, thread_id: str) -> None:
        """``clear_checkpoint`` on this saver's own connection: a finished run clears its thread before
        it closes the database, instead of closing it (SQLite checkpoints the WAL on the last close)
        and opening it again to clear."""
        self.delete_thread(thread_id)
        with self.lock:
            compact(self.conn)

    def __enter__(self) -> TickerCheckpointer:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(keep=exc_type is None)

    def __repr__(self) -> str:
        return f"TickerCheckpointer(ticker={self.ticker!r}, path={str(self.path)!r})"


from tradingagents.errors import CheckpointError  # noqa: E402,F401  (one error hierarchy)


def _open_saver(path: Path, ticker: str) -> TickerCheckpointer:
    conn, checked, set_up = _borrow(path)
    try:
        if not checked:
            _check_database(conn)
        saver = TickerCheckpointer(conn, path=path, ticker=ticker)
        if set_up:
            # its tables were made when it was opened (``_prepare`` of a new file): a second setup()
            # would only run the same CREATE TABLE IF NOT EXISTS script again, and commit nothing
            saver.is_setup = True
        else:
            with saver.cursor():  # create the tables now, not inside the first graph step
                pass
    except BaseException:
        conn.close()
        raise
    return saver


def get_checkpointer(config: Mapping[str, Any] | None, ticker: str) -> TickerCheckpointer:
    """A saver on the ticker's database (created with its folder when missing).

    A damaged database (garbage, truncated, a foreign schema) is moved aside (``move_aside``) and
    a fresh one is used: the run starts over instead of failing on it forever; the saver's
    ``warnings`` says so, for the run to show.
    """
    path = checkpoint_path(config, ticker)
    name = str(ticker).strip().upper()
    warnings: list[str] = []
    existed = path.exists()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            saver = _open_saver(path, name)
        except sqlite3.DatabaseError as exc:
            if not _is_damaged(exc):
                raise
            moved = move_aside(path, exc)
            if moved is not None:
                warnings.append(
                    f"The checkpoint database of {name} was damaged ({exc}); it was moved aside to {moved} "
                    "and this run starts fresh (an unfinished run in it cannot be resumed)."
                )
            saver = _open_saver(path, name)
    except (OSError, sqlite3.Error) as exc:
        if _disk_full(exc):
            if not existed:
                _remove_new(path)  # a database this call began to create is not left half-written
            raise CheckpointError(
                f"The disk is full: the checkpoint database {path} could not be created or grown (nothing was "
                "left half-written). Free some space on that disk, or set checkpoint_dir to a folder on "
                "another disk, or turn checkpoints off (checkpoint_enabled = false)."
            ) from exc
        raise CheckpointError(
            f"Cannot open the checkpoint database {path}: {exc}. Make sure checkpoint_dir is a writable "
            "folder, or turn checkpoints off (checkpoint_enabled = false)."
        ) from exc
    saver.warnings = warnings
    return saver


def _disk_full(exc: BaseException) -> bool:
    import errno

    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return "disk is full" in str(exc).lower() or getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL"


def _remove_new(path: Path) -> None:
    """Remove a database file (with its -wal/-shm) that failed while being created: it holds nothing."""
    _IDLE.discard(path)
    for side in (path, Path(str(path) + "-wal"), Path(str(path) + "-shm"), Path(str(path) + "-journal")):
        with contextlib.suppress(OSError):
            side.unlink()


def _latest(path: Path, tid: str) -> Any:
    """The newest checkpoint tuple of a thread in an existing database, or None."""
    if not path.exists():
        return None
    try:
        with TickerCheckpointer(_borrow(path)[0], path=path, ticker="") as saver:
            return saver.get_tuple(thread_config(tid))
    except sqlite3.DatabaseError as exc:
        if _is_damaged(exc):
            return None  # nothing resumable in it; the next run moves it aside
        raise


def checkpoint_step(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> int | None:
    """The step of the thread's latest checkpoint, or None when it has none."""
    found = _latest(checkpoint_path(config, ticker), thread_id)
    return None if found is None else step_of(found)


def has_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> bool:
    return checkpoint_step(config, ticker, thread_id) is not None


def clear_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> None:
    """Delete every checkpoint and pending write of one thread, then give the space back.

    (No-op when there is none.) Deleted rows leave free pages a 1 MB-answer run would keep as
    ~190 MB of file; ``compact`` returns them to the file system.
    """
    path = checkpoint_path(config, ticker)
    if not path.exists():
        return
    with TickerCheckpointer(_borrow(path)[0], path=path, ticker="") as saver:
        saver.clear_thread(thread_id)


def compact(conn: sqlite3.Connection) -> bool:
    """VACUUM the database and truncate its WAL when ``COMPACT_MIN_BYTES`` or more are free; False when
    another connection is busy with it.

    Best effort: a run of another date of the ticker holding the database leaves it for the next
    clear (its rows are already deleted; only the space waits).
    """
    try:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
        # only when there is space worth giving back: a small database keeps its free pages for the
        # next run (a VACUUM, and the WAL checkpoint after it, cost an fsync each for a few KB)
        if free * size >= COMPACT_MIN_BYTES:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the WAL that VACUUM filled
        return True
    except sqlite3.OperationalError as exc:
        log.debug("checkpoint compaction skipped: %s", exc)
        return False


def _db_files(config: Mapping[str, Any] | None) -> list[Path]:
    folder = Path(resolve_config(config)["checkpoint_dir"])
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob(f"*{DB_SUFFIX}") if p.is_file())


def clear_all_checkpoints(config: Mapping[str, Any] | None) -> int:
    """Delete every checkpoint of every ticker; returns how many threads were removed.

    Rows are deleted through SQLite (so a connection another thread holds stays valid); a file
    that is not a readable database is removed.
    """
    removed = 0
    for path in _db_files(config):
        _IDLE.discard(path)
        try:
            conn = _connect(path)
            try:
                with conn:
                    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                    if "checkpoints" in tables:
                        removed += conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
                        conn.execute("DELETE FROM checkpoints")
                    if "writes" in tables:
                        conn.execute("DELETE FROM writes")
                compact(conn)
            finally:
                conn.close()
        except sqlite3.DatabaseError:
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
    return removed


def _ticker_from_filename(path: Path) -> str:
    from tradingagents.validation import ticker_from_path_component

    return ticker_from_path_component(path.name[: -len(DB_SUFFIX)])


def list_checkpoints(config: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every thread with a checkpoint: dicts (ticker, thread_id, step, updated, date), newest first.

    ``date`` is the run's ``trade_date`` read from the checkpointed state when present (else None);
    ``updated`` is the latest checkpoint's ISO timestamp.
    """
    out: list[dict[str, Any]] = []
    for path in _db_files(config):
        try:
            conn = _borrow(path)[0]
        except sqlite3.DatabaseError:
            continue
        saver = TickerCheckpointer(conn, path=path, ticker="")
        ok = False
        try:
            with saver.lock:
                rows = conn.execute(
                    "SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''"
                ).fetchall()
            for (tid,) in rows:
                found = saver.get_tuple(thread_config(tid))
                if found is None:
                    continue
                out.append(checkpoint_row(tid, found, _ticker_from_filename(path)))
            ok = True
        except sqlite3.DatabaseError:
            continue
        finally:
            saver.close(keep=ok)
    out.sort(key=lambda d: str(d.get("updated") or ""), reverse=True)
    return out

