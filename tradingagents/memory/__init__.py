"""What the agents remember: per-role BM25 memories and the markdown decision log.

One job per module: ``tokens`` (the tokeniser), ``bm25`` (the index), ``files`` (the lock; whole
files are rewritten by ``tradingagents.fileio``), ``log_format`` (the log's entry grammar),
``situation_memory`` (``FinancialSituationMemory``) and ``trading_log`` (``TradingMemoryLog``).
Nothing here imports LangGraph, the agents or the storage layer (which builds on this one), so the
Memory pages and the CLI's ``settle`` stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tradingagents.lazy import lazy_getattr

if TYPE_CHECKING:
    from tradingagents.memory.log_format import SEPARATOR
    from tradingagents.memory.situation_memory import (
        ROLE_NAMES,
        FinancialSituationMemory,
        validate_memory_name,
    )
    from tradingagents.memory.tokens import bm25_tokenize
    from tradingagents.memory.trading_log import TradingMemoryLog

# each name from its module, imported on first use: the decision log's readers (the Memory log page,
# the CLI's settle) do not load the BM25 memories and numpy with it
_HOMES = {
    "SEPARATOR": "log_format",
    "ROLE_NAMES": "situation_memory",
    "FinancialSituationMemory": "situation_memory",
    "validate_memory_name": "situation_memory",
    "bm25_tokenize": "tokens",
    "TradingMemoryLog": "trading_log",
}

__all__ = [
    "ROLE_NAMES",
    "SEPARATOR",
    "FinancialSituationMemory",
    "TradingMemoryLog",
    "bm25_tokenize",
    "validate_memory_name",
]


__getattr__ = lazy_getattr(__name__, _HOMES)


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
