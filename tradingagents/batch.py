"""A watchlist batch: many tickers on one date, concurrently, under one model-call bound.

``run_batch(tickers, date, config, max_cost_usd=None, on_update=None, should_stop=None)`` runs one
``TradingAgentsGraph.propagate`` per ticker on the executor of the config (``tradingagents.executor``:
threads by default, ``ray`` for Ray tasks). The tickers running at once share one
``max_concurrent_llm_calls`` bound: on threads every graph's models hold slots of one shared
semaphore (so a graph may use the whole bound when the others wait); on Ray (other processes) each
graph gets an equal share of it (at least 1), as in the backtest. A ticker that fails does not
stop the others; its status says why and its checkpoint is kept.

Resume is running the same batch again: a ticker whose saved run (same graph signature and
models) exists is reused without a model call; a checkpointed one continues where it stopped.
With Ray, results and checkpoints live in the shared storage (files under the home on one machine,
the desk's database with ``storage_url``), so a task retried on another worker continues the run.

Budgets: ``max_cost_usd`` in the config is each run's budget; ``run_batch(max_cost_usd=X)`` is the
batch's, a hard ceiling: with threads every model call of every run reserves its worst case (prompt
bound plus ``llm_max_output_tokens``) from the batch's one ledger before it is made, and is refused
when it would not fit; with Ray (other processes) each ticker gets an equal share as its own budget. A ticker stopped by a budget has status
``budget`` (resumable, exit 5).

Each ticker's outcome is a ``TickerOutcome`` (plain data, JSON-able); ``on_update(outcome)`` is
called whenever one changes (status, running cost), in the caller's process. ``exit_code(outcomes)``
is the batch's exit code (``BATCH_EXIT_ORDER``: the worst first).

Saved watchlists (``batch @name``, the Watchlist page) live in the storage layer:
``tradingagents.storage.list_watchlists`` / ``save_watchlist`` / ``delete_watchlist``
(``storage/watchlists.py``); a batch takes at most as many tickers as a watchlist holds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from tradingagents.config import _thaw, resolve_config
from tradingagents.errors import (
    EXIT_BAD_INPUT,
    EXIT_BUSY,
    EXIT_DATA_UNAVAILABLE,
    EXIT_ERROR,
    EXIT_LLM_FAILURE,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_STORAGE,
    BudgetExceeded,
    RunStopped,
    exit_code_for,
    is_resumable,
)
from tradingagents.storage.watchlists import valid_tickers
from tradingagents.validation import validate_date

__all__ = ["BATCH_EXIT_ORDER", "TickerOutcome", "exit_code", "parse_tickers", "run_batch"]

# the batch's exit code is the first of these that any ticker has (the worst first): a bug, bad
# input, the data source, a model failure, busy elsewhere, stopped or over budget; 0 when all ok
BATCH_EXIT_ORDER = (EXIT_STORAGE, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_DATA_UNAVAILABLE, EXIT_LLM_FAILURE, EXIT_BUSY, EXIT_STOPPED)
STATUSES = ("queued", "running", "done", "reused", "failed", "stopped", "budget")


@dataclass
class TickerOutcome:
    ticker: str
    date: str
    status: str = "queued"
    rating: str | None = None
    cost_usd: float | None = 0.0
    error: str | None = None
    exit_code: int = EXIT_OK
    resumable: bool = False
    resumed: bool = False
    elapsed_s: float = 0.0
    results_path: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    session: str | None = None  # the session analysed (a non-trading date's last session before it)
    session_note: str | None = None  # said when the session is not the date asked for
    invented: bool = False  # an invented instrument of the demo market (--allow-synthetic)

    @property
    def ok(self) -> bool:
        return self.status in ("done", "reused")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_tickers(value: str | Iterable[str]) -> list[str]:
    """Tickers from "NVDA, AAPL msft" or a list (validated; at most ``storage.watchlists.MAX_TICKERS``)."""
    return valid_tickers(value)


def exit_code(outcomes: Iterable[TickerOutcome]) -> int:
    codes = {o.exit_code for o in outcomes if not o.ok}
    for code in BATCH_EXIT_ORDER:
        if code in codes:
            return code
    return EXIT_ERROR if codes else EXIT_OK


# ---------------------------------------------------------------------------- one ticker (a task)
def _plain(config: Mapping[str, Any]) -> dict[str, Any]:
    """The settings as plain, picklable data (a Ray task resolves them again)."""
    return {k: _thaw(v) for k, v in config.items()}


def run_ticker(task: Mapping[str, Any], emit: Callable[[dict[str, Any]], None] | None = None,
               stop: Callable[[], bool] | None = None, guard=None, limiter=None) -> dict[str, Any]:
    """One ticker of a batch (the executor's task): a TickerOutcome as a dict; never raises for the run.

    ``task``: ``{"ticker", "date", "config", "api_key"?}`` (plain data, so a Ray worker can run it).
    """
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    ticker, date = task["ticker"], task["date"]
    out = TickerOutcome(ticker, date, status="running")
    started = time.time()

    def send() -> None:
        if emit is not None:
            emit(out.to_dict())

    send()
    try:
        cfg = resolve_config(task["config"])
        graph = TradingAgentsGraph(config=cfg, api_key=task.get("api_key"))
        if limiter is not None:  # the batch's one bound instead of this graph's own
            for llm in (graph.quick_thinking_llm, graph.deep_thinking_llm):
                if getattr(llm, "_limiter", None) is not None:
                    llm._limiter = limiter
        graph.budget_guard = guard.ledger if guard is not None else None
        if guard is not None:  # under the batch's budget every answer has a real limit (its worst case)
            from tradingagents.pricing import output_limit

            for llm in (graph.quick_thinking_llm, graph.deep_thinking_llm):
                if getattr(llm, "max_tokens", 0) is None:
                    llm.max_tokens = output_limit(cfg, budgeted=True)
        saved = graph.saved_run(ticker, date)
        if saved is not None:
            usage = (saved.get("meta") or {}).get("usage") or {}
            out.status, out.rating, out.cost_usd = "reused", saved["rating"], 0.0
            out.usage = {k: usage.get(k) for k in ("llm_calls", "input_tokens", "output_tokens", "cost_usd")}
            out.results_path = (saved.get("meta") or {}).get("results_path")
        else:
            def on_event(event) -> None:
                if event.kind == "llm_usage":
                    out.cost_usd = event.data.get("cost_usd")
                    send()

            if guard is not None:
                guard.check_start(ticker)
            _state, rating = graph.propagate(ticker, date, on_event=on_event if emit else None, should_stop=stop)
            meta = graph.last_run["record"]["meta"]
            usage = meta.get("usage") or {}
            out.status, out.rating, out.resumed = "done", rating, bool(graph.last_run.get("resumed"))
            out.cost_usd = usage.get("cost_usd")
            out.usage = {k: usage.get(k) for k in ("llm_calls", "input_tokens", "output_tokens", "cost_usd")}
            out.results_path = graph.last_run.get("results_path")
            out.session, out.session_note = graph.last_run.get("date"), meta.get("session_note")
            out.invented = bool(meta.get("invented"))
    except Exception as exc:
        out.status = ("budget" if isinstance(exc, BudgetExceeded) else
                      "stopped" if isinstance(exc, RunStopped) else "failed")
        out.error = str(exc) or type(exc).__name__
        out.exit_code = exit_code_for(exc)
        out.resumable = is_resumable(exc)
    out.elapsed_s = round(time.time() - started, 3)
    send()
    return out.to_dict()


class _BatchBudget:
    """The batch's budget shared by its runs in this process (threads): one ``pricing.CostLedger`` that
    every model call of every ticker reserves its worst case from before it is made (``RunGuard``)."""

    def __init__(self, limit: float | None):
        from tradingagents.pricing import CostLedger

        self.limit = limit
        self.ledger = CostLedger(limit, "the batch's") if limit is not None else None

    def total(self) -> float:
        return self.ledger.snapshot()[0] if self.ledger is not None else 0.0

    def check_start(self, ticker: str) -> None:
        """Nothing left in the batch's budget: do not start ``ticker``."""
        if self.ledger is not None and self.ledger.exhausted():
            raise BudgetExceeded(
                f"The batch's budget is reached: spent ${self.total():.4f} of ${self.limit:.4f}, nothing is left "
                f"for {ticker}. Run the batch again with a larger budget (--max-cost) to continue; finished "
                "tickers are reused."
            )


# ---------------------------------------------------------------------------- the batch
def run_batch(
    tickers: str | Iterable[str],
    date: str,
    config: Mapping[str, Any] | None = None,
    *,
    max_cost_usd: float | None = None,
    api_key: str | None = None,
    on_update: Callable[[TickerOutcome], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[TickerOutcome]:
    """Run every ticker on ``date``; returns one TickerOutcome per ticker, in the order given."""
    from tradingagents.executor import get_executor

    names = parse_tickers(tickers)
    date = validate_date(date)
    if max_cost_usd is not None:
        max_cost_usd = resolve_config({"max_cost_usd": max_cost_usd})["max_cost_usd"]
    cfg = resolve_config(config)
    from tradingagents import storage

    storage.check_storage(cfg)  # an unreachable desk database: StorageError (exit 7) before any ticker runs
    executor = get_executor(cfg, len(names))
    bound = int(cfg["max_concurrent_llm_calls"])
    run_cfg = _plain(cfg)
    outcomes = {t: TickerOutcome(t, date) for t in names}
    lock = threading.Lock()
    user_stop = should_stop or (lambda: False)
    storage_down = threading.Event()  # a desk database that fails stops the batch at once

    def update(doc: Mapping[str, Any]) -> None:
        if doc.get("exit_code") == EXIT_STORAGE:
            storage_down.set()  # the other tickers stop at their next step (see stop below)
        with lock:
            outcome = TickerOutcome(**doc)
            if outcomes.get(outcome.ticker) == outcome:
                return  # nothing new (the final results repeat the last update)
            outcomes[outcome.ticker] = outcome
        if on_update is not None:
            try:
                on_update(outcome)
            except Exception:  # a broken display must not break the batch
                pass

    if on_update is not None:
        for outcome in outcomes.values():
            on_update(outcome)
    tasks = []
    for t in names:
        task: dict[str, Any] = {"ticker": t, "date": date, "config": run_cfg}
        if api_key:
            task["api_key"] = api_key
        tasks.append(task)

    def stop() -> bool:
        return storage_down.is_set() or user_stop()

    if executor.name == "ray":
        share = max(1, bound // executor.max_workers)
        for task in tasks:
            task["config"] = {**run_cfg, "max_concurrent_llm_calls": share}
        if max_cost_usd is not None:  # other processes: an equal share of the batch's budget each
            per = max_cost_usd / len(names)
            own = run_cfg.get("max_cost_usd")
            for task in tasks:
                task["config"] = {**task["config"], "max_cost_usd": min(per, own) if own else per}
        results = executor.run(run_ticker, tasks, on_done=lambda r: update(_result_doc(r)), should_stop=stop)
    else:
        budget = _BatchBudget(max_cost_usd) if max_cost_usd is not None else None
        shared = threading.BoundedSemaphore(bound)

        def fn(task):
            return run_ticker(task, emit=update, stop=stop, guard=budget, limiter=shared)

        results = executor.run(fn, tasks)
    for r in results:
        update(_result_doc(r))
    return [outcomes[t] for t in names]


def _result_doc(result) -> dict[str, Any]:
    """A task's outcome; a task that could not run at all (its worker died for good) is a failure."""
    if result.error is None and isinstance(result.value, Mapping):
        return dict(result.value)
    task = result.task
    exc = result.error or RuntimeError("the task returned nothing")
    status = "stopped" if isinstance(exc, RunStopped) else "failed"
    return TickerOutcome(task["ticker"], task["date"], status=status, error=str(exc) or type(exc).__name__,
                         exit_code=exit_code_for(exc), resumable=True).to_dict()
