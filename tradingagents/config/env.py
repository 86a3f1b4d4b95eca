"""The environment: ``TRADINGAGENTS_<KEY>`` variables, coerced to each default's type, and the home.

A bad value is a ``ConfigError`` naming the key and the variable (``error.key``, ``error.env_var``),
so a CLI can name its flag and a page its field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tradingagents.config.defaults import DEFAULTS, NONE_TYPES
from tradingagents.errors import ConfigError

ENV_PREFIX = "TRADINGAGENTS_"

_HINTS = {
    bool: "true/false, 1/0, yes/no or on/off",
    int: "a whole number",
    float: "a number",
    list: "a comma-separated list or a JSON array",
    dict: "a JSON object",
}


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (for an error message)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_text(text: str, target: type | None) -> Any:
    """``text`` as a ``target`` (bool, int, float, list, dict; anything else: the text itself)."""
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


def _coerce(key: str, raw: str, env_name: str) -> Any:
    default = DEFAULTS[key]
    target = NONE_TYPES.get(key) if default is None else type(default)
    text = raw.strip()
    if default is None and text.lower() in ("", "none", "null"):
        return None
    try:
        return parse_text(text, target)
    except (ValueError, json.JSONDecodeError) as exc:
        error = ConfigError(
            f"The environment variable {env_name}={shown(raw)} is not valid for {key}: "
            f"expected {_HINTS.get(target, 'text') if target else 'text'}."
        )
        error.key, error.env_var = key, env_name
        raise error from exc


def env_var(key: str) -> str:
    """The environment variable that overrides ``key``: ``TRADINGAGENTS_<KEY>``."""
    return ENV_PREFIX + key.upper()


def env_overrides(environ: Mapping[str, str] | None = None, skip: frozenset[str] | set[str] = frozenset()
                  ) -> dict[str, Any]:
    """Values from ``TRADINGAGENTS_<KEY>`` variables, coerced to each default's type (``skip``: keys the
    caller sets, whose variables are neither read nor checked)."""
    environ = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for key in DEFAULTS:
        name = env_var(key)
        if name in environ and key not in skip:
            out[key] = _coerce(key, environ[name], name)
    return out


def default_home(environ: Mapping[str, str] | None = None) -> Path:
    """``TRADINGAGENTS_HOME``, else ``~/.tradingagents``; a variable that is set but blank is a
    ``ConfigError`` (an unset expansion such as ``TRADINGAGENTS_HOME=$DIR`` must not quietly write
    into the user's own home)."""
    environ = os.environ if environ is None else environ
    home = environ.get(HOME_VAR)
    if home is not None and not home.strip():
        raise blank_home_error()
    return Path(home).expanduser() if home else Path.home() / ".tradingagents"


HOME_VAR = ENV_PREFIX + "HOME"


def blank_home_error() -> ConfigError:
    error = ConfigError(
        f"The environment variable {HOME_VAR} is set but empty. Set it to the folder to use, or unset "
        "it (unset TRADINGAGENTS_HOME) to use the default ~/.tradingagents."
    )
    error.key, error.env_var = "home", HOME_VAR
    return error


# TRADINGAGENTS_* variables that are not settings but are read by a part of the project
OTHER_ENV_VARS = frozenset({"TRADINGAGENTS_STUDIO_WARM_UP", "TRADINGAGENTS_OFFLINE_STREAM_DELAY_S",
                            "TRADINGAGENTS_SMTP_PASSWORD", "TRADINGAGENTS_SMTP_FROM"})
_warned: set[str] = set()  # names already warned about in this process (a warning, not a setting)


def unknown_env_vars(environ: Mapping[str, str] | None = None) -> list[tuple[str, str | None]]:
    """``(name, closest known name or None)`` for each ``TRADINGAGENTS_*`` variable that no setting
    reads: a misspelt variable would otherwise be ignored without a word."""
    import difflib

    environ = os.environ if environ is None else environ
    known = sorted({env_var(key) for key in DEFAULTS} | OTHER_ENV_VARS)
    out = []
    for name in sorted(environ):
        if name.upper().startswith(ENV_PREFIX) and name not in known:
            close = difflib.get_close_matches(name.upper(), known, n=1, cutoff=0.6)
            out.append((name, close[0] if close else None))
    return out


def warn_unknown_env_vars(environ: Mapping[str, str] | None = None) -> None:
    """Log one warning per unknown ``TRADINGAGENTS_*`` variable (once per process), naming the
    closest known variable."""
    import logging

    for name, close in unknown_env_vars(environ):
        if name in _warned:
            continue
        _warned.add(name)
        hint = f" Did you mean {close}?" if close else " See the settings table in the README."
        logging.getLogger("tradingagents.config").warning(
            "warning: the environment variable %s is not a TradingAgents setting and is ignored.%s", name, hint)
