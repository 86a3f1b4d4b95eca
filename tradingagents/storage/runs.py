"""Saved runs behind one interface: files (``results/<TICKER>/<date>/``) or the desk database.

``open_run_records(config)`` (in ``tradingagents.storage``) returns one of these; both have
``save_run(final_state, rating, meta=None)`` (returns where it went), ``list_runs()`` (newest
first, the same dict keys as ``storage.files_runs.list_runs``), ``load_run(ticker, date)`` (``{"state",
"rating", "meta"}``, FileNotFoundError when there is none) and ``load_report(ticker, date)`` (the
markdown report).

In PostgreSQL a run is one row of ``ta_runs`` keyed by (ticker, date); a re-analysis first copies
the row it replaces into ``ta_run_versions`` (version 1, 2, … per session), as the file version
keeps ``previous/<n>/``: ``doc`` holds exactly what ``state.json`` holds (JSON text: a NUL in
model text survives, escaped) and ``report`` what ``report.md`` holds. A what-if fork of a run is a
row of ``ta_run_forks`` keyed by (ticker, date, n), as the files keep ``whatif/<n>/``. The config
saved with a run never carries the database URL's password.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping
from typing import Any

from tradingagents.config import Settings, public_config, resolve_config
from tradingagents.storage.pg import database, pg_json, pg_text, redact_url, storage_url
from tradingagents.validation import validate_date, validate_ticker


def _safe_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(cfg, Settings) and not cfg.get("storage_url"):
        return cfg  # nothing to hide: resolved settings stay resolved (a plain copy is resolved again per call)
    out = dict(cfg)
    if out.get("storage_url"):
        out["storage_url"] = redact_url(out["storage_url"])
    return out


def _opt_text(value: Any) -> str | None:
    return None if value is None else pg_text(str(value))


class FileRunRecords:
    """The embedded default: ``storage.files_runs`` (state.json and report.md per run folder)."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config = _safe_config(resolve_config(config))

    def save_run(self, final_state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None):
        from tradingagents.storage.files_runs import save_run

        meta = dict(meta or {})
        if isinstance(meta.get("config"), Mapping):
            meta["config"] = _safe_config(meta["config"])
        return save_run(self.config, final_state, rating, meta)

    def list_runs(self, *, include_previous: bool = False) -> list[dict[str, Any]]:
        from tradingagents.storage.files_runs import list_runs

        return list_runs(self.config, include_previous=include_previous)

    def list_memory_used(self) -> list[dict[str, Any]]:
        from tradingagents.storage.files_runs import list_memory_used

        return list_memory_used(self.config)

    def load_run(self, ticker: str, date: str, version: int | None = None) -> dict[str, Any]:
        from tradingagents.storage.files_runs import load_run

        return load_run(self.config, ticker, date, version)

    def save_fork(self, final_state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None):
        from tradingagents.storage.files_runs import save_fork

        meta = dict(meta or {})
        if isinstance(meta.get("config"), Mapping):
            meta["config"] = _safe_config(meta["config"])
        return save_fork(self.config, final_state, rating, meta)

    def list_forks(self, ticker: str, date: str) -> list[dict[str, Any]]:
        from tradingagents.storage.files_runs import list_forks

        return list_forks(self.config, ticker, date)

    def load_fork(self, ticker: str, date: str, n: int) -> dict[str, Any]:
        from tradingagents.storage.files_runs import load_fork

        return load_fork(self.config, ticker, date, n)

    def update_run_meta(self, ticker: str, date: str, updates: Mapping[str, Any]) -> None:
        from tradingagents.storage.files_runs import update_run_meta

        update_run_meta(self.config, ticker, date, updates)

    def append_item(self, ticker: str, date: str, key: str, item: Mapping[str, Any]) -> int:
        """Append ``item`` to the list ``meta[key]`` of the saved run (``questions``, ``pm_notes``): the
        folder's lock held, state.json rewritten atomically; returns the list's new length
        (FileNotFoundError when there is no such run)."""
        from filelock import FileLock

        from tradingagents.fileio import atomic_write_all
        from tradingagents.storage.files_runs import (
            REPORT_FILE,
            STATE_FILE,
            document_json,
            load_document,
            render_report_markdown,
            run_dir,
            to_jsonable,
        )

        path = run_dir(self.config, ticker, date) / STATE_FILE
        if not path.is_file():
            raise FileNotFoundError(f"No saved run for {validate_ticker(ticker)} on {date} (looked for {path}).")
        with FileLock(str(path) + ".lock", timeout=30):
            doc = load_document(path)
            meta = doc.setdefault("meta", {})
            items = meta.get(key) if isinstance(meta.get(key), list) else []
            meta[key] = [*items, to_jsonable(dict(item))]
            atomic_write_all([  # the report shows them too (its appendix)
                (path, document_json(doc)),
                (path.parent / REPORT_FILE, render_report_markdown(doc.get("state") or {}, doc.get("rating"), meta)),
            ])
        return len(meta[key])

    def load_report(self, ticker: str, date: str) -> str:
        from tradingagents.storage.files_runs import REPORT_FILE, run_dir

        path = run_dir(self.config, ticker, date) / REPORT_FILE
        if not path.is_file():
            raise FileNotFoundError(f"No saved report for {validate_ticker(ticker)} on {date} (looked for {path}).")
        return path.read_text(encoding="utf-8")


def _listing(meta: Mapping[str, Any]) -> str:
    """``ta_runs.listing`` of a run with this meta (JSON text; see ``files_runs.listing_fields``)."""
    from tradingagents.storage.files_runs import listing_fields

    return pg_json(listing_fields(meta))


def _used(meta: Mapping[str, Any]) -> str:
    """``ta_runs.memory_used`` of a run with this meta (JSON text: null when it records none)."""
    used = meta.get("memory_used")
    return pg_json(used if isinstance(used, dict) else None)


# The columns of a row saved before ``ta_runs.listing`` existed, from its document's meta ``m``; a text's NUL (the
# JSON escape \u0000, which PostgreSQL's JSON types refuse) is read as U+FFFD, the document itself keeps it.
_LISTING_OF_META = (
    "jsonb_build_object('by', m ->> 'by', 'invented', COALESCE((m ->> 'invented')::boolean, false),"
    " 'blind', COALESCE((m ->> 'blind')::boolean, false), 'quick_think_llm', m -> 'quick_think_llm',"
    " 'deep_think_llm', m -> 'deep_think_llm', 'cost_usd', COALESCE(m -> 'usage' -> 'cost_usd', m -> 'cost_usd'),"
    " 'analysts', m -> 'analysts', 'analyst_execution', m -> 'analyst_execution', 'analyst_data', m -> 'analyst_data',"
    " 'max_debate_rounds', m -> 'max_debate_rounds', 'max_risk_discuss_rounds', m -> 'max_risk_discuss_rounds',"
    " 'elapsed_s', m -> 'elapsed_s')"
)  # the fields of files_runs.listing_fields (RUN_SHAPE_KEYS among them)
_USED_OF_META = "m -> 'memory_used'"


def _of_doc(*columns: str) -> str:
    """A sub-select of ``columns`` (expressions of ``m``) from the row's document, parsed once: without OFFSET 0
    the planner puts the parse in place of each ``m`` (seven parses a row for the listing, not one)."""
    return (f"(SELECT {', '.join(columns)} FROM (SELECT (replace(doc, '\\u0000', '\\ufffd')::jsonb) -> 'meta' AS m"
            " OFFSET 0) AS parsed)")


class PgRunRecords:
    """Run records in the desk database; see the module docstring."""

    def __init__(self, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self.config = resolve_config(config)
        self.url = url or storage_url(self.config)
        if not self.url:
            raise ValueError("PgRunRecords needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self._db = database(self.url)

    def locator(self, ticker: str, date: str) -> str:
        """Where a run lives, for messages and listings (no credentials)."""
        return f"{self._db.label}#ta_runs/{ticker}/{date}"

    def _doc(self, final_state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None):
        """(ticker, date, saved, doc, report) of a run or fork to store (the config's secrets left out)."""
        from tradingagents.storage.files_runs import render_report_markdown, to_jsonable

        cfg = self.config
        ticker = validate_ticker(final_state.get("company_of_interest") or (meta or {}).get("ticker"))
        date = validate_date(final_state.get("trade_date") or (meta or {}).get("date"), allow_future=True)
        meta_out = dict(to_jsonable(dict(meta or {})))
        meta_out.setdefault("llm_provider", cfg.get("llm_provider"))
        meta_out.setdefault("data_vendor", cfg.get("data_vendor"))
        meta_out["config"] = to_jsonable(public_config(_safe_config(meta_out.get("config") or cfg)))
        saved = _dt.datetime.now(_dt.UTC)
        doc = {"ticker": ticker, "date": date, "rating": rating, "saved_at": saved.isoformat(timespec="microseconds"),
               "meta": meta_out, "state": to_jsonable(dict(final_state))}
        return ticker, date, saved, doc, render_report_markdown(final_state, rating, meta_out)

    def save_fork(self, final_state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None) -> str:
        """A what-if fork as the session's next ``n`` in ``ta_run_forks`` (one transaction, the session's
        forks locked while the number is taken); returns its locator."""
        from tradingagents.storage.pg import run_lock_key

        ticker, date, saved, doc, report = self._doc(final_state, rating, meta)
        with self._db.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (run_lock_key(ticker, f"whatif:{date}"),))
            n = conn.execute("SELECT 1 + coalesce(max(n), 0) FROM ta_run_forks WHERE ticker = %s AND trade_date = %s",
                             (ticker, date)).fetchone()[0]
            conn.execute(
                "INSERT INTO ta_run_forks (ticker, trade_date, n, rating, saved_at, saved_at_text, llm_provider,"
                " data_vendor, doc, report) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (ticker, date, n, rating, saved, doc["saved_at"], _opt_text(doc["meta"].get("llm_provider")),
                 _opt_text(doc["meta"].get("data_vendor")), json.dumps(doc, ensure_ascii=False), pg_text(report)),
            )
        return f"{self.locator(ticker, date)}/whatif/{n}"

    def list_forks(self, ticker: str, date: str) -> list[dict[str, Any]]:
        tick, day = validate_ticker(ticker), validate_date(date, allow_future=True)
        with self._db.transaction() as conn:
            rows = conn.execute(
                "SELECT n, rating, saved_at_text, llm_provider, data_vendor, (doc::jsonb) -> 'meta' -> 'whatif'"
                " FROM ta_run_forks WHERE ticker = %s AND trade_date = %s ORDER BY n", (tick, day)).fetchall()
        return [{"n": n, "rating": rating, "saved_at": at or "", "path": f"{self.locator(tick, day)}/whatif/{n}",
                 "whatif": w if isinstance(w, dict) else {}, "llm_provider": provider, "data_vendor": vendor}
                for n, rating, at, provider, vendor, w in rows]

    def load_fork(self, ticker: str, date: str, n: int) -> dict[str, Any]:
        tick, day = validate_ticker(ticker), validate_date(date, allow_future=True)
        with self._db.transaction() as conn:
            row = conn.execute("SELECT doc FROM ta_run_forks WHERE ticker = %s AND trade_date = %s AND n = %s",
                               (tick, day, int(n))).fetchone()
        if row is None:
            raise FileNotFoundError(f"No what-if fork {int(n)} of {tick} on {day} (looked in {self._db.label}).")
        doc = json.loads(row[0])
        return {"state": doc.get("state") or {}, "rating": doc.get("rating"), "meta": doc.get("meta") or {}}

    def update_run_meta(self, ticker: str, date: str, updates: Mapping[str, Any]) -> None:
        """Add ``updates`` to the meta of the session's current run (its state, rating and report kept)."""
        from tradingagents.storage.files_runs import to_jsonable

        tick, day = validate_ticker(ticker), validate_date(date, allow_future=True)
        with self._db.transaction() as conn:
            row = conn.execute("SELECT doc FROM ta_runs WHERE ticker = %s AND trade_date = %s FOR UPDATE",
                               (tick, day)).fetchone()
            if row is None:
                raise FileNotFoundError(f"No saved run for {tick} on {day} (looked in {self._db.label}).")
            doc = json.loads(row[0])
            doc["meta"] = {**(doc.get("meta") or {}), **to_jsonable(dict(updates))}
            conn.execute("UPDATE ta_runs SET doc = %s, listing = %s, memory_used = %s WHERE ticker = %s AND"
                         " trade_date = %s", (json.dumps(doc, ensure_ascii=False), _listing(doc["meta"]),
                                              _used(doc["meta"]), tick, day))

    def save_run(self, final_state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None) -> str:
        ticker, date, saved, doc, report = self._doc(final_state, rating, meta)
        meta_out = doc["meta"]
        with self._db.transaction() as conn:
            conn.execute(  # the run it replaces becomes an earlier version (the same transaction)
                "INSERT INTO ta_run_versions (ticker, trade_date, version, rating, saved_at, saved_at_text, llm_provider,"
                " data_vendor, doc, report, listing) SELECT r.ticker, r.trade_date, 1 + coalesce((SELECT max(v.version)"
                " FROM ta_run_versions v WHERE v.ticker = r.ticker AND v.trade_date = r.trade_date), 0), r.rating,"
                " r.saved_at, r.saved_at_text, r.llm_provider, r.data_vendor, r.doc, r.report, r.listing FROM ta_runs r"
                " WHERE r.ticker = %s AND r.trade_date = %s",
                (ticker, date),
            )
            conn.execute(
                "INSERT INTO ta_runs (ticker, trade_date, rating, saved_at, saved_at_text, llm_provider, data_vendor,"
                " doc, report, listing, memory_used) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (ticker, trade_date) DO UPDATE SET rating = EXCLUDED.rating, saved_at = EXCLUDED.saved_at,"
                " saved_at_text = EXCLUDED.saved_at_text, llm_provider = EXCLUDED.llm_provider,"
                " data_vendor = EXCLUDED.data_vendor, doc = EXCLUDED.doc, report = EXCLUDED.report,"
                " listing = EXCLUDED.listing, memory_used = EXCLUDED.memory_used",
                (ticker, date, rating, saved, doc["saved_at"], _opt_text(meta_out.get("llm_provider")),
                 _opt_text(meta_out.get("data_vendor")), json.dumps(doc, ensure_ascii=False), pg_text(report),
                 _listing(meta_out), _used(meta_out)),
            )
        return self.locator(ticker, date)

    def list_runs(self, *, include_previous: bool = False) -> list[dict[str, Any]]:
        """As the files' ``list_runs``. Each row's fields come from its ``listing`` column, so a listing reads
        no document (2,000 runs: 2.0 s when every document was parsed, twice); a row saved before the column
        is listed from its document and then given its listing."""
        from tradingagents.storage.files_runs import listing_fields

        listing = f"COALESCE(listing, {_of_doc(_LISTING_OF_META)}), listing IS NULL"
        query = ("SELECT ticker, trade_date, rating, saved_at_text, llm_provider, data_vendor, NULL::integer, saved_at,"
                 f" {listing} FROM ta_runs")
        if include_previous:
            query += (" UNION ALL SELECT ticker, trade_date, rating, saved_at_text, llm_provider, data_vendor, version,"
                      f" saved_at, {listing} FROM ta_run_versions")
        with self._db.transaction() as conn:
            rows = conn.execute(f"SELECT * FROM ({query}) AS runs ORDER BY 8 DESC, 2 DESC, 1 DESC").fetchall()
        if any(row[-1] for row in rows):
            self._fill_listings(include_previous)
        out = []
        for ticker, day, rating, saved_at, provider, vendor, version, _at, fields, _old in rows:
            out.append({
                "ticker": ticker,
                "date": day.isoformat(),
                "rating": rating,
                "path": self.locator(ticker, day.isoformat()) + (f"@{version}" if version is not None else ""),
                "saved_at": saved_at or "",
                "version": version,
                "previous": version is not None,
                **listing_fields({**(fields if isinstance(fields, dict) else {}), "llm_provider": provider,
                                  "data_vendor": vendor}),
            })
        return out

    def _fill_listings(self, include_previous: bool) -> None:
        """Give the rows saved before ``ta_runs.listing`` existed their listing (and memory used), each from its
        document parsed once (once; best effort: a row left without one is read from its document again)."""
        import logging

        try:
            with self._db.transaction() as conn:
                conn.execute(f"UPDATE ta_runs SET (listing, memory_used) = {_of_doc(_LISTING_OF_META, _USED_OF_META)}"
                             " WHERE listing IS NULL")
                if include_previous:
                    conn.execute(f"UPDATE ta_run_versions SET listing = {_of_doc(_LISTING_OF_META)}"
                                 " WHERE listing IS NULL")
        except Exception:  # noqa: BLE001 - what was read is whole; only the next read is slower
            logging.getLogger(__name__).warning("could not fill the runs' listing columns", exc_info=True)

    def list_memory_used(self) -> list[dict[str, Any]]:
        """``{ticker, date, memory_used}`` of every saved run that records what its roles remembered, from the
        ``memory_used`` column (a row saved before it: from its document, then filled)."""
        with self._db.transaction() as conn:
            rows = conn.execute(
                f"SELECT ticker, trade_date, CASE WHEN listing IS NULL THEN {_of_doc(_USED_OF_META)} ELSE memory_used"
                " END, listing IS NULL FROM ta_runs ORDER BY ticker, trade_date"
            ).fetchall()
        if any(row[-1] for row in rows):
            self._fill_listings(False)
        return [{"ticker": t, "date": d.isoformat(), "memory_used": u} for t, d, u, _old in rows if isinstance(u, dict)]

    def _row(self, column: str, ticker: str, date: str, version: int | None = None) -> str:
        tick, day = validate_ticker(ticker), validate_date(date, allow_future=True)
        with self._db.transaction() as conn:
            if version is None:
                row = conn.execute(
                    f"SELECT {column} FROM ta_runs WHERE ticker = %s AND trade_date = %s", (tick, day)
                ).fetchone()
            else:
                row = conn.execute(
                    f"SELECT {column} FROM ta_run_versions WHERE ticker = %s AND trade_date = %s AND version = %s",
                    (tick, day, int(version)),
                ).fetchone()
        if row is None:
            which = "" if version is None else f" (earlier version {int(version)})"
            raise FileNotFoundError(
                f"No saved run for {tick} on {day}{which} (looked in {self._db.label}). Run the analysis first."
            )
        return row[0]

    def load_run(self, ticker: str, date: str, version: int | None = None) -> dict[str, Any]:
        doc = json.loads(self._row("doc", ticker, date, version))
        return {"state": doc.get("state") or {}, "rating": doc.get("rating"), "meta": doc.get("meta") or {}}

    def load_report(self, ticker: str, date: str) -> str:
        return self._row("report", ticker, date)

    def append_item(self, ticker: str, date: str, key: str, item: Mapping[str, Any]) -> int:
        """As ``FileRunRecords.append_item``: the row locked, the run's document rewritten, one transaction."""
        from tradingagents.storage.files_runs import render_report_markdown, to_jsonable

        tick, day = validate_ticker(ticker), validate_date(date, allow_future=True)
        with self._db.transaction() as conn:
            row = conn.execute("SELECT doc FROM ta_runs WHERE ticker = %s AND trade_date = %s FOR UPDATE",
                               (tick, day)).fetchone()
            if row is None:
                raise FileNotFoundError(f"No saved run for {tick} on {day} (looked in {self._db.label}).")
            doc = json.loads(row[0])
            meta = doc.setdefault("meta", {})
            items = meta.get(key) if isinstance(meta.get(key), list) else []
            meta[key] = [*items, to_jsonable(dict(item))]
            report = render_report_markdown(doc.get("state") or {}, doc.get("rating"), meta)
            conn.execute("UPDATE ta_runs SET doc = %s, report = %s, listing = %s, memory_used = %s WHERE ticker = %s"
                         " AND trade_date = %s", (json.dumps(doc, ensure_ascii=False), pg_text(report),
                                                  _listing(meta), _used(meta), tick, day))
        return len(meta[key])

    def __repr__(self) -> str:
        return f"PgRunRecords(url={self._db.label!r})"
