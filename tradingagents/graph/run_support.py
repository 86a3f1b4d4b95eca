"""How one run is carried out beside the lifecycle in ``trading_graph``: the reporter that turns
LangGraph's stream into ``RunEvent``s, the cost budget reserved before every model call, and the
counters of earlier segments kept for a resume (so usage and times are the whole run's).
"""

from __future__ import annotations

import contextlib
import logging
import pprint
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from tradingagents import pricing, storage, team
from tradingagents.graph.events import EventCallback, EventKind, RunEvent, make_event
from tradingagents.graph.setup import SCRATCHPAD_KEYS
from tradingagents.llm_clients.streaming import is_restart

log = logging.getLogger(__name__)

_DEBATE_STATE_KEY = {"invest": "investment_debate_state", "risk": "risk_debate_state"}


class _RunReporter:
    """Turns LangGraph stream chunks into RunEvents (one per run; used by the running thread, and by
    the timer that sends the model text a paused stream has left in the buffer)."""

    def __init__(self, on_event: EventCallback | None, debug: bool, tracker, cost=None):
        self.cost = cost  # () -> running USD cost of this call's usage (None: a model without a price)
        self.on_event = on_event
        self.debug = debug
        self.tracker = tracker
        self.task_started: dict[Any, tuple[str, float]] = {}  # LangGraph's task id → (node, start)
        self.tool_args: dict[Any, tuple[str | None, Any]] = {}  # a model's tool call id → (tool, args)
        self.node_times: dict[str, float] = {}
        self.node_spans: list[dict[str, Any]] = []
        self.last_usage: dict[str, int] | None = dict(tracker.totals()) if tracker is not None else None
        self.resumed = False
        self.terminal_sent = False
        self.debate_turns: list[dict[str, Any]] = []  # this run's turns (a resume starts with the saved ones)
        self.tool_texts: list[str] = []  # every tool result of this segment (for the missing-data lines)
        self.token_buffer: dict[str, list[str]] = {}  # node → model text not yet sent as a token event
        self.token_sent: dict[str, float] = {}
        self.token_lock = threading.RLock()  # the buffer, its timers, and emitting what they hold
        self.token_timers: dict[str, threading.Timer] = {}
        self.warnings: list[str] = []  # what the run worked around (a damaged checkpoint moved aside)
        self.engine: dict[str, Any] | None = None  # this segment's models (``engine_of``)
        self.ran_on: dict[str, dict[str, Any]] = {}  # node → the engine it finished on (earlier segments too)

    def emit(self, kind: EventKind, node: str | None = None, **data: Any) -> None:
        if self.on_event is None:
            return
        event: RunEvent = make_event(kind, node, **data)
        try:
            self.on_event(event)
        except Exception:  # a broken display must not break (or lose) the run
            log.exception("on_event callback failed for %s", kind)

    def terminal(self, kind: EventKind, **data: Any) -> None:
        """The one terminal event of the run (a second one is never sent)."""
        with self.token_lock:
            if self.terminal_sent:
                return
            self.terminal_sent = True
            for timer in self.token_timers.values():
                timer.cancel()
            self.token_timers.clear()
            self.emit(kind, None, **data)

    def node_times_ms(self) -> dict[str, float]:
        return {k: v * 1000.0 for k, v in self.node_times.items()}

    # ---------------------------------------------------------------- stream chunks
    def on_task(self, chunk: Mapping[str, Any]) -> None:
        name, task_id = chunk.get("name"), chunk.get("id")
        if name not in team.ROLE_BY_NODE:
            return
        if "result" in chunk or "error" in chunk:
            self.flush_tokens(name)
            started = self.task_started.pop(task_id, (name, time.time()))[1]
            end = time.time()
            duration = end - started
            self.node_times[name] = self.node_times.get(name, 0.0) + duration
            self.node_spans.append({"node": name, "start": started, "end": end})
            if chunk.get("error") is None:
                if self.engine is not None:
                    self.ran_on[name] = self.engine
                self.emit("node_finished", name, duration_s=round(duration, 6), started_at=started)
        else:
            now = time.time()
            self.task_started[task_id] = (name, now)
            self.emit("node_started", name)

    def on_update(self, chunk: Mapping[str, Any]) -> None:
        for node, update in chunk.items():
            role = team.ROLE_BY_NODE.get(node)
            if role is None or not isinstance(update, Mapping):
                continue
            self.flush_tokens(node)  # the live text is whole before the node's report lands
            if self.debug:
                self._print_update(node, update)
            self._tool_events(node, update)
            for key in team.OUTPUT_KEYS:
                text = update.get(key)
                if isinstance(text, str) and text.strip():
                    self.emit("report", node, key=key, text=text)
            for turn in update.get("debate_turns") or []:
                if isinstance(turn, Mapping):
                    self.debate_turns.append(dict(turn))
                    self.emit("debate_turn", node, **{k: turn.get(k) for k in
                                                      ("debate", "speaker", "round", "turn", "text")})
            if role.judges:
                debate_state = update.get(_DEBATE_STATE_KEY[role.judges])
                if isinstance(debate_state, Mapping) and debate_state.get("judge_decision"):
                    self.emit("judge_decision", node, debate=role.judges, text=debate_state["judge_decision"])

    def _tool_events(self, node: str, update: Mapping[str, Any]) -> None:
        for key in ("messages", *SCRATCHPAD_KEYS):
            for msg in update.get(key) or []:
                msg_type = getattr(msg, "type", None)
                if msg_type == "ai":
                    for call in getattr(msg, "tool_calls", None) or []:
                        self.tool_args[call.get("id")] = (call.get("name"), call.get("args"))
                elif msg_type == "tool":
                    content = msg.content if isinstance(msg.content, str) else str(msg.content)
                    self.tool_texts.append(content)
                    name, args = self.tool_args.pop(getattr(msg, "tool_call_id", None), (None, None))
                    self.emit("tool_call", node, tool=getattr(msg, "name", None) or name, args=args or {},
                              result_chars=len(content), result_preview=content[:300])

    # ---------------------------------------------------------------- live model text
    TOKEN_INTERVAL_S = 0.25  # at most ~4 token events a second per node: the UI is not flooded

    def on_message(self, chunk: Any) -> None:
        """A ("messages" mode) model-output chunk: buffer its text, emit a ``token`` event now and then."""
        try:
            message, metadata = chunk
        except (TypeError, ValueError):
            return
        node = (metadata or {}).get("langgraph_node")
        role = team.ROLE_BY_NODE.get(node) if isinstance(node, str) else None
        if role is None or node != role.node or getattr(message, "type", "") not in ("ai", "AIMessageChunk"):
            return
        if is_restart(message):  # the model retries this call: what it streamed so far is void
            with self.token_lock:
                self.token_buffer.pop(node, None)
                self.emit("token", node, text_delta="", restart=True)
            return
        content = getattr(message, "content", "")
        if isinstance(content, list):  # content blocks
            content = "".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in content)
        if not isinstance(content, str) or not content:
            return
        with self.token_lock:
            self.token_buffer.setdefault(node, []).append(content)
            now = time.time()
            wait = self.token_sent.get(node, 0.0) + self.TOKEN_INTERVAL_S - now
            if wait <= 0:
                self.flush_tokens(node, now)
            elif node not in self.token_timers and not self.terminal_sent:
                # A stream that pauses (a slow model, a held test server) must not keep its last words in
                # the buffer until its next chunk: send them when the interval is up.
                timer = threading.Timer(wait, self.flush_tokens, args=(node,))
                timer.daemon = True
                self.token_timers[node] = timer
                timer.start()

    def flush_tokens(self, node: str, now: float | None = None) -> None:
        with self.token_lock:
            timer = self.token_timers.pop(node, None)
            if timer is not None and timer is not threading.current_thread():
                timer.cancel()
            pending = self.token_buffer.pop(node, None)
            if pending and not self.terminal_sent:
                self.token_sent[node] = time.time() if now is None else now
                self.emit("token", node, text_delta="".join(pending))

    def usage_tick(self) -> None:
        if self.tracker is None or self.on_event is None:
            return  # nobody to show it to (the meta takes its totals from the tracker)
        totals = dict(self.tracker.totals())
        if totals != self.last_usage:
            self.last_usage = totals
            cost = self.cost() if self.cost is not None else None
            self.emit("llm_usage", None, **totals, cost_usd=cost)

    def _print_update(self, node: str, update: Mapping[str, Any]) -> None:
        shown = {}
        for key, value in update.items():
            if key in ("messages", *SCRATCHPAD_KEYS):
                shown[key] = [m.pretty_repr() if hasattr(m, "pretty_repr") else repr(m) for m in value or []]
            else:
                shown[key] = value
        print(f"==== {node} ====\n{pprint.pformat(shown, width=110, sort_dicts=False)}", file=sys.stdout,
              flush=True)


class _Budget:
    """``max_cost_usd`` as a hard ceiling: every model call reserves its worst case first.

    The run's ledger (``pricing.CostLedger``, None without a budget) and a batch's shared one
    (``batch_ledger``) go to one ``RunGuard`` (``llm_clients.usage``), the first callback of the
    run: before each model call it reserves the call's prompt bound plus ``llm_max_output_tokens``
    priced for the call's model, and refuses the call (``BudgetExceeded``: exit 5, resumable; the run
    stops at its last checkpoint) when spent + reservations would pass the budget. Parallel branches
    reserve from the same ledger under its lock. The budget counts what this call spends (a resumed
    run's earlier spending is in its earlier call). The guard also carries the run's stop signal,
    which a streaming model checks between events. The offline engine costs nothing and has no guard.
    """

    def __init__(self, limit, batch_ledger, config: Mapping[str, Any], ticker: str, trade_date: str,
                 should_stop=None):
        from tradingagents import pricing

        self.limit = float(limit) if limit is not None else None
        self.ledger = pricing.CostLedger(self.limit) if self.limit is not None else None
        self.batch_ledger = batch_ledger
        self.config, self.ticker, self.date, self.should_stop = config, ticker, trade_date, should_stop

    def callbacks(self) -> list:
        from tradingagents import pricing

        if pricing.is_offline(self.config):
            return []
        from tradingagents.llm_clients.usage import RunGuard

        return [RunGuard((self.ledger, self.batch_ledger), table=pricing.pricing_table(self.config),
                         max_output_tokens=pricing.output_limit(self.config, budgeted=True) or pricing.BUDGET_OUTPUT_TOKENS,
                         where=f" for {self.ticker} on {self.date}", should_stop=self.should_stop)]


def checkpoint_fence(saver: Any) -> list:
    """The run's callback that makes a saver's deferred writes durable before every model and tool call
    (``[]`` for a saver that writes as it is called).

    The SQLite saver queues its checkpoint writes (``TickerCheckpointer``) and writes them when it is
    flushed: the steps between two calls cost one commit. Flushing before each model call (or tool
    call) starts keeps the promise that matters: a node that finished before a call that costs
    money or time is never run again on resume, even after a kill."""
    found = getattr(saver, "flush", None)
    if not callable(found):
        return []
    flush: Callable[[], Any] = found
    from langchain_core.callbacks import BaseCallbackHandler

    class CheckpointFence(BaseCallbackHandler):
        raise_error = True  # a checkpoint write that failed stops the run here, as a synchronous write would

        def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
            flush()

        def on_llm_start(self, *args: Any, **kwargs: Any) -> None:
            flush()

        def on_tool_start(self, *args: Any, **kwargs: Any) -> None:
            flush()

    return [CheckpointFence()]


ENGINE_KEYS = ("llm_provider", "llm_label", "quick_think_llm", "deep_think_llm")
"""What names the models a node ran on (a run's ``settings`` hold them)."""


def engine_of(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The models of a run's ``settings`` (``ENGINE_KEYS``), as ``ran_on`` keeps them per node (no model
    names for the offline engine, which runs none: ``pricing.models_used``)."""
    models = pricing.models_used(settings) or {}
    return {"llm_provider": _text_or_none(settings.get("llm_provider")),
            "llm_label": _text_or_none(settings.get("llm_label")),
            "quick_think_llm": models.get("quick") or None, "deep_think_llm": models.get("deep") or None}


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def engines_of(ran_on: Mapping[str, Mapping[str, Any]], nodes_order: list[str] | None = None) -> list[dict[str, Any]]:
    """``ran_on`` (node → engine) grouped: ``[{llm_provider, llm_label, quick_think_llm, deep_think_llm,
    nodes: [...]}]``, in the order the engines first ran (``nodes_order``: the nodes in run order)."""
    order = [n for n in (nodes_order or []) if n in ran_on] + [n for n in ran_on if n not in (nodes_order or [])]
    groups: list[dict[str, Any]] = []
    for node in order:
        engine = dict(ran_on[node])
        group = next((g for g in groups if all(g.get(k) == engine.get(k) for k in ENGINE_KEYS)), None)
        if group is None:
            group = {**engine, "nodes": []}
            groups.append(group)
        group["nodes"].append(node)
    return groups


def _same_engine(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ENGINE_KEYS)


def earlier_engines(ran_on: Mapping[str, Mapping[str, Any]], engine: Mapping[str, Any],
                    nodes_order: list[str] | None = None) -> list[dict[str, Any]]:
    """The groups of ``engines_of(ran_on)`` that ran on other models than ``engine`` (a resume under
    other models than the checkpoint's: the decision will be made by more than one engine)."""
    return [g for g in engines_of(ran_on, nodes_order) if not _same_engine(g, engine)]


class _UsageSidecar:
    """The counters of a run's earlier segments (failed, stopped or cut off), keyed by its checkpoint
    thread, added on resume so usage, elapsed time and node times are the whole run's; cleared on
    success. They are kept in two places:

    * with every checkpoint, in its metadata (``doc`` is what ``CheckpointRouter.route(counters=)``
      saves in the same row: one transaction in PostgreSQL, one write in SQLite), so a run whose
      database went away mid-run, or whose process was killed, still has the counters of every step
      its checkpoint holds;
    * at the end of a failed or stopped segment, in the run's storage (a file under
      ``checkpoint_dir``, or the desk database), which also counts the calls of the step that did
      not finish.

    On resume the fuller of the two is taken (both only grow over a run's segments)."""

    def __init__(self, cfg: Mapping[str, Any], ticker: str, tid: str) -> None:
        self.cfg, self.ticker, self.tid = cfg, ticker, tid
        self.enabled = bool(cfg.get("checkpoint_enabled"))
        self.elapsed_before = 0.0
        self.started_at = time.time()
        self.reporter: _RunReporter | None = None

    @staticmethod
    def _parse(doc: Any):
        """(by_node, node_times, elapsed_s, ran_on) of a stored doc, None when nothing was kept (or it is
        damaged); ``ran_on`` is {} for a doc written before nodes' models were kept."""
        try:
            by_node = {str(k): {str(c): int(v) for c, v in counts.items()} for k, counts in doc["by_node"].items()}
            node_times = {str(k): float(v) for k, v in doc["node_times"].items()}
            elapsed = max(float(doc["elapsed_s"]), 0.0)
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        ran_on: dict[str, dict[str, Any]] = {}
        raw = doc.get("ran_on") if isinstance(doc, Mapping) else None
        for node, engine in (raw.items() if isinstance(raw, Mapping) else ()):
            if isinstance(engine, Mapping):
                ran_on[str(node)] = {k: (str(engine[k]) if engine.get(k) is not None else None)
                                     for k in ENGINE_KEYS if k in engine}
        return by_node, node_times, elapsed, ran_on

    @staticmethod
    def _size(parsed) -> tuple[int, float]:
        by_node, _times, elapsed, _ran_on = parsed
        return sum(sum(counts.values()) for counts in by_node.values()), elapsed

    def load(self, reporter: _RunReporter, *, resume: bool, kept: Any = None) -> None:
        """Add the earlier segments' counters to ``reporter``: the stored ones or ``kept`` (the
        counters in the checkpoint resumed from), whichever holds more."""
        self.reporter = reporter
        if not self.enabled:
            return
        if not resume:
            self.clear()  # a fresh run: counters of an abandoned one do not belong to it
            return
        try:
            stored = self._parse(storage.load_run_segments(self.cfg, self.ticker, self.tid))
        except (OSError, storage.StorageError, ValueError):
            stored = None
        in_checkpoint = self._parse(kept) if kept is not None else None
        candidates = [c for c in (stored, in_checkpoint) if c is not None]
        if not candidates:
            return  # this segment's counters only
        by_node, node_times, elapsed, _ran_on = max(candidates, key=self._size)
        for candidate in sorted(candidates, key=self._size):  # the fuller one's word last
            reporter.ran_on.update(candidate[3])
        tracker = reporter.tracker
        for node, counts in by_node.items():
            tracker._add(node, **counts)
        for node, secs in node_times.items():
            reporter.node_times[node] = reporter.node_times.get(node, 0.0) + secs
        self.elapsed_before = elapsed
        reporter.last_usage = None  # the first usage tick shows the accumulated totals

    def doc(self, reporter: _RunReporter | None = None, started_at: float | None = None) -> dict[str, Any]:
        """The whole run's counters so far (earlier segments included), as JSON."""
        reporter = reporter or self.reporter
        if reporter is None:
            return {}
        started = self.started_at if started_at is None else started_at
        return {"by_node": reporter.tracker.by_node(), "node_times": dict(reporter.node_times),
                "elapsed_s": self.elapsed_before + (time.time() - started), "ran_on": dict(reporter.ran_on)}

    def save(self, reporter: _RunReporter, started_at: float) -> None:
        if not self.enabled:
            return
        try:
            storage.save_run_segments(self.cfg, self.ticker, self.tid, self.doc(reporter, started_at))
        except (OSError, storage.StorageError) as exc:  # counters are worth less than the run's own error
            log.warning("could not keep the run's counters for its resume: %s", exc)

    def clear(self) -> None:
        if self.enabled:
            with contextlib.suppress(OSError, storage.StorageError):
                storage.clear_run_segments(self.cfg, self.ticker, self.tid)
