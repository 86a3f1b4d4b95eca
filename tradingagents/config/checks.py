"""One validator per key (``CHECKS``), and the ones other modules call by name.

Each check takes ``(value, what)`` — ``what`` names where the value came from (the key, an
environment variable, a CLI flag, a form field) — and returns the normalised value or raises a
``ConfigError`` that names ``what`` and says what is accepted. ``None`` (a key left unset) means
the key's default wherever the default is not None itself. The resolver runs them all once; a
caller that checks one value on its own (a CLI flag, a constructor argument) calls
``check_setting(key, value, what)`` or the named check below, never a rule of its own.

A check may live next to its domain (``pricing.validate_pricing``, ``urls.validate_storage_url``) when
the entry here is that function: still one rule per key.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tradingagents.config.defaults import (
    ANALYST_ALIASES,
    ANALYST_DATA_MODES,
    ANALYST_ORDER,
    BOUNDS,
    DATA_VENDORS,
    DEFAULTS,
    EXECUTION_MODES,
    EXECUTOR_ALIASES,
    EXECUTORS,
    PATH_DEFAULTS,
    ROUND_LIMITS,
    VENDOR_ALIASES,
)
from tradingagents.config.env import parse_text, shown
from tradingagents.errors import ConfigError, LLMConfigError
from tradingagents.i18n import LANGUAGES, N_, normalize_language
from tradingagents.llm_presets import PROVIDER_PRESETS, normalize_provider
from tradingagents.pricing import validate_pricing
from tradingagents.urls import validate_smtp_url, validate_storage_url
from tradingagents.validation import validate_date, validate_ticker

Check = Callable[[Any, str], Any]


def _fail(what: str, value: object, expected: str, cls: type[ConfigError] = ConfigError) -> ConfigError:
    return cls(f"{what}={shown(value)} is not valid: {expected}.")


# ---------------------------------------------------------------------------- the named checks
def validate_rounds(value: object, what: str = "max_debate_rounds") -> int:
    """A round count as an int within ``ROUND_LIMITS``, or a ConfigError that says what is allowed.

    The one rule of ``max_debate_rounds`` and ``max_risk_discuss_rounds``: the resolver, the CLIs and
    ``ConditionalLogic`` call it.
    """
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
            raise ConfigError(f"{what}: unknown analyst {shown(raw)}; choose one or more of {accepted}.")
        if name not in out:
            out.append(name)
    if not out:
        raise ConfigError(f"Select at least one analyst ({what}) from {accepted}.")
    return out


def check_vendor(value: Any, what: str = "data_vendor") -> str:
    """A market data source (``DATA_VENDORS``, or an alias such as "yahoo"); ``None`` is the default
    ("demo"). Anything else is a ConfigError naming ``what`` (e.g. "TRADINGAGENTS_DATA_VENDOR")."""
    if value is None:
        return DEFAULTS["data_vendor"]
    if not isinstance(value, str):
        raise _fail(what, value, f"expected one of {', '.join(DATA_VENDORS)}")
    name = value.strip().lower().replace("-", "_").replace(" ", "_")
    name = VENDOR_ALIASES.get(name, name)
    if name not in DATA_VENDORS:
        raise ConfigError(
            f"{what}={shown(value)} is not a market data source. Accepted: {', '.join(DATA_VENDORS)} "
            "(yahoo also means yfinance)."
        )
    return name


def check_execution(value: Any, what: str = "analyst_execution") -> str:
    """``parallel`` or ``sequential`` (any case); ``None`` or blank is the default ("parallel")."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULTS["analyst_execution"]
    text = str(value).strip().lower()
    if text not in EXECUTION_MODES:
        raise _fail(what, value, f"use {' or '.join(EXECUTION_MODES)}")
    return text


def check_analyst_data(value: Any, what: str = "analyst_data") -> str:
    """``tools`` or ``prefetch`` (any case); ``None`` or blank is the default ("tools")."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return DEFAULTS["analyst_data"]
    text = str(value).strip().lower()
    if text not in ANALYST_DATA_MODES:
        raise _fail(what, value, f"use {' or '.join(ANALYST_DATA_MODES)}")
    return text


def normalize_executor(value: object, what: str = "executor") -> str:
    """``threads`` or ``ray`` (``thread`` accepted); ``None`` or blank is the default ("threads")."""
    text = str(value if value is not None else "").strip().lower() or DEFAULTS["executor"]
    if text not in EXECUTOR_ALIASES:
        raise ConfigError(f"{what}: unknown executor {value!r:.40}; use one of: {', '.join(EXECUTORS)}.")
    return EXECUTOR_ALIASES[text]


def check_benchmark_map(value: Any, what: str = "benchmark_map") -> dict[str, str]:
    """Exchange suffix → benchmark ticker; the empty suffix ``""`` is the default of tickers without
    one (``{".T": "^N225", …, "": "SPY"}``, the documents' way)."""
    if not isinstance(value, Mapping):
        raise _fail(what, value, 'expected a mapping of exchange suffix to benchmark, e.g. {".T": "^N225", "": "SPY"}')
    out = {}
    for suffix, bench in value.items():
        if not isinstance(suffix, str) or not isinstance(bench, str) or not bench.strip():
            raise ConfigError(f"{what}: {suffix!r} → {bench!r} is not a ticker suffix (\"\" for tickers "
                              "without one) and a benchmark ticker.")
        out[suffix.strip()] = bench.strip().upper()
    return out


# ---------------------------------------------------------------------------- check builders
def _number(kind: type, *, lo: float | None = None, hi: float | None = None, optional: bool = False,
            lo_open: bool = False) -> Check:
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
            number = parse_text(value, kind) if isinstance(value, str) else value
            if kind is int:
                if isinstance(number, float) and number != int(number):
                    raise ValueError
                number = int(number)
            else:
                number = float(number)
        except (TypeError, ValueError):
            raise _fail(what, value, f"expected {expected}") from None
        if not math.isfinite(number) or (lo is not None and (number <= lo if lo_open else number < lo)) or (
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
            return parse_text(value, bool)
        except ValueError:
            pass
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise _fail(what, value, "expected true or false")


def _text(*, optional: bool = False) -> Check:
    def check(value: Any, what: str) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            if optional:
                return None
            raise ConfigError(f"{what} must not be empty.")
        if not isinstance(value, str):
            raise _fail(what, value, f"expected text, not {type(value).__name__}")
        return value.strip()

    return check


def _ui_language(value: Any, what: str) -> str | None:
    """A UI language of ``i18n.LANGUAGES`` ("zh", "zh-CN", "中文", "en" …), or None: follow the browser."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    code = normalize_language(value)
    if code is None:
        raise _fail(what, value, "expected one of " + ", ".join(f"{k} ({v})" for k, v in LANGUAGES.items()))
    return code


def _path(value: Any, what: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise _fail(what, value, f"expected a folder or file path, not {type(value).__name__}")
    text = os.fspath(value)
    if "\x00" in str(text):
        raise _fail(what, value, "a path cannot contain a NUL character")
    return str(Path(text).expanduser())


def _home(value: Any, what: str) -> str | None:
    """A home folder: a path, never a filesystem root (``--home /`` would write results/, memory/,
    checkpoints/ … straight into ``/``)."""
    text = _path(value, what)
    if text is not None and Path(text).resolve() == Path(Path(text).resolve().anchor):
        raise ConfigError(
            f"{what}={shown(value)} is the root of the file system: the home folder gets results/, memory/, "
            "checkpoints/ and more. Use a folder of its own, for example ~/.tradingagents."
        )
    return text


def _file_path(key: str) -> Check:
    """The check of a path of a file the engine reads and rewrites (the memory log, the watchlists,
    the audit trail): never an existing folder."""

    def check(value: Any, what: str) -> str | None:
        text = _path(value, what)
        if text is not None and Path(text).is_dir():
            raise ConfigError(
                f"{what}={shown(value)} is a folder, but {key} names a file (for example "
                f"{Path(text) / Path(PATH_DEFAULTS[key]).name}). Give the path of a file."
            )
        return text

    return check


FILE_PATH_KEYS = frozenset({"memory_log_path", "watchlists_path", "audit_path"})


def _provider(value: Any, what: str) -> str:
    if value is not None and not isinstance(value, str):
        raise _fail(what, value, "expected a provider name", LLMConfigError)
    name = normalize_provider(value)
    if name not in PROVIDER_PRESETS:
        raise LLMConfigError(f"{what}={shown(value)} is not an LLM provider: use one of {', '.join(PROVIDER_PRESETS)}.")
    return name


def _backend_url(value: Any, what: str) -> str | None:
    text = _text(optional=True)(value, what)
    if text is None:
        return None
    if not text.lower().startswith(("http://", "https://")):
        error = LLMConfigError(
            f"{what}={shown(value)} is not a server URL: use http://host:port/v1 or https://…, "
            "for example http://localhost:11434/v1."
        )
        error.say = (N_("{value} is not a server address: write it as http://host:port/v1 or https://…, for example "
                        "http://localhost:11434/v1."), {"value": shown(value)})
        raise error
    return text.rstrip("/")


def _benchmark(value: Any, what: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return validate_ticker(value)
    except ValueError as exc:
        raise ConfigError(f"{what}: {exc}") from None


def _ray_address(value: Any, what: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = str(value).strip()
    if len(text) > 300 or any(c.isspace() for c in text):
        raise _fail(what, value, 'use "auto", "host:6379" or "ray://host:10001"')
    return text


def _judge_key(value: Any, what: str) -> str:
    from tradingagents import team

    judges = {r.key: r.key for r in team.ROSTER if r.judges}
    judges.update({r.node.lower(): r.key for r in team.ROSTER if r.judges})
    key = " ".join(str(value).replace("_", " ").split()).lower().replace(" ", "_") if isinstance(value, str) else None
    found = judges.get(key or "") or judges.get((key or "").replace("_", " "))
    if found is None:
        raise _fail(what, value, f"expected a judge: {', '.join(sorted(set(judges.values())))}")
    return found


PM_NOTE_MAX = 2000
"""The longest note to a judge (characters)."""


def check_pm_notes(value: Any, what: str) -> list[dict[str, str]]:
    """Notes to the judges: a list of ``{"before": <judge key>, "note": text}`` (``by`` and ``at`` kept when
    given, one line each); empty notes are dropped."""
    if value is None or value == "":
        return []
    if not isinstance(value, list | tuple):
        raise _fail(what, value, 'expected a list of {"before": "portfolio_manager", "note": "…"}')
    out: list[dict[str, str]] = []
    for item in value:
        if not isinstance(item, Mapping) or not isinstance(item.get("note"), str):
            raise _fail(what, item, 'expected {"before": "portfolio_manager", "note": "…"}')
        note = item["note"].strip()
        if not note:
            continue
        if len(note) > PM_NOTE_MAX:
            raise ConfigError(f"{what}: a note has {len(note)} characters; keep it under {PM_NOTE_MAX}.")
        entry = {"before": _judge_key(item.get("before"), f"{what}.before"), "note": note}
        for extra in ("by", "at"):
            if isinstance(item.get(extra), str) and item[extra].strip() and "\n" not in item[extra]:
                entry[extra] = item[extra].strip()[:320]
        out.append(entry)
    return out


def check_pause_before(value: Any, what: str) -> list[str]:
    """The judges a run pauses before: a list (or comma-separated text) of judge keys; true: both; false: none."""
    from tradingagents import team

    if value is None or value is False or value == "":
        return []
    if value is True:
        return [r.key for r in team.ROSTER if r.judges]
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        raise _fail(what, value, "expected a list of judges: research_manager, portfolio_manager")
    keys = [_judge_key(v, what) for v in value]
    return [r.key for r in team.ROSTER if r.key in keys]


def _emails(value: Any, what: str) -> list[str]:
    """A list of e-mail addresses (or a comma-separated text), lower case, without repeats."""
    if value is None:
        return []
    if isinstance(value, str):
        value = [part for part in value.split(",")]
    if not isinstance(value, list | tuple):
        raise _fail(what, value, "expected a list of e-mail addresses")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise _fail(what, value, "expected a list of e-mail addresses")
        text = item.strip().lower()
        if not text:
            continue
        if "@" not in text or any(c.isspace() for c in text) or len(text) > 320:
            raise _fail(what, item, "expected an e-mail address such as lead@example.com")
        if text not in out:
            out.append(text)
    return out


def _internal_date(value: Any, what: str) -> str:
    try:
        return validate_date(value, allow_future=True)
    except (ValueError, TypeError) as exc:
        raise _fail(what, value, f"expected a date YYYY-MM-DD ({exc})") from None


def _internal_int(value: Any, what: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _fail(what, value, f"expected a whole number from {lo} to {hi}")
    return int(value)


def _internal_float(value: Any, what: str, lo: float | None = None, lo_open: bool = False) -> float:
    import math

    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)) or (
            lo is not None and (float(value) <= lo if lo_open else float(value) < lo)):
        bound = "" if lo is None else f" {'above' if lo_open else 'at least'} {lo:g}"
        raise _fail(what, value, f"expected a finite number{bound}")
    return float(value)


def _fields(value: Any, what: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(what, value, f"expected a mapping with {', '.join(required)}")
    missing = [k for k in required if k not in value]
    unknown = sorted(set(map(str, value)) - set(required) - set(optional))
    if missing or unknown:
        raise _fail(what, value, "missing " + ", ".join(missing) if missing else "unknown field(s) " + ", ".join(unknown))
    return value


def check_blind(value: Any, what: str = "blind") -> dict[str, Any] | None:
    """The internal key of a blind run (``dataflows.blind.BlindMap.to_dict``): the real ``tickers``, the
    rebasing ``anchor`` date, the alias ``salt``, the whole-year shift ``years`` (non-zero) and the
    ``names`` scrubbed per ticker; None, False or empty for a run that is not blind."""
    if value is None or value is False or (isinstance(value, Mapping) and not value):
        return None
    doc = _fields(value, what, ("tickers", "anchor", "years"), ("salt", "names"))
    tickers = doc["tickers"]
    if isinstance(tickers, str | bytes) or not isinstance(tickers, list | tuple) or not tickers:
        raise _fail(f"{what}.tickers", tickers, "expected a non-empty list of tickers")
    try:
        real = [validate_ticker(t) for t in tickers]
    except (ValueError, TypeError) as exc:
        raise _fail(f"{what}.tickers", tickers, str(exc)) from None
    years = _internal_int(doc["years"], f"{what}.years", -400, 400)
    if years == 0:
        raise _fail(f"{what}.years", years, "a blind run shifts its dates by a whole, non-zero number of years")
    salt = doc.get("salt") or ""
    if not isinstance(salt, str):
        raise _fail(f"{what}.salt", salt, "expected text")
    names = doc.get("names") or {}
    if not isinstance(names, Mapping) or not all(
            isinstance(k, str) and isinstance(v, list | tuple) and all(isinstance(n, str) and n for n in v)
            for k, v in names.items()):
        raise _fail(f"{what}.names", names, "expected {ticker: [names to scrub]}")
    return {"tickers": real, "anchor": _internal_date(doc["anchor"], f"{what}.anchor"), "salt": salt,
            "years": years, "names": {k.upper(): list(v) for k, v in names.items()}}


def check_synthetic_world(value: Any, what: str = "synthetic_world") -> dict[str, Any] | None:
    """The internal key of a no-edge control world (``dataflows.worlds.world_spec``): ``seed``, ``world``,
    ``start`` and ``origin`` dates, and per ticker its drift ``mu``, volatility ``sigma`` (≥ 0) and
    price ``level`` (> 0); None or empty for the real market."""
    if value is None or value is False or (isinstance(value, Mapping) and not value):
        return None
    doc = _fields(value, what, ("seed", "world", "start", "origin", "series"))
    series = doc["series"]
    if not isinstance(series, Mapping) or not series:
        raise _fail(f"{what}.series", series, "expected {ticker: {mu, sigma, level}} for at least one ticker")
    out = {}
    for ticker, params in series.items():
        where = f"{what}.series.{ticker}"
        _fields(params, where, ("mu", "sigma", "level"))
        out[str(ticker)] = {"mu": _internal_float(params["mu"], f"{where}.mu"),
                            "sigma": _internal_float(params["sigma"], f"{where}.sigma", 0.0),
                            "level": _internal_float(params["level"], f"{where}.level", 0.0, lo_open=True)}
    return {"seed": _internal_int(doc["seed"], f"{what}.seed", 0, 2**63 - 1),
            "world": _internal_int(doc["world"], f"{what}.world", 0, 1_000_000),
            "start": _internal_date(doc["start"], f"{what}.start"),
            "origin": _internal_date(doc["origin"], f"{what}.origin"), "series": out}


INTERNAL_CHECKS: Mapping[str, Check] = {"blind": check_blind, "synthetic_world": check_synthetic_world}
"""Keys the engine sets for itself (a blind run, a control world), never the user: not in ``DEFAULTS``
(nor shown with the settings), but checked like the others whenever a config carries them."""

CHECKS: Mapping[str, Check] = {
    "home": _home,
    **{k: (_file_path(k) if k in FILE_PATH_KEYS else _path) for k in PATH_DEFAULTS},
    "llm_provider": _provider,
    "deep_think_llm": _text(optional=True),
    "quick_think_llm": _text(optional=True),
    "backend_url": _backend_url,
    "llm_timeout": _number(float, lo=0, lo_open=True, hi=3600),
    "llm_max_retries": _number(int, lo=0, hi=20),
    "llm_temperature": _number(float, lo=0, hi=2, optional=True),
    "max_concurrent_llm_calls": _number(int, lo=BOUNDS["max_concurrent_llm_calls"][0], hi=BOUNDS["max_concurrent_llm_calls"][1]),
    "llm_streaming": _boolean,
    "llm_max_output_tokens": _number(int, lo=16, hi=1_000_000, optional=True),
    "offline_stream_delay_s": _number(float, lo=0, hi=1),
    "data_vendor": check_vendor,
    "data_retry_backoff": _number(float, lo=0, hi=600),
    "allow_synthetic": _boolean,
    "csv_skip_bad_rows": _boolean,
    "selected_analysts": normalize_analysts,
    "max_debate_rounds": validate_rounds,
    "max_risk_discuss_rounds": validate_rounds,
    "max_recur_limit": _number(int, lo=1, hi=10_000),
    "analyst_execution": check_execution,
    "analyst_data": check_analyst_data,
    "checkpoint_enabled": _boolean,
    "memory_enabled": _boolean,
    "output_language": _text(),
    "ui_language": _ui_language,
    "memory_log_max_entries": _number(int, lo=1, optional=True),
    "bm25_k1": _number(float, lo=0, hi=10),
    "bm25_b": _number(float, lo=0, hi=1),
    "holding_days": _number(int, lo=BOUNDS["holding_days"][0], hi=BOUNDS["holding_days"][1]),
    "benchmark_ticker": _benchmark,
    "benchmark_map": check_benchmark_map,
    "storage_url": validate_storage_url,
    "llm_pricing": validate_pricing,
    "executor": normalize_executor,
    "ray_address": _ray_address,
    "max_cost_usd": _number(float, lo=BOUNDS["max_cost_usd"][0], lo_open=True, optional=True),
    "user": _text(optional=True),
    "desk_leads": _emails,
    "pm_notes": check_pm_notes,
    "pause_before": check_pause_before,
    "smtp_url": validate_smtp_url,
}
"""Key → its one check ``(value, what) -> normalised value``."""
assert set(CHECKS) == set(DEFAULTS), "every key has one check"

LLM_KEYS = frozenset({"llm_provider", "deep_think_llm", "quick_think_llm", "backend_url", "llm_timeout",
                      "llm_max_retries", "llm_temperature", "max_concurrent_llm_calls", "llm_streaming",
                      "llm_max_output_tokens"})
"""Keys without which the models cannot work: their errors are ``LLMConfigError``."""


def check_setting(key: str, value: Any, what: str | None = None) -> Any:
    """``value`` checked and normalised by ``key``'s one check (``what`` names its source: a flag, a
    field; default the key). A key the config does not know passes through unchanged."""
    check = CHECKS.get(key) or INTERNAL_CHECKS.get(key)
    if check is None:
        return value
    try:
        return check(value, what or key)
    except ConfigError as exc:
        error = exc if key not in LLM_KEYS or isinstance(exc, LLMConfigError) else LLMConfigError(str(exc))
        error.key = key
        if error is exc:
            raise
        raise error from None
