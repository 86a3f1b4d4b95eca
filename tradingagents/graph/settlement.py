"""Settlement on its own: price the pending decisions of the memory log, reflect, learn.

``Settler(config)`` builds only what settling needs — the quick model, the memory log, the role
memories (``team.MEMORY_NAMES``) and the data provider — never the agent graph, so the Memory log
page and the ``settle`` CLI can settle without building it::

    result = Settler(config).settle()          # or .settle("NVDA")
    result.settled   # [{ticker, date, rating, raw, alpha, holding, benchmark, reflection}]
    result.pending   # [{ticker, date, reason}]  e.g. "window closes on 2024-05-17"

For each pending entry whose holding window has closed: the raw return and the alpha against the
ticker's benchmark (``default_config.benchmark_for``), one quick-model reflection naming that
benchmark, and (when ``memory_enabled``) one lesson per role memory, knowable from the day the
window closed. All settled entries are written to the log in one atomic batch, then the lessons.
An entry that cannot be priced stays pending with the real reason; the others still settle.
``TradingAgentsGraph.settle_pending`` delegates here with its own model, log and memories.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tradingagents import team
from tradingagents.default_config import resolve_config
from tradingagents.errors import TradingAgentsError

log = logging.getLogger(__name__)

SETTLED_KEYS = ("ticker", "date", "rating", "raw", "alpha", "holding", "benchmark", "reflection")


@dataclass
class SettleResult:
    """What one ``settle`` call did: the entries it settled and those that stay pending (and why)."""

    settled: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        """``"TICKER DATE: reason"`` per entry left pending (the old ``settle_problems`` lines)."""
        return [f"{p['ticker']} {p['date']}: {p['reason']}" for p in self.pending]


def window_end(trade_date: str, holding: int) -> str:
    """The business day ``holding`` days after ``trade_date``: when its outcome becomes knowable."""
    import pandas as pd

    return (pd.Timestamp(trade_date) + pd.offsets.BDay(max(int(holding), 0))).date().isoformat()


class Settler:
    """Settles the memory log's pending decisions without the agent graph."""

    def __init__(
        self,
        config: Mapping[str, Any] | None,
        *,
        api_key: str | None = None,
        llm: Any = None,
        memory_log: Any = None,
        memories: Mapping[str, Any] | None = None,
    ) -> None:
        """``llm``, ``memory_log`` and ``memories`` default to new ones built from ``config`` (the
        graph passes its own, so the lessons land in the very objects its agents read)."""
        from tradingagents import storage

        self.config = resolve_config(config)
        if llm is None:
            from tradingagents.llm_clients.factory import create_llm

            llm = create_llm(self.config, "quick", api_key=api_key)
        self.llm = llm
        self.memory_log = memory_log if memory_log is not None else storage.open_memory_log(self.config)
        if memories is None:
            memories = {name: storage.open_role_memory(name, self.config) for name in team.MEMORY_NAMES}
        self.memories = dict(memories)
        self._reflector = None
        self._provider = None

    @property
    def memory_enabled(self) -> bool:
        return bool(self.config.get("memory_enabled", True))

    @property
    def reflector(self):
        if self._reflector is None:
            from tradingagents.graph.reflection import Reflector

            self._reflector = Reflector(self.llm, self.config)
        return self._reflector

    @property
    def provider(self):
        if self._provider is None:
            from tradingagents.dataflows.interface import get_provider

            self._provider = get_provider(self.config)
        return self._provider

    # ------------------------------------------------------------------ settle
    def settle(self, ticker: str | None = None) -> SettleResult:
        """Settle every pending entry (of ``ticker`` or all) whose holding window has closed.

        ``ticker`` is user input here (the page, the CLI): validated once, then trusted below.
        """
        from tradingagents.validation import validate_ticker

        return self.settle_validated(validate_ticker(ticker) if ticker is not None else None)

    def settle_validated(self, ticker: str | None = None) -> SettleResult:
        """``settle`` for a ticker that is already validated (propagate's own call)."""
        entries = self.memory_log.get_pending_entries(ticker) if ticker else self.memory_log.get_pending_entries()
        result = SettleResult()
        if not entries:
            return result
        lessons_all: list[tuple[dict[str, tuple[str, str]], str]] = []
        for entry in entries:
            try:
                settled, lessons = self._settle_one(entry)
            except TradingAgentsError as exc:  # a data or model failure: this entry stays pending
                result.pending.append({"ticker": entry["ticker"], "date": entry["date"], "reason": str(exc)})
                continue
            if isinstance(settled, str):
                result.pending.append({"ticker": entry["ticker"], "date": entry["date"], "reason": settled})
                continue
            result.settled.append(settled)
            if lessons is not None:
                lessons_all.append(lessons)
        if result.settled:
            self.memory_log.batch_update_with_outcomes(
                [{k: s[k] for k in ("ticker", "date", "raw", "alpha", "holding", "reflection")} for s in result.settled]
            )
            for lessons, known_from in lessons_all:
                self.remember(lessons, known_from)
        return result

    def _settle_one(self, entry: Mapping[str, Any]):
        """(settled dict, (lessons, known_from) or None), or (reason, None) when it stays pending."""
        from tradingagents.dataflows.returns import returns_or_reason

        holding_days = int(self.config["holding_days"])
        outcome, reason = returns_or_reason(self.provider, entry["ticker"], entry["date"],
                                            holding_days=holding_days, config=self.config)
        if outcome is None:
            return reason, None
        raw, alpha = float(outcome["raw"]), float(outcome["alpha"])
        holding = int(outcome["holding"])
        benchmark = outcome["benchmark"]
        kwargs = dict(ticker=entry["ticker"], date=entry["date"], rating=entry.get("rating"),
                      decision=entry.get("decision", ""), raw=raw, alpha=alpha, holding=holding,
                      reports=self._reports_for(entry["ticker"], entry["date"]), benchmark=benchmark)
        reflection = self.reflector.reflect_on_decision(**kwargs)
        lessons = None
        if self.memory_enabled:
            # a lesson is knowable from the day the holding window closed, never before
            known_from = outcome.get("end_date") or window_end(entry["date"], holding)
            lessons = (self.reflector.role_lessons(**kwargs), known_from)
        settled = {"ticker": entry["ticker"], "date": entry["date"], "rating": entry.get("rating"), "raw": raw,
                   "alpha": alpha, "holding": holding, "benchmark": benchmark, "reflection": reflection}
        return settled, lessons

    def _reports_for(self, ticker: str, date: str) -> dict[str, Any] | None:
        from tradingagents.storage import load_run

        try:
            state = load_run(self.config, ticker, date)["state"]
        except (FileNotFoundError, ValueError, OSError):
            return None
        return {k: state.get(k, "") for k in team.OUTPUT_KEYS}

    def remember(self, lessons: Mapping[str, tuple[str, str]], known_from: str | None) -> int:
        """Write one (situation, lesson) per role memory; nothing when memory is off. Returns how many."""
        if not self.memory_enabled:
            return 0
        written = 0
        for name, pair in lessons.items():
            memory = self.memories.get(name)
            if memory is not None and pair and pair[0] and pair[1]:
                memory.add_situations([(pair[0], pair[1])], known_from=known_from)
                written += 1
        return written
