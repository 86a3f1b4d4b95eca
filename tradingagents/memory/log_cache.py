"""The memory log's entries cache: ``<log stem>-entries.json`` beside the log, what ``load_entries`` read.

Parsing a 20,000-entry log into entries takes 0.5-1 s; reading this JSON back takes ~0.1 s. It is only
a cache: the log stays the one source of truth. Each cache names the version of the log it was made
from (device, inode, size, mtime_ns: a store appends, a rewrite replaces the file, so every write
changes it) and where the writers' finished entries ended in it (``_finished_end``: a torn append is
never read), and it is used only when both match the log as it is now. A missing, stale, damaged or
foreign file is ignored; the log is then parsed and the cache written again (``fileio.atomic_write``,
not fsynced: a lost cache is rebuilt). A cache that cannot be written (a read-only folder, a full
disk) only means the next read parses again.

Format (JSON)::

    {"format": "tradingagents memory-log entries 1", "log": [dev, ino, size, mtime_ns], "end": int|null,
     "columns": [...COLUMNS], "entries": [[value per column], ...], "problems": ["...", ...]}

The name is not ``<log name>.<something>``: the log's writers delete ``.<log name>.*.tmp`` leftovers while
they hold the log's lock, and this cache is written by readers, which do not take it.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from tradingagents.fileio import atomic_write
from tradingagents.memory.log_format import META_KEYS

__all__ = ["COLUMNS", "FORMAT", "cache_path", "read_cache", "write_cache"]

FORMAT = "tradingagents memory-log entries 1"
COLUMNS = ("date", "ticker", "rating", "pending", "raw", "alpha", "holding", "decision", "reflection", *META_KEYS)
_NUMBER = (int, float)


def cache_path(log_path: Path) -> Path:
    return Path(log_path).with_name(f"{Path(log_path).stem}-entries.json")


def _valid_row(row: Any, n: int) -> bool:
    if not isinstance(row, list) or len(row) != n:
        return False
    date, ticker, rating, pending, raw, alpha = row[:6]
    return (isinstance(date, str) and isinstance(ticker, str) and isinstance(rating, str)
            and isinstance(pending, bool) and (raw is None or isinstance(raw, _NUMBER))
            and (alpha is None or isinstance(alpha, _NUMBER)) and isinstance(row[7], str) and isinstance(row[8], str))


def read_cache(log_path: Path, key: tuple) -> tuple[list[dict[str, Any]], list[str]] | None:
    """(entries, problems) as cached for the log version ``key`` ((dev, ino, size, mtime_ns, end)), else None."""
    try:
        data = json.loads(cache_path(log_path).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    if data.get("log") != list(key[:4]) or data.get("end") != key[4] or data.get("columns") != list(COLUMNS):
        return None
    rows, problems = data.get("entries"), data.get("problems")
    if not isinstance(rows, list) or not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return None
    n = len(COLUMNS)
    if not all(_valid_row(r, n) for r in rows):
        return None
    return [dict(zip(COLUMNS, r, strict=True)) for r in rows], problems


def write_cache(log_path: Path, key: tuple, entries: list[dict[str, Any]], problems: list[str]) -> bool:
    """Write the cache of the log version ``key``; False when it could not be written (never raises OSError)."""
    payload = {"format": FORMAT, "log": list(key[:4]), "end": key[4], "columns": list(COLUMNS),
               "entries": [[e.get(c) for c in COLUMNS] for e in entries], "problems": list(problems)}
    try:
        text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):  # a value JSON cannot hold: no cache, the log is parsed each time
        return False
    with contextlib.suppress(OSError):
        atomic_write(cache_path(log_path), text, durable=False)
        return True
    return False
