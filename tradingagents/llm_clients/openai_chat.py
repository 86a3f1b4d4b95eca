"""The networked chat model: ``ChatOpenAI`` with a concurrency bound, answer checks and ``LLMCallError``.

``BoundedChatOpenAI`` (built by ``factory.create_llm``; importing this module imports
langchain-openai, so the factory imports it only when a networked model is asked for):

- retries 429, 5xx and timeouts with the OpenAI SDK's own bounded exponential backoff
  (``max_retries``, ``timeout``);
- retries an empty answer, or a tool call naming a tool that was not offered, within the same
  retry budget;
- turns whatever still fails into ``LLMCallError`` (status, provider, model, a plain message; a
  refused connection says "could not connect to <url> — is the server running?");
- holds a slot of its limiter (a ``threading.BoundedSemaphore``) around every request.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import openai
from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from tradingagents.errors import LLMCallError
from tradingagents.llm_clients.text import clean_message, clean_result, valid_text
from tradingagents.llm_presets import PROVIDER_PRESETS, public_url

NO_KEY_PLACEHOLDER = "not-needed"


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


def _refused(exc: BaseException) -> bool:
    """Whether a connection error is a refused connection (nothing listens at that address)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or "connection refused" in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False


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

    @property
    def _label(self) -> str:
        return str(PROVIDER_PRESETS.get(self.provider, {}).get("label", self.provider))

    def _fail(self, what: str, *, status: int | None = None, retryable: bool = False) -> LLMCallError:
        where = f" at {public_url(self.openai_api_base)}" if self.openai_api_base else ""
        status_txt = f"HTTP {status}: " if status else ""
        tries = (self.max_retries or 0) + 1
        attempts = f" (after {tries} attempt{'s' if tries != 1 else ''})" if retryable else ""
        message = self._redact(
            f"LLM call failed{attempts} — {status_txt}{what} [provider {self._label}{where}, model {self.model_name}]"
        )
        return LLMCallError(message, status=status, provider=self.provider, model=self.model_name, retryable=retryable)

    def _not_reachable(self, exc: BaseException) -> LLMCallError:
        url = public_url(self.openai_api_base) or "the server"
        tries = (self.max_retries or 0) + 1
        if _refused(exc):
            message = f"Could not connect to {url} — is the server running? ({self._label}, model {self.model_name})"
        else:
            message = (f"Could not connect to {url} after {tries} attempt{'s' if tries != 1 else ''} "
                       f"({exc.__class__.__name__}); check the address and the network. "
                       f"({self._label}, model {self.model_name})")
        return LLMCallError(self._redact(message), provider=self.provider, model=self.model_name, retryable=True)

    def _translate(self, exc: BaseException) -> LLMCallError | None:
        if isinstance(exc, LLMCallError):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            return self._fail(f"no answer within the {self.request_timeout:g} s timeout (llm_timeout)", retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return self._not_reachable(exc)
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _short_error(exc)
            key_env = PROVIDER_PRESETS.get(self.provider, {}).get("key_env")
            hint = {
                401: "the API key was rejected; check the key" + (f" ({key_env})" if key_env else ""),
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
            clean_result(result)  # valid Unicode on receipt: no lone surrogate goes any further
            problem = _message_problem(result, kwargs.get("tools"))
            if problem is None:
                return result
        raise self._fail(problem, retryable=True)

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        with _slot(self._limiter):
            try:
                for chunk in super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs):
                    clean_message(getattr(chunk, "message", None))
                    if isinstance(getattr(chunk, "text", None), str):
                        chunk.text = valid_text(chunk.text)
                    yield chunk
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
