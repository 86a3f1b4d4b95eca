"""``FinancialSituationMemory(name, config=None)``: one role's lessons, ranked by BM25.

(situation, recommendation) pairs ranked by BM25 against a new situation (see ``bm25``), ``k1``/``b``
from ``config["bm25_k1"]``/``config["bm25_b"]``.

Persistence: ``<memory_dir>/<name>.jsonl`` (``memory_dir`` from the resolved config, i.e. under
the home by default), one JSON object per line, appended under an inter-process ``flock`` on
``<name>.jsonl.lock`` with a single ``write`` per ``add_situations`` call. A call of several pairs
marks each line ``"part": [k, n]`` (its k-th of n lines): a reader indexes a call only once all n
lines are there, because the kernel may stop a write part-way when the writer is SIGKILLed, leaving
whole lines of an unfinished call. So a call's pairs are all there or none are. An unfinished call at
the end of the file (a writer killed mid-write, never acknowledged) is ignored on read and cut off by
the next writer; unreadable lines, and an unfinished call followed by other lines, are skipped and
listed in ``problems``. Appends are not fsynced (a killed process loses nothing that was acknowledged; a
power cut may lose the newest lessons, which the log can rebuild). Every instance picks up lines
appended by other instances or processes before it answers.

The index (see ``bm25``) is also stored as ``<name>.jsonl.bm25.npz`` (see ``index_store``) once the
memory has ``STORE_MIN_DOCS`` pairs and again each time it has grown by a quarter, so that a new
instance loads arrays instead of parsing and tokenising every line; the stored index names the
jsonl bytes it covers by their digest and is ignored (the jsonl is read as before) when it does
not match, and lines appended after it are read from the jsonl.

Retiring a lesson (``retire(lesson_id)``) keeps it on disk but stops it being retrieved; it is
reversible (``retire(lesson_id, False)``). The retired ids are kept in ``<name>.retired.json`` (written
whole with ``fileio.atomic_write`` under the same flock), read again whenever that file changes.

``add_lessons_once`` is the settlement's writer: it appends only the pairs whose lesson id (the hash of
situation and text, ``lesson_id``) the memory does not hold yet, checked *under the flock* after
reading what other writers appended, so processes settling the same log at once write each lesson
once.

Ties rank the older memory first, so results are deterministic.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tradingagents.config import resolve_config
from tradingagents.fileio import atomic_write, remove_leftovers
from tradingagents.ids import stable_id
from tradingagents.memory.bm25 import BM25Index, release_heap
from tradingagents.memory.files import FlockFile
from tradingagents.memory.index_store import index_file, load_index, new_digest, save_index
from tradingagents.memory.tokens import bm25_tokenize
from tradingagents.team import MEMORY_NAMES
from tradingagents.validation import validate_date

__all__ = ["ROLE_NAMES", "FinancialSituationMemory", "lesson_id", "validate_memory_name"]

_log = logging.getLogger(__name__)
ROLE_NAMES = MEMORY_NAMES  # the roster owns them
_BULK = 64  # pairs from which indexing goes through the bulk (numpy) path

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


_CACHED_TEXT_MAX = 65_536  # longer texts are tokenised every time (the cache stays small)


def _query_tokens(text: str) -> Sequence[str]:
    """Tokens of a query (or a finalist's situation), kept for the few texts seen last.

    One run recalls the same situation from every role memory, so it is tokenised once, not per role.
    """
    if not isinstance(text, str) or len(text) > _CACHED_TEXT_MAX:
        return bm25_tokenize(text)
    return _cached_tokens(text)


@functools.lru_cache(maxsize=32)
def _cached_tokens(text: str) -> tuple[str, ...]:
    return tuple(bm25_tokenize(text))


def validate_memory_name(name: object) -> str:
    """A role name is used as a file name: 1–64 letters, digits, ``_`` or ``-``."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(
            f"Invalid memory name {name!r}: use 1–64 characters made of letters, digits, '_' and '-' "
            f"(for example {', '.join(ROLE_NAMES)})."
        )
    return name



def check_pairs(situations_and_advice: Any, known_from: str | None) -> tuple[list[tuple[str, str]], str | None]:
    """The ``(situation, recommendation)`` pairs of an ``add_situations`` call and its ``known_from``,
    all checked before anything is written (TypeError / ValidationError otherwise)."""
    if known_from is not None:
        known_from = validate_date(known_from, allow_future=True)
    if isinstance(situations_and_advice, (str, bytes)) or not isinstance(situations_and_advice, Iterable):
        raise TypeError("add_situations expects a list of (situation, recommendation) pairs.")
    pairs: list[tuple[str, str]] = []
    for i, pair in enumerate(situations_and_advice):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"Item {i} must be a (situation, recommendation) pair, not {pair!r:.80}.")
        situation, advice = pair
        if not isinstance(situation, str) or not isinstance(advice, str):
            raise TypeError(f"Item {i}: situation and recommendation must both be text.")
        pairs.append((situation, advice))
    return pairs, known_from


def _part(value: Any) -> tuple[int, int]:
    """A line's place in its call, ``"part": [k, n]``; a line without one is a call of its own."""
    if value is None:
        return 0, 1
    if (not isinstance(value, list) or len(value) != 2 or not all(type(v) is int for v in value)
            or not 0 <= value[0] < value[1]):
        raise ValueError(f"bad part {value!r}")
    return value[0], value[1]


def lesson_id(situation: str, recommendation: str) -> str:
    """A lesson's id: a hash of its situation and its text (stable across reopenings and backends)."""
    return stable_id("lesson", situation, recommendation, length=12)


class RankedMemories:
    """The read side of a role memory, whatever stores it (files here, PostgreSQL in ``storage``).

    A subclass keeps ``_lock``, ``_situations``, ``_recommendations``, ``_known_from``,
    ``_latest_known`` and a ``BM25Index`` in ``_index``, and ``_sync()`` picks up what other
    instances or processes added; ranking, point-in-time recall and normalisation are this class's.
    """

    def get_memories(
        self, current_situation: str, n_matches: int = 1, *, as_of: str | None = None
    ) -> list[dict[str, Any]]:
        """Top ``n_matches`` memories: ``matched_situation``, ``recommendation``, ``similarity_score``
        (the specification's keys, exactly; ``recall_lessons`` adds each lesson's id and date)."""
        keys = ("matched_situation", "recommendation", "similarity_score")
        return [{k: m[k] for k in keys} for m in self.recall_lessons(current_situation, n_matches, as_of=as_of)]

    def recall_lessons(
        self, current_situation: str, n_matches: int = 1, *, as_of: str | None = None
    ) -> list[dict[str, Any]]:
        """Top ``n_matches`` memories: ``matched_situation``, ``recommendation``, ``similarity_score``.

        Scores are divided by the best score of this query (by 1 when no score is positive). An
        empty memory gives ``[]``; ``n_matches`` is capped at the number stored; 0 gives ``[]``.
        With ``as_of`` (YYYY-MM-DD), memories knowable only after that date are left out.
        """
        if not isinstance(current_situation, str):
            raise TypeError(f"The situation must be text, not {type(current_situation).__name__}.")
        if isinstance(n_matches, bool) or not isinstance(n_matches, (int, np.integer)):
            raise TypeError(f"n_matches must be a whole number, not {n_matches!r}.")
        if n_matches < 0:
            raise ValueError(f"n_matches must be 0 or more, not {n_matches}; use 0 for no matches.")
        if as_of is not None:
            as_of = validate_date(as_of, allow_future=True)
        tokens = _query_tokens(current_situation)
        with self._lock:
            self._sync()
            if not self._situations or n_matches == 0:
                return []
            excluded = self._retired_mask()
            if as_of is not None and self._latest_known is not None and self._latest_known > as_of:
                future = np.fromiter(
                    (k is not None and k > as_of for k in self._known_from), dtype=bool, count=len(self._known_from)
                )
                if future.any():
                    excluded = future if excluded is None else (excluded | future)
            situations = self._situations
            order, scores = self._index.top(
                tokens, int(n_matches), excluded, lambda i: _query_tokens(situations[i])
            )
            if len(order) == 0:
                return []
            ids = self._lesson_ids()
            best = float(scores[0])
            denom = best if best > 0 else 1.0
            return [
                {
                    "matched_situation": self._situations[i],
                    "recommendation": self._recommendations[i],
                    "similarity_score": float(s) / denom,
                    # derived from the content, so the same lesson has the same id in every reopening
                    "id": ids[i],
                    "known_from": self._known_from[i],
                }
                for i, s in zip(order.tolist(), scores.tolist(), strict=True)
            ]

    # ------------------------------------------------------------------ lesson ids and retiring
    def _lesson_ids(self) -> list[str]:
        """Every stored lesson's id, in insertion order (computed once per lesson; lock held)."""
        ids = self.__dict__.setdefault("_id_list", [])
        if len(ids) > len(self._situations):  # the state was reset
            ids.clear()
        for i in range(len(ids), len(self._situations)):
            ids.append(lesson_id(self._situations[i], self._recommendations[i]))
        return ids

    def _retired_mask(self) -> np.ndarray | None:
        """True for each retired lesson (None when none is retired; lock held)."""
        retired = self._retired
        if not retired:
            return None
        key = (len(self._situations), retired)
        cached = self.__dict__.get("_mask_cache")
        if cached is None or cached[0] != key:
            ids = self._lesson_ids()
            mask = np.fromiter((i in retired for i in ids), dtype=bool, count=len(ids))
            cached = (key, mask if mask.any() else None)
            self._mask_cache = cached
        return cached[1]

    def lessons(self) -> list[dict[str, Any]]:
        """Every stored lesson, oldest first: ``id``, ``situation``, ``recommendation``, ``known_from``,
        ``retired`` (a lesson stored twice is listed once, at its first place)."""
        with self._lock:
            self._sync()
            seen: set[str] = set()
            out = []
            for i, lid in enumerate(self._lesson_ids()):
                if lid in seen:
                    continue
                seen.add(lid)
                out.append({"id": lid, "situation": self._situations[i], "recommendation": self._recommendations[i],
                            "known_from": self._known_from[i], "retired": lid in self._retired})
            return out

    def retired_ids(self) -> frozenset[str]:
        with self._lock:
            self._sync()
            return self._retired

    def retire(self, lesson: str, retired: bool = True) -> bool:
        """Stop retrieving ``lesson`` (an id from ``recall_lessons`` / ``lessons``), or retrieve it again
        with ``retired=False``. It stays stored. True when this changed something; KeyError for an id
        this memory does not hold."""
        with self._lock:
            self._sync()
            if lesson not in set(self._lesson_ids()):
                raise KeyError(f"No lesson {lesson!r} in the {self.name} memory.")
            if (lesson in self._retired) == bool(retired):
                return False
            self._set_retired(lesson, bool(retired))
            self._sync()
            return True

    def get_scores(self, current_situation: str) -> list[float]:
        """Raw BM25 score of every stored memory, in insertion order (for inspection and tests)."""
        tokens = bm25_tokenize(current_situation)
        with self._lock:
            self._sync()
            return self._index.scores(tokens).tolist()

    @staticmethod
    def matched_terms(query: str, situation: str) -> list[str]:
        """Query tokens (unique, in query order) that also occur in ``situation``."""
        present = set(bm25_tokenize(situation))
        return list(dict.fromkeys(t for t in bm25_tokenize(query) if t in present))

    def items(self) -> list[tuple[str, str]]:
        """Every stored ``(situation, recommendation)``, oldest first."""
        with self._lock:
            self._sync()
            return list(zip(self._situations, self._recommendations, strict=True))

    def count(self) -> int:
        with self._lock:
            self._sync()
            return len(self._situations)

    def __len__(self) -> int:
        return self.count()


class FinancialSituationMemory(RankedMemories):
    """One role's BM25 memory of (situation, recommendation) pairs; see the module docstring."""

    STORE_MIN_DOCS = 2000  # smaller memories reopen fast from the jsonl alone

    def __init__(self, name: str, config: Mapping[str, Any] | None = None) -> None:
        self.name = validate_memory_name(name)
        cfg = resolve_config(config)
        self.k1, self.b = float(cfg["bm25_k1"]), float(cfg["bm25_b"])  # the resolver checked their ranges
        self.path = Path(cfg["memory_dir"]) / f"{self.name}.jsonl"
        self.retired_path = Path(cfg["memory_dir"]) / f"{self.name}.retired.json"
        self._retired: frozenset[str] = frozenset()
        self._retired_stat: tuple | None = None
        self.problems: list[str] = []
        self._lock = threading.RLock()
        self._flock = FlockFile(Path(str(self.path) + ".lock"))
        self._reset()
        with self._lock:
            self._sync()
            if self._needs_store() and self.path.exists():
                self.store_index()  # a large memory read from its jsonl alone: next time, the arrays

    # ------------------------------------------------------------------ internal state
    def _reset(self) -> None:
        self._index = BM25Index(self.k1, self.b)
        self._situations: list[str] = []
        self._recommendations: list[str] = []
        # the date from which each memory was knowable (None: always); see get_memories(as_of=)
        self._known_from: list[str | None] = []
        self._latest_known: str | None = None  # max of _known_from: most queries skip the mask
        self._file_id: tuple[int, int] | None = None
        self._offset = 0
        self._seen_size = 0
        self._line_no = 0
        self._digest = new_digest()  # of the jsonl's first _offset bytes (the stored index checks it)
        self._stored_docs = 0  # documents in the stored index as we last wrote or read it
        self._id_list: list[str] = []
        # the decisions whose lessons this memory holds (add_lessons_once); lines covered by a stored
        # index are not in it, so for a large memory the lesson-id check alone applies to those
        self._sources: set[str] = set()
        self.problems = []

    def _index_pairs(self, pairs: list[tuple[str, str, str | None]]) -> None:
        """Index (situation, recommendation, known_from) triples; many at once go in bulk."""
        if len(pairs) >= _BULK:
            self._index.add_many(bm25_tokenize(s) for s, _, _ in pairs)
        else:
            for situation, _, _ in pairs:
                self._index.add(bm25_tokenize(situation))
        for situation, recommendation, known_from in pairs:
            self._situations.append(situation)
            self._recommendations.append(recommendation)
            self._known_from.append(known_from)
            if known_from is not None and (self._latest_known is None or known_from > self._latest_known):
                self._latest_known = known_from

    def _load_stored(self) -> None:
        """Start from the stored index when it matches the file (state just reset, lock held)."""
        loaded = load_index(self.path, self.k1, self.b)
        if loaded is None:
            return
        self._index = loaded.index
        self._situations, self._recommendations = loaded.situations, loaded.recommendations
        self._known_from = loaded.known_from
        self._latest_known = max((k for k in loaded.known_from if k is not None), default=None)
        self._offset = loaded.covered
        self._line_no = loaded.lines
        self._digest = loaded.digest
        self._stored_docs = loaded.index.n_docs
        self.problems = loaded.problems

    def _maybe_store(self) -> None:
        """Store the index once it has grown by a quarter since it was last stored (flock held)."""
        if self._needs_store():
            self._store()

    def _needs_store(self) -> bool:
        n = self._index.n_docs
        return n >= self.STORE_MIN_DOCS and n - self._stored_docs >= max(self.STORE_MIN_DOCS, self._stored_docs // 4)

    def store_index(self) -> None:
        """Write the stored index now (it is also written on its own as the memory grows)."""
        with self._lock, self._flock:
            self._sync()
            self._store()

    def _store(self) -> None:  # both locks held
        remove_leftovers(index_file(self.path))  # a killed writer's temp files
        try:
            save_index(
                self.path, self._index, self._situations, self._recommendations, self._known_from,
                covered=self._offset, lines=self._line_no, digest_hex=self._digest.hexdigest(),
                problems=self.problems,
            )
        except OSError as exc:  # a cache: a full disk or read-only folder must not fail the caller
            _log.warning("could not store the index of %s (it is rebuilt from the file): %s", self.path, exc)
            return
        finally:
            release_heap()
        self._stored_docs = self._index.n_docs

    def _sync_retired(self) -> None:
        """Read the retired ids again when their file changed (lock held)."""
        try:
            st = os.stat(self.retired_path)
        except FileNotFoundError:
            self._retired, self._retired_stat = frozenset(), None
            return
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        if stamp == self._retired_stat:
            return
        try:
            ids = json.loads(self.retired_path.read_text(encoding="utf-8"))
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise ValueError("not a list of lesson ids")
        except (OSError, ValueError) as exc:
            self.problems.append(f"{self.retired_path.name} skipped (not a list of lesson ids: {exc}); "
                                 "no lesson is retired.")
            ids = []
        self._retired, self._retired_stat = frozenset(ids), stamp

    def _set_retired(self, lesson: str, retired: bool) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._flock:
            self._sync_retired()  # another writer may have retired others since
            ids = set(self._retired) | {lesson} if retired else set(self._retired) - {lesson}
            atomic_write(self.retired_path, json.dumps(sorted(ids)).encode())
            self._retired_stat = None

    def _sync(self) -> None:
        """Index complete lines that other writers appended since we last looked (lock held)."""
        self._sync_retired()
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            if self._file_id is not None or self._situations:
                self._reset()
            return
        file_id = (st.st_dev, st.st_ino)
        if file_id != self._file_id or st.st_size < self._offset:
            self._reset()
            self._file_id = file_id
            self._load_stored()
        self._seen_size = st.st_size
        if st.st_size == self._offset:
            return
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n")
        if end < 0:
            return  # only a torn (or in-progress) final line
        good: list[tuple[str, str, str | None]] = []
        call: list[tuple[str, str, str | None]] = []  # the lines so far of a call of several pairs
        sources: set[str] = set()  # the decisions the call's lessons came from
        call_line = 0  # the line its first pair is on
        pos = committed = 0  # bytes of data read; bytes through the last whole record or call
        line_no = committed_lines = self._line_no
        for raw in data[: end + 1].split(b"\n")[:-1]:
            pos += len(raw) + 1
            line_no += 1
            if not raw.strip():
                if not call:
                    committed, committed_lines = pos, line_no
                continue
            try:
                rec = json.loads(raw.decode("utf-8"))
                situation, recommendation = rec["situation"], rec["recommendation"]
                if not isinstance(situation, str) or not isinstance(recommendation, str):
                    raise TypeError("situation and recommendation must be strings")
                known_from = rec.get("known_from")
                source = rec.get("source")
                if known_from is not None:
                    known_from = validate_date(known_from, allow_future=True)
                k, n = _part(rec.get("part"))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                self._drop_call(call, call_line)
                call, sources = [], set()
                self.problems.append(f"{self.path.name} line {line_no} skipped (not a memory: {exc}).")
                committed, committed_lines = pos, line_no
                continue
            if k != len(call):  # a new call began before the last one finished
                self._drop_call(call, call_line)
                call, sources = [], set()
                if k != 0:
                    self.problems.append(f"{self.path.name} line {line_no} skipped (part {k + 1} of {n} of a call "
                                         "whose earlier parts are missing).")
                    committed, committed_lines = pos, line_no
                    continue
            if not call:
                call_line = line_no
            call.append((situation, recommendation, known_from))
            if isinstance(source, str):
                sources.add(source)
            if len(call) == n:
                good.extend(call)
                self._sources |= sources
                sources = set()
                call = []
                committed, committed_lines = pos, line_no
        # an unfinished call at the end: a writer still writing, or one killed mid-write (the next
        # writer cuts it off); it is read again next time
        self._digest.update(memoryview(data)[:committed])
        self._index_pairs(good)
        self._offset += committed
        self._line_no = committed_lines

    def _drop_call(self, call: list[tuple[str, str, str | None]], first_line: int) -> None:
        if call:
            self.problems.append(f"{self.path.name} lines {first_line}–{first_line + len(call) - 1} skipped "
                                 "(part of a call whose writer stopped before writing it all).")

    # ------------------------------------------------------------------ public API
    def add_situations(
        self, situations_and_advice: Iterable[tuple[str, str]], *, known_from: str | None = None
    ) -> int:
        """Add ``(situation, recommendation)`` pairs; returns how many were added.

        ``known_from`` (YYYY-MM-DD) is the first date on which these lessons were knowable (for a
        lesson from a settled decision: the day its holding window closed). A query with
        ``as_of`` before that date never sees them, so a back-dated analysis cannot learn from
        the future. Everything is checked before anything is written, so a bad pair adds nothing.
        """
        pairs, known_from = check_pairs(situations_and_advice, known_from)
        return self._append(pairs, known_from, once=False)

    def add_lessons_once(
        self, situations_and_advice: Iterable[tuple[str, str]], *, known_from: str | None = None,
        source: str | None = None,
    ) -> int:
        """``add_situations`` for the pairs whose lesson id this memory does not hold yet (nor earlier
        in the same call), and nothing at all when ``source`` (the decision they were learnt from, e.g.
        ``"NVDA 2024-05-10"``) already gave this memory its lessons; checked under the flock after
        reading every other writer's lines, so processes settling the same log at once write each
        lesson exactly once. Returns how many were added."""
        pairs, known_from = check_pairs(situations_and_advice, known_from)
        return self._append(pairs, known_from, once=True, source=source)

    def _append(self, pairs: list[tuple[str, str]], known_from: str | None, *, once: bool,
                source: str | None = None) -> int:
        if not pairs:
            return 0
        with self._lock, self._flock:
            self._sync()
            if source is not None and source in self._sources:
                return 0
            if once:
                held = set(self._lesson_ids())
                fresh = []
                for s, r in pairs:
                    lid = lesson_id(s, r)
                    if lid not in held:
                        held.add(lid)
                        fresh.append((s, r))
                pairs = fresh
                if not pairs:
                    return 0
            self._write_locked(pairs, known_from, source)
        return len(pairs)

    def _write_locked(self, pairs: list[tuple[str, str]], known_from: str | None, source: str | None = None) -> None:
        """Append ``pairs`` as one call (both locks held, just synced)."""
        extra: dict[str, Any] = {"known_from": known_from} if known_from else {}
        if source is not None:
            extra["source"] = source
        n = len(pairs)
        payload = bytearray()  # grown in place: no list of a million lines to free afterwards
        for k, (s, r) in enumerate(pairs):
            part = {"part": [k, n]} if n > 1 else {}
            payload += json.dumps({"situation": s, "recommendation": r, **extra, **part}, ensure_ascii=False).encode()
            payload += b"\n"
        if self._seen_size > self._offset:
            self._repair_tail()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            written = 0
            while written < len(payload):  # one write in practice; loop for safety
                written += os.write(fd, payload[written:])
            st = os.fstat(fd)
        finally:
            os.close(fd)
        # Nobody else can have written while we hold the lock: index what we wrote directly.
        if self._file_id != (st.st_dev, st.st_ino):
            self._file_id = (st.st_dev, st.st_ino)
        self._index_pairs([(situation, advice, known_from) for situation, advice in pairs])
        if source is not None:
            self._sources.add(source)
        self._line_no += len(pairs)
        self._digest.update(payload)
        self._offset = self._seen_size = st.st_size
        self._maybe_store()

    def _repair_tail(self) -> None:
        """Cut off what a killed writer left after the last whole call (a one-pair call that lacks only
        its newline is completed instead)."""
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            tail = fh.read()
        try:
            rec = json.loads(tail.decode("utf-8"))
            whole = isinstance(rec, dict) and "situation" in rec and "recommendation" in rec and "part" not in rec
        except ValueError:
            whole = False
        if whole:
            with open(self.path, "ab") as fh:
                fh.write(b"\n")
            self._sync()
        else:
            os.truncate(self.path, self._offset)
            self._seen_size = self._offset

    def clear(self) -> None:
        """Forget everything, on disk too."""
        with self._lock:
            if self.path.parent.exists():
                with self._flock:
                    if self.path.exists():
                        atomic_write(self.path, b"")
                    with contextlib.suppress(FileNotFoundError):
                        index_file(self.path).unlink()
                    with contextlib.suppress(FileNotFoundError):
                        self.retired_path.unlink()
            self._reset()
            with contextlib.suppress(FileNotFoundError):
                st = os.stat(self.path)
                self._file_id = (st.st_dev, st.st_ino)

    def __repr__(self) -> str:
        return f"FinancialSituationMemory({self.name!r}, {len(self._situations)} memories, path={str(self.path)!r})"

