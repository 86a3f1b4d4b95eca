"""The Memory log page's view of the log (UI-neutral): its entries as rows, newest first, without their texts.

``read_log`` reads the log's summary (``load_summary``: the entries without their decisions and
reflections) into one ``Entry`` per decision; the page reads the texts of the entries it shows only
(``Log.texts``, the log's ``entry_texts``). ``studio.ui.memory_log`` keeps one ``Log`` per version of
the log file for the whole server, and reads it once at server start (``studio.ui.warm_server``).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from tradingagents import figures
from tradingagents.i18n import N_
from tradingagents.memory.log_cache import COLUMNS as SUMMARY_COLUMNS
from tradingagents.rating import RATINGS_5_TIER, direction
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


# ---------------------------------------------------------------------------------------------
# what a call earned, the equity of following the calls as a backtest would, what memory changed


def call_alpha(rating: str, alpha: float | None) -> float | None:
    """The alpha the call earned: the stock's alpha signed by the call's direction (a Buy or Overweight
    earns the stock's alpha, an Underweight or Sell its opposite, a Hold nothing); None without an alpha.
    The log's tag keeps the stock's alpha; this is what the page shows beside it."""
    return None if alpha is None else direction(rating) * alpha


def long_only_equity(df):
    """Growth of 1 from following the settled decisions under the backtest's long-only rules
    (``backtest.positions.LONG_ONLY``: Buy 1.0, Overweight 0.5, Underweight and Sell 0.0 (flat, never
    short), Hold keeps the ticker's previous position, flat before its first decision), against holding
    the benchmark over the same windows. Decisions in the order their windows closed; each window's
    return is position × raw return; the windows are compounded one after another (overlapping windows
    are not netted), as ``charts.equity_curve`` does. Columns: date, ticker, rating, when, strategy,
    benchmark."""
    from studio import charts
    from tradingagents.backtest.positions import LONG_ONLY, target_position  # only to draw this chart

    def sizes(settled):  # each ticker's position after each decision, in decision order; given back in row order
        held: dict[str, float] = {}
        size_of = {}
        for rec in settled.sort_values(["date", "ticker"], kind="stable").itertuples(index=False):
            held[rec.ticker] = size_of[(rec.date, rec.ticker)] = target_position(rec.rating, held.get(rec.ticker, 0.0),
                                                                                 LONG_ONLY)
        return [size_of[(d, t)] for d, t in zip(settled["date"], settled["ticker"], strict=True)]

    return charts.equity_curve(df, positions=sizes)


LONG_ONLY_CAPTION = N_(
    "Growth of 1 from following the settled decisions as a backtest does, long-only: Buy holds a full "
    "position, Overweight half, Underweight and Sell are flat (never short), Hold keeps the position the "
    "ticker had. The windows' returns are compounded in the order they closed (overlapping windows are not "
    "netted); the benchmark line compounds the benchmark's return over the same windows. No costs."
)


class MemoryChange(NamedTuple):
    date: str
    ticker: str
    before: str  # the rating the evidence alone gave
    after: str  # the rating memory made of it
    alpha: float  # the stock's alpha over the window


@functools.lru_cache(maxsize=1)
def _memory_res() -> tuple[re.Pattern[str], ...]:
    """A regex per language for each of ``MEMORY_REASONS`` (the catalogue's template: ``before`` and ``after``
    captured, any other field matched lazily), made once per process."""
    from tradingagents.i18n import LANGUAGES, translator

    out = []
    for msgid in MEMORY_REASONS:
        for lang in LANGUAGES:
            text, pattern, last = translator(lang)(msgid), "", 0
            for field in re.finditer(r"\{([A-Za-z_]+)\}", text):
                name = field.group(1)
                pattern += re.escape(text[last:field.start()])
                pattern += rf"(?P<{name}>[^\s;,.()；。，（）、]+)" if name in ("before", "after") else ".*?"
                last = field.end()
            out.append(re.compile(pattern + re.escape(text[last:])))
    return tuple(out)


MEMORY_REASONS = (
    "moderated from {before} to {after} because the last {rating} call on {ticker} lost ({alpha} alpha)",
    "moved from {before} to {after} because the last Hold on {ticker} missed a {alpha} alpha move and the "
    "signals lean the same way",
)
"""The offline Portfolio Manager's sentences for a rating a past outcome changed (``offline.roles``)."""


def _canonical(word: str) -> str | None:
    from tradingagents.i18n import LANGUAGES, rating_label

    for tier in RATINGS_5_TIER:
        if word == tier or any(word == rating_label(tier, lang) for lang in LANGUAGES):
            return tier
    return None


def memory_changes(entries: Iterable[Entry], texts: Mapping[tuple[str, str], tuple[str, str]]) -> list[MemoryChange]:
    """The settled decisions whose rating memory changed (the decision says which rating the evidence
    gave and which one a past outcome made of it), from their decision texts."""
    regexes = _memory_res()
    out = []
    for e in entries:
        if not e.settled:
            continue
        decision = (texts.get((e.date, e.ticker)) or ("", ""))[0]
        for regex in regexes:
            match = regex.search(decision or "")
            if match:
                before, after = _canonical(match.group("before")), _canonical(match.group("after"))
                if before and after and after == e.rating:
                    out.append(MemoryChange(e.date, e.ticker, before, after, float(e.alpha)))
                break
    return out


def memory_line(changes: list[MemoryChange], n_settled: int, t) -> str:
    """One line: how many settled decisions memory changed and the alpha it earned or cost on them (what
    the changed calls earned minus what the calls the evidence alone gave would have earned)."""
    if not changes:
        return t("Memory changed none of the {n} settled decisions: every rating here is the one the evidence "
                 "alone gave.", n=f"{n_settled:,}")
    effect = sum(call_alpha(c.after, c.alpha) - call_alpha(c.before, c.alpha) for c in changes)
    fields = {"changed": len(changes), "n": f"{n_settled:,}", "effect": f"{abs(effect) * 100:.2f}"}
    if effect > 0:
        return t("Memory changed {changed} of the {n} settled decisions; on those it earned {effect} points of "
                 "alpha against the ratings the evidence alone gave.", **fields)
    if effect < 0:
        return t("Memory changed {changed} of the {n} settled decisions; on those it cost {effect} points of "
                 "alpha against the ratings the evidence alone gave.", **fields)
    return t("Memory changed {changed} of the {n} settled decisions; on those it neither earned nor cost alpha "
             "against the ratings the evidence alone gave.", **fields)
