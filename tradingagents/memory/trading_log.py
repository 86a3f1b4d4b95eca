"""``TradingMemoryLog(config)``: the markdown log of decisions and their outcomes.

The file is ``config["memory_log_path"]``; its grammar is in ``log_format``. Pending::

    [2024-05-10 | NVDA | Buy | pending]

    DECISION:
    <decision text>

Settled: the tag becomes ``[2024-05-10 | NVDA | Buy | +3.2% | +1.1% | 5d]`` and
``\\n\\nREFLECTION:\\n<reflection>`` is appended, followed by one hidden line
``<!-- exact raw=<float> alpha=<float> -->`` that keeps the exact raw return and alpha (the tag
shows one decimal of a percent); ``load_entries`` returns the exact values (the tag's rounded
values when the hidden line is missing or disagrees with a hand-edited tag).

Writes hold an inter-process lock (``<log>.lock``). A store *appends*: one fsynced ``write`` of
the entry and its separator, then one line in the key index ``<log>.idx`` (see ``log_index``),
so its cost does not grow with the log; the duplicate check reads only the index when the
index's stamp matches the log. Settlement and rotation rewrite the whole file: unique temp file
in the same folder, flush, fsync, ``os.replace``, fsync of the folder, then the index. A writer
killed at any moment loses nothing acknowledged and duplicates nothing: a rewrite leaves the old
or the new file; an append torn by a kill is never read (the index vouches only for what was
finished) and is cut off by the next writer. A block that does not parse (a hand-edit) is kept
verbatim on every rewrite and described in ``problems``.

A version of the file is parsed once a process: every instance (a run's, a page's, settlement's)
takes the blocks of a version this process has read or written (``_SHARED``), so a desk's runs in
one process do not each parse the whole log again. Only a version whose every byte is a finished
entry (empty, or ending with a separator) is shared: what a reader makes of an unfinished tail
depends on the index beside it.

``get_past_context(ticker, n_same=5, n_cross=3, *, as_of=None)``: pass the analysis date as
``as_of`` so that only entries dated before it, whose holding window had closed by then, are
used (no look-ahead). Rotation (``memory_log_max_entries``) drops the oldest settled entries by
date, never a pending one and never an unreadable block.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from operator import attrgetter
from pathlib import Path
from typing import Any

from filelock import FileLock

from tradingagents.config import resolve_config
from tradingagents.fileio import atomic_write, fsync_dir, remove_leftovers
from tradingagents.memory.files import LOCK_POLL_S
from tradingagents.memory.log_cache import (
    entries_of,
    paused_gc,
    read_cache,
    read_texts,
    summary_rows,
    write_cache,
)
from tradingagents.memory.log_format import (
    SEPARATOR,
    Block,
    check_count,
    check_decision,
    check_pm_decision,
    check_updates,
    known_by,
    past_decisions_of,
    render_block,
    render_past_context,
    scan_blocks,
    scan_keys,
)
from tradingagents.memory.log_index import (
    LogIndex,
    Stamp,
    index_path,
    key_line,
    read_index,
    render_index,
    render_index_lines,
    stamp_line,
)
from tradingagents.validation import validate_date, validate_ticker

__all__ = ["TradingMemoryLog"]


def _sig(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


_SEP_BYTES = SEPARATOR.encode("ascii")
_date_of = attrgetter("date")


class _SharedVersions:
    """The parsed blocks of the last version this process read or wrote of a few logs, by file
    (device, inode): ``(sig, blocks, problems)``. Blocks are not changed once a log has read them
    (their lazily read parts are the same whoever reads them first), so instances share them.

    At most ``size`` logs and ``max_blocks`` blocks in all (~60 MB at 100,000 entries): the table
    outlives the instances, so a huge log's version is not kept (its readers parse it, as before)."""

    def __init__(self, size: int = 4, max_blocks: int = 100_000) -> None:
        self.size = size
        self.max_blocks = max_blocks
        self._lock = threading.Lock()
        self._versions: OrderedDict[tuple[int, int], tuple[tuple, list[Block], list[str]]] = OrderedDict()

    def get(self, sig: tuple) -> tuple[list[Block], list[str]] | None:
        with self._lock:
            got = self._versions.get(sig[:2])
            if got is None or got[0] != sig:
                return None
            self._versions.move_to_end(sig[:2])
            return got[1], got[2]

    def put(self, sig: tuple | None, blocks: list[Block], problems: list[str]) -> None:
        if sig is None:
            return
        with self._lock:
            self._versions.pop(sig[:2], None)
            if len(blocks) > self.max_blocks:
                return
            self._versions[sig[:2]] = (sig, blocks, list(problems))
            total = sum(len(v[1]) for v in self._versions.values())
            while len(self._versions) > self.size or total > self.max_blocks:
                total -= len(self._versions.popitem(last=False)[1][1])

    def clear(self) -> None:
        with self._lock:
            self._versions.clear()

    def forget_after_fork(self) -> None:  # the parent's lock may have been held by a thread the child lacks
        self._lock = threading.Lock()
        self._versions = OrderedDict()


_SHARED = _SharedVersions()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_SHARED.forget_after_fork)


def _finished(data: bytes) -> bool:
    """Whether every byte of ``data`` (a whole log) is a finished entry: its parse then does not depend
    on the index."""
    return not data or data.endswith(_SEP_BYTES)


def _finished_end(data: bytes, st: os.stat_result, idx: LogIndex | None, offset: int = 0) -> int | None:
    """Where the writers' finished entries end, when the index vouches for a prefix of the file.

    ``data`` holds the file's bytes from ``offset`` on (``_tail_start``: the index's last separator;
    0: the whole file). The index's stamp must name this file (same inode) at a size no larger than
    now, ending in a separator, and, at the same size, the same mtime (else it was edited in place).
    Then whatever follows the last separator is an unfinished append. None: the index does not vouch
    (missing, stale, a hand edit), and the whole file is read as it is.
    """
    if idx is None:
        return None
    stamp = idx.stamp
    size = offset + len(data)
    if stamp.ino != st.st_ino or stamp.size > size or (stamp.size and stamp.size - len(_SEP_BYTES) < offset):
        return None
    if stamp.size and data[stamp.size - len(_SEP_BYTES) - offset : stamp.size - offset] != _SEP_BYTES:
        return None
    if stamp.size == size:
        return stamp.size if stamp.mtime_ns == st.st_mtime_ns else None
    pos = data.rfind(_SEP_BYTES, stamp.size - offset)
    return pos + offset + len(_SEP_BYTES) if pos >= 0 else stamp.size


def _tail_start(st: os.stat_result, idx: LogIndex | None) -> int:
    """Where the bytes ``_finished_end`` looks at begin: the separator ending the index's stamp (0 when
    the index cannot vouch, and the whole file is needed)."""
    if idx is None or idx.stamp.ino != st.st_ino or not len(_SEP_BYTES) <= idx.stamp.size <= st.st_size:
        return 0
    return idx.stamp.size - len(_SEP_BYTES)


class TradingMemoryLog:
    """The markdown log of decisions and their outcomes; see the module docstring."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        cfg = resolve_config(config)
        self.path = Path(cfg["memory_log_path"])
        self.max_entries: int | None = cfg["memory_log_max_entries"]  # checked by the resolver (≥ 1 or None)
        self._problems: list[str] = []
        self._problems_unread = False  # a first store read only the tags: problems come with the next read
        self._lock = threading.RLock()
        self._file_lock = FileLock(str(self.path) + ".lock", poll_interval=LOCK_POLL_S)
        self._cache_sig: tuple | None = None
        self._cache: list[Block] = []
        self._views_for: list[Block] | None = None
        self._settled_desc: list[Block] = []
        # after a summary read from the entries cache: (log sig, cache file sig, {(date, ticker): span})
        self._texts_at: tuple[tuple, tuple, dict[tuple[str, str], tuple[int, int]]] | None = None

    @property
    def problems(self) -> list[str]:
        """The blocks of the log kept verbatim but not read, described (as of the last read)."""
        if self._problems_unread:
            self._blocks()
        return self._problems

    @problems.setter
    def problems(self, value: list[str]) -> None:
        self._problems, self._problems_unread = value, False

    # ------------------------------------------------------------------ reading
    def _blocks(self) -> list[Block]:
        """The parsed blocks of the file as it is now (cached by inode, size and mtime).

        When the index vouches for a prefix of the file, bytes after the last separator beyond it
        are an append still in progress or torn by a killed writer: never acknowledged, not read.
        """
        with self._lock:
            try:
                fh = open(self.path, "rb")
            except FileNotFoundError:
                self._cache_sig, self._cache, self.problems = None, [], []
                return []
            with fh:
                st = os.fstat(fh.fileno())
                sig = _sig(st)
                if sig == self._cache_sig:
                    return self._cache
                shared = _SHARED.get(sig)
                if shared is not None:  # read or written by another instance in this process
                    self._cache_sig, self._cache, self.problems = sig, shared[0], list(shared[1])
                    return self._cache
                data = fh.read()
            end = _finished_end(data, st, read_index(self.path))
            with paused_gc():
                self._read_version(sig, data, end)
            return self._cache

    def _set_cache(self, sig: tuple | None, blocks: list[Block]) -> None:
        seen: set[tuple[str, str]] = set()
        problems = []
        for i, block in enumerate(blocks):
            if block.problem is None:
                key = (block.date, block.ticker)
                if key not in seen:
                    seen.add(key)
                    continue
                block.problem = f"duplicate entry for {block.ticker} on {block.date}"
            first = block.raw.split("\n", 1)[0][:80]
            problems.append(f"Block {i + 1} ({first!r}) kept verbatim but not read: {block.problem}.")
        self._cache_sig, self._cache, self.problems = sig, blocks, problems

    def _read_version(self, sig: tuple, data: bytes, end: int | None) -> None:
        """Parse the whole file's ``data`` (its finished entries up to ``end``) as version ``sig``; share
        the version when every byte of the file is a finished entry."""
        self._set_cache(sig, self._parse(data[: len(data) if end is None else end].decode("utf-8", "replace")))
        if _finished(data):
            self._share()

    def _share(self) -> None:
        """Offer this version's blocks to the other instances in the process (a finished file only)."""
        _SHARED.put(self._cache_sig, self._cache, self._problems)

    @staticmethod
    def _parse(text: str) -> list[Block]:
        return scan_blocks(text)  # the blocks between separators; bodies and meta lines read when used

    def _settled_newest_first(self) -> list[Block]:
        """Settled entries by date, newest first (file order breaks ties); cached per file version."""
        with self._lock:
            blocks = self._blocks()
            if self._views_for is not blocks:
                settled = [b for b in blocks if b.problem is None and not b.pending]
                # newest first, the later in the file first on one date: reversed, then a stable sort
                # (linear on a log appended in date order, as a log is)
                settled.reverse()
                settled.sort(key=_date_of, reverse=True)
                self._settled_desc = settled
                self._views_for = blocks
            return self._settled_desc

    def unread_blocks(self) -> list[dict[str, Any]]:
        """The blocks kept verbatim but not read (merged by a damaged separator, a duplicate, a bad
        tag), in file order: ``{block, date, ticker, raw, problem}`` (date/ticker None when unknown)."""
        return [{"block": i + 1, "date": b.date, "ticker": b.ticker, "raw": b.raw, "problem": b.problem}
                for i, b in enumerate(self._blocks()) if not b.ok]

    def load_entries(self, *, texts: bool = True) -> list[dict[str, Any]]:
        """Every readable entry in file order (oldest first).

        ``texts=False``: each entry without its ``decision`` and ``reflection``, the bulk of a big log
        (``entry_texts`` gives them for the entries shown). A log this object has not parsed in its
        current version is read from the entries cache (``log_cache``) when the cache was made from
        this very version; else the log is parsed and the cache written again. Either way ``problems``
        describes this version.
        """
        cached, entries = self._read_entries(texts)
        return entries if cached is None else entries_of(cached.rows, cached.texts)

    def load_summary(self) -> list[list[Any]]:
        """``load_entries(texts=False)`` as rows: one list of the values of ``log_cache.COLUMNS`` per
        entry, in file order, read as ``load_entries`` reads them (no dict per entry: a page that
        filters and counts a 20,000-entry log needs five of the values, and the rest for one page)."""
        cached, entries = self._read_entries(False)
        return summary_rows(entries) if cached is None else cached.rows

    def _read_entries(self, texts: bool):
        """(the entries cache's ``Cached``, None) when the cache was made from this version of the log,
        else (None, the entries as ``load_entries`` gives them)."""
        with paused_gc(), self._lock:
            try:
                fh = open(self.path, "rb")
            except FileNotFoundError:
                return None, [b.to_entry(texts=texts) for b in self._blocks() if b.ok]
            with fh:
                st = os.fstat(fh.fileno())
                sig = _sig(st)
                if sig == self._cache_sig:  # parsed by this object already
                    return None, [b.to_entry(texts=texts) for b in self._cache if b.ok]
                idx = read_index(self.path)
                offset = _tail_start(st, idx)  # the whole log is read only when it is parsed
                fh.seek(offset)
                data = fh.read()
                end = _finished_end(data, st, idx, offset)
                key = (*sig, end)
                cached = read_cache(self.path, key, texts=texts)
                if cached is not None:
                    self.problems = cached.problems
                    spans = zip(cached.rows, cached.spans, strict=True)
                    self._texts_at = (sig, cached.file_sig, {(r[0], r[1]): span for r, span in spans})  # date, ticker
                    return cached, None
                if offset:
                    fh.seek(0)
                    data = fh.read()
                    end = _finished_end(data, st, idx)
                    key = (*sig, end)
            self._read_version(sig, data, end)
            entries = [b.to_entry() for b in self._cache if b.ok]
            write_cache(self.path, key, entries, self._problems)
            if not texts:
                for entry in entries:
                    del entry["decision"], entry["reflection"]
            return None, entries

    def entry_texts(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str]]:
        """``{(date, ticker): (decision, reflection)}`` of the entries named, as the log is now (a key
        it does not hold is left out): from the entries cache when the log is still the version the
        last ``load_entries`` read from it, else from the log itself."""
        wanted = list(dict.fromkeys(keys))
        with self._lock:
            try:
                sig = _sig(os.stat(self.path))
            except FileNotFoundError:
                return {}
            at = self._texts_at
            if sig != self._cache_sig and at is not None and at[0] == sig:
                found = [k for k in wanted if k in at[2]]
                got = read_texts(self.path, at[1], [at[2][k] for k in found])
                if got is not None:
                    return dict(zip(found, got, strict=True))
            blocks = {b.key: b for b in self._blocks() if b.ok}
            return {k: blocks[k].body() for k in wanted if k in blocks}

    def entry_status(self, ticker: str, trade_date: str) -> tuple[str, str | None]:
        """``("none" | "pending" | "settled", rating)`` of the readable entry for ``ticker`` on ``trade_date``:
        what ``load_entries`` says of it, read from the parsed blocks (a run asks before it logs its
        decision; building every entry to find one cost ~30 ms a run at 5,000 entries)."""
        want, date = validate_ticker(ticker), validate_date(trade_date, allow_future=True)
        for b in self._blocks():
            if b.ok and b.ticker == want and b.date == date:
                return ("pending" if b.pending else "settled"), b.rating
        return "none", None

    def get_pending_entries(self, ticker: str | None = None) -> list[dict[str, Any]]:
        want = validate_ticker(ticker) if ticker is not None else None
        return [
            b.to_entry() for b in self._blocks() if b.ok and b.pending and (want is None or b.ticker == want)
        ]

    def get_past_context(self, ticker: str, n_same: int = 5, n_cross: int = 3, *, as_of: str | None = None) -> str:
        """The past decisions' text for the prompt (``get_past_memory``'s text)."""
        return self.get_past_memory(ticker, n_same, n_cross, as_of=as_of)[0]

    def get_past_memory(self, ticker: str, n_same: int = 5, n_cross: int = 3, *, as_of: str | None = None) -> tuple[str, list[dict[str, Any]]]:
        """The newest settled entries for ``ticker`` in full, then the newest lessons from others.

        With ``as_of`` (the analysis date) only entries dated before it whose holding window had
        closed by then (the session of the exit price, ``end_date``; for older entries without it,
        weekdays counted) are used, so nothing from after the analysis date leaks in. Empty string when there is nothing to tell.
        """
        want = validate_ticker(ticker)
        n_same = check_count(n_same, "n_same")
        n_cross = check_count(n_cross, "n_cross")
        cutoff = validate_date(as_of, allow_future=True) if as_of is not None else None
        same: list[Block] = []
        cross: list[Block] = []
        for b in self._settled_newest_first():
            if len(same) >= n_same and len(cross) >= n_cross:
                break
            if not known_by(b.date, b.holding, cutoff, b.meta.get("end_date")):
                continue
            if b.ticker == want:
                if len(same) < n_same:
                    same.append(b)
            elif len(cross) < n_cross and not b.meta.get("invented"):  # an invented instrument teaches no other
                cross.append(b)
        def row(b: Block) -> tuple:
            return (b.date, b.ticker, b.rating, b.raw_ret, b.alpha, b.holding, *b.body())

        decisions = past_decisions_of([row(b) for b in same], [row(b) for b in cross])
        return render_past_context(want, [row(b) for b in same], [row(b) for b in cross]), decisions

    # ------------------------------------------------------------------ writing
    def _write(self, blocks: list[Block]) -> None:
        """Rewrite the whole log (settlement, rotation, a hand-edited tail), then its index."""
        blocks = self._rotate(blocks)
        data = "".join(b.raw + SEPARATOR for b in blocks).encode("utf-8")
        self._remove_leftovers()
        atomic_write(self.path, data)
        st = os.stat(self.path)
        self._set_cache(_sig(st), blocks)
        self._share()
        self._write_index(blocks, st)

    def _write_index(self, blocks: list[Block], st: os.stat_result) -> None:
        keys = [(b.date, b.ticker) for b in blocks if b.problem is None]  # attributes: 10k blocks, no properties
        # a cache: if it cannot be written, the stale one is noticed by its stamp and not used
        with contextlib.suppress(OSError):
            atomic_write(index_path(self.path), render_index(keys, Stamp.of(st)), durable=False)

    def _remove_leftovers(self) -> None:
        # Under the lock every temp file of ours (log or index) is a leftover of a killed writer.
        remove_leftovers(self.path)

    def _rotate(self, blocks: list[Block]) -> list[Block]:
        if self.max_entries is None:
            return blocks
        # Only settled entries count: a pending decision is never counted and never dropped.
        settled = sorted((b.date, i) for i, b in enumerate(blocks) if b.ok and not b.pending)
        excess = len(settled) - self.max_entries
        if excess <= 0:
            return blocks
        drop = {i for _, i in settled[:excess]}
        return [b for i, b in enumerate(blocks) if i not in drop]

    def _locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self._file_lock

    def _append(self, payload: bytes) -> os.stat_result:
        """One ``write`` at the end of the log, fsynced; the folder too when the file is new."""
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            new = os.fstat(fd).st_size == 0
            written = 0
            while written < len(payload):  # one write in practice; loop for safety
                written += os.write(fd, payload[written:])
            os.fsync(fd)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if new:
            fsync_dir(self.path.parent)
        return st

    def store_decision(
        self, ticker: str, trade_date: str, final_trade_decision: str, *, rating: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> bool:
        """Store a pending decision; False (and nothing written) if (date, ticker) is already in the log.

        The rating is parsed from ``final_trade_decision`` (``rating.parse_rating``: an explicit
        "Rating: X" label wins, Hold when the text names no tier) unless ``rating=`` gives it.

        An append: when the index matches the log exactly, the duplicate check reads only the
        index and the entry is one fsynced write at the end of the log plus one line of index, so
        the cost does not grow with the log. Otherwise (first use, a hand edit, a writer killed
        mid-append) the log is read in full once, a torn final append is cut off, and the index
        is written again.

        ``provenance`` (``{data_vendor, llm_provider, models: {quick, deep}}``) is kept in the entry's
        hidden meta line; ``load_entries`` returns it, and settlement prices the entry from that source.
        """
        ticker, date, decision, rating, meta = check_decision(ticker, trade_date, final_trade_decision, rating,
                                                              provenance)
        block = render_block(date, ticker, rating, decision, meta=meta)
        payload = (block.raw + SEPARATOR).encode("utf-8")
        with self._lock, self._locked():
            self._remove_leftovers()
            try:
                st = os.stat(self.path)
            except FileNotFoundError:
                st = None
            idx = read_index(self.path) if st is not None else None
            if st is not None and idx is not None and idx.stamp == Stamp.of(st):
                if idx.has(date, ticker):
                    return False
                new_st = self._append(payload)
                with contextlib.suppress(OSError), open(index_path(self.path), "ab") as fh:
                    fh.write(key_line(date, ticker) + stamp_line(Stamp.of(new_st)))
                if self._cache_sig == _sig(st):
                    self._cache_sig, self._cache = _sig(new_st), [*self._cache, block]
                    self._share()
                return True
            return self._store_slow(st, idx, block, payload)

    def _store_slow(self, st, idx, block: Block, payload: bytes) -> bool:
        """Read the whole log: cut a torn append, check for the key, append or rewrite, reindex."""
        if st is not None:
            with open(self.path, "rb") as fh:
                data = fh.read()
            end = _finished_end(data, os.stat(self.path), idx)
            if end is not None and end < len(data):
                os.truncate(self.path, end)  # a torn append: never acknowledged
                data = data[:end]
            if data.endswith(_SEP_BYTES) and _sig(os.stat(self.path)) != self._cache_sig:
                return self._store_by_tags(data, block, payload)
        else:
            data = b""
        if st is None:
            blocks = self._blocks()
        else:  # parse the bytes just read (the torn tail cut off), not a second read of the file
            now = _sig(os.stat(self.path))
            if now != self._cache_sig:
                self._set_cache(now, self._parse(data.decode("utf-8", "replace")))
            blocks = self._cache
        date, ticker = block.date, block.ticker
        if any(b.problem is None and b.date == date and b.ticker == ticker for b in blocks):
            self._write_index(blocks, os.stat(self.path))
            return False
        if data and not data.endswith(SEPARATOR.encode()):
            self._write([*blocks, block])  # a hand-edited tail without separator: rewrite around it
            return True
        new_st = self._append(payload)
        blocks = [*blocks, block]
        self._set_cache(_sig(new_st), blocks)
        self._share()
        self._write_index(blocks, new_st)
        return True

    def _store_by_tags(self, data: bytes, block: Block, payload: bytes) -> bool:
        """``_store_slow`` on a log not read yet (a copy, a migration, an index lost): the duplicate
        check and the index need each entry's key alone, so only the tags are read (``scan_keys``);
        the entries are parsed when they are read."""
        lines = scan_keys(data.decode("utf-8", "replace"))
        keys = dict.fromkeys(lines)  # in file order; the first block of a key is the entry
        keys.pop(None, None)  # blocks that do not read as entries
        new = key_line(block.date, block.ticker).decode("ascii")
        self._problems_unread = True  # the blocks are read on demand, with their problems
        if new in keys:
            self._write_index_lines(list(keys), os.stat(self.path))
            return False
        new_st = self._append(payload)
        self._write_index_lines([*keys, new], new_st)
        return True

    def _write_index_lines(self, lines: list[str], st: os.stat_result) -> None:
        with contextlib.suppress(OSError):
            atomic_write(index_path(self.path), render_index_lines(lines, Stamp.of(st)), durable=False)

    def update_pending(
        self, ticker: str, trade_date: str, final_trade_decision: str, *, rating: str | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> tuple[str, str | None]:
        """Store a decision, or replace the pending one of the same (date, ticker): one truth per day.

        Returns ``(what, previous_rating)``: ``("stored", None)`` for a new entry, ``("updated", "Hold")``
        when a pending entry was replaced (its rating was Hold), ``("settled", "Hold")`` when the entry
        is settled already (it is kept as it is: its outcome was measured on that decision).
        """
        ticker, date, decision, rating, meta = check_decision(ticker, trade_date, final_trade_decision, rating,
                                                              provenance)
        with self._lock, self._locked():
            blocks = list(self._blocks())
            for i, b in enumerate(blocks):
                if b.ok and b.key == (date, ticker):
                    if not b.pending:
                        return "settled", b.rating
                    if b.meta.get("pm_decision"):  # the PM's own call stays with the day's decision
                        meta = {**(meta or {}), "pm_decision": b.meta["pm_decision"]}
                    if b.rating == rating and b.body()[0] == decision and b.meta == (meta or {}):
                        return "updated", b.rating
                    blocks[i] = render_block(date, ticker, rating, decision, meta=meta)
                    self._write(blocks)
                    return "updated", b.rating
        self.store_decision(ticker, date, decision, rating=rating, provenance=meta)
        return "stored", None

    def record_pm_decision(self, ticker: str, trade_date: str, pm_decision: Mapping[str, Any]) -> dict[str, Any]:
        """Record the portfolio manager's own call on a pending entry (replacing an earlier one).

        ``pm_decision`` is ``{rating, reason, by, at}`` (``log_format.check_pm_decision``). Returns
        ``{"status": "recorded"|"changed", "previous": <the earlier call or None>, "pm_decision": …}``;
        ``{"status": "settled", …}`` (nothing written) when the entry is settled: a call is scored on the
        outcome and can no longer change; ``{"status": "missing"}`` when the log has no such entry. The
        team's rating, decision and outcome are kept as they are.
        """
        ticker, date = validate_ticker(ticker), validate_date(trade_date, allow_future=True)
        pm = check_pm_decision(pm_decision)
        with self._lock, self._locked():
            blocks = list(self._blocks())
            for i, b in enumerate(blocks):
                if b.ok and b.key == (date, ticker):
                    previous = b.meta.get("pm_decision")
                    if not b.pending:
                        return {"status": "settled", "previous": previous, "pm_decision": None}
                    blocks[i] = render_block(date, ticker, b.rating, b.body()[0], meta={**b.meta, "pm_decision": pm})
                    self._write(blocks)
                    return {"status": "changed" if previous else "recorded", "previous": previous, "pm_decision": pm}
        return {"status": "missing", "previous": None, "pm_decision": None}

    def batch_update_with_outcomes(self, updates: Iterable[Mapping[str, Any]]) -> int:
        """Settle pending entries, all in one atomic write; returns how many were settled.

        Each update: ``{ticker, trade_date, raw_return, alpha_return, holding_days, reflection}`` as the
        documents name them (or ``date, raw, alpha, holding``: ``log_format.UPDATE_KEYS``); returns as
        fractions, 0.032 = +3.2%. Updates that match no pending entry are ignored; all are checked first.
        Optional keys ``entry_price``, ``exit_price``, ``bench_raw``, ``benchmark``, ``end_date`` are
        kept in the entry's hidden meta line with its provenance.
        """
        wanted, extras = check_updates(updates)
        if not wanted:
            return 0
        with self._lock, self._locked():
            blocks = list(self._blocks())
            settled = 0
            for i, b in enumerate(blocks):
                if b.ok and b.pending and b.key in wanted:
                    raw, alpha, holding, reflection = wanted.pop(b.key)
                    blocks[i] = render_block(
                        b.date, b.ticker, b.rating, b.body()[0],
                        raw=raw, alpha=alpha, holding=holding, reflection=reflection,
                        meta={**b.meta, **extras.get(b.key, {})},
                    )
                    settled += 1
            if settled:
                self._write(blocks)
            return settled

    def lessons_due(self) -> list[dict[str, Any]]:
        """Settled entries whose lessons are not yet in every role memory (a failure between the
        two writes): ``{ticker, date, lessons: {name: (situation, lesson)}, known_from}``."""
        return [
            {"ticker": b.ticker, "date": b.date, "known_from": b.meta.get("lessons_known_from"),
             "lessons": {k: (v[0], v[1]) for k, v in b.meta["lessons_due"].items()}}
            for b in self._blocks() if b.ok and not b.pending and b.meta.get("lessons_due")
        ]

    def clear_lessons_due(self, keys: Iterable[tuple[str, str]]) -> int:
        """Forget the lessons kept for ``(ticker, date)`` entries once they are written; how many."""
        wanted = {(validate_date(d, allow_future=True), validate_ticker(t)) for t, d in keys}
        if not wanted:
            return 0
        with self._lock, self._locked():
            blocks = list(self._blocks())
            done = 0
            for i, b in enumerate(blocks):
                if b.ok and not b.pending and b.key in wanted and b.meta.get("lessons_due"):
                    decision, reflection = b.body()
                    meta = {k: v for k, v in b.meta.items() if k not in ("lessons_due", "lessons_known_from")}
                    blocks[i] = render_block(b.date, b.ticker, b.rating, decision, raw=b.raw_ret, alpha=b.alpha,
                                             holding=b.holding, reflection=reflection, meta=meta)
                    done += 1
            if done:
                self._write(blocks)
            return done

    def __len__(self) -> int:
        return sum(b.ok for b in self._blocks())

    def __repr__(self) -> str:
        return f"TradingMemoryLog(path={str(self.path)!r})"
