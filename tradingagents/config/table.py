"""One row per setting that a person sets: its label, its CLI flag, its URL name and its bounds, once.

The check of each key is ``checks.CHECKS[key]`` and its bounds ``defaults.BOUNDS[key]`` (the check reads
them there too); this table says how the setting is *named* wherever a person meets it, so that the
command lines, the app's forms and links and Compare's change labels derive from one row instead of
naming it five ways:

* ``settings_table()``: every row (``Setting``), in the order the forms show them;
* ``setting(key)``, ``label(key, t)``, ``url_name(key)``, ``key_for_url(name)``, ``flag_of(key)``;
* ``add_flags(parser, keys, help=…)``: the one scheme every CLI (``cli.py``, ``backtest/cli.py``,
  ``desk/cli.py``) adds a setting's flag with; ``config_from_args(args, keys)`` reads them back as a
  partial config (``checked=``: keys whose value is checked at once, the error naming the flag);
* ``prefill_names(data)``: a link's ``?prefill=`` object with config keys (``max_debate_rounds``) or URL
  names (``debate_rounds``) by URL name (a setting given both ways keeps the URL name's value).

Labels are English and marked (``N_``): show them with ``label(key, t)``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tradingagents.config.checks import CHECKS, Check, check_setting
from tradingagents.config.defaults import BOUNDS
from tradingagents.i18n import N_, Translator

__all__ = ["Setting", "add_flags", "config_from_args", "flag_of", "key_for_url", "label", "prefill_names",
           "setting", "settings_table", "url_name"]


@dataclass(frozen=True)
class Setting:
    """How a setting is named where a person meets it (the key's check and default live in the config).

    ``flag``: its CLI option (None: none); ``aliases``: other spellings a CLI still accepts (``--concurrency``);
    ``switch``: a flag that sets a fixed value (``--no-checkpoint`` sets False) instead of taking one;
    ``choices``: flags that each set one value, with their help (``--parallel``/``--sequential``); ``kind``: the argparse
    type of a flag's value (text by default, checked by the resolver); ``url``: its name in a link's prefill.
    """

    key: str
    label: str
    flag: str | None = None
    help: str = ""
    url: str | None = None
    kind: Callable[[str], Any] = str
    aliases: tuple[str, ...] = ()
    switch: Any = None
    choices: Mapping[str, tuple[Any, str]] = field(default_factory=dict)

    @property
    def bounds(self) -> tuple[float | None, float | None] | None:
        """(lowest, highest) accepted (None: open), or None for a setting that is not a number."""
        return BOUNDS.get(self.key)

    @property
    def check(self) -> Check:
        """The key's one check (``checks.CHECKS``)."""
        return CHECKS[self.key]

    @property
    def dest(self) -> str | None:
        """The argparse attribute its flag fills (``--debate-rounds`` → ``debate_rounds``)."""
        return self.flag.lstrip("-").replace("-", "_") if self.flag else None

    @property
    def flags_text(self) -> str | None:
        """How a message names its flag(s): ``--debate-rounds``, ``--parallel/--sequential``."""
        return "/".join(self.choices) if self.choices else self.flag


ANALYSTS_HELP = ("comma-separated subset of market,social,news,fundamentals (default: all); aliases: "
                 "technical = market, sentiment = social, fundamental = fundamentals")

_ROWS: tuple[Setting, ...] = (
    Setting("selected_analysts", N_("Analysts"), "--analysts", ANALYSTS_HELP, url="analysts"),
    Setting("llm_provider", N_("LLM provider"), "--provider",
            "LLM provider: offline (default), openai, openai_compatible, ollama, …", url="provider"),
    Setting("backend_url", N_("Base URL"), "--backend-url", "base URL of an OpenAI-compatible server"),
    Setting("quick_think_llm", N_("Quick model"), "--quick-model", "quick-thinking model name"),
    Setting("deep_think_llm", N_("Deep model"), "--deep-model", "deep-thinking model name"),
    Setting("data_vendor", N_("Data source"), "--data", "market data: demo (default), yfinance (or yahoo) or csv",
            url="vendor"),
    Setting("max_debate_rounds", N_("Debate rounds"), "--debate-rounds", "bull/bear debate rounds (default 1)",
            url="debate_rounds", kind=int),
    Setting("max_risk_discuss_rounds", N_("Risk rounds"), "--risk-rounds",
            "risk discussion rounds (default 1)", url="risk_rounds", kind=int),
    Setting("analyst_execution", N_("Analyst execution"),
            choices=MappingProxyType({"--parallel": ("parallel", "run the analysts as parallel branches"),
                                      "--sequential": ("sequential", "run the analysts one after another")})),
    Setting("analyst_data", N_("Analyst data"), "--analyst-data",
            "how the analysts get their data: tools (default: each analyst's model asks for it with tool calls) "
            "or prefetch (the analyst fetches its plan itself and makes one model call without tools: fewer "
            "round trips, for models that cannot call tools)"),
    Setting("output_language", N_("Output language")),
    Setting("max_concurrent_llm_calls", N_("Model calls at once"), "--max-concurrent",
            "model calls at once (max_concurrent_llm_calls)", kind=int, aliases=("--concurrency",)),
    Setting("max_cost_usd", N_("Budget (USD)"), "--max-cost",
            "USD budget: stop at a checkpoint (exit 5) before a step would exceed it"),
    Setting("executor", N_("Executor"), "--executor", "threads (default) or ray"),
    Setting("holding_days", N_("Holding days")),
    Setting("memory_enabled", N_("Memory")),
    Setting("checkpoint_enabled", N_("Checkpoints"), "--no-checkpoint",
            "do not checkpoint (no resume after a failure)", switch=False),
    Setting("llm_streaming", N_("Streaming"), "--no-stream",
            "networked models answer in one piece instead of streaming their text (for a proxy that buffers "
            "server-sent events; llm_streaming)", switch=False),
    Setting("allow_synthetic", N_("Invented instruments"), "--allow-synthetic",
            "demo market: analyse a ticker it does not list as an invented instrument (labelled so in the report "
            "and the log, kept out of other tickers' lessons); default: refused (exit 2)", switch=True),
    Setting("csv_skip_bad_rows", N_("Skip bad CSV rows"), "--csv-skip-bad-rows",
            "CSV data: drop the rows that do not parse (and say how many) instead of refusing the file (exit 3)",
            switch=True),
    Setting("home", N_("Home folder"), "--home",
            "TradingAgents home folder (default $TRADINGAGENTS_HOME or ~/.tradingagents)"),
)
_BY_KEY: Mapping[str, Setting] = MappingProxyType({s.key: s for s in _ROWS})
_BY_URL: Mapping[str, str] = MappingProxyType({s.url: s.key for s in _ROWS if s.url})


def settings_table() -> tuple[Setting, ...]:
    """Every row, in the order the forms show them."""
    return _ROWS


def setting(key: str) -> Setting:
    """The row of ``key`` (KeyError: a key people do not set by name)."""
    return _BY_KEY[key]


def label(key: str, t: Translator | None = None) -> str:
    """The setting's label in ``t``'s language (English without one); a key without a row shows its words."""
    row = _BY_KEY.get(key)
    text = row.label if row else key.replace("_", " ").capitalize()
    return t(text) if (t is not None and row) else text


def url_name(key: str) -> str:
    """The setting's name in a link (``max_debate_rounds`` → ``debate_rounds``); the key when it has none."""
    row = _BY_KEY.get(key)
    return row.url if row and row.url else key


def key_for_url(name: str) -> str:
    """The config key a link's name stands for (``debate_rounds`` → ``max_debate_rounds``; a key is itself)."""
    return _BY_URL.get(name, name)


def flag_of(key: str) -> str | None:
    """How the command line names the setting (``--debate-rounds``, ``--parallel/--sequential``), or None."""
    row = _BY_KEY.get(key)
    return row.flags_text if row else None


def prefill_names(data: Mapping[str, Any]) -> dict[str, Any]:
    """A link's settings by their URL names (the Run page's form reads these): config keys translated
    (Compare's links name settings by key), a setting given both ways keeps the URL name's value; other
    names pass unchanged."""
    return {url_name(k): v for k, v in data.items() if not (url_name(k) != k and url_name(k) in data)}


def add_flags(parser: argparse.ArgumentParser | Any, keys: Iterable[str], *,
              help: Mapping[str, str] | None = None, bare: bool = False) -> None:
    """Add each setting's flag to ``parser`` (an ``ArgumentParser`` or an argument group), the one way every
    CLI does: a value flag (``kind`` as its type, the text checked later by the resolver), a switch
    (``store_true``/``store_false`` into its own attribute, default None: unset), or a group of mutually
    exclusive choice flags. ``help`` overrides a row's help for this command; ``bare``: no help at all."""
    helps = dict(help or {})
    for key in keys:
        row = _BY_KEY[key]
        text = None if bare else helps.get(key, row.help)
        if row.choices:
            group = parser.add_mutually_exclusive_group()
            for flag, (_value, choice_help) in row.choices.items():
                group.add_argument(flag, action="store_true", help=None if bare else choice_help)
        elif row.flag and row.switch is not None:
            parser.add_argument(row.flag, action="store_true", default=None, help=text)
        elif row.flag:
            parser.add_argument(row.flag, *row.aliases, dest=row.dest, type=row.kind, help=text)


def config_from_args(args: argparse.Namespace, keys: Iterable[str], *,
                     checked: Iterable[str] = ()) -> dict[str, Any]:
    """The partial config ``keys``' flags set in ``args`` (unset flags leave their key out). A key in
    ``checked`` is checked now by its one check, the error naming the flag; the rest are checked by
    ``resolve_config`` (whose error names the key: ``flag_of`` gives the flag)."""
    now = set(checked)
    cfg: dict[str, Any] = {}
    for key in keys:
        row = _BY_KEY[key]
        if row.choices:
            chosen = [value for flag, (value, _help) in row.choices.items() if getattr(args, flag.lstrip("-"), False)]
            if chosen:
                cfg[key] = chosen[0]
            continue
        value = getattr(args, row.dest or "", None)
        if value is None or (row.switch is not None and not value):
            continue
        if row.switch is not None:
            value = row.switch
        cfg[key] = check_setting(key, value, row.flag) if key in now else value
    return cfg
