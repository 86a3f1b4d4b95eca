"""Lessons with a track record: how often each lesson was retrieved and how the decisions that used it
turned out, for the Memories page (UI-neutral; tested without a browser).

The record joins two stored facts: each saved run's ``meta["memory_used"]["lessons"]`` (the lessons
each role memory gave that run, by their content-derived id, ``situation_memory.lesson_id``) and the
memory log's settled entries (the run's decision on the same ticker and date, with its alpha and
``rating.was_right``). A lesson's figures:

- **retrieved**: the number of saved runs it was given to (a run counts once per memory);
- **settled**: how many of those runs' decisions have settled; **right** / **wrong** by
  ``rating.was_right`` (bullish tiers need a positive alpha, bearish a negative one, Hold one within
  the band);
- **helpfulness**: the share of those settled decisions that were right (``right / settled``), shown
  with ``settled``; None (unrated) until one has settled. ``mean_alpha`` is the settled decisions'
  mean alpha (the stock's, not the decision's, so a right Sell has a negative one).

Sorting by helpfulness puts rated lessons first, highest share first, more settled decisions first on
a tie, then the most retrieved.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tradingagents.i18n import N_
from tradingagents.rating import normalize_rating, was_right

__all__ = ["SORTS", "TrackRecord", "lesson_rows", "ranked_rows", "sort_rows", "track_records"]

SORTS = {
    "helpfulness": N_("Helpfulness (share of settled decisions that were right)"),
    "retrieved": N_("Times retrieved"),
    "newest": N_("Newest first"),
}


@dataclass
class TrackRecord:
    """One lesson's record in one memory (see the module docstring)."""

    memory: str
    lesson_id: str
    retrieved: int = 0
    decisions: list[tuple[str, str]] = field(default_factory=list)  # (ticker, date) of the runs given it
    alphas: list[float] = field(default_factory=list)  # of the settled ones
    right: int = 0
    wrong: int = 0

    @property
    def settled(self) -> int:
        return len(self.alphas)

    @property
    def helpfulness(self) -> float | None:
        judged = self.right + self.wrong
        return self.right / judged if judged else None

    @property
    def mean_alpha(self) -> float | None:
        return sum(self.alphas) / len(self.alphas) if self.alphas else None


def track_records(runs: Iterable[Mapping[str, Any]], entries: Iterable[Mapping[str, Any]]
                  ) -> dict[tuple[str, str], TrackRecord]:
    """``{(memory name, lesson id): TrackRecord}`` from runs (``{ticker, date, memory_used}``, as
    ``storage.list_memory_used`` gives them) and the memory log's entries (``load_entries``)."""
    settled = {(e.get("ticker"), e.get("date")): e for e in entries
               if not e.get("pending") and isinstance(e.get("alpha"), int | float)}
    out: dict[tuple[str, str], TrackRecord] = {}
    for run in runs:
        key = (run.get("ticker"), run.get("date"))
        lessons = ((run.get("memory_used") or {}).get("lessons") or {})
        for name, items in lessons.items():
            ids = dict.fromkeys(str(i.get("id")) for i in items or [] if isinstance(i, Mapping) and i.get("id"))
            for lid in ids:  # a run counts once per lesson
                rec = out.setdefault((str(name), lid), TrackRecord(str(name), lid))
                rec.retrieved += 1
                rec.decisions.append(key)
                entry = settled.get(key)
                if entry is None:
                    continue
                alpha = float(entry["alpha"])
                rec.alphas.append(alpha)
                verdict = was_right(normalize_rating(str(entry.get("rating") or "")) or "Hold", alpha)
                if verdict is True:
                    rec.right += 1
                elif verdict is False:
                    rec.wrong += 1
    return out


def lesson_rows(memory_name: str, lessons: Iterable[Mapping[str, Any]],
                records: Mapping[tuple[str, str], TrackRecord]) -> list[dict[str, Any]]:
    """One row per stored lesson of a memory (``memory.lessons()``, oldest first) with its record."""
    rows = []
    get = records.get
    for order, item in enumerate(lessons):
        rec = get((memory_name, item["id"]))
        if rec is None:  # never retrieved (most lessons of a large memory): an empty record's figures
            rows.append({"id": item["id"], "lesson": item["recommendation"], "situation": item["situation"],
                         "known_from": item.get("known_from"), "retired": bool(item.get("retired")),
                         "retrieved": 0, "settled": 0, "right": 0, "wrong": 0, "helpfulness": None,
                         "mean_alpha": None, "decisions": [], "order": order})
            continue
        rows.append({"id": item["id"], "lesson": item["recommendation"], "situation": item["situation"],
                     "known_from": item.get("known_from"), "retired": bool(item.get("retired")),
                     "retrieved": rec.retrieved, "settled": rec.settled, "right": rec.right, "wrong": rec.wrong,
                     "helpfulness": rec.helpfulness, "mean_alpha": rec.mean_alpha,
                     "decisions": list(rec.decisions), "order": order})
    return rows


def _sort_key(by: str, helpfulness: float | None, settled: int, retrieved: int, order: int) -> tuple:
    if by == "helpfulness":
        return (helpfulness is None, -(helpfulness or 0.0), -settled, -retrieved, order)
    if by == "retrieved":
        return (-retrieved, order)
    if by == "newest":
        return (-order,)
    raise ValueError(f"Unknown sort {by!r}: use one of {', '.join(SORTS)}.")


def sort_rows(rows: list[dict[str, Any]], by: str = "helpfulness") -> list[dict[str, Any]]:
    """Rows sorted as ``SORTS`` names them (ValueError for another key)."""
    _sort_key(by, None, 0, 0, 0)  # an unknown order fails even with no rows
    return sorted(rows, key=lambda r: _sort_key(by, r["helpfulness"], r["settled"], r["retrieved"], r["order"]))


def ranked_rows(memory_name: str, lessons: Iterable[Mapping[str, Any]],
                records: Mapping[tuple[str, str], TrackRecord], by: str = "helpfulness",
                limit: int | None = None) -> tuple[int, list[dict[str, Any]]]:
    """``(number of lessons, sort_rows(lesson_rows(...), by)[:limit])``, with a row built only for the lessons
    shown: a memory of 50,000 lessons built 50,000 rows on every rerun of the page to show 500."""
    items = list(lessons)
    keys = []
    for order, item in enumerate(items):
        rec = records.get((memory_name, item["id"]))
        keys.append(_sort_key(by, None, 0, 0, order) if rec is None
                    else _sort_key(by, rec.helpfulness, rec.settled, rec.retrieved, order))
    picked = sorted(range(len(items)), key=keys.__getitem__)[:limit]
    rows = []
    for order in picked:
        rows += lesson_rows(memory_name, [items[order]], records)
        rows[-1]["order"] = order
    return len(items), rows
