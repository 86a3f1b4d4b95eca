"""The memory log of decisions in PostgreSQL, behind the file log's interface (``TradingMemoryLog``).

One row per (date, ticker) in ``ta_memory_log``; the unique constraint and ``INSERT … ON CONFLICT
DO NOTHING`` make ``store_decision`` idempotent however many processes on however many machines
store at once: no entry is lost or duplicated. Every value travels as a query parameter and the
decision and reflection are columns of their own, so model text can never forge an entry, a tag
or a section. ``batch_update_with_outcomes`` settles in one transaction (all or nothing), as does
rotation: ``memory_log_max_entries`` caps the settled entries, dropping the oldest by date (then
by insertion order); pending entries are neither counted nor dropped.

Reading matches the file log exactly: ``load_entries`` in insertion order, the same dict keys and
values, and ``get_past_context`` renders the same text with the same point-in-time rule (with
``as_of``, only entries dated before it whose holding window had closed by then, weekdays counted).
Rows that do not validate (a hand-edit in the database) are skipped and described in ``problems``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.memory.log_cache import summary_rows
from tradingagents.memory.log_format import (
    META_KEYS,
    check_count,
    check_decision,
    check_pm_decision,
    check_updates,
    known_by,
    past_decisions_of,
    render_past_context,
)
from tradingagents.rating import normalize_rating
from tradingagents.storage.pg import LOCK_LOG_WRITE, LOCK_NAMESPACE, database, pg_text, storage_url
from tradingagents.validation import validate_date, validate_ticker

_COLUMNS = "id, trade_date, ticker, rating, pending, raw_return, alpha, holding, decision, reflection, meta"
_SUMMARY_COLUMNS = _COLUMNS.replace("decision, reflection", "'', ''")  # the texts left in the database
# the decision's provenance and its settlement prices (the file log's hidden meta line), added to
# databases created before it existed
_META_COLUMN = "ALTER TABLE ta_memory_log ADD COLUMN IF NOT EXISTS meta jsonb NOT NULL DEFAULT '{}'::jsonb"



def _entry(row: tuple) -> dict[str, Any]:
    """A row as the file log's entry dict; ValueError when the row does not validate."""
    _id, date, ticker, rating, pending, raw, alpha, holding, decision, reflection, *rest = row
    meta = rest[0] if rest and isinstance(rest[0], dict) else {}
    tier = normalize_rating(rating) if isinstance(rating, str) else None
    if tier is None:
        raise ValueError(f"unknown rating {rating!r}")
    entry = {
        "date": validate_date(str(date), allow_future=True),
        "ticker": validate_ticker(ticker),
        "rating": tier,
        "pending": bool(pending),
        "raw": None,
        "alpha": None,
        "holding": None,
        "decision": decision,
        "reflection": "",
        **{k: meta.get(k) for k in META_KEYS},
    }
    if entry.get("pm_decision") is not None:  # a hand-edited call that does not validate is not read as one
        try:
            entry["pm_decision"] = check_pm_decision(entry["pm_decision"])
        except ValueError:
            entry["pm_decision"] = None
    if not pending:
        if holding is None or holding < 0 or not all(isinstance(v, float) and math.isfinite(v) for v in (raw, alpha)):
            raise ValueError("a settled entry needs a finite return, alpha and holding days")
        entry.update(raw=raw, alpha=alpha, holding=int(holding), reflection=reflection)
    return entry


class PgMemoryLog:
    """The decision log in the desk database; the same methods and results as ``TradingMemoryLog``."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        cfg = resolve_config(config)
        self.url = url or storage_url(cfg)
        if not self.url:
            raise ValueError("PgMemoryLog needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self.max_entries: int | None = cfg["memory_log_max_entries"]  # checked by the resolver (≥ 1 or None)
        self.problems: list[str] = []
        self._db = database(self.url)
        with self._db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_NAMESPACE, LOCK_LOG_WRITE))
            conn.execute(_META_COLUMN)

    # ------------------------------------------------------------------ reading
    def _read(self, where: str = "", params: tuple = (), columns: str = "") -> list[dict[str, Any]]:
        with self._db.transaction() as conn:
            rows = conn.execute(f"SELECT {columns or _COLUMNS} FROM ta_memory_log {where} ORDER BY id", params).fetchall()
        out, problems = [], []
        for row in rows:
            try:
                out.append(_entry(row))
            except ValueError as exc:  # ValidationError included
                problems.append(f"Row {row[0]} ({row[1]} {row[2]!r}) not read: {exc}.")
        if not where:
            self.problems = problems
        return out

    def load_entries(self, *, texts: bool = True) -> list[dict[str, Any]]:
        """Every readable entry in insertion order (oldest first); ``texts=False``: without decision and
        reflection (not sent by the database; ``entry_texts`` reads them for the entries shown)."""
        if texts:
            return self._read()
        entries = self._read(columns=_SUMMARY_COLUMNS)
        for entry in entries:
            del entry["decision"], entry["reflection"]
        return entries

    def load_summary(self) -> list[list[Any]]:
        """``load_entries(texts=False)`` as rows of ``log_cache.COLUMNS`` values, as the file log gives them."""
        return summary_rows(self.load_entries(texts=False))

    def entry_texts(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str]]:
        """``{(date, ticker): (decision, reflection)}`` of the entries named (a key the log does not hold
        is left out), read as ``load_entries`` reads them."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        dates, tickers = [d for d, _ in wanted], [t for _, t in wanted]
        rows = self._read("WHERE (trade_date, ticker) IN (SELECT * FROM unnest(%s::date[], %s::text[]))",
                          (dates, tickers))
        return {(e["date"], e["ticker"]): (e["decision"], e["reflection"]) for e in rows}

    def entry_status(self, ticker: str, trade_date: str) -> tuple[str, str | None]:
        """As ``TradingMemoryLog.entry_status``: one row read (and checked as ``load_entries`` checks it)."""
        ticker, date = validate_ticker(ticker), validate_date(trade_date, allow_future=True)
        rows = self._read("WHERE trade_date = %s AND ticker = %s", (date, ticker), columns=_SUMMARY_COLUMNS)
        if not rows:
            return "none", None
        return ("pending" if rows[0]["pending"] else "settled"), rows[0]["rating"]

    def get_pending_entries(self, ticker: str | None = None) -> list[dict[str, Any]]:
        if ticker is None:
            return self._read("WHERE pending")
        return self._read("WHERE pending AND ticker = %s", (validate_ticker(ticker),))

    def get_past_context(self, ticker: str, n_same: int = 5, n_cross: int = 3, *, as_of: str | None = None) -> str:
        """The past decisions' text for the prompt (``get_past_memory``'s text)."""
        return self.get_past_memory(ticker, n_same, n_cross, as_of=as_of)[0]

    def get_past_memory(self, ticker: str, n_same: int = 5, n_cross: int = 3, *, as_of: str | None = None) -> tuple[str, list[dict[str, Any]]]:
        """The newest settled entries for ``ticker`` in full, then the newest lessons from others.

        Same text and same point-in-time rule as ``TradingMemoryLog.get_past_context``.
        """
        want = validate_ticker(ticker)
        n_same = check_count(n_same, "n_same")
        n_cross = check_count(n_cross, "n_cross")
        cutoff = validate_date(as_of, allow_future=True) if as_of is not None else None
        if n_same == 0 and n_cross == 0:
            return "", []
        same: list[dict[str, Any]] = []
        cross: list[dict[str, Any]] = []
        where = "WHERE NOT pending" + (" AND trade_date < %s" if cutoff else "")
        with self._db.transaction() as conn:
            # newest first; insertion order breaks ties (the file log's file order), bodies read last;
            # of the meta only the window's close (the point-in-time rule needs it)
            with conn.cursor(name="ta_past_context") as cur:
                cur.itersize = 256
                cur.execute(
                    "SELECT id, trade_date, ticker, rating, pending, raw_return, alpha, holding, '', '', "
                    "jsonb_build_object('end_date', meta->'end_date', 'invented', meta->'invented') "
                    f"FROM ta_memory_log {where} ORDER BY trade_date DESC, id DESC",
                    (cutoff,) if cutoff else (),
                )
                for row in cur:
                    if len(same) >= n_same and len(cross) >= n_cross:
                        break
                    try:
                        entry = _entry(row)
                    except ValueError:
                        continue
                    if not known_by(entry["date"], entry["holding"], cutoff, entry.get("end_date")):
                        continue
                    entry["id"] = row[0]
                    if entry["ticker"] == want:
                        if len(same) < n_same:
                            same.append(entry)
                    elif len(cross) < n_cross and not entry.get("invented"):  # an invented one teaches no other
                        cross.append(entry)
            chosen = [e["id"] for e in same + cross]
            if not chosen:
                return "", []
            bodies = {
                i: (d, r)
                for i, d, r in conn.execute(
                    "SELECT id, decision, reflection FROM ta_memory_log WHERE id = ANY(%s)", (chosen,)
                ).fetchall()
            }
        def fields(e: dict[str, Any]) -> tuple:
            return (e["date"], e["ticker"], e["rating"], e["raw"], e["alpha"], e["holding"], *bodies[e["id"]])

        decisions = past_decisions_of([fields(e) for e in same], [fields(e) for e in cross])
        return render_past_context(want, [fields(e) for e in same], [fields(e) for e in cross]), decisions

    # ------------------------------------------------------------------ writing
    def _rotate(self, conn: Any) -> None:
        if self.max_entries is None:
            return
        conn.execute(
            "DELETE FROM ta_memory_log WHERE id IN ("
            " SELECT id FROM ta_memory_log WHERE NOT pending ORDER BY trade_date, id"
            " LIMIT greatest((SELECT count(*) FROM ta_memory_log WHERE NOT pending) - %s, 0))",
            (self.max_entries,),
        )

    def _write_lock(self, conn: Any) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_NAMESPACE, LOCK_LOG_WRITE))

    def store_decision(
        self, ticker: str, trade_date: str, final_trade_decision: str, *, rating: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> bool:
        """Store a pending decision; False (nothing written) if (date, ticker) is already logged.

        The rating is parsed from the decision text unless given; ``provenance`` as in the file log.
        """
        ticker, date, decision, rating, meta = check_decision(ticker, trade_date, final_trade_decision, rating,
                                                              provenance)
        meta = meta or {}
        with self._db.transaction() as conn:
            inserted = conn.execute(
                "INSERT INTO ta_memory_log (trade_date, ticker, rating, decision, meta) "
                "VALUES (%s, %s, %s, %s, %s::jsonb) ON CONFLICT (trade_date, ticker) DO NOTHING RETURNING id",
                (date, ticker, rating, pg_text(decision), json.dumps(meta)),
            ).fetchone()
        return inserted is not None

    def update_pending(
        self, ticker: str, trade_date: str, final_trade_decision: str, *, rating: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> tuple[str, str | None]:
        """As ``TradingMemoryLog.update_pending``: ("stored"|"updated"|"settled", previous rating)."""
        ticker, date, decision, rating, meta = check_decision(ticker, trade_date, final_trade_decision, rating,
                                                              provenance)
        meta = meta or {}
        with self._db.transaction() as conn:
            self._write_lock(conn)
            row = conn.execute(
                "SELECT rating, pending FROM ta_memory_log WHERE trade_date = %s AND ticker = %s FOR UPDATE",
                (date, ticker),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO ta_memory_log (trade_date, ticker, rating, decision, meta) "
                    "VALUES (%s, %s, %s, %s, %s::jsonb)",
                    (date, ticker, rating, pg_text(decision), json.dumps(meta)),
                )
                return "stored", None
            if not row[1]:
                return "settled", row[0]
            conn.execute(  # the PM's own call stays with the day's decision
                "UPDATE ta_memory_log SET rating = %s, decision = %s, "
                "meta = %s::jsonb || jsonb_strip_nulls(jsonb_build_object('pm_decision', meta->'pm_decision')), "
                "stored_at = now() "
                "WHERE trade_date = %s AND ticker = %s AND pending",
                (rating, pg_text(decision), json.dumps(meta), date, ticker),
            )
            return "updated", row[0]

    def record_pm_decision(self, ticker: str, trade_date: str, pm_decision: Mapping[str, Any]) -> dict[str, Any]:
        """As ``TradingMemoryLog.record_pm_decision``: one transaction, the row locked while it is decided."""
        ticker, date = validate_ticker(ticker), validate_date(trade_date, allow_future=True)
        pm = check_pm_decision(pm_decision)
        with self._db.transaction() as conn:
            self._write_lock(conn)
            row = conn.execute(
                "SELECT pending, meta->'pm_decision' FROM ta_memory_log WHERE trade_date = %s AND ticker = %s "
                "FOR UPDATE", (date, ticker),
            ).fetchone()
            if row is None:
                return {"status": "missing", "previous": None, "pm_decision": None}
            previous = row[1] if isinstance(row[1], dict) else None
            if not row[0]:
                return {"status": "settled", "previous": previous, "pm_decision": None}
            conn.execute(
                "UPDATE ta_memory_log SET meta = meta || %s::jsonb WHERE trade_date = %s AND ticker = %s AND pending",
                (json.dumps({"pm_decision": pm}), date, ticker),
            )
        return {"status": "changed" if previous else "recorded", "previous": previous, "pm_decision": pm}

    def batch_update_with_outcomes(self, updates: Iterable[Mapping[str, Any]]) -> int:
        """Settle pending entries in one transaction; returns how many were settled.

        Each update as ``TradingMemoryLog.batch_update_with_outcomes`` takes it (``log_format.UPDATE_KEYS``).
        Updates that match no pending entry are ignored; all are checked before anything is written.
        """
        wanted, extras = check_updates(updates)
        if not wanted:
            return 0
        settled = 0
        with self._db.transaction() as conn:
            self._write_lock(conn)
            for (date, ticker), (raw, alpha, holding, reflection) in wanted.items():
                row = conn.execute(
                    "UPDATE ta_memory_log SET pending = false, raw_return = %s, alpha = %s, holding = %s, "
                    "reflection = %s, settled_at = now(), meta = meta || %s::jsonb "
                    "WHERE trade_date = %s AND ticker = %s AND pending RETURNING id",
                    (raw, alpha, holding, pg_text(reflection), json.dumps(extras.get((date, ticker), {})),
                     date, ticker),
                ).fetchone()
                settled += row is not None
            if settled:
                self._rotate(conn)
        return settled

    def lessons_due(self) -> list[dict[str, Any]]:
        """As ``TradingMemoryLog.lessons_due``."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT ticker, trade_date, meta FROM ta_memory_log WHERE NOT pending AND meta ? 'lessons_due' "
                "ORDER BY id"
            ).fetchall()
        return [{"ticker": t, "date": str(d), "known_from": m.get("lessons_known_from"),
                 "lessons": {k: (v[0], v[1]) for k, v in m["lessons_due"].items()}} for t, d, m in rows]

    def clear_lessons_due(self, keys: Iterable[tuple[str, str]]) -> int:
        """As ``TradingMemoryLog.clear_lessons_due``."""
        done = 0
        with self._db.transaction() as conn:
            for t, d in keys:
                row = conn.execute(
                    "UPDATE ta_memory_log SET meta = meta - 'lessons_due' - 'lessons_known_from' "
                    "WHERE trade_date = %s AND ticker = %s AND NOT pending AND meta ? 'lessons_due' RETURNING id",
                    (validate_date(d, allow_future=True), validate_ticker(t)),
                ).fetchone()
                done += row is not None
        return done

    def __len__(self) -> int:
        with self._db.transaction() as conn:
            return int(conn.execute("SELECT count(*) FROM ta_memory_log").fetchone()[0])

    def __repr__(self) -> str:
        return f"PgMemoryLog(url={self._db.label!r})"
