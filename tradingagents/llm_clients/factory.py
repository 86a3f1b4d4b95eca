"""Chat-model factory: the offline engine, OpenAI, any OpenAI-compatible server, Anthropic and Gemini.

``create_llm(config, kind="quick"|"deep", api_key=None, callbacks=None)`` returns a LangChain
``BaseChatModel``:

- ``llm_provider == "offline"`` (the default): ``OfflineChatModel`` (imported lazily).
- ``"openai"``: ``BoundedChatOpenAI`` (``openai_chat``) against api.openai.com (or ``backend_url``).
- ``"openai_compatible"`` or a preset (``ollama``, ``vllm``, ``lmstudio``, ``openrouter``,
  ``deepseek``; see ``presets``): the same client against the preset's URL; ``backend_url``
  overrides it. A preset brings its default models (Ollama: llama3.1); vLLM and LM Studio serve
  the model they loaded, read from the server's ``/models`` list when none is named.
- ``"anthropic"`` and ``"google"`` (a preset's ``api``): ``native_chat.BoundedChatAnthropic`` (langchain-anthropic,
  the system prompt in Anthropic's prompt cache) and ``BoundedChatGoogle`` (langchain-google-genai), with the
  same bound, budgets, checks and errors; ``backend_url`` overrides the API's URL.

``check_llm_config(config, api_key=None)`` raises the ``LLMConfigError`` that ``create_llm`` would
(unknown provider, no URL, no key, no model name) without building anything: the CLI calls it
before any work, so a missing key exits 2 and says which variable to set.

Networked models stream their text (``llm_streaming``, default true; ``TRADINGAGENTS_LLM_STREAMING=false``
or ``--no-stream`` for a proxy that buffers server-sent events): see ``openai_chat``.

Keys come from ``api_key=`` or the environment and are never written into the config; the model
keeps them only as a pydantic ``SecretStr`` (its repr shows ``**********``).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from tradingagents import pricing
from tradingagents.config import MODEL_KEYS, env_var, resolve_config
from tradingagents.errors import LLMCallError, LLMConfigError
from tradingagents.llm_presets import (
    PROVIDER_PRESETS,
    public_url,
)

NO_KEY_PLACEHOLDER = "not-needed"

Kind = Literal["quick", "deep"]

__all__ = [
    "NO_KEY_PLACEHOLDER",
    "check_key_destination",
    "check_llm_config",
    "create_llm",
    "create_llms",
    "make_limiter",
    "resolve_base_url",
]


def _config_error(message: str, *, key: str | None = None, key_env: str | None = None) -> LLMConfigError:
    """An LLMConfigError that names the setting (``key``) or the key's variable (``key_env``), so the
    CLI can name its flag and the app its sidebar field instead of the message's wording."""
    error = LLMConfigError(message)
    error.key = key  # type: ignore[attr-defined]
    error.key_env = key_env  # type: ignore[attr-defined]
    return error


def resolve_base_url(config: Mapping[str, Any] | None = None) -> str | None:
    """The URL requests go to (``backend_url`` beats the preset's), or None for offline."""
    cfg = resolve_config(config)
    provider = cfg["llm_provider"]
    if provider == "offline":
        return None
    url = cfg.get("backend_url") or PROVIDER_PRESETS[provider]["base_url"]
    if not url:
        raise _config_error(
            f"The provider {provider!r} needs the server's URL: set backend_url ({env_var('backend_url')}, or "
            "--backend-url on the command line), for example http://localhost:11434/v1.",
            key="backend_url",
        )
    return str(url).rstrip("/")


def _resolve_key(provider: str, api_key: str | None) -> str:
    if api_key is not None and str(api_key).strip():
        return str(api_key).strip()
    preset = PROVIDER_PRESETS[provider]
    env_name = preset["key_env"]
    if env_name and os.environ.get(env_name, "").strip():
        return os.environ[env_name].strip()
    if preset["needs_key"]:
        raise _config_error(
            f"No API key for {preset['label']}: set the environment variable {env_name} (nothing was run).",
            key_env=env_name,
        )
    return NO_KEY_PLACEHOLDER


def _model_name(cfg: Mapping[str, Any], kind: str) -> str | None:
    """The configured model for ``kind``; None when the preset reads it from the server."""
    key = MODEL_KEYS[kind]
    name = str(cfg.get(key) or "").strip()
    if name:
        return name
    if PROVIDER_PRESETS[cfg["llm_provider"]]["ask_server"]:
        return None
    raise _config_error(
        f"No model name for the {kind} model: set {key} ({env_var(key)}, or --{kind}-model on the command "
        "line), for example gpt-4o-mini or llama3.1.",
        key=key,
    )


def check_llm_config(config: Mapping[str, Any] | None = None, *, api_key: str | None = None) -> None:
    """Raise the ``LLMConfigError`` creating the models would raise (nothing is built, no network)."""
    cfg = resolve_config(config)
    provider = cfg["llm_provider"]
    if provider == "offline":
        return
    resolve_base_url(cfg)
    _resolve_key(provider, api_key)
    for kind in MODEL_KEYS:
        _model_name(cfg, kind)


def server_key_urls(provider: str) -> set[str]:
    """Where the environment's key of ``provider`` may be sent: the preset's own address and the address
    the environment sets (``TRADINGAGENTS_BACKEND_URL``), nothing a caller typed."""
    urls = {str(PROVIDER_PRESETS[provider]["base_url"] or ""), os.environ.get(env_var("backend_url"), "")}
    return {u.strip().rstrip("/") for u in urls if u.strip()}


def check_key_destination(config: Mapping[str, Any] | None = None, *, api_key: str | None = None) -> None:
    """A server that keeps a provider's key in its environment sends it only where that environment points.

    With no ``api_key`` of the caller's own, the request would carry the environment's key: refused
    (``LLMConfigError`` with ``key="api_key"``) when the address is not one of ``server_key_urls``, so a
    user of a shared app cannot point the desk's key at a server of theirs. With their own key, or
    when the environment holds no key for the provider, any address is fine. The command line does not
    call it: there the environment is the user's own.
    """
    cfg = resolve_config(config)
    provider = cfg["llm_provider"]
    if provider == "offline" or (api_key is not None and str(api_key).strip()):
        return
    env_name = PROVIDER_PRESETS[provider]["key_env"]
    if not env_name or not os.environ.get(env_name, "").strip():
        return
    url = resolve_base_url(cfg)
    if url not in server_key_urls(provider):
        raise _config_error(
            f"The server's API key ({env_name}) is sent only to the address the server is set up with, and "
            f"{public_url(url)} is another one: type your own API key for it, or clear the Base URL "
            "(nothing was run).", key="api_key")


LOCAL_CONNECT_TIMEOUT_S = 5.0  # a local model server that accepts no connection by then is reported


def check_local_server(config: Mapping[str, Any] | None = None, *, timeout: float = LOCAL_CONNECT_TIMEOUT_S) -> None:
    """Before a run: a local preset's server (Ollama, vLLM, LM Studio) accepts a TCP connection within
    ``timeout`` seconds, else ``LocalServerUnreachable`` (exit 4, nothing ran) saying how to start it.

    A refused port fails at once; a host that never answers after ``timeout``: not after the model
    client's retries and read timeout (28 s for Ollama before). Remote providers are not probed.
    """
    import socket
    from urllib.parse import urlsplit

    from tradingagents.errors import LocalServerUnreachable

    cfg = resolve_config(config)
    preset = PROVIDER_PRESETS.get(cfg["llm_provider"]) or {}
    if cfg["llm_provider"] == "offline" or not preset.get("local"):
        return
    base = resolve_base_url(cfg)
    parts = urlsplit(base)
    host, port = parts.hostname or "localhost", parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return
    except OSError as exc:
        label = preset.get("label") or cfg["llm_provider"]
        why = "refused the connection" if isinstance(exc, ConnectionRefusedError) else (
            "did not answer" if isinstance(exc, TimeoutError) else f"failed ({exc.strerror or exc})")
        start = " (start it with `ollama serve`)" if cfg["llm_provider"] == "ollama" else ""
        model = cfg.get("quick_think_llm") or preset.get("quick_model")
        which = f"{label}, model {model}" if model else label
        raise LocalServerUnreachable(
            f"Could not connect to {public_url(base)} — is the server running{start}? ({which}: it {why} within "
            f"{timeout:g} s; nothing ran. Or set --backend-url to where it listens.)",
            provider=cfg["llm_provider"], retryable=True,
        ) from None


def make_limiter(config: Mapping[str, Any] | None = None) -> threading.BoundedSemaphore:
    """A semaphore bounding simultaneous model requests to ``max_concurrent_llm_calls`` (validated ≥ 1).

    Pass the same limiter to several ``create_llm`` calls to share one bound between models.
    """
    return threading.BoundedSemaphore(resolve_config(config)["max_concurrent_llm_calls"])


def served_model(base_url: str, api_key: str, timeout: float, label: str) -> str:
    """The first model of an OpenAI-compatible server's ``/models`` list (vLLM, LM Studio)."""
    import urllib.error
    import urllib.request

    url = f"{base_url.rstrip('/')}/models"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key != NO_KEY_PLACEHOLDER else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as answer:
            body = json.loads(answer.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        raise LLMCallError(
            f"{label} at {public_url(base_url)} answered HTTP {exc.code} to the model list; name the model "
            "instead (quick_think_llm / deep_think_llm).", status=exc.code, retryable=exc.code >= 500,
        ) from exc
    except (urllib.error.URLError, OSError) as exc:
        raise LLMCallError(
            f"Could not connect to {public_url(base_url)} — is the server running? ({label})", retryable=True
        ) from exc
    except ValueError as exc:
        raise LLMCallError(f"{label} at {public_url(base_url)} sent a model list that is not JSON.") from exc
    models = [m.get("id") for m in (body.get("data") or []) if isinstance(m, dict) and m.get("id")] if isinstance(
        body, dict) else []
    if not models:
        raise LLMConfigError(
            f"{label} at {public_url(base_url)} serves no model: load one, or name it in quick_think_llm / "
            "deep_think_llm."
        )
    return str(models[0])


def _split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``(url without user:password@, (user, password) or None)``."""
    from urllib.parse import unquote, urlsplit, urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    host = parts.netloc.rpartition("@")[2]
    auth = (unquote(parts.username or ""), unquote(parts.password or ""))
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), auth


def create_llm(
    config: Mapping[str, Any] | None = None,
    kind: Kind = "quick",
    *,
    api_key: str | None = None,
    callbacks: Sequence[Any] | None = None,
    limiter: threading.BoundedSemaphore | None = None,
    model: str | None = None,
):
    """A chat model for ``kind`` ("quick" or "deep") from a (partial) config.

    ``api_key`` beats the provider's environment variable; it is never stored in the config.
    ``limiter`` (see ``make_limiter``) lets several models share one concurrency bound; by default
    each call gets its own bound of ``max_concurrent_llm_calls``. ``model`` overrides the
    configured model name (``create_llms`` passes the server's model once it has asked).
    """
    if kind not in MODEL_KEYS:
        raise LLMConfigError(f"kind must be 'quick' or 'deep', not {kind!r}.")
    cfg = resolve_config(config)
    provider = cfg["llm_provider"]

    if provider == "offline":
        from tradingagents.llm_clients.offline import OfflineChatModel

        llm = OfflineChatModel(model_name="offline", streaming=cfg["llm_streaming"],
                               stream_delay_s=float(cfg.get("offline_stream_delay_s") or 0.0))
        if callbacks:
            llm.callbacks = list(callbacks)
        return llm

    base_url = resolve_base_url(cfg)
    key = _resolve_key(provider, api_key)
    model_name = model or _model_name(cfg, kind)
    api = PROVIDER_PRESETS[provider].get("api", "openai")
    if api != "openai":
        llm = _native_llm(api, cfg, provider, base_url, key, str(model_name), callbacks)
        llm._limiter = limiter if limiter is not None else make_limiter(cfg)
        return llm
    if model_name is None:
        model_name = served_model(base_url, key, cfg["llm_timeout"], PROVIDER_PRESETS[provider]["label"])
    # user:password in the URL becomes HTTP basic auth of the client, so the URL the SDK (and httpx's
    # request log) sees carries no credentials
    base_url, auth = _split_userinfo(base_url)
    kwargs: dict[str, Any] = {
        "model": model_name,
        "api_key": key,
        "base_url": base_url,
        "timeout": cfg["llm_timeout"],
        "max_retries": cfg["llm_max_retries"],
        "provider": provider,
        # llm_streaming: each attempt streams its text to the callbacks (the live panel), usage in
        # the stream; off: one JSON request per attempt. Retries, limits and accounting are the same.
        "streaming": cfg["llm_streaming"],
        "disable_streaming": not cfg["llm_streaming"],
        "stream_usage": cfg["llm_streaming"],
        # the answer's limit is real (the provider stops there), so a budget's worst case is too
        "max_tokens": pricing.output_limit(cfg),
    }
    if cfg["llm_temperature"] is not None:
        kwargs["temperature"] = cfg["llm_temperature"]
    if callbacks:
        kwargs["callbacks"] = list(callbacks)

    from tradingagents.llm_clients.openai_chat import (  # imports langchain-openai
        BoundedChatOpenAI,
        dict_chunks,
    )
    from tradingagents.llm_clients.text import async_http_client, valid_unicode_http_client

    # answers are made valid Unicode before the SDK parses them (structured output included)
    kwargs["http_client"] = valid_unicode_http_client(auth=auth)
    kwargs["http_async_client"] = async_http_client(auth=auth)

    llm = BoundedChatOpenAI(**kwargs)
    llm.client = dict_chunks(llm.client)  # streamed chunks as parsed JSON, no SDK model per chunk
    # structured answers go through root_client.chat.completions.parse: the same wrapper (no transform)
    chat = getattr(llm.root_client, "chat", None)
    if chat is not None and getattr(llm.client, "_inner", None) is vars(chat).get("completions"):
        vars(chat)["completions"] = llm.client  # the SDK's cached_property, filled with the wrapper
    llm._limiter = limiter if limiter is not None else make_limiter(cfg)
    return llm


def _native_llm(api: str, cfg: Mapping[str, Any], provider: str, base_url: str, key: str, model_name: str,
                callbacks: Sequence[Any] | None):
    """Anthropic's Messages API or the Gemini API through their own LangChain integrations, with the same
    bound, budgets, checks, retries and errors as the OpenAI client (``native_chat``)."""
    from tradingagents.llm_clients.native_chat import BoundedChatAnthropic, BoundedChatGoogle

    limit = pricing.output_limit(cfg)
    common: dict[str, Any] = {"model": model_name, "max_retries": cfg["llm_max_retries"], "provider": provider,
                              "streaming": cfg["llm_streaming"]}
    if cfg["llm_temperature"] is not None:
        common["temperature"] = cfg["llm_temperature"]
    if callbacks:
        common["callbacks"] = list(callbacks)
    if api == "anthropic":
        kwargs = {**common, "api_key": key, "base_url": base_url, "timeout": cfg["llm_timeout"], "stream_usage": True}
        if limit:
            kwargs["max_tokens"] = limit
        return BoundedChatAnthropic(**kwargs)
    if api == "google":
        kwargs = {**common, "google_api_key": key, "base_url": base_url, "timeout": cfg["llm_timeout"]}
        if limit:
            kwargs["max_output_tokens"] = limit
        return BoundedChatGoogle(**kwargs)
    raise _config_error(f"The provider {provider!r} speaks an API this build does not know ({api!r}).",
                        key="llm_provider")


def create_llms(config: Mapping[str, Any] | None = None, *, api_key: str | None = None, callbacks=None):
    """``(quick, deep)`` sharing one concurrency bound (and one look-up of a server's model)."""
    cfg = resolve_config(config)
    limiter = make_limiter(cfg)
    quick = create_llm(cfg, "quick", api_key=api_key, callbacks=callbacks, limiter=limiter)
    served = quick.model_name if cfg["llm_provider"] != "offline" and not cfg.get("quick_think_llm") else None
    deep = create_llm(cfg, "deep", api_key=api_key, callbacks=callbacks, limiter=limiter,
                      model=served if not cfg.get("deep_think_llm") else None)
    return quick, deep
