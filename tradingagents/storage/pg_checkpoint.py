"""LangGraph checkpoints in the desk database, used like the per-ticker SQLite checkpointer.

``get_pg_checkpointer(config, ticker)`` returns a ``PostgresSaver`` (langgraph-checkpoint-postgres)
on its own connection (autocommit, no prepared statements, dict rows: what the saver expects).
The saver's tables are set up once per database per process, before the first saver is handed
out, on a connection of their own under an advisory lock that is polled, never waited on (see
``_setup_tables``: waiting would deadlock with the migrations' CREATE INDEX CONCURRENTLY). It is a context manager that closes its connection, like ``TickerCheckpointer``. All
tickers share the saver's tables; the thread id (``graph.checkpointer.thread_id``) already folds in
the ticker, the date and the graph's signature, so threads never collide. A run on any machine
resumes from the last checkpoint any other machine wrote for the same thread.

``checkpoint_step`` / ``has_checkpoint`` / ``clear_checkpoint`` / ``list_checkpoints`` /
``clear_all_checkpoints`` have the SQLite module's meaning.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver

from tradingagents.errors import CheckpointError
from tradingagents.storage.checkpoint_rows import checkpoint_row, step_of, thread_config
from tradingagents.storage.pg import (
    ENV_VAR,
    LOCK_CHECKPOINT_SETUP,
    LOCK_NAMESPACE,
    StorageError,
    redact_url,
    scrub,
    storage_url,
)
from tradingagents.validation import validate_ticker


class CheckpointUnreachable(StorageError, CheckpointError):
    """The desk database holding the checkpoints cannot be reached or went away (CLI exit 7, resumable:
    what was checkpointed before is kept in the database)."""


class PgTickerCheckpointer(PostgresSaver):
    """A ``PostgresSaver`` for one ticker's runs; a context manager that closes its connection.

    A connection lost mid-run (the server stopped, the session killed, the network gone) is a
    ``CheckpointUnreachable`` naming the database without its password, not a driver traceback.
    """

    def __init__(self, conn: Any, *, url: str, ticker: str) -> None:
        super().__init__(conn)
        self.url = url
        self.label = redact_url(url)
        self.ticker = ticker

    @contextlib.contextmanager
    def _lost(self, doing: str):
        import psycopg

        try:
            yield
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            raise CheckpointUnreachable(
                f"The desk database {self.label} was lost while {doing} ({scrub(exc, self.url).strip()}). "
                "The run is kept up to its last checkpoint: once the database is back, run the same command "
                "again to resume."
            ) from None

    def clear_thread(self, thread_id: str) -> None:
        """``clear_checkpoint`` on this saver's own connection (a finished run, before it closes it)."""
        self.delete_thread(thread_id)

    def put(self, config, checkpoint, metadata, new_versions):
        with self._lost("saving a checkpoint"):
            return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        with self._lost("saving a step's results"):
            return super().put_writes(config, writes, task_id, task_path)

    def get_tuple(self, config):
        with self._lost("reading a checkpoint"):
            return super().get_tuple(config)

    def list(self, config, *, filter=None, before=None, limit=None):  # noqa: A002 - the base's names
        with self._lost("reading checkpoints"):
            yield from super().list(config, filter=filter, before=before, limit=limit)

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    def __enter__(self) -> PgTickerCheckpointer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PgTickerCheckpointer(ticker={self.ticker!r}, url={self.label!r})"


def _url(config: Mapping[str, Any] | None) -> str:
    url = storage_url(config)
    if not url:
        raise ValueError(f"Postgres checkpoints need storage_url (or {ENV_VAR}) set.")
    return url


# URLs whose saver tables this process has seen set up; the lock makes a process's threads wait for
# the one doing the setup instead of racing it.
_READY: set[str] = set()
_READY_LOCK = threading.Lock()
_POLL_S = 0.05
_SETUP_WAIT_S = 120.0


def _forget_setups() -> None:
    """Forget which databases were set up (tests: behave like a fresh process)."""
    with _READY_LOCK:
        _READY.clear()


def _setup_tables(url: str) -> None:
    """Run ``PostgresSaver.setup()`` once, on its own autocommit connection, under the setup lock.

    The saver's migrations build indexes with CREATE INDEX CONCURRENTLY, which waits until every
    other session's running statement has finished. A second opener *blocked* in
    ``pg_advisory_lock`` is such a statement, while it waits for the lock the first holds: a
    deadlock inside PostgreSQL. So the lock is polled with ``pg_try_advisory_lock`` (each try
    returns at once; no statement stays open between tries), and setup is skipped when the last
    migration is already recorded.
    """
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row,
                         connect_timeout=10) as conn:
        deadline = time.monotonic() + _SETUP_WAIT_S

        def got_lock() -> bool:
            row = conn.execute("SELECT pg_try_advisory_lock(%s, %s) AS got",
                               (LOCK_NAMESPACE, LOCK_CHECKPOINT_SETUP)).fetchone()
            return bool(row and row["got"])

        while not got_lock():
            if time.monotonic() > deadline:
                raise CheckpointError(
                    f"Another process has held the checkpoint setup lock of {redact_url(url)} for over "
                    f"{_SETUP_WAIT_S:.0f} s: check for a stuck process, then try again."
                )
            time.sleep(_POLL_S)
        try:
            if not _tables_current(conn):
                PostgresSaver(conn).setup()
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_NAMESPACE, LOCK_CHECKPOINT_SETUP))


def _tables_current(conn: Any) -> bool:
    """True when the saver's last migration is already recorded (nothing for setup() to do)."""
    exists = conn.execute("SELECT to_regclass('checkpoint_migrations') IS NOT NULL AS there").fetchone()["there"]
    if not exists:
        return False
    row = conn.execute("SELECT max(v) AS v FROM checkpoint_migrations").fetchone()
    return row["v"] is not None and row["v"] >= len(PostgresSaver.MIGRATIONS) - 1


def _ensure_tables(url: str) -> None:
    """The saver's tables, set up at most once per database per process, before any saver is handed out."""
    if url in _READY:
        return
    with _READY_LOCK:
        if url not in _READY:
            _setup_tables(url)
            _READY.add(url)


def get_pg_checkpointer(config: Mapping[str, Any] | None, ticker: str, *, url: str | None = None) -> PgTickerCheckpointer:
    """A saver on the desk database, its tables created when missing."""
    import psycopg
    from psycopg.rows import dict_row

    url = url or _url(config)
    tick = validate_ticker(ticker) if ticker else ""
    try:
        conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row, connect_timeout=10)
    except psycopg.Error as exc:
        raise CheckpointUnreachable(
            f"Cannot open the checkpoint database {redact_url(url)}: {scrub(exc, url)}. Check that the server is "
            "running and storage_url is right, or turn checkpoints off (checkpoint_enabled = false)."
        ) from None
    try:
        _ensure_tables(url)
    except CheckpointError:
        conn.close()
        raise
    except psycopg.Error as exc:
        conn.close()
        raise CheckpointError(
            f"Cannot set up checkpoints in {redact_url(url)}: {scrub(exc, url)}. The database user needs the "
            "right to create tables (once), or turn checkpoints off (checkpoint_enabled = false)."
        ) from None
    saver = PgTickerCheckpointer(conn, url=url, ticker=tick)
    return saver


def checkpoint_step(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> int | None:
    """The step of the thread's latest checkpoint, or None when it has none."""
    with get_pg_checkpointer(config, ticker) as saver:
        found = saver.get_tuple(thread_config(thread_id))
    return None if found is None else step_of(found)


def has_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> bool:
    return checkpoint_step(config, ticker, thread_id) is not None


def clear_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> None:
    """Delete every checkpoint and pending write of one thread (no-op when there is none)."""
    with get_pg_checkpointer(config, ticker) as saver:
        saver.clear_thread(thread_id)


def list_checkpoints(config: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every thread with a checkpoint: dicts (ticker, thread_id, step, updated, date), newest first."""
    out: list[dict[str, Any]] = []
    with get_pg_checkpointer(config, "") as saver:
        with saver._cursor() as cur:
            cur.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''")
            tids = [row["thread_id"] for row in cur.fetchall()]
        for tid in tids:
            found = saver.get_tuple(thread_config(tid))
            if found is None:
                continue
            out.append(checkpoint_row(tid, found))
    out.sort(key=lambda d: str(d.get("updated") or ""), reverse=True)
    return out


def clear_all_checkpoints(config: Mapping[str, Any] | None) -> int:
    """Delete every checkpoint of every ticker; returns how many threads were removed."""
    with get_pg_checkpointer(config, "") as saver:
        with saver._cursor() as cur:
            cur.execute("SELECT DISTINCT thread_id FROM checkpoints")
            tids = [row["thread_id"] for row in cur.fetchall()]
        for tid in tids:
            saver.delete_thread(tid)
    return len({t for t in tids})
