"""TradingAgentsGraph: propagate a ticker on a date through the team, settle, resume, events.

``propagate(ticker, date)`` (DESIGN §2): validate the input before any model call; (1) settle this
ticker's pending log entries whose holding window has closed; (2) build the initial state with
``past_context`` from the log and ``instrument_context`` from the data provider; (3) run the graph
with a per-ticker SQLite checkpoint (durability "sync") — a run that failed, was stopped or was
killed resumes at the node that did not finish, finished nodes are not run again; (4) save the
final state (results/<TICKER>/<date>/state.json + report.md) and store the decision as pending in
the memory log; (5) clear the checkpoint; return ``(final_state, rating)``.

Progress is reported through ``on_event(RunEvent)`` (see ``events.py``), translated from LangGraph's
own stream (``stream_mode=["tasks", "updates"]``) in the thread that runs the graph; LLM call and
token counts come from a per-run ``UsageTracker`` attached as a graph callback.
"""

from __future__ import annotations

import contextlib
import logging
import pprint
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock
from filelock import Timeout as FileLockTimeout

from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.default_config import resolve_config
from tradingagents.graph import checkpointer as ckpt
from tradingagents.graph.analyst_execution import (
    ANALYST_NODE_AGENT,
    REPORT_KEYS,
    analysts_for_asset,
    normalize_analysts,
    normalize_execution_mode,
)
from tradingagents.graph.conditional_logic import (
    AGGRESSIVE,
    BEAR,
    BULL,
    CONSERVATIVE,
    NEUTRAL,
    PORTFOLIO_MANAGER,
    RESEARCH_MANAGER,
    TRADER,
    ConditionalLogic,
)
from tradingagents.graph.events import EventCallback, RunEvent, RunStopped
from tradingagents.graph.propagation import Propagator
from tradingagents.graph.results import load_run, save_run
from tradingagents.graph.setup import SCRATCHPAD_KEYS, GraphSetup
from tradingagents.graph.signal_processing import SignalProcessor
from tradingagents.validation import (
    InvalidDateError,
    ValidationError,
    safe_path_component,
    validate_date,
    validate_ticker,
)

log = logging.getLogger(__name__)


from tradingagents.errors import RunAlreadyActive  # noqa: E402,F401  (one error hierarchy)

ASSET_TYPES = ("stock", "etf", "index", "fx", "crypto")
MEMORY_NAMES = ("bull_memory", "bear_memory", "trader_memory", "invest_judge_memory", "risk_manager_memory")
OUTPUT_KEYS = (*REPORT_KEYS, "investment_plan", "trader_investment_plan", "final_trade_decision")

NODE_TEAM: dict[str, str] = {
    **{node: "Analyst Team" for node in ANALYST_NODE_AGENT},
    BULL: "Research Team",
    BEAR: "Research Team",
    RESEARCH_MANAGER: "Research Team",
    TRADER: "Trading Team",
    AGGRESSIVE: "Risk Management",
    CONSERVATIVE: "Risk Management",
    NEUTRAL: "Risk Management",
    PORTFOLIO_MANAGER: "Portfolio Management",
}
NODE_AGENT: dict[str, str] = {**ANALYST_NODE_AGENT, **{n: n for n in NODE_TEAM if n not in ANALYST_NODE_AGENT}}
_RISK_SPEAKERS = {AGGRESSIVE: "Aggressive", CONSERVATIVE: "Conservative", NEUTRAL: "Neutral"}


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


def instrument_context_for(provider, ticker: str) -> str:
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


class _RunReporter:
    """Turns LangGraph stream chunks into RunEvents (one per run; used only by the running thread)."""

    def __init__(self, on_event: EventCallback | None, debug: bool, tracker):
        self.on_event = on_event
        self.debug = debug
        self.tracker = tracker
        self.task_started: dict[str, tuple[str, float]] = {}
        self.tool_args: dict[str, tuple[str, Any]] = {}
        self.node_times: dict[str, float] = {}
        self.node_spans: list[dict[str, Any]] = []
        self.last_usage: dict[str, int] | None = None
        self.resumed = False
        self.events: list[RunEvent] = []

    def emit(self, kind: str, node: str | None = None, **data: Any) -> None:
        event = RunEvent(kind=kind, node=node, agent=NODE_AGENT.get(node) if node else None,
                         team=NODE_TEAM.get(node) if node else None, data=data)
        if self.on_event is None:
            return
        try:
            self.on_event(event)
        except Exception:  # a broken display must not break (or lose) the run
            log.exception("on_event callback failed for %s", kind)

    # ---------------------------------------------------------------- stream chunks
    def on_task(self, chunk: Mapping[str, Any]) -> None:
        name, task_id = chunk.get("name"), chunk.get("id")
        if name not in NODE_TEAM:
            return
        if "result" in chunk or "error" in chunk:
            started = self.task_started.pop(task_id, (name, time.time()))[1]
            end = time.time()
            duration = end - started
            self.node_times[name] = self.node_times.get(name, 0.0) + duration
            self.node_spans.append({"node": name, "start": started, "end": end})
            if chunk.get("error") is None:
                self.emit("node_finished", name, duration_s=round(duration, 6), started_at=started)
        else:
            now = time.time()
            self.task_started[task_id] = (name, now)
            self.emit("node_started", name)

    def on_update(self, chunk: Mapping[str, Any]) -> None:
        for node, update in chunk.items():
            if node not in NODE_TEAM or not isinstance(update, Mapping):
                continue
            if self.debug:
                self._print_update(node, update)
            self._tool_events(node, update)
            for key in OUTPUT_KEYS:
                text = update.get(key)
                if isinstance(text, str) and text.strip():
                    self.emit("report", node, key=key, text=text)
            invest = update.get("investment_debate_state")
            if isinstance(invest, Mapping):
                if node in (BULL, BEAR):
                    count = int(invest.get("count") or 0)
                    self.emit("debate_turn", node, debate="invest", speaker=node.split()[0],
                              round=max(1, (count + 1) // 2), text=invest.get("current_response", ""))
                elif node == RESEARCH_MANAGER and invest.get("judge_decision"):
                    self.emit("judge_decision", node, debate="invest", text=invest["judge_decision"])
            risk = update.get("risk_debate_state")
            if isinstance(risk, Mapping):
                if node in _RISK_SPEAKERS:
                    speaker = _RISK_SPEAKERS[node]
                    count = int(risk.get("count") or 0)
                    self.emit("debate_turn", node, debate="risk", speaker=speaker,
                              round=max(1, (count + 2) // 3),
                              text=risk.get(f"current_{speaker.lower()}_response", ""))
                elif node == PORTFOLIO_MANAGER and risk.get("judge_decision"):
                    self.emit("judge_decision", node, debate="risk", text=risk["judge_decision"])

    def _tool_events(self, node: str, update: Mapping[str, Any]) -> None:
        for key in ("messages", *SCRATCHPAD_KEYS):
            for msg in update.get(key) or []:
                msg_type = getattr(msg, "type", None)
                if msg_type == "ai":
                    for call in getattr(msg, "tool_calls", None) or []:
                        self.tool_args[call.get("id")] = (call.get("name"), call.get("args"))
                elif msg_type == "tool":
                    content = msg.content if isinstance(msg.content, str) else str(msg.content)
                    name, args = self.tool_args.pop(getattr(msg, "tool_call_id", None), (None, None))
                    self.emit("tool_call", node, tool=getattr(msg, "name", None) or name, args=args or {},
                              result_chars=len(content), result_preview=content[:300])

    def usage_tick(self) -> None:
        if self.tracker is None:
            return
        totals = dict(self.tracker.totals())
        if totals != self.last_usage:
            self.last_usage = totals
            self.emit("llm_usage", None, **totals)

    def _print_update(self, node: str, update: Mapping[str, Any]) -> None:
        shown = {}
        for key, value in update.items():
            if key in ("messages", *SCRATCHPAD_KEYS):
                shown[key] = [m.pretty_repr() if hasattr(m, "pretty_repr") else repr(m) for m in value or []]
            else:
                shown[key] = value
        print(f"==== {node} ====\n{pprint.pformat(shown, width=110, sort_dicts=False)}", file=sys.stdout,
              flush=True)


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
        self.analyst_execution = normalize_execution_mode(self.config.get("analyst_execution"))
        self.debug = bool(debug)
        self.user_callbacks = list(callbacks or [])

        # models: no key ever goes into self.config; the clients keep it as a secret
        # (one shared bound of max_concurrent_llm_calls for both models)
        self.quick_thinking_llm, self.deep_thinking_llm = create_llms(self.config, api_key=api_key)

        self.bull_memory = FinancialSituationMemory("bull_memory", self.config)
        self.bear_memory = FinancialSituationMemory("bear_memory", self.config)
        self.trader_memory = FinancialSituationMemory("trader_memory", self.config)
        self.invest_judge_memory = FinancialSituationMemory("invest_judge_memory", self.config)
        self.risk_manager_memory = FinancialSituationMemory("risk_manager_memory", self.config)
        self.memory_log = TradingMemoryLog(self.config)

        self.conditional_logic = ConditionalLogic(
            self.config["max_debate_rounds"], self.config["max_risk_discuss_rounds"]
        )
        self.propagator = Propagator(int(self.config["max_recur_limit"]))
        self.signal_processor = SignalProcessor(self.quick_thinking_llm)
        self._reflector = None
        self._lock = threading.Lock()

        self.curr_state: dict[str, Any] | None = None
        self.ticker: str | None = None
        self.last_run: dict[str, Any] = {}
        # entries the last settle_pending could not price (they stay pending), with the reason
        self.settle_problems: list[str] = []

    # ------------------------------------------------------------------ helpers
    @property
    def memories(self) -> dict[str, FinancialSituationMemory]:
        return {name: getattr(self, name) for name in MEMORY_NAMES}

    @property
    def reflector(self):
        if self._reflector is None:
            from tradingagents.graph.reflection import Reflector

            self._reflector = Reflector(self.quick_thinking_llm, self.config)
        return self._reflector

    def _provider(self):
        from tradingagents.dataflows.interface import get_provider

        return get_provider(self.config)

    def run_signature(self, asset_type: str = "stock") -> str:
        analysts = analysts_for_asset(self.selected_analysts, asset_type)
        return ckpt.run_signature(
            analysts,
            self.config["max_debate_rounds"],
            self.config["max_risk_discuss_rounds"],
            asset_type,
            analyst_execution=self.analyst_execution,
        )

    def thread_id(self, ticker: str, trade_date: str, asset_type: str = "stock") -> str:
        ticker = validate_ticker(ticker)
        trade_date = validate_date(trade_date)
        return ckpt.thread_id(ticker, trade_date, self.run_signature(validate_asset_type(asset_type)))

    def has_resumable_run(self, ticker: str, trade_date: str, asset_type: str = "stock") -> bool:
        if not self.config.get("checkpoint_enabled"):
            return False
        tid = self.thread_id(ticker, trade_date, asset_type)
        return ckpt.has_checkpoint(self.config, validate_ticker(ticker), tid)

    def build_graph(self, trade_date: str, analysts: list[str]):
        """The uncompiled StateGraph for one analysis date (tools read data up to that date only)."""
        from tradingagents.dataflows import tools as data_tools

        # one set of tools for the run (building tool schemas is the costly part), split per analyst
        all_tools = data_tools.make_tools(self.config, as_of=trade_date)

        def tools_for(key: str) -> list:
            return [all_tools[name] for name in data_tools.ANALYST_TOOL_NAMES[key]]

        setup = GraphSetup(
            self.quick_thinking_llm, self.deep_thinking_llm, self.memories, self.conditional_logic,
            self.config, tools_for,
        )
        return setup.setup_graph(analysts, self.analyst_execution)

    # ------------------------------------------------------------------ propagate
    def propagate(
        self,
        ticker: str,
        trade_date: str,
        asset_type: str = "stock",
        *,
        on_event: EventCallback | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> tuple[dict[str, Any], str]:
        from tradingagents.llm_clients.usage import UsageTracker

        started_at = time.time()
        tracker = UsageTracker()
        reporter = _RunReporter(on_event, self.debug, tracker)
        resumable = bool(self.config.get("checkpoint_enabled"))
        try:
            ticker = validate_ticker(ticker)
            trade_date = validate_run_date(trade_date)
            asset_type = validate_asset_type(asset_type)
            analysts = analysts_for_asset(self.selected_analysts, asset_type)
        except ValidationError as exc:
            reporter.emit("run_failed", None, error=str(exc), error_type=type(exc).__name__, resumable=False)
            raise

        signature = ckpt.run_signature(
            analysts, self.config["max_debate_rounds"], self.config["max_risk_discuss_rounds"], asset_type,
            analyst_execution=self.analyst_execution,
        )
        tid = ckpt.thread_id(ticker, trade_date, signature)
        try:
            with self._exclusive(ticker, trade_date, tid):
                final_state, rating, folder, resumed = self._run(
                    ticker, trade_date, asset_type, analysts, tid, tracker, reporter, should_stop, started_at
                )
        except RunStopped:
            reporter.usage_tick()
            reporter.emit("run_stopped", None, resumable=resumable)
            raise
        except Exception as exc:
            reporter.usage_tick()
            reporter.emit("run_failed", None, error=str(exc) or type(exc).__name__,
                          error_type=type(exc).__name__, resumable=resumable)
            raise
        elapsed = time.time() - started_at
        self.last_run = {
            "ticker": ticker,
            "date": trade_date,
            "thread_id": tid,
            "resumed": resumed,
            "elapsed_s": elapsed,
            "node_times_ms": {k: v * 1000.0 for k, v in reporter.node_times.items()},
            "node_spans": reporter.node_spans,
            "usage": dict(tracker.totals()),
            "usage_by_node": dict(tracker.by_node()) if hasattr(tracker, "by_node") else {},
            "results_path": str(folder),
        }
        reporter.emit("run_finished", None, rating=rating, results_path=str(folder), elapsed_s=round(elapsed, 3))
        with self._lock:
            self.curr_state = final_state
            self.ticker = ticker
        return final_state, rating

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
        folder = Path(self.config["checkpoint_dir"]) / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(folder / f"{safe_path_component(ticker)}.{tid}.lock"), timeout=0)
        try:
            lock.acquire()
        except FileLockTimeout:
            raise RunAlreadyActive(
                f"An analysis of {ticker} on {trade_date} with these settings is already running "
                "(in this app or another process). Wait for it to finish or stop it, then try again."
            ) from None
        try:
            yield
        finally:
            lock.release()

    def _run(self, ticker, trade_date, asset_type, analysts, tid, tracker, reporter, should_stop, started_at):
        cfg = self.config
        # (1) settle what is due for this ticker (a data outage here must not block the analysis)
        try:
            self.settle_pending(ticker)
        except Exception as exc:
            log.warning("settling %s failed before the run: %s", ticker, exc)

        # (3) the graph and its checkpointer
        graph_builder = self.build_graph(trade_date, analysts)
        if cfg.get("checkpoint_enabled"):
            saver = ckpt.get_checkpointer(cfg, ticker)
        else:
            from langgraph.checkpoint.memory import InMemorySaver

            saver = InMemorySaver()
        try:
            snapshot = self._execute(graph_builder, saver, ticker, trade_date, asset_type, analysts, tid,
                                     tracker, reporter, should_stop)
        finally:
            close = getattr(saver, "close", None)
            if callable(close):
                close()  # one connection per run; never leak it
        resumed = reporter.resumed
        final_state = {k: v for k, v in dict(snapshot.values).items() if k not in SCRATCHPAD_KEYS}
        rating = self.signal_processor.process_signal(final_state.get("final_trade_decision"))

        # (4) save, then log the decision as pending
        meta = self._run_meta(final_state, analysts, asset_type, tid, resumed, tracker, started_at)
        folder = save_run(cfg, final_state, rating, meta)
        self.memory_log.store_decision(ticker, trade_date, rating, final_state.get("final_trade_decision", ""))
        # (5) success clears the checkpoint
        if cfg.get("checkpoint_enabled"):
            ckpt.clear_checkpoint(cfg, ticker, tid)
        return final_state, rating, folder, resumed

    def _execute(self, graph_builder, saver, ticker, trade_date, asset_type, analysts, tid, tracker, reporter,
                 should_stop):
        """Run (or resume) the graph on ``saver``; returns the final snapshot."""
        graph = graph_builder.compile(checkpointer=saver)
        callbacks = [tracker, *self.user_callbacks]
        args = self.propagator.get_graph_args(callbacks=callbacks, thread_id=tid)
        run_config = args["config"]

        snapshot = graph.get_state(run_config)
        # ``next`` omits tasks whose writes are already saved (a stop or a failure mid-superstep), so
        # "unfinished" is: any task left in the saved step
        pending_tasks = bool(snapshot.next) or bool(snapshot.tasks)
        resumed = reporter.resumed = bool(snapshot.values) and pending_tasks
        if snapshot.values and not pending_tasks:
            # a finished run whose saving step did not complete: keep its state, do not re-run
            inputs = None
        elif resumed:
            inputs = None
        else:
            # (2) the initial state
            provider = self._provider()
            context = instrument_context_for(provider, ticker)
            past = self.memory_log.get_past_context(ticker, as_of=trade_date)
            inputs = self.propagator.create_initial_state(
                ticker, trade_date, asset_type, past_context=past, instrument_context=context
            )
            if self.analyst_execution == "parallel":
                seed = inputs["messages"][0].content
                from langchain_core.messages import HumanMessage

                for key in analysts:
                    inputs[f"{key}_messages"] = [HumanMessage(content=seed)]

        reporter.emit("run_started", None, ticker=ticker, date=trade_date, analysts=list(analysts),
                      analyst_execution=self.analyst_execution, resumed=resumed, thread_id=tid)
        if should_stop is not None and should_stop():
            raise RunStopped(f"Stopped before the run of {ticker} on {trade_date} started.")

        # "checkpoints" marks the end of a superstep, once its checkpoint is saved: the only safe
        # place to stop. Stopping on a task's update would cut off parallel siblings still running
        # and lose the finished ones' writes, so they would run again on resume.
        stream = graph.stream(inputs, run_config, stream_mode=["tasks", "updates", "checkpoints"],
                              durability="sync")
        try:
            for mode, chunk in stream:
                if mode == "tasks":
                    reporter.on_task(chunk)
                elif mode == "updates":
                    reporter.on_update(chunk)
                reporter.usage_tick()
                if mode == "checkpoints" and should_stop is not None and should_stop():
                    raise RunStopped(f"Stopped during the run of {ticker} on {trade_date}; it can be resumed.")
        finally:
            stream.close()
        reporter.usage_tick()

        snapshot = graph.get_state(run_config)
        if snapshot.next or snapshot.tasks:
            raise RuntimeError(f"The graph stopped before the end (next: {', '.join(snapshot.next)}).")
        return snapshot

    def _run_meta(self, final_state, analysts, asset_type, tid, resumed, tracker, started_at) -> dict[str, Any]:
        try:
            from tradingagents.llm_clients.factory import provider_label

            llm_label = provider_label(self.config)
        except Exception:
            llm_label = str(self.config.get("llm_provider"))
        try:
            data_label = getattr(self._provider(), "label", None) or self.config.get("data_vendor")
        except Exception:
            data_label = self.config.get("data_vendor")
        return {
            "ticker": final_state.get("company_of_interest"),
            "date": final_state.get("trade_date"),
            "asset_type": asset_type,
            "analysts": list(analysts),
            "analyst_execution": self.analyst_execution,
            "max_debate_rounds": self.config["max_debate_rounds"],
            "max_risk_discuss_rounds": self.config["max_risk_discuss_rounds"],
            "llm_provider": self.config.get("llm_provider"),
            "llm_label": llm_label,
            "quick_think_llm": self.config.get("quick_think_llm"),
            "deep_think_llm": self.config.get("deep_think_llm"),
            "data_vendor": self.config.get("data_vendor"),
            "data_label": data_label,
            "instrument_context": final_state.get("instrument_context"),
            "thread_id": tid,
            "resumed": resumed,
            "elapsed_s": round(time.time() - started_at, 3),
            "usage": dict(tracker.totals()),
            "config": self.config,  # save_run keeps only public_config(...)
        }

    def process_signal(self, full_signal: str) -> str:
        return self.signal_processor.process_signal(full_signal)

    # ------------------------------------------------------------------ settlement
    def _reports_for(self, ticker: str, date: str) -> dict[str, Any] | None:
        try:
            state = load_run(self.config, ticker, date)["state"]
        except (FileNotFoundError, ValueError, OSError):
            return None
        return {k: state.get(k, "") for k in OUTPUT_KEYS}

    def settle_pending(self, ticker: str | None = None) -> list[dict[str, Any]]:
        """Settle every pending entry (of ``ticker`` or all) whose holding window has closed.

        One quick-model reflection per entry, one batch write to the log, then one lesson per role
        into the five memories. Returns what was settled: ticker, date, rating, raw, alpha,
        holding, reflection.
        """
        if ticker is not None:
            ticker = validate_ticker(ticker)
        pending = self.memory_log.get_pending_entries(ticker) if ticker else self.memory_log.get_pending_entries()
        if not pending:
            return []
        from tradingagents.dataflows.interface import DataNotFound, ProviderUnavailable
        from tradingagents.dataflows.returns import compute_returns

        self.settle_problems = []
        provider = self._provider()
        settled: list[dict[str, Any]] = []
        lessons_all: list[tuple[dict[str, tuple[str, str]], str]] = []
        for entry in pending:
            try:
                outcome = compute_returns(
                    provider, entry["ticker"], entry["date"], holding_days=int(self.config["holding_days"]),
                    config=self.config,
                )
            except (DataNotFound, ProviderUnavailable) as exc:
                # e.g. a CSV user without the benchmark's file: this entry stays pending, the others settle
                self.settle_problems.append(f"{entry['ticker']} {entry['date']}: {exc}")
                continue
            if not outcome:
                continue  # window not closed yet (or no prices): stays pending
            raw, alpha = float(outcome["raw"]), float(outcome["alpha"])
            holding = int(outcome.get("holding", outcome.get("holding_days", self.config["holding_days"])))
            reports = self._reports_for(entry["ticker"], entry["date"])
            kwargs = dict(ticker=entry["ticker"], date=entry["date"], rating=entry.get("rating"),
                          decision=entry.get("decision", ""), raw=raw, alpha=alpha, holding=holding,
                          reports=reports)
            reflection = self.reflector.reflect_on_decision(**kwargs)
            # a lesson is knowable from the day the holding window closed, never before
            known_from = outcome.get("end_date") or _window_end(entry["date"], holding)
            lessons_all.append((self.reflector.role_lessons(**kwargs), known_from))
            settled.append({"ticker": entry["ticker"], "date": entry["date"], "rating": entry.get("rating"),
                            "raw": raw, "alpha": alpha, "holding": holding, "reflection": reflection})
        if settled:
            self.memory_log.batch_update_with_outcomes(
                [{k: s[k] for k in ("ticker", "date", "raw", "alpha", "holding", "reflection")} for s in settled]
            )
            for lessons, known_from in lessons_all:
                self._remember(lessons, known_from)
        return settled

    def _remember(self, lessons: Mapping[str, tuple[str, str]], known_from: str | None) -> None:
        for name, pair in lessons.items():
            memory = getattr(self, name, None) if name in MEMORY_NAMES else None
            if memory is not None and pair and pair[0] and pair[1]:
                memory.add_situations([(pair[0], pair[1])], known_from=known_from)

    def reflect_and_remember(self, returns) -> dict[str, tuple[str, str]]:
        """Lessons from the last propagated decision given its realised ``returns``.

        ``returns`` is the raw return as a number, or a dict with ``raw`` and optionally ``alpha``
        and ``holding``. One (situation, lesson) per role goes into the five memories.
        """
        if self.curr_state is None:
            raise RuntimeError("Nothing to reflect on: call propagate() first.")
        if isinstance(returns, Mapping):
            raw = float(returns.get("raw", 0.0))
            alpha = float(returns.get("alpha", raw))
            holding = int(returns.get("holding", self.config["holding_days"]))
        else:
            raw = alpha = float(returns)
            holding = int(self.config["holding_days"])
        state = self.curr_state
        rating = self.process_signal(state.get("final_trade_decision", ""))
        lessons = self.reflector.role_lessons(
            ticker=state.get("company_of_interest"), date=state.get("trade_date"), rating=rating,
            decision=state.get("final_trade_decision", ""), raw=raw, alpha=alpha, holding=holding,
            reports={k: state.get(k, "") for k in OUTPUT_KEYS},
        )
        known_from = None
        if isinstance(returns, Mapping) and returns.get("end_date"):
            known_from = str(returns["end_date"])
        elif state.get("trade_date"):
            known_from = _window_end(state["trade_date"], holding)
        self._remember(lessons, known_from)
        return lessons


def _window_end(trade_date: str, holding: int) -> str:
    """The business day ``holding`` days after ``trade_date``: when its outcome became knowable."""
    import pandas as pd

    return (pd.Timestamp(trade_date) + pd.offsets.BDay(max(int(holding), 0))).date().isoformat()


def results_path_for(config: Mapping[str, Any] | None, ticker: str, date: str) -> Path:
    from tradingagents.graph.results import run_dir

    return run_dir(config, ticker, date)
