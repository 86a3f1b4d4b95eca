"""One registry of the app's background jobs: analysis runs, watchlist batches and backtests.

Nothing here imports streamlit (it is tested without a browser); the app keeps one ``JobRegistry``
per server process (``ui.get_registry``) and the pages poll it. A job is long work on a worker
thread, and every kind has the same interface:

* ``JobRegistry.start_run / start_batch / start_backtest`` check the input in the caller's thread
  (bad input raises before anything runs), then start the work; each returns the job's id.
* watch: ``job.status`` (``running``, then the kind's end states), ``job.progress()``, ``job.events``
  (what the work reported, in order), ``job.result`` (None until there is one), ``created_at`` and
  ``finished_at``; anyone may watch any job.
* ``job.stop(who)`` sets the flag the work polls between steps; ``job.resume(who, api_key=…, …)``
  runs the work again, continuing from what was kept (a run's checkpoint, a batch's finished
  tickers, a backtest's finished steps). ``wait(timeout)`` joins the worker.

The kinds: ``RunJob`` (one ``TradingAgentsGraph.propagate``; its events are the engine's
``RunEvent``s, folded by ``studio.runs.ProgressFolder``), ``BatchJob`` (``tradingagents.batch.run_batch``
over a watchlist; its events are ``TickerOutcome`` updates), ``BacktestJob``
(``tradingagents.backtest.engine.Backtest.run``; its events are the engine's progress dicts) and
``WhatIfJob`` (a what-if fork of a saved run, or ``attribute``'s forks: ``tradingagents.graph.whatif``).

Ownership, one rule for every kind (``may_control``): a job belongs to the ``owner`` that started it
(``ui.owner()``: today an opaque id of the browser). Anyone may watch; only the owner may stop or
resume it (or, later, delete it), and a job nobody owns (a backtest opened from its folder after a
restart) is claimed by whoever resumes it. The API key is held by the job in memory only (never in
its config, events, errors or repr) and only the owner's key is ever spent: a resume uses the key
given now, or, by the owner itself, the key the job holds; a resume by anyone else never reuses it.
``JobRegistry(is_desk_lead=…)`` is the hook for desk leads (they may control others' jobs, with
their own key only); ``JobRegistry(on_action=…)`` is told of every start, stop and resume asked
through the registry, granted or refused (the app records them in the audit trail).

Secrets are masked only where settings are shown or saved (``public_config``, in the storage of
the app-run offers and in what the pages draw), never before they are used: a run's ``config`` is
the real settings the work needs (a database URL's password, a base URL's credentials).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from studio.runs import (
    CHECKPOINT_KEYS,
    STATUS_OF,
    Progress,
    ProgressFolder,
    config_changes,
    expected_duration,
    graph_order,
    run_thread_id,
)
from tradingagents.config import resolve_config
from tradingagents.errors import BudgetExceeded, NotAllowed, RunPaused, RunStopped, TradingAgentsError
from tradingagents.graph.events import TERMINAL_KINDS, RunEvent, describe_error
from tradingagents.i18n import N_, Translator, translator
from tradingagents.ownership import allowed
from tradingagents.validation import ValidationError, validate_date, validate_ticker

KINDS = ("run", "batch", "backtest", "whatif")
STATUS_LABELS = {"queued": N_("queued"), "running": N_("running"), "finished": N_("finished"),
                 "failed": N_("failed"), "stopped": N_("stopped"), "crashed": N_("crashed")}
"""A job's state as people read it (the state itself stays the English word, in data attributes and logs)."""


def status_label(status: str, t: Translator = translator("en")) -> str:
    """``status`` (running, finished, failed, stopped, crashed) in ``t``'s language."""
    return t(STATUS_LABELS[status]) if status in STATUS_LABELS else str(status)

MASK = "***"  # what public_config puts in place of a URL's credentials
DeskLead = Callable[[str], bool]
OnAction = Callable[[str, "Job", "str | None", bool], None]
"""``on_action(action, job, who, done)``: told of every ``job_start``, ``job_stop`` and ``job_resume``
asked through the registry (``done`` False: refused, e.g. not ``who``'s job), for the audit trail."""


def guard_key(config: Mapping[str, Any], api_key: str | None) -> None:
    """``llm_clients.factory.check_key_destination``: a job whose requests would carry the server's own key
    (no key of the user's) goes only to the addresses the server's environment names."""
    from tradingagents.llm_clients.factory import check_key_destination

    check_key_destination(config, api_key=api_key)


def may_control(job_owner: str | None, who: str | None, is_desk_lead: DeskLead | None = None) -> bool:
    """The one ownership rule: may ``who`` stop, resume (or delete) a job of ``job_owner``?

    The owner may; nobody else may, except a desk lead (``is_desk_lead(who)``). A job without an
    owner (started by a script, or opened from disk after a restart) is anyone's.
    """
    return allowed("stop_job", who=who, owner=job_owner, lead=_lead(who, is_desk_lead))


def _lead(who: str | None, is_desk_lead: DeskLead | None) -> bool:
    return bool(who is not None and is_desk_lead is not None and is_desk_lead(who))


def _known_after_restart(owner: Any) -> str | None:
    """An owner kept on disk, as a restarted server knows it: a signed-in person's ``Identity.key``; a browser's
    id (no sign-in: one's own machine, the browser unknown after a restart) or nothing is nobody's."""
    from studio.identity import is_person

    return owner if isinstance(owner, str) and is_person(owner) else None


def refuse(action: str, what: str, owner: str | None, who: str | None, is_desk_lead: DeskLead | None) -> None:
    """Raise ``NotAllowed`` unless the ownership table (``tradingagents.ownership``) lets ``who`` do ``action``
    to ``what`` of ``owner``; the message names the owner by their name, never their subject."""
    if allowed(action, who=who, owner=owner, lead=_lead(who, is_desk_lead)):
        return
    from studio.identity import is_person, owner_name

    by = owner_name(owner) if is_person(owner) else "another browser"
    raise NotAllowed(f"{what} belongs to {by}: only they or a desk lead can continue it. Nothing was started.")


def _redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        return text.replace(secret, "***")
    return text


def _thaw(value: Any) -> Any:
    return list(value) if isinstance(value, tuple | list) else value


class Job:
    """What every kind shares: identity, owner, status and times, stop/resume, the worker thread."""

    kind = ""
    RESUMABLE: tuple[str, ...] = ()  # the statuses a resume starts from

    def __init__(self, job_id: str, *, owner: str | None = None, api_key: str | None = None,
                 status: str = "running") -> None:
        self.id = job_id
        self.owner = owner
        self.status = status
        self.error: str | None = None
        self.created_at = time.time()
        self.finished_at: float | None = None
        self.attempts = 0
        self._api_key = api_key or None
        self._is_lead: DeskLead | None = None  # set by the registry
        self._guard_keys = False  # set by the registry: the environment's key only to its own addresses
        self._events: list[Any] = []
        self._lock = threading.Lock()  # the event list and the kind's state
        self._control = threading.Lock()  # one stop or resume at a time
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started_at = time.time()

    def __repr__(self) -> str:  # never the key, never the settings
        return f"<{type(self).__name__} {self.id} {self.status}>"

    # --- watching -------------------------------------------------------------------------------
    @property
    def events(self) -> list[Any]:
        with self._lock:
            return list(self._events)

    @property
    def running(self) -> bool:
        return self.status == "running"

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def stopping(self) -> bool:
        """Stop was asked and the job has not ended yet."""
        return self._stop.is_set() and self.status == "running"

    @property
    def is_alive(self) -> bool:
        t = self._thread
        return bool(t and t.is_alive())

    def progress(self) -> Any:
        raise NotImplementedError

    @property
    def result(self) -> Any:
        return None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker thread ends; True when it has."""
        t = self._thread
        if t is None:
            return True
        t.join(timeout)
        return not t.is_alive()

    # --- control ----------------------------------------------------------------------------------
    def can_control(self, who: str | None) -> bool:
        """Whether ``who`` may stop or resume this job (``may_control``, the one rule)."""
        return may_control(self.owner, who, self._is_lead)

    def stop(self, who: str | None = None) -> bool:
        """Ask the running work to stop at its next step. False when it is not running or not ``who``'s."""
        with self._control:
            if self.status != "running" or not self.can_control(who):
                return False
            self._stop.set()
            return True

    def can_resume(self) -> bool:
        return self.status in self.RESUMABLE and not self.is_alive

    def resume(self, who: str | None = None, *, api_key: str | None = None, **changes: Any) -> bool:
        """Run the work again, continuing from what it kept. False when it cannot be or is not ``who``'s.

        The key is the one given now; without one, the owner's resume keeps the key this job holds,
        anyone else's runs without a key. ``changes`` are the kind's (a run's ``config``). Raises the
        kind's refusal of the new settings (then nothing is started).
        """
        with self._control:
            if not self.can_resume() or not self.can_control(who):
                return False
            key = api_key or (self._api_key if who == self.owner else None)
            if self._guard_keys:
                guard_key(changes.get("config") or self._settings(), key)
            self._prepare_resume(key, **changes)
            if self.owner is None and who is not None:
                self.owner = who  # a job nobody owned is claimed by whoever resumes it
            self._api_key = key
            self._stop.clear()
            self.error = None
            self.finished_at = None
            self.status = "running"
            self._launch()
            return True

    def _settings(self) -> Mapping[str, Any]:
        """The settings the work runs with (a backtest's are its backtest's)."""
        config = getattr(self, "config", None)
        return config if config is not None else self.backtest.config  # type: ignore[attr-defined]

    def _prepare_resume(self, key: str | None, **changes: Any) -> None:
        if changes:
            raise TypeError(f"A {self.kind} job takes no {', '.join(sorted(changes))} on resume.")

    # --- worker -------------------------------------------------------------------------------------
    def _launch(self) -> None:
        self.attempts += 1
        self._started_at = time.time()
        self.status = "running"
        thread = threading.Thread(target=self._work, name=f"ta-{self.kind}-{self.id[:24]}", daemon=True)
        self._thread = thread
        thread.start()

    def _work(self) -> None:
        raise NotImplementedError


# ------------------------------------------------------------------------------------------ runs
GraphFactory = Callable[..., Any]


def _default_graph_factory(*, selected_analysts, config, api_key):
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    return TradingAgentsGraph(selected_analysts=selected_analysts, config=config, api_key=api_key)


def steered_by_other(job_owner: str | None, who: str | None, is_desk_lead: DeskLead | None = None) -> bool:
    """Whether ``who`` may not steer a paused run offered after a restart. Its owner is known across a restart
    only when it is a signed-in e-mail (a browser's id is not: without sign-in, the app is one's own machine,
    and whoever opens it may continue); then only the owner or a desk lead may."""
    if not job_owner or "@" not in job_owner:
        return False
    return not may_control(job_owner, who, is_desk_lead)


STEERING_KEYS = ("pause_before", "pm_notes")
"""A run's own steering, kept over a resume's settings: a run paused before each verdict pauses before the next."""


def add_pm_note(config: Mapping[str, Any], analysts: Sequence[str], ticker: str, date: str, note: str, *,
                by: str | None = None, api_key: str | None = None, factory: GraphFactory | None = None) -> dict:
    """Write the portfolio manager's note into a paused run's checkpoint (the engine's ``add_pm_note``)."""
    if not str(note or "").strip():
        raise ValidationError("Write a note, or continue without one.")
    graph = (factory or _default_graph_factory)(selected_analysts=list(analysts), config=config, api_key=api_key)
    return graph.add_pm_note(ticker, date, note, by=by)


def paused_state(config: Mapping[str, Any], analysts: Sequence[str], ticker: str, date: str, *,
                 factory: GraphFactory | None = None) -> dict[str, Any] | None:
    """A paused run's state so far, read from its checkpoint (the engine's ``paused_state``); None if not paused."""
    graph = (factory or _default_graph_factory)(selected_analysts=list(analysts), config=config, api_key=None)
    return graph.paused_state(ticker, date)


class RunJob(Job):
    """One analysis run: ``propagate`` on a worker thread; read it through ``progress`` and the fields.

    ``config`` holds the resolved settings the engine runs with (never the API key). The outcome
    (status, error, resumability, saved paths and meta) is the attempt's terminal event; a worker
    that ends without one is ``crashed``, never given an invented event. A checkpointed run's public
    settings are kept in storage (``save_app_run``) until it finishes, for Resume after a restart.
    """

    kind = "run"
    RESUMABLE = ("stopped", "failed", "crashed")

    def __init__(self, job_id: str, ticker: str, date: str, analysts: list[str], config: Mapping[str, Any], *,
                 owner: str | None = None, api_key: str | None = None, factory: GraphFactory | None = None,
                 blind: bool = False, fresh: bool = False) -> None:
        super().__init__(job_id, owner=owner, api_key=api_key)
        self.blind = bool(blind)  # the models see an alias and a shifted calendar (graph.blind_run)
        self.fresh = bool(fresh)  # the next attempt discards a checkpoint of this run instead of resuming it
        self.ticker = ticker
        self.date = date
        self.analysts = list(analysts)
        self.config = config
        self.thread_id = run_thread_id(ticker, date, config)  # the engine's checkpoint thread
        self.error_type: str | None = None
        self.error_key: str | None = None  # the setting a configuration error names (config key)
        self.error_key_env: str | None = None  # the environment variable of a missing key
        self.resumable = False
        self.rating: str | None = None
        self.final_state: dict[str, Any] | None = None
        self.record: dict[str, Any] | None = None  # the terminal event's record: paths and meta
        self.config_changes: list[tuple[str, Any, Any]] = []  # of the latest resume
        self.expected_s: float | None = None  # median duration of past runs with the same configuration
        self._factory = factory or _default_graph_factory
        self.paused_before: str | None = None  # the judge the run waits for (pause_before), while it waits
        self._folder = ProgressFolder()
        self._prior_elapsed = 0.0  # earlier attempts' time: elapsed spans all
        self.questions: list[dict[str, Any]] = []  # asked while the run went: saved with the run once it is
        self._questions_saved = 0
        self._questions_lock = threading.Lock()
        # set by the attempt's first model words, or by its end: the page that follows a click on Start
        # waits briefly on it (``wait_for_words``) so its first frame can already show the live text
        self._words = threading.Event()

    @property
    def run_id(self) -> str:
        return self.id

    @property
    def results_path(self) -> str | None:
        return (self.record or {}).get("results_path")

    @property
    def meta(self) -> dict[str, Any]:
        """The run's meta as the engine saved (or, for a run that did not finish, knew) it."""
        return dict((self.record or {}).get("meta") or {})

    @property
    def result(self) -> dict[str, Any] | None:
        if self.status != "finished":
            return None
        return {"rating": self.rating, "final_state": self.final_state, "record": self.record}

    def progress(self, now: float | None = None) -> Progress:
        """What the page shows, folding only the events that arrived since the last call."""
        with self._lock:
            fresh = self._events[self._folder.count:]
            self._folder.feed(fresh)
            progress = self._folder.snapshot(now=now, started_at=self._started_at, finished_at=self.finished_at)
        progress.elapsed_s += self._prior_elapsed
        return progress

    def wait_for_words(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until the attempt's model has written its first words or the
        attempt has ended; True when either happened."""
        return self._words.wait(timeout)

    # --- worker side ----------------------------------------------------------------------------
    def _on_event(self, event: RunEvent) -> None:
        with self._lock:
            self._events.append(event)
        if event.kind == "token" and event.data.get("text_delta"):
            self._words.set()

    def _should_stop(self) -> bool:
        return self._stop.is_set()

    def _prepare_resume(self, key: str | None, config: Mapping[str, Any] | None = None, fresh: bool = False) -> None:
        """With ``config`` (the settings on screen now) the run continues with those settings; its
        analysts, rounds and execution stay its own (they name its checkpoint). ``fresh``: the run
        starts again from the beginning, its checkpoint discarded (Start afresh)."""
        self.fresh = bool(fresh)
        if config is not None:
            from tradingagents.llm_clients.factory import check_llm_config

            keep = {k: _thaw(self.config[k]) for k in (*CHECKPOINT_KEYS, *STEERING_KEYS)}
            new = resolve_config({**dict(config), **keep})
            check_llm_config(new, api_key=key)
            self.config_changes = config_changes(self.config, new)
            self.config = new
        else:
            self.config_changes = []
        self.error_type = self.error_key = self.error_key_env = None
        self.resumable = False
        self.paused_before = None
        self._words.clear()

    def add_note(self, note: str, who: str | None, *, by: str | None = None) -> dict[str, Any] | None:
        """The portfolio manager's note for the judge this paused run waits for, written into its checkpoint
        (``TradingAgentsGraph.add_pm_note``); None when the run is not paused or not ``who``'s. ``by``: who
        the note is from (the signed-in e-mail, else the config's user)."""
        with self._control:
            if self.paused_before is None or self.is_alive or not self.can_control(who):
                return None
            return add_pm_note(self.config, self.analysts, self.ticker, self.date, note, by=by,
                               api_key=self._api_key, factory=self._factory)

    def _offer_doc(self) -> dict[str, Any]:
        return {"ticker": self.ticker, "date": self.date, "analysts": list(self.analysts),
                "thread_id": self.thread_id, "config": dict(self.config), "saved_at": time.time(),
                # who may continue it after a restart, and the judge it waits for (a pause)
                "owner": self.owner, "paused_before": self.paused_before,
                # how it ended, when it did (stopped, failed): a restart then says so, not "cut off"
                "ended": self.status if self.status in ("stopped", "failed") else None}

    def _save_offer(self) -> None:
        """Keep the run's public settings for Resume after a restart (a failure only loses the offer).
        A blind run's checkpoint is in its blind desk: it resumes here (Resume), not after a restart."""
        if not self.config.get("checkpoint_enabled") or self.blind:
            return
        from tradingagents import storage

        try:
            storage.save_app_run(self.config, self._offer_doc())  # the storage keeps only public settings
        except (OSError, TradingAgentsError):
            pass

    def _forget_offer(self) -> None:
        if not self.config.get("checkpoint_enabled"):
            return
        from tradingagents import storage

        try:
            storage.delete_app_run(self.config, self.thread_id)
        except (OSError, TradingAgentsError):
            pass

    def _work(self) -> None:
        """One attempt: the outcome is this attempt's terminal event; without one, a crash."""
        key = self._api_key
        first = len(self.events)
        result: tuple[dict[str, Any], str | None] | None = None
        crash: BaseException | None = None
        try:
            self._save_offer()
            if self.expected_s is None:
                try:
                    self.expected_s = expected_duration(self.config)
                except Exception:  # noqa: BLE001 - an ETA is a nicety, never a reason to fail
                    self.expected_s = None
            if self.blind:
                from tradingagents.graph.blind_run import BlindAnalysis

                graph = BlindAnalysis(self.config, selected_analysts=list(self.analysts), api_key=key)
            else:
                graph = self._factory(selected_analysts=list(self.analysts), config=self.config, api_key=key)
            fresh, self.fresh = self.fresh, False  # one attempt starts afresh; a later Resume resumes
            result = graph.propagate(self.ticker, self.date, on_event=self._on_event, should_stop=self._should_stop,
                                     **({"fresh": True} if fresh else {}))
        except BaseException as exc:  # noqa: BLE001 - the terminal event says what happened, if any
            crash = exc
        finally:
            try:
                self._end(first, result, crash, key)
            finally:
                self._words.set()  # nobody waits for words of an attempt that has ended

    def _end(self, first: int, result: Any, crash: BaseException | None, key: str | None) -> None:
        self.finished_at = time.time()
        self._prior_elapsed += max(0.0, self.finished_at - self._started_at)
        terminal = next((e for e in reversed(self.events[first:]) if e.kind in TERMINAL_KINDS), None)
        if terminal is None and isinstance(crash, TradingAgentsError):
            # refused before the engine ran (e.g. the models could not be built): a plain failure
            self.error = _redact(describe_error(crash), key)
            self.error_type = type(crash).__name__
            self.error_key = getattr(crash, "key", None)
            self.error_key_env = getattr(crash, "key_env", None)
            self.resumable = False
            self.status = "failed"
        elif terminal is None:
            what = describe_error(crash) if crash is not None else "no error was raised."
            self.error = _redact(f"The engine ended without reporting how the run ended: {what}", key)
            self.error_type = type(crash).__name__ if crash is not None else None
            self.resumable = False
            self.status = "crashed"
        else:
            data = terminal.data
            self.record = dict(data.get("record") or {})
            self.resumable = bool(data.get("resumable"))
            if terminal.kind == "run_failed":
                self.error = _redact(str(data.get("error") or ""), key)
                self.error_type = data.get("error_type")
                self.error_key = getattr(crash, "key", None)
                self.error_key_env = getattr(crash, "key_env", None)
            elif isinstance(crash, RunPaused):
                self.paused_before = crash.before
                self._save_offer()  # a restart offers it as paused, for its owner
            elif terminal.kind == "run_finished":
                self.rating = data.get("rating")
                if result is not None:
                    self.final_state = result[0]
                self._forget_offer()
            self.status = STATUS_OF[terminal.kind]
            if self.status in ("stopped", "failed") and self.resumable and not self.paused_before:
                self._save_offer()  # a restart offers it as stopped (or failed), in those words
            self._save_questions()

    # --- asking the team while it works -------------------------------------------------------------
    def ask(self, agent: str, question: str, *, by: str, api_key: str | None = None,
            on_token: Any = None) -> dict[str, Any]:
        """Answer ``question`` as ``agent`` from what the run has written so far (``ask.run_so_far``), on the
        asker's key; the item is kept here and saved in the run's ``meta.questions`` once the run is saved."""
        from tradingagents.ask import ask, run_so_far

        with self._lock:
            events = list(self._events)
        item = ask(self.config, self.ticker, self.date, agent, question, by=by, api_key=api_key,
                   on_token=on_token, run=run_so_far(events, self.config), shared=True)
        with self._questions_lock:
            self.questions.append(item)
        self._save_questions()
        return item

    def _save_questions(self) -> None:
        """The questions asked while the run went, into its saved meta, once it finished (each once)."""
        if self.status != "finished":
            return
        from tradingagents import storage

        date = str(((self.record or {}).get("meta") or {}).get("date") or self.date)  # the session it is saved under
        with self._questions_lock:
            for item in self.questions[self._questions_saved:]:
                try:
                    storage.append_run_item(self.config, self.ticker, date, "questions", item)
                    storage.record_audit(self.config, "ask", by=item.get("by"), target=f"{self.ticker} {date}",
                                         agent=item.get("agent"), cost_usd=(item.get("usage") or {}).get("cost_usd"))
                except (OSError, TradingAgentsError, FileNotFoundError):
                    break  # kept in the job: the next question or a reload tries again
                self._questions_saved += 1


# --------------------------------------------------------------------------------------- batches
class BatchJob(Job):
    """Every ticker of a watchlist on one date (``run_batch``); the live ``TickerOutcome`` of each.

    Status ``running``, then ``finished`` (each ticker says how it ended) or ``failed`` (bad settings:
    nothing ran). A resume runs the batch again: finished tickers are reused, the others resume.
    """

    kind = "batch"
    RESUMABLE = ("finished", "failed")

    def __init__(self, job_id: str, tickers: Sequence[str], date: str, config: Mapping[str, Any], *,
                 max_cost_usd: float | None = None, owner: str | None = None, api_key: str | None = None,
                 blind: bool = False) -> None:
        super().__init__(job_id, owner=owner, api_key=api_key)
        self.blind = bool(blind)
        self.tickers = list(tickers)
        self.date = date
        self.config = config
        self.max_cost_usd = max_cost_usd
        self.outcomes: dict[str, Any] = {}

    def snapshot(self) -> list[Any]:
        from tradingagents.batch import TickerOutcome

        with self._lock:
            return [self.outcomes.get(t) or TickerOutcome(t, self.date) for t in self.tickers]

    def summary(self) -> dict[str, Any]:
        from tradingagents.batch import exit_code

        outcomes = self.snapshot()
        costs = [o.cost_usd for o in outcomes]
        finished = sum(o.status not in ("queued", "running") for o in outcomes)
        return {"done": finished, "total": len(outcomes),
                "ok": sum(o.ok for o in outcomes),
                "cost_usd": None if any(c is None for c in costs) else sum(costs),
                "exit_code": exit_code(outcomes) if not self.running else None}

    def progress(self) -> dict[str, Any]:
        return {**self.summary(), "status": self.status}

    @property
    def result(self) -> list[Any] | None:
        return None if self.running else self.snapshot()

    def can_resume(self) -> bool:
        return super().can_resume() and (self.status == "failed" or any(not o.ok for o in self.snapshot()))

    def _on_update(self, outcome: Any) -> None:
        with self._lock:
            self.outcomes[outcome.ticker] = outcome
            self._events.append(outcome)

    def _blind_batch(self) -> None:
        """Each ticker a blind analysis in turn (``graph.blind_run``, every watchlist ticker in its map)."""
        from tradingagents.batch import TickerOutcome
        from tradingagents.errors import exit_code_for
        from tradingagents.graph.blind_run import BlindAnalysis

        for ticker in self.tickers:
            if self._stop.is_set():
                self._on_update(TickerOutcome(ticker, self.date, status="stopped", resumable=True))
                continue
            started = time.time()
            self._on_update(TickerOutcome(ticker, self.date, status="running"))
            analysis = BlindAnalysis(self.config, api_key=self._api_key, watchlist=self.tickers)
            try:
                _state, rating = analysis.propagate(ticker, self.date, should_stop=self._stop.is_set)
                out = TickerOutcome(ticker, self.date, status="done", rating=rating, cost_usd=None,
                                    results_path=analysis.last_run.get("results_path"))
            except Exception as exc:  # noqa: BLE001 - one ticker's failure is its line; the others go on
                out = TickerOutcome(ticker, self.date, status="stopped" if isinstance(exc, RunStopped) else "failed",
                                    error=_redact(describe_error(exc), self._api_key), exit_code=exit_code_for(exc),
                                    resumable=isinstance(exc, RunStopped), cost_usd=None)
            out.elapsed_s = round(time.time() - started, 3)
            out.usage = dict(analysis.last_run.get("usage") or {})
            self._on_update(out)

    def _work(self) -> None:
        from tradingagents.batch import run_batch

        try:
            if self.blind:
                if self.max_cost_usd is not None or self.config.get("executor") == "ray":
                    raise ValidationError("A blind watchlist runs its tickers one after another on this machine: "
                                          "leave the budget at 0 and use the threads executor.")
                self._blind_batch()
                self.status = "finished"
                return
            run_batch(self.tickers, self.date, self.config, max_cost_usd=self.max_cost_usd, api_key=self._api_key,
                      on_update=self._on_update, should_stop=self._stop.is_set)
            self.status = "finished"
        except Exception as exc:  # noqa: BLE001 - bad settings: nothing ran; the page shows the message
            self.error = _redact(str(exc) or type(exc).__name__, self._api_key)
            self.status = "failed"
        finally:
            self.finished_at = time.time()


# ------------------------------------------------------------------------------------- backtests
class BacktestJob(Job):
    """A backtest (``Backtest.run``) on a worker thread; its id is the backtest's own (its folder).

    Status ``planned`` (opened from its folder, never run here), ``running``, then ``finished``,
    ``failed`` or ``stopped`` (every finished step kept). A folder whose manifest says ``running``
    but which no thread of this process runs was killed: it is ``stopped``.
    """

    kind = "backtest"
    RESUMABLE = ("planned", "failed", "stopped")
    KEPT_EVENTS = 200

    def __init__(self, backtest: Any, *, owner: str | None = None, api_key: str | None = None) -> None:
        status = backtest.manifest.doc.get("status") or "planned"
        super().__init__(backtest.id, owner=owner, api_key=api_key,
                         status="stopped" if status == "running" else status)
        self.backtest = backtest
        self.error = backtest.manifest.doc.get("error")

    def progress(self) -> dict[str, Any]:
        p = self.backtest.progress()
        p["status"] = self.status
        return p

    @property
    def result(self) -> dict[str, Any] | None:
        return {"folder": str(self.backtest.folder)} if self.status == "finished" else None

    def _on_progress(self, event: dict[str, Any]) -> None:
        with self._lock:
            self._events.append(event)
            del self._events[:-self.KEPT_EVENTS]

    def _launch(self) -> None:
        self.error = None
        self.backtest._api_key = self._api_key
        self.backtest.status = "running"
        super()._launch()

    def _work(self) -> None:
        try:
            self.backtest.run(on_progress=self._on_progress, should_stop=self._stop.is_set)
            self.error = None
            self.status = "finished"
        except RunStopped as exc:
            self.status = "stopped"
            if isinstance(exc, BudgetExceeded):  # the page says why it stopped
                self.error = _redact(str(exc), self._api_key)
        except Exception as exc:  # noqa: BLE001 - kept for the page to show
            self.error = _redact(str(exc) or type(exc).__name__, self._api_key)
            self.status = "failed"
        finally:
            self.finished_at = time.time()


# ------------------------------------------------------------------------------------- what-if forks
class WhatIfJob(Job):
    """A what-if fork of a saved run (``spec``), or ``attribute``'s forks (``attribute=True``), on a worker
    thread. ``result``: ``fork_run``'s ``{rating, base_rating, n, whatif, ...}`` or ``attribute``'s
    ``{base_rating, attribution, shift, forks}``; a stopped or failed fork runs again from its checkpoint."""

    kind = "whatif"
    RESUMABLE = ("stopped", "failed", "crashed")
    KEPT_EVENTS = 400

    def __init__(self, job_id: str, ticker: str, date: str, config: Mapping[str, Any], *, spec: Any = None,
                 attribute: bool = False, owner: str | None = None, api_key: str | None = None) -> None:
        super().__init__(job_id, owner=owner, api_key=api_key)
        self.ticker, self.date, self.config = ticker, date, config
        self.spec, self.attribute = spec, bool(attribute)
        self._result: dict[str, Any] | None = None
        self.done_forks: list[str] = []  # attribute: the analysts whose fork has finished

    def progress(self) -> dict[str, Any]:
        with self._lock:
            nodes = [e.node for e in self._events if getattr(e, "kind", "") == "node_finished"]
        return {"status": self.status, "finished_nodes": nodes, "done_forks": list(self.done_forks)}

    @property
    def result(self) -> dict[str, Any] | None:
        return self._result

    def _on_event(self, event: Any) -> None:
        with self._lock:
            self._events.append(event)
            del self._events[:-self.KEPT_EVENTS]

    def _on_fork(self, key: str, _out: Any) -> None:
        with self._lock:
            self.done_forks.append(key)

    def _work(self) -> None:
        from tradingagents.graph import whatif

        try:
            if self.attribute:
                self._result = whatif.attribute(self.config, self.ticker, self.date, api_key=self._api_key,
                                                on_fork=self._on_fork, should_stop=self._stop.is_set)
            else:
                out = whatif.fork_run(self.config, self.ticker, self.date, self.spec, api_key=self._api_key,
                                      on_event=self._on_event, should_stop=self._stop.is_set)
                self._result = {k: v for k, v in out.items() if k != "state"}
            self.error = None
            self.status = "finished"
        except RunStopped:
            self.status = "stopped"
        except Exception as exc:  # noqa: BLE001 - kept for the page to show
            self.error = _redact(str(exc) or type(exc).__name__, self._api_key)
            self.status = "failed"
        finally:
            self.finished_at = time.time()


# -------------------------------------------------------------------------------------- registry
class JobRegistry:
    """Thread-safe registry of this server process's jobs of every kind, newest first in ``list()``."""

    def __init__(self, graph_factory: GraphFactory | None = None, max_per_kind: int = 50,
                 is_desk_lead: DeskLead | None = None, on_action: OnAction | None = None,
                 guard_keys: bool = False) -> None:
        """``guard_keys``: a shared app's registry (``ui.get_registry``) sends the server environment's
        key only to the addresses that environment names (``guard_key``); a user's own key goes anywhere."""
        self._factory = graph_factory or _default_graph_factory
        self._guard_keys = guard_keys
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._max_per_kind = max_per_kind
        self._is_lead = is_desk_lead
        self._on_action = on_action

    def _tell(self, action: str, job: Job | None, who: str | None, done: bool) -> None:
        if self._on_action is not None and job is not None:
            self._on_action(action, job, who, done)

    # --- every kind -------------------------------------------------------------------------------
    def _add(self, job: Job) -> Job:
        job._is_lead = self._is_lead
        job._guard_keys = self._guard_keys
        with self._lock:
            self._jobs[job.id] = job
        self.prune()
        return job

    def get(self, job_id: str | None, kind: str | None = None) -> Any:
        """The job of ``job_id`` (of ``kind``, when given), or None."""
        if not job_id:
            return None
        with self._lock:
            job = self._jobs.get(str(job_id))
        return job if job is not None and (kind is None or job.kind == kind) else None

    def list(self, kind: str | None = None) -> list[Any]:
        with self._lock:
            jobs = [j for j in self._jobs.values() if kind is None or j.kind == kind]
        return sorted(jobs, key=lambda j: j.created_at, reverse=True)

    def latest(self, kind: str | None = None) -> Any:
        jobs = self.list(kind)
        return jobs[0] if jobs else None

    def stop(self, job_id: str, *, owner: str | None = None) -> bool:
        """Ask a running job to stop at its next step. False when it is not running or not ``owner``'s."""
        job = self.get(job_id)
        done = job is not None and job.stop(owner)
        self._tell("job_stop", job, owner, done)
        return done

    def resume(self, job_id: str, *, owner: str | None = None, api_key: str | None = None, **changes: Any) -> bool:
        """``job.resume``: False when there is no such job, it cannot resume, or it is not ``owner``'s."""
        job = self.get(job_id)
        done = job is not None and job.resume(owner, api_key=api_key, **changes)
        self._tell("job_resume", job, owner, done)
        return done

    def continue_paused(self, job_id: str, note: str | None, *, owner: str | None = None, by: str | None = None,
                        api_key: str | None = None, **changes: Any) -> bool:
        """A run paused before a judge: its note (if any) into the checkpoint, then ``resume``. False when it is
        not paused or not ``owner``'s (a desk lead's too); the note's own problems raise (nothing resumed)."""
        job = self.get(job_id, "run")
        if job is None or job.paused_before is None or not job.can_control(owner):
            return False
        if note and note.strip() and job.add_note(note, owner, by=by) is None:
            return False
        return self.resume(job_id, owner=owner, api_key=api_key, **changes)

    def wait(self, job_id: str, timeout: float | None = None) -> Any:
        job = self.get(job_id)
        if job is not None:
            job.wait(timeout)
        return job

    def prune(self) -> None:
        """Forget the oldest ended jobs of a kind beyond ``max_per_kind`` (a running job is kept)."""
        with self._lock:
            for kind in KINDS:
                jobs = [j for j in self._jobs.values() if j.kind == kind]
                extra = len(jobs) - self._max_per_kind
                if extra <= 0:
                    continue
                ended = sorted((j for j in jobs if j.done and not j.is_alive), key=lambda j: j.created_at)
                for j in ended[:extra]:
                    self._jobs.pop(j.id, None)

    # --- runs ---------------------------------------------------------------------------------------
    def start_run(self, ticker: str, date: str, analysts: Sequence[str], config: Mapping[str, Any] | None = None,
                  api_key: str | None = None, *, owner: str | None = None, blind: bool = False,
                  fresh: bool = False) -> str:
        """Validate, then start an analysis run on a worker thread; returns its id. ``blind``: a blind
        analysis (``graph.blind_run.BlindAnalysis``; shown and stored in real names and dates). ``fresh``:
        a checkpoint of the same run (ticker, date, graph) is discarded instead of resumed.

        Raises ``ValidationError`` or ``ConfigError`` (nothing is started) for a bad ticker, date,
        analyst list or round count, and the ``LLMConfigError`` the models would raise (missing
        key, URL or model name: it carries ``key``/``key_env``) before any thread starts.
        """
        from tradingagents.llm_clients.factory import check_llm_config

        ticker = validate_ticker(ticker)
        date = validate_date(date)
        analysts = graph_order(analysts)
        # the real settings (a password in a URL included): they are masked only where saved or shown
        resolved = resolve_config({**dict(config or {}), "selected_analysts": list(analysts)})
        check_llm_config(resolved, api_key=api_key)
        if self._guard_keys:
            guard_key(resolved, api_key)
        from tradingagents.dataflows.interface import check_instrument

        check_instrument(resolved, ticker)  # an unlisted demo ticker: refused with suggestions (a ValidationError)
        job = RunJob(uuid.uuid4().hex[:12], ticker, date, analysts, resolved, owner=owner, api_key=api_key,
                     factory=self._factory, blind=blind, fresh=fresh)
        self._add(job)
        job._launch()
        self._tell("job_start", job, owner, True)
        return job.id

    def checkpointed_runs(self, config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Checkpointed runs this registry does not hold (e.g. from before a server restart) whose
        settings were kept: {ticker, date, analysts, thread_id, step, updated, config, owner, paused_before,
        ended}, newest first; ``ended`` is "stopped" or "failed" when the run ended so, None when it was cut
        off (the server stopped under it)."""
        from tradingagents import storage

        cfg = resolve_config(config)
        held = {j.thread_id for j in self.list("run")}
        offers = storage.load_app_runs(cfg)
        out = []
        for cp in storage.list_checkpoints(cfg):
            doc = offers.get(cp["thread_id"])
            if cp["thread_id"] in held or doc is None:
                continue  # held here, or a checkpoint the app did not start (the CLI's): the CLI resumes it
            out.append({**cp, "ticker": doc.get("ticker") or cp["ticker"], "date": doc.get("date") or cp["date"],
                        "analysts": list(doc.get("analysts") or []), "config": doc["config"],
                        "owner": doc.get("owner"), "paused_before": doc.get("paused_before"),
                        "ended": doc.get("ended")})
        return out

    def adopt(self, saved: Mapping[str, Any], *, config: Mapping[str, Any] | None = None,
              api_key: str | None = None, owner: str | None = None, note: str | None = None,
              by: str | None = None) -> str:
        """Resume a run listed by ``checkpointed_runs``: a new run of ``owner`` with the run's saved
        settings (replaced by ``config``, the settings on screen now, as a resume does); returns its id.

        The saved settings are public: without ``config`` a masked value (a URL's credentials) is
        left out rather than sent as ``***``.
        """
        kept_owner = _known_after_restart(saved.get("owner"))
        refuse("adopt_run", f"The interrupted run of {saved.get('ticker')} on {saved.get('date')}",
               kept_owner, owner, self._is_lead)
        original = resolve_config({**dict(saved["config"]), "home": resolve_config(config)["home"]})
        keep = {k: _thaw(original[k]) for k in (*CHECKPOINT_KEYS, *STEERING_KEYS)}
        if saved.get("paused_before"):  # a paused run is steered by whoever started it (or a desk lead)
            if steered_by_other(saved.get("owner"), owner, self._is_lead):
                raise ValidationError("This run waits for the note of whoever started it; only they or a desk lead "
                                      "may continue it.")
            if note and note.strip():
                add_pm_note({**dict(original), **keep}, keep["selected_analysts"], saved["ticker"], saved["date"],
                            note, by=by, api_key=api_key)
        base = dict(config) if config is not None else {
            k: v for k, v in dict(saved["config"]).items() if not (isinstance(v, str) and MASK in v)}
        run_id = self.start_run(saved["ticker"], saved["date"], keep["selected_analysts"], {**base, **keep},
                                api_key=api_key, owner=kept_owner or owner)
        job = self.get(run_id)
        if job is not None:
            job.config_changes = config_changes(original, job.config)
        return run_id

    # --- batches ------------------------------------------------------------------------------------
    def start_batch(self, tickers: Sequence[str], date: str, config: Mapping[str, Any], *,
                    max_cost_usd: float | None = None, api_key: str | None = None, owner: str | None = None,
                    blind: bool = False) -> str:
        """Start a watchlist batch on a worker thread; returns its id (bad settings end it ``failed``);
        ``blind``: each ticker a blind analysis in turn."""
        if not tickers:
            raise ValidationError("A batch needs at least one ticker.")
        if self._guard_keys:
            guard_key(config, api_key)
        job = BatchJob(uuid.uuid4().hex[:12], tickers, date, config, max_cost_usd=max_cost_usd, owner=owner,
                       api_key=api_key, blind=blind)
        self._add(job)
        job._launch()
        self._tell("job_start", job, owner, True)
        return job.id

    # --- what-if forks -------------------------------------------------------------------------------
    def start_whatif(self, ticker: str, date: str, config: Mapping[str, Any], *, spec: Any = None,
                     attribute: bool = False, api_key: str | None = None, owner: str | None = None) -> str:
        """Start a what-if fork of the saved run of ``ticker`` on ``date`` (``spec``, a ``whatif.ForkSpec``)
        or its attribution (``attribute=True``) on a worker thread; returns the job's id. The input is
        checked first (ValidationError: no saved run, an agent that did not run, no text)."""
        from tradingagents import storage
        from tradingagents.graph import whatif

        ticker, date = validate_ticker(ticker), validate_date(date)
        cfg = resolve_config(config)
        if self._guard_keys:
            guard_key(cfg, api_key)
        try:
            saved = storage.load_run(cfg, ticker, date)
        except FileNotFoundError:
            raise ValidationError(f"No saved run of {ticker} on {date} to fork.") from None
        if not attribute:
            if spec is None:
                raise ValidationError("Say which agent to fork at.")
            from tradingagents.graph.conditional_logic import ConditionalLogic

            meta = saved.get("meta") or {}
            logic = ConditionalLogic(int(meta.get("max_debate_rounds") or 1), int(meta.get("max_risk_discuss_rounds") or 1))
            whatif.fork_inputs(saved, spec, logic=logic)  # raises on a fork that cannot be made
        job = WhatIfJob(uuid.uuid4().hex[:12], ticker, date, cfg, spec=spec, attribute=attribute, owner=owner,
                        api_key=api_key)
        self._add(job)
        job._launch()
        self._tell("job_start", job, owner, True)
        return job.id

    # --- backtests ----------------------------------------------------------------------------------
    def start_backtest(self, spec: Any, config: Mapping[str, Any] | None = None, *, api_key: str | None = None,
                       owner: str | None = None, max_cost_usd: float | None = None) -> str:
        """Plan and start (or continue) a backtest; returns its id. Raises ValidationError etc. first.

        The same backtest running already is that job (watch it); one that has ended becomes a new
        job of ``owner``, which continues the folder's finished steps with ``owner``'s key.
        """
        from tradingagents.backtest.engine import Backtest

        backtest = Backtest(spec, config, api_key=api_key, max_cost_usd=max_cost_usd)
        if self._guard_keys:
            guard_key(backtest.config, api_key)
        with self._lock:
            running = self._jobs.get(backtest.id)
            if running is not None and running.is_alive:
                return running.id
        kept_owner = running.owner if running is not None else _known_after_restart(backtest.manifest.doc.get("owner"))
        if backtest.done_steps() or running is not None:  # continuing someone's backtest, not a new one
            refuse("continue_backtest", f"The backtest {backtest.id}", kept_owner, owner, self._is_lead)
        if owner is not None and not kept_owner:
            backtest.manifest.set(owner=owner)  # kept in its folder: still theirs after a restart
        job = BacktestJob(backtest, owner=kept_owner or owner, api_key=api_key)
        self._add(job)
        job._launch()
        self._tell("job_start", job, owner, True)
        return job.id

    def backtest(self, backtest_id: str | None, config: Mapping[str, Any] | None = None) -> BacktestJob | None:
        """The backtest job of ``backtest_id``, opened from its folder (owned by nobody) if this process
        does not know it and ``config`` says where the folders are."""
        job = self.get(backtest_id, "backtest")
        if job is not None or config is None or not backtest_id:
            return job
        opened = self._open_backtest(str(backtest_id), config)
        if opened is None:
            return None
        opened._is_lead = self._is_lead
        opened._guard_keys = self._guard_keys
        with self._lock:
            return self._jobs.setdefault(opened.id, opened)

    @staticmethod
    def _open_backtest(backtest_id: str, config: Mapping[str, Any]) -> BacktestJob | None:
        from tradingagents.backtest.engine import Backtest, BacktestSpec, backtests_root, load_manifest

        folder = backtests_root(config) / backtest_id
        if "/" in backtest_id or backtest_id.startswith(".") or not (folder / "manifest.json").is_file():
            return None
        try:
            doc = load_manifest(folder)
            spec = BacktestSpec(**{**doc["args"]["spec"], "tickers": tuple(doc["args"]["spec"]["tickers"])})
            settings = dict(doc["args"].get("settings") or {})
            backtest = Backtest(spec, {**dict(config), **settings})
        except (OSError, ValueError, KeyError, TypeError, ValidationError):
            return None
        if backtest.id != backtest_id:
            return None
        return BacktestJob(backtest, owner=_known_after_restart(backtest.manifest.doc.get("owner")))
