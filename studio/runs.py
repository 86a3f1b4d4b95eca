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
``stopped`` with its checkpoint kept; ``resume`` calls ``propagate`` again with the same arguments,
which continues from that checkpoint. The API key is held by the handle only in memory and is
never put in the config, the events or an error message.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tradingagents import team
from tradingagents.default_config import public_config, resolve_config
from tradingagents.graph.analyst_execution import normalize_analysts
from tradingagents.graph.events import TERMINAL_KINDS, RunEvent
from tradingagents.validation import validate_date, validate_ticker

ANALYST_LABELS = {r.key: r.node.removesuffix(" Analyst") for r in team.ANALYSTS}
"""The short name of each analyst for the analyst picker: Market, Sentiment, News, Fundamentals."""
REPORT_TITLES = {
    **{r.output_key: r.node.removesuffix(" Analyst") for r in team.ANALYSTS},
    team.judge("invest").output_key: "Research plan",
    team.ROLES["trader"].output_key: "Trader",
    team.judge("risk").output_key: "Decision",
}
"""A tab title per output key, in the order the agents write them (team.OUTPUT_KEYS)."""
STATUS_OF = {"run_finished": "finished", "run_failed": "failed", "run_stopped": "stopped"}


def graph_order(analysts: Any) -> list[str]:
    """The selected analyst keys, checked by the engine's own normaliser, in roster order."""
    keys = normalize_analysts(list(analysts) if analysts is not None else [], "Analysts")
    return [k for k in team.ANALYST_KEYS if k in keys]


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
    _events: list[RunEvent] = field(default_factory=list, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)
    _api_key: str | None = field(default=None, repr=False)
    _started_at: float = field(default_factory=time.time, repr=False)

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
        return derive_progress(self.events, now=now, started_at=self._started_at, finished_at=self.finished_at)


def _plan_board(plan: Any) -> dict[str, AgentStatus]:
    """One pending AgentStatus per agent of ``run_started``'s plan ([{team, agents}]), in plan order."""
    board: dict[str, AgentStatus] = {}
    for group in plan or []:
        for agent in group.get("agents") or []:
            board[str(agent)] = AgentStatus(agent=str(agent), team=str(group.get("team") or ""))
    return board


def derive_progress(
    events: list[RunEvent],
    *,
    now: float | None = None,
    started_at: float | None = None,
    finished_at: float | None = None,
) -> Progress:
    """Fold the event list into what the Run page shows (pure; also used for saved event lists).

    The board is the plan of the latest ``run_started`` (a resumed run starts a new attempt with
    its own plan); node events move its agents (an event's ``agent`` is its role's node name).
    """
    now = time.time() if now is None else now
    agents: dict[str, AgentStatus] = {}
    open_nodes: dict[str, dict[str, Any]] = {}
    intervals: list[dict[str, Any]] = []
    tool_calls: list[dict[str, Any]] = []
    reports: dict[str, str] = {}
    counters = {"llm_calls": 0, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0}
    first_ts: float | None = None
    end_ts: float | None = None
    for ev in events:
        name = ev.agent or ev.node
        if ev.kind == "run_started":
            first_ts = ev.ts if first_ts is None else first_ts
            end_ts = None
            fresh = _plan_board(ev.data.get("plan"))
            for agent, old in agents.items():  # what an earlier attempt finished stays finished
                if agent in fresh and old.status == "done":
                    fresh[agent] = old
            agents = fresh
        elif ev.kind == "node_started" and name:
            st = agents.get(name)
            if st is None:
                st = agents[name] = AgentStatus(agent=name, team=ev.team or "")
            st.status = "running"
            st.runs += 1
            if st.started is None:
                st.started = ev.ts
            open_nodes[ev.node or name] = {"node": ev.node or name, "agent": name,
                                           "team": ev.team or st.team, "start": ev.ts}
        elif ev.kind == "node_finished" and name:
            st = agents.get(name)
            if st is None:
                st = agents[name] = AgentStatus(agent=name, team=ev.team or "")
            if st.started is None:
                st.started = ev.ts - float(ev.data.get("duration_s") or 0.0)
            st.finished = ev.ts
            opened = open_nodes.pop(ev.node or name, None)
            start = opened["start"] if opened else ev.ts - float(ev.data.get("duration_s") or 0.0)
            intervals.append({"node": ev.node or name, "agent": name, "team": ev.team or st.team,
                              "start": start, "end": ev.ts})
            # an agent is done when none of its nodes is still open
            if not any(o["agent"] == name for o in open_nodes.values()):
                st.status = "done"
        elif ev.kind == "tool_call":
            tool_calls.append({"agent": name, "ts": ev.ts, **ev.data})
        elif ev.kind == "report":
            key = ev.data.get("key")
            if key:
                reports[key] = ev.data.get("text") or ""
        elif ev.kind == "llm_usage":
            for k in counters:
                if k in ev.data:
                    counters[k] = int(ev.data[k] or 0)
        elif ev.kind in TERMINAL_KINDS:
            end_ts = ev.ts
            # nodes left open by a stop or failure are no longer running
            for o in open_nodes.values():
                st = agents.get(o["agent"])
                if st and st.status == "running":
                    st.status = "pending" if ev.kind != "run_finished" else "done"
            open_nodes.clear()
    counters["tool_calls"] = max(counters["tool_calls"], len(tool_calls))
    ordered = list(agents.values())
    teams: dict[str, list[AgentStatus]] = {t: [] for t in team.TEAMS}
    for st in ordered:
        teams.setdefault(st.team or "Other", []).append(st)
    total = len(ordered) or 1
    running = [s for s in ordered if s.status == "running"]
    score = sum(1.0 if s.status == "done" else 0.5 if s.status == "running" else 0.0 for s in ordered)
    fraction = min(1.0, score / total) if ordered else 0.0
    start = started_at if started_at is not None else first_ts
    end = end_ts if end_ts is not None else (finished_at if finished_at else now)
    elapsed = max(0.0, end - start) if start is not None else 0.0
    for iv in open_nodes.values():
        intervals.append({**iv, "end": None})
    return Progress(
        agents=ordered,
        teams={k: v for k, v in teams.items() if v},
        tool_calls=tool_calls,
        reports=reports,
        counters=counters,
        intervals=intervals,
        fraction=fraction,
        elapsed_s=elapsed,
        current=running[-1].agent if running else None,
    )


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
    ) -> str:
        """Validate, then start a run on a worker thread; returns its id.

        Raises ``ValidationError`` or ``ConfigError`` (nothing is started) for a bad ticker, date,
        analyst list or round count.
        """
        ticker = validate_ticker(ticker)
        date = validate_date(date)
        analysts = graph_order(analysts)
        # the resolver validates every key once (rounds included) and returns frozen settings
        resolved = resolve_config({**public_config(dict(config or {})), "selected_analysts": list(analysts)})
        handle = RunHandle(
            run_id=uuid.uuid4().hex[:12],
            ticker=ticker,
            date=date,
            analysts=analysts,
            config=resolved,
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

    def stop(self, run_id: str) -> bool:
        """Ask a running run to stop before its next node. False when it is not running."""
        handle = self.get(run_id)
        if handle is None or handle.status != "running":
            return False
        handle._stop.set()
        return True

    def resume(self, run_id: str) -> bool:
        """Run an ended, unfinished run again with the same arguments (from its checkpoint, if any)."""
        handle = self.get(run_id)
        if handle is None or handle.status not in ("stopped", "failed", "crashed") or handle.is_alive:
            return False
        handle._stop.clear()
        handle.status = "running"
        handle.error = handle.error_type = None
        handle.resumable = False
        handle.finished_at = None
        self._launch(handle)
        return True

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
            graph = self._factory(
                selected_analysts=list(handle.analysts), config=copy.deepcopy(handle.config), api_key=key
            )
            result = graph.propagate(
                handle.ticker, handle.date, on_event=handle._on_event, should_stop=handle._should_stop
            )
        except BaseException as exc:  # noqa: BLE001 - the terminal event says what happened, if any
            crash = exc
        finally:
            handle.finished_at = time.time()
            terminal = next((e for e in reversed(handle.events[first:]) if e.kind in TERMINAL_KINDS), None)
            if terminal is None:
                what = f"{type(crash).__name__}: {crash}" if crash is not None else "no error was raised"
                handle.error = _redact(f"The engine ended without reporting how the run ended ({what}).", key)
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
                elif terminal.kind == "run_finished":
                    handle.rating = data.get("rating")
                    if result is not None:
                        handle.final_state = result[0]
                handle.status = STATUS_OF[terminal.kind]
