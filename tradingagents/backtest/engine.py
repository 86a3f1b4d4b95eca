"""The backtest engine: the team over a date range, one decision every N trading days per ticker.

``Backtest(spec, config, api_key=None)`` plans the steps and ``run(on_progress, should_stop)``
runs them; ``run_backtest(...)`` does both. UI-neutral (the CLI and the page drive the same object).

* **Days.** A ticker's trading days are the dates of its daily OHLCV from the data provider within
  [start, end]. Its steps are every ``every``-th trading day from the first. Inside a step nothing
  reads a price after the step's date: a step is one ordinary ``TradingAgentsGraph.propagate``
  (whose tools are point-in-time). Only the scoring after all steps (equity, baselines, alpha) uses
  the whole range's prices, after the fact.
* **Learning, point in time.** Within a ticker the steps run in date order, all on one graph with
  the desk's memory log and role memories: each propagate first settles what is due for the ticker,
  so the log and the memories learn as the backtest goes, and reading them is point in time
  (``get_past_context(as_of=date)``, role memories recall only lessons known by the step's date).
  With several tickers the lessons of other tickers a step may see depend on how far their own
  steps got (always point in time).
* **Parallel.** The tickers (and the ablation, a separate task per ticker) run as tasks of
  ``tradingagents.executor``, at most ``max_concurrent_llm_calls`` at once; each task's graph gets
  an equal share of that bound (at least 1), so the model requests in flight stay within it.
  On threads each step is recorded (and reported) as it ends; on Ray (``executor: ray``) a task is
  a Ray task in a worker process (``ray_task``: plain data in, its finished steps out) whose steps
  are recorded as the task ends, and a worker killed mid-task is retried without redoing a step.
* **Ablation.** ``compare_memory`` runs the same dates again as "TradingAgents (no memory)" with
  ``memory_enabled: False`` and its own results, log, memories and checkpoints under
  ``<backtest>/no_memory/`` so its runs and lessons never mix with the desk's.
* **Resumable.** The backtest's folder is ``<backtests_dir>/<id>/`` (``backtests_dir`` defaults to
  ``<home>/backtests``) with ``id`` derived from the arguments; ``manifest.json`` there records
  each finished step (written atomically after each).
  Run again with the same arguments, finished steps are not redone: a step in the manifest is
  taken from it; a step whose run was saved (same graph signature, providers and models) but not
  yet recorded is taken from its saved result; a step killed mid-run resumes from its checkpoint.
  ``should_stop`` (a callable, e.g. ``threading.Event().is_set``) stops between nodes of the
  current step (``RunStopped``, exit code 5); everything finished is kept.
* **Outputs** (when every step is done): ``metrics.json`` ``{ticker: {strategy: {cr, arr, sharpe,
  mdd, hit_rate, avg_alpha, turnover, days, decisions}}}``, ``equity.csv``
  (``date,ticker,strategy,equity``), ``decisions.csv`` (``date,ticker,rating,position``, the team's
  decisions; the ablation's go to ``decisions_no_memory.csv``), ``report.md`` and ``report.html``.
  Positions and equity: ``positions``; baselines: ``baselines``; metrics: ``metrics``.
* **Is the edge real?** Costs by default (``DEFAULT_COST_BPS``), intervals and the team's p-value
  (``bootstrap``, via ``evaluation.score``), the watchlist as one book (``portfolio``:
  ``PORTFOLIO`` in metrics.json and equity.csv, members' weights in ``weights.csv``), the no-edge
  control (``control``: the team on random-walk ``worlds``, steps recorded as ``Control world k``)
  and blind runs (``blind``: the steps run through ``dataflows.blind``, in a desk of their own,
  recorded and stored in real names). Daily bars only (``check_daily_bars``).
"""

from __future__ import annotations

import copy
import csv
import datetime as _dt
import hashlib
import io
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tradingagents.backtest import baselines as bl
from tradingagents.backtest import bootstrap as bs
from tradingagents.backtest import evaluation as ev
from tradingagents.backtest import metrics as mt
from tradingagents.backtest import positions as ps
from tradingagents.config import benchmark_for, public_config, resolve_config
from tradingagents.errors import (
    BudgetExceeded,
    ConfigError,
    DataNotFound,
    DataUnavailable,
    RunStopped,
    ValidationError,
)
from tradingagents.fileio import atomic_write
from tradingagents.storage.files_runs import document_json, load_document
from tradingagents.validation import validate_date, validate_tickers

log = logging.getLogger(__name__)

TEAM = ev.TEAM  # "TradingAgents"
TEAM_NO_MEMORY = "TradingAgents (no memory)"
STRATEGIES = (TEAM, *bl.BASELINES)
"""The strategy names of metrics.json and equity.csv, exactly (the ablation adds TEAM_NO_MEMORY)."""
BENCHMARK_PREFIX = ev.BENCHMARK_PREFIX  # "Benchmark (SPY)": buy and hold of the ticker's benchmark

CONTROL_PREFIX = "Control world "  # the team on no-edge world k: "Control world 3"
PORTFOLIO = ev.PORTFOLIO  # the watchlist as one book, in metrics.json and equity.csv
META_KEYS = mt.META_KEYS  # metrics.json's keys that are not a ticker
DEFAULT_COST_BPS = 5.0
"""Cost per unit of turnover, in basis points, charged by default (``--cost-bps 0``: the paper's)."""

MANIFEST = "manifest.json"
OUTPUT_FILES = ("metrics.json", "equity.csv", "decisions.csv", "report.md", "report.html")
MAX_TICKERS = 20
MAX_STEPS = 5000
MAX_CONTROL = 200

# the settings that change what a step computes: part of the backtest's id
_RUN_KEYS = ("llm_provider", "quick_think_llm", "deep_think_llm", "backend_url", "data_vendor",
             "selected_analysts", "max_debate_rounds", "max_risk_discuss_rounds", "analyst_execution",
             "holding_days", "benchmark_ticker", "output_language")

ProgressCallback = Callable[[dict[str, Any]], None]


# ---------------------------------------------------------------------------------------- spec
@dataclass(frozen=True)
class BacktestSpec:
    """What to backtest. ``tickers`` as given (validated, upper-cased, duplicates dropped)."""

    tickers: tuple[str, ...]
    start: str
    end: str
    every: int = 1
    compare_memory: bool = False
    allow_short: bool = False
    cost_bps: float = DEFAULT_COST_BPS
    seed: int = bs.DEFAULT_SEED
    control: int = 0
    portfolio: str | None = None
    blind: bool = False

    @classmethod
    def make(cls, tickers: str | Sequence[str], start: object, end: object, every: object = 1,
             compare_memory: bool = False, allow_short: bool = False, cost_bps: object = None,
             seed: object = None, control: object = 0, portfolio: object = None,
             blind: bool = False) -> BacktestSpec:
        """A validated spec; every problem is a ValidationError that says what is accepted.
        ``cost_bps`` None is the default (``DEFAULT_COST_BPS``); 0 is the paper's setting."""
        clean = validate_tickers(tickers, limit=MAX_TICKERS, what="backtest")
        s = validate_date(start)
        e = validate_date(end, allow_future=True)
        e = min(e, _dt.date.today().isoformat())
        if s >= e:
            raise ValidationError(f"The start date {s} must be before the end date {e}.")
        n = _whole(every, "every", "a whole number of trading days ≥ 1", 1, 250)
        try:
            cost = DEFAULT_COST_BPS if cost_bps is None or cost_bps == "" else float(cost_bps)
        except (TypeError, ValueError):
            raise ValidationError(f"cost_bps must be a number of basis points, not {cost_bps!r}.") from None
        if not 0.0 <= cost <= 1000.0 or cost != cost:
            raise ValidationError(f"cost_bps must be from 0 to 1000 basis points, got {cost_bps!r}.")
        seed_n = bs.DEFAULT_SEED if seed is None or seed == "" else _whole(seed, "seed", "a whole number ≥ 0",
                                                                           0, 2**32 - 1)
        worlds = _whole(control or 0, "control", "a whole number of worlds from 0", 0, MAX_CONTROL)
        book = None if portfolio in (None, "", "none", False) else str(portfolio).strip().lower()
        if book is not None and book not in ps.WEIGHTINGS:
            raise ValidationError(f"portfolio must be one of {', '.join(ps.WEIGHTINGS)}, not {portfolio!r}.")
        if book is not None and len(clean) < 2:
            raise ValidationError("A portfolio needs at least two tickers; give a comma-separated watchlist.")
        return cls(tuple(clean), s, e, n, bool(compare_memory), bool(allow_short), cost, seed_n, worlds, book,
                   bool(blind))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["tickers"] = list(self.tickers)
        # left out at their defaults, so a backtest made before these options keeps its id
        for key, default in (("seed", bs.DEFAULT_SEED), ("control", 0), ("portfolio", None), ("blind", False)):
            if d[key] == default:
                del d[key]
        return d

    @property
    def variants(self) -> tuple[str, ...]:
        """The variants on the real market (the team, and the ablation with ``compare_memory``)."""
        return (TEAM, TEAM_NO_MEMORY) if self.compare_memory else (TEAM,)

    @property
    def control_variants(self) -> tuple[str, ...]:
        """``Control world 1`` … ``Control world N``: the team on the no-edge worlds."""
        return tuple(f"{CONTROL_PREFIX}{k}" for k in range(1, self.control + 1))

    @property
    def all_variants(self) -> tuple[str, ...]:
        """Every variant whose steps run (the real ones, then the control worlds)."""
        return self.variants + self.control_variants


def _whole(value: object, name: str, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool):
        raise ValidationError(f"{name} must be {what}.")
    try:
        n = int(str(value).strip())
    except ValueError:
        raise ValidationError(f"{name} must be {what}, not {value!r}.") from None
    if n < lo or n > hi:
        raise ValidationError(f"{name} must be from {lo} to {hi}, got {n}.")
    return n


def run_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    cfg = resolve_config(config)
    return {k: copy.deepcopy(cfg.get(k)) for k in _RUN_KEYS}


def backtest_id(spec: BacktestSpec, config: Mapping[str, Any] | None = None) -> str:
    """``NVDA-AAPL_2024-06-03_2024-11-29_<hash>``: the same arguments give the same id (resume)."""
    doc = {"spec": spec.to_dict(), "settings": run_settings(config or {})}
    digest = hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()[:10]
    names = "-".join(t.replace("^", "").replace("=", "") for t in spec.tickers)
    if len(names) > 40:
        names = names[:40].rstrip("-.") + f"+{len(spec.tickers)}"
    return f"{names}_{spec.start}_{spec.end}_{digest}".replace("/", "_").lstrip(".")


def backtests_root(config: Mapping[str, Any] | None = None) -> Path:
    """The folder of every backtest: the ``backtests_dir`` setting (default ``<home>/backtests``)."""
    return Path(resolve_config(config)["backtests_dir"])


def variant_config(config: Mapping[str, Any], variant: str, folder: Path,
                   world: Mapping[str, Any] | None = None, blind: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The config of a variant's runs: the desk's for the team, a separate one for the ablation, and
    for a control world (``world``: its ``worlds.world_spec``) the desk's settings on the world's
    prices with its own results, log, memories and checkpoints in files under the backtest.
    ``blind`` (a ``BlindMap.to_dict``): the same, seen through the map, in a desk of its own under
    ``<backtest>/blind/`` (a blind run must never read the desk's real log or lessons)."""
    if blind:
        cfg = variant_config(config, variant, folder / "blind", world)
        if variant == TEAM:
            base = folder / "blind" / "desk"
            cfg = resolve_config({**dict(cfg), "results_dir": str(base / "results"), "memory_dir": str(base / "memory"),
                                  "memory_log_path": str(base / "memory" / "trading_memory.md"),
                                  "checkpoint_dir": str(base / "checkpoints")})
        return resolve_config({**dict(cfg), "blind": dict(blind), "storage_url": None})
    cfg = resolve_config(config)
    if variant.startswith(CONTROL_PREFIX):
        if world is None:
            raise ValueError(f"{variant} needs its world")
        base = folder / "control" / f"world_{int(variant[len(CONTROL_PREFIX):]):03d}"
        return resolve_config({
            **dict(cfg),
            "synthetic_world": world,
            "storage_url": None,
            "results_dir": str(base / "results"),
            "memory_dir": str(base / "memory"),
            "memory_log_path": str(base / "memory" / "trading_memory.md"),
            "checkpoint_dir": str(base / "checkpoints"),
        })
    if variant != TEAM_NO_MEMORY:
        return cfg
    base = folder / "no_memory"
    return resolve_config({
        **dict(cfg),
        "memory_enabled": False,
        "results_dir": str(base / "results"),
        "memory_dir": str(base / "memory"),
        "memory_log_path": str(base / "memory" / "trading_memory.md"),
        "checkpoint_dir": str(base / "checkpoints"),
    })


def calls_per_step(config: Mapping[str, Any]) -> int:
    """Typical model calls of one step: ~3 per analyst (tool rounds + report), the debate turns,
    the research manager, the trader, the portfolio manager and one reflection on a settled decision."""
    cfg = resolve_config(config)
    analysts = len(cfg.get("selected_analysts") or ())
    return 3 * analysts + 2 * int(cfg["max_debate_rounds"]) + 3 * int(cfg["max_risk_discuss_rounds"]) + 3 + 1


# ---------------------------------------------------------------------------------------- plan
@dataclass
class TickerPlan:
    ticker: str
    days: list[str]  # trading days of the range
    steps: list[str]  # decision days (every N-th trading day)
    closes: list[float]  # close on each day
    frame: pd.DataFrame = field(repr=False)  # OHLCV with warm-up rows, for the baselines
    benchmark: str | None = None
    benchmark_closes: list[float] | None = None  # on the ticker's days (last close on or before)
    benchmark_note: dict[str, str] | None = None  # why there is no benchmark curve (report.note_parts shows it)


def plan_ticker(provider, ticker: str, start: str, end: str, every: int, config: Mapping[str, Any]) -> TickerPlan:
    warm_start = (pd.Timestamp(start) - pd.Timedelta(days=bl.WARMUP_DAYS)).date().isoformat()
    frame = provider.ohlcv(ticker, warm_start, end)
    if frame is None or len(frame) == 0:
        raise DataNotFound(f"No prices for {ticker} from {start} to {end} in this data source; "
                           "check the ticker and the dates.")
    from tradingagents.dataflows.provider import clip_frame

    frame = clip_frame(frame, warm_start, end)
    frame = frame[~frame.index.duplicated(keep="last")]
    frame = frame[frame["Close"].astype(float) > 0]
    in_range = frame.loc[frame.index >= pd.Timestamp(start)]
    days = [d.date().isoformat() for d in in_range.index]
    if len(days) < 2:
        raise ValidationError(f"{ticker} has {len(days)} trading day(s) from {start} to {end}; "
                              "a backtest needs at least two. Widen the range.")
    check_daily_bars(ticker, in_range.index)
    closes = [float(x) for x in in_range["Close"]]
    plan = TickerPlan(ticker, days, days[::every], closes, frame)
    bench = benchmark_for(ticker, config)
    plan.benchmark = bench
    if bench != ticker:
        try:
            bframe = clip_frame(provider.ohlcv(bench, warm_start, end), warm_start, end)
            bclose = bframe["Close"].astype(float)
            bclose = bclose[~bclose.index.duplicated(keep="last")]
            aligned = bclose.reindex(bclose.index.union(in_range.index)).ffill().reindex(in_range.index)
            if aligned.isna().any():
                raise DataNotFound(f"the benchmark {bench} has no price on or before {days[0]}")
            plan.benchmark_closes = [float(x) for x in aligned]
        except (DataUnavailable, KeyError, ValueError) as exc:
            # kept apart from the sentence, so a report says it in its reader's language with the source's words aside
            plan.benchmark_note = {"kind": "no_benchmark", "ticker": ticker, "benchmark": str(bench), "error": str(exc)}
    else:
        plan.benchmark_closes = list(closes)
    return plan


def bar_interval_days(index: pd.DatetimeIndex) -> float:
    """The median number of calendar days between consecutive bars (1 for daily bars with
    weekends, about 7 for weekly bars, about 30 for monthly)."""
    if len(index) < 2:
        return 1.0
    gaps = pd.Series(pd.DatetimeIndex(index).sort_values()).diff().dropna().dt.days
    return float(gaps.median())


def check_daily_bars(ticker: str, index: pd.DatetimeIndex) -> None:
    """Refuse bars that are not daily: every rule here (``every`` N trading days, the baselines'
    windows, √252 and 252 in the annualisation, the holding window) counts trading days."""
    gap = bar_interval_days(index)
    if gap > 3.5:
        kind = "weekly" if gap < 20 else "monthly" if gap < 60 else "sparse"
        raise ValidationError(
            f"The prices of {ticker} are {kind} bars (a median of {gap:g} days apart); a backtest needs "
            "daily bars (one row per trading day), because its steps, baselines and annualisation count "
            "trading days. Supply daily prices (e.g. a daily CSV in csv_data_dir) or use the demo or "
            "yfinance data.")


# ---------------------------------------------------------------------------------------- manifest
class Manifest:
    """``manifest.json`` of a backtest: its arguments, status and every finished step (thread-safe)."""

    def __init__(self, folder: Path, doc: dict[str, Any]):
        self.folder = folder
        self.path = folder / MANIFEST
        self.doc = doc
        self._lock = threading.Lock()

    @classmethod
    def open(cls, folder: Path, args: dict[str, Any], by: str | None = None) -> Manifest:
        """The folder's manifest, or a new one (``by``: who planned it, kept as the manifest's ``by``)."""
        path = folder / MANIFEST
        if path.is_file():
            try:
                doc = load_document(path)
            except (OSError, ValueError) as exc:
                raise ConfigError(f"The backtest manifest {path} cannot be read ({exc}); move the folder "
                                  "away to start this backtest afresh.") from None
            if not isinstance(doc, dict) or doc.get("args") != args:
                raise ConfigError(f"The backtest folder {folder} belongs to other arguments; move it away "
                                  "to start afresh.")
            doc.setdefault("steps", {})
            return cls(folder, doc)
        now = _now()
        return cls(folder, {"version": 1, "id": folder.name, "args": args, "created_at": now, "updated_at": now,
                            "status": "planned", "steps": {}, "error": None, "by": by})

    def step(self, variant: str, ticker: str, date: str) -> dict[str, Any] | None:
        with self._lock:
            return self.doc["steps"].get(variant, {}).get(ticker, {}).get(date)

    def steps(self, variant: str, ticker: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            return dict(self.doc["steps"].get(variant, {}).get(ticker, {}))

    def record(self, variant: str, ticker: str, date: str, info: dict[str, Any]) -> None:
        with self._lock:
            self.doc["steps"].setdefault(variant, {}).setdefault(ticker, {})[date] = info
            self._save()

    def set(self, **values: Any) -> None:
        with self._lock:
            self.doc.update(values)
            self._save()

    def _save(self) -> None:
        # rewritten after every step, so written in C: at 5,000 steps (20 tickers, a year of days) the
        # standard library's indenting encoder took 37 ms a step (0.8 ms now) while it held the lock
        self.doc["updated_at"] = _now()
        atomic_write(self.path, document_json(self.doc, sort_keys=True))


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def load_manifest(folder: str | Path) -> dict[str, Any]:
    path = Path(folder) / MANIFEST
    return json.loads(path.read_text(encoding="utf-8"))


def list_backtests(config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every backtest folder of the home (newest first): id, path, status, args, done/total steps."""
    root = backtests_root(config)
    out: list[dict[str, Any]] = []
    if not root.is_dir():
        return out
    for path in root.glob(f"*/{MANIFEST}"):
        try:
            doc = load_document(path)
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict):
            continue
        done = sum(len(d) for v in (doc.get("steps") or {}).values() for d in v.values())
        out.append({"id": doc.get("id") or path.parent.name, "path": str(path.parent), "status": doc.get("status"),
                    "args": doc.get("args") or {}, "done": done, "total": doc.get("total_steps"),
                    "updated_at": doc.get("updated_at") or "", "by": doc.get("by")})
    out.sort(key=lambda r: r["updated_at"], reverse=True)
    return out


# ---------------------------------------------------------------------------------------- the backtest
@dataclass
class BacktestResult:
    id: str
    folder: Path
    status: str
    metrics: dict[str, Any] = field(default_factory=dict)


class Backtest:
    """One backtest: plan on construction, ``run()`` the steps, then the outputs."""

    def __init__(self, spec: BacktestSpec, config: Mapping[str, Any] | None = None, *,
                 api_key: str | None = None, max_cost_usd: float | None = None) -> None:
        self.spec = spec
        self.config = resolve_config(config)
        self._api_key = api_key  # kept in memory only; never in a config, a file or an event
        # the whole backtest's budget for one ``run()`` (every step, and the reflections settling each
        # step's due decisions, reserve from one ledger); not part of the id: a larger one continues it
        self.max_cost_usd = (resolve_config({"max_cost_usd": max_cost_usd})["max_cost_usd"]
                             if max_cost_usd is not None else None)
        self._ledger: Any = None
        self.id = backtest_id(spec, self.config)
        self.folder = backtests_root(self.config) / self.id
        # as JSON reads it back (lists, not tuples), so a resume compares like with like
        self.args = json.loads(json.dumps({"spec": spec.to_dict(), "settings": run_settings(self.config)},
                                          sort_keys=True, default=str))
        from tradingagents.dataflows.interface import get_provider

        self.provider = get_provider(self.config)
        self.plans: dict[str, TickerPlan] = {
            t: plan_ticker(self.provider, t, spec.start, spec.end, spec.every, self.config) for t in spec.tickers
        }
        self.total_steps = sum(len(p.steps) for p in self.plans.values()) * len(spec.all_variants)
        if self.total_steps > MAX_STEPS:
            raise ValidationError(f"This backtest has {self.total_steps} steps (at most {MAX_STEPS}); "
                                  "use a larger --every or a shorter range.")
        self.position_map = ps.position_map(spec.allow_short)
        from tradingagents.storage import default_user

        self.manifest = Manifest.open(self.folder, self.args, by=default_user(self.config))
        self._lock = threading.Lock()
        self._durations: list[float] = []  # steps actually run in this process (not reused)
        self._started: float | None = None
        self._current: dict[str, tuple[str, str]] = {}  # task key -> (ticker, date) running now
        self._workers = 1
        self._blind: dict[str, Any] | None = None
        self.status = self.manifest.doc.get("status", "planned")
        self.error: str | None = None

    # ------------------------------------------------------------------ progress
    def done_steps(self) -> int:
        return sum(len(self.manifest.steps(v, t)) for v in self.spec.all_variants for t in self.spec.tickers)

    def progress(self) -> dict[str, Any]:
        """``{done, total, fraction, elapsed_s, eta_s, step_s, current, status}`` (a snapshot)."""
        done = self.done_steps()
        with self._lock:
            durations = list(self._durations)
            current = list(self._current.values())
        elapsed = time.time() - self._started if self._started else 0.0
        mean = sum(durations) / len(durations) if durations else None
        remaining = max(0, self.total_steps - done)
        eta = remaining * mean / max(1, min(self._workers, len(self.spec.tickers) * len(self.spec.all_variants))) \
            if mean is not None else None
        return {"done": done, "total": self.total_steps, "fraction": done / self.total_steps if self.total_steps else 1.0,
                "elapsed_s": elapsed, "eta_s": eta, "step_s": mean, "current": current, "status": self.status}

    def decisions(self, variant: str = TEAM, ticker: str | None = None) -> dict[str, dict[str, str]]:
        """``{ticker: {date: rating}}`` of the finished steps (all tickers, or one)."""
        tickers = [ticker] if ticker else list(self.spec.tickers)
        return {t: {d: s.get("rating") for d, s in sorted(self.manifest.steps(variant, t).items())} for t in tickers}

    def live_equity(self, ticker: str, variant: str = TEAM) -> tuple[list[str], list[float]]:
        """The variant's equity up to its last finished step (for a curve that grows while it runs)."""
        plan = self.plans[ticker]
        decided = self.decisions(variant, ticker)[ticker]
        if not decided:
            return [], []
        last = max(decided)
        n = plan.days.index(last) + 1 if last in plan.days else len(plan.days)
        pos = ps.positions_from_decisions(plan.days[:n], decided, self.position_map)
        return plan.days[:n], ps.equity_curve(plan.closes[:n], pos, self.spec.cost_bps)

    def per_graph_llm_calls(self) -> int:
        """Each graph's share of ``max_concurrent_llm_calls``: the tasks running at once never have
        more model requests in flight together than the bound (each graph bounds its own calls)."""
        bound = max(1, int(self.config.get("max_concurrent_llm_calls") or 1))
        return max(1, bound // max(1, self._workers))

    # ------------------------------------------------------------------ run
    def run(self, on_progress: ProgressCallback | None = None,
            should_stop: Callable[[], bool] | None = None) -> BacktestResult:
        """Run every unfinished step, then write the outputs. Raises RunStopped when stopped."""
        from tradingagents.executor import get_executor

        stop = should_stop or (lambda: False)
        from tradingagents.pricing import CostLedger

        self._ledger = CostLedger(self.max_cost_usd, "the backtest's") if self.max_cost_usd is not None else None
        self._started = time.time()
        self.folder.mkdir(parents=True, exist_ok=True)
        self.status = "running"
        self.manifest.set(status="running", error=None, total_steps=self.total_steps,
                          plan={t: {"days": len(p.days), "steps": p.steps, "benchmark": p.benchmark}
                                for t, p in self.plans.items()})
        tasks = [(ticker, variant) for variant in self.spec.all_variants for ticker in self.spec.tickers]
        executor = get_executor(self.config, len(tasks))
        self._workers = executor.max_workers
        emit = _safe_callback(on_progress)
        emit({"kind": "started", **self.progress(), "id": self.id, "folder": str(self.folder)})

        if executor.name == "ray":
            results = self._run_on_ray(executor, tasks, stop, emit)
        else:
            results = executor.run(lambda task: self._run_task(task[0], task[1], stop, emit), tasks)
        errors = [r.error for r in results if r.error is not None]
        if errors:
            stopped = [e for e in errors if isinstance(e, RunStopped)]
            other = [e for e in errors if not isinstance(e, RunStopped)]
            budget = [e for e in stopped if isinstance(e, BudgetExceeded)]
            first = other[0] if other else (budget or stopped)[0]
            self.status = "failed" if other else "stopped"
            self.error = str(first) or type(first).__name__
            self.manifest.set(status=self.status, error=self.error)
            emit({"kind": self.status, **self.progress(), "error": self.error})
            raise first
        metrics = self.write_outputs()
        self.status = "finished"
        self.manifest.set(status="finished", error=None)
        emit({"kind": "finished", **self.progress(), "folder": str(self.folder)})
        return BacktestResult(self.id, self.folder, "finished", metrics)

    @property
    def spent_usd(self) -> float | None:
        """What the model calls of the latest ``run()`` cost (None without a budget: each run reports its own)."""
        return self._ledger.snapshot()[0] if self._ledger is not None else None

    def _unfinished(self, ticker: str, variant: str) -> list[str]:
        """The ticker's steps not yet in the manifest, in date order."""
        return [d for d in self.plans[ticker].steps if self.manifest.step(variant, ticker, d) is None]

    def blind_map(self) -> dict[str, Any] | None:
        """The backtest's ``BlindMap`` as plain data (``None`` unless ``blind``): anchored on its start."""
        if not self.spec.blind:
            return None
        from tradingagents.dataflows.blind import BlindMap

        if self._blind is None:
            self._blind = BlindMap.make(self.spec.tickers, self.spec.start, self.provider).to_dict()
        return self._blind

    def world(self, variant: str) -> dict[str, Any] | None:
        """The world spec of a control variant (``None`` for the real market's variants): each
        ticker's and benchmark's drift and volatility matched to its real closes over the range."""
        if not variant.startswith(CONTROL_PREFIX):
            return None
        from tradingagents.dataflows import worlds as wd

        series: dict[str, dict[str, float]] = {}
        for ticker, plan in self.plans.items():
            series[ticker] = {**wd.matched_params(plan.closes), "level": plan.closes[0]}
            if plan.benchmark and plan.benchmark_closes is not None and plan.benchmark not in series:
                series[plan.benchmark] = {**wd.matched_params(plan.benchmark_closes),
                                          "level": plan.benchmark_closes[0]}
        return wd.world_spec(self.spec.seed, int(variant[len(CONTROL_PREFIX):]), self.spec.start, series)

    def finished_positions(self, variant: str, ticker: str) -> tuple[dict[str, Any], list[float]]:
        """A variant's decisions on ``ticker`` and the daily positions they give; every step must be done."""
        plan = self.plans[ticker]
        decided = self.decisions(variant, ticker)[ticker]
        missing = [d for d in plan.steps if d not in decided]
        if missing:
            raise RuntimeError(f"{variant} {ticker}: {len(missing)} step(s) not finished")
        return decided, ps.positions_from_decisions(plan.days, decided, self.position_map)

    def world_config(self, variant: str) -> dict[str, Any]:
        """A control world's config (its prices, its own desk), seen as it is, not through a blind map."""
        return variant_config(self.config, variant, self.folder, self.world(variant))

    def _task_config(self, variant: str) -> dict[str, Any]:
        """The variant's config with this task's share of the model-call bound."""
        cfg = variant_config(self.config, variant, self.folder, self.world(variant), self.blind_map())
        share = self.per_graph_llm_calls()
        if share != int(cfg.get("max_concurrent_llm_calls") or 1):
            cfg = resolve_config({**dict(cfg), "max_concurrent_llm_calls": share})
        return cfg

    def _run_task(self, ticker: str, variant: str, stop: Callable[[], bool], emit: ProgressCallback) -> int:
        """One (ticker, variant) task in this process: each step recorded and reported as it ends."""
        key = f"{variant}:{ticker}"
        todo = self._unfinished(ticker, variant)

        def started(date: str) -> None:
            with self._lock:
                self._current[key] = (ticker, date)
            emit({"kind": "step_started", "ticker": ticker, "variant": variant, "date": date, **self.progress()})

        def finished(date: str | None, info: dict[str, Any] | None) -> None:
            with self._lock:
                self._current.pop(key, None)
            if info is not None:
                self._record(variant, ticker, date, info, emit)

        return run_steps(self._task_config(variant), self._api_key, ticker, todo, stop, started, finished,
                         ledger=self._ledger)

    def _record(self, variant: str, ticker: str, date: str, info: dict[str, Any], emit: ProgressCallback) -> None:
        if not info["reused"]:
            with self._lock:
                self._durations.append(float(info["elapsed_s"]))
        self.manifest.record(variant, ticker, date, info)
        emit({"kind": "step_finished", "ticker": ticker, "variant": variant, "date": date,
              "rating": info["rating"], "reused": info["reused"], **self.progress()})

    def _run_on_ray(self, executor, tasks, stop: Callable[[], bool], emit: ProgressCallback):
        """Each (ticker, variant) task as one Ray task (``ray_task``): plain data in, its finished
        steps out, recorded here as each task ends (a task that fails hands back the steps it
        finished). A worker killed mid-task is retried by Ray; the retry takes the steps that
        finished from their saved runs and resumes the interrupted one from its checkpoint."""
        payloads = []
        for ticker, variant in tasks:
            todo = self._unfinished(ticker, variant)
            cfg = self._task_config(variant).to_dict()
            if self.max_cost_usd is not None:  # other processes: an equal share of the budget each
                own = cfg.get("max_cost_usd")
                per = self.max_cost_usd / len(tasks)
                cfg = {**cfg, "max_cost_usd": min(per, own) if own else per}
            payloads.append({"config": cfg, "api_key": self._api_key,
                             "ticker": ticker, "variant": variant, "steps": todo})

        def done(result) -> None:
            value = result.value or {}
            for date, info in value.get("records") or ():
                self._record(result.task["variant"], result.task["ticker"], date, info, emit)
            if value.get("error") is not None:
                result.error = value["error"]

        return executor.run(ray_task, payloads, on_done=done, should_stop=stop)

    # ------------------------------------------------------------------ outputs
    def compute(self) -> dict[str, Any]:
        """Equity, positions and metrics of every (ticker, strategy) from the finished steps; with
        ``portfolio`` the book too (``PORTFOLIO``); with ``control`` the no-edge distribution."""
        out: dict[str, Any] = {"equity": {}, "metrics": {}, "decisions": {}, "notes": [], "days": {},
                               "weights": [], "control": None, "blocks": {}}
        positions: dict[str, dict[str, list[float]]] = {}
        scored: dict[str, list[tuple[str | None, float | None]]] = {}
        cost = self.spec.cost_bps
        for ticker, plan in self.plans.items():
            curves: dict[str, list[float]] = {}
            metrics: dict[str, Any] = {}
            held: dict[str, list[float]] = {}
            for variant in self.spec.variants:
                decided, pos = self.finished_positions(variant, ticker)
                held[variant] = pos
                curves[variant] = ps.equity_curve(plan.closes, pos, cost)
                pos_by_day = dict(zip(plan.days, pos, strict=True))
                rows = []
                mine = []
                for d, rating in decided.items():
                    alpha = self._alpha(ticker, d)
                    rows.append({"date": d, "ticker": ticker, "rating": rating, "position": pos_by_day[d],
                                 "alpha": alpha})
                    mine.append((rating, alpha))
                out["decisions"].setdefault(variant, []).extend(rows)
                scored.setdefault(variant, []).extend(mine)
                metrics[variant] = mt.strategy_metrics(curves[variant], turnover=ps.turnover(pos), decisions=mine)
            for name, pos in bl.baseline_positions(plan.frame, plan.days, self.spec.allow_short).items():
                held[name] = pos
                curves[name] = ps.equity_curve(plan.closes, pos, cost)
                metrics[name] = mt.strategy_metrics(curves[name], turnover=ps.turnover(pos))
            for name in metrics:
                metrics[name]["cost_bps"] = cost
            if plan.benchmark_closes is not None:
                name = f"{BENCHMARK_PREFIX} ({plan.benchmark})"
                curves[name] = [c / plan.benchmark_closes[0] for c in plan.benchmark_closes]
                metrics[name] = {**mt.strategy_metrics(curves[name], turnover=1.0), "cost_bps": 0.0}
            if plan.benchmark_note:
                out["notes"].append(plan.benchmark_note)
            ev.score(self, ticker, curves, metrics, out)
            positions[ticker] = held
            out["days"][ticker] = plan.days
            out["equity"][ticker] = curves
            out["metrics"][ticker] = metrics
        if self.spec.portfolio:
            days, curves, metrics, weights = ev.book(self, {t: p.closes for t, p in self.plans.items()}, positions,
                                                        scored, with_benchmark=True)
            ev.score(self, PORTFOLIO, curves, metrics, out)
            out["days"][PORTFOLIO] = days
            out["equity"][PORTFOLIO] = curves
            out["metrics"][PORTFOLIO] = metrics
            out["weights"] = weights
        if self.spec.control:
            out["control"] = ev.control(self, out["metrics"])
        # metrics.json's two keys that are not a ticker: how the intervals were drawn, and the control
        out["metrics"]["bootstrap"] = {
            "method": "stationary bootstrap (Politis & Romano 1994), percentile intervals, paired across strategies",
            "level": bs.LEVEL, "reps": bs.DEFAULT_REPS, "seed": self.spec.seed, "mean_block_length": out["blocks"]}
        if out["control"] is not None:
            out["metrics"]["control"] = out["control"]
        return out

    def _alpha(self, ticker: str, date: str) -> float | None:
        from tradingagents.dataflows.returns import compute_returns

        try:
            outcome = compute_returns(self.provider, ticker, date, holding_days=int(self.config["holding_days"]),
                                      config=self.config)
        except (DataUnavailable, ValidationError) as exc:
            log.info("no alpha for %s %s: %s", ticker, date, exc)
            return None
        return float(outcome["alpha"]) if outcome else None

    def write_outputs(self) -> dict[str, Any]:
        """Write metrics.json, equity.csv, decisions.csv and the report; returns the metrics."""
        from tradingagents.backtest import report

        data = self.compute()
        saved = dict(data["metrics"])
        if TEAM_NO_MEMORY in data["decisions"]:  # the ablation: which decisions memory changed
            from tradingagents.backtest.memory_effect import memory_effect

            self.memory_effect = saved["memory_effect"] = memory_effect(data["decisions"][TEAM],
                                                                        data["decisions"][TEAM_NO_MEMORY])
        atomic_write(self.folder / "metrics.json", json.dumps(saved, indent=2, allow_nan=False))
        atomic_write(self.folder / "equity.csv", equity_csv(data["days"], data["equity"]))
        if data["weights"]:
            atomic_write(self.folder / "weights.csv", weights_csv(data["weights"]))
        for variant, name in ((TEAM, "decisions.csv"), (TEAM_NO_MEMORY, "decisions_no_memory.csv")):
            if variant in data["decisions"]:
                atomic_write(self.folder / name, decisions_csv(data["decisions"][variant]))
        if self.spec.blind:  # the blind desks' logs and lessons, stored mapped back to the real names
            from tradingagents.dataflows.blind import BlindMap
            from tradingagents.graph.blind_run import unblind_files

            blind = BlindMap.from_dict(self.blind_map())
            for variant in self.spec.all_variants:
                cfg = self._task_config(variant)
                slug = variant.lower().replace(" ", "_").replace("(", "").replace(")", "")
                unblind_files(Path(cfg["memory_dir"]), self.folder / "blind" / "real_memory" / slug, blind)
        info = self.describe()
        lang = self.config.get("ui_language")  # the report in the language of whoever ran it (this config's)
        atomic_write(self.folder / "report.md", report.markdown(info, self.plans, data, lang=lang))
        atomic_write(self.folder / "report.html", report.html_page(info, self.plans, data, lang=lang))
        return data["metrics"]

    def describe(self) -> dict[str, Any]:
        from tradingagents.llm_presets import provider_label

        try:
            llm = provider_label(self.config["llm_provider"], self.config.get("backend_url"))
        except Exception:  # noqa: BLE001 - a label only
            llm = str(self.config.get("llm_provider"))
        spec = {**self.spec.to_dict(), "seed": self.spec.seed, "control": self.spec.control,
                "portfolio": self.spec.portfolio, "blind": self.spec.blind}
        return {"id": self.id, "folder": str(self.folder), "spec": spec, "llm": llm,
                "data": getattr(self.provider, "label", self.config.get("data_vendor")),
                "settings": public_config(run_settings(self.config)),
                "positions": {k: ("keep" if v is None else v) for k, v in self.position_map.items()}}


def run_steps(cfg: Mapping[str, Any], api_key: str | None, ticker: str, steps: Sequence[str],
              stop: Callable[[], bool], started: Callable[[str], None],
              finished: Callable[[str | None, dict[str, Any] | None], None], *, ledger: Any = None) -> int:
    """Run a ticker's unfinished ``steps`` in date order on one graph; returns how many were run.

    ``ledger``: the backtest's budget (``pricing.CostLedger``) every model call of the graph reserves
    from, as a batch's does (``graph.budget_guard``).

    ``started(date)`` before each step, ``finished(date, info)`` after it (``finished(None, None)``
    when a step raises, before the error goes on). A step whose run was saved by the same graph and
    providers is taken from it (``reused``); a killed one resumes from its checkpoint."""
    import os

    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = None
    ran = 0
    blind = None
    if cfg.get("blind"):  # the run is made on the alias and the shifted date; stored mapped back
        from tradingagents.dataflows.blind import BlindMap
        from tradingagents.dataflows.worlds import plain

        blind = BlindMap.from_dict(plain(cfg["blind"]))
    for date in steps:
        if stop():
            raise RunStopped(f"Stopped before {ticker} {date}; run the same backtest again to resume.")
        if graph is None:
            graph = TradingAgentsGraph(config=cfg, api_key=api_key)
            graph.use_book = False  # a past date: today's book is not what the desk held then
            if ledger is not None:
                from tradingagents.pricing import output_limit

                graph.budget_guard = ledger
                for llm in (graph.quick_thinking_llm, graph.deep_thinking_llm):  # a real limit: a worst case
                    if getattr(llm, "max_tokens", 0) is None:
                        llm.max_tokens = output_limit(cfg, budgeted=True)
        started(date)
        t0 = time.time()
        seen_ticker, seen_date = (blind.alias(ticker), blind.blind_date(date)) if blind else (ticker, date)
        try:
            info = _reuse(graph, cfg, seen_ticker, seen_date)
            if info is None:
                _state, rating = graph.propagate(seen_ticker, seen_date, should_stop=stop)
                info = {"rating": rating, "results_path": graph.last_run.get("results_path"),
                        "elapsed_s": round(time.time() - t0, 4), "reused": False,
                        "resumed": bool(graph.last_run.get("resumed")),
                        "llm_calls": (graph.last_run.get("usage") or {}).get("llm_calls")}
                ran += 1
            if blind is not None and info.get("results_path"):
                from tradingagents.graph.blind_run import unblind_files

                real = Path(cfg["results_dir"]).parent / "real_results" / ticker / date
                from tradingagents.dataflows.interface import get_provider

                unblind_files(Path(info["results_path"]), real, blind, provider=get_provider(cfg), ticker=ticker)
                info["results_path"] = str(real)
                info["blind"] = {"alias": seen_ticker, "date": seen_date}
        except BaseException:
            finished(None, None)
            raise
        info["pid"] = os.getpid()  # the process that ran (or reused) the step: a Ray worker's, on Ray
        finished(date, info)
    return ran


def ray_task(payload: Mapping[str, Any]) -> dict[str, Any]:
    """What a Ray worker runs for one (ticker, variant) task (module level, plain data in and out):
    ``{"records": [(date, info), …], "error": exception or None}``."""
    records: list[tuple[str, dict[str, Any]]] = []

    def finished(date: str | None, info: dict[str, Any] | None) -> None:
        if info is not None:
            records.append((date, info))

    try:
        run_steps(resolve_config(payload["config"]), payload.get("api_key"), payload["ticker"],
                  payload["steps"], lambda: False, lambda _date: None, finished)
    except Exception as exc:  # noqa: BLE001 - handed back with the steps that finished
        return {"records": records, "error": exc}
    return {"records": records, "error": None}


def _reuse(graph, cfg: Mapping[str, Any], ticker: str, date: str) -> dict[str, Any] | None:
    """The step's info from a saved run of it by the same graph and providers (finished before a kill)."""
    from tradingagents.storage.files_runs import run_dir

    saved = graph.saved_run(ticker, date)
    if saved is None:
        return None
    return {"rating": saved["rating"], "results_path": str(run_dir(cfg, ticker, date)), "elapsed_s": 0.0,
            "reused": True, "resumed": False, "llm_calls": 0}


def _safe_callback(cb: ProgressCallback | None) -> ProgressCallback:
    def emit(event: dict[str, Any]) -> None:
        if cb is None:
            return
        try:
            cb(event)
        except Exception:  # a broken display must not break the backtest
            log.exception("backtest progress callback failed")

    return emit


def equity_csv(days: Mapping[str, Any], equity: Mapping[str, Mapping[str, list[float]]]) -> str:
    """``date,ticker,strategy,equity``; ``days`` maps each ticker (and ``PORTFOLIO``) to its days
    (or to its ``TickerPlan``)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["date", "ticker", "strategy", "equity"])
    for ticker, curves in equity.items():
        these = days[ticker]
        these = getattr(these, "days", these)
        for strategy, curve in curves.items():
            for day, value in zip(these, curve, strict=True):
                w.writerow([day, ticker, strategy, repr(float(value))])
    return buf.getvalue()


def weights_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """``date,ticker,strategy,position,weight,exposure`` of the book's members after each close."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["date", "ticker", "strategy", "position", "weight", "exposure"])
    for r in rows:
        w.writerow([r["date"], r["ticker"], r["strategy"], repr(float(r["position"])), repr(float(r["weight"])),
                    repr(float(r["exposure"]))])
    return buf.getvalue()


def decisions_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["date", "ticker", "rating", "position"])
    for r in rows:
        w.writerow([r["date"], r["ticker"], r["rating"], repr(float(r["position"]))])
    return buf.getvalue()


def run_backtest(spec: BacktestSpec, config: Mapping[str, Any] | None = None, *, api_key: str | None = None,
                 on_progress: ProgressCallback | None = None,
                 should_stop: Callable[[], bool] | None = None) -> BacktestResult:
    return Backtest(spec, config, api_key=api_key).run(on_progress=on_progress, should_stop=should_stop)
