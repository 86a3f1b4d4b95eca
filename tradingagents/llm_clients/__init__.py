"""Chat-model layer: factory (offline engine, OpenAI, OpenAI-compatible servers), usage
accounting and structured output with a plain-text fallback."""

from tradingagents.llm_clients.factory import (
    check_llm_config,
    create_llm,
    create_llms,
    make_limiter,
    resolve_base_url,
)
from tradingagents.llm_clients.structured import forget_json_schema_support, invoke_structured

__all__ = [
    "check_llm_config",
    "create_llm",
    "create_llms",
    "forget_json_schema_support",
    "invoke_structured",
    "make_limiter",
    "resolve_base_url",
]


def __getattr__(name):  # UsageTracker imports langchain_core callbacks: load it on first use
    if name == "UsageTracker":
        from tradingagents.llm_clients.usage import UsageTracker

        return UsageTracker
    raise AttributeError(name)
