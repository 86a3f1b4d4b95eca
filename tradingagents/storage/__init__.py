"""Where the desk's memory lives: files under the home (the embedded default) or one PostgreSQL database.

``storage_url`` (``config["storage_url"]``, else ``TRADINGAGENTS_STORAGE_URL``; empty = files)
picks the backend. Each factory returns an object with the same interface either way::

    log = open_memory_log(config)              # TradingMemoryLog | PgMemoryLog
    mem = open_role_memory("bull_memory", config)  # FinancialSituationMemory | PgRoleMemory
    runs = open_run_records(config)            # FileRunRecords | PgRunRecords
    save_run(config, state, rating, meta); list_runs(config); load_run(config, t, d)  # storage.files_runs' calls
    with open_checkpointer(config, "NVDA") as saver: ...   # TickerCheckpointer | PgTickerCheckpointer
    checkpoint_step(config, "NVDA", tid); has_checkpoint(...); clear_checkpoint(...)
    with run_lock(config, "NVDA", tid): ...    # one run of a thread at a time, desk-wide
    save_run_segments(config, "NVDA", tid, doc); load_run_segments(...); clear_run_segments(...)
    save_app_run(config, doc); load_app_runs(config); app_run(config, tid); delete_app_run(config, tid)
    lists = open_watchlists(config)            # FileWatchlists | PgWatchlists
    list_watchlists(config); save_watchlist(name, tickers, config); delete_watchlist(name, config)
    record_audit(config, "job_stop", by=…, target=…); read_audit(config)   # the append-only audit trail
    read_checked_audit(config)                 # its entries and the check of their hash chain, one read

Processes with different homes and the same URL see one desk: the same decisions, lessons, runs,
checkpoints and watchlists. ``print_log(config, json=False)`` prints the memory log from whichever
storage (the ``log`` subcommand). Nothing here keeps state besides one connection pool per URL.

Every whole file written here (and by the memories below) goes through ``tradingagents.fileio``'s
one ``atomic_write``: a ground-floor module, so the memory layer uses it without importing storage.
"""

from __future__ import annotations

import json as _json
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from tradingagents.storage.app_runs import app_run, delete_app_run, load_app_runs, save_app_run
from tradingagents.storage.audit import (
    default_user,
    read_audit,
    read_checked_audit,
    record_audit,
    verify_audit,
)
from tradingagents.storage.files_runs import engine_label, engines_text, mixed_engines, run_notes
from tradingagents.storage.pg import ENV_VAR, StorageError, redact_url, storage_url
from tradingagents.storage.protocols import AuditTrail, MemoryLog, RoleMemory, RunRecords, Watchlists

__all__ = [
    "ENV_VAR",
    "AuditTrail",
    "MemoryLog",
    "RoleMemory",
    "RunRecords",
    "StorageError",
    "Watchlists",
    "app_run",
    "append_run_item",
    "default_user",
    "read_audit",
    "read_checked_audit",
    "record_audit",
    "verify_audit",
    "checkpoint_step",
    "clear_all_checkpoints",
    "clear_checkpoint",
    "clear_run_segments",
    "delete_app_run",
    "delete_watchlist",
    "describe",
    "has_checkpoint",
    "list_checkpoints",
    "list_forks",
    "load_fork",
    "save_fork",
    "update_run_meta",
    "list_memory_used",
    "list_runs",
    "load_app_runs",
    "list_watchlists",
    "load_run",
    "load_run_segments",
    "open_checkpointer",
    "open_memory_log",
    "open_role_memory",
    "open_run_records",
    "open_watchlists",
    "print_log",
    "record_pm_decision",
    "redact_url",
    "run_lock",
    "engine_label",
    "engines_text",
    "mixed_engines",
    "run_notes",
    "save_app_run",
    "save_run",
    "save_run_segments",
    "save_watchlist",
    "edit_role_memory",
    "storage_url",
]


def describe(config: Mapping[str, Any] | None = None) -> str:
    """Where the desk lives, for a status line: the database (no password) or "files"."""
    url = storage_url(config)
    return f"PostgreSQL {redact_url(url)}" if url else "files under the home folder"


def open_memory_log(config: Mapping[str, Any] | None = None) -> MemoryLog:
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg_memory_log import PgMemoryLog

        return PgMemoryLog(config, url=url)
    from tradingagents.memory import TradingMemoryLog

    return TradingMemoryLog(config)


def open_role_memory(name: str, config: Mapping[str, Any] | None = None) -> RoleMemory:
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg_role_memory import PgRoleMemory

        return PgRoleMemory(name, config, url=url)
    from tradingagents.memory import FinancialSituationMemory

    return FinancialSituationMemory(name, config)


def open_run_records(config: Mapping[str, Any] | None = None) -> RunRecords:
    from tradingagents.storage.runs import FileRunRecords, PgRunRecords

    url = storage_url(config)
    return PgRunRecords(config, url=url) if url else FileRunRecords(config)


def save_run(config: Mapping[str, Any] | None, final_state: Mapping[str, Any], rating: str | None,
             meta: Mapping[str, Any] | None = None):
    """``storage.files_runs.save_run`` with the same arguments, into whichever storage (returns where)."""
    return open_run_records(config).save_run(final_state, rating, meta)


def list_runs(config: Mapping[str, Any] | None = None, *, include_previous: bool = False) -> list[dict[str, Any]]:
    """``storage.files_runs.list_runs`` from whichever storage (``include_previous``: a re-analysed
    session's earlier runs too, each with its ``version``)."""
    return open_run_records(config).list_runs(include_previous=include_previous)


def list_memory_used(config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``{ticker, date, memory_used}`` of every saved run that records it (the lessons' track record)."""
    return open_run_records(config).list_memory_used()


def load_run(config: Mapping[str, Any] | None, ticker: str, date: str, version: int | None = None) -> dict[str, Any]:
    """``storage.files_runs.load_run`` from whichever storage (FileNotFoundError when there is none);
    ``version``: one of the session's earlier runs (``list_runs(..., include_previous=True)``)."""
    return open_run_records(config).load_run(ticker, date, version)


def save_fork(config: Mapping[str, Any] | None, final_state: Mapping[str, Any], rating: str | None,
              meta: Mapping[str, Any] | None = None):
    """Save a what-if fork beside its run (``whatif/<n>/``, or the desk's table); returns where."""
    return open_run_records(config).save_fork(final_state, rating, meta)


def list_forks(config: Mapping[str, Any] | None, ticker: str, date: str) -> list[dict[str, Any]]:
    """The what-if forks of a session's run, oldest first (``{n, rating, saved_at, path, whatif}``)."""
    return open_run_records(config).list_forks(ticker, date)


def load_fork(config: Mapping[str, Any] | None, ticker: str, date: str, n: int) -> dict[str, Any]:
    """``{"state", "rating", "meta"}`` of what-if fork ``n`` of a session (FileNotFoundError when none)."""
    return open_run_records(config).load_fork(ticker, date, n)


def update_run_meta(config: Mapping[str, Any] | None, ticker: str, date: str, updates: Mapping[str, Any]) -> None:
    """Add ``updates`` (e.g. ``attribution``) to the meta of a session's current run."""
    open_run_records(config).update_run_meta(ticker, date, updates)

RUN_ITEM_KEYS = ("questions", "pm_notes")
"""The lists of a saved run's meta that grow after it is saved (questions to the team, the PM's notes)."""


def append_run_item(config: Mapping[str, Any] | None, ticker: str, date: str, key: str,
                    item: Mapping[str, Any]) -> int:
    """Append ``item`` to ``meta[key]`` of the saved run, in whichever storage; the list's new length."""
    if key not in RUN_ITEM_KEYS:
        raise ValueError(f"meta[{key!r}] is not a list a saved run grows; one of {', '.join(RUN_ITEM_KEYS)}")
    return open_run_records(config).append_item(ticker, date, key, item)


def check_storage(config: Mapping[str, Any] | None = None) -> None:
    """Before any work: the desk database answers (``StorageError``, exit 7, one plain line naming
    the host, when it does not); nothing to check for files."""
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg import database

        database(url)


def open_watchlists(config: Mapping[str, Any] | None = None) -> Watchlists:
    """The saved watchlists: ``FileWatchlists`` (``watchlists_path``) or ``PgWatchlists`` (``ta_watchlists``)."""
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg_watchlists import PgWatchlists

        return PgWatchlists(config, url=url)
    from tradingagents.storage.watchlists import FileWatchlists

    return FileWatchlists(config)


def list_watchlists(config: Mapping[str, Any] | None = None) -> dict[str, list[str]]:
    """The saved watchlists, name → tickers (entries that do not validate are left out)."""
    return open_watchlists(config).list()


def save_watchlist(name: str, tickers: str | Iterable[str], config: Mapping[str, Any] | None = None, *,
                   owner: str | None = None, lead: bool = False, by: str | None = None) -> list[str]:
    """Save (or replace) a named watchlist; returns its validated tickers (ValidationError if not valid;
    ``NotAllowed`` when it is someone else's: ``tradingagents.ownership``). Recorded in the audit trail."""
    names = open_watchlists(config).save(name, tickers, owner=owner, lead=lead)
    record_audit(config, "watchlist_save", by=by, target=str(name).strip(), tickers=names)
    return names


def delete_watchlist(name: str, config: Mapping[str, Any] | None = None, *, owner: str | None = None,
                     lead: bool = False, by: str | None = None) -> bool:
    """Delete a named watchlist; True when there was one (``NotAllowed`` when it is someone else's). Audited."""
    done = open_watchlists(config).delete(name, owner=owner, lead=lead)
    if done:
        record_audit(config, "watchlist_delete", by=by, target=str(name).strip())
    return done


def edit_role_memory(memory: Any, *, who: str | None, lead: bool) -> Any:
    """``memory`` (a role memory) to add to, retire from, restore or clear, when the ownership table
    (``tradingagents.ownership``: "edit_memory") lets ``who`` do it; else ``NotAllowed``, nothing changed."""
    from tradingagents.errors import NotAllowed
    from tradingagents.ownership import allowed

    if not allowed("edit_memory", who=who, lead=lead):
        raise NotAllowed("Only a desk lead can add, retire, restore or clear the roles' lessons; nothing was changed.")
    return memory


def open_checkpointer(config: Mapping[str, Any] | None, ticker: str):
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg_checkpoint import get_pg_checkpointer

        return get_pg_checkpointer(config, ticker, url=url)
    from tradingagents.storage.sqlite_checkpoint import get_checkpointer

    return get_checkpointer(config, ticker)


def _checkpoints(config: Mapping[str, Any] | None):
    if storage_url(config):
        from tradingagents.storage import pg_checkpoint

        return pg_checkpoint
    from tradingagents.storage import sqlite_checkpoint

    return sqlite_checkpoint


def checkpoint_step(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> int | None:
    return _checkpoints(config).checkpoint_step(config, ticker, thread_id)


def has_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> bool:
    return _checkpoints(config).has_checkpoint(config, ticker, thread_id)


def clear_checkpoint(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> None:
    _checkpoints(config).clear_checkpoint(config, ticker, thread_id)


def list_checkpoints(config: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return _checkpoints(config).list_checkpoints(config)


def clear_all_checkpoints(config: Mapping[str, Any] | None) -> int:
    return _checkpoints(config).clear_all_checkpoints(config)


# ------------------------------------------------------------------ counters of a run's earlier segments
def _segments_name(ticker: str, thread_id: str) -> str:
    import hashlib

    return hashlib.sha256(f"{ticker}\x1f{thread_id}".encode()).hexdigest()[:32]


def _segments_path(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> Path:
    from tradingagents.config import resolve_config

    return Path(resolve_config(config)["segments_dir"]) / f"{_segments_name(ticker, thread_id)}.json"


def save_run_segments(config: Mapping[str, Any] | None, ticker: str, thread_id: str, doc: Mapping[str, Any]) -> None:
    """Keep the counters of a run's segments so far beside its checkpoint (OSError / StorageError)."""
    text = _json.dumps(doc)
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg import database

        with database(url).transaction() as conn:
            conn.execute("INSERT INTO ta_run_segments (name, doc) VALUES (%s, %s::jsonb) ON CONFLICT (name) "
                         "DO UPDATE SET doc = EXCLUDED.doc, saved_at = now()",
                         (_segments_name(ticker, thread_id), text))
        return
    from tradingagents.fileio import atomic_write

    atomic_write(_segments_path(config, ticker, thread_id), text)


def load_run_segments(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> Any:
    """What ``save_run_segments`` kept for this run (unchecked JSON), or None when nothing is kept."""
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg import database

        with database(url).transaction() as conn:
            row = conn.execute("SELECT doc FROM ta_run_segments WHERE name = %s",
                               (_segments_name(ticker, thread_id),)).fetchone()
        return row[0] if row else None
    try:
        return _json.loads(_segments_path(config, ticker, thread_id).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def clear_run_segments(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> None:
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg import database

        with database(url).transaction() as conn:
            conn.execute("DELETE FROM ta_run_segments WHERE name = %s", (_segments_name(ticker, thread_id),))
        return
    _segments_path(config, ticker, thread_id).unlink(missing_ok=True)


@contextmanager
def run_lock(config: Mapping[str, Any] | None, ticker: str, thread_id: str) -> Iterator[None]:
    """One run of a (ticker, thread) at a time: RunAlreadyActive when another holds it.

    Files: an inter-process lock file under ``checkpoint_dir/locks`` (one machine). Database: a
    session advisory lock, so two machines sharing the desk never run the same thread at once and
    a killed process's lock goes with its connection.
    """
    from tradingagents.validation import safe_path_component, validate_ticker

    tick = validate_ticker(ticker)
    url = storage_url(config)
    if url:
        from tradingagents.storage.pg import pg_run_lock

        with pg_run_lock(url, tick, thread_id):
            yield
        return
    from filelock import FileLock
    from filelock import Timeout as FileLockTimeout

    from tradingagents.config import resolve_config
    from tradingagents.errors import RunAlreadyActive

    folder = Path(resolve_config(config)["checkpoint_dir"]) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(folder / f"{safe_path_component(tick)}.{thread_id}.lock"), timeout=0)
    try:
        lock.acquire()
    except FileLockTimeout:
        raise RunAlreadyActive(
            f"An analysis of {tick} with these settings is already running (in this app or another "
            "process). Wait for it to finish or stop it, then try again."
        ) from None
    try:
        yield
    finally:
        lock.release()


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:+.1%}"


def record_pm_decision(config: Mapping[str, Any] | None, ticker: str, trade_date: str, rating: str, reason: str = "",
                       *, by: str | None = None, at: str | None = None) -> dict[str, Any]:
    """The portfolio manager's own call on a logged decision, in whichever storage, and in the audit trail.

    Returns the log's answer (``record_pm_decision``: status ``recorded``, ``changed``, ``settled`` or
    ``missing``); with ``missing`` it also gives ``dates``, the dates the log holds for the ticker.
    ``by`` defaults to ``default_user(config)``, ``at`` to now (UTC, seconds).
    """
    import datetime as _dt

    log = open_memory_log(config)
    pm = {"rating": rating, "reason": reason, "by": by or default_user(config),
          "at": at or _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")}
    result = log.record_pm_decision(ticker, trade_date, pm)
    if result["status"] == "missing":
        from tradingagents.validation import validate_ticker

        want = validate_ticker(ticker)
        result["dates"] = sorted({e["date"] for e in log.load_entries(texts=False) if e["ticker"] == want})
    elif result["status"] in ("recorded", "changed"):
        call = result["pm_decision"]
        record_audit(config, "pm_decision", by=call["by"], target=f"{ticker} {trade_date}", rating=call["rating"],
                     previous=(result["previous"] or {}).get("rating"))
    return result


def print_log(config: Mapping[str, Any] | None = None, json: bool = False, file: IO[str] | None = None) -> int:
    """Print the memory log (whichever storage): a table, or every entry as JSON. Returns 0."""
    out = sys.stdout if file is None else file
    log = open_memory_log(config)
    entries = log.load_entries()
    if json:
        # every entry as it loads; then each block kept verbatim but not read (two entries merged by a
        # damaged separator, a duplicate) as a record of its own with its verbatim "text" and "problems"
        from tradingagents.memory.log_format import pm_outcome

        # beside each entry: the team's call and the portfolio manager's own scored on its one alpha
        records = [{**e, **pm_outcome(e)} for e in entries]
        unread = getattr(log, "unread_blocks", None)
        blank = dict.fromkeys(entries[0] if entries else ("date", "ticker", "rating", "pending"))
        if callable(unread):
            for b in unread():
                records.append({**blank, "date": b["date"], "ticker": b["ticker"], "block": b["block"],
                                "text": b["raw"], "problems": [b["problem"]]})
        else:
            records += [{**blank, "problems": [p]} for p in getattr(log, "problems", []) or []]
        out.write(_json.dumps(records, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write(f"Memory log ({describe(config)}): {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}\n")
    if entries:
        out.write(f"{'date':<10}  {'ticker':<12}  {'rating':<11}  {'status':<8}  {'return':>7}  {'alpha':>7}  hold\n")
    for e in entries:
        status = "pending" if e["pending"] else "settled"
        hold = "" if e["holding"] is None else f"{e['holding']}d"
        out.write(
            f"{e['date']:<10}  {e['ticker']:<12}  {e['rating']:<11}  {status:<8}  "
            f"{_pct(e['raw']):>7}  {_pct(e['alpha']):>7}  {hold}"
            + ("  invented instrument" if e.get("invented") else "") + ("  blind run" if e.get("blind") else "") + "\n"
        )
    for problem in getattr(log, "problems", []) or []:
        out.write(f"note: {problem}\n")
    return 0
