"""One role's BM25 memory in PostgreSQL, behind ``FinancialSituationMemory``'s interface.

Pairs live in ``ta_role_memory`` (one row each, with the role's name and the date from which the
lesson was knowable). Each instance keeps the file class's in-memory inverted index, built with the
file class's own tokenizer and scorer, so rankings and scores are identical to the file version on
the same pairs. Before answering, an instance reads the rows added since the newest id it has seen
(by any process on any machine) and rebuilds when the role's generation changed (a ``clear``).

Writers of one role serialise on a transaction-level advisory lock, so ids of a role commit in
increasing order and "rows after the newest id I have" never misses a row that commits late. An
``add_situations`` call's pairs are one transaction: all there or none. The server keeps each row's
lesson id (a generated column, the same hash as ``lesson_id``), so ``add_lessons_once`` checks under
that advisory lock, in the inserting statement, that the role holds no row with the id yet: writers
settling the same log at once store each lesson once. Retired lessons are rows of
``ta_role_memory_retired`` (name, lesson id): kept in ``ta_role_memory``, left out of every recall.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents.config import resolve_config
from tradingagents.memory.bm25 import BM25Index
from tradingagents.memory.situation_memory import RankedMemories, check_pairs, validate_memory_name
from tradingagents.memory.tokens import bm25_tokenize
from tradingagents.storage.pg import LOCK_ROLE_MEMORY, database, pg_text, storage_url


class PgRoleMemory(RankedMemories):
    """One role's memory in the desk database; same methods and results as the file class."""

    def __init__(self, name: str, config: Mapping[str, Any] | None = None, *, url: str | None = None) -> None:
        self.name = validate_memory_name(name)
        cfg = resolve_config(config)
        self.k1, self.b = float(cfg["bm25_k1"]), float(cfg["bm25_b"])  # the resolver checked their ranges
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
        self._index = BM25Index(self.k1, self.b)
        self._situations: list[str] = []
        self._recommendations: list[str] = []
        self._known_from: list[str | None] = []
        self._latest_known: str | None = None
        self._last_id = 0
        self._generation = generation
        self._id_list: list[str] = []
        self._retired: frozenset[str] = frozenset()

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
                retired = frozenset(r[0] for r in conn.execute(
                    "SELECT lesson_id FROM ta_role_memory_retired WHERE name = %s", (self.name,)).fetchall())
            generation = rows[0][0]
            if generation != self._generation:
                if self._generation is None and self._last_id == 0:
                    self._generation = generation  # first look: these rows are the current ones
                else:
                    self._reset(generation)
                    continue
            self._retired = retired
            for _gen, row_id, situation, recommendation, known_from in rows:
                if row_id is None:
                    continue  # the LEFT JOIN's empty row
                known = known_from.isoformat() if known_from is not None else None
                self._index.add(bm25_tokenize(situation))
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
        pairs, known_from = check_pairs(situations_and_advice, known_from)
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

    def add_lessons_once(
        self, situations_and_advice: Iterable[tuple[str, str]], *, known_from: str | None = None,
        source: str | None = None,
    ) -> int:
        """``add_situations`` for the pairs whose lesson id the role holds no row of yet (nor earlier in
        the call), and nothing when ``source`` (the decision learnt from) already gave the role its
        lessons; checked under the role's advisory lock. Returns how many were added."""
        from tradingagents.memory.situation_memory import lesson_id

        pairs, known_from = check_pairs(situations_and_advice, known_from)
        added = 0
        with self._lock:
            with self._db.transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_ROLE_MEMORY, self.name))
                if source is not None and conn.execute(
                        "SELECT 1 FROM ta_role_memory WHERE name = %s AND source = %s LIMIT 1",
                        (self.name, source)).fetchone():
                    pairs = []
                seen: set[str] = set()
                for s, r in pairs:
                    s, r = pg_text(s), pg_text(r)
                    lid = lesson_id(s, r)
                    if lid in seen:
                        continue
                    seen.add(lid)
                    row = conn.execute(
                        "INSERT INTO ta_role_memory (name, situation, recommendation, known_from, source) "
                        "SELECT %(n)s, %(s)s, %(r)s, %(k)s, %(src)s WHERE NOT EXISTS "
                        "(SELECT 1 FROM ta_role_memory WHERE name = %(n)s AND lesson_id = %(id)s) RETURNING id",
                        {"n": self.name, "s": s, "r": r, "k": known_from, "id": lid, "src": source},
                    ).fetchone()
                    added += row is not None
            self._sync()
        return added

    def _set_retired(self, lesson: str, retired: bool) -> None:
        with self._db.transaction() as conn:
            if retired:
                conn.execute("INSERT INTO ta_role_memory_retired (name, lesson_id) VALUES (%s, %s) "
                             "ON CONFLICT DO NOTHING", (self.name, lesson))
            else:
                conn.execute("DELETE FROM ta_role_memory_retired WHERE name = %s AND lesson_id = %s",
                             (self.name, lesson))

    def clear(self) -> None:
        """Forget everything of this role, for every process sharing the database."""
        with self._lock:
            with self._db.transaction() as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_ROLE_MEMORY, self.name))
                conn.execute("DELETE FROM ta_role_memory WHERE name = %s", (self.name,))
                conn.execute("DELETE FROM ta_role_memory_retired WHERE name = %s", (self.name,))
                conn.execute(
                    "INSERT INTO ta_role_memory_generation (name, generation) VALUES (%s, 1) "
                    "ON CONFLICT (name) DO UPDATE SET generation = ta_role_memory_generation.generation + 1",
                    (self.name,),
                )
            self._reset(self._generation)
            self._sync()

    def __repr__(self) -> str:
        return f"PgRoleMemory({self.name!r}, {len(self._situations)} memories, url={self._db.label!r})"
