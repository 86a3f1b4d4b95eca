"""The one place for configuration: defaults, environment overrides, one check per key, one frozen object.

* ``defaults``  every key with its default (``DEFAULT_CONFIG``), the path keys (``PATH_DEFAULTS``) and the
  constants the checks accept;
* ``settings``  the frozen ``Settings`` (a read-only mapping with attribute access) and its containers;
* ``env``       ``TRADINGAGENTS_<KEY>`` variables, coerced to each default's type, and the home folder;
* ``checks``    one validator per key (``CHECKS``, ``check_setting``), used by every caller;
* ``resolve``   ``resolve_config`` (defaults < environment < the caller's keys) and ``benchmark_for``;
* ``redact``    ``public_config`` and ``redact_url``: what may be shown or written;
* ``home``      ``check_home``: every folder the engine writes can be written;
* ``table``     one row per setting a person sets (label, CLI flag, URL name, bounds): ``settings_table``,
  ``setting_label``, ``url_name``, ``key_for_url``, ``flag_of``, ``prefill_names``; the CLIs' ``add_flags``.

Import from here (``from tradingagents.config import resolve_config``); ``tradingagents.default_config``
is the specification's name for the same objects and is kept for code written against the documents.
"""

from __future__ import annotations

from tradingagents.config.checks import (
    CHECKS,
    LLM_KEYS,
    check_analyst_data,
    check_benchmark_map,
    check_execution,
    check_setting,
    check_vendor,
    normalize_analysts,
    normalize_executor,
    validate_rounds,
)
from tradingagents.config.defaults import (
    ANALYST_ALIASES,
    ANALYST_DATA_LABELS,
    ANALYST_DATA_MODES,
    ANALYST_ORDER,
    BENCHMARK_MAP,
    BOUNDS,
    DATA_VENDORS,
    DEFAULT_BENCHMARK,
    DEFAULT_CONFIG,
    DEFAULTS,
    EXECUTION_LABELS,
    EXECUTION_MODES,
    EXECUTOR_ALIASES,
    EXECUTORS,
    MODEL_KEYS,
    NONE_TYPES,
    PATH_DEFAULTS,
    PATH_PARENTS,
    ROUND_LIMITS,
    VENDOR_ALIASES,
    WRITABLE_DIRS,
)
from tradingagents.config.env import ENV_PREFIX, default_home, env_overrides, env_var
from tradingagents.config.home import check_home
from tradingagents.config.redact import REDACTED, public_config, redact_url
from tradingagents.config.resolve import benchmark_for, resolve_config, ui_translator
from tradingagents.config.settings import FrozenDict, FrozenList, Settings, freeze, thaw
from tradingagents.config.table import (
    Setting,
    add_flags,
    config_from_args,
    flag_of,
    key_for_url,
    prefill_names,
    setting,
    settings_table,
    url_name,
)
from tradingagents.config.table import label as setting_label
from tradingagents.errors import ConfigError, LLMConfigError

_thaw = thaw  # the name an older caller imports (tradingagents.batch)

__all__ = [
    "ANALYST_ALIASES", "ANALYST_DATA_LABELS", "ANALYST_DATA_MODES", "ANALYST_ORDER", "BENCHMARK_MAP", "CHECKS", "DATA_VENDORS", "DEFAULTS",
    "DEFAULT_BENCHMARK", "DEFAULT_CONFIG", "ENV_PREFIX", "EXECUTION_LABELS", "EXECUTION_MODES", "EXECUTORS", "EXECUTOR_ALIASES",
    "LLM_KEYS", "MODEL_KEYS", "NONE_TYPES", "PATH_DEFAULTS", "PATH_PARENTS", "REDACTED", "ROUND_LIMITS",
    "VENDOR_ALIASES", "WRITABLE_DIRS", "ui_translator", "ConfigError", "FrozenDict", "FrozenList", "LLMConfigError", "Settings",
    "benchmark_for", "check_analyst_data", "check_benchmark_map", "check_execution", "check_home", "check_setting", "check_vendor",
    "default_home", "env_overrides", "env_var", "freeze", "normalize_analysts", "normalize_executor",
    "public_config", "redact_url", "resolve_config", "thaw", "validate_rounds",
    "BOUNDS", "Setting", "add_flags", "config_from_args", "flag_of", "key_for_url", "prefill_names", "setting",
    "setting_label", "settings_table", "url_name",
]
