"""What the agents remember: per-role BM25 memories and the markdown decision log.

``FinancialSituationMemory(name, config=None)``
    One role's lessons: (situation, recommendation) pairs ranked by BM25 against a new situation.
    Scoring is BM25 with the non-negative IDF ``ln((N+1)/n_t)`` (rank-bm25's ``BM25Plus`` with
    ``delta=0`` is the reference), ``k1``/``b`` from ``config["bm25_k1"]``/``config["bm25_b"]``.
    The index is inverted (term -> growable numpy postings of doc ids and term frequencies) and
    only the postings of the query terms are scored, at query time, so adding a memory costs only
    its own terms and ``avgdl`` is always current. Tokens are lower-cased ``\\b\\w+\\b``; runs of
    CJK characters (Chinese, Japanese kana, Korean Hangul) become character unigrams plus bigrams so
    that Chinese situations match each other.

    Persistence: ``<memory_dir>/<name>.jsonl`` (``memory_dir`` from the resolved config, i.e. under
    the home by default), one JSON object per line, appended under an inter-process ``flock`` on
    ``<name>.jsonl.lock`` with a single ``write`` per ``add_situations`` call (so a call's pairs
    are all there or none are). A torn final line (a writer killed mid-write,
    never acknowledged) is ignored on read and cut off by the next writer; unreadable lines are
    skipped and listed in ``problems``. Appends are not fsynced (a killed process loses nothing
    that was acknowledged; a power cut may lose the newest lessons, which the log can rebuild).
    Every instance picks up lines appended by other instances or processes before it answers.

    Ties rank the older memory first, so results are deterministic.

``TradingMemoryLog(config)``
    The markdown log of decisions (``config["memory_log_path"]``). Entries are followed by
    ``SEPARATOR``. Pending::

        [2024-05-10 | NVDA | Buy | pending]

        DECISION:
        <decision text>

    Settled: the tag becomes ``[2024-05-10 | NVDA | Buy | +3.2% | +1.1% | 5d]`` and
    ``\\n\\nREFLECTION:\\n<reflection>`` is appended, followed by one hidden line
    ``<!-- exact raw=<float> alpha=<float> -->`` that keeps the exact raw return and alpha (the tag
    shows one decimal of a percent); ``load_entries`` returns the exact values (the tag's rounded
    values when the hidden line is missing or disagrees with a hand-edited tag).

    Model text can never forge structure: in decision and reflection text every line that starts
    with ``\\``, ``[``, ``<``, ``DECISION:`` or ``REFLECTION:`` is stored with one extra leading
    backslash, which reading removes, so the text reads back identical and no separator, tag or
    section header can appear inside it.

    Every write (store, settle, rotation) rewrites the whole file under an inter-process lock
    (``<log>.lock``): unique temp file in the same folder, flush, fsync, ``os.replace``, fsync of
    the folder. A writer killed at any moment leaves either the old or the new file: no entry is
    lost or duplicated, and a call that returned is on disk. A block that does not parse (a
    hand-edit) is kept verbatim on every rewrite and described in ``problems``.

    ``get_past_context(ticker, n_same=5, n_cross=3, *, as_of=None)``: pass the analysis date as
    ``as_of`` so that only entries dated before it, whose holding window had closed by then, are
    used (no look-ahead). Rotation (``memory_log_max_entries``) drops the oldest settled entries by
    date, never a pending one and never an unreadable block.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import functools
import json
import math
import os
import re
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

from tradingagents.agents.utils.rating import RATINGS_5_TIER, normalize_rating
from tradingagents.default_config import resolve_config
from tradingagents.validation import ValidationError, validate_date, validate_ticker

__all__ = [
    "ROLE_NAMES",
    "SEPARATOR",
    "FinancialSituationMemory",
    "TradingMemoryLog",
    "bm25_tokenize",
    "validate_memory_name",
]

# filelock polls a contended lock; its 50 ms default makes 8 busy writers crawl.
_LOCK_POLL_S = 0.002

ROLE_NAMES = ("bull_memory", "bear_memory", "trader_memory", "invest_judge_memory", "risk_manager_memory")

# ============================================================================ tokenising

_WORD_RE = re.compile(r"\b\w+\b")
# Han (incl. extensions A, B+ and compatibility), Hiragana, Katakana, Hangul syllables and jamo.
_CJK_CLASS = (
    "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af\U00020000-\U0003134f"
)
_CJK_RE = re.compile(f"[{_CJK_CLASS}]")
_SPLIT_RE = re.compile(f"([{_CJK_CLASS}]+)")


def bm25_tokenize(text: str) -> list[str]:
    """Lower-cased ``\\b\\w+\\b`` tokens; CJK runs become character unigrams then bigrams."""
    if not isinstance(text, str):
        raise TypeError(f"Text to tokenise must be a string, not {type(text).__name__}.")
    words = _WORD_RE.findall(text.lower())
    if not _CJK_RE.search(text):
        return words
    out: list[str] = []
    for word in words:
        if not _CJK_RE.search(word):
            out.append(word)
            continue
        for part in _SPLIT_RE.split(word):
            if not part:
                continue
            if _CJK_RE.match(part):
                out.extend(part)
                out.extend(part[i : i + 2] for i in range(len(part) - 1))
            else:
                out.append(part)
    return out


# ============================================================================ per-role memory

_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def validate_memory_name(name: object) -> str:
    """A role name is used as a file name: 1–64 letters, digits, ``_`` or ``-``."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise ValueError(
            f"Invalid memory name {name!r}: use 1–64 characters made of letters, digits, '_' and '-' "
            f"(for example {', '.join(ROLE_NAMES)})."
        )
    return name


class _Postings:
    """Growable arrays of (doc id, term frequency) for one term."""

    __slots__ = ("ids", "tfs", "n")

    def __init__(self) -> None:
        self.ids = np.empty(4, dtype=np.int64)
        self.tfs = np.empty(4, dtype=np.float64)
        self.n = 0

    def append(self, doc_id: int, tf: int) -> None:
        if self.n == len(self.ids):
            cap = 2 * len(self.ids)
            ids = np.empty(cap, dtype=np.int64)
            ids[: self.n] = self.ids
            tfs = np.empty(cap, dtype=np.float64)
            tfs[: self.n] = self.tfs
            self.ids, self.tfs = ids, tfs
        self.ids[self.n] = doc_id
        self.tfs[self.n] = tf
        self.n += 1


class _BM25Index:
    """Inverted index with BM25 (IDF ln((N+1)/n_t), delta 0) computed at query time."""

    def __init__(self, k1: float, b: float) -> None:
        self.k1 = float(k1)
        self.b = float(b)
        self.postings: dict[str, _Postings] = {}
        self.doc_len = np.empty(64, dtype=np.float64)
        self.n_docs = 0
        self.total_len = 0
        self._norm: np.ndarray | None = None  # k1*(1-b+b*dl/avgdl), valid for n_docs

    def add(self, tokens: list[str]) -> None:
        doc_id = self.n_docs
        if doc_id == len(self.doc_len):
            grown = np.empty(2 * len(self.doc_len), dtype=np.float64)
            grown[:doc_id] = self.doc_len[:doc_id]
            self.doc_len = grown
        self.doc_len[doc_id] = len(tokens)
        self.total_len += len(tokens)
        postings = self.postings
        for term, tf in Counter(tokens).items():
            p = postings.get(term)
            if p is None:
                p = postings[term] = _Postings()
            p.append(doc_id, tf)
        self.n_docs += 1
        self._norm = None

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        n = self.n_docs
        scores = np.zeros(n, dtype=np.float64)
        if n == 0:
            return scores
        terms = [(t, qf) for t, qf in Counter(query_tokens).items() if t in self.postings]
        if not terms:
            return scores
        if self._norm is None:
            avgdl = self.total_len / n or 1.0
            self._norm = self.k1 * (1.0 - self.b + self.b * self.doc_len[:n] / avgdl)
        norm = self._norm
        k1p1 = self.k1 + 1.0
        for term, qf in terms:
            p = self.postings[term]
            ids = p.ids[: p.n]
            tf = p.tfs[: p.n]
            idf = math.log((n + 1) / p.n)
            scores[ids] += (qf * idf * k1p1) * tf / (norm[ids] + tf)
        return scores


def _top_n(scores: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` best scores: higher first, ties by lower index (deterministic)."""
    total = len(scores)
    if n >= total:
        return np.lexsort((np.arange(total), -scores))
    kth = np.partition(scores, total - n)[total - n]  # the n-th largest value
    above = np.flatnonzero(scores > kth)
    equal = np.flatnonzero(scores == kth)[: n - len(above)]
    cand = np.concatenate((above, equal))
    return cand[np.lexsort((cand, -scores[cand]))]


class _FlockFile:
    """An exclusive ``flock`` on a lock file, cheap enough for one acquisition per add.

    (filelock is used for the log; here it costs more than the rest of an add put together.) The
    descriptor is reopened in a forked child so parent and child never share a lock. Threads are
    serialised by the owner's RLock, so one descriptor per instance is enough.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._pid = 0

    def __enter__(self) -> _FlockFile:
        if self._fd is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._pid = os.getpid()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def __del__(self) -> None:
        if self._fd is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(self._fd)


class FinancialSituationMemory:
    """One role's BM25 memory of (situation, recommendation) pairs; see the module docstring."""

    def __init__(self, name: str, config: Mapping[str, Any] | None = None) -> None:
        self.name = validate_memory_name(name)
        cfg = resolve_config(config)
        k1, b = cfg.get("bm25_k1", 1.5), cfg.get("bm25_b", 0.75)
        for key, value in (("bm25_k1", k1), ("bm25_b", b)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"config[{key!r}] must be a number, not {value!r}.")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs bm25_k1 >= 0 and 0 <= bm25_b <= 1; got k1={k1!r}, b={b!r}.")
        self.k1, self.b = float(k1), float(b)
        self.path = Path(cfg["memory_dir"]) / f"{self.name}.jsonl"
        self.problems: list[str] = []
        self._lock = threading.RLock()
        self._flock = _FlockFile(Path(str(self.path) + ".lock"))
        self._reset()
        with self._lock:
            self._sync()

    # ------------------------------------------------------------------ internal state
    def _reset(self) -> None:
        self._index = _BM25Index(self.k1, self.b)
        self._situations: list[str] = []
        self._recommendations: list[str] = []
        # the date from which each memory was knowable (None: always); see get_memories(as_of=)
        self._known_from: list[str | None] = []
        self._latest_known: str | None = None  # max of _known_from: most queries skip the mask
        self._file_id: tuple[int, int] | None = None
        self._offset = 0
        self._seen_size = 0
        self._line_no = 0
        self.problems = []

    def _index_pair(self, situation: str, recommendation: str, known_from: str | None = None) -> None:
        self._index.add(bm25_tokenize(situation))
        self._situations.append(situation)
        self._recommendations.append(recommendation)
        self._known_from.append(known_from)
        if known_from is not None and (self._latest_known is None or known_from > self._latest_known):
            self._latest_known = known_from

    def _sync(self) -> None:
        """Index complete lines that other writers appended since we last looked (lock held)."""
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
        self._seen_size = st.st_size
        if st.st_size == self._offset:
            return
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            data = fh.read()
        end = data.rfind(b"\n")
        if end < 0:
            return  # only a torn (or in-progress) final line
        for raw in data[: end + 1].split(b"\n")[:-1]:
            self._line_no += 1
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw.decode("utf-8"))
                situation, recommendation = rec["situation"], rec["recommendation"]
                if not isinstance(situation, str) or not isinstance(recommendation, str):
                    raise TypeError("situation and recommendation must be strings")
                known_from = rec.get("known_from")
                if known_from is not None:
                    known_from = validate_date(known_from, allow_future=True)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                self.problems.append(f"{self.path.name} line {self._line_no} skipped (not a memory: {exc}).")
                continue
            self._index_pair(situation, recommendation, known_from)
        self._offset += end + 1

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
        if not pairs:
            return 0
        extra = {"known_from": known_from} if known_from else {}
        payload = "".join(
            json.dumps({"situation": s, "recommendation": r, **extra}, ensure_ascii=False) + "\n"
            for s, r in pairs
        ).encode("utf-8")
        with self._lock, self._flock:
            self._sync()
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
            for situation, advice in pairs:
                self._index_pair(situation, advice, known_from)
            self._line_no += len(pairs)
            self._offset = self._seen_size = st.st_size
        return len(pairs)

    def _repair_tail(self) -> None:
        """A final line without newline is left by a killed writer: complete it if whole, else cut it."""
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            tail = fh.read()
        try:
            rec = json.loads(tail.decode("utf-8"))
            whole = isinstance(rec, dict) and "situation" in rec and "recommendation" in rec
        except ValueError:
            whole = False
        if whole:
            with open(self.path, "ab") as fh:
                fh.write(b"\n")
            self._sync()
        else:
            os.truncate(self.path, self._offset)
            self._seen_size = self._offset

    def get_memories(
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
        tokens = bm25_tokenize(current_situation)
        with self._lock:
            self._sync()
            if not self._situations or n_matches == 0:
                return []
            scores = self._index.scores(tokens)
            eligible = len(self._situations)
            if as_of is not None and self._latest_known is not None and self._latest_known > as_of:
                future = np.fromiter(
                    (k is not None and k > as_of for k in self._known_from), dtype=bool, count=eligible
                )
                if future.any():
                    scores = np.where(future, -np.inf, scores)
                    eligible -= int(future.sum())
            n = min(int(n_matches), eligible)
            if n == 0:
                return []
            order = _top_n(scores, n)
            best = float(scores[order[0]])
            denom = best if best > 0 else 1.0
            return [
                {
                    "matched_situation": self._situations[i],
                    "recommendation": self._recommendations[i],
                    "similarity_score": float(scores[i]) / denom,
                }
                for i in order.tolist()
            ]

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

    def clear(self) -> None:
        """Forget everything, on disk too."""
        with self._lock:
            if self.path.parent.exists():
                with self._flock:
                    if self.path.exists():
                        _atomic_write(self.path, b"")
            self._reset()
            with contextlib.suppress(FileNotFoundError):
                st = os.stat(self.path)
                self._file_id = (st.st_dev, st.st_ino)

    def __repr__(self) -> str:
        return f"FinancialSituationMemory({self.name!r}, {len(self._situations)} memories, path={str(self.path)!r})"


# ============================================================================ atomic file writes


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _temp_prefix(path: Path) -> str:
    return f".{path.name}."


def _atomic_write(path: Path, data: bytes) -> None:
    """Unique temp file in the same folder, flush + fsync, os.replace, fsync the folder."""
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=_temp_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


# ============================================================================ the memory log

SEPARATOR = "\n\n<!-- ENTRY_END -->\n\n"
_DECISION_HEAD = "\n\nDECISION:\n"
_REFLECTION_HEAD = "\n\nREFLECTION:\n"
_TAG_RE = re.compile(r"\[([^\[\]\n]*)\]")
_PCT_RE = re.compile(r"^([+-]?\d+(?:\.\d+)?)%$")
_HOLD_RE = re.compile(r"^(\d+)d$")
_EXACT_RE = re.compile(r"\n\n<!-- exact raw=(\S+) alpha=(\S+) -->\Z")
_EXACT_HEAD = "\n\n<!-- exact raw="
_DATE_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")


def _find_exact(text: str) -> re.Match | None:
    """The hidden exact-values line at the very end of ``text`` (rfind first: no regex scan)."""
    pos = text.rfind(_EXACT_HEAD)
    return _EXACT_RE.match(text, pos) if pos >= 0 else None


def _read_date(text: str) -> str:
    if _DATE_SHAPE.match(text):  # fast path for the 10,000-entry log; validate_date explains failures
        with contextlib.suppress(ValueError):
            if _dt.date.fromisoformat(text).year >= 1900:
                return text
    return validate_date(text, allow_future=True)


@functools.lru_cache(maxsize=4096)
def _read_ticker(text: str) -> str:  # pure: cached because tickers repeat through a log
    return validate_ticker(text)


@functools.lru_cache(maxsize=64)
def _read_rating(text: str) -> str:
    rating = normalize_rating(text)
    if rating is None:
        raise ValueError(f"unknown rating {text!r}")
    return rating
_ESCAPE_RE = re.compile(r"^(?=\\|\[|<|DECISION:|REFLECTION:)", re.MULTILINE)
_UNESCAPE_RE = re.compile(r"^\\", re.MULTILINE)


def escape_text(text: str) -> str:
    """Prefix a backslash to every line that could read as structure (reversible)."""
    return _ESCAPE_RE.sub("\\\\", text)


def unescape_text(text: str) -> str:
    return _UNESCAPE_RE.sub("", text) if "\\" in text else text


def _pct(x: float) -> str:
    return f"{x:+.1%}"


class _Block:
    """One block of the log file: its verbatim text and, when it parses, the entry it holds."""

    __slots__ = ("raw", "date", "ticker", "rating", "pending", "raw_ret", "alpha", "holding", "problem", "_body")

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.problem: str | None = None
        self._body: tuple[str, str] | None = None
        self.date = self.ticker = self.rating = None
        self.pending = True
        self.raw_ret = self.alpha = None
        self.holding = None

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def key(self) -> tuple[str, str]:
        return (self.date, self.ticker)

    def body(self) -> tuple[str, str]:
        """(decision, reflection), unescaped; parsed on first use."""
        if self._body is None:
            raw = self.raw
            start = raw.index(_DECISION_HEAD) + len(_DECISION_HEAD)
            if self.pending:
                self._body = (unescape_text(raw[start:]), "")
            else:
                cut = raw.index(_REFLECTION_HEAD, start)
                refl = raw[cut + len(_REFLECTION_HEAD) :]
                m = _find_exact(refl)
                if m:
                    refl = refl[: m.start()]
                self._body = (unescape_text(raw[start:cut]), unescape_text(refl))
        return self._body

    def to_entry(self) -> dict[str, Any]:
        decision, reflection = self.body()
        return {
            "date": self.date,
            "ticker": self.ticker,
            "rating": self.rating,
            "pending": self.pending,
            "raw": self.raw_ret,
            "alpha": self.alpha,
            "holding": self.holding,
            "decision": decision,
            "reflection": reflection,
        }


def _parse_block(raw: str) -> _Block:
    block = _Block(raw)
    m = _TAG_RE.match(raw)
    if not m or not raw.startswith(_DECISION_HEAD, m.end()):
        block.problem = "does not start with a [date | ticker | rating | …] tag, a blank line and DECISION:"
        return block
    fields = [f.strip() for f in m.group(1).split("|")]
    try:
        if len(fields) not in (4, 6):
            raise ValueError(f"the tag has {len(fields)} fields; expected 4 (pending) or 6 (settled)")
        block.date = _read_date(fields[0])
        block.ticker = _read_ticker(fields[1])
        block.rating = _read_rating(fields[2])
        rest_start = m.end() + len(_DECISION_HEAD)
        if len(fields) == 4:
            if fields[3].lower() != "pending":
                raise ValueError(f"the 4th tag field is {fields[3]!r}; expected 'pending'")
            if raw.find(_REFLECTION_HEAD, rest_start) >= 0:
                raise ValueError("a pending entry has a REFLECTION section")
            block.pending = True
        else:
            mr, ma, mh = _PCT_RE.match(fields[3]), _PCT_RE.match(fields[4]), _HOLD_RE.match(fields[5])
            if not (mr and ma and mh):
                raise ValueError("settled tag fields must look like +3.2% | +1.1% | 5d")
            if raw.find(_REFLECTION_HEAD, rest_start) < 0:
                raise ValueError("a settled entry has no REFLECTION section")
            raw_ret, alpha = float(mr.group(1)) / 100, float(ma.group(1)) / 100
            exact = _find_exact(raw)
            if exact:
                with contextlib.suppress(ValueError):
                    ex_raw, ex_alpha = float(exact.group(1)), float(exact.group(2))
                    if _pct(ex_raw) == fields[3] and _pct(ex_alpha) == fields[4]:
                        raw_ret, alpha = ex_raw, ex_alpha
            block.pending = False
            block.raw_ret, block.alpha, block.holding = raw_ret, alpha, int(mh.group(1))
    except ValueError as exc:  # ValidationError included
        block.problem = str(exc)
    return block


def _render_block(date, ticker, rating, decision, *, raw=None, alpha=None, holding=None, reflection=None) -> _Block:
    if raw is None:
        text = f"[{date} | {ticker} | {rating} | pending]{_DECISION_HEAD}{escape_text(decision)}"
    else:
        text = (
            f"[{date} | {ticker} | {rating} | {_pct(raw)} | {_pct(alpha)} | {holding}d]"
            f"{_DECISION_HEAD}{escape_text(decision)}"
            f"{_REFLECTION_HEAD}{escape_text(reflection)}"
            f"\n\n<!-- exact raw={raw!r} alpha={alpha!r} -->"
        )
    block = _parse_block(text)
    assert block.ok, block.problem  # our own rendering always parses
    return block


def _check_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"The {what} must be text, not {type(value).__name__}.")
    return value


def _check_rating(rating: object) -> str:
    tier = normalize_rating(rating) if isinstance(rating, str) else None
    if tier is None:
        raise ValidationError(f"Unknown rating {rating!r}. Use one of: {', '.join(RATINGS_5_TIER)}.")
    return tier


def _check_return(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ValidationError(f"The {what} must be a number (0.032 for +3.2%), not {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValidationError(f"The {what} must be a finite number, not {value!r}.")
    return value


def _check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{what} must be a whole number, 0 or more; got {value!r}.")
    return int(value)


class TradingMemoryLog:
    """The markdown log of decisions and their outcomes; see the module docstring."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        cfg = resolve_config(config)
        self.path = Path(cfg["memory_log_path"])
        max_entries = cfg.get("memory_log_max_entries")
        if max_entries is not None and (
            isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1
        ):
            raise ValueError(
                f"memory_log_max_entries must be a whole number of at least 1, or None for no limit; "
                f"got {max_entries!r}."
            )
        self.max_entries: int | None = max_entries
        self.problems: list[str] = []
        self._lock = threading.RLock()
        self._file_lock = FileLock(str(self.path) + ".lock", poll_interval=_LOCK_POLL_S)
        self._cache_sig: tuple | None = None
        self._cache: list[_Block] = []
        self._views_for: list[_Block] | None = None
        self._settled_desc: list[_Block] = []

    # ------------------------------------------------------------------ reading
    def _blocks(self) -> list[_Block]:
        """The parsed blocks of the file as it is now (cached by inode, size and mtime)."""
        with self._lock:
            try:
                fh = open(self.path, "rb")
            except FileNotFoundError:
                self._cache_sig, self._cache, self.problems = None, [], []
                return []
            with fh:
                st = os.fstat(fh.fileno())
                sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
                if sig == self._cache_sig:
                    return self._cache
                data = fh.read()
            self._set_cache(sig, self._parse(data.decode("utf-8", errors="replace")))
            return self._cache

    def _set_cache(self, sig: tuple | None, blocks: list[_Block]) -> None:
        seen: set[tuple[str, str]] = set()
        problems = []
        for i, block in enumerate(blocks):
            if block.ok and block.key in seen:
                block.problem = f"duplicate entry for {block.ticker} on {block.date}"
            if block.ok:
                seen.add(block.key)
            else:
                first = block.raw.split("\n", 1)[0][:80]
                problems.append(f"Block {i + 1} ({first!r}) kept verbatim but not read: {block.problem}.")
        self._cache_sig, self._cache, self.problems = sig, blocks, problems

    @staticmethod
    def _parse(text: str) -> list[_Block]:
        pieces = text.split(SEPARATOR)
        tail = pieces.pop()  # "" when the file ends with a separator, as it always does when we write it
        if tail.strip():
            pieces.append(tail)
        return [_parse_block(p) for p in pieces if p.strip()]

    def _settled_newest_first(self) -> list[_Block]:
        """Settled entries by date, newest first (file order breaks ties); cached per file version."""
        with self._lock:
            blocks = self._blocks()
            if self._views_for is not blocks:
                settled = [(b.date, i) for i, b in enumerate(blocks) if b.ok and not b.pending]
                settled.sort(reverse=True)
                self._settled_desc = [blocks[i] for _, i in settled]
                self._views_for = blocks
            return self._settled_desc

    def load_entries(self) -> list[dict[str, Any]]:
        """Every readable entry in file order (oldest first)."""
        return [b.to_entry() for b in self._blocks() if b.ok]

    def get_pending_entries(self, ticker: str | None = None) -> list[dict[str, Any]]:
        want = validate_ticker(ticker) if ticker is not None else None
        return [
            b.to_entry() for b in self._blocks() if b.ok and b.pending and (want is None or b.ticker == want)
        ]

    def get_past_context(self, ticker: str, n_same: int = 5, n_cross: int = 3, *, as_of: str | None = None) -> str:
        """The newest settled entries for ``ticker`` in full, then the newest lessons from others.

        With ``as_of`` (the analysis date) only entries dated before it whose holding window had
        closed by then (weekdays counted, holidays ignored) are used, so nothing from after the
        analysis date leaks in. Empty string when there is nothing to tell.
        """
        want = validate_ticker(ticker)
        n_same = _check_count(n_same, "n_same")
        n_cross = _check_count(n_cross, "n_cross")
        cutoff = validate_date(as_of, allow_future=True) if as_of is not None else None
        same: list[_Block] = []
        cross: list[_Block] = []
        for b in self._settled_newest_first():
            if len(same) >= n_same and len(cross) >= n_cross:
                break
            if cutoff is not None and (
                b.date >= cutoff or str(np.busday_offset(b.date, b.holding, roll="forward")) > cutoff
            ):
                continue
            if b.ticker == want:
                if len(same) < n_same:
                    same.append(b)
            elif len(cross) < n_cross:
                cross.append(b)
        parts: list[str] = []
        if same:
            lines = [f"Past decisions on {want} and what followed (newest first):"]
            for b in same:
                decision, reflection = b.body()
                lines.append(
                    f"[{b.date} | {b.ticker} | {b.rating} | return {_pct(b.raw_ret)} | "
                    f"alpha {_pct(b.alpha)} | {b.holding}d]\nDECISION:\n{decision.strip()}\n"
                    f"REFLECTION:\n{reflection.strip()}"
                )
            parts.append("\n\n".join(lines))
        if cross:
            lines = ["Lessons from other instruments (newest first):"]
            for b in cross:
                lines.append(
                    f"- [{b.date} | {b.ticker} | {b.rating} | return {_pct(b.raw_ret)} | "
                    f"alpha {_pct(b.alpha)} | {b.holding}d] {' '.join(b.body()[1].split())}"
                )
            parts.append("\n".join(lines))
        return "\n\n".join(parts)

    # ------------------------------------------------------------------ writing
    def _write(self, blocks: list[_Block]) -> None:
        blocks = self._rotate(blocks)
        data = "".join(b.raw + SEPARATOR for b in blocks).encode("utf-8")
        # Under the lock every temp file of ours is a leftover of a killed writer.
        with contextlib.suppress(OSError):
            for leftover in self.path.parent.glob(_temp_prefix(self.path) + "*.tmp"):
                with contextlib.suppress(OSError):
                    leftover.unlink()
        _atomic_write(self.path, data)
        with contextlib.suppress(OSError):
            st = os.stat(self.path)
            self._set_cache((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), blocks)

    def _rotate(self, blocks: list[_Block]) -> list[_Block]:
        if self.max_entries is None:
            return blocks
        excess = sum(b.ok for b in blocks) - self.max_entries
        if excess <= 0:
            return blocks
        settled = sorted((b.date, i) for i, b in enumerate(blocks) if b.ok and not b.pending)
        drop = {i for _, i in settled[:excess]}
        return [b for i, b in enumerate(blocks) if i not in drop]

    def _locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self._file_lock

    def store_decision(self, ticker: str, date: str, rating: str, decision: str) -> bool:
        """Store a pending decision; False (and nothing written) if (date, ticker) is already in the log."""
        ticker = validate_ticker(ticker)
        date = validate_date(date, allow_future=True)
        rating = _check_rating(rating)
        decision = _check_text(decision, "decision")
        with self._lock, self._locked():
            blocks = self._blocks()
            if any(b.ok and b.key == (date, ticker) for b in blocks):
                return False
            self._write([*blocks, _render_block(date, ticker, rating, decision)])
            return True

    def batch_update_with_outcomes(self, updates: Iterable[Mapping[str, Any]]) -> int:
        """Settle pending entries, all in one atomic write; returns how many were settled.

        Each update: ``{ticker, date, raw, alpha, holding, reflection}`` (raw and alpha as fractions,
        0.032 = +3.2%). Updates that match no pending entry are ignored; all are checked first.
        """
        wanted: dict[tuple[str, str], tuple[float, float, int, str]] = {}
        for i, upd in enumerate(updates):
            if not isinstance(upd, Mapping):
                raise ValidationError(f"Update {i} must be a dict with ticker, date, raw, alpha, holding, reflection.")
            missing = [k for k in ("ticker", "date", "raw", "alpha", "holding", "reflection") if k not in upd]
            if missing:
                raise ValidationError(f"Update {i} lacks {', '.join(missing)}.")
            key = (validate_date(upd["date"], allow_future=True), validate_ticker(upd["ticker"]))
            values = (
                _check_return(upd["raw"], "raw return"),
                _check_return(upd["alpha"], "alpha"),
                _check_count(upd["holding"], "holding"),
                _check_text(upd["reflection"], "reflection"),
            )
            wanted.setdefault(key, values)
        if not wanted:
            return 0
        with self._lock, self._locked():
            blocks = list(self._blocks())
            settled = 0
            for i, b in enumerate(blocks):
                if b.ok and b.pending and b.key in wanted:
                    raw, alpha, holding, reflection = wanted.pop(b.key)
                    blocks[i] = _render_block(
                        b.date, b.ticker, b.rating, b.body()[0],
                        raw=raw, alpha=alpha, holding=holding, reflection=reflection,
                    )
                    settled += 1
            if settled:
                self._write(blocks)
            return settled

    def __len__(self) -> int:
        return sum(b.ok for b in self._blocks())

    def __repr__(self) -> str:
        return f"TradingMemoryLog(path={str(self.path)!r})"
