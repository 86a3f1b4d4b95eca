"""The storage seams: what every backend of a kind offers, declared once as a ``typing.Protocol``.

Each kind has two backends, files under the home (the embedded default) and the desk's PostgreSQL
database (``storage_url``), and ``storage``'s factories return one or the other:

===============  =================================================  ==========================================
kind             protocol                                           backends
===============  =================================================  ==========================================
decision log     ``MemoryLog`` (``open_memory_log``)                ``memory.TradingMemoryLog``, ``PgMemoryLog``
role memory      ``RoleMemory`` (``open_role_memory``)              ``memory.FinancialSituationMemory``,
                                                                    ``PgRoleMemory``
saved runs       ``RunRecords`` (``open_run_records``)              ``FileRunRecords``, ``PgRunRecords``
watchlists       ``Watchlists`` (``open_watchlists``)               ``FileWatchlists``, ``PgWatchlists``
audit trail      ``AuditTrail`` (``audit.open_audit``)              ``FileAudit``, ``PgAudit``
===============  =================================================  ==========================================

The factories are annotated with these, so the type checker (``make test`` runs mypy) checks each
backend against its protocol: a method added to one backend and not the other, or with another
signature, fails there. The protocols are ``runtime_checkable`` as well (their methods are present;
signatures are the checker's). The market-data sources have theirs beside them:
``dataflows.provider.MarketData``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

__all__ = ["AuditResult", "AuditTrail", "MemoryLog", "RoleMemory", "RunRecords", "Tickers", "Watchlists"]

Tickers = list[str]  # a watchlist's tickers (inside Watchlists, ``list`` is its method)


@runtime_checkable
class MemoryLog(Protocol):
    """The decision log (docs/ARCHITECTURE.md, "Decision log grammar"): pending and settled decisions."""

    max_entries: int | None
    problems: list[str]  # what the last read could not read, described

    def load_entries(self, *, texts: bool = True) -> list[dict[str, Any]]: ...

    def load_summary(self) -> list[list[Any]]: ...

    def entry_texts(self, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str]]: ...

    def entry_status(self, ticker: str, trade_date: str) -> tuple[str, str | None]: ...

    def get_pending_entries(self, ticker: str | None = None) -> list[dict[str, Any]]: ...

    def get_past_context(self, ticker: str, n_same: int = 5, n_cross: int = 3, *,
                         as_of: str | None = None) -> str: ...

    def get_past_memory(self, ticker: str, n_same: int = 5, n_cross: int = 3, *,
                        as_of: str | None = None) -> tuple[str, list[dict[str, Any]]]: ...

    def store_decision(self, ticker: str, trade_date: str, final_trade_decision: str, *,
                       rating: str | None = None, provenance: Mapping[str, Any] | None = None) -> bool: ...

    def update_pending(self, ticker: str, trade_date: str, final_trade_decision: str, *,
                       rating: str | None = None,
                       provenance: Mapping[str, Any] | None = None) -> tuple[str, str | None]: ...

    def record_pm_decision(self, ticker: str, trade_date: str,
                           pm_decision: Mapping[str, Any]) -> dict[str, Any]: ...

    def batch_update_with_outcomes(self, updates: Iterable[Mapping[str, Any]]) -> int: ...

    def lessons_due(self) -> list[dict[str, Any]]: ...

    def clear_lessons_due(self, keys: Iterable[tuple[str, str]]) -> int: ...


@runtime_checkable
class RoleMemory(Protocol):
    """One role's BM25 memory of (situation, lesson) pairs (the specification's
    ``FinancialSituationMemory`` calls, and the lessons' ids, retirement and point-in-time recall)."""

    name: str
    problems: list[str]

    def get_memories(self, current_situation: str, n_matches: int = 1, *,
                     as_of: str | None = None) -> list[dict[str, Any]]: ...

    def recall_lessons(self, current_situation: str, n_matches: int = 1, *,
                       as_of: str | None = None) -> list[dict[str, Any]]: ...

    def lessons(self) -> list[dict[str, Any]]: ...

    def retired_ids(self) -> frozenset[str]: ...

    def retire(self, lesson: str, retired: bool = True) -> bool: ...

    def get_scores(self, current_situation: str) -> list[float]: ...

    def items(self) -> list[tuple[str, str]]: ...

    def count(self) -> int: ...

    def add_situations(self, situations_and_advice: Iterable[tuple[str, str]], *,
                       known_from: str | None = None) -> int: ...

    def add_lessons_once(self, situations_and_advice: Iterable[tuple[str, str]], *,
                         known_from: str | None = None, source: str | None = None) -> int: ...

    def clear(self) -> None: ...


@runtime_checkable
class RunRecords(Protocol):
    """Saved runs (state, rating, meta; a report), their earlier versions and their what-if forks.
    ``save_run`` and ``save_fork`` return where: a folder, or a "postgresql://…#ta_runs/T/D" locator."""

    def save_run(self, final_state: Mapping[str, Any], rating: str | None,
                 meta: Mapping[str, Any] | None = None) -> Path | str: ...

    def list_runs(self, *, include_previous: bool = False) -> list[dict[str, Any]]: ...

    def list_memory_used(self) -> list[dict[str, Any]]: ...

    def load_run(self, ticker: str, date: str, version: int | None = None) -> dict[str, Any]: ...

    def load_report(self, ticker: str, date: str) -> str: ...

    def save_fork(self, final_state: Mapping[str, Any], rating: str | None,
                  meta: Mapping[str, Any] | None = None) -> Path | str: ...

    def list_forks(self, ticker: str, date: str) -> list[dict[str, Any]]: ...

    def load_fork(self, ticker: str, date: str, n: int) -> dict[str, Any]: ...

    def update_run_meta(self, ticker: str, date: str, updates: Mapping[str, Any]) -> None: ...

    def append_item(self, ticker: str, date: str, key: str, item: Mapping[str, Any]) -> int: ...


@runtime_checkable
class Watchlists(Protocol):
    """The named lists of tickers (the Watchlist page, ``batch @name``); each its first saver's."""

    def list(self) -> dict[str, Tickers]: ...

    def owners(self) -> dict[str, str]: ...

    def save(self, name: str, tickers: str | Iterable[str], *, owner: str | None = None,
             lead: bool = False) -> Tickers: ...

    def delete(self, name: str, *, owner: str | None = None, lead: bool = False) -> bool: ...


class AuditResult(Protocol):
    """What checking the chain found (``audit.AuditCheck``): ``ok``, entries read, ``chained`` of them
    checked, the first entry that does not hold (1-based) and why."""

    @property
    def ok(self) -> bool: ...

    @property
    def entries(self) -> int: ...

    @property
    def chained(self) -> int: ...

    @property
    def broken_at(self) -> int | None: ...

    @property
    def problem(self) -> str | None: ...


@runtime_checkable
class AuditTrail(Protocol):
    """The append-only audit trail: a hash chain, each entry's hash covering the previous one."""

    def append(self, entry: Mapping[str, Any]) -> dict[str, Any]: ...

    def entries(self) -> list[dict[str, Any]]: ...

    def verify(self) -> AuditResult: ...

    def entries_checked(self) -> tuple[list[dict[str, Any]], AuditResult]: ...
