"""What model calls cost: a pricing table and the cost of a run's token counts.

``pricing_table(config)`` is the table in force: ``DEFAULT_PRICING``, then ``config["llm_pricing"]``,
then the ``TRADINGAGENTS_LLM_PRICING`` environment variable (a JSON object), each mapping a model
name to ``[usd_per_1M_input_tokens, usd_per_1M_output_tokens]`` or, with the price of cached input,
``[input, output, cached_input]``; later sources win per model.

Cached input (a prompt's start the provider has seen: OpenAI reports it as
``prompt_tokens_details.cached_tokens``, Anthropic as cache reads, LangChain as
``usage_metadata["input_token_details"]["cache_read"]``) is part of the input tokens and is billed at
the cached price: ``cached_input_price`` (a three-number entry's third; for a default entry its list
price in ``CACHED_INPUT_PRICING``; otherwise the input price, no discount assumed).

``cost_usd(model, input_tokens, output_tokens, table, cached_tokens=0)`` prices one count: ``None`` when
the model is not in the table (the UI says "unknown price", never $0), ``0.0`` for the offline engine.
``cost_by_node(usage_by_node, config, table)`` prices a ``UsageTracker.by_node()`` dict: each node
is priced with the model of its role's tier (``deep_think_llm`` or ``quick_think_llm``, from the
roster); nodes outside the roster (reflection, "(outside graph)") think with the quick model.

Model names match exactly, else without an ``openai/`` routing prefix (OpenRouter) or a dated
snapshot suffix (``gpt-4o-2024-08-06`` is priced as ``gpt-4o``).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from typing import Any

from tradingagents.errors import ConfigError
from tradingagents.team import ROLE_BY_NODE

ENV_VAR = "TRADINGAGENTS_LLM_PRICING"
OFFLINE_PROVIDER = "offline"
OFFLINE_MODEL = "offline"

# USD per 1M tokens (input, output): OpenAI's published list prices (standard tier, no batch discount;
# cached input: CACHED_INPUT_PRICING below) as of 2025-08. Prices change: override any of them with config["llm_pricing"]
# or TRADINGAGENTS_LLM_PRICING rather than trusting this table for a bill.
DEFAULT_PRICING: Mapping[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "o1": (15.00, 60.00),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    # Anthropic's list prices (a cache read at CACHED_INPUT_PRICING's price, a cache write as input) and
    # Google's Gemini API paid tier (prompts up to 200k tokens), as of 2025-10
    "claude-opus-4-1": (15.00, 75.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-3-5-haiku": (0.80, 4.00),
    "gemini-2.5-pro": (1.25, 10.00),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-flash-lite": (0.10, 0.40),
}

# USD per 1M cached input tokens, the providers' list prices for a prompt prefix read from their cache
# (OpenAI: automatic, 50% off for the GPT-4o and o1/o3-mini generation, 75% for GPT-4.1 and o3/o4-mini,
# 90% for GPT-5; Anthropic: a cache read is 10% of input (a cache write costs 125% of input, not counted
# here: it is billed as input); Gemini 2.5: implicit caching, 75% off). A model absent here (gpt-4-turbo,
# gpt-3.5-turbo: no prompt caching) pays the input price for every token.
CACHED_INPUT_PRICING: Mapping[str, float] = {
    "gpt-5": 0.125,
    "gpt-5-mini": 0.025,
    "gpt-5-nano": 0.005,
    "gpt-4.1": 0.50,
    "gpt-4.1-mini": 0.10,
    "gpt-4.1-nano": 0.025,
    "gpt-4o": 1.25,
    "gpt-4o-mini": 0.075,
    "o3": 0.50,
    "o3-mini": 0.55,
    "o4-mini": 0.275,
    "o1": 7.50,
    "claude-opus-4-1": 1.50,
    "claude-sonnet-4-5": 0.30,
    "claude-haiku-4-5": 0.10,
    "claude-3-5-haiku": 0.08,
    "gemini-2.5-pro": 0.3125,
    "gemini-2.5-flash": 0.075,
    "gemini-2.5-flash-lite": 0.025,
}

_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


# a price above this is a typo, and a cost computed from it could overflow to Infinity in a saved run
MAX_PRICE_PER_1M = 1_000_000.0


def _price(value: Any, where: str, model: str) -> tuple[float, ...]:
    if isinstance(value, Mapping):
        value = (value.get("input"), value.get("output"),
                 *(() if value.get("cached_input") is None else (value.get("cached_input"),)))
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)) or len(value) not in (2, 3):
        raise ConfigError(
            f"{where}: the price of {model!r} must be [usd_per_1M_input_tokens, usd_per_1M_output_tokens] "
            f"(and optionally usd_per_1M_cached_input_tokens), for example [2.5, 10] or [2.5, 10, 1.25], "
            f"not {value!r:.60}."
        )
    out = []
    for part in value:
        if (isinstance(part, bool) or not isinstance(part, (int, float)) or not math.isfinite(part) or part < 0
                or part > MAX_PRICE_PER_1M):
            raise ConfigError(f"{where}: the price of {model!r} must be two numbers from 0 to {MAX_PRICE_PER_1M:,.0f} "
                              f"(USD per 1M tokens), not {value!r:.60}.")
        out.append(float(part))
    return tuple(out)


def _merge(table: dict[str, tuple[float, ...]], source: Any, where: str) -> None:
    if source is None:
        return
    if not isinstance(source, Mapping):
        raise ConfigError(f"{where} must be a JSON object of model → [input, output] USD per 1M tokens.")
    for model, value in source.items():
        if not isinstance(model, str) or not model.strip():
            raise ConfigError(f"{where}: model names must be non-empty text, not {model!r}.")
        table[model.strip()] = _price(value, where, model)


def validate_pricing(value: object, where: str = "llm_pricing") -> dict[str, tuple[float, ...]] | None:
    """A pricing override as ``{model: (input, output)}`` (None stays None); ConfigError otherwise.

    Made to serve as the ``llm_pricing`` check of the settings; ``where`` names the key or variable.
    """
    if value is None:
        return None
    table: dict[str, tuple[float, ...]] = {}
    _merge(table, value, where)
    return table


def pricing_table(config: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> dict:
    """The prices in force: defaults < ``config["llm_pricing"]`` < ``TRADINGAGENTS_LLM_PRICING``."""
    environ = os.environ if environ is None else environ
    table: dict[str, tuple[float, ...]] = dict(DEFAULT_PRICING)
    _merge(table, (config or {}).get("llm_pricing"), 'config["llm_pricing"]')
    raw = environ.get(ENV_VAR)
    if raw is not None and raw.strip():
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"Environment variable {ENV_VAR} is not valid JSON ({exc.msg} at position {exc.pos}): "
                'use an object like {"gpt-4o": [2.5, 10]} (USD per 1M input and output tokens).'
            ) from None
        _merge(table, parsed, f"Environment variable {ENV_VAR}")
    return table


def _entry(model: str | None, table: Mapping[str, tuple[float, ...]]) -> tuple[str, tuple[float, ...]] | None:
    """(the table's name for the model, its price), or None."""
    if not model:
        return None
    name = str(model).strip()
    for candidate in (name, name.removeprefix("openai/")):
        if candidate in table:
            return candidate, table[candidate]
        undated = _DATED.sub("", candidate)
        if undated in table:
            return undated, table[undated]
    return None


def price_of(model: str | None, table: Mapping[str, tuple[float, ...]]) -> tuple[float, ...] | None:
    """The (input, output) price of a model (with a third number, cached input, when the entry gives one),
    or None when the table does not know it."""
    hit = _entry(model, table)
    return None if hit is None else hit[1]


def cached_input_price(model: str | None, table: Mapping[str, tuple[float, ...]] | None = None) -> float | None:
    """USD per 1M cached input tokens of a model: the entry's third number; for an entry that is the
    default list price, ``CACHED_INPUT_PRICING``'s; else the input price (no discount assumed). None when
    the table does not know the model."""
    hit = _entry(model, DEFAULT_PRICING if table is None else table)
    if hit is None:
        return None
    name, price = hit
    if len(price) > 2:
        return price[2]
    if name in CACHED_INPUT_PRICING and tuple(price) == tuple(DEFAULT_PRICING.get(name, ())):
        return CACHED_INPUT_PRICING[name]
    return price[0]


def _tokens(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a whole number of tokens, 0 or more; got {value!r}.")
    return value


def cost_usd(
    model: str | None,
    input_tokens: int,
    output_tokens: int,
    table: Mapping[str, tuple[float, ...]] | None = None,
    cached_tokens: int = 0,
) -> float | None:
    """USD cost of a token count: None for a model without a price, 0.0 for the offline engine.

    ``cached_tokens`` of the ``input_tokens`` (never more than them) cost ``cached_input_price``.
    No tokens cost nothing whatever the model (a tool node has a model only by its role).
    """
    inp = _tokens(input_tokens, "input_tokens")
    out = _tokens(output_tokens, "output_tokens")
    cached = min(_tokens(cached_tokens, "cached_tokens"), inp)
    if model == OFFLINE_MODEL or inp == out == 0:
        return 0.0
    table = DEFAULT_PRICING if table is None else table
    price = price_of(model, table)
    if price is None:
        return None
    cached_price = cached_input_price(model, table) if cached else 0.0
    return ((inp - cached) * price[0] + cached * (cached_price or 0.0) + out * price[1]) / 1_000_000


def model_for_node(node: str, config: Mapping[str, Any]) -> str:
    """The model a graph node thinks with: its role's tier; the quick model outside the roster."""
    if str(config.get("llm_provider") or "").strip().lower() == OFFLINE_PROVIDER:
        return OFFLINE_MODEL
    role = ROLE_BY_NODE.get(node)
    key = "deep_think_llm" if role is not None and role.model == "deep" else "quick_think_llm"
    return str(config.get(key) or "")


def models_used(config: Mapping[str, Any]) -> dict[str, str] | None:
    """The quick and deep models a run thinks with, as its records name them; None for the offline engine,
    which runs no model (its config still holds the model names a networked provider would use)."""
    if is_offline(config):
        return None
    return {"quick": str(config.get("quick_think_llm") or ""), "deep": str(config.get("deep_think_llm") or "")}


def cost_by_node(
    usage_by_node: Mapping[str, Mapping[str, Any]],
    config: Mapping[str, Any],
    table: Mapping[str, tuple[float, ...]] | None = None,
) -> dict[str, Any]:
    """The cost of a run's usage: ``{"cost_usd", "by_node", "by_agent", "cached_by_agent"}``.

    ``by_node``: ``{node: {"model", "cost_usd"}}``; ``by_agent``:
    ``{agent: cost_usd}`` where an analyst's agent, tool and clear nodes add up under the agent's name
    (nodes outside the roster stay on their own); ``cached_by_agent``: ``{agent: [input tokens, of them
    read from the provider's prompt cache]}``, the same way. A total is None when any of its parts used a model without a price (a
    partial sum would look like a full bill); each priced part keeps its own figure.
    """
    table = pricing_table(config) if table is None else table
    by_node: dict[str, dict[str, Any]] = {}
    by_agent: dict[str, float | None] = {}
    cached_by_agent: dict[str, list[int]] = {}
    total: float | None = 0.0
    for node, counts in usage_by_node.items():
        model = model_for_node(node, config)
        inp, cached = int(counts.get("input_tokens") or 0), int(counts.get("cached_input_tokens") or 0)
        cost = cost_usd(model, inp, int(counts.get("output_tokens") or 0), table, cached_tokens=cached)
        by_node[node] = {"model": model, "cost_usd": cost}
        role = ROLE_BY_NODE.get(node)
        agent = role.node if role is not None else node
        tokens = cached_by_agent.setdefault(agent, [0, 0])
        tokens[0] += inp
        tokens[1] += cached
        before = by_agent.get(agent, 0.0)
        by_agent[agent] = None if cost is None or before is None else before + cost
        total = None if cost is None or total is None else total + cost
    return {"cost_usd": total, "by_node": by_node, "by_agent": by_agent, "cached_by_agent": cached_by_agent}


def is_offline(config: Mapping[str, Any] | None) -> bool:
    return str((config or {}).get("llm_provider") or "").strip().lower() == OFFLINE_PROVIDER


def cost_text(cost: Any, *, offline: bool = False) -> str:
    """A cost as shown to people: "$0.00 · offline engine", "—" (no price), "$0.0123" or "$12.34"."""
    if offline:
        return "$0.00 · offline engine"
    if isinstance(cost, bool) or not isinstance(cost, (int, float)) or not math.isfinite(cost):
        return "—"
    return f"${cost:,.2f}" if cost >= 1 else f"${cost:.4f}"


# ---------------------------------------------------------------------------- estimates
# A typical model call of the team (prompt with reports and context, one answer), in tokens: the
# fallback when no past run of the same configuration is saved.


# ---------------------------------------------------------------------------- budgets (a hard ceiling)
# A prompt's tokens are bounded by its UTF-8 bytes (a byte-level BPE token is at least one byte), plus
# a few tokens a message for the chat format's framing: the reservation never undercounts a prompt.
MESSAGE_OVERHEAD_TOKENS = 8
# the answer limit a budgeted run sends (and reserves) when llm_max_output_tokens is not set
BUDGET_OUTPUT_TOKENS = 8192


def output_limit(config: Mapping[str, Any], budgeted: bool | None = None) -> int | None:
    """The ``max_tokens`` a model of ``config`` sends: ``llm_max_output_tokens``, else
    ``BUDGET_OUTPUT_TOKENS`` under a budget (``max_cost_usd``, or ``budgeted``), else None."""
    limit = config.get("llm_max_output_tokens")
    if limit:
        return int(limit)
    if budgeted or (budgeted is None and config.get("max_cost_usd") is not None):
        return BUDGET_OUTPUT_TOKENS
    return None


def prompt_token_bound(*parts: Any) -> int:
    """An upper bound of the tokens of a prompt made of ``parts`` (strings, or anything JSON-able)."""
    total = 0
    for part in parts:
        if part is None:
            continue
        text = part if isinstance(part, str) else json.dumps(part, default=str, ensure_ascii=False)
        total += len(text.encode("utf-8", "surrogatepass")) + MESSAGE_OVERHEAD_TOKENS
    return total


class CostLedger:
    """A budget in USD that model calls reserve their worst case from before they are made.

    ``reserve(usd)`` takes ``usd`` atomically when ``spent + reserved + usd`` stays within the limit
    (else False: the caller must not make the call); ``settle(reserved, actual)`` gives the
    reservation back and books what the call really cost. Several threads (parallel analysts, the
    tickers of a batch) share one ledger, so calls that each fit alone cannot pass together.
    """

    def __init__(self, limit: float, label: str = "the run's") -> None:
        import threading

        self.limit = float(limit)
        self.label = label
        self.spent = 0.0
        self.reserved = 0.0
        self._lock = threading.Lock()

    def reserve(self, usd: float) -> bool:
        with self._lock:
            if self.spent + self.reserved + usd > self.limit:
                return False
            self.reserved += usd
            return True

    def settle(self, reserved: float, actual: float) -> None:
        with self._lock:
            self.reserved = max(0.0, self.reserved - reserved)
            self.spent += max(0.0, actual)

    def exhausted(self) -> bool:
        with self._lock:
            return self.spent >= self.limit

    def snapshot(self) -> tuple[float, float]:
        """``(spent, reserved)``."""
        with self._lock:
            return self.spent, self.reserved
