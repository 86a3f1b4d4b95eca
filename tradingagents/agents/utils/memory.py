"""The seed's name for the memories: ``tradingagents.memory`` holds them, one job per module."""

from tradingagents.memory import (
    ROLE_NAMES,
    SEPARATOR,
    FinancialSituationMemory,
    TradingMemoryLog,
    bm25_tokenize,
    validate_memory_name,
)

__all__ = [
    "ROLE_NAMES",
    "SEPARATOR",
    "FinancialSituationMemory",
    "TradingMemoryLog",
    "bm25_tokenize",
    "validate_memory_name",
]
