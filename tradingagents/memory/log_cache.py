"""The memory log's entries cache: ``<log stem>-entries.json`` beside the log, what ``load_entries`` read.

Parsing a 20,000-entry log into entries takes 0.5-1 s; reading this file back takes ~0.1 s, and its
summary alone (every field but the two texts, what the Memory log page filters and counts on) a
fraction of that. It is only a cache: the log stays the one source of truth. Each cache names the
version of the log it was made from (device, inode, size, mtime_ns: a store appends, a rewrite
replaces the file, so every write changes it) and where the writers' finished entries ended in it
(``_finished_end``: a torn append is never read), and it is used only when both match the log as it
is now. A missing, stale, damaged or foreign file is ignored; the log is then parsed and the cache
written again (``fileio.atomic_write``, not fsynced: a lost cache is rebuilt). A cache that cannot be
written (a read-only folder, a full disk) only means the next read parses again.

Format: three lines of JSON (UTF-8), so the summary is read without decoding the texts::

    {"format": "tradingagents memory-log entries 2", "log": [dev, ino, size, mtime_ns], "end": int|null,
     "columns": [...COLUMNS], "texts": [...TEXT_COLUMNS], "problems": ["...", ...],
     "summary_bytes": int, "text_bytes": [int, ...]}
    [[value per column], ...]                      (one row per entry, file order)
    [[decision, reflection], ...]                  (the same order; item i is text_bytes[i] bytes long)

``summary_bytes`` (the second line's length without its newline) lets a summary read stop there, and
``text_bytes`` lets a reader decode only the texts it shows (``read_texts``): item ``i`` starts after
the ``[`` of the third line and the items (and commas) before it.

The name is not ``<log name>.<something>``: the log's writers delete ``.<log name>.*.tmp`` leftovers while
they hold the log's lock, and this cache is written by readers, which do not take it.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any, NamedTuple

from tradingagents.fileio import atomic_write
from tradingagents.memory.log_format import META_KEYS

__all__ = ["COLUMNS", "FORMAT", "TEXT_COLUMNS", "Cached", "cache_path", "entries_of", "paused_gc", "read_cache",
           "read_texts", "summary_rows", "write_cache"]

FORMAT = "tradingagents memory-log entries 2"
COLUMNS = ("date", "ticker", "rating", "pending", "raw", "alpha", "holding", *META_KEYS)
TEXT_COLUMNS = ("decision", "reflection")
_NUMBER = (int, float)
_HEAD = COLUMNS.index("holding") + 1
_ENTRY_KEYS = (*COLUMNS[:_HEAD], *TEXT_COLUMNS, *COLUMNS[_HEAD:])


class Cached(NamedTuple):
    """What ``read_cache`` read: the summary ``rows`` (one list of ``COLUMNS`` values per entry, file
    order), the ``(decision, reflection)`` of each (None when read without the texts), the problems, and
    where each entry's texts are in the cache file (``spans[i]``: byte offsets) as of the file version
    ``file_sig``. ``entries_of`` makes ``load_entries``' dicts of them."""

    rows: list[list[Any]]
    texts: list[list[str]] | None
    problems: list[str]
    spans: list[tuple[int, int]]
    file_sig: tuple[int, int, int, int]


def entries_of(rows: list[list[Any]], texts: list[list[str]] | None = None) -> list[dict[str, Any]]:
    """The entries as ``load_entries`` gives them (its keys in its order) of summary rows and, when
    given, their texts (the texts come after the outcome, before the meta)."""
    if texts is None:
        return [dict(zip(COLUMNS, r, strict=True)) for r in rows]
    return [dict(zip(_ENTRY_KEYS, (*r[:_HEAD], *t, *r[_HEAD:]), strict=True)) for r, t in zip(rows, texts, strict=True)]


def summary_rows(entries: list[dict[str, Any]]) -> list[list[Any]]:
    """Entries (with their texts or without) as summary rows: each one's values of ``COLUMNS``."""
    return [[e.get(c) for c in COLUMNS] for e in entries]


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a whole log is read: its entries are ~20 new objects each,
    none of them garbage, and in a server's heap every collection they set off walks every object it
    holds. On 20,000 entries in the app's server that was 40-130 ms of a 0.3-0.5 s read (reference
    counting still frees everything; a collection that was due runs after)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def cache_path(log_path: Path) -> Path:
    return Path(log_path).with_name(f"{Path(log_path).stem}-entries.json")


def _file_sig(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _valid_row(row: Any, n: int) -> bool:
    if not isinstance(row, list) or len(row) != n:
        return False
    date, ticker, rating, pending, raw, alpha = row[:6]
    return (isinstance(date, str) and isinstance(ticker, str) and isinstance(rating, str)
            and isinstance(pending, bool) and (raw is None or isinstance(raw, _NUMBER))
            and (alpha is None or isinstance(alpha, _NUMBER)))


def _valid_texts(item: Any) -> bool:
    return isinstance(item, list) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], str)


def _header(line: bytes, key: tuple) -> dict | None:
    """The header (the first line) of a cache of the log version ``key``, else None."""
    try:
        head = json.loads(line)
    except ValueError:
        return None
    if not isinstance(head, dict) or head.get("format") != FORMAT or not line.endswith(b"\n"):
        return None
    if (head.get("log") != list(key[:4]) or head.get("end") != key[4] or head.get("columns") != list(COLUMNS)
            or head.get("texts") != list(TEXT_COLUMNS)):
        return None
    problems, sizes, summary = head.get("problems"), head.get("text_bytes"), head.get("summary_bytes")
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return None
    if not isinstance(sizes, list) or not all(type(s) is int and s >= 2 for s in sizes):
        return None
    return head if type(summary) is int and summary >= 2 else None


def read_cache(log_path: Path, key: tuple, *, texts: bool = True) -> Cached | None:
    """The entries cached for the log version ``key`` ((dev, ino, size, mtime_ns, end)), else None.

    ``texts=False``: the entries without their ``decision`` and ``reflection`` (the third line is not
    read; the file's size tells it is whole); ``read_texts`` reads them for the entries shown.
    """
    try:
        with open(cache_path(log_path), "rb") as fh:
            file_sig = _file_sig(os.fstat(fh.fileno()))
            first = fh.readline()
            found = _header(first, key)
            if found is None:
                return None
            head = found
            summary = fh.read(head["summary_bytes"] + 1)
            rest = fh.read() if texts else b""
    except OSError:
        return None
    sizes: list[int] = head["text_bytes"]
    end2 = len(first) + len(summary)  # where the third line starts
    # the third line is "[" + the items joined by "," + "]": a cut or altered file has another size
    if not summary.endswith(b"\n") or file_sig[2] - end2 != 2 + sum(sizes) + max(len(sizes) - 1, 0):
        return None
    try:
        rows = json.loads(summary)
    except ValueError:
        return None
    n = len(COLUMNS)
    if not isinstance(rows, list) or len(rows) != len(sizes) or not all(_valid_row(r, n) for r in rows):
        return None
    starts = accumulate((s + 1 for s in sizes), initial=end2 + 1)  # +1: the comma after each item
    spans = [(start, start + size) for start, size in zip(starts, sizes, strict=False)]
    items = None
    if texts:
        try:
            items = json.loads(rest)
        except ValueError:
            return None
        if not isinstance(items, list) or len(items) != len(rows) or not all(_valid_texts(t) for t in items):
            return None
    return Cached(rows, items, list(head["problems"]), spans, file_sig)


def read_texts(log_path: Path, file_sig: tuple, spans: list[tuple[int, int]]) -> list[tuple[str, str]] | None:
    """``(decision, reflection)`` at each of ``spans`` in the cache file, when the file is still the
    version ``file_sig`` that ``read_cache`` read (it is replaced whole on every write); else None."""
    try:
        with open(cache_path(log_path), "rb") as fh:
            if _file_sig(os.fstat(fh.fileno())) != tuple(file_sig):
                return None
            out = []
            for start, end in spans:
                fh.seek(start)
                item = json.loads(fh.read(end - start))
                if not _valid_texts(item):
                    return None
                out.append((item[0], item[1]))
    except (OSError, ValueError):
        return None
    return out


def write_cache(log_path: Path, key: tuple, entries: list[dict[str, Any]], problems: list[str]) -> bool:
    """Write the cache of the log version ``key``; False when it could not be written (never raises OSError)."""
    try:
        items = [json.dumps([e.get(c) for c in TEXT_COLUMNS], ensure_ascii=False, separators=(",", ":")).encode()
                 for e in entries]
        rows = json.dumps(summary_rows(entries), ensure_ascii=False, separators=(",", ":"))
        summary = rows.encode()
        head = json.dumps({"format": FORMAT, "log": list(key[:4]), "end": key[4], "columns": list(COLUMNS),
                           "texts": list(TEXT_COLUMNS), "problems": list(problems), "summary_bytes": len(summary),
                           "text_bytes": [len(i) for i in items]}, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # a value JSON cannot hold: no cache, the log is parsed each time
        return False
    # json.dumps escapes every newline inside a string: each part is one line
    payload = b"".join((head.encode(), b"\n", summary, b"\n[", b",".join(items), b"]"))
    with contextlib.suppress(OSError):
        atomic_write(cache_path(log_path), payload, durable=False)
        return True
    return False
