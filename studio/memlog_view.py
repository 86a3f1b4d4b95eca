"""The Memory log page's view of the log (UI-neutral): its entries as rows, newest first, without their texts.

``read_log`` reads the log's summary (``load_summary``: the entries without their decisions and
reflections) into one ``Entry`` per decision; the page reads the texts of the entries it shows only
(``Log.texts``, the log's ``entry_texts``). ``studio.ui.memory_log`` keeps one ``Log`` per version of
the log file for the whole server, and reads it once at server start (``studio.ui.warm_server``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from tradingagents import figures
from tradingagents.memory.log_cache import COLUMNS as SUMMARY_COLUMNS
from tradingagents.storage import open_memory_log


def file_signature(path: Path) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) of the log: a new value for every write (writes replace the file)."""
    try:
        st_ = os.stat(path)
    except FileNotFoundError:
        return None
    return (st_.st_size, st_.st_mtime_ns, st_.st_ino)


class Entry(NamedTuple):
    """What the filters and counts read of an entry (the rest is read for the entries on the page only)."""

    date: str
    ticker: str
    rating: str
    status: str  # "pending" or "settled" (the log's English words)
    alpha: float | None  # None when absent, never NaN
    row: list[Any]  # the entry as the log gave it, without its texts: its values of SUMMARY_COLUMNS

    @property
    def source(self) -> dict[str, Any]:
        """The entry as ``load_entries(texts=False)`` gives it (made for the entries drawn or charted only)."""
        return dict(zip(SUMMARY_COLUMNS, self.row, strict=True))

    @property
    def settled(self) -> bool:
        """Settled with an alpha: what the counts, the average and the charts use."""
        return self.status == "settled" and self.alpha is not None


class Log(NamedTuple):
    entries: list[Entry]  # newest first (date descending, ticker ascending)
    tickers: list[str]  # sorted
    problems: list[str]
    texts: Callable[[Iterable[tuple[str, str]]], dict[tuple[str, str], tuple[str, str]]]  # the log's entry_texts


_DATE, _TICKER, _RATING, _PENDING, _ALPHA = map(SUMMARY_COLUMNS.index, ("date", "ticker", "rating", "pending", "alpha"))


def read_log(config) -> Log:
    """The log as it is now: its entries newest first (without their texts), its tickers and its problems."""
    log = open_memory_log(config)  # files, or the desk's database
    number = figures.number
    # rows, not a dict per entry: 20,000 dicts were a third of a new server's read of the log
    entries = [Entry(str(r[_DATE] or ""), str(r[_TICKER] or ""), str(r[_RATING] or ""),
                     "pending" if r[_PENDING] else "settled", number(r[_ALPHA]), r)
               for r in log.load_summary()]
    entries.sort(key=lambda r: r.ticker)
    entries.sort(key=lambda r: r.date, reverse=True)  # stable: ticker ascending within a day
    return Log(entries, sorted({r.ticker for r in entries}), list(log.problems), log.entry_texts)
