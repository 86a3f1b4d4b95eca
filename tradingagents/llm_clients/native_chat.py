"""The native Anthropic and Gemini chat models: ``ChatAnthropic`` and ``ChatGoogleGenerativeAI`` with the same
concurrency bound, budgets, answer checks, retries, streaming and ``LLMCallError`` as ``BoundedChatOpenAI``.

Built by ``factory.create_llm`` for a preset whose ``api`` is "anthropic" or "google" (importing this module
imports both integrations, so the factory imports it only then). Each request (every attempt):

- the run's budgets reserve its worst case first (``RunGuard.admit``, as ``openai_chat``), or refuse it;
- holds a slot of the run's limiter;
- streams (``llm_streaming``): the attempt's chunks go to the callbacks as they arrive (the live panel), and
  are assembled into that attempt's own message; a structured answer (a forced tool, a JSON schema) is
  requested unstreamed, as on OpenAI;
- the SDK's own bounded retries handle 429, 5xx and timeouts (``max_retries``, ``timeout``); an empty answer,
  a call of a tool that was not offered, tool arguments that do not parse, or a stream that broke off once
  the answer had started (which the SDKs do not retry) are retried within the same budget (a restart signal first, so the live panel drops the void text); whatever still fails becomes an
  ``LLMCallError`` naming the provider, the URL and the model (the key never appears).

Anthropic's prompt caching: the system prompt is sent with ``cache_control: {"type": "ephemeral"}``, so the
provider caches it and later calls read it from the cache. For every role after the analysts the system
prompt is the team's shared context (``agent_utils.team_context``: the preamble, the header, the four
reports, the run's material so far), the same prefix OpenAI's automatic cache matches, so the roles that
follow one another read it from the cache; the role's own instructions and what varies follow it. An
analyst's system prompt is its instructions (its tool rounds read them from the cache).

Connections: every model of the process shares one pool per API, so a new team (each run of a batch, each job,
each morning's desk run) reuses the open keep-alive connections instead of connecting and shaking hands over
TLS again. ``ChatAnthropic`` does so itself (langchain-anthropic's cached default client); a Gemini model is
handed ``text.shared_http_client()`` (``BoundedChatGoogle._share_connections``).
"""

from __future__ import annotations

import inspect
from typing import Any

import anthropic
from langchain_anthropic import ChatAnthropic
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import SystemMessage
from langchain_core.utils.utils import LC_ID_PREFIX
from langchain_google_genai import ChatGoogleGenerativeAI
from pydantic import PrivateAttr, model_validator

from tradingagents.errors import LLMCallError, RunStopped
from tradingagents.llm_clients.openai_chat import _guards, _message_problem, _reads_tokens, _refused, _slot
from tradingagents.llm_clients.streaming import restart_chunk
from tradingagents.llm_clients.text import clean_result, shared_http_client
from tradingagents.llm_presets import PROVIDER_PRESETS, public_url

__all__ = ["BoundedChatAnthropic", "BoundedChatGoogle", "CACHE_CONTROL", "offered_tools"]

CACHE_CONTROL = {"type": "ephemeral"}


def offered_tools(tools: Any) -> list[dict]:
    """The tools of a request as ``{"function": {"name": …}}`` dicts (what ``_message_problem`` reads), from
    Anthropic's ``{"name", "input_schema"}``, OpenAI's ``{"function": {"name"}}`` (what Gemini's ``bind_tools``
    keeps) or Gemini's ``function_declarations``."""
    out: list[dict] = []
    for tool in tools or []:
        if hasattr(tool, "model_dump"):
            tool = tool.model_dump(exclude_none=True)
        if not isinstance(tool, dict):
            continue
        if tool.get("name"):
            out.append({"function": {"name": tool["name"]}})
        if isinstance(tool.get("function"), dict) and tool["function"].get("name"):  # OpenAI's form (Gemini's bind)
            out.append({"function": {"name": tool["function"]["name"]}})
        for decl in tool.get("function_declarations") or tool.get("functionDeclarations") or []:
            decl = decl.model_dump(exclude_none=True) if hasattr(decl, "model_dump") else decl
            if isinstance(decl, dict) and decl.get("name"):
                out.append({"function": {"name": decl["name"]}})
    return out


class _Cut(Exception):
    """An attempt whose stream broke off after its answer started (retried within the budget)."""

    def __init__(self, message: str, shown: bool):
        super().__init__(message)
        self.shown = shown


class _Bounded:
    """What both native models add to their integration (a mixin placed before it)."""

    provider: str
    _limiter: Any

    # ------------------------------------------------------------------ naming and errors
    @property
    def _label(self) -> str:
        return str(PROVIDER_PRESETS.get(self.provider, {}).get("label", self.provider))

    def _url(self) -> str:
        raise NotImplementedError

    def _model(self) -> str:
        return str(getattr(self, "model", None) or getattr(self, "model_name", ""))

    def _fail(self, what: str, *, status: int | None = None, retryable: bool = False) -> LLMCallError:
        where = f" at {public_url(self._url())}" if self._url() else ""
        status_txt = f"HTTP {status}: " if status else ""
        tries = (self.max_retries or 0) + 1  # type: ignore[attr-defined]
        attempts = f" (after {tries} attempt{'s' if tries != 1 else ''})" if retryable else ""
        return LLMCallError(
            f"LLM call failed{attempts} — {status_txt}{what} [provider {self._label}{where}, model {self._model()}]",
            status=status, provider=self.provider, model=self._model(), retryable=retryable)

    def _status_failure(self, status: int, detail: str) -> LLMCallError:
        key_env = PROVIDER_PRESETS.get(self.provider, {}).get("key_env")
        hint = {
            400: "the request was refused",
            401: "the API key was rejected; check the key" + (f" ({key_env})" if key_env else ""),
            403: "access denied for this key or model",
            404: "model or endpoint not found; check the model name and backend_url",
            429: "rate limited by the server",
        }.get(status, "server error" if status >= 500 else "")
        what = "; ".join(p for p in (hint, " ".join(str(detail).split())[:300]) if p) or "request failed"
        return self._fail(what, status=status, retryable=status == 429 or status >= 500)

    def _not_reachable(self, exc: BaseException) -> LLMCallError:
        url = public_url(self._url()) or "the server"
        if _refused(exc):
            message = f"Could not connect to {url} — is the server running? ({self._label}, model {self._model()})"
        else:
            message = (f"Could not connect to {url} ({exc.__class__.__name__}); check the address and the "
                       f"network. ({self._label}, model {self._model()})")
        return LLMCallError(message, provider=self.provider, model=self._model(), retryable=True)

    def _translate(self, exc: BaseException) -> LLMCallError | None:
        raise NotImplementedError

    def _broke_off(self, exc: BaseException) -> bool:
        """Whether an error while a stream was read is the connection or the stream breaking (retried when
        the answer had started: the SDKs retry only what fails before it starts)."""
        names = {"RemoteProtocolError", "ReadError", "ReadTimeout", "APIConnectionError", "ChunkedEncodingError",
                 "IncompleteRead", "ConnectionResetError", "StreamClosed"}
        return any(type(c).__name__ in names or isinstance(c, ConnectionError) for c in _chain(exc))

    # ------------------------------------------------------------------ requests
    def _prepare(self, messages: list) -> list:
        return messages

    def _structured(self, kwargs: dict) -> bool:
        return False

    def _admit(self, guards: list, run_manager: Any, messages, kwargs) -> None:
        if not guards or run_manager is None:
            return
        parts: list[Any] = []
        for message in messages:
            parts.append(message.content)
            for attr in ("tool_calls", "additional_kwargs"):
                if getattr(message, attr, None):
                    parts.append(getattr(message, attr))
        parts += [repr(kwargs.get("tools")), repr(kwargs.get("response_json_schema") or kwargs.get("response_schema"))]
        for guard in guards:
            guard.admit(run_manager.run_id, self._model(), parts, self._limit())

    def _limit(self) -> int | None:
        return getattr(self, "max_tokens", None) or getattr(self, "max_output_tokens", None)

    def _should_stream(self, *, async_api, run_manager=None, **kwargs):
        # invoke: _generate streams each attempt itself (so a void attempt can be taken back)
        if run_manager is not None or self._structured(kwargs):
            return False
        return super()._should_stream(async_api=async_api, run_manager=run_manager, **kwargs)  # type: ignore[misc]

    def _attempt(self, messages, stop, run_manager, kwargs, stream: bool, message_id: str | None):
        """One request: ``(result, shown)``; ``shown``: its text went to the callbacks."""
        if not stream:
            return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs), False  # type: ignore[misc]
        readers = run_manager if run_manager is not None and _reads_tokens(run_manager) else None
        guards = _guards(run_manager)
        chunks, shown = [], False
        try:
            for chunk in super()._stream(messages, stop=stop, run_manager=None, **kwargs):  # type: ignore[misc]
                if chunk.message.id is None and message_id is not None:
                    chunk.message.id = message_id
                chunks.append(chunk)
                if readers is not None:
                    shown = True
                    readers.on_llm_new_token(chunk.text, chunk=chunk)
                if guards and any(g.stop_requested() for g in guards):
                    raise RunStopped("Stopped during a model call; the run can be resumed.")
        except RunStopped:
            raise
        except Exception as exc:  # noqa: BLE001 - a stream that broke off once the answer started is retried
            if chunks and self._broke_off(exc):
                raise _Cut("the streamed answer broke off mid-way (the connection closed inside the answer)",
                           shown) from exc
            raise
        if not chunks:
            return None, shown
        return generate_from_stream(iter(chunks)), shown

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        messages = self._prepare(list(messages))
        stream = bool(self.streaming) and not self._structured(kwargs)  # type: ignore[attr-defined]
        message_id = f"{LC_ID_PREFIX}-{run_manager.run_id}" if run_manager is not None else None
        guards = _guards(run_manager)
        problem = "no attempt was made"
        shown = False
        for _ in range((self.max_retries or 0) + 1):  # type: ignore[attr-defined]
            if shown and run_manager is not None:
                run_manager.on_llm_new_token("", chunk=restart_chunk(message_id))
            self._admit(guards, run_manager, messages, kwargs)
            with _slot(self._limiter):
                try:
                    result, shown = self._attempt(messages, stop, run_manager, kwargs, stream, message_id)
                except _Cut as cut:
                    problem, shown = str(cut), cut.shown
                    continue
                except (RunStopped, LLMCallError):
                    raise
                except Exception as exc:  # noqa: BLE001 - re-raised, translated when we know it
                    translated = self._translate(exc)
                    if translated is None:
                        raise
                    raise translated from exc
            if result is None:
                problem = "the server returned no answer"
                continue
            clean_result(result)
            problem = _message_problem(result, offered_tools(kwargs.get("tools")))
            if problem is None:
                return result
        if shown and run_manager is not None:
            run_manager.on_llm_new_token("", chunk=restart_chunk(message_id))
        raise self._fail(problem, retryable=True)

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        # the bound is a threading semaphore: run the sync path in a worker thread
        from langchain_core.runnables.config import run_in_executor

        sync_manager = run_manager.get_sync() if run_manager else None
        return await run_in_executor(None, self._generate, messages, stop, sync_manager, **kwargs)


class BoundedChatAnthropic(_Bounded, ChatAnthropic):
    """``ChatAnthropic`` bounded and checked, with the system prompt cached (see the module docstring)."""

    provider: str = "anthropic"
    _limiter: Any = PrivateAttr(default=None)

    def _url(self) -> str:
        return str(self.anthropic_api_url or "")

    def _structured(self, kwargs: dict) -> bool:
        choice = kwargs.get("tool_choice")
        return (isinstance(choice, dict) and choice.get("type") == "tool"
                or bool((kwargs.get("output_config") or {}).get("format")) or bool(kwargs.get("output_format")))

    def _prepare(self, messages: list) -> list:
        """The system prompt as a text block marked for the prompt cache (the stable prefix of the call)."""
        out = []
        for message in messages:
            if isinstance(message, SystemMessage) and isinstance(message.content, str) and message.content:
                message = message.model_copy(update={"content": [
                    {"type": "text", "text": message.content, "cache_control": dict(CACHE_CONTROL)}]})
            out.append(message)
        return out

    def _translate(self, exc: BaseException) -> LLMCallError | None:
        if isinstance(exc, LLMCallError):
            return exc
        if isinstance(exc, anthropic.APITimeoutError):
            return self._fail(f"no answer within the {self.default_request_timeout or 0:g} s timeout (llm_timeout)",
                              retryable=True)
        if isinstance(exc, anthropic.APIConnectionError):
            return self._not_reachable(exc)
        if isinstance(exc, anthropic.APIStatusError):
            body = getattr(exc, "body", None)
            detail = ((body or {}).get("error") or {}).get("message") if isinstance(body, dict) else None
            return self._status_failure(exc.status_code, detail or "")
        return None


class BoundedChatGoogle(_Bounded, ChatGoogleGenerativeAI):
    """``ChatGoogleGenerativeAI`` (the Gemini API) bounded and checked."""

    provider: str = "google"
    _limiter: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _share_connections(self) -> BoundedChatGoogle:
        """The SDK client ``ChatGoogleGenerativeAI`` built gets the process's shared HTTP client in place of
        the one it made for this model alone (unused yet: no connection is lost). Set as google-genai's
        ``HttpOptions.httpx_client``, so the SDK's own ``close`` leaves it open for the other models; a
        client the caller configured (its ``client_args``) or Vertex AI's authorised session is left alone."""
        api = getattr(getattr(self, "client", None), "_api_client", None)
        options = getattr(api, "_http_options", None)
        if (api is None or options is None or getattr(api, "vertexai", False) or options.httpx_client is not None
                or options.client_args or getattr(api, "_httpx_client", None) is None):
            return self
        own = api._httpx_client
        options.httpx_client = api._httpx_client = shared_http_client()
        own.close()
        return self

    def _url(self) -> str:
        base = self.base_url
        if isinstance(base, dict):
            base = base.get("api_endpoint")
        return str(base or "")

    def _model(self) -> str:
        return str(self.model).removeprefix("models/")

    def _structured(self, kwargs: dict) -> bool:
        return bool(kwargs.get("response_json_schema") or kwargs.get("response_schema")
                    or kwargs.get("response_mime_type") == "application/json")

    def _translate(self, exc: BaseException) -> LLMCallError | None:
        from google.genai import errors as genai_errors

        if isinstance(exc, LLMCallError):
            return exc
        for cause in _chain(exc):
            if isinstance(cause, genai_errors.APIError):
                return self._status_failure(int(cause.code or 0), cause.message or "")
        for cause in _chain(exc):
            if type(cause).__name__ in ("ConnectError", "ConnectTimeout") or isinstance(cause, ConnectionError):
                return self._not_reachable(cause)
            if type(cause).__name__ in ("ReadTimeout", "TimeoutException", "WriteTimeout"):
                return self._fail(f"no answer within the {self.timeout or 0:g} s timeout (llm_timeout)", retryable=True)
        return None


def _chain(exc: BaseException):
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


# LangChain inspects ``_generate``'s signature on every call; it never changes
_Bounded._generate.__signature__ = inspect.signature(_Bounded._generate)  # type: ignore[attr-defined]
