"""What the SQLite and the PostgreSQL checkpoint stores read the same way from a LangGraph checkpoint tuple."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig


def thread_config(tid: str) -> RunnableConfig:
    """The run config that names a thread's latest checkpoint (the root namespace)."""
    return {"configurable": {"thread_id": str(tid), "checkpoint_ns": ""}}


def step_of(found: Any) -> int:
    """The step of a checkpoint tuple (-1 when its metadata has none)."""
    step = (found.metadata or {}).get("step")
    return int(step) if isinstance(step, int) else -1


def checkpoint_row(tid: str, found: Any, fallback_ticker: str = "") -> dict[str, Any]:
    """``list_checkpoints``' row of a thread: ticker, thread_id, step, updated, date."""
    values = (found.checkpoint or {}).get("channel_values") or {}
    ticker = values.get("company_of_interest")
    return {
        "ticker": str(ticker).upper() if ticker else fallback_ticker,
        "thread_id": str(tid),
        "step": step_of(found),
        "updated": (found.checkpoint or {}).get("ts"),
        "date": values.get("trade_date"),
    }
