"""The LLM providers the engine knows: one record each (URL, key variable, label, default models).

This module imports nothing from the package, so the settings resolver, the factory, the offline
engine and the app's sidebar all read the same facts without an import cycle.

A preset's default models are used when the caller named none (neither in the config nor in
``TRADINGAGENTS_QUICK_THINK_LLM`` / ``TRADINGAGENTS_DEEP_THINK_LLM``); ``None`` keeps the generic
defaults of ``tradingagents.config``. ``ask_server`` presets (vLLM serves the model it was started with,
LM Studio the one that is loaded) resolve to no model name, and the factory reads the first model
of the server's ``/models`` list.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

OFFLINE_LABEL = "offline engine (no LLM)"
"""How the offline engine is named wherever it shows (one wording everywhere)."""


def _preset(**fields: Any) -> Mapping[str, Any]:
    # api: the wire protocol ("openai": the OpenAI chat API, "anthropic": Anthropic's Messages API,
    # "google": the Gemini API), which picks the client (llm_clients/factory.py)
    return MappingProxyType({"ask_server": False, "api": "openai", **fields})


_PRESETS: dict[str, Mapping[str, Any]] = {
    "offline": _preset(
        base_url=None, key_env=None, label=OFFLINE_LABEL, needs_key=False, local=True,
        quick_model=None, deep_model=None,
        help="A deterministic engine that writes every report from the tool data: no model, no key, no network.",
    ),
    "openai": _preset(
        base_url="https://api.openai.com/v1", key_env="OPENAI_API_KEY", label="OpenAI", needs_key=True,
        local=False, quick_model="gpt-4o-mini", deep_model="gpt-4o",
        help="api.openai.com with OPENAI_API_KEY; models gpt-4o-mini (quick) and gpt-4o (deep) by default.",
    ),
    "anthropic": _preset(
        base_url="https://api.anthropic.com", key_env="ANTHROPIC_API_KEY", label="Anthropic", needs_key=True,
        local=False, quick_model="claude-haiku-4-5", deep_model="claude-sonnet-4-5", api="anthropic",
        help="Anthropic's API with ANTHROPIC_API_KEY; claude-haiku-4-5 (quick) and claude-sonnet-4-5 (deep) by "
        "default, each role's instructions kept in Anthropic's prompt cache.",
    ),
    "google": _preset(
        base_url="https://generativelanguage.googleapis.com", key_env="GOOGLE_API_KEY", label="Google Gemini",
        needs_key=True, local=False, quick_model="gemini-2.5-flash", deep_model="gemini-2.5-pro", api="google",
        help="The Gemini API with GOOGLE_API_KEY; gemini-2.5-flash (quick) and gemini-2.5-pro (deep) by default.",
    ),
    "openai_compatible": _preset(
        base_url=None, key_env="OPENAI_COMPATIBLE_API_KEY", label="OpenAI-compatible server", needs_key=False,
        local=False, quick_model="gpt-4o-mini", deep_model="gpt-4o",
        help="Any server speaking the OpenAI API at backend_url; name the models it serves "
        "(gpt-4o-mini and gpt-4o by default). A key, if the server needs one, in OPENAI_COMPATIBLE_API_KEY.",
    ),
    "ollama": _preset(
        base_url="http://localhost:11434/v1", key_env=None, label="Ollama (local)", needs_key=False,
        local=True, quick_model="llama3.1", deep_model="llama3.1",
        help="Ollama on this machine; model llama3.1 by default (quick and deep): run `ollama pull llama3.1` "
        "first, or name another model you have pulled.",
    ),
    "vllm": _preset(
        base_url="http://localhost:8000/v1", key_env=None, label="vLLM (local)", needs_key=False,
        local=True, quick_model=None, deep_model=None, ask_server=True,
        help="vLLM on this machine; by default the model the server was started with (read from its "
        "/models list).",
    ),
    "lmstudio": _preset(
        base_url="http://localhost:1234/v1", key_env=None, label="LM Studio (local)", needs_key=False,
        local=True, quick_model=None, deep_model=None, ask_server=True,
        help="LM Studio's local server; by default the model loaded in LM Studio (read from its /models list).",
    ),
    "openrouter": _preset(
        base_url="https://openrouter.ai/api/v1", key_env="OPENROUTER_API_KEY", label="OpenRouter", needs_key=True,
        local=False, quick_model="openai/gpt-4o-mini", deep_model="openai/gpt-4o",
        help="openrouter.ai with OPENROUTER_API_KEY; openai/gpt-4o-mini (quick) and openai/gpt-4o (deep) by default.",
    ),
    "deepseek": _preset(
        base_url="https://api.deepseek.com/v1", key_env="DEEPSEEK_API_KEY", label="DeepSeek", needs_key=True,
        local=False, quick_model="deepseek-chat", deep_model="deepseek-chat",
        help="api.deepseek.com with DEEPSEEK_API_KEY; deepseek-chat by default (quick and deep).",
    ),
}
PROVIDER_PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType(_PRESETS)
"""name → {base_url, key_env, label, needs_key, local, quick_model, deep_model, ask_server, api, help}; read-only."""

_ALIASES = {
    "openai_compat": "openai_compatible",
    "compatible": "openai_compatible",
    "lm_studio": "lmstudio",
    "none": "offline",
    "claude": "anthropic",
    "gemini": "google",
    "": "offline",
}


def normalize_provider(name: object) -> str:
    """A provider name as the presets spell it ("LM-Studio" → "lmstudio"); not checked here."""
    text = str(name if name is not None else "offline").strip().lower().replace("-", "_").replace(" ", "_")
    return _ALIASES.get(text, text)


def public_url(url: object) -> str:
    """A URL fit for a label or an error message: no user:password part, no query string."""
    from urllib.parse import urlsplit, urlunsplit

    text = str(url or "")
    try:
        parts = urlsplit(text)
    except ValueError:
        return "<invalid URL>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", "")) if parts.scheme else text.split("?")[0]


def provider_label(name: object, url: object = None, *, capital: bool = False) -> str:
    """How a provider is named wherever it shows: the preset's label ("offline engine (no LLM)",
    "Ollama (local)"); an OpenAI-compatible server with its ``url`` is "OpenAI-compatible server at
    <url without credentials>". ``capital`` starts it with a capital letter (a label that opens a
    line or a cell: "Offline engine (no LLM)"); the rest keeps its casing. An unknown name is shown
    as it is ("—" when empty)."""
    preset = PROVIDER_PRESETS.get(str(name or ""))
    if not preset:
        return str(name or "—")
    label = str(preset["label"])
    if name == "openai_compatible" and url:
        label = f"{label} at {public_url(url)}"
    return label[:1].upper() + label[1:] if capital else label
