"""A UI-neutral registry of background analysis runs.

The Streamlit app keeps one ``RunRegistry`` in ``st.cache_resource`` and polls it; nothing here
imports streamlit, so it is tested without a browser. A run is one ``TradingAgentsGraph.propagate``
call on a worker thread. Its ``RunHandle`` collects the engine's ``RunEvent``s (the contract in
``tradingagents.graph.events``) and folds them into what the page shows; it derives nothing the
engine already says: the agent board is ``run_started``'s plan, agents and teams are the events'
own, and the outcome (status, error, resumability, saved paths and meta) is the one terminal event
the engine sends. A worker that ends without a terminal event is shown as ``crashed``, never
given an invented one.

``stop`` sets a flag the engine polls between nodes (``should_stop``) and the run ends as
``stopped`` with its checkpoint kept; ``resume`` calls ``propagate`` again, from that checkpoint,
with the settings given now (the run's analysts, rounds and execution stay: they name the
checkpoint) and records how they differ from the run's original (``config_changes``). The API
key is held by the handle only in memory and is never put in the config, the events or an error.

A run belongs to its ``owner`` (an opaque id of the browser that started it): anyone may watch
it, only the owner may stop or resume it (and so spend its key). Each run's public settings are
saved beside its checkpoint (``<checkpoint_dir>/app_runs/<thread_id>.json``, no secret), so after
a server restart ``checkpointed_runs`` lists the runs that can be resumed and ``adopt`` resumes one.

Reading is cheap: a handle folds only the events that arrived since its last ``progress()``
(no copy of the whole list per poll), so many sessions can watch many runs at once.
"""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from tradingagents import team
from tradingagents.default_config import public_config, resolve_config
from tradingagents.errors import TradingAgentsError
from tradingagents.graph.analyst_execution import normalize_analysts
from tradingagents.graph.events import TERMINAL_KINDS, RunEvent, describe_error
from tradingagents.storage import sqlite_checkpoint as ckpt
from tradingagents.validation import validate_date, validate_ticker

ANALYST_LABELS = {r.key: r.title for r in team.ANALYSTS}
"""The short name of each analyst for the analyst picker: Market, Sentiment, News, Fundamentals."""
REPORT_TITLES = team.REPORT_TITLES
"""A tab title per output key, in the order the agents write them (team.OUTPUT_KEYS)."""
STATUS_OF = {"run_finished": "finished", "run_failed": "failed", "run_stopped": "stopped"}
CHANGE_LABELS = {
    "llm_provider": "LLM provider",
    "quick_think_llm": "Quick model",
    "deep_think_llm": "Deep model",
    "backend_url": "Base URL",
    "data_vendor": "Data source",
    "output_language": "Output language",
}
"""The settings a resume may change, by their sidebar labels (``ui.FIELD_OF``); the rest name the checkpoint."""
CHECKPOINT_KEYS = ("selected_analysts", "max_debate_rounds", "max_risk_discuss_rounds", "analyst_execution")
SAME_RUN_KEYS = ("llm_provider", "quick_think_llm", "deep_think_llm", "data_vendor", "analyst_execution",
                 "max_debate_rounds", "max_risk_discuss_rounds")
"""What makes two runs comparable for an ETA (with the same analysts)."""


def config_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(label, before, after)`` for each resumable setting that differs (URLs without credentials)."""
    from tradingagents.llm_presets import public_url

    out = []
    for key, label in CHANGE_LABELS.items():
        a, b = old.get(key), new.get(key)
        if (a or None) != (b or None):
            if key == "backend_url":
                a, b = (public_url(a) if a else a), (public_url(b) if b else b)
            out.append((label, a, b))
    return out


def _run_thread_id(ticker: str, date: str, config: Mapping[str, Any]) -> str:
    """The checkpoint thread the engine will use for this run (same derivation as the engine's)."""
    analysts = list(config["selected_analysts"])
    signature = ckpt.run_signature(analysts, config["max_debate_rounds"], config["max_risk_discuss_rounds"],
                                   "stock", analyst_execution=config.get("analyst_execution"))
    return ckpt.thread_id(ticker, date, signature)


def _settings_path(config: Mapping[str, Any], tid: str) -> Path:
    return Path(config["checkpoint_dir"]) / "app_runs" / f"{tid}.json"


def save_run_settings(handle: RunHandle) -> None:
    """Write the run's public settings beside its checkpoint (atomically; a failure only loses the offer)."""
    if not handle.config.get("checkpoint_enabled"):
        return
    path = _settings_path(handle.config, handle.thread_id)
    doc = {"ticker": handle.ticker, "date": handle.date, "analysts": list(handle.analysts),
           "thread_id": handle.thread_id, "config": public_config(handle.config), "saved_at": time.time()}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, default=str), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def forget_run_settings(handle: RunHandle) -> None:
    if handle.config.get("checkpoint_enabled"):
        _settings_path(handle.config, handle.thread_id).unlink(missing_ok=True)


def expected_duration(config: Mapping[str, Any], limit: int = 30) -> float | None:
    """The median ``elapsed_s`` of the newest saved runs with the same configuration, or None."""
    from tradingagents import storage

    want = {k: config.get(k) for k in SAME_RUN_KEYS}
    want_analysts = sorted(config.get("selected_analysts") or [])
    times: list[float] = []
    for r in storage.list_runs(config)[: limit * 3]:
        try:
            meta = storage.load_run(config, r["ticker"], r["date"]).get("meta") or {}
        except (OSError, ValueError, AttributeError, KeyError):
            continue
        same = all(meta.get(k) == v for k, v in want.items() if k in meta)
        if same and sorted(meta.get("analysts") or []) == want_analysts and meta.get("elapsed_s"):
            times.append(float(meta["elapsed_s"]))
        if len(times) >= limit:
            break
    return statistics.median(times) if times else None


def graph_order(analysts: Any) -> list[str]:
    """The selected analyst keys, checked by the engine's own normaliser, in roster order."""
    keys = normalize_analysts(list(analysts) if analysts is not None else [], "Analysts")
    return [k for k in team.ANALYST_KEYS if k in keys]


def _thaw(value: Any) -> Any:
    return list(value) if isinstance(value, tuple | list) else value


def _redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        return text.replace(secret, "***")
    return text


@dataclass
class AgentStatus:
    agent: str
    team: str
    status: str = "pending"  # pending | running | done
    started: float | None = None
    finished: float | None = None
    runs: int = 0  # how many of its nodes have started (tool loops, debate rounds)

    @property
    def duration_s(self) -> float | None:
        if self.started is None:
            return None
        end = self.finished if (self.finished is not None and self.status == "done") else time.time()
        return max(0.0, end - self.started)


@dataclass
class Progress:
    agents: list[AgentStatus]
    teams: dict[str, list[AgentStatus]]
    tool_calls: list[dict[str, Any]]
    reports: dict[str, str]
    counters: dict[str, int]
    intervals: list[dict[str, Any]]  # {node, agent, team, start, end}
    fraction: float
    elapsed_s: float
    current: str | None  # the agent running now, if any
    live_text: str = ""  # the current agent's model text so far (token events)
    settle: dict[str, Any] | None = None  # the pre-run settling step: {status, settled, pending}
    newest_report: str | None = None  # the output key of the report that landed last
    cost_usd: float | None = None  # the run's cost so far (the latest llm_usage event); None: no price


@dataclass
class RunHandle:
    """One background run. Read it through ``progress`` and the fields; the worker appends."""

    run_id: str
    ticker: str
    date: str
    analysts: list[str]
    config: dict[str, Any]  # resolved, without any secret
    created_at: float = field(default_factory=time.time)
    status: str = "running"  # running, then finished | failed | stopped (STATUS_OF) or crashed
    error: str | None = None
    error_type: str | None = None
    resumable: bool = False
    rating: str | None = None
    final_state: dict[str, Any] | None = None
    record: dict[str, Any] | None = None  # the terminal event's record: paths and meta
    finished_at: float | None = None
    attempts: int = 0
    owner: str | None = None  # the browser that started it: only it may stop or resume
    thread_id: str = ""  # the engine's checkpoint thread of this run
    config_changes: list[tuple[str, Any, Any]] = field(default_factory=list)  # of the latest resume
    expected_s: float | None = None  # median duration of past runs with the same configuration
    error_key: str | None = None  # the setting a configuration error names (config key)
    error_key_env: str | None = None  # the environment variable of a missing key
    _events: list[RunEvent] = field(default_factory=list, repr=False)
    _folder: ProgressFolder = field(default_factory=lambda: ProgressFolder(), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _api_key: str | None = field(default=None, repr=False)
    _started_at: float = field(default_factory=time.time, repr=False)
    _prior_elapsed: float = field(default=0.0, repr=False)  # earlier attempts' time: elapsed spans all

    # --- worker side -------------------------------------------------------------------------
    def _on_event(self, event: RunEvent) -> None:
        with self._lock:
            self._events.append(event)

    def _should_stop(self) -> bool:
        return self._stop.is_set()

    # --- reader side -------------------------------------------------------------------------
    @property
    def events(self) -> list[RunEvent]:
        with self._lock:
            return list(self._events)

    @property
    def stopping(self) -> bool:
        """Stop was asked and the run has not ended yet."""
        return self._stop.is_set() and self.status == "running"

    def can_control(self, owner: str | None) -> bool:
        """Whether ``owner`` may stop or resume this run (its key is spent on a resume)."""
        return self.owner is None or owner == self.owner

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def is_alive(self) -> bool:
        t = self._thread
        return bool(t and t.is_alive())

    @property
    def results_path(self) -> str | None:
        return (self.record or {}).get("results_path")

    @property
    def meta(self) -> dict[str, Any]:
        """The run's meta as the engine saved (or, for a run that did not finish, knew) it."""
        return dict((self.record or {}).get("meta") or {})

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker thread ends; True when it has."""
        t = self._thread
        if t is None:
            return True
        t.join(timeout)
        return not t.is_alive()

    def progress(self, now: float | None = None) -> Progress:
        """What the page shows, folding only the events that arrived since the last call."""
        with self._lock:
            fresh = self._events[self._folder.count:]
            self._folder.feed(fresh)
            progress = self._folder.snapshot(now=now, started_at=self._started_at, finished_at=self.finished_at)
        progress.elapsed_s += self._prior_elapsed
        return progress


def _plan_board(plan: Any) -> dict[str, AgentStatus]:
    """One pending AgentStatus per agent of ``run_started``'s plan ([{team, agents}]), in plan order."""
    board: dict[str, AgentStatus] = {}
    for group in plan or []:
        for agent in group.get("agents") or []:
            board[str(agent)] = AgentStatus(agent=str(agent), team=str(group.get("team") or ""))
    return board


class ProgressFolder:
    """Folds events into what the Run page shows, one event at a time (``feed``), so a live run is
    read incrementally; ``snapshot`` returns a ``Progress`` of copies (safe to render).

    The board is the plan of the latest ``run_started`` (a resumed run starts a new attempt with
    its own plan); node events move its agents (an event's ``agent`` is its role's node name).
    """

    def __init__(self) -> None:
        self.agents: dict[str, AgentStatus] = {}
        self.open_nodes: dict[str, dict[str, Any]] = {}
        self.intervals: list[dict[str, Any]] = []
        self.tool_calls: list[dict[str, Any]] = []
        self.reports: dict[str, str] = {}
        self.report_order: list[str] = []  # keys in the order they landed (the newest is last)
        self.live_text: dict[str, str] = {}  # agent → model text of its current call
        self.counters = {"llm_calls": 0, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0}
        self.settle: dict[str, Any] | None = None  # {status: running|done, settled, pending}
        self.cost_usd: float | None = None
        self.first_ts: float | None = None
        self.end_ts: float | None = None
        self.count = 0

    def feed(self, events: list[RunEvent]) -> ProgressFolder:
        for ev in events:
            self._one(ev)
        self.count += len(events)
        return self

    def _agent(self, name: str, ev: RunEvent) -> AgentStatus:
        st = self.agents.get(name)
        if st is None:
            st = self.agents[name] = AgentStatus(agent=name, team=ev.team or "")
        return st

    def _one(self, ev: RunEvent) -> None:
        name = ev.agent or ev.node
        kind = ev.kind
        if kind == "token" and name:
            so_far = "" if ev.data.get("restart") else self.live_text.get(name, "")  # restart: a retried call
            self.live_text[name] = so_far + str(ev.data.get("text_delta") or "")
        elif kind == "settle_started":
            self.first_ts = ev.ts if self.first_ts is None else self.first_ts
            self.end_ts = None
            self.settle = {"status": "running", "settled": 0, "pending": 0, "started": ev.ts}
        elif kind == "settle_finished":
            self.settle = {**(self.settle or {}), "status": "done", "settled": int(ev.data.get("settled") or 0),
                           "pending": int(ev.data.get("pending") or 0), "finished": ev.ts}
        elif kind == "run_started":
            self.first_ts = ev.ts if self.first_ts is None else self.first_ts
            self.end_ts = None
            fresh = _plan_board(ev.data.get("plan"))
            for agent, old in self.agents.items():  # what an earlier attempt finished stays finished
                if agent in fresh and old.status == "done":
                    fresh[agent] = old
            self.agents = fresh
        elif kind == "node_started" and name:
            st = self._agent(name, ev)
            st.status = "running"
            st.runs += 1
            if st.started is None:
                st.started = ev.ts
            self.live_text.pop(name, None)  # a new call writes a new text
            self.open_nodes[ev.node or name] = {"node": ev.node or name, "agent": name,
                                                "team": ev.team or st.team, "start": ev.ts}
        elif kind == "node_finished" and name:
            st = self._agent(name, ev)
            duration = float(ev.data.get("duration_s") or 0.0)
            if st.started is None:
                st.started = ev.ts - duration
            st.finished = ev.ts
            opened = self.open_nodes.pop(ev.node or name, None)
            start = opened["start"] if opened else ev.ts - duration
            self.intervals.append({"node": ev.node or name, "agent": name, "team": ev.team or st.team,
                                   "start": start, "end": ev.ts})
            # an agent is done when none of its nodes is still open
            if not any(o["agent"] == name for o in self.open_nodes.values()):
                st.status = "done"
        elif kind == "tool_call":
            self.tool_calls.append({"agent": name, "ts": ev.ts, **ev.data})
        elif kind == "report":
            key = ev.data.get("key")
            if key:
                self.reports[key] = ev.data.get("text") or ""
                if key in self.report_order:
                    self.report_order.remove(key)
                self.report_order.append(key)
        elif kind == "llm_usage":
            for k in self.counters:
                if k in ev.data:
                    self.counters[k] = int(ev.data[k] or 0)
            cost = ev.data.get("cost_usd")
            ok = isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0
            self.cost_usd = float(cost) if ok else None
        elif kind in TERMINAL_KINDS:
            self.end_ts = ev.ts
            # nodes left open by a stop or failure are no longer running
            for o in self.open_nodes.values():
                st = self.agents.get(o["agent"])
                if st and st.status == "running":
                    st.status = "pending" if kind != "run_finished" else "done"
            self.open_nodes.clear()

    def snapshot(self, *, now: float | None = None, started_at: float | None = None,
                 finished_at: float | None = None) -> Progress:
        now = time.time() if now is None else now
        counters = dict(self.counters)
        counters["tool_calls"] = max(counters["tool_calls"], len(self.tool_calls))
        ordered = [replace(a) for a in self.agents.values()]
        teams: dict[str, list[AgentStatus]] = {t: [] for t in team.TEAMS}
        for st in ordered:
            teams.setdefault(st.team or "Other", []).append(st)
        total = len(ordered) or 1
        running = [s for s in ordered if s.status == "running"]
        score = sum(1.0 if s.status == "done" else 0.5 if s.status == "running" else 0.0 for s in ordered)
        fraction = min(1.0, score / total) if ordered else 0.0
        start = started_at if started_at is not None else self.first_ts
        end = self.end_ts if self.end_ts is not None else (finished_at if finished_at else now)
        elapsed = max(0.0, end - start) if start is not None else 0.0
        intervals = list(self.intervals) + [{**iv, "end": None} for iv in self.open_nodes.values()]
        current = running[-1].agent if running else None
        return Progress(
            agents=ordered,
            teams={k: v for k, v in teams.items() if v},
            tool_calls=list(self.tool_calls),
            reports={k: self.reports[k] for k in self.report_order},
            counters=counters,
            intervals=intervals,
            fraction=fraction,
            elapsed_s=elapsed,
            current=current,
            live_text=self.live_text.get(current, "") if current else "",
            settle=dict(self.settle) if self.settle else None,
            newest_report=self.report_order[-1] if self.report_order else None,
            cost_usd=self.cost_usd,
        )


def derive_progress(
    events: list[RunEvent],
    *,
    now: float | None = None,
    started_at: float | None = None,
    finished_at: float | None = None,
) -> Progress:
    """Fold a whole event list at once (pure; also used for saved event lists)."""
    return ProgressFolder().feed(list(events)).snapshot(now=now, started_at=started_at, finished_at=finished_at)


GraphFactory = Callable[..., Any]


def _default_graph_factory(*, selected_analysts, config, api_key):
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    return TradingAgentsGraph(selected_analysts=selected_analysts, config=config, api_key=api_key)


class RunRegistry:
    """Thread-safe registry of background runs, newest first in ``list()``."""

    def __init__(self, graph_factory: GraphFactory | None = None, max_runs: int = 50):
        self._factory = graph_factory or _default_graph_factory
        self._runs: dict[str, RunHandle] = {}
        self._lock = threading.Lock()
        self._max_runs = max_runs

    # ------------------------------------------------------------------------------------------
    def start(
        self,
        ticker: str,
        date: str,
        analysts: list[str] | tuple[str, ...],
        config: Mapping[str, Any] | None = None,
        api_key: str | None = None,
        *,
        owner: str | None = None,
    ) -> str:
        """Validate, then start a run on a worker thread; returns its id.

        Raises ``ValidationError`` or ``ConfigError`` (nothing is started) for a bad ticker, date,
        analyst list or round count, and the ``LLMConfigError`` the models would raise (missing
        key, URL or model name: it carries ``key``/``key_env``) before any thread starts.
        """
        from tradingagents.llm_clients.factory import check_llm_config

        ticker = validate_ticker(ticker)
        date = validate_date(date)
        analysts = graph_order(analysts)
        # the resolver validates every key once (rounds included) and returns frozen settings
        resolved = resolve_config({**public_config(dict(config or {})), "selected_analysts": list(analysts)})
        check_llm_config(resolved, api_key=api_key)
        handle = RunHandle(
            run_id=uuid.uuid4().hex[:12],
            ticker=ticker,
            date=date,
            analysts=analysts,
            config=resolved,
            owner=owner,
            thread_id=_run_thread_id(ticker, date, resolved),
            _api_key=api_key or None,
        )
        with self._lock:
            self._runs[handle.run_id] = handle
            self._prune()
        self._launch(handle)
        return handle.run_id

    def get(self, run_id: str | None) -> RunHandle | None:
        if not run_id:
            return None
        with self._lock:
            return self._runs.get(str(run_id))

    def list(self) -> list[RunHandle]:
        with self._lock:
            runs = list(self._runs.values())
        return sorted(runs, key=lambda h: h.created_at, reverse=True)

    def stop(self, run_id: str, *, owner: str | None = None) -> bool:
        """Ask a running run to stop before its next node. False when it is not running or not ``owner``'s."""
        handle = self.get(run_id)
        if handle is None or handle.status != "running" or not handle.can_control(owner):
            return False
        handle._stop.set()
        return True

    def resume(self, run_id: str, *, owner: str | None = None, config: Mapping[str, Any] | None = None,
               api_key: str | None = None) -> bool:
        """Run an ended, unfinished run again (from its checkpoint, if any). False when it cannot be.

        With ``config`` (the settings on screen now) the run continues with those settings and the
        key given now; its analysts, rounds and execution stay the run's own (they name its
        checkpoint). ``handle.config_changes`` then lists what differs from the previous attempt.
        Raises the ``LLMConfigError`` of settings that cannot work (nothing is started).
        """
        handle = self.get(run_id)
        if (handle is None or handle.status not in ("stopped", "failed", "crashed") or handle.is_alive
                or not handle.can_control(owner)):
            return False
        if config is not None:
            from tradingagents.llm_clients.factory import check_llm_config

            keep = {k: _thaw(handle.config[k]) for k in CHECKPOINT_KEYS}
            new = resolve_config({**public_config(dict(config)), **keep})
            check_llm_config(new, api_key=api_key)
            handle.config_changes = config_changes(handle.config, new)
            handle.config = new
            handle._api_key = api_key or None
        else:
            handle.config_changes = []
        handle._stop.clear()
        handle.status = "running"
        handle.error = handle.error_type = handle.error_key = handle.error_key_env = None
        handle.resumable = False
        handle.finished_at = None
        self._launch(handle)
        return True

    def checkpointed_runs(self, config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Checkpointed runs this registry does not hold (e.g. from before a server restart) whose
        settings were saved: {ticker, date, analysts, thread_id, step, updated, config}, newest first."""
        cfg = resolve_config(config)
        held = {h.thread_id for h in self.list()}
        out = []
        from tradingagents import storage

        for cp in storage.list_checkpoints(cfg):
            if cp["thread_id"] in held:
                continue
            try:
                doc = json.loads(_settings_path(cfg, cp["thread_id"]).read_text(encoding="utf-8"))
                if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
                    continue
            except (OSError, ValueError):
                continue  # a checkpoint the app did not start (the CLI's): the CLI resumes it
            out.append({**cp, "ticker": doc.get("ticker") or cp["ticker"], "date": doc.get("date") or cp["date"],
                        "analysts": list(doc.get("analysts") or []), "config": doc["config"]})
        return out

    def adopt(self, saved: Mapping[str, Any], *, config: Mapping[str, Any] | None = None,
              api_key: str | None = None, owner: str | None = None) -> str:
        """Resume a run listed by ``checkpointed_runs``: a new handle with the run's saved settings
        (overridden by ``config``, the settings on screen now, as ``resume`` does); returns its id."""
        original = resolve_config({**dict(saved["config"]), "home": resolve_config(config)["home"]})
        keep = {k: _thaw(original[k]) for k in CHECKPOINT_KEYS}
        run_id = self.start(saved["ticker"], saved["date"], keep["selected_analysts"],
                            {**public_config(dict(config if config is not None else original)), **keep},
                            api_key=api_key, owner=owner)
        handle = self.get(run_id)
        if handle is not None:
            handle.config_changes = config_changes(original, handle.config)
        return run_id

    def wait(self, run_id: str, timeout: float | None = None) -> RunHandle | None:
        handle = self.get(run_id)
        if handle is not None:
            handle.wait(timeout)
        return handle

    # ------------------------------------------------------------------------------------------
    def _prune(self) -> None:
        if len(self._runs) <= self._max_runs:
            return
        finished = sorted((h for h in self._runs.values() if h.done), key=lambda h: h.created_at)
        for h in finished[: len(self._runs) - self._max_runs]:
            self._runs.pop(h.run_id, None)

    def _launch(self, handle: RunHandle) -> None:
        handle.attempts += 1
        handle._started_at = time.time()
        thread = threading.Thread(
            target=self._work, args=(handle,), name=f"ta-run-{handle.run_id}", daemon=True
        )
        handle._thread = thread
        thread.start()

    def _work(self, handle: RunHandle) -> None:
        """One attempt: the outcome is this attempt's terminal event; without one, a crash."""
        key = handle._api_key
        first = len(handle.events)
        result: tuple[dict[str, Any], str | None] | None = None
        crash: BaseException | None = None
        try:
            save_run_settings(handle)
            if handle.expected_s is None:
                try:
                    handle.expected_s = expected_duration(handle.config)
                except Exception:  # noqa: BLE001 - an ETA is a nicety, never a reason to fail
                    handle.expected_s = None
            graph = self._factory(
                selected_analysts=list(handle.analysts), config=handle.config, api_key=key
            )
            result = graph.propagate(
                handle.ticker, handle.date, on_event=handle._on_event, should_stop=handle._should_stop
            )
        except BaseException as exc:  # noqa: BLE001 - the terminal event says what happened, if any
            crash = exc
        finally:
            handle.finished_at = time.time()
            handle._prior_elapsed += max(0.0, handle.finished_at - handle._started_at)
            terminal = next((e for e in reversed(handle.events[first:]) if e.kind in TERMINAL_KINDS), None)
            if terminal is None and isinstance(crash, TradingAgentsError):
                # refused before the engine ran (e.g. the models could not be built): a plain failure
                handle.error = _redact(describe_error(crash), key)
                handle.error_type = type(crash).__name__
                handle.error_key = getattr(crash, "key", None)
                handle.error_key_env = getattr(crash, "key_env", None)
                handle.resumable = False
                handle.status = "failed"
            elif terminal is None:
                what = describe_error(crash) if crash is not None else "no error was raised."
                handle.error = _redact(f"The engine ended without reporting how the run ended: {what}", key)
                handle.error_type = type(crash).__name__ if crash is not None else None
                handle.resumable = False
                handle.status = "crashed"
            else:
                data = terminal.data
                handle.record = dict(data.get("record") or {})
                handle.resumable = bool(data.get("resumable"))
                if terminal.kind == "run_failed":
                    handle.error = _redact(str(data.get("error") or ""), key)
                    handle.error_type = data.get("error_type")
                    handle.error_key = getattr(crash, "key", None)
                    handle.error_key_env = getattr(crash, "key_env", None)
                elif terminal.kind == "run_finished":
                    handle.rating = data.get("rating")
                    if result is not None:
                        handle.final_state = result[0]
                    forget_run_settings(handle)
                handle.status = STATUS_OF[terminal.kind]
