"""One run's facts, fixed before it starts (``RunContext``), and the one derivation of its checkpoint thread.

``TradingAgentsGraph.propagate`` checks its input once and builds a ``RunContext``; every step after it
(settle, execute, record: ``trading_graph.py``) reads the run from it instead of a dozen parameters.
A what-if fork (``run_from``) builds one too, for the rest of the team.

``thread_id_for`` is the engine's one rule for a run's checkpoint thread (DESIGN: ``sha256(TICKER:date:
signature)[:16]``, the signature folding in the analysts, the debate and risk rounds, the asset type and
the analysts' execution); the graph and the app (``studio/runs.run_thread_id``) both call it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tradingagents.graph.analyst_execution import analysts_for_asset

if TYPE_CHECKING:
    from tradingagents.graph.run_support import _RunReporter

__all__ = ["RunContext", "run_signature_for", "thread_id_for"]


def run_signature_for(config: Mapping[str, Any], analysts: Iterable[str], asset_type: str = "stock") -> str:
    """The signature of the graph ``config`` builds for ``analysts`` (already those of ``asset_type``)."""
    from tradingagents.storage import sqlite_checkpoint as ckpt  # LangGraph's saver: loaded on first use

    return ckpt.run_signature(list(analysts), config["max_debate_rounds"], config["max_risk_discuss_rounds"],
                              asset_type, analyst_execution=config.get("analyst_execution"))


def thread_id_for(ticker: str, trade_date: str, config: Mapping[str, Any], asset_type: str = "stock", *,
                  analysts: Iterable[str] | str | None = None) -> str:
    """The checkpoint thread of a run of ``ticker`` on ``trade_date`` (both validated by the caller: the
    session's date, as ``propagate`` keys the run) with ``config``'s graph: its ``selected_analysts``
    (or ``analysts``, a graph built with other ones) as they run on ``asset_type``, its rounds and its
    analysts' execution."""
    from tradingagents.storage import sqlite_checkpoint as ckpt

    chosen = analysts_for_asset(config.get("selected_analysts") if analysts is None else analysts, asset_type)
    return ckpt.thread_id(ticker, trade_date, run_signature_for(config, chosen, asset_type))


@dataclass(frozen=True)
class RunContext:
    """A run of the team, as checked before its first step: what every step reads.

    ``trade_date`` is the session the run is keyed by (folder, log, checkpoint, settlement);
    ``requested_date`` what was asked (a weekend becomes the Friday before: ``session_note`` says so).
    ``settings`` are the run's settings as shown (``TradingAgentsGraph.settings()``: run_started's and the
    meta's). ``reporter`` turns the graph's stream into the run's events and keeps its counters (mutable
    by design: it is the run's one listener); ``should_stop`` is the caller's stop signal. ``invented``
    (an instrument the source does not list, allowed by ``allow_synthetic``) and ``data_notes`` (CSV rows
    dropped, a short history) are the notes the input checks left; ``fresh`` discards a checkpoint.
    """

    ticker: str
    trade_date: str
    requested_date: str
    asset_type: str
    analysts: tuple[str, ...]
    thread_id: str
    settings: Mapping[str, Any]
    reporter: _RunReporter
    should_stop: Callable[[], bool] | None
    started_at: float
    session_note: str | None = None
    invented: bool = False
    data_notes: tuple[str, ...] = ()
    fresh: bool = False

    @property
    def tracker(self) -> Any:
        """The run's usage counter (the reporter's)."""
        return self.reporter.tracker

    def stop_requested(self) -> bool:
        return self.should_stop is not None and bool(self.should_stop())
