"""TradingAgentsGraph: propagate a ticker on a date through the team, settle, resume, events.

``propagate(ticker, date)`` (docs/ARCHITECTURE.md, "propagate"): validate the input once, before any model call (everything
below receives validated values); (0) no decision without data: ``session.check_prices`` must pass
(else ``DataUnavailable``, CLI exit 3: nothing settled, logged, saved or charged); (1) settle this
ticker's pending log entries whose holding window has closed (``settlement.Settler``, sharing this graph's model, log and memories); (2) build the
initial state with ``past_context`` from the log ("" when ``memory_enabled`` is off) and
``instrument_context`` from the data provider; (3) run the graph
with a per-ticker SQLite checkpoint (durability "sync") — a run that failed, was stopped or was
killed resumes at the node that did not finish, finished nodes are not run again; (4) save the
final state (results/<TICKER>/<date>/state.json + report.md, whose header names the session note,
the missing data and what happened to the log entry) and store the decision as pending in the
memory log with its provenance — a re-analysis replaces a pending entry of the same day, a settled
one is kept; (5) clear the checkpoint; return ``(final_state, rating)``.

Progress is reported through ``on_event(RunEvent)`` (the contract is in ``events.py``), translated
from LangGraph's own stream (``stream_mode=["tasks", "updates"]``, plus "checkpoints" with a stop
signal and "messages" with a listener) in the thread that runs the graph, with exactly one terminal event per call; LLM call and token counts come from a
per-run ``UsageTracker`` attached as a graph callback. Node names, teams, speakers and memory names
all come from the roster (``tradingagents.team``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langgraph.errors import GraphRecursionError

from tradingagents import pricing, storage, team
from tradingagents.agents.utils.agent_utils import memory_used_of
from tradingagents.config import normalize_analysts, resolve_config
from tradingagents.errors import (
    ConfigError,
    RunAlreadyActive,
    RunPaused,
    RunStopped,
    TradingAgentsError,
    exit_code_for,
    is_resumable,
)
from tradingagents.graph.analyst_execution import analysts_for_asset
from tradingagents.graph.checkpoint_router import COUNTERS_KEY, CheckpointRouter
from tradingagents.graph.conditional_logic import ConditionalLogic
from tradingagents.graph.events import EventCallback, describe_error, empty_record
from tradingagents.graph.evidence import ledger as evidence_ledger
from tradingagents.graph.propagation import Propagator
from tradingagents.graph.run_context import RunContext, run_signature_for, thread_id_for
from tradingagents.graph.run_support import (
    _Budget,
    _RunReporter,
    _UsageSidecar,
    checkpoint_fence,
    earlier_engines,
    engine_of,
    engines_of,
)
from tradingagents.graph.setup import SCRATCHPAD_KEYS, CompiledGraphCache, GraphSetup
from tradingagents.graph.signal_processing import SignalProcessor, state_rating
from tradingagents.storage.files_runs import REPORT_FILE, STATE_FILE, public_meta
from tradingagents.validation import (
    InvalidDateError,
    ValidationError,
    validate_date,
    validate_ticker,
)

if TYPE_CHECKING:  # imported where used (settling loads the reflector and the data layer)
    from tradingagents.dataflows.provider import MarketData
    from tradingagents.graph.settlement import Settler

log = logging.getLogger(__name__)

NODE_ORDER = list(team.ROLE_BY_NODE)  # the roster's nodes in run order (``ran_on`` lists them so)

__all__ = ["ASSET_TYPES", "RunAlreadyActive", "TradingAgentsGraph", "validate_asset_type", "validate_run_date"]

ASSET_TYPES = ("stock", "etf", "index", "fx", "crypto")
_READ_BOOK = object()  # initial_state's default: read the desk's book itself


def validate_run_date(value: object) -> str:
    """``validate_date`` with a short message for absurdly long input (never echo 10 kB back)."""
    if isinstance(value, str) and len(value.strip()) > 32:
        raise InvalidDateError(
            f"The date is {len(value)} characters long; use an ISO date YYYY-MM-DD, for example 2024-05-10."
        )
    return validate_date(value)


def validate_asset_type(asset_type: object) -> str:
    text = str(asset_type or "stock").strip().lower()
    if text not in ASSET_TYPES:
        raise ValidationError(f"Unknown asset type {asset_type!r}. Use one of: {', '.join(ASSET_TYPES)}.")
    return text


@dataclass(frozen=True)
class _Segment:
    """What ``_begin`` opened: the run config (thread, route, date, callbacks), the callbacks that every
    model call of the segment goes through (settling's reflections too), the checkpoint found."""

    run_config: dict[str, Any]
    callbacks: list[Any]
    snapshot: Any


def instrument_context_for(provider: MarketData, ticker: str) -> str:
    """"NVDA — NVIDIA Corp (Technology / Semiconductors, NASDAQ, USD); data: synthetic demo data"."""
    label = getattr(provider, "label", "") or type(provider).__name__
    try:
        ident = provider.identity(ticker) or {}
    except Exception as exc:  # a data fault must not stop the analysis; the context says so
        return f"{ticker} (identity unavailable: {type(exc).__name__}); data: {label}"
    name = ident.get("name") or ticker
    sector = " / ".join(x for x in (ident.get("sector"), ident.get("industry")) if x)
    extra = ", ".join(x for x in (sector, ident.get("exchange"), ident.get("currency")) if x)
    return f"{ticker} — {name}" + (f" ({extra})" if extra else "") + f"; data: {label}"




class TradingAgentsGraph:
    """The team of agents as one LangGraph graph, with its memories, log and checkpoints."""

    def __init__(
        self,
        selected_analysts=None,
        debug: bool = False,
        config: Mapping[str, Any] | None = None,
        *,
        api_key: str | None = None,
        callbacks: list | None = None,
    ):
        from tradingagents.llm_clients.factory import create_llms

        self.config = resolve_config(config)
        if selected_analysts is None:
            selected_analysts = self.config.get("selected_analysts")
        self.selected_analysts = normalize_analysts(selected_analysts)
        self.analyst_execution = self.config["analyst_execution"]  # checked by the config
        self.debug = bool(debug)
        self.user_callbacks = list(callbacks or [])

        # models: no key ever goes into self.config; the clients keep it as a secret
        # (one shared bound of max_concurrent_llm_calls for both models)
        self.quick_thinking_llm, self.deep_thinking_llm = create_llms(self.config, api_key=api_key)

        # the five role memories, as attributes named by the roster (graph.trader_memory, …)
        # (files under the home, or the desk's PostgreSQL database when storage_url is set)
        for name in team.MEMORY_NAMES:
            setattr(self, name, storage.open_role_memory(name, self.config))
        self.memory_log = storage.open_memory_log(self.config)

        self.conditional_logic = ConditionalLogic(
            self.config["max_debate_rounds"], self.config["max_risk_discuss_rounds"]
        )
        self.propagator = Propagator(int(self.config["max_recur_limit"]))
        self.signal_processor = SignalProcessor()
        self._settler: Settler | None = None
        self._lock = threading.Lock()
        # compiled once per graph shape and reused by every run (any ticker, any date): checkpoints
        # are routed per run to the ticker's database, tools read the run's date from its config
        self.checkpoint_router = CheckpointRouter(self.config)
        self.compiled_graphs = CompiledGraphCache()
        # a batch's shared budget (a pricing.CostLedger every model call of the run reserves from; batch.py)
        self.budget_guard: Any = None
        # the desk's book: the Portfolio Manager reads the holding, the decision card sizes an order
        # (graph/book_view.py); the backtest turns it off (its dates are not the book's)
        self.use_book = True

        self.curr_state: dict[str, Any] | None = None
        self.last_run: dict[str, Any] = {}
        # entries the last settle_pending could not price (they stay pending), with the reason
        self.settle_problems: list[str] = []
        # the graph of the configured analysts on a stock, compiled now as the reference compiles its
        # graph in its constructor: a run starts with the graph ready (other shapes compile on first use)
        self.compiled_graph(analysts_for_asset(self.selected_analysts, "stock"))

    # ------------------------------------------------------------------ helpers
    @property
    def memories(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in team.MEMORY_NAMES}

    @property
    def reflector(self):
        """The quick-model Reflector (the settler's: one per graph)."""
        return self.settler.reflector

    def _provider(self) -> MarketData:
        from tradingagents.dataflows.interface import get_provider

        return get_provider(self.config)

    def run_signature(self, asset_type: str = "stock") -> str:
        return self._signature(analysts_for_asset(self.selected_analysts, asset_type), asset_type)

    def thread_id(self, ticker: str, trade_date: str, asset_type: str = "stock") -> str:
        """The checkpoint thread of a run (an edge: the input is validated here; ``thread_id_for`` derives it)."""
        return thread_id_for(validate_ticker(ticker), validate_date(trade_date), self.config,
                             validate_asset_type(asset_type), analysts=self.selected_analysts)

    def has_resumable_run(self, ticker: str, trade_date: str, asset_type: str = "stock") -> bool:
        if not self.config.get("checkpoint_enabled"):
            return False
        tid = self.thread_id(ticker, trade_date, asset_type)
        return storage.has_checkpoint(self.config, ticker, tid)  # the path is made safe where it is built

    def saved_run(self, ticker: str, trade_date: str) -> dict[str, Any] | None:
        """The saved run of ``ticker`` on ``trade_date`` if this graph (same thread: analysts, rounds,
        execution) and the same providers and models made it and it has a rating; its decision is then
        stored in the memory log (a no-op when it is there: the run may have died just after saving).
        A batch or a backtest takes such a run instead of running it again."""
        try:
            ticker, trade_date = validate_ticker(ticker), validate_run_date(trade_date)
        except ValueError:
            return None  # propagate raises it, with the terminal event; there is no run of it to take
        try:  # a non-trading date's run is kept under its session
            trade_date = self._check_data(ticker, trade_date)[0]
        except (TradingAgentsError, ValueError):
            pass  # propagate raises the same, with the terminal event
        try:
            saved = storage.load_run(self.config, ticker, trade_date)
        except (FileNotFoundError, ValueError, OSError):
            return None
        meta = saved.get("meta") or {}
        tid = thread_id_for(ticker, trade_date, self.config, analysts=self.selected_analysts)
        same = (meta.get("thread_id") == tid
                and all(meta.get(k) == self.config.get(k)
                        for k in ("llm_provider", "quick_think_llm", "deep_think_llm", "data_vendor")))
        if not same or saved.get("rating") is None:
            return None
        self.memory_log.store_decision(ticker, trade_date, (saved.get("state") or {}).get("final_trade_decision", ""),
                                       rating=saved["rating"])
        return saved

    def build_graph(self, trade_date: str | None, analysts: list[str], entry: str | None = None):
        """The uncompiled StateGraph (tools read data up to ``trade_date`` only).

        ``trade_date=None``: the provider's shared tools, which read each run's date from the run
        config (``configurable["as_of"]``), so one compiled graph serves every date.
        """
        from tradingagents import agents
        from tradingagents.dataflows import tools as data_tools

        # one set of tools (building tool schemas is the costly part), split per analyst
        if trade_date is None:
            all_tools = data_tools.shared_tools(self.config)
        else:
            all_tools = data_tools.make_tools(self.config, as_of=trade_date)

        def tools_for(key: str) -> list:  # the analyst's own file names its tools
            return [all_tools[name] for name in agents.analyst_tool_names(key)]

        # memory off (the "no memory" ablation): the agents get no role memory to read
        memories = self.memories if self.config.get("memory_enabled", True) else dict.fromkeys(team.MEMORY_NAMES)
        setup = GraphSetup(
            self.quick_thinking_llm, self.deep_thinking_llm, memories, self.conditional_logic,
            self.config, tools_for,
        )
        return setup.setup_graph(analysts, self.analyst_execution, entry=entry)

    def compiled_graph(self, analysts: list[str], entry: str | None = None):
        """The compiled graph of this shape, compiled on first use and then reused (``entry``: the
        graph of a what-if fork, which starts at that node)."""
        key = (tuple(analysts), self.analyst_execution, self.config.get("analyst_data"),
               bool(self.config.get("memory_enabled", True)), entry)
        return self.compiled_graphs.get(
            key, lambda: self.build_graph(None, analysts, entry=entry).compile(checkpointer=self.checkpoint_router))

    # ------------------------------------------------------------------ propagate
    def propagate(
        self,
        ticker: str,
        trade_date: str,
        asset_type: str = "stock",
        *,
        on_event: EventCallback | None = None,
        should_stop: Callable[[], bool] | None = None,
        fresh: bool = False,
    ) -> tuple[dict[str, Any], str]:
        """Run the team on ``ticker`` as of ``trade_date``; returns ``(final_state, rating)``.

        A checkpoint of this run (same ticker, date and graph) is resumed, also under other models
        than the ones it began with: run_started's ``earlier_engines`` and the meta's ``ran_on`` then
        say which nodes ran on which models. ``fresh``: discard such a checkpoint and start afresh.

        The input is validated here, once (``_context``); everything below receives the ``RunContext``.
        Exactly one terminal event (run_finished, run_failed or run_stopped) is emitted for every call.
        """
        started_at = time.time()
        reporter = self._reporter(on_event)
        with self._terminal_on_failure(reporter, reporter.tracker, started_at):
            ctx = self._context(ticker, trade_date, asset_type, reporter, should_stop, started_at, fresh=fresh)
            with self._exclusive(ctx.ticker, ctx.trade_date, ctx.thread_id):
                final_state, rating, record = self._run(ctx)
        self._finished(ctx, final_state, rating, record)
        return final_state, rating

    def _reporter(self, on_event: EventCallback | None) -> _RunReporter:
        """The run's reporter: its events, and its usage counter priced by the run's pricing table."""
        from tradingagents.llm_clients.usage import UsageTracker

        tracker = UsageTracker()
        table = pricing.pricing_table(self.config)
        return _RunReporter(on_event, self.debug, tracker,
                            cost=lambda: pricing.cost_by_node(tracker.by_node(), self.config, table)["cost_usd"])

    def _checked(self, ticker: object, trade_date: object, asset_type: object) -> dict[str, Any]:
        """The checks before any model call, made once: ticker, date and asset type validated; an instrument
        the source does not list refused (exit 2) unless invented ones are allowed; no decision without prices
        (exit 3), a non-trading date analysed as its session (the last one on or before it), the key of
        everything that follows (folder, log, checkpoint, settlement); a CSV file that cannot be trusted
        refused (exit 3)."""
        from tradingagents.dataflows.interface import check_instrument, input_notes

        ticker = validate_ticker(ticker)
        requested = validate_run_date(trade_date)
        asset = validate_asset_type(asset_type)
        invented = check_instrument(self.config, ticker)
        session, session_note = self._check_data(ticker, requested)
        data_notes = input_notes(self.config, self._provider(), ticker, session)
        return {"ticker": ticker, "trade_date": session, "requested_date": requested, "asset_type": asset,
                "analysts": analysts_for_asset(self.selected_analysts, asset), "session_note": session_note,
                "invented": bool(invented), "data_notes": tuple(data_notes)}

    def _context(self, ticker: object, trade_date: object, asset_type: object, reporter: _RunReporter,
                 should_stop: Callable[[], bool] | None, started_at: float, *, fresh: bool = False) -> RunContext:
        """The run as checked (``_checked``), with its thread, its settings and its listeners."""
        checked = self._checked(ticker, trade_date, asset_type)
        analysts = tuple(checked.pop("analysts"))
        tid = thread_id_for(checked["ticker"], checked["trade_date"], self.config, checked["asset_type"],
                            analysts=analysts)
        return RunContext(**checked, analysts=analysts, thread_id=tid, settings=self.settings(), reporter=reporter,
                          should_stop=should_stop, started_at=started_at, fresh=fresh)

    def _finished(self, ctx: RunContext, final_state: dict[str, Any], rating: str, record: dict[str, Any]) -> None:
        """A finished run: ``last_run`` (what the CLI and the backtest read), run_finished, ``curr_state``."""
        elapsed = time.time() - ctx.started_at
        reporter, tracker = ctx.reporter, ctx.tracker
        self.last_run = {
            "ticker": ctx.ticker,
            "date": ctx.trade_date,
            "thread_id": ctx.thread_id,
            "resumed": record["meta"].get("resumed", False),
            "elapsed_s": elapsed,
            "node_times_ms": reporter.node_times_ms(),
            "node_spans": reporter.node_spans,
            "usage": dict(tracker.totals()),
            "usage_by_node": dict(tracker.by_node()),
            "results_path": record["results_path"],
            "record": record,
        }
        reporter.terminal("run_finished", rating=rating, elapsed_s=round(elapsed, 3), record=record)
        with self._lock:
            self.curr_state = final_state

    @contextlib.contextmanager
    def _terminal_on_failure(self, reporter: _RunReporter, tracker, started_at: float):
        """The one terminal event of a run that did not finish (run_stopped or run_failed), then re-raise."""
        checkpoints = bool(self.config.get("checkpoint_enabled"))
        try:
            yield
        except RunStopped:
            reporter.usage_tick()
            reporter.terminal("run_stopped", resumable=checkpoints,
                              record=empty_record(self._partial_meta(reporter, tracker, started_at)))
            raise
        except Exception as exc:
            reporter.usage_tick()
            reporter.terminal("run_failed", error=describe_error(exc), error_type=type(exc).__name__,
                              exit_code=exit_code_for(exc), resumable=checkpoints and is_resumable(exc),
                              record=empty_record(self._partial_meta(reporter, tracker, started_at)))
            raise
        except BaseException:  # KeyboardInterrupt and the like: the checkpoint is kept, as for a stop
            reporter.terminal("run_stopped", resumable=checkpoints,
                              record=empty_record(self._partial_meta(reporter, tracker, started_at)))
            raise

    # ------------------------------------------------------------------ what-if forks
    def run_from(self, ticker: str, trade_date: str, inputs: Mapping[str, Any], entry: str, *, tid: str,
                 analysts: list[str], save: Callable[[dict[str, Any], str, dict[str, Any]], Any],
                 asset_type: str = "stock", extra_meta: Mapping[str, Any] | None = None,
                 on_event: EventCallback | None = None, should_stop: Callable[[], bool] | None = None,
                 ) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """Run the rest of the team from ``entry`` on ``inputs`` (a what-if fork; ``graph/whatif.py``).

        The same run path as ``propagate`` (events, budget, checkpoint fence, a checkpoint of its own
        thread ``tid`` that a failed fork resumes from), minus what belongs to a decision: nothing is
        settled, nothing goes into the memory log, nothing is taught to the role memories. The nodes
        before ``entry`` are not in the graph, so no model call is made for them. ``save(final_state,
        rating, meta)`` stores the result and returns where; returns ``(final_state, rating, record)``.
        The fork's ticker and date come checked from the saved run (``whatif.fork_run``).
        """
        started_at = time.time()
        reporter = self._reporter(on_event)
        ctx = RunContext(ticker=ticker, trade_date=trade_date, requested_date=trade_date, asset_type=asset_type,
                         analysts=tuple(analysts), thread_id=tid, settings=self.settings(), reporter=reporter,
                         should_stop=should_stop, started_at=started_at)
        with self._terminal_on_failure(reporter, reporter.tracker, started_at), self._exclusive(ticker, trade_date, tid):
            final_state, rating, record = self._run_tail(ctx, inputs=dict(inputs), entry=entry, save=save,
                                                         extra_meta=dict(extra_meta or {}))
        reporter.terminal("run_finished", rating=rating, elapsed_s=round(time.time() - started_at, 3), record=record)
        return final_state, rating, record

    def _run_tail(self, ctx: RunContext, *, inputs: dict[str, Any], entry: str,
                  save: Callable[[dict[str, Any], str, dict[str, Any]], Any],
                  extra_meta: dict[str, Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """A fork's run: begin on its own thread, execute from ``entry``, record with ``save``."""

        cfg = self.config
        reporter, tracker = ctx.reporter, ctx.tracker
        sidecar = self._sidecar(ctx)
        graph = self.compiled_graph(list(ctx.analysts), entry=entry)
        with self._route(ctx, sidecar) as route:
            try:
                segment = self._begin(ctx, graph, route, sidecar)
                snapshot = self._execute(ctx, graph, segment, self._inputs(ctx, segment, fork_inputs=inputs))
            except BaseException:
                sidecar.save(reporter, ctx.started_at)
                raise
            final_state, turns, rating = self._outcome(snapshot)
            meta = {
                "ticker": ctx.ticker,
                "date": ctx.trade_date,
                "asset_type": ctx.asset_type,
                "analysts": list(ctx.analysts),
                "analyst_execution": self.analyst_execution,
                **ctx.settings,
                "instrument_context": final_state.get("instrument_context"),
                "thread_id": ctx.thread_id,
                "by": storage.default_user(cfg),
                "resumed": reporter.resumed,
                "elapsed_s": round(time.time() - ctx.started_at + sidecar.elapsed_before, 3),
                "usage": {**tracker.totals(), **pricing.cost_by_node(tracker.by_node(), cfg)},
                "node_times_ms": reporter.node_times_ms(),
                "debate_turns": turns,
                "decision": self._decision_card(final_state, ctx),
                "memory_used": memory_used_of(final_state),
                "warnings": list(reporter.warnings),
                **extra_meta,
                "config": self.config,  # saved as public_config(...) only
            }
            saved_meta = public_meta(cfg, meta)
            folder = save(final_state, rating, saved_meta)
            return final_state, rating, self._close_saved(route, ctx.ticker, ctx.thread_id, sidecar, folder,
                                                          saved_meta)

    def _sidecar(self, ctx: RunContext) -> _UsageSidecar:
        """The run's counters kept beside its checkpoint (a failed or stopped segment's, added on resume)."""
        sidecar = _UsageSidecar(self.config, ctx.ticker, ctx.thread_id)
        sidecar.started_at = ctx.started_at
        return sidecar

    @contextlib.contextmanager
    def _route(self, ctx: RunContext, sidecar: _UsageSidecar) -> Iterator[dict[str, Any]]:
        """This run's checkpointer: the ticker's database (or a fresh in-memory one), closed when the run
        ends, after saving and clearing. A damaged database moved aside is a warning of the run."""
        with self.checkpoint_router.route(ctx.ticker, counters=sidecar.doc if sidecar.enabled else None) as route:
            ctx.reporter.warnings.extend(getattr(self.checkpoint_router.saver_for(route), "warnings", None) or [])
            yield route

    def _clear_thread(self, route: Any, ticker: str, tid: str) -> None:
        """Clear a checkpoint thread on the run's own connection (still open), or through storage."""
        clear = getattr(self.checkpoint_router.saver_for(route), "clear_thread", None)
        if callable(clear):
            clear(tid)
        else:
            storage.clear_checkpoint(self.config, ticker, tid)

    @staticmethod
    def _outcome(snapshot: Any) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
        """(final state without the scratchpads and turns, the debate turns, the rating: the structured one wins)."""
        final_state = {k: v for k, v in dict(snapshot.values).items() if k not in SCRATCHPAD_KEYS}
        turns = list(final_state.pop("debate_turns", None) or [])
        rating = final_state["final_rating"] = state_rating(final_state)
        return final_state, turns, rating

    def _close_saved(self, route: Any, ticker: str, tid: str, sidecar: Any, folder: Any,
                     saved_meta: dict[str, Any]) -> dict[str, Any]:
        """(5) A saved run (or fork) clears its checkpoint (and the counters of earlier segments), on the run's own
        connection to the database: it is still open (the route closes it when its block ends). Returns the
        record: a folder under the home, or in the desk's database a "postgresql://…#ta_runs/T/D" locator."""
        if self.config.get("checkpoint_enabled"):
            self._clear_thread(route, ticker, tid)
        sidecar.clear()
        on_disk = isinstance(folder, Path)
        return {
            "results_path": str(folder),
            "report_path": str(folder / REPORT_FILE) if on_disk else None,
            "state_path": str(folder / STATE_FILE) if on_disk else None,
            "meta": saved_meta,
        }

    def _signature(self, analysts: list[str], asset_type: str) -> str:
        return run_signature_for(self.config, analysts, asset_type)

    @staticmethod
    def _partial_meta(reporter: _RunReporter, tracker, started_at: float) -> dict[str, Any]:
        """What is known of a run that did not finish (for the record of run_failed/run_stopped)."""
        return {
            "ran_on": engines_of(reporter.ran_on, NODE_ORDER),
            "usage": dict(tracker.totals()),
            "elapsed_s": round(time.time() - started_at, 3),
            "node_times_ms": reporter.node_times_ms(),
            "debate_turns": list(reporter.debate_turns),
        }

    @contextlib.contextmanager
    def _exclusive(self, ticker: str, trade_date: str, tid: str):
        """One run of a (ticker, date, graph) at a time, across threads and processes.

        Two at once would share one checkpoint thread and interleave its writes; the second is
        refused straight away with a message instead. Without checkpoints there is nothing shared
        to protect (results and the log are written atomically and idempotently), so no lock.
        """
        if not self.config.get("checkpoint_enabled"):
            yield
            return
        try:
            lock = storage.run_lock(self.config, ticker, tid)  # a lock file, or a desk-wide database lock
            lock.__enter__()
        except RunAlreadyActive:
            raise RunAlreadyActive(
                f"An analysis of {ticker} on {trade_date} with these settings is already running "
                "(in this app, another process or another machine of the desk). Wait for it to finish or "
                "stop it, then try again."
            ) from None
        try:
            yield
        finally:
            lock.__exit__(None, None, None)

    def _check_data(self, ticker: str, trade_date: str) -> tuple[str, str | None]:
        """No decision without data: the source serves the ticker's prices up to the date (else
        ``DataUnavailable``, CLI exit 3, before any model call). Returns (session, note)."""
        from tradingagents.dataflows.session import check_prices, note_for

        session = check_prices(self._provider(), ticker, trade_date)
        return session, note_for(trade_date, session)

    def _store_in_log(self, ticker: str, trade_date: str, decision: str, rating: str, invented: bool = False,
                      ran_on: list[dict[str, Any]] | None = None) -> None:
        provenance: dict[str, Any] = {
            "data_vendor": self.config.get("data_vendor"),
            "llm_provider": self.config.get("llm_provider"),
            "by": storage.default_user(self.config),
        }
        models = pricing.models_used(self.config)  # none for the offline engine: no model ran
        if models:
            provenance["models"] = models
        if invented:  # an invented instrument: labelled in the log, kept out of other tickers' lessons
            provenance["invented"] = True
        if ran_on and len(ran_on) > 1:  # one decision, more than one engine (a resume under other models)
            provenance["ran_on"] = [{"llm_provider": g.get("llm_provider"),
                                     "models": {"quick": g.get("quick_think_llm"), "deep": g.get("deep_think_llm")},
                                     "nodes": list(g.get("nodes") or [])} for g in ran_on]
        update = getattr(self.memory_log, "update_pending", None)
        if callable(update):
            update(ticker, trade_date, decision, rating=rating, provenance=provenance)
        else:  # a log without update_pending (a stand-in in a test)
            self.memory_log.store_decision(ticker, trade_date, decision, rating=rating)

    def _run(self, ctx: RunContext) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """The run's named steps on its checkpoint route: begin (run_started), (1) settle, (2)-(3) execute,
        (4)-(5) record. (0), no decision without data, was checked by ``_context``: nothing is settled,
        logged, saved or charged otherwise."""
        sidecar = self._sidecar(ctx)
        graph = self.compiled_graph(list(ctx.analysts))  # compiled once per shape
        book = self._run_book(ctx.ticker, ctx.trade_date)
        with self._route(ctx, sidecar) as route:
            try:
                segment = self._begin(ctx, graph, route, sidecar)
                self._settle_before_run(ctx.ticker, ctx.reporter, segment.callbacks)
                snapshot = self._execute(ctx, graph, segment, self._inputs(ctx, segment, book=book))
            except BaseException:
                sidecar.save(ctx.reporter, ctx.started_at)  # the counters of this segment are added on resume
                raise
            return self._record(ctx, route, sidecar, snapshot, book)

    def _record(self, ctx: RunContext, route: Any, sidecar: _UsageSidecar, snapshot: Any,
                book: Any) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """(4) Save the run, then log its decision as pending (a settled entry stays as it was measured:
        the report says so); (5) clear its checkpoint. Returns ``(final_state, rating, record)``."""
        cfg = self.config
        final_state, turns, rating = self._outcome(snapshot)
        ran_on = engines_of(ctx.reporter.ran_on, NODE_ORDER)
        status, log_note, version_note = self._log_notes(ctx.ticker, ctx.trade_date, rating)
        meta = self._run_meta(ctx, final_state, turns, rating, sidecar, book, ran_on=ran_on, log_note=log_note,
                              version_note=version_note)
        saved_meta = public_meta(cfg, meta)
        folder = storage.save_run(cfg, final_state, rating, saved_meta)
        if status != "settled":
            self._store_in_log(ctx.ticker, ctx.trade_date, final_state.get("final_trade_decision", ""), rating,
                               ctx.invented, ran_on)
        return final_state, rating, self._close_saved(route, ctx.ticker, ctx.thread_id, sidecar, folder, saved_meta)

    def _log_notes(self, ticker: str, trade_date: str, rating: str) -> tuple[str, str | None, str | None]:
        """(the log's entry status, what happens to it, the earlier run kept as a version): said in the report."""
        status, previous = self.memory_log.entry_status(ticker, trade_date)
        if status == "pending" and previous != rating:
            log_note = f"updated the pending decision of {trade_date}: {previous} → {rating}"
        elif status == "pending":
            log_note = f"updated the pending decision of {trade_date} (still {rating})"
        elif status == "settled":
            log_note = (f"the memory log keeps the settled decision of {trade_date} ({previous}); this "
                        f"{rating} re-analysis is saved as the session's current run and is not logged")
        else:
            log_note = None
        try:  # a second run of the same session is a re-analysis: the earlier run is kept as a version
            earlier = storage.load_run(self.config, ticker, trade_date)
        except (FileNotFoundError, ValueError, OSError):
            earlier = None
        version_note = None
        if earlier is not None:
            version_note = (f"the session {trade_date} was analysed before ({earlier.get('rating') or 'no rating'}); "
                            f"that run is kept as an earlier version (History lists both) and this {rating} "
                            "run is the current one")
        return status, log_note, version_note

    def _run_meta(self, ctx: RunContext, final_state: dict[str, Any], turns: list[dict[str, Any]], rating: str,
                  sidecar: _UsageSidecar, book: Any, *, ran_on: list[dict[str, Any]], log_note: str | None,
                  version_note: str | None) -> dict[str, Any]:
        """The saved run's meta (docs/ARCHITECTURE.md, "The event contract": ``record.meta``)."""
        from tradingagents.dataflows.tools import missing_from

        cfg, reporter, tracker = self.config, ctx.reporter, ctx.tracker
        data_notes = list(final_state.get("analyst_data_notes") or [])
        card = self._decision_card(final_state, ctx)
        return {
            "ticker": ctx.ticker,
            "date": ctx.trade_date,
            "asset_type": ctx.asset_type,
            "analysts": list(ctx.analysts),
            "analyst_execution": self.analyst_execution,
            # how the analysts got their data: "tools" (their models asked) or "prefetch"; the notes
            # say which analyst fell back to prefetch, and why (a server that refused tools)
            "analyst_data": cfg.get("analyst_data"),
            "analyst_data_notes": data_notes,
            **ctx.settings,
            "instrument_context": final_state.get("instrument_context"),
            "thread_id": ctx.thread_id,
            "by": storage.default_user(cfg),  # who ran it: config "user" (the app's signed-in e-mail), else the OS user
            "resumed": reporter.resumed,
            # which nodes ran on which models: more than one group when a checkpoint begun under other
            # models was resumed (run_notes says so in the report)
            "ran_on": ran_on,
            "session_note": ctx.session_note,
            "requested_date": ctx.requested_date or ctx.trade_date,
            "invented": bool(ctx.invented),
            "data_notes": list(ctx.data_notes),  # CSV rows dropped, a history shorter than the indicators need
            "missing_data": missing_from(reporter.tool_texts),
            "log_note": log_note,
            "version_note": version_note,
            "elapsed_s": round(time.time() - ctx.started_at + sidecar.elapsed_before, 3),
            # tokens, and what they cost at the pricing table's list prices (None: a model without a price)
            "usage": {**tracker.totals(), **pricing.cost_by_node(tracker.by_node(), cfg)},
            "node_times_ms": reporter.node_times_ms(),
            "debate_turns": turns,
            # the portfolio manager's notes to the judges: {before, note, by, at}
            "pm_notes": [dict(n) for n in final_state.get("pm_notes") or []],
            # the decision card (rating, action, conviction, levels, size, stated and scored horizon)
            "decision": card,
            # every figure of every text, found in the run's data or not (graph/evidence.py)
            "evidence": evidence_ledger(final_state, turns, card),
            # the order the rating makes of the desk's book (None: no book): side, shares, notional,
            # weight before and after, the cap that bound it
            "order": book.order(rating) if book is not None else None,
            # what the roles were given from memory, recorded by the nodes that gathered it
            "memory_used": memory_used_of(final_state),
            "warnings": list(reporter.warnings) + data_notes,
            "config": self.config,  # saved as public_config(...) only
        }

    def _settle_before_run(self, ticker: str, reporter: _RunReporter, callbacks: list | None = None) -> None:
        """(1) Settle what is due for this ticker, as its own step (settle_started/settle_finished), before
        the initial state reads the log; its reflections are model calls of this run (``callbacks``: the
        run's budget guard and usage counter see them). A data outage here must not block the analysis, nor be
        swallowed: settle_finished also carries ``problems`` ("TICKER DATE: reason" per entry left
        pending) and ``error`` (why settling failed as a whole, else None)."""
        reporter.emit("settle_started", None, ticker=ticker)
        settled = pending = 0
        error = None
        try:
            outcome = self.settler.settle_validated(ticker, callbacks=callbacks)
            self.settle_problems = outcome.problems
            settled, pending = len(outcome.settled), len(outcome.pending)
        except Exception as exc:
            log.warning("settling %s failed before the run: %s", ticker, exc)
            error = describe_error(exc)
            self.settle_problems = [f"{ticker}: settling failed: {error}"]
        reporter.emit("settle_finished", None, ticker=ticker, settled=settled, pending=pending,
                      problems=list(self.settle_problems), error=error)

    def add_pm_note(self, ticker: str, trade_date: str, note: str, *, before: str | None = None,
                    by: str | None = None, asset_type: str = "stock") -> dict[str, Any]:
        """Add the portfolio manager's note to a run paused before a judge (``RunPaused``): written into the
        run's checkpoint (LangGraph's ``update_state`` on the ``pm_notes`` channel), so the judge reads it when
        the run continues, after a restart too. ``before`` defaults to the judge the run waits for; returns the
        note as kept. ``ValidationError`` when the run is not paused before a judge."""
        import datetime as _dt

        from tradingagents.config.checks import check_pm_notes

        with self._paused(ticker, trade_date, asset_type) as (graph, run_config, waiting, _values):
            if not waiting:
                raise ValidationError(f"The run of {ticker} on {trade_date} is not paused before a judge: there is "
                                      "no verdict to add a note to.")
            at = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
            checked = check_pm_notes([{"before": before or waiting[0], "note": str(note or ""),
                                       "by": by or storage.default_user(self.config), "at": at}], "note")
            if not checked:
                raise ValidationError("Write a note, or continue without one.")
            [kept] = checked
            graph.update_state(run_config, {"pm_notes": [dict(kept)]})
        storage.record_audit(self.config, "pm_note", by=kept["by"], target=f"{ticker} {trade_date}",
                             before=kept["before"])
        return dict(kept)

    @contextlib.contextmanager
    def _paused(self, ticker: str, trade_date: str, asset_type: str = "stock"):
        """(compiled graph, run config, [judges the run waits for], state values) of a run's checkpoint."""
        ticker = validate_ticker(ticker)
        trade_date = validate_run_date(trade_date)
        asset_type = validate_asset_type(asset_type)
        analysts = analysts_for_asset(self.selected_analysts, asset_type)
        tid = thread_id_for(ticker, trade_date, self.config, asset_type, analysts=analysts)
        graph = self.compiled_graph(analysts)
        with self.checkpoint_router.route(ticker) as route:
            run_config = {"configurable": {"thread_id": tid, **route}}
            snapshot = graph.get_state(run_config)
            waiting = [team.ROLE_BY_NODE[n].key for n in snapshot.next or ()
                       if n in team.ROLE_BY_NODE and team.ROLE_BY_NODE[n].judges]
            yield graph, run_config, waiting, dict(snapshot.values or {})

    def paused_state(self, ticker: str, trade_date: str, asset_type: str = "stock") -> dict[str, Any] | None:
        """What a run paused before a judge holds so far (its state: the debate turns, the plan, the notes),
        with ``paused_before`` (the judge's key); None when it is not paused before one."""
        with self._paused(ticker, trade_date, asset_type) as (_graph, _config, waiting, values):
            return {**values, "paused_before": waiting[0]} if waiting else None

    def _pm_notes(self) -> list[dict[str, Any]]:
        """The config's notes to the judges, each stamped with who gave it and when (if it does not say)."""
        import datetime as _dt

        at = _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        by = storage.default_user(self.config)
        return [{"before": n["before"], "note": n["note"], "by": n.get("by") or by, "at": n.get("at") or at}
                for n in self.config.get("pm_notes") or []]

    def _decision_card(self, final_state: dict[str, Any], ctx: RunContext) -> dict[str, Any]:
        """The decision card (``graph/decision_card.py``); a call that trades nothing and names no price shows
        the close it is measured from (the last on or before the decision date, or none when the source has
        none)."""
        from tradingagents.graph.book_view import close_on
        from tradingagents.graph.decision_card import (
            decision_card,
            wants_reference_price,
            with_reference_price,
        )

        card = decision_card(final_state, self.config.get("holding_days"))
        if not wants_reference_price(card):
            return card
        return with_reference_price(card, close_on(self._provider(), ctx.ticker, ctx.trade_date))

    def _run_book(self, ticker: str, trade_date: str):
        """The desk's book as this run sees it (``graph/book_view.py``), or None (no book, blind, off)."""
        if not self.use_book:
            return None
        from tradingagents.graph.book_view import run_book

        return run_book(self.config, self._provider(), ticker, trade_date)

    def _begin(self, ctx: RunContext, graph: Any, route: dict[str, Any], sidecar: _UsageSidecar) -> _Segment:
        """Open this segment of the run on its checkpoint ``route``: the run config (the budget guard refuses
        first; the fence makes the checkpoints so far durable before each call), a checkpoint of the thread
        cleared first when ``fresh``, whether it resumes, the counters of earlier segments; run_started."""
        from tradingagents.dataflows.tools import AS_OF_KEY

        reporter = ctx.reporter
        budget = _Budget(self.config.get("max_cost_usd"), self.budget_guard, self.config, ctx.ticker, ctx.trade_date,
                         ctx.should_stop)
        fence = checkpoint_fence(self.checkpoint_router.saver_for(route))
        callbacks = [*budget.callbacks(), reporter.tracker, *fence, *self.user_callbacks]
        args = self.propagator.get_graph_args(callbacks=callbacks, thread_id=ctx.thread_id,
                                              **{AS_OF_KEY: ctx.trade_date}, **route)
        run_config = args["config"]
        snapshot = graph.get_state(run_config)
        if ctx.fresh and snapshot.values and self.config.get("checkpoint_enabled"):
            self._clear_thread(route, ctx.ticker, ctx.thread_id)
            snapshot = graph.get_state(run_config)
        # ``next`` omits tasks whose writes are already saved (a stop or a failure mid-superstep), so
        # "unfinished" is: any task left in the saved step
        pending_tasks = bool(snapshot.next) or bool(snapshot.tasks)
        resumed = reporter.resumed = bool(snapshot.values) and pending_tasks
        reporter.engine = engine_of(ctx.settings)
        sidecar.load(reporter, resume=bool(snapshot.values), kept=(snapshot.metadata or {}).get(COUNTERS_KEY))
        # the checkpoint's finished nodes that ran on other models than this segment's (a resume under
        # other models: the CLI and the Run page say so, and the meta's ran_on keeps both)
        earlier = earlier_engines(reporter.ran_on, reporter.engine, NODE_ORDER) if snapshot.values else []
        reporter.emit("run_started", None, ticker=ctx.ticker, date=ctx.trade_date, analysts=list(ctx.analysts),
                      analyst_execution=self.analyst_execution, resumed=resumed, thread_id=ctx.thread_id,
                      plan=team.plan(list(ctx.analysts)), settings=dict(ctx.settings),
                      warnings=list(reporter.warnings), earlier_engines=earlier)
        return _Segment(run_config=run_config, callbacks=callbacks, snapshot=snapshot)

    def _inputs(self, ctx: RunContext, segment: _Segment, *, book: Any = None,
                fork_inputs: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """(2) What the graph starts from: None to resume a checkpoint (or a finished run whose saving step
        did not complete: its state is kept), a fork's input state, else the initial state."""
        values = segment.snapshot.values
        if values:
            ctx.reporter.debate_turns = list(values.get("debate_turns") or [])
            return None
        if fork_inputs is not None:
            ctx.reporter.debate_turns = list(fork_inputs.get("debate_turns") or [])
            return fork_inputs
        return self.initial_state(ctx.ticker, ctx.trade_date, ctx.asset_type, list(ctx.analysts), ctx.session_note,
                                  book=book)

    def _execute(self, ctx: RunContext, graph: Any, segment: _Segment, inputs: dict[str, Any] | None) -> Any:
        """(3) Run (or resume) the compiled graph from ``inputs``; the final snapshot.

        "checkpoints" marks the end of a superstep, once its checkpoint is saved: the only safe place to
        stop. Stopping on a task's update would cut off parallel siblings still running and lose the
        finished ones' writes, so they would run again on resume. LangGraph hands back the previous step's
        checkpoint and the next step's task starts together, before any task of the next step runs: a stop
        is also honoured at a task start while no task is open (a step boundary), so no new agent starts
        once Stop was pressed. "messages" streams the model's text as it is written (token events,
        throttled). A mode nobody reads is left out: without a listener there are no token events to send,
        and without a stop signal no step boundary to check ("messages" also makes LangGraph run every
        single-task step on a worker thread beside a waiter, instead of in this thread)."""
        if ctx.stop_requested():
            raise RunStopped(f"Stopped before the run of {ctx.ticker} on {ctx.trade_date} started.")
        modes = ["tasks", "updates"]
        # pause_before: LangGraph's breakpoint before each judge named; the run then waits at its checkpoint
        pause_at = [team.ROLES[k].node for k in self.config.get("pause_before") or []]
        if pause_at and not self.config.get("checkpoint_enabled"):
            raise ConfigError("pause_before needs checkpoints (checkpoint_enabled): a paused run waits at its "
                              "checkpoint.")
        if ctx.should_stop is not None:
            modes.append("checkpoints")
        if ctx.reporter.on_event is not None:
            modes.append("messages")
        stream = graph.stream(inputs, segment.run_config, stream_mode=modes, durability="sync",
                              interrupt_before=pause_at or None)
        self._follow(ctx, stream)
        ctx.reporter.usage_tick()
        snapshot = graph.get_state(segment.run_config)
        waiting = [n for n in snapshot.next or () if n in pause_at]
        if waiting:
            judge = team.ROLE_BY_NODE[waiting[0]]
            raise RunPaused(f"Paused before the {judge.node} of {ctx.ticker} on {ctx.trade_date}: add a note for it, "
                            "then continue (the run waits at its checkpoint).", before=judge.key)
        if snapshot.next or snapshot.tasks:
            raise RuntimeError(f"The graph stopped before the end (next: {', '.join(snapshot.next)}).")
        return snapshot

    def _follow(self, ctx: RunContext, stream: Any) -> None:
        """Read the graph's stream into the run's events, stopping at a step boundary when asked."""
        reporter = ctx.reporter
        stopped = f"Stopped during the run of {ctx.ticker} on {ctx.trade_date}; it can be resumed."
        try:
            for mode, chunk in stream:
                if mode == "messages":
                    reporter.on_message(chunk)
                    continue
                if mode == "tasks":
                    starting = "result" not in chunk and "error" not in chunk
                    if starting and not reporter.task_started and ctx.stop_requested():
                        raise RunStopped(stopped)
                    reporter.on_task(chunk)
                elif mode == "updates":
                    reporter.on_update(chunk)
                reporter.usage_tick()
                if mode == "checkpoints" and ctx.stop_requested():
                    raise RunStopped(stopped)
        except GraphRecursionError:
            limit = self.propagator.max_recur_limit
            error = ConfigError(
                f"The run of {ctx.ticker} on {ctx.trade_date} needed more than max_recur_limit={limit} graph steps "
                "(TRADINGAGENTS_MAX_RECUR_LIMIT): raise the limit (the default is 100; more "
                "debate rounds need more); the steps done so far are checkpointed, so running "
                "again with a larger limit resumes."
            )
            error.key = "max_recur_limit"
            raise error from None
        finally:
            stream.close()

    def initial_state(self, ticker: str, trade_date: str, asset_type: str, analysts: list[str],
                      session_note: str | None = None, *, book: Any = _READ_BOOK) -> dict[str, Any]:
        """(2) The run's initial state (validated input): ``past_context`` from the memory log,
        ``instrument_context`` from the data provider (with the session note), ``portfolio_context`` from the
        desk's book (``book``: the run's ``RunBook`` or None; left out, it is read here), and in parallel mode
        each analyst's scratchpad seeded. ``propagate`` and the LangGraph server's graph
        (``graph/served.py``) both start from it."""
        if book is _READ_BOOK:
            book = self._run_book(ticker, trade_date)
        context = instrument_context_for(self._provider(), ticker)
        if session_note:
            context += f"; {session_note}"
        past, decisions = self.past_memory(ticker, trade_date)
        inputs = self.propagator.create_initial_state(
            ticker, trade_date, asset_type, past_context=past, instrument_context=context,
            past_decisions=decisions, pm_notes=self._pm_notes(),
            portfolio_context=book.context if book is not None else "",
        )
        if self.analyst_execution == "parallel":
            seed = inputs["messages"][0].content
            from langchain_core.messages import HumanMessage

            for key in analysts:
                inputs[f"{key}_messages"] = [HumanMessage(content=seed)]
        return inputs

    def checked_input(self, ticker: object, trade_date: object, asset_type: object = "stock") -> dict[str, Any]:
        """The checks ``propagate`` makes before any model call (``_checked``), for a caller that runs the
        graph itself (the LangGraph server's graph). Returns {ticker, trade_date (the session), asset_type,
        analysts, session_note}; raises the same errors as ``propagate`` (same messages)."""
        checked = self._checked(ticker, trade_date, asset_type)
        return {k: checked[k] for k in ("ticker", "trade_date", "asset_type", "analysts", "session_note")}

    def settings(self) -> dict[str, Any]:
        """The run's settings as the UI shows them (run_started's ``settings``, the saved meta)."""
        try:
            from tradingagents.llm_presets import provider_label

            llm_label = provider_label(self.config["llm_provider"], self.config.get("backend_url"))
        except Exception:
            llm_label = str(self.config.get("llm_provider"))
        try:
            data_label = getattr(self._provider(), "label", None) or self.config.get("data_vendor")
        except Exception:
            data_label = self.config.get("data_vendor")
        return {
            "llm_provider": self.config.get("llm_provider"),
            "llm_label": llm_label,
            "quick_think_llm": self.config.get("quick_think_llm"),
            "deep_think_llm": self.config.get("deep_think_llm"),
            "data_vendor": self.config.get("data_vendor"),
            "data_label": data_label,
            "max_debate_rounds": self.config["max_debate_rounds"],
            "max_risk_discuss_rounds": self.config["max_risk_discuss_rounds"],
        }

    def past_context(self, ticker: str, trade_date: str) -> str:
        """The memory log's past decisions for the prompt ("" when memory is off)."""
        if not self.config.get("memory_enabled", True):
            return ""
        return self.memory_log.get_past_context(ticker, as_of=trade_date)

    def past_memory(self, ticker: str, trade_date: str) -> tuple[str, list[dict[str, Any]]]:
        """The past decisions' text for the prompt and the same decisions as data (memory_used)."""
        if not self.config.get("memory_enabled", True):
            return "", []
        return self.memory_log.get_past_memory(ticker, as_of=trade_date)

    def process_signal(self, full_signal: str) -> str:
        return self.signal_processor.process_signal(full_signal)

    # ------------------------------------------------------------------ settlement
    @property
    def settler(self):
        """The graph's Settler: its own quick model, memory log and role memories (settlement.py)."""
        if self._settler is None:
            from tradingagents.graph.settlement import Settler

            self._settler = Settler(self.config, llm=self.quick_thinking_llm, memory_log=self.memory_log,
                                    memories=self.memories)
        return self._settler

    def settle_pending(self, ticker: str | None = None) -> list[dict[str, Any]]:
        """Settle every pending entry (of ``ticker`` or all) whose holding window has closed.

        Delegates to ``Settler.settle``; returns what was settled (ticker, date, rating, raw, alpha,
        holding, benchmark, reflection) and keeps ``settle_problems`` as "TICKER DATE: reason" for
        every entry that stays pending.
        """
        result = self.settler.settle(ticker)  # validates the ticker (an edge)
        self.settle_problems = result.problems
        return result.settled

    def reflect_and_remember(self, returns) -> dict[str, tuple[str, str]]:
        """Lessons from the last propagated decision given its realised ``returns``.

        ``returns`` is the raw return as a number (a fraction: 0.024), a percent string ("+2.4%",
        "-0.8 %"), or a dict {raw, alpha?, holding?, end_date?} (alpha defaults to raw); anything
        else raises ValidationError. One (situation, lesson) per role memory, against the ticker's
        benchmark; nothing is written when ``memory_enabled`` is off.
        """
        from tradingagents.config import benchmark_for
        from tradingagents.dataflows.returns import parse_returns
        from tradingagents.graph.settlement import window_end

        outcome = parse_returns(returns, holding_days=int(self.config["holding_days"]))
        if self.curr_state is None:
            raise RuntimeError("Nothing to reflect on: call propagate() first.")
        state = self.curr_state
        ticker = state.get("company_of_interest") or ""
        rating = state_rating(state)
        lessons = self.reflector.role_lessons(
            ticker=ticker, date=state.get("trade_date"), rating=rating,
            decision=state.get("final_trade_decision", ""), raw=outcome["raw"], alpha=outcome["alpha"],
            holding=outcome["holding"], reports={k: state.get(k, "") for k in team.OUTPUT_KEYS},
            benchmark=benchmark_for(ticker, self.config),
        )
        known_from = outcome["end_date"]
        if known_from is None and state.get("trade_date"):
            known_from = window_end(state["trade_date"], outcome["holding"])
        self.settler.remember(lessons, known_from)
        return lessons
