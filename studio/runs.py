"""What the Run page shows of an analysis run, folded from the engine's events (no streamlit here).

A run is one kind of job of ``studio.jobs`` (its ``RunJob`` keeps the events and runs the engine);
this module is the run kind's reading side: ``ProgressFolder`` folds the engine's ``RunEvent``s (the
contract in ``tradingagents.graph.events``) into a ``Progress``, one handler per event kind
(``_FOLD``), and ``derive_progress`` folds a whole list at once. It derives nothing the engine
already says: the agent board is ``run_started``'s plan, agents and teams are the events' own, and
the outcome is the one terminal event the engine sends. Beside it: the settings a resume may change
(``CHANGE_LABELS``, ``config_changes``), the checkpoint thread of a run (``run_thread_id``) and the
ETA from past runs (``expected_duration``).

Reading is cheap: a folder feeds only the events that arrived since its last snapshot (no copy of
the whole list per poll), so many sessions can watch many runs at once.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from tradingagents import team
from tradingagents.config import normalize_analysts, setting
from tradingagents.graph.events import TERMINAL_KINDS, RunEvent
from tradingagents.graph.run_context import thread_id_for
from tradingagents.i18n import Translator, translator

ANALYST_LABELS = {r.key: r.title for r in team.ANALYSTS}
"""The short name of each analyst for the analyst picker: Market, Sentiment, News, Fundamentals."""
REPORT_TITLES = team.REPORT_TITLES
"""A tab title per output key, in the order the agents write them (team.OUTPUT_KEYS)."""
STATUS_OF = {"run_finished": "finished", "run_failed": "failed", "run_stopped": "stopped"}
CHANGE_LABELS = {key: setting(key).label for key in ("llm_provider", "quick_think_llm", "deep_think_llm", "backend_url",
                                                      "data_vendor", "output_language", "analyst_data")}
"""The settings a resume may change, by their sidebar labels (``ui.FIELD_OF``; English, marked: show them
with ``t(label)``); the rest name the checkpoint."""
EN = translator("en")
CHECKPOINT_KEYS = ("selected_analysts", "max_debate_rounds", "max_risk_discuss_rounds", "analyst_execution")
SAME_RUN_KEYS = ("llm_provider", "quick_think_llm", "deep_think_llm", "data_vendor", "analyst_execution",
                 "analyst_data", "max_debate_rounds", "max_risk_discuss_rounds")
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


def run_thread_id(ticker: str, date: str, config: Mapping[str, Any]) -> str:
    """The checkpoint thread the engine will use for this run (the engine's one derivation)."""
    return thread_id_for(ticker, date, config)  # loads LangGraph's saver on first use, not at import


def expected_duration(config: Mapping[str, Any], limit: int = 30) -> float | None:
    """The median ``elapsed_s`` of the newest saved runs with the same configuration, or None. It runs as a job
    starts, before the engine: read from the listing's rows (``RUN_SHAPE_KEYS``), not from each run's document
    (which took 22 ms at 2,000 saved runs, and 0.75 s before the listing kept its rows)."""
    from tradingagents import storage

    want = {k: config.get(k) for k in SAME_RUN_KEYS}
    want_analysts = sorted(config.get("selected_analysts") or [])
    times: list[float] = []
    for r in storage.list_runs(config)[: limit * 3]:
        same = all(r.get(k) == v for k, v in want.items() if r.get(k) is not None)
        elapsed = r.get("elapsed_s")
        analysts = r.get("analysts")
        if (same and isinstance(analysts, list) and sorted(map(str, analysts)) == want_analysts
                and isinstance(elapsed, int | float) and not isinstance(elapsed, bool) and elapsed > 0):
            times.append(float(elapsed))
        if len(times) >= limit:
            break
    return statistics.median(times) if times else None


def graph_order(analysts: Any) -> list[str]:
    """The selected analyst keys, checked by the engine's own normaliser, in roster order."""
    keys = normalize_analysts(list(analysts) if analysts is not None else [], "Analysts")
    return [k for k in team.ANALYST_KEYS if k in keys]


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
    live_text: str = ""  # the latest model text so far (token events): the current agent's, else the last words
    live_agent: str | None = None  # whose words ``live_text`` holds (the last to speak while the current one is silent)
    settle: dict[str, Any] | None = None  # the pre-run settling step: {status, settled, pending}
    newest_report: str | None = None  # the output key of the report that landed last
    cost_usd: float | None = None  # the run's cost so far (the latest llm_usage event); None: no price
    # a checkpoint begun under other models was resumed: run_started's earlier_engines (``ran_on`` groups)
    # and the models this attempt runs on (its settings)
    earlier_engines: list[dict[str, Any]] = field(default_factory=list)
    engine: dict[str, Any] = field(default_factory=dict)


_CLEAR_NODES = frozenset(r.clear_node for r in team.ANALYSTS if r.clear_node)


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
        self.last_speaker: str | None = None  # the agent whose words came last
        self.counters = {"llm_calls": 0, "tool_calls": 0, "input_tokens": 0, "output_tokens": 0}
        self.settle: dict[str, Any] | None = None  # {status: running|done, settled, pending}
        self.cost_usd: float | None = None
        self.earlier_engines: list[dict[str, Any]] = []
        self.engine: dict[str, Any] = {}
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
        handler = _FOLD.get(ev.kind)
        if handler is not None:
            handler(self, ev, ev.agent or ev.node)

    # one handler per event kind (``_FOLD``); ``name`` is the event's agent (its role's node name)
    def _on_token(self, ev: RunEvent, name: str | None) -> None:
        if name:
            so_far = "" if ev.data.get("restart") else self.live_text.get(name, "")  # restart: a retried call
            self.live_text[name] = so_far + str(ev.data.get("text_delta") or "")
            self.last_speaker = name

    def _on_settle_started(self, ev: RunEvent, name: str | None) -> None:
        self.first_ts = ev.ts if self.first_ts is None else self.first_ts
        self.end_ts = None
        self.settle = {"status": "running", "settled": 0, "pending": 0, "started": ev.ts}

    def _on_settle_finished(self, ev: RunEvent, name: str | None) -> None:
        self.settle = {**(self.settle or {}), "status": "done", "settled": int(ev.data.get("settled") or 0),
                       "pending": int(ev.data.get("pending") or 0), "finished": ev.ts}

    def _on_run_started(self, ev: RunEvent, name: str | None) -> None:
        self.first_ts = ev.ts if self.first_ts is None else self.first_ts
        self.end_ts = None
        self.earlier_engines = [dict(g) for g in ev.data.get("earlier_engines") or [] if isinstance(g, dict)]
        self.engine = dict(ev.data.get("settings") or {})
        fresh = _plan_board(ev.data.get("plan"))
        for agent, old in self.agents.items():  # what an earlier attempt finished stays finished
            if agent in fresh and old.status == "done":
                fresh[agent] = old
        self.agents = fresh

    def _on_node_started(self, ev: RunEvent, name: str | None) -> None:
        if not name:
            return
        st = self._agent(name, ev)
        st.status = "running"
        st.runs += 1
        if st.started is None:
            st.started = ev.ts
        if (ev.node or name) == name:
            self.live_text.pop(name, None)  # a new call writes a new text (its tools and its clear are no call)
        self.open_nodes[ev.node or name] = {"node": ev.node or name, "agent": name,
                                            "team": ev.team or st.team, "start": ev.ts}

    def _on_node_finished(self, ev: RunEvent, name: str | None) -> None:
        if not name:
            return
        st = self._agent(name, ev)
        duration = float(ev.data.get("duration_s") or 0.0)
        if st.started is None:
            st.started = ev.ts - duration
        # an analyst's Msg Clear is housekeeping that waits for the parallel step's barrier (all four
        # analysts' clears end together): the board shows when the analyst's own work ended
        if not (ev.node in _CLEAR_NODES and st.finished is not None):
            st.finished = ev.ts
        opened = self.open_nodes.pop(ev.node or name, None)
        start = opened["start"] if opened else ev.ts - duration
        self.intervals.append({"node": ev.node or name, "agent": name, "team": ev.team or st.team,
                               "start": start, "end": ev.ts})
        # an agent is done when none of its nodes is still open
        if not any(o["agent"] == name for o in self.open_nodes.values()):
            st.status = "done"

    def _on_tool_call(self, ev: RunEvent, name: str | None) -> None:
        self.tool_calls.append({"agent": name, "ts": ev.ts, **ev.data})

    def _on_report(self, ev: RunEvent, name: str | None) -> None:
        key = ev.data.get("key")
        if key:
            self.reports[key] = ev.data.get("text") or ""
            if key in self.report_order:
                self.report_order.remove(key)
            self.report_order.append(key)

    def _on_llm_usage(self, ev: RunEvent, name: str | None) -> None:
        for k in self.counters:
            if k in ev.data:
                self.counters[k] = int(ev.data[k] or 0)
        cost = ev.data.get("cost_usd")
        ok = isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0
        self.cost_usd = float(cost) if ok else None

    def _on_terminal(self, ev: RunEvent, name: str | None) -> None:
        self.end_ts = ev.ts
        # nodes left open by a stop or failure are no longer running
        for o in self.open_nodes.values():
            st = self.agents.get(o["agent"])
            if st and st.status == "running":
                st.status = "pending" if ev.kind != "run_finished" else "done"
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
        # the box keeps the last words said until the agent now running speaks: at a fast model's pace an agent's
        # text is over between two polls of the page, which would otherwise never show a word
        speaker = next((a for a in (current, self.last_speaker) if a and self.live_text.get(a)), current)
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
            live_text=self.live_text.get(speaker, "") if speaker else "",
            live_agent=speaker,
            settle=dict(self.settle) if self.settle else None,
            newest_report=self.report_order[-1] if self.report_order else None,
            earlier_engines=[dict(g) for g in self.earlier_engines],
            engine=dict(self.engine),
            cost_usd=self.cost_usd,
        )


_FOLD: dict[str, Callable[[ProgressFolder, RunEvent, str | None], None]] = {
    "token": ProgressFolder._on_token,
    "settle_started": ProgressFolder._on_settle_started,
    "settle_finished": ProgressFolder._on_settle_finished,
    "run_started": ProgressFolder._on_run_started,
    "node_started": ProgressFolder._on_node_started,
    "node_finished": ProgressFolder._on_node_finished,
    "tool_call": ProgressFolder._on_tool_call,
    "report": ProgressFolder._on_report,
    "llm_usage": ProgressFolder._on_llm_usage,
    **{kind: ProgressFolder._on_terminal for kind in TERMINAL_KINDS},
}
"""How the Run page folds each event kind (``ProgressFolder._one``); a kind not listed changes nothing
(``debate_turn`` and ``judge_decision`` are the Debates page's, ``studio.debates``)."""


def derive_progress(
    events: list[RunEvent],
    *,
    now: float | None = None,
    started_at: float | None = None,
    finished_at: float | None = None,
) -> Progress:
    """Fold a whole event list at once (pure; also used for saved event lists)."""
    return ProgressFolder().feed(list(events)).snapshot(now=now, started_at=started_at, finished_at=finished_at)


def running_agents(progress) -> list[str]:
    """The agents working now, in the plan's order (four analysts in parallel are four)."""
    return [a.agent for a in progress.agents if a.status == "running"]


def working_label(names: list[str], t: Translator = EN) -> str:
    """Who is working now, in ``t``'s language (the roles by their shared names)."""
    shown = [t.p("role", n) for n in names]
    if len(shown) == 1:
        return t("{agent} is working…", agent=shown[0])
    return t("{agents} and {last} are working…", agents=t(", ").join(shown[:-1]), last=shown[-1])


def eta_text(expected_s: float, elapsed_s: float, fraction: float, t: Translator = EN) -> str:
    """What is left, truthfully: past runs' median minus the time so far, or at this run's own pace when
    that says more; past the median it says so instead of "0s left"."""
    median = f"{expected_s:.0f}"
    left = expected_s - elapsed_s
    if 0 < fraction < 1 and elapsed_s > 0:
        left = max(left, elapsed_s * (1 - fraction) / fraction)
    if left < 1:
        return t("Taking longer than usual: past runs with these settings took {median}s (median); "
                 "{elapsed}s so far.", median=median, elapsed=f"{elapsed_s:.0f}")
    return t("About {left}s left: past runs with these settings took {median}s (median).",
             left=f"{left:.0f}", median=median)
