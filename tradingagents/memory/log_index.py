"""The memory log's key index: ``<log>.idx``, so that a store appends without reading the log.

The sidecar is ASCII text, appended to by every store and rewritten by every whole-log rewrite::

    tradingagents memory-log index 1
    + 2024-05-10 NVDA          a (date, ticker) entry of the log
    @ <inode> <size> <mtime_ns>   the log as the last writer left it (always the last line)

It is only a cache: a missing, damaged or stale index (the log was edited by hand, replaced, or a
writer died between its two appends) is never trusted; the log is then read in full and the index
written again. What it buys: the duplicate check of a store is one ``bytes.find`` in a file of
~20 bytes an entry instead of parsing the log, and the stamp tells which prefix of the log a
writer finished, so anything after it that is not a whole entry is a torn append.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["HEADER", "LogIndex", "Stamp", "index_path", "key_line", "read_index", "render_index", "render_index_lines",
           "stamp_line"]

HEADER = b"tradingagents memory-log index 1\n"


@dataclass(frozen=True)
class Stamp:
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Stamp:
        return cls(st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass
class LogIndex:
    data: bytes  # the sidecar's bytes as read (keys are searched in it)
    stamp: Stamp

    def has(self, date: str, ticker: str) -> bool:
        # every line follows a newline (the header ends with one): search whole lines only
        return self.data.find(b"\n" + key_line(date, ticker)) >= 0


def index_path(log_path: Path) -> Path:
    return Path(str(log_path) + ".idx")


def key_line(date: str, ticker: str) -> bytes:
    return f"+ {date} {ticker}\n".encode("ascii")


def stamp_line(stamp: Stamp) -> bytes:
    return f"@ {stamp.ino} {stamp.size} {stamp.mtime_ns}\n".encode("ascii")


def render_index(keys: Iterable[tuple[str, str]], stamp: Stamp) -> bytes:
    return HEADER + "".join([f"+ {d} {t}\n" for d, t in keys]).encode("ascii") + stamp_line(stamp)  # key_line's format


def render_index_lines(lines: list[str], stamp: Stamp) -> bytes:
    """``render_index`` from key lines already in ``key_line``'s form (as text)."""
    return HEADER + "".join(lines).encode("ascii") + stamp_line(stamp)


def read_index(log_path: Path) -> LogIndex | None:
    """The sidecar with its last stamp, or None when it is missing or does not end with a whole stamp."""
    try:
        with open(index_path(log_path), "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if not data.startswith(HEADER) or not data.endswith(b"\n"):
        return None
    start = data.rfind(b"\n", 0, len(data) - 1) + 1
    parts = data[start:-1].split(b" ")
    if len(parts) != 4 or parts[0] != b"@":
        return None
    try:
        stamp = Stamp(int(parts[1]), int(parts[2]), int(parts[3]))
    except ValueError:
        return None
    return LogIndex(data, stamp)
