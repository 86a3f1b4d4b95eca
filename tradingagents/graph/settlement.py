"""Settlement on its own: price the pending decisions of the memory log, reflect, learn.

``Settler(config)`` builds only what settling needs — the quick model, the memory log, the role
memories (``team.MEMORY_NAMES``) and the data provider — never the agent graph, so the Memory log
page and the ``settle`` CLI can settle without building it::

    result = Settler(config).settle()          # or .settle("NVDA")
    result.settled   # [{ticker, date, rating, raw, alpha, holding, benchmark, reflection}]
    result.pending   # [{ticker, date, reason}]  e.g. "window closes on 2024-05-17"

For each pending entry whose holding window has closed: the raw return and the alpha against the
ticker's benchmark (``config.benchmark_for``), one quick-model reflection naming that
benchmark, and (when ``memory_enabled``) one lesson per role memory, knowable from the day the
window closed. All settled entries are written to the log in one atomic batch that also keeps
their lessons; the lessons then go to the role memories, and the log forgets them only once all
are written (a failure in between is retried by the next settle, each lesson written once).
Each entry is priced from the data source it was decided on (its provenance). An entry that
cannot be priced, or is damaged, stays pending with the real reason; the others still settle.
``TradingAgentsGraph.settle_pending`` delegates here with its own model, log and memories.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tradingagents import team
from tradingagents.config import resolve_config
from tradingagents.errors import TradingAgentsError

if TYPE_CHECKING:  # imported where used (the reflector and the data layer load on first use)
    from tradingagents.dataflows.provider import MarketData
    from tradingagents.graph.reflection import Reflector

log = logging.getLogger(__name__)

SETTLED_KEYS = ("ticker", "date", "rating", "raw", "alpha", "holding", "benchmark", "reflection")
# kept in the log per settled entry (load_entries keys), not in SettleResult.settled
PRICE_KEYS = ("entry_price", "exit_price", "bench_raw", "end_date")
MIN_DATE = "1970-01-01"  # an entry dated before it is damaged (no source has prices that old)


def _reason(exc: BaseException) -> str:
    """A plain reason for an entry left pending (our errors' own message; a short wrap otherwise)."""
    message = " ".join(str(exc).split())[:300]
    if isinstance(exc, TradingAgentsError) and message:
        return message
    return f"a bad entry or bad data ({type(exc).__name__}: {message or 'no detail'})"


@dataclass
class SettleResult:
    """What one ``settle`` call did: the entries it settled and those that stay pending (and why)."""

    settled: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # "TICKER DATE: settled, but …" (a window shifted by a dropped row)

    @property
    def problems(self) -> list[str]:
        """``"TICKER DATE: reason"`` per entry left pending (the old ``settle_problems`` lines); the
        entries settled on imperfect data are in ``notes`` (and each settled dict's ``note``)."""
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
        self._reflector: Reflector | None = None
        self._provider: MarketData | None = None
        self._providers: dict[str, Any] = {}

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
        """The provider of this settler's own config (entries without provenance settle from it)."""
        if self._provider is None:
            from tradingagents.dataflows.interface import get_provider

            self._provider = get_provider(self.config)
        return self._provider

    def provider_for(self, entry: Mapping[str, Any]):
        """The data source the entry was decided on (its provenance), with this config otherwise;
        an entry without provenance (an old one) settles from this config's source."""
        vendor = entry.get("data_vendor")
        if not vendor or vendor == self.config.get("data_vendor"):
            return self.provider
        if vendor not in self._providers:
            from tradingagents.dataflows.interface import get_provider

            self._providers[vendor] = get_provider({**dict(self.config), "data_vendor": vendor})
        return self._providers[vendor]

    # ------------------------------------------------------------------ settle
    def settle(self, ticker: str | None = None) -> SettleResult:
        """Settle every pending entry (of ``ticker`` or all) whose holding window has closed.

        ``ticker`` is user input here (the page, the CLI): validated once, then trusted below.
        """
        from tradingagents.validation import validate_ticker

        return self.settle_validated(validate_ticker(ticker) if ticker is not None else None)

    def settle_validated(self, ticker: str | None = None, *, callbacks: list | None = None) -> SettleResult:
        """``settle`` for a ticker that is already validated (propagate's own call).

        Every entry is priced on its own: one that cannot be (its source is unreachable, its window
        is open, it is damaged) stays pending with its reason and the others still settle. The
        settled entries are written in one atomic batch *with* their lessons kept in the log; the
        lessons then go to the role memories and are forgotten by the log only once all are written,
        so a failure in between (a full disk) is retried by the next settle, each lesson once.
        """
        if callbacks is not None:  # a run's budget and usage counter see the reflections' model calls
            reflector = self.reflector
            before, reflector.callbacks = reflector.callbacks, list(callbacks)
            try:
                return self.settle_validated(ticker)
            finally:
                reflector.callbacks = before
        result = SettleResult()
        self.write_lessons_due()  # a previous settle that failed after marking its entries
        entries = self.memory_log.get_pending_entries(ticker) if ticker else self.memory_log.get_pending_entries()
        if not entries:
            return result
        updates = []
        for entry in entries:
            try:
                settled, lessons = self._settle_one(entry)
            except Exception as exc:  # a data or model failure, or a bad entry: this one stays pending
                result.pending.append({"ticker": entry["ticker"], "date": entry["date"], "reason": _reason(exc)})
                continue
            if isinstance(settled, str):
                result.pending.append({"ticker": entry["ticker"], "date": entry["date"], "reason": settled})
                continue
            result.settled.append({k: settled[k] for k in SETTLED_KEYS})
            if settled.get("note"):
                result.settled[-1]["note"] = settled["note"]
                result.notes.append(f"{entry['ticker']} {entry['date']}: settled, but {settled['note']}")
            update = {k: settled[k] for k in ("ticker", "date", "raw", "alpha", "holding", "reflection",
                                              "benchmark", "settled_by", *PRICE_KEYS)}
            if lessons is not None:
                pairs, known_from = lessons
                update["lessons_due"] = {k: [v[0], v[1]] for k, v in pairs.items() if v and v[0] and v[1]}
                update["lessons_known_from"] = known_from
            updates.append(update)
        if updates:
            self.memory_log.batch_update_with_outcomes(updates)
            self.write_lessons_due()
        return result

    def write_lessons_due(self) -> int:
        """Write the lessons the log still keeps, then let the log forget them. Each is written once:
        the memory itself skips a lesson it already holds, checked under its lock (``add_lessons_once``),
        so settles running at once in several processes never duplicate one. Returns how many were written."""
        due_of = getattr(self.memory_log, "lessons_due", None)
        if not callable(due_of):
            return 0
        due = due_of()
        if not due:
            return 0
        written = 0
        if self.memory_enabled:
            for item in due:  # an OSError here leaves the log's copy for the retry
                written += self.remember(item["lessons"], item["known_from"],
                                         source=f"{item['ticker']} {item['date']}")
        self.memory_log.clear_lessons_due([(item["ticker"], item["date"]) for item in due])
        return written

    def _settle_one(self, entry: Mapping[str, Any]):
        """(settled dict, (lessons, known_from) or None), or (reason, None) when it stays pending."""
        from tradingagents.dataflows.returns import returns_or_reason

        if str(entry["date"]) < MIN_DATE:
            return f"a bad entry: dated {entry['date']}, before {MIN_DATE}; it cannot be priced", None
        holding_days = int(self.config["holding_days"])
        vendor = entry.get("data_vendor")
        try:
            provider = self.provider_for(entry)
            outcome, reason = returns_or_reason(provider, entry["ticker"], entry["date"],
                                                holding_days=holding_days, config=self.config)
        except TradingAgentsError as exc:
            if vendor:
                return f"its data source ({vendor}, the one it was decided on) cannot serve now: {_reason(exc)}", None
            raise
        if outcome is None:
            return reason, None
        raw, alpha = float(outcome["raw"]), float(outcome["alpha"])
        holding = int(outcome["holding"])
        benchmark = outcome["benchmark"]
        kwargs = dict(ticker=entry["ticker"], date=entry["date"], rating=entry.get("rating"),
                      decision=entry.get("decision", ""), raw=raw, alpha=alpha, holding=holding,
                      reports=self._reports_for(entry["ticker"], entry["date"]), benchmark=benchmark)
        reflection = self.reflector.reflect_on_decision(**kwargs)
        pm_call = entry.get("pm_decision") or {}
        if pm_call.get("rating"):  # the PM's own call differed: the reflection says so, and who was right
            reflection = self.reflector.with_override(reflection, rating=entry.get("rating"),
                                                      pm_rating=pm_call["rating"], alpha=alpha)
        lessons = None
        # the role memories are shared by every ticker: an invented instrument's lessons stay out of them
        if self.memory_enabled and not entry.get("invented"):
            # a lesson is knowable from the day the holding window closed, never before
            known_from = outcome.get("end_date") or window_end(entry["date"], holding)
            lessons = (self.reflector.role_lessons(**kwargs), known_from)
        settled = {"ticker": entry["ticker"], "date": entry["date"], "rating": entry.get("rating"), "raw": raw,
                   "alpha": alpha, "holding": holding, "benchmark": benchmark, "reflection": reflection,
                   "entry_price": outcome.get("start_close"), "exit_price": outcome.get("end_close"),
                   "bench_raw": outcome.get("benchmark_raw"), "end_date": outcome.get("end_date"),
                   "settled_by": _who(self.config), "note": outcome.get("note")}
        return settled, lessons

    def _reports_for(self, ticker: str, date: str) -> dict[str, Any] | None:
        from tradingagents.storage import load_run

        try:
            state = load_run(self.config, ticker, date)["state"]
        except (FileNotFoundError, ValueError, OSError):
            return None
        return {k: state.get(k, "") for k in team.OUTPUT_KEYS}

    def remember(self, lessons: Mapping[str, tuple[str, str]], known_from: str | None, *,
                 source: str | None = None) -> int:
        """Write one (situation, lesson) per role memory, each only if that memory does not hold it yet;
        nothing when memory is off. Returns how many were written."""
        if not self.memory_enabled:
            return 0
        written = 0
        for name, pair in lessons.items():
            memory = self.memories.get(name)
            if memory is not None and pair and pair[0] and pair[1]:
                once = getattr(memory, "add_lessons_once", None)
                if once is None:  # a caller's own memory object with only the specification's method
                    memory.add_situations([(pair[0], pair[1])], known_from=known_from)
                    written += 1
                else:
                    written += once([(pair[0], pair[1])], known_from=known_from, source=source)
        return written


def _who(config) -> str:
    """Who settles (``settled_by``): the config's ``user`` (the app's signed-in e-mail), else the OS user."""
    from tradingagents.storage import default_user

    return default_user(config)
