"""Every key of the configuration with its default, and the constants the checks accept.

Paths default to ``None`` and are derived at resolve time (``PATH_DEFAULTS``): from the home folder
(``home`` key, else ``TRADINGAGENTS_HOME``, else ``~/.tradingagents``), or for the folders that
live inside another one (``PATH_PARENTS``) from that folder, so that a process that changes
``TRADINGAGENTS_HOME`` (every test does) never writes into the user's real home.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from tradingagents.config.settings import freeze
from tradingagents.i18n import N_
from tradingagents.team import ANALYST_KEYS

ANALYST_ORDER: tuple[str, ...] = ANALYST_KEYS
"""The analyst keys in graph order (from the roster, ``tradingagents.team``)."""

ANALYST_ALIASES = {"sentiment": "social", "fundamental": "fundamentals", "technical": "market"}

DATA_VENDORS: tuple[str, ...] = ("demo", "yfinance", "csv")
"""The market data sources (``data_vendor``); the one list (the data layer and the sidebar read it)."""

VENDOR_ALIASES = {"yahoo": "yfinance", "yf": "yfinance", "yahoo_finance": "yfinance", "synthetic": "demo"}
"""Other spellings accepted for ``data_vendor`` (documented in the README)."""

EXECUTION_MODES: tuple[str, ...] = ("parallel", "sequential")
"""``analyst_execution``: the analysts as concurrent branches, or one after another."""

EXECUTION_LABELS: Mapping[str, str] = MappingProxyType({"parallel": N_("parallel"), "sequential": N_("sequential")})
"""Each mode as a reader sees it (translate with ``t(label)``; English: the mode's own name)."""

ANALYST_DATA_MODES: tuple[str, ...] = ("tools", "prefetch")
"""``analyst_data``: each analyst's model is offered its tools and asks for its data (a ToolNode answers,
the specification's loop), or the analyst fetches its plan itself and makes one model call without
tools (fewer round trips, for models that cannot call tools)."""

ANALYST_DATA_LABELS: Mapping[str, str] = MappingProxyType({"tools": N_("tool calls"), "prefetch": N_("prefetched")})
"""Each shape as a reader sees it (translate with ``t(label)``)."""

EXECUTORS: tuple[str, ...] = ("threads", "ray")
"""Where batches and backtests run their tasks (``executor``; ``tradingagents.executor`` runs them)."""

EXECUTOR_ALIASES = {"thread": "threads", "threads": "threads", "ray": "ray"}

BENCHMARK_MAP: Mapping[str, str] = MappingProxyType({
    ".NS": "^NSEI",
    ".BO": "^BSESN",
    ".T": "^N225",
    ".HK": "^HSI",
    ".L": "^FTSE",
    ".TO": "^GSPTSE",
    ".AX": "^AXJO",
    ".SS": "000001.SS",
    ".SZ": "399001.SZ",
    "": "SPY",  # the empty suffix: tickers without an exchange suffix (the documents' way)
})
"""Exchange suffix → benchmark ticker, longest suffix first; ``""`` is the default of the rest."""

DEFAULT_BENCHMARK: str = BENCHMARK_MAP[""]
"""The benchmark of a ticker no suffix of the map matches (the map's ``""`` entry)."""

PATH_DEFAULTS: Mapping[str, str] = MappingProxyType({
    "memory_dir": "memory",
    "memory_log_path": "memory/trading_memory.md",
    "results_dir": "results",
    "checkpoint_dir": "checkpoints",
    "segments_dir": "checkpoints/segments",
    "app_runs_dir": "checkpoints/app_runs",
    "backtests_dir": "backtests",
    "watchlists_path": "watchlists.json",
    "audit_path": "audit.jsonl",  # the append-only audit trail (files storage; a desk database has ta_audit)
    "desk_dir": "desk",  # the book, the schedules, the scheduler's state and digests (files storage; ta_desk_docs)
    "data_cache_dir": "cache",
    "csv_data_dir": "data",
})
"""Keys whose value is a path, and where each lies below the home folder when left as None."""

PATH_PARENTS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "segments_dir": ("checkpoint_dir", "segments"),
    "app_runs_dir": ("checkpoint_dir", "app_runs"),
})
"""Paths derived from another path key rather than from the home: key → (parent key, name inside it)."""

WRITABLE_DIRS: tuple[str, ...] = ("home", "memory_dir", "results_dir", "checkpoint_dir", "segments_dir",
                                  "app_runs_dir", "backtests_dir", "data_cache_dir", "desk_dir")
"""The folders the engine writes into (each is checked by ``check_home``)."""

MODEL_KEYS = {"quick": "quick_think_llm", "deep": "deep_think_llm"}

ROUND_LIMITS = (1, 10)
"""Debate and risk rounds allowed, inclusive: the one place that bounds them (before any cost)."""

BOUNDS: Mapping[str, tuple[float | None, float | None]] = MappingProxyType({
    "max_debate_rounds": ROUND_LIMITS,
    "max_risk_discuss_rounds": ROUND_LIMITS,
    "max_concurrent_llm_calls": (1, 256),
    "holding_days": (1, 260),
    "max_cost_usd": (0, None),  # above 0
})
"""The numbers a person sets, (lowest, highest) accepted (None: open): their checks (``checks.CHECKS``) and
the settings table (``table.Setting.bounds``: the forms' limits) read them here."""

DEFAULTS: dict[str, Any] = {
    # where everything lives
    "home": None,
    **{k: None for k in PATH_DEFAULTS},
    # LLM
    "llm_provider": "offline",  # offline | openai | openai_compatible (or a preset name)
    # the generic model names; a provider preset may bring its own (Ollama: llama3.1)
    "deep_think_llm": "gpt-4o",
    "quick_think_llm": "gpt-4o-mini",
    "backend_url": None,  # None: the provider's default URL
    "llm_timeout": 60.0,  # seconds per request
    "llm_max_retries": 3,  # retries on 429, 5xx and timeouts
    "llm_temperature": None,
    "max_concurrent_llm_calls": 4,
    # networked models stream their text as it is written (the live panel); false: one JSON answer per
    # request, for a proxy that buffers server-sent events
    "llm_streaming": True,
    # the most tokens one model answer may have, sent to the provider as max_tokens: the output part of
    # the worst case a budget (max_cost_usd) reserves before every call. None: no limit is sent, except
    # under a budget, which sends (and reserves) pricing.BUDGET_OUTPUT_TOKENS
    "llm_max_output_tokens": None,
    # the offline engine's pause between streamed words (seconds, 0-1): the app's "presenter pace" sets
    # 0.04 so a demo's audience can read the text as it grows; timing only, never the text
    "offline_stream_delay_s": 0.0,
    # market data
    "data_vendor": "demo",  # demo | yfinance | csv
    "data_retry_backoff": 1.0,  # seconds before the first retry of a rate-limited data request
    # the demo market refuses a ticker it does not list (exit 2, "did you mean …?"); True analyses an
    # invented instrument, labelled as such everywhere and kept out of other tickers' lessons
    "allow_synthetic": False,
    # a CSV file with rows that do not parse is refused (exit 3, with their line numbers); True drops them
    "csv_skip_bad_rows": False,
    # graph
    "selected_analysts": list(ANALYST_ORDER),
    "max_debate_rounds": 1,
    "max_risk_discuss_rounds": 1,
    "max_recur_limit": 100,
    "analyst_execution": "parallel",  # parallel (analysts as concurrent branches) | sequential
    # tools: each analyst's model asks for its data (tool calls); prefetch: the analyst fetches its plan
    # itself and makes one model call without tools (for models that cannot call tools)
    "analyst_data": "tools",
    "checkpoint_enabled": True,
    # False: no past context from the log and no role memories are read or written (the backtest's
    # "no memory" ablation); decisions are still logged
    "memory_enabled": True,
    "output_language": "English",
    # the language of the app's and the CLI's own text (labels, messages, exports): "en" or "zh"
    # (TRADINGAGENTS_UI_LANGUAGE); None: the app follows the browser's language, the CLI English
    "ui_language": None,
    # memory
    "memory_log_max_entries": None,
    "bm25_k1": 1.5,
    "bm25_b": 0.75,
    # settlement
    "holding_days": 5,
    "benchmark_ticker": None,  # set: every ticker's benchmark, over benchmark_map
    "benchmark_map": dict(BENCHMARK_MAP),
    # the desk: None keeps everything in files under the home; a postgresql:// URL shares one database
    "storage_url": None,
    # cost: {model: [$ per 1M input tokens, $ per 1M output tokens]} over tradingagents.pricing's defaults
    "llm_pricing": None,
    # where batches and backtests run their (ticker, date) tasks: threads (default) | ray
    "executor": "threads",
    "ray_address": None,  # None: a local Ray on 127.0.0.1; "ray://host:10001" or "host:6379" a cluster
    # stop a run (and a batch, in total) at a checkpoint before its next step would cost more (USD)
    "max_cost_usd": None,
    # who causes what this process does (``by`` in saved meta, log entries and the audit): the app sets
    # the signed-in e-mail; None: the OS user (the CLI; TRADINGAGENTS_USER sets it)
    "user": None,
    # the desk leads' e-mails (TRADINGAGENTS_DESK_LEADS, comma-separated): they may stop or resume anyone's job
    "desk_leads": [],
    # the portfolio manager in the loop: notes to the judges, each {"before": "research_manager" |
    # "portfolio_manager", "note": text} (CLI --note / --note-for; the app's note box at a pause), read in
    # that judge's prompt as the portfolio manager's note and kept in the run's meta.pm_notes
    "pm_notes": [],
    # pause the run before these judges ("research_manager", "portfolio_manager"; true: both) so the PM can
    # read the debate so far and leave a note; the run waits at its checkpoint until it is continued
    "pause_before": [],
    # the mail server of scheduled digests and alerts: smtp://user@host:587 (STARTTLS when offered),
    # smtps://user@host:465 (TLS); the password from TRADINGAGENTS_SMTP_PASSWORD, never from a file
    "smtp_url": None,
}
"""Every key with its default (plain values; ``DEFAULT_CONFIG`` is the frozen view)."""

NONE_TYPES: dict[str, type] = {
    "home": str,
    **{k: str for k in PATH_DEFAULTS},
    "backend_url": str,
    "llm_temperature": float,
    "memory_log_max_entries": int,
    "benchmark_ticker": str,
    "storage_url": str,
    "llm_pricing": dict,
    "ray_address": str,
    "max_cost_usd": float,
    "llm_max_output_tokens": int,
    "user": str,
    "ui_language": str,
    "smtp_url": str,
}
"""Types of the keys whose default is None (so an environment variable can be coerced)."""

DEFAULT_CONFIG: Mapping[str, Any] = MappingProxyType({k: freeze(v) for k, v in DEFAULTS.items()})
"""Read-only view of the defaults, nested values too (paths unresolved). ``resolve_config`` gives usable
settings; ``DEFAULT_CONFIG.copy()`` a plain dict to edit and pass (the documents' way)."""
