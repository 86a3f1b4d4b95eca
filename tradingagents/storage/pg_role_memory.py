"""One role's BM25 memory in PostgreSQL, behind ``FinancialSituationMemory``'s interface.

Pairs live in ``ta_role_memory`` (one row each, with the role's name and the date from which the
lesson was knowable). Each instance keeps the file class's in-memory inverted index, built with the
file class's own tokenizer and scorer, so rankings and scores are identical to the file version on
the same pairs. Before answering, an instance reads the rows added since the newest id it has seen
(by any process on any machine) and rebuilds when the role's generation changed (a ``clear``).

Writers of one role serialise on a transaction-level advisory lock, so ids of a role commit in
increasing order and "rows after the newest id I have" never misses a row that commits late. An
``add_situations`` call's pairs are one transaction: all there or none.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from tradingagents.default_config import resolve_config
from tradingagents.storage.pg import LOCK_ROLE_MEMORY, database, pg_text, storage_url
from tradingagents.validation import validate_date


def _bm25_parts() -> tuple[Any, Any, Any, Any]:
    """The file memories' tokenizer, BM25 index, top-n selection and name check (reused, not copied).

    ``tradingagents.memory`` (the split package) when present, else the single module it came from.
    """
    try:
        from tradingagents.memory import bm25_tokenize, validate_memory_name
        from tradingagents.memory.bm25 import BM25Index, top_n
    except ImportError:
        from tradingagents.agents.utils import memory as module

        return module.bm25_tokenize, module._BM25Index, module._top_n, module.validate_memory_name
    return bm25_tokenize, BM25Index, top_n, validate_memory_name


class PgRoleMemory:
    """One role's memory in the desk database; same methods and results as the file class."""

    def __init__(self, name: str, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self._tokenize, self._Index, self._top_n, validate_name = _bm25_parts()
        self.name = validate_name(name)
        cfg = resolve_config(config)
        k1, b = cfg.get("bm25_k1", 1.5), cfg.get("bm25_b", 0.75)
        for key, value in (("bm25_k1", k1), ("bm25_b", b)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"config[{key!r}] must be a number, not {value!r}.")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs bm25_k1 >= 0 and 0 <= bm25_b <= 1; got k1={k1!r}, b={b!r}.")
        self.k1, self.b = float(k1), float(b)
        self.url = url or storage_url(cfg)
        if not self.url:
            raise ValueError("PgRoleMemory needs storage_url (or TRADINGAGENTS_STORAGE_URL) set.")
        self._db = database(self.url)
        self.problems: list[str] = []
        self._lock = threading.RLock()
        self._reset(None)
        with self._lock:
            self._sync()

    # ------------------------------------------------------------------ internal state
    def _reset(self, generation: int | None) -> None:
        self._index = self._Index(self.k1, self.b)
        self._situations: list[str] = []
        self._recommendations: list[str] = []
        self._known_from: list[str | None] = []
        self._latest_known: str | None = None
        self._last_id = 0
        self._generation = generation

    def _sync(self) -> None:
        """Index the rows other writers added since we last looked (lock held)."""
        while True:
            with self._db.transaction() as conn:
                # one statement, one snapshot: the generation and the new rows agree
                rows = conn.execute(
                    "SELECT g.generation, m.id, m.situation, m.recommendation, m.known_from FROM "
                    "(SELECT coalesce((SELECT generation FROM ta_role_memory_generation WHERE name = %(n)s), 0)"
                    " AS generation) g "
                    "LEFT JOIN ta_role_memory m ON m.name = %(n)s AND m.id > %(last)s ORDER BY m.id",
                    {"n": self.name, "last": self._last_id},
                ).fetchall()
            generation = rows[0][0]
            if generation != self._generation:
                if self._generation is None and self._last_id == 0:
                    self._generation = generation  # first look: these rows are the current ones
                else:
                    self._reset(generation)
                    continue
            for _gen, row_id, situation, recommendation, known_from in rows:
                if row_id is None:
                    continue  # the LEFT JOIN's empty row
                known = known_from.isoformat() if known_from is not None else None
                self._index.add(self._tokenize(situation))
                self._situations.append(situation)
                self._recommendations.append(recommendation)
                self._known_from.append(known)
                if known is not None and (self._latest_known is None or known > self._latest_known):
                    self._latest_known = known
                self._last_id = row_id
            return

    # ------------------------------------------------------------------ public API
    def add_situations(
        self, situations_and_advice: Iterable[tuple[str, str]], *, known_from: str | None = None
    ) -> int:
        """Add ``(situation, recommendation)`` pairs (one transaction); returns how many were added.

        ``known_from`` (YYYY-MM-DD): the first date these lessons were knowable; ``get_memories``
        with an earlier ``as_of`` never sees them.
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
        with self._lock:
            with self._db.transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_ROLE_MEMORY, self.name))
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO ta_role_memory (name, situation, recommendation, known_from) "
                        "VALUES (%s, %s, %s, %s)",
                        [(self.name, pg_text(s), pg_text(r), known_from) for s, r in pairs],
                    )
            self._sync()
        return len(pairs)

    def get_memories(
        self, current_situation: str, n_matches: int = 1, *, as_of: str | None = None
    ) -> list[dict[str, Any]]:
        """Top ``n_matches`` memories: ``matched_situation``, ``recommendation``, ``similarity_score``.

        Exactly the file class's ranking and normalisation; with ``as_of`` (YYYY-MM-DD), memories
        knowable only after that date are left out.
        """
        if not isinstance(current_situation, str):
            raise TypeError(f"The situation must be text, not {type(current_situation).__name__}.")
        if isinstance(n_matches, bool) or not isinstance(n_matches, (int, np.integer)):
            raise TypeError(f"n_matches must be a whole number, not {n_matches!r}.")
        if n_matches < 0:
            raise ValueError(f"n_matches must be 0 or more, not {n_matches}; use 0 for no matches.")
        if as_of is not None:
            as_of = validate_date(as_of, allow_future=True)
        tokens = self._tokenize(current_situation)
        with self._lock:
            self._sync()
            if not self._situations or n_matches == 0:
                return []
            excluded = None
            if as_of is not None and self._latest_known is not None and self._latest_known > as_of:
                future = np.fromiter(
                    (k is not None and k > as_of for k in self._known_from), dtype=bool, count=len(self._known_from)
                )
                if future.any():
                    excluded = future
            order, top_scores = self._top(tokens, int(n_matches), excluded)
            if len(order) == 0:
                return []
            best = float(top_scores[0])
            denom = best if best > 0 else 1.0
            return [
                {
                    "matched_situation": self._situations[i],
                    "recommendation": self._recommendations[i],
                    "similarity_score": float(s) / denom,
                }
                for i, s in zip(order.tolist(), top_scores.tolist(), strict=True)
            ]

    def _top(self, tokens: list[str], n: int, excluded: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(ids, scores) of the n best memories, best first: the index's own ``top`` when it has one."""
        if hasattr(self._index, "top"):
            return self._index.top(tokens, n, excluded)
        scores = self._index.scores(tokens)
        if excluded is not None:
            scores = np.where(excluded, -np.inf, scores)
        n = min(n, len(scores) - (int(excluded.sum()) if excluded is not None else 0))
        if n <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0)
        order = self._top_n(scores, n)
        return order, scores[order]

    def get_scores(self, current_situation: str) -> list[float]:
        """Raw BM25 score of every stored memory, in insertion order."""
        tokens = self._tokenize(current_situation)
        with self._lock:
            self._sync()
            return self._index.scores(tokens).tolist()

    @staticmethod
    def matched_terms(query: str, situation: str) -> list[str]:
        """Query tokens (unique, in query order) that also occur in ``situation``."""
        tokenize = _bm25_parts()[0]
        present = set(tokenize(situation))
        return list(dict.fromkeys(t for t in tokenize(query) if t in present))

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
        """Forget everything of this role, for every process sharing the database."""
        with self._lock:
            with self._db.transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_ROLE_MEMORY, self.name))
                conn.execute("DELETE FROM ta_role_memory WHERE name = %s", (self.name,))
                conn.execute(
                    "INSERT INTO ta_role_memory_generation (name, generation) VALUES (%s, 1) "
                    "ON CONFLICT (name) DO UPDATE SET generation = ta_role_memory_generation.generation + 1",
                    (self.name,),
                )
            self._reset(self._generation)
            self._sync()

    def __repr__(self) -> str:
        return f"PgRoleMemory({self.name!r}, {len(self._situations)} memories, url={self._db.label!r})"
