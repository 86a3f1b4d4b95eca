"""What the agents remember: per-role BM25 memories and the markdown decision log.

One job per module: ``tokens`` (the tokeniser), ``bm25`` (the index), ``files`` (the lock; whole
files are rewritten by ``tradingagents.fileio``), ``log_format`` (the log's entry grammar),
``situation_memory`` (``FinancialSituationMemory``) and ``trading_log`` (``TradingMemoryLog``).
Nothing here imports LangGraph, the agents or the storage layer (which builds on this one), so the
Memory pages and the CLI's ``settle`` stay light.
"""

from tradingagents.memory.log_format import SEPARATOR
from tradingagents.memory.situation_memory import ROLE_NAMES, FinancialSituationMemory, validate_memory_name
from tradingagents.memory.tokens import bm25_tokenize
from tradingagents.memory.trading_log import TradingMemoryLog

__all__ = [
    "ROLE_NAMES",
    "SEPARATOR",
    "FinancialSituationMemory",
    "TradingMemoryLog",
    "bm25_tokenize",
    "validate_memory_name",
]
