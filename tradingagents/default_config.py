"""The one place for configuration: defaults, environment overrides, validation, one frozen object.

``DEFAULT_CONFIG`` holds every key with its default. Paths default to ``None`` and are derived at
resolve time from the home folder (``home`` key, else ``TRADINGAGENTS_HOME``, else
``~/.tradingagents``) so that a process that changes ``TRADINGAGENTS_HOME`` (every test does) never
writes into the user's real home.

``resolve_config(partial)`` is what every component calls. It merges the defaults, then the
``TRADINGAGENTS_<KEY>`` environment variables (coerced to each default's type), then the caller's
keys; fills in the paths and the provider's default models; validates every key once (a
``ConfigError`` names the key, and the variable when the value came from the environment); and
returns a ``Settings``: a read-only mapping with attribute access. Lists come back as read-only
lists and dicts as read-only dicts (both still JSON-able), so nothing downstream can change a
setting under another component's feet. ``settings.replace(**changes)`` gives a new, validated
one. Resolving a ``Settings`` again returns it unchanged (cheap: every component may call it).

Keys this module does not know (a component's own options) pass through unvalidated, frozen too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from tradingagents.errors import ConfigError, LLMConfigError
from tradingagents.team import ANALYST_KEYS

ANALYST_ORDER: tuple[str, ...] = ANALYST_KEYS
"""The analyst keys in graph order (from the roster, ``tradingagents.team``)."""

ANALYST_ALIASES = {"sentiment": "social", "fundamental": "fundamentals", "technical": "market"}

DATA_VENDORS: tuple[str, ...] = ("demo", "yfinance", "csv")
"""The market data sources (``data_vendor``); the one list (the data layer and the sidebar read it)."""

VENDOR_ALIASES = {"yahoo": "yfinance", "yf": "yfinance", "yahoo_finance": "yfinance", "synthetic": "demo"}
"""Other spellings accepted for ``data_vendor`` (documented in the README)."""

EXECUTION_MODES: tuple[str, ...] = ("parallel", "sequential")

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

# Keys whose value is a path below the home folder when left as None; a (key, sub-path) pair is
# below another path key's resolved value instead (so it follows that key when only it is set).
PATH_DEFAULTS: dict[str, str | tuple[str, str]] = {
    "memory_dir": "memory",
    "memory_log_path": "memory/trading_memory.md",
    "results_dir": "results",
    "checkpoint_dir": "checkpoints",
    "segments_dir": ("checkpoint_dir", "segments"),  # counters of a run's failed/stopped segments
    "data_cache_dir": "cache",
    "csv_data_dir": "data",
    "app_runs_dir": ("checkpoint_dir", "app_runs"),  # offers to resume app runs after a restart
    "watchlists_path": "watchlists.json",
}

MODEL_KEYS = {"quick": "quick_think_llm", "deep": "deep_think_llm"}

_DEFAULTS: dict[str, Any] = {
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
    # the desk: None keeps everything in files under the home; a postgresql:// URL shares one database
    "storage_url": None,
    # cost: {model: [$ per 1M input tokens, $ per 1M output tokens]} over tradingagents.pricing's defaults
    "llm_pricing": None,
    # where batches and backtests run their (ticker, date) tasks: threads (default) | ray
    "executor": "threads",
    "ray_address": None,  # None: a local Ray on 127.0.0.1; "ray://host:10001" or "host:6379" a cluster
    # stop a run (and a batch, in total) at a checkpoint before its next step would cost more (USD)
    "max_cost_usd": None,
}

# Types of keys whose default is None (so the environment can be coerced).
_NONE_TYPES: dict[str, type] = {
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
}

ENV_PREFIX = "TRADINGAGENTS_"

ROUND_LIMITS = (1, 10)
"""Debate and risk rounds allowed, inclusive: the one place that bounds them (before any cost)."""

_READ_ONLY = "Settings are read-only: use settings.replace(key=value) or resolve_config({...}) for new ones."


# ---------------------------------------------------------------------------- frozen containers
class FrozenList(list):
    """A list that refuses changes (equal to, and JSON-encoded like, a plain list)."""

    def _refuse(self, *args: Any, **kwargs: Any):
        raise TypeError(_READ_ONLY)

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse

    def __reduce__(self):
        return (FrozenList, (list(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo: dict) -> FrozenList:
        return self


class FrozenDict(dict):
    """A dict that refuses changes (equal to, and JSON-encoded like, a plain dict)."""

    def _refuse(self, *args: Any, **kwargs: Any):
        raise TypeError(_READ_ONLY)

    __setitem__ = __delitem__ = __ior__ = update = setdefault = pop = popitem = clear = _refuse

    def __reduce__(self):
        return (FrozenDict, (dict(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo: dict) -> FrozenDict:
        return self


def _freeze(value: Any) -> Any:
    if isinstance(value, (FrozenList, FrozenDict, Settings)):
        return value
    if isinstance(value, Mapping):
        return FrozenDict({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple, set, frozenset)) and not isinstance(value, str):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        return FrozenList(_freeze(v) for v in items)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_thaw(v) for v in value]
    return value


class Settings(Mapping[str, Any]):
    """Resolved, validated configuration: a read-only mapping with attribute access.

    ``settings["data_vendor"]`` and ``settings.data_vendor`` read the same value; assignment of any
    kind raises ``TypeError``. ``dict(settings)`` is JSON-able; ``settings.to_dict()`` is a deep
    plain copy. ``replace(**changes)`` returns a new, validated ``Settings`` (paths and models that
    were derived from ``home`` and ``llm_provider`` are derived again from the new values).
    """

    __slots__ = ("_data", "_derived")

    def __init__(self, data: Mapping[str, Any], derived: frozenset[str] = frozenset()) -> None:
        object.__setattr__(self, "_data", {k: _freeze(v) for k, v in data.items()})
        object.__setattr__(self, "_derived", frozenset(derived))

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __getattr__(self, name: str) -> Any:
        try:
            return self._data[name]
        except KeyError:
            raise AttributeError(f"no setting named {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(_READ_ONLY)

    def __delattr__(self, name: str) -> None:
        raise TypeError(_READ_ONLY)

    def __setitem__(self, key: str, value: Any) -> None:
        raise TypeError(_READ_ONLY)

    def __delitem__(self, key: str) -> None:
        raise TypeError(_READ_ONLY)

    def __repr__(self) -> str:
        return f"Settings({public_config(self)!r})"

    def __reduce__(self):
        return (Settings, (self.to_dict(), self._derived))

    def __copy__(self) -> Settings:
        return self

    def __deepcopy__(self, memo: dict) -> Settings:
        return self

    def to_dict(self) -> dict[str, Any]:
        """A deep, plain, mutable copy (lists and dicts), e.g. to edit and resolve again."""
        return {k: _thaw(v) for k, v in self._data.items()}

    def replace(self, **changes: Any) -> Settings:
        """New settings with ``changes`` applied and validated (the environment is not read again)."""
        base = {k: v for k, v in self._data.items() if k not in self._derived or k in changes}
        base.update(changes)
        return _resolve(base, environ={})


DEFAULT_CONFIG: Mapping[str, Any] = MappingProxyType({k: _freeze(v) for k, v in _DEFAULTS.items()})
"""Read-only view of the defaults, nested values too (paths unresolved). ``resolve_config`` gives usable
settings."""


# ---------------------------------------------------------------------------- environment
def _coerce(key: str, raw: str, env_name: str) -> Any:
    default = _DEFAULTS[key]
    target = _NONE_TYPES.get(key) if default is None else type(default)
    text = raw.strip()
    if default is None and text.lower() in ("", "none", "null"):
        return None
    try:
        return _parse_text(text, target)
    except (ValueError, json.JSONDecodeError) as exc:
        error = ConfigError(
            f"The environment variable {env_name}={_shown(raw)} is not valid for {key}: "
            f"expected {_HINTS.get(target, 'text')}."
        )
        error.key, error.env_var = key, env_name  # type: ignore[attr-defined]
        raise error from exc


_HINTS = {
    bool: "true/false, 1/0, yes/no or on/off",
    int: "a whole number",
    float: "a number",
    list: "a comma-separated list or a JSON array",
    dict: "a JSON object",
}


def _parse_text(text: str, target: type | None) -> Any:
    if target is bool:
        low = text.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ValueError("not a boolean")
    if target is int:
        return int(text.strip())
    if target is float:
        return float(text.strip())
    if target is list:
        if text.strip().startswith("["):
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


def env_var(key: str) -> str:
    """The environment variable that overrides ``key``: ``TRADINGAGENTS_<KEY>``."""
    return ENV_PREFIX + key.upper()


def env_overrides(environ: Mapping[str, str] | None = None, skip: frozenset[str] | set[str] = frozenset()
                  ) -> dict[str, Any]:
    """Values from ``TRADINGAGENTS_<KEY>`` variables, coerced to each default's type (``skip``: keys the
    caller sets, whose variables are neither read nor checked)."""
    environ = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for key in _DEFAULTS:
        name = env_var(key)
        if name in environ and key not in skip:
            out[key] = _coerce(key, environ[name], name)
    return out


def default_home(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    home = environ.get("TRADINGAGENTS_HOME")
    return Path(home).expanduser() if home else Path.home() / ".tradingagents"


# ---------------------------------------------------------------------------- validation
def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fail(what: str, value: object, expected: str, cls: type[ConfigError] = ConfigError) -> ConfigError:
    return cls(f"{what}={_shown(value)} is not valid: {expected}.")


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


def _number(kind: type, *, lo: float | None = None, hi: float | None = None, optional: bool = False,
            lo_open: bool = False) -> Callable[[Any, str], Any]:
    noun = "a whole number" if kind is int else "a number"
    bounds = []
    if lo is not None:
        bounds.append(f"{'above' if lo_open else 'at least'} {lo:g}")
    if hi is not None:
        bounds.append(f"at most {hi:g}")
    expected = noun + (" " + " and ".join(bounds) if bounds else "") + (" (or empty)" if optional else "")

    def check(value: Any, what: str) -> Any:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null")):
            if optional:
                return None
            raise _fail(what, value, f"expected {expected}")
        if isinstance(value, bool):
            raise _fail(what, value, f"expected {expected}")
        try:
            number = _parse_text(value, kind) if isinstance(value, str) else value
            if kind is int:
                if isinstance(number, float) and number != int(number):
                    raise ValueError
                number = int(number)
            else:
                number = float(number)
        except (TypeError, ValueError):
            raise _fail(what, value, f"expected {expected}") from None
        if number != number or (lo is not None and (number <= lo if lo_open else number < lo)) or (
            hi is not None and number > hi
        ):
            raise _fail(what, value, f"expected {expected}")
        return number

    return check


def _boolean(value: Any, what: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return _parse_text(value, bool)
        except ValueError:
            pass
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _fail(what, value, "expected true or false")


def _text(*, optional: bool = False) -> Callable[[Any, str], Any]:
    def check(value: Any, what: str) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            if optional:
                return None
            raise ConfigError(f"{what} must not be empty.")
        if not isinstance(value, str):
            raise _fail(what, value, f"expected text, not {type(value).__name__}")
        return value.strip()

    return check


def _path(value: Any, what: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise _fail(what, value, f"expected a folder or file path, not {type(value).__name__}")
    text = os.fspath(value)
    if "\x00" in str(text):
        raise _fail(what, value, "a path cannot contain a NUL character")
    return str(Path(text).expanduser())


def _provider(value: Any, what: str) -> str:
    from tradingagents.llm_presets import PROVIDER_PRESETS, normalize_provider

    if value is not None and not isinstance(value, str):
        raise _fail(what, value, "expected a provider name", LLMConfigError)
    name = normalize_provider(value)
    if name not in PROVIDER_PRESETS:
        raise LLMConfigError(f"{what}={_shown(value)} is not an LLM provider: use one of {', '.join(PROVIDER_PRESETS)}.")
    return name


def _backend_url(value: Any, what: str) -> str | None:
    text = _text(optional=True)(value, what)
    if text is None:
        return None
    if not text.lower().startswith(("http://", "https://")):
        raise LLMConfigError(
            f"{what}={_shown(value)} is not a server URL: use http://host:port/v1 or https://…, "
            "for example http://localhost:11434/v1."
        )
    return text.rstrip("/")


def _vendor(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _fail(what, value, f"expected one of {', '.join(DATA_VENDORS)}")
    name = value.strip().lower().replace("-", "_").replace(" ", "_")
    name = VENDOR_ALIASES.get(name, name)
    if name not in DATA_VENDORS:
        raise ConfigError(
            f"{what}={_shown(value)} is not a market data source. Accepted: {', '.join(DATA_VENDORS)} "
            "(yahoo also means yfinance)."
        )
    return name


def normalize_analysts(selected: Any, what: str = "selected_analysts") -> list[str]:
    """Analyst keys in the given order, without duplicates (aliases such as "sentiment" accepted).

    ``None`` means all of them. A comma-separated string is split. A ConfigError (exit 2) names
    what was wrong and the accepted names.
    """
    accepted = ", ".join(ANALYST_ORDER)
    if selected is None:
        return list(ANALYST_ORDER)
    if isinstance(selected, str):
        selected = selected.replace(";", ",").split(",")
    if not isinstance(selected, (list, tuple)):
        raise _fail(what, selected, f"expected a list of analysts from {accepted}")
    out: list[str] = []
    for raw in selected:
        if not isinstance(raw, str):
            raise ConfigError(f"{what}: analyst names must be text, not {type(raw).__name__}; choose from {accepted}.")
        name = raw.strip().lower()
        if name.endswith(" analyst"):
            name = name.removesuffix(" analyst")
        name = ANALYST_ALIASES.get(name, name)
        if not name:
            continue
        if name not in ANALYST_ORDER:
            raise ConfigError(f"{what}: unknown analyst {_shown(raw)}; choose one or more of {accepted}.")
        if name not in out:
            out.append(name)
    if not out:
        raise ConfigError(f"Select at least one analyst ({what}) from {accepted}.")
    return out


def _execution(value: Any, what: str) -> str:
    text = str(value if value is not None else "").strip().lower()
    if text not in EXECUTION_MODES:
        raise _fail(what, value, f"use {' or '.join(EXECUTION_MODES)}")
    return text


def _benchmark(value: Any, what: str) -> str | None:
    from tradingagents.validation import validate_ticker

    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return validate_ticker(value)
    except ValueError as exc:
        raise ConfigError(f"{what}: {exc}") from None


def _benchmark_map(value: Any, what: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise _fail(what, value, 'expected a mapping of exchange suffix to benchmark, e.g. {".T": "^N225"}')
    out = {}
    for suffix, bench in value.items():
        if not isinstance(suffix, str) or not isinstance(bench, str) or not suffix.strip() or not bench.strip():
            raise ConfigError(f"{what}: {suffix!r} → {bench!r} is not a ticker suffix and a benchmark ticker.")
        out[suffix.strip()] = bench.strip().upper()
    return out


def _rounds(value: Any, what: str) -> int:
    return validate_rounds(value, what)


def _storage_url(value: Any, what: str) -> str | None:
    from tradingagents.urls import validate_storage_url

    return validate_storage_url(value, what)


def _executor(value: Any, what: str) -> str:
    from tradingagents.executor import normalize_executor

    return normalize_executor(value, what)


def _ray_address(value: Any, what: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if len(text) > 300 or any(c.isspace() for c in text):
        raise _fail(what, value, 'use "auto", "host:6379" or "ray://host:10001"')
    return text


def _pricing(value: Any, what: str) -> Any:
    from tradingagents.pricing import validate_pricing

    return validate_pricing(value, what)


_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "home": _path,
    **{k: _path for k in PATH_DEFAULTS},
    "llm_provider": _provider,
    "deep_think_llm": _text(optional=True),
    "quick_think_llm": _text(optional=True),
    "backend_url": _backend_url,
    "llm_timeout": _number(float, lo=0, lo_open=True, hi=3600),
    "llm_max_retries": _number(int, lo=0, hi=20),
    "llm_temperature": _number(float, lo=0, hi=2, optional=True),
    "max_concurrent_llm_calls": _number(int, lo=1, hi=256),
    "llm_streaming": _boolean,
    "data_vendor": _vendor,
    "data_retry_backoff": _number(float, lo=0, hi=600),
    "selected_analysts": normalize_analysts,
    "max_debate_rounds": _rounds,
    "max_risk_discuss_rounds": _rounds,
    "max_recur_limit": _number(int, lo=1, hi=10_000),
    "analyst_execution": _execution,
    "checkpoint_enabled": _boolean,
    "memory_enabled": _boolean,
    "output_language": _text(),
    "memory_log_max_entries": _number(int, lo=1, optional=True),
    "bm25_k1": _number(float, lo=0, hi=10),
    "bm25_b": _number(float, lo=0, hi=1),
    "holding_days": _number(int, lo=1, hi=260),
    "benchmark_ticker": _benchmark,
    "benchmark_map": _benchmark_map,
    "storage_url": _storage_url,
    "llm_pricing": _pricing,
    "executor": _executor,
    "ray_address": _ray_address,
    "max_cost_usd": _number(float, lo=0, lo_open=True, optional=True),
}
assert set(_CHECKS) == set(_DEFAULTS), "every key has one check"

_LLM_KEYS = frozenset({"llm_provider", "deep_think_llm", "quick_think_llm", "backend_url", "llm_timeout",
                       "llm_max_retries", "llm_temperature", "max_concurrent_llm_calls", "llm_streaming"})


# ---------------------------------------------------------------------------- resolution
def _resolve(given: Mapping[str, Any], environ: Mapping[str, str] | None) -> Settings:
    from tradingagents.llm_presets import PROVIDER_PRESETS

    env = env_overrides(environ, skip=set(given))
    merged: dict[str, Any] = {**_DEFAULTS, **env, **given}
    source = {k: f"The environment variable {env_var(k)}" for k in env}
    out: dict[str, Any] = {}
    for key, value in merged.items():
        check = _CHECKS.get(key)
        try:
            out[key] = check(value, source.get(key, key)) if check else value
        except ConfigError as exc:
            error = exc
            if key in _LLM_KEYS and not isinstance(exc, LLMConfigError):  # the models cannot work: nothing runs
                error = LLMConfigError(str(exc))
            # where the value came from, so a CLI can name its flag and a page its field
            error.key = key  # type: ignore[attr-defined]
            error.env_var = env_var(key) if key in source else None  # type: ignore[attr-defined]
            if error is exc:
                raise
            raise error from None
    derived: set[str] = set()
    home = Path(out["home"]) if out.get("home") else default_home()
    out["home"] = str(home)
    for key, rel in PATH_DEFAULTS.items():
        if not out.get(key):
            base, sub = rel if isinstance(rel, tuple) else ("home", rel)
            out[key] = str(Path(out[base]) / sub)
            derived.add(key)
    preset = PROVIDER_PRESETS[out["llm_provider"]]
    for kind, key in MODEL_KEYS.items():
        if out.get(key) and (key in env or key in given):
            continue  # named by the caller or the environment
        derived.add(key)
        if preset["ask_server"]:
            out[key] = None  # the factory reads the model the server serves
        elif preset[f"{kind}_model"]:
            out[key] = preset[f"{kind}_model"]
    return Settings(out, frozenset(derived))


def resolve_config(config: Mapping[str, Any] | None = None) -> Settings:
    """Validated, frozen settings: defaults < environment < ``config``; paths and models derived.

    ``config`` may be partial and is never mutated. A ``Settings`` is returned as it is (it was
    resolved and validated already). Raises ``ConfigError`` (``LLMConfigError`` for the LLM keys)
    naming the key, and the environment variable when the bad value came from one.
    """
    if isinstance(config, Settings):
        return config
    if config is not None and not isinstance(config, Mapping):
        raise ConfigError(f"A config must be a mapping of settings, not {type(config).__name__}.")
    return _resolve(dict(config or {}), None)


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


_SECRET_WORDS = ("key", "token", "secret", "password")
# query parameters whose value is a credential (an Azure ``sig``, a ``?api_key=``, an ``access_token``)
_SECRET_QUERY_WORDS = ("key", "token", "secret", "pass", "pwd", "sig", "auth", "credential", "session")
REDACTED = "***"


def redact_url(text: str) -> str:
    """``text`` with the credentials of every URL in it masked: ``user:pass@`` and secret query values.

    ``http://u:p@host:8000/v1?api_key=s&x=1`` → ``http://***@host:8000/v1?api_key=***&x=1``; text
    without a URL comes back unchanged.
    """
    if "://" not in text:
        return text
    return _URL_RE.sub(lambda m: _redact_one(m.group(0)), text)


def _redact_one(url: str) -> str:
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(k, REDACTED if any(w in k.lower() for w in _SECRET_QUERY_WORDS) else v) for k, v in pairs],
            safe="*",
        )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>]+")


def _public_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, Mapping):
        return {k: _public_value(v) for k, v in value.items()
                if not (isinstance(k, str) and any(w in k.lower() for w in _SECRET_WORDS))}
    if isinstance(value, (list, tuple)):
        return [_public_value(v) for v in value]
    return value


def public_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """A plain, mutable copy that is safe to write to disk or show: no key, token or secret of any kind.

    Keys naming a secret are left out (at any depth), and every URL has its credentials masked
    (``backend_url`` like ``http://user:pass@host/v1`` → ``http://***@host/v1``; ``storage_url``
    keeps its user name, never its password or query).
    """
    out = {
        k: _public_value(_thaw(v))
        for k, v in config.items()
        if not any(word in k.lower() for word in _SECRET_WORDS)
    }
    if config.get("storage_url"):  # the database's password and query never reach a file (user kept)
        from tradingagents.urls import redact_url as redact_database_url

        out["storage_url"] = redact_database_url(str(config["storage_url"]))
    return out


# folders the engine writes into (each is checked by ``check_home``)
WRITABLE_DIRS = ("home", "memory_dir", "results_dir", "checkpoint_dir", "data_cache_dir")


def check_home(config: Mapping[str, Any] | None = None) -> None:
    """Raise ``ConfigError`` (naming the folder and what to do) unless every folder the engine
    writes can be created and written: a home on ``/proc/self``, a read-only disk or a full one is
    reported before any work, never as a traceback in the middle of a run.

    The error's ``key`` names the setting ("home", "results_dir", …) so a front end can name its
    own flag or field. Nothing is left behind: a missing folder is judged by its nearest existing
    parent (a probe file is written there and removed).
    """
    import errno as _errno
    import tempfile

    cfg = resolve_config(config)
    for key in WRITABLE_DIRS:
        if not cfg.get(key):
            continue
        folder = Path(cfg[key])
        existing = folder
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        try:
            if not existing.is_dir():
                raise NotADirectoryError(_errno.ENOTDIR, "it is a file, not a folder", str(existing))
            fd, probe = tempfile.mkstemp(prefix=".write-check.", dir=existing)
            try:
                os.write(fd, b"ok")
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            if exc.errno in (_errno.ENOSPC, _errno.EDQUOT):
                todo = "Free some space on that disk, or use a home folder on another disk"
            else:
                todo = "Use a folder you can write to"
            where = "" if existing == folder else f" ({existing} {reason.lower()})"
            error = ConfigError(
                f"The {key.replace('_', ' ')} folder {folder} cannot be written"
                + (where or f" ({reason})") + f". {todo}: set --home / TRADINGAGENTS_HOME (or the app's "
                "home setting) to a writable folder."
            )
            error.key = key  # type: ignore[attr-defined]
            raise error from exc
