"""Chat-model factory: the offline engine, OpenAI, and any OpenAI-compatible server.

``create_llm(config, kind="quick"|"deep", api_key=None, callbacks=None)`` returns a LangChain
``BaseChatModel``:

- ``llm_provider == "offline"`` (the default): ``OfflineChatModel`` (imported lazily).
- ``"openai"``: ``langchain_openai.ChatOpenAI`` against api.openai.com (or ``backend_url``).
- ``"openai_compatible"`` or a preset (``ollama``, ``vllm``, ``lmstudio``, ``openrouter``,
  ``deepseek``): the same client against the preset's URL; ``backend_url`` overrides it.

Networked models are a ``ChatOpenAI`` subclass that
- retries 429, 5xx and timeouts with the OpenAI SDK's own bounded exponential backoff
  (``max_retries = config["llm_max_retries"]``, ``timeout = config["llm_timeout"]``),
- retries an empty answer, or a tool call naming a tool that was not offered, within the same
  retry budget,
- turns whatever still fails into ``LLMCallError`` (status, provider, model, a plain message),
- holds a slot of a ``threading.BoundedSemaphore`` of size ``config["max_concurrent_llm_calls"]``
  around every request, so parallel analyst branches never exceed that many requests in flight.

Keys come from ``api_key=`` or the environment and are never written into the config; the model
keeps them only as a pydantic ``SecretStr`` (its repr shows ``**********``).
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal

from tradingagents.default_config import resolve_config
from tradingagents.llm_clients.offline_common import OFFLINE_LABEL  # one wording everywhere

NO_KEY_PLACEHOLDER = "not-needed"

_PRESETS: dict[str, Mapping[str, Any]] = {
    "offline": MappingProxyType(
        {"base_url": None, "key_env": None, "label": OFFLINE_LABEL, "needs_key": False}
    ),
    "openai": MappingProxyType(
        {
            "base_url": "https://api.openai.com/v1",
            "key_env": "OPENAI_API_KEY",
            "label": "OpenAI",
            "needs_key": True,
        }
    ),
    "openai_compatible": MappingProxyType(
        {
            "base_url": None,  # must come from backend_url
            "key_env": "OPENAI_COMPATIBLE_API_KEY",
            "label": "OpenAI-compatible server",
            "needs_key": False,
        }
    ),
    "ollama": MappingProxyType(
        {"base_url": "http://localhost:11434/v1", "key_env": None, "label": "Ollama (local)", "needs_key": False}
    ),
    "vllm": MappingProxyType(
        {"base_url": "http://localhost:8000/v1", "key_env": None, "label": "vLLM (local)", "needs_key": False}
    ),
    "lmstudio": MappingProxyType(
        {"base_url": "http://localhost:1234/v1", "key_env": None, "label": "LM Studio (local)", "needs_key": False}
    ),
    "openrouter": MappingProxyType(
        {
            "base_url": "https://openrouter.ai/api/v1",
            "key_env": "OPENROUTER_API_KEY",
            "label": "OpenRouter",
            "needs_key": True,
        }
    ),
    "deepseek": MappingProxyType(
        {
            "base_url": "https://api.deepseek.com/v1",
            "key_env": "DEEPSEEK_API_KEY",
            "label": "DeepSeek",
            "needs_key": True,
        }
    ),
}
PROVIDER_PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType(_PRESETS)
"""name → {base_url, key_env, label, needs_key}; read-only (the app's sidebar lists these)."""

Kind = Literal["quick", "deep"]


from tradingagents.errors import LLMCallError, LLMConfigError  # noqa: E402  (one error hierarchy)


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


def normalize_provider(name: object) -> str:
    text = str(name or "offline").strip().lower().replace("-", "_").replace(" ", "_")
    aliases = {"openai_compat": "openai_compatible", "compatible": "openai_compatible", "lm_studio": "lmstudio"}
    return aliases.get(text, text)


def provider_label(config: Mapping[str, Any] | None = None) -> str:
    """Human label of the configured provider, e.g. 'offline engine (no LLM)' or 'Ollama (local)'."""
    cfg = resolve_config(config)
    provider = normalize_provider(cfg.get("llm_provider"))
    preset = PROVIDER_PRESETS.get(provider)
    if preset is None:
        return provider
    if provider == "offline":
        return OFFLINE_LABEL
    url = cfg.get("backend_url")
    if provider == "openai_compatible" and url:
        return f"{preset['label']} at {public_url(url)}"
    return str(preset["label"])


def resolve_base_url(config: Mapping[str, Any] | None = None) -> str | None:
    """The URL requests go to (``backend_url`` beats the preset's), or None for offline."""
    cfg = resolve_config(config)
    provider = normalize_provider(cfg.get("llm_provider"))
    if provider == "offline":
        return None
    if provider not in PROVIDER_PRESETS:
        raise LLMConfigError(_unknown_provider_message(provider))
    url = cfg.get("backend_url") or PROVIDER_PRESETS[provider]["base_url"]
    if not url:
        raise LLMConfigError(
            "The provider 'openai_compatible' needs the server's URL: set backend_url (for example "
            "http://localhost:11434/v1) in the sidebar or TRADINGAGENTS_BACKEND_URL."
        )
    return str(url).rstrip("/")


def _unknown_provider_message(provider: str) -> str:
    names = ", ".join(PROVIDER_PRESETS)
    return f"Unknown LLM provider {provider!r}. Use one of: {names}."


def _resolve_key(provider: str, api_key: str | None) -> str:
    if api_key is not None and str(api_key).strip():
        return str(api_key).strip()
    preset = PROVIDER_PRESETS[provider]
    env_name = preset["key_env"]
    if env_name and os.environ.get(env_name, "").strip():
        return os.environ[env_name].strip()
    if preset["needs_key"]:
        raise LLMConfigError(
            f"No API key for {preset['label']}: set the environment variable {env_name} "
            "or paste the key in the sidebar."
        )
    return NO_KEY_PLACEHOLDER


def make_limiter(config: Mapping[str, Any] | None = None) -> threading.BoundedSemaphore:
    """A semaphore bounding simultaneous model requests to ``max_concurrent_llm_calls`` (≥ 1).

    Pass the same limiter to several ``create_llm`` calls to share one bound between models.
    """
    cfg = resolve_config(config)
    try:
        n = int(cfg.get("max_concurrent_llm_calls") or 1)
    except (TypeError, ValueError):
        raise LLMConfigError(
            f"max_concurrent_llm_calls must be a whole number ≥ 1, not {cfg.get('max_concurrent_llm_calls')!r}."
        ) from None
    return threading.BoundedSemaphore(max(1, n))


def create_llm(
    config: Mapping[str, Any] | None = None,
    kind: Kind = "quick",
    *,
    api_key: str | None = None,
    callbacks: Sequence[Any] | None = None,
    limiter: threading.BoundedSemaphore | None = None,
):
    """A chat model for ``kind`` ("quick" or "deep") from a (partial) config.

    ``api_key`` beats the provider's environment variable; it is never stored in the config.
    ``limiter`` (see ``make_limiter``) lets several models share one concurrency bound; by default
    each call gets its own bound of ``max_concurrent_llm_calls``.
    """
    if kind not in ("quick", "deep"):
        raise LLMConfigError(f"kind must be 'quick' or 'deep', not {kind!r}.")
    cfg = resolve_config(config)
    provider = normalize_provider(cfg.get("llm_provider"))
    if provider not in PROVIDER_PRESETS:
        raise LLMConfigError(_unknown_provider_message(provider))
    model_name = str(cfg.get(f"{kind}_think_llm") or "").strip()

    if provider == "offline":
        from tradingagents.llm_clients.offline import OfflineChatModel  # lazy: written by another module

        llm = OfflineChatModel(model_name="offline", config=cfg)
        if callbacks:
            llm.callbacks = list(callbacks)
        return llm

    if not model_name:
        raise LLMConfigError(
            f"No model name for the {kind} model: set {kind}_think_llm (for example gpt-4o-mini or llama3.1)."
        )
    base_url = resolve_base_url(cfg)
    key = _resolve_key(provider, api_key)
    try:
        timeout = float(cfg.get("llm_timeout") or 60.0)
        max_retries = max(0, int(cfg.get("llm_max_retries") if cfg.get("llm_max_retries") is not None else 3))
        temperature = None if cfg.get("llm_temperature") is None else float(cfg["llm_temperature"])
    except (TypeError, ValueError):
        raise LLMConfigError(
            "llm_timeout must be a number of seconds, llm_max_retries a whole number ≥ 0 and "
            "llm_temperature a number (or empty)."
        )
    kwargs: dict[str, Any] = {
        "model": model_name,
        "api_key": key,
        "base_url": base_url,
        "timeout": timeout,
        "max_retries": max_retries,
        "provider": provider,
        "disable_streaming": True,  # one request per call: retries, limits and accounting stay exact
        "stream_usage": False,
    }
    if temperature is not None:
        kwargs["temperature"] = temperature
    if callbacks:
        kwargs["callbacks"] = list(callbacks)
    cls = _bounded_chat_openai_class()
    llm = cls(**kwargs)
    llm._limiter = limiter if limiter is not None else make_limiter(cfg)
    return llm


def create_llms(config: Mapping[str, Any] | None = None, *, api_key: str | None = None, callbacks=None):
    """``(quick, deep)`` sharing one concurrency bound."""
    limiter = make_limiter(config)
    quick = create_llm(config, "quick", api_key=api_key, callbacks=callbacks, limiter=limiter)
    deep = create_llm(config, "deep", api_key=api_key, callbacks=callbacks, limiter=limiter)
    return quick, deep


# --------------------------------------------------------------------------------------------
# The networked model


def _message_problem(result: Any, tools: Any) -> str | None:
    """Why an answer is unusable (empty, unknown tool, unparseable tool arguments), or None."""
    try:
        message = result.generations[0].message
    except (AttributeError, IndexError):
        return "the server returned no answer"
    tool_calls = list(getattr(message, "tool_calls", None) or [])
    invalid = list(getattr(message, "invalid_tool_calls", None) or [])
    if invalid:
        names = ", ".join(str(c.get("name")) for c in invalid)
        return f"the model called {names} with arguments that are not valid JSON"
    if tool_calls:
        offered = set()
        for tool in tools or []:
            if isinstance(tool, dict):
                fn = tool.get("function") or {}
                offered.add(fn.get("name") or tool.get("name"))
        unknown = [c.get("name") for c in tool_calls if c.get("name") not in offered]
        if unknown:
            available = ", ".join(sorted(n for n in offered if n)) or "none (no tools were offered)"
            return (
                f"the model called the unknown tool {', '.join(map(repr, unknown))}; "
                f"the available tools are {available}"
            )
    if tool_calls:
        return None
    content = message.content
    if isinstance(content, str):
        empty = not content.strip()
    else:
        empty = not any(
            (isinstance(block, str) and block.strip())
            or (isinstance(block, dict) and str(block.get("text") or "").strip())
            for block in (content or [])
        )
    if empty:
        return "the model returned an empty answer"
    return None


@functools.cache
def _bounded_chat_openai_class():
    """Build the ChatOpenAI subclass on first use (keeps importing this module cheap)."""
    import openai
    from langchain_openai import ChatOpenAI
    from pydantic import PrivateAttr

    class BoundedChatOpenAI(ChatOpenAI):
        """ChatOpenAI with a concurrency bound, answer checks and ``LLMCallError``."""

        provider: str = "openai"
        _limiter: Any = PrivateAttr(default=None)

        def __repr_args__(self):  # the key is a SecretStr already; keep the repr short too
            for name, value in super().__repr_args__():
                if name in ("model_name", "openai_api_base", "provider", "max_retries", "request_timeout"):
                    yield name, value

        def _secret(self) -> str | None:
            key = self.openai_api_key
            get = getattr(key, "get_secret_value", None)
            value = get() if get else None
            return value if value and value != NO_KEY_PLACEHOLDER else None

        def _redact(self, text: str) -> str:
            secret = self._secret()
            if secret and len(secret) >= 4:
                text = text.replace(secret, "***")
            return text

        def _fail(self, what: str, *, status: int | None = None, retryable: bool = False) -> LLMCallError:
            label = PROVIDER_PRESETS.get(self.provider, {}).get("label", self.provider)
            where = f" at {public_url(self.openai_api_base)}" if self.openai_api_base else ""
            status_txt = f"HTTP {status}: " if status else ""
            tries = (self.max_retries or 0) + 1
            attempts = f" (after {tries} attempt{'s' if tries != 1 else ''})" if retryable else ""
            message = self._redact(
                f"LLM call failed{attempts} — {status_txt}{what} [provider {label}{where}, model {self.model_name}]"
            )
            return LLMCallError(
                message, status=status, provider=self.provider, model=self.model_name, retryable=retryable
            )

        def _translate(self, exc: BaseException) -> LLMCallError | None:
            if isinstance(exc, LLMCallError):
                return exc
            if isinstance(exc, openai.APITimeoutError):
                return self._fail(
                    f"no answer within the {self.request_timeout:g} s timeout (llm_timeout)", retryable=True
                )
            if isinstance(exc, openai.APIConnectionError):
                return self._fail(f"could not connect ({exc.__class__.__name__})", retryable=True)
            if isinstance(exc, openai.APIStatusError):
                status = exc.status_code
                detail = _short_error(exc)
                hint = {
                    401: "the API key was rejected; check the key in the sidebar or the environment",
                    403: "access denied for this key or model",
                    404: "model or endpoint not found; check the model name and backend_url",
                    429: "rate limited by the server",
                }.get(status, "")
                if not hint and status >= 500:
                    hint = "server error"
                what = "; ".join(p for p in (hint, detail) if p) or "request failed"
                return self._fail(what, status=status, retryable=status == 429 or status >= 500)
            if isinstance(exc, openai.APIResponseValidationError | json.JSONDecodeError):
                return self._fail("the server's answer is not valid JSON in the OpenAI format", retryable=False)
            return None

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            attempts = (self.max_retries or 0) + 1
            problem = "no attempt was made"
            for _ in range(attempts):
                with _slot(self._limiter):
                    try:
                        result = super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
                    except (openai.APIResponseValidationError, json.JSONDecodeError):
                        # a garbled body (proxy hiccup): worth another try within the budget
                        problem = "the server's answer is not valid JSON in the OpenAI format"
                        continue
                    except Exception as exc:  # noqa: BLE001 - re-raised, translated when we know it
                        translated = self._translate(exc)
                        if translated is None or translated is exc:
                            raise
                        raise translated from exc
                problem = _message_problem(result, kwargs.get("tools"))
                if problem is None:
                    return result
            raise self._fail(problem, retryable=True)

        def _stream(self, messages, stop=None, run_manager=None, **kwargs):
            with _slot(self._limiter):
                try:
                    yield from super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs)
                except Exception as exc:  # noqa: BLE001
                    translated = self._translate(exc)
                    if translated is None or translated is exc:
                        raise
                    raise translated from exc

        async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
            # The bound is a threading semaphore: run the sync path in a worker thread.
            from langchain_core.runnables.config import run_in_executor

            sync_manager = run_manager.get_sync() if run_manager else None
            return await run_in_executor(None, self._generate, messages, stop, sync_manager, **kwargs)

    return BoundedChatOpenAI


class _slot:
    """Context manager: hold one slot of the limiter (or nothing when None)."""

    __slots__ = ("_sem",)

    def __init__(self, sem: threading.BoundedSemaphore | None) -> None:
        self._sem = sem

    def __enter__(self):
        if self._sem is not None:
            self._sem.acquire()
        return self

    def __exit__(self, *exc):
        if self._sem is not None:
            self._sem.release()
        return False


def _short_error(exc: Any) -> str:
    body = getattr(exc, "body", None)
    message = None
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            message = err.get("message")
        elif isinstance(err, str):
            message = err
    if not message:
        message = getattr(exc, "message", None) or str(exc)
    message = " ".join(str(message).split())
    return message[:300]
