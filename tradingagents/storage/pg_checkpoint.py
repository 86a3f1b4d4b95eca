"""LangGraph checkpoints in the desk database, used like the per-ticker SQLite checkpointer.

``get_pg_checkpointer(config, ticker)`` returns a ``PostgresSaver`` (langgraph-checkpoint-postgres)
on its own connection (autocommit, no prepared statements, dict rows: what the saver expects),
with the saver's tables set up under an advisory lock (its migrations are not safe to run twice at
once). It is a context manager that closes its connection, like ``TickerCheckpointer``. All
tickers share the saver's tables; the thread id (``graph.checkpointer.thread_id``) already folds in
the ticker, the date and the graph's signature, so threads never collide. A run on any machine
resumes from the last checkpoint any other machine wrote for the same thread.

``checkpoint_step`` / ``has_checkpoint`` / ``clear_checkpoint`` / ``list_checkpoints`` /
``clear_all_checkpoints`` have the SQLite module's meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.checkpoint.postgres import PostgresSaver

from tradingagents.errors import CheckpointError
from tradingagents.storage.pg import (
    ENV_VAR,
    LOCK_CHECKPOINT_SETUP,
    LOCK_NAMESPACE,
    redact_url,
    scrub,
    storage_url,
)
from tradingagents.validation import validate_ticker


class PgTickerCheckpointer(PostgresSaver):
    """A ``PostgresSaver`` for one ticker's runs; a context manager that closes its connection."""

    def __init__(self, conn: Any, *, url: str, ticker: str) -> None:
        super().__init__(conn)
        self.label = redact_url(url)
        self.ticker = ticker

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


def get_pg_checkpointer(config: Mapping[str, Any] | None, ticker: str, *, url: str | None = None) -> PgTickerCheckpointer:
    """A saver on the desk database, its tables created when missing."""
    import psycopg
    from psycopg.rows import dict_row

    url = url or _url(config)
    tick = validate_ticker(ticker) if ticker else ""
    try:
        conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row, connect_timeout=10)
    except psycopg.Error as exc:
        raise CheckpointError(
            f"Cannot open the checkpoint database {redact_url(url)}: {scrub(exc, url)}. Check that the server is "
            "running and storage_url is right, or turn checkpoints off (checkpoint_enabled = false)."
        ) from None
    saver = PgTickerCheckpointer(conn, url=url, ticker=tick)
    try:
        with saver.lock:
            conn.execute("SELECT pg_advisory_lock(%s, %s)", (LOCK_NAMESPACE, LOCK_CHECKPOINT_SETUP))
        try:
            saver.setup()
        finally:
            with saver.lock:
                conn.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_NAMESPACE, LOCK_CHECKPOINT_SETUP))
    except psycopg.Error as exc:
        saver.close()
        raise CheckpointError(
            f"Cannot set up checkpoints in {redact_url(url)}: {scrub(exc, url)}. The database user needs the "
            "right to create tables (once), or turn checkpoints off (checkpoint_enabled = false)."
        ) from None
    return saver


def _thread_config(tid: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": str(tid), "checkpoint_ns": ""}}


def checkpoint_step(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> int | None:
    """The step of the thread's latest checkpoint, or None when it has none."""
    with get_pg_checkpointer(config, ticker) as saver:
        found = saver.get_tuple(_thread_config(thread_id))
    if found is None:
        return None
    step = (found.metadata or {}).get("step")
    return int(step) if isinstance(step, int) else -1


def has_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> bool:
    return checkpoint_step(config, ticker, thread_id) is not None


def clear_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> None:
    """Delete every checkpoint and pending write of one thread (no-op when there is none)."""
    with get_pg_checkpointer(config, ticker) as saver:
        saver.delete_thread(thread_id)


def list_checkpoints(config: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Every thread with a checkpoint: dicts (ticker, thread_id, step, updated, date), newest first."""
    out: list[dict[str, Any]] = []
    with get_pg_checkpointer(config, "") as saver:
        with saver._cursor() as cur:
            cur.execute("SELECT DISTINCT thread_id FROM checkpoints WHERE checkpoint_ns = ''")
            tids = [row["thread_id"] for row in cur.fetchall()]
        for tid in tids:
            found = saver.get_tuple(_thread_config(tid))
            if found is None:
                continue
            values = (found.checkpoint or {}).get("channel_values") or {}
            step = (found.metadata or {}).get("step")
            ticker = values.get("company_of_interest")
            out.append(
                {
                    "ticker": str(ticker).upper() if ticker else "",
                    "thread_id": str(tid),
                    "step": int(step) if isinstance(step, int) else -1,
                    "updated": (found.checkpoint or {}).get("ts"),
                    "date": values.get("trade_date"),
                }
            )
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
