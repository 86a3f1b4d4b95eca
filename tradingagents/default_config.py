"""The one place for configuration.

``DEFAULT_CONFIG`` holds every key with its default. Paths default to ``None`` and are derived at
call time from the home folder (``home`` key, else ``TRADINGAGENTS_HOME``, else
``~/.tradingagents``) so that a process that changes ``TRADINGAGENTS_HOME`` (every test does) never
writes into the user's real home.

``resolve_config(partial)`` is what every component calls: it returns a *new* dict made of the
defaults, then ``TRADINGAGENTS_<KEY>`` environment overrides (coerced to the default's type), then
the caller's keys, with paths filled in. Nothing here is ever mutated.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

ANALYST_ORDER = ("market", "social", "news", "fundamentals")

BENCHMARK_MAP = {
    ".NS": "^NSEI",
    ".BO": "^BSESN",
    ".T": "^N225",
    ".HK": "^HSI",
    ".L": "^FTSE",
    ".TO": "^GSPTSE",
    ".AX": "^AXJO",
    ".SS": "000001.SS",
    ".SZ": "399001.SZ",
}
DEFAULT_BENCHMARK = "SPY"

# Keys whose value is a path below the home folder when left as None.
PATH_DEFAULTS = {
    "memory_dir": "memory",
    "memory_log_path": "memory/trading_memory.md",
    "results_dir": "results",
    "checkpoint_dir": "checkpoints",
    "data_cache_dir": "cache",
    "csv_data_dir": "data",
}

_DEFAULTS: dict[str, Any] = {
    # where everything lives
    "home": None,
    **{k: None for k in PATH_DEFAULTS},
    # LLM
    "llm_provider": "offline",  # offline | openai | openai_compatible (or a preset name)
    "deep_think_llm": "gpt-4o",
    "quick_think_llm": "gpt-4o-mini",
    "backend_url": None,  # None: the provider's default URL
    "llm_timeout": 60.0,  # seconds per request
    "llm_max_retries": 3,  # retries on 429, 5xx and timeouts
    "llm_temperature": None,
    "max_concurrent_llm_calls": 4,
    # market data
    "data_vendor": "demo",  # demo | yfinance | csv
    "data_retry_backoff": 1.0,  # seconds before the first retry of a rate-limited data request
    # graph
    "selected_analysts": list(ANALYST_ORDER),
    "max_debate_rounds": 1,
    "max_risk_discuss_rounds": 1,
    "max_recur_limit": 100,
    "analyst_execution": "parallel",  # parallel (analysts as concurrent branches) | sequential
    "checkpoint_enabled": True,
    # False: no past context from the log and no role memories are read or written (the backtest's
    # "no memory" ablation); decisions are still logged
    "memory_enabled": True,
    "output_language": "English",
    # memory
    "memory_log_max_entries": None,
    "bm25_k1": 1.5,
    "bm25_b": 0.75,
    # settlement
    "holding_days": 5,
    "benchmark_ticker": None,
    "benchmark_map": dict(BENCHMARK_MAP),
}

# Types of keys whose default is None (so the environment can be coerced).
_NONE_TYPES: dict[str, type] = {
    "home": str,
    **{k: str for k in PATH_DEFAULTS},
    "backend_url": str,
    "llm_temperature": float,
    "memory_log_max_entries": int,
    "benchmark_ticker": str,
}

DEFAULT_CONFIG: Mapping[str, Any] = MappingProxyType(_DEFAULTS)
"""Read-only view of the defaults (paths unresolved). Use ``resolve_config`` to get a usable dict."""

ENV_PREFIX = "TRADINGAGENTS_"


from tradingagents.errors import ConfigError  # noqa: E402  (re-exported: one error hierarchy)

ROUND_LIMITS = (1, 10)
"""Debate and risk rounds allowed, inclusive: the one place that bounds them (before any cost)."""


def validate_rounds(value: object, what: str = "max_debate_rounds") -> int:
    """A round count as an int within ``ROUND_LIMITS``, or a ConfigError that says what is allowed."""
    lo, hi = ROUND_LIMITS
    if isinstance(value, bool) or not isinstance(value, (int, str, float)):
        raise ConfigError(f"{what} must be a whole number from {lo} to {hi}, not {type(value).__name__}.")
    try:
        number = int(str(value).strip()) if not isinstance(value, float) else int(value)
    except ValueError:
        raise ConfigError(f"{what} must be a whole number from {lo} to {hi}, not {str(value)[:40]!r}.") from None
    if isinstance(value, float) and value != number:
        raise ConfigError(f"{what} must be a whole number from {lo} to {hi}, not {value!r}.")
    if not lo <= number <= hi:
        raise ConfigError(f"{what} must be from {lo} to {hi} (got {number}); each round costs model calls.")
    return number


def _coerce(key: str, raw: str, env_name: str) -> Any:
    default = _DEFAULTS[key]
    target = _NONE_TYPES.get(key) if default is None else type(default)
    text = raw.strip()
    if default is None and text.lower() in ("", "none", "null"):
        return None
    try:
        if target is bool:
            low = text.lower()
            if low in ("1", "true", "yes", "on"):
                return True
            if low in ("0", "false", "no", "off"):
                return False
            raise ValueError("not a boolean")
        if target is int:
            return int(text)
        if target is float:
            return float(text)
        if target is list:
            if text.startswith("["):
                value = json.loads(text)
                if not isinstance(value, list):
                    raise ValueError("not a list")
                return value
            return [part.strip() for part in text.split(",") if part.strip()]
        if target is dict:
            value = json.loads(text)
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            return value
        return text
    except (ValueError, json.JSONDecodeError) as exc:
        hint = {
            bool: "true/false, 1/0, yes/no or on/off",
            int: "a whole number",
            float: "a number",
            list: "a comma-separated list or a JSON array",
            dict: "a JSON object",
        }.get(target, "a string")
        raise ConfigError(
            f"Environment variable {env_name}={raw!r} is not valid: expected {hint}."
        ) from exc


def env_overrides(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Values from ``TRADINGAGENTS_<KEY>`` variables, coerced to each default's type."""
    environ = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for key in _DEFAULTS:
        name = ENV_PREFIX + key.upper()
        if name in environ:
            out[key] = _coerce(key, environ[name], name)
    return out


def default_home(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    home = environ.get("TRADINGAGENTS_HOME")
    return Path(home).expanduser() if home else Path.home() / ".tradingagents"


def resolve_config(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A new, complete config: defaults < environment < ``config``; paths resolved.

    ``config`` may be partial and is never mutated; the result shares no mutable value with it
    or with the defaults.
    """
    merged: dict[str, Any] = copy.deepcopy(_DEFAULTS)
    merged.update(env_overrides())
    if config:
        unknown_ok = dict(copy.deepcopy(dict(config)))
        merged.update(unknown_ok)
    home = Path(merged["home"]).expanduser() if merged.get("home") else default_home()
    merged["home"] = str(home)
    for key, rel in PATH_DEFAULTS.items():
        if not merged.get(key):
            merged[key] = str(home / rel)
        else:
            merged[key] = str(Path(merged[key]).expanduser())
    return merged


def benchmark_for(ticker: str, config: Mapping[str, Any] | None = None) -> str:
    """The benchmark of a ticker: ``benchmark_ticker`` if set, else by exchange suffix, else SPY."""
    cfg = resolve_config(config)
    if cfg.get("benchmark_ticker"):
        return str(cfg["benchmark_ticker"]).upper()
    upper = ticker.upper()
    # longest suffix first so ".SS" never shadows a longer one
    for suffix in sorted(cfg["benchmark_map"], key=len, reverse=True):
        if upper.endswith(suffix.upper()):
            return cfg["benchmark_map"][suffix]
    return DEFAULT_BENCHMARK


def public_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy that is safe to write to disk or show: no key, token or secret of any kind."""
    return {
        k: v
        for k, v in config.items()
        if not any(word in k.lower() for word in ("key", "token", "secret", "password"))
    }
