"""``resolve_config``: defaults < environment < the caller's keys, checked once, paths and models derived.

Every component calls it. It merges ``DEFAULTS``, then the ``TRADINGAGENTS_<KEY>`` variables, then
the caller's keys; runs each key's one check (a ``ConfigError`` names the key, and the variable
when the value came from the environment); fills in the paths and the provider's default models;
and returns a frozen ``Settings``. Resolving a ``Settings`` again returns it unchanged (cheap).
Keys the config does not know (a component's own options) pass through unchecked, frozen too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tradingagents.config.checks import check_setting
from tradingagents.config.defaults import DEFAULT_BENCHMARK, DEFAULTS, MODEL_KEYS, PATH_DEFAULTS, PATH_PARENTS
from tradingagents.config.env import ENV_PREFIX, default_home, env_overrides, env_var, warn_unknown_env_vars
from tradingagents.config.settings import Settings
from tradingagents.errors import ConfigError
from tradingagents.i18n import OUTPUT_LANGUAGE, Translator, normalize_language, translator
from tradingagents.llm_presets import PROVIDER_PRESETS


def _resolve(given: Mapping[str, Any], environ: Mapping[str, str] | None) -> Settings:
    if environ is None:
        warn_unknown_env_vars()  # a misspelt TRADINGAGENTS_* variable is named, once per process
    env = env_overrides(environ, skip=set(given))
    merged: dict[str, Any] = {**DEFAULTS, **env, **given}
    out: dict[str, Any] = {}
    for key, value in merged.items():
        from_env = key in env
        try:
            out[key] = check_setting(key, value, env_var(key) if from_env else key)
        except ConfigError as exc:
            # where the value came from, so a CLI can name its flag and a page its field
            exc.env_var = env_var(key) if from_env else None
            raise
    derived: set[str] = set()
    home = Path(out["home"]) if out.get("home") else default_home()
    out["home"] = str(home)
    for key, rel in PATH_DEFAULTS.items():  # a parent key comes before the paths inside it
        if not out.get(key):
            parent = PATH_PARENTS.get(key)
            out[key] = str(Path(out[parent[0]]) / parent[1]) if parent else str(home / rel)
            derived.add(key)
    if out.get("ui_language") and "output_language" not in env and "output_language" not in given:
        # what the models write follows the interface's language unless it was named (a Chinese CLI writes
        # Chinese reports); derived, so a Settings.replace of ui_language derives it again
        out["output_language"] = OUTPUT_LANGUAGE.get(out["ui_language"], out["output_language"])
        derived.add("output_language")
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


def _revalidate(given: Mapping[str, Any]) -> Settings:
    """``Settings.replace``'s resolver: the same checks and derivations, the environment not read again."""
    return _resolve(given, environ={})


Settings._resolver = _revalidate


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
    """The benchmark of a ticker: ``benchmark_ticker`` if set; else the longest suffix of
    ``benchmark_map`` the ticker ends with; else the map's ``""`` entry (tickers without a suffix);
    else ``DEFAULT_BENCHMARK``."""
    cfg = resolve_config(config)
    if cfg.get("benchmark_ticker"):
        return str(cfg["benchmark_ticker"]).upper()
    upper = ticker.upper()
    table = cfg["benchmark_map"]
    # longest suffix first so ".SS" never shadows a longer one; "" (every ticker ends with it) comes last
    for suffix in sorted((s for s in table if s), key=len, reverse=True):
        if upper.endswith(suffix.upper()):
            return table[suffix]
    return table.get("", DEFAULT_BENCHMARK)


def ui_translator(settings: Mapping[str, Any] | None = None, home: str | None = None) -> Translator:
    """The language of a command's own text (the CLI, a backtest, its report): the settings'
    ``ui_language``; before settings exist (or when they cannot be resolved) the config's for
    ``home``, else ``TRADINGAGENTS_UI_LANGUAGE`` read as it stands; English."""
    if settings is not None:
        return translator(settings.get("ui_language"))
    try:
        lang = resolve_config({"home": home} if home else {}).get("ui_language")
    except Exception:  # noqa: BLE001 - a broken setting is reported by the command itself
        lang = normalize_language(os.environ.get(ENV_PREFIX + "UI_LANGUAGE"))
    return translator(lang)
