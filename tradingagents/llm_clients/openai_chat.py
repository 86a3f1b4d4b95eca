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

Streaming (``streaming=True``, the factory's default from ``llm_streaming``): each attempt is
one ``stream: true`` request whose chunks go to the callbacks as they arrive (``on_llm_new_token``:
LangGraph's ``messages`` mode, the live panel) and are assembled into that attempt's own message.
The attempt is then checked like an unstreamed answer; on top of the SDK's retries (which end once
an answer starts), a stream cut or stalled mid-way, garbled, or ended without a finish reason is
retried within the same budget. Before a retry the callbacks get ``streaming.restart_chunk()``, so a
live display drops the void text; the returned message holds the good attempt's text only.
``invoke`` streams this way (``_generate``); ``.stream()`` yields an attempt's chunks once the
attempt is known good (a caller cannot take back chunks it was given). The chunks go to the
callbacks only when one of them reads tokens; when none does, ``invoke`` reads the attempt's events
to the end and merges them before they are parsed (``coalesce_chunks``), the stop signal still
checked as events arrive. The SSE body is read by our own parser (``_events`` over ``text.sse_data``:
the SDK's errors, one pass and one ``json.loads`` per part read), and the transport hands on the HTTP
chunks already received as one part (``text.BatchedChunkedReader``), never waiting for more.
A request of plain JSON skips the SDK's ``maybe_transform`` (``_DictChunks._post``), streamed or not.
These fast paths reach into the SDK's internals: they live in ``sdk_fast_paths.py``, with the SDK
versions they were measured on.
A structured answer (``response_format``: ``with_structured_output``, the portfolio manager's
rating) is requested unstreamed even then: the SDK's streaming API parses the JSON as it arrives and
refuses a lone-surrogate escape that the unstreamed path cleans before parsing (``text``), and JSON
is no text to watch. Its message reaches the live panel whole, when it is done, as before.
Off (``streaming=False``, ``disable_streaming=True``): one JSON request per attempt, as before.
"""

from __future__ import annotations

import inspect
import json
import threading
from typing import Any

import httpx
import openai
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.utils.utils import LC_ID_PREFIX
from langchain_openai import ChatOpenAI
from pydantic import PrivateAttr

from tradingagents.errors import LLMCallError, RunStopped
from tradingagents.llm_clients.sdk_fast_paths import (  # noqa: F401 - the fast paths' names, used here and re-exported
    _COALESCE,
    _checked_completion,
    _Coalesce,
    _DictChunks,
    _events,
    coalesce_chunks,
    dict_chunks,
)
from tradingagents.llm_clients.streaming import restart_chunk
from tradingagents.llm_clients.text import (
    STREAM_DEADLINE_FACTOR,
    StreamCut,
    StreamOverdue,
    StreamStalled,
    clean_message,
    clean_result,
    valid_text,
)
from tradingagents.llm_presets import PROVIDER_PRESETS, public_url

NO_KEY_PLACEHOLDER = "not-needed"

try:  # the OpenAI SDK's own HTTP library (it also accepts, and our factory passes, an httpx client)
    import httpx2

    _TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError, httpx2.TransportError)
    _BROKE_OFF: tuple[type[BaseException], ...] = (httpx.RemoteProtocolError, httpx2.RemoteProtocolError)
except ImportError:  # an SDK built on httpx alone
    _TRANSPORT_ERRORS = (httpx.TransportError,)
    _BROKE_OFF = (httpx.RemoteProtocolError,)


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


def _causes(exc: BaseException):
    """``exc`` and the exceptions it came from (``__cause__`` / ``__context__``), each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _cut_mid_stream(exc: BaseException, started: bool) -> str | None:
    """Why a streamed attempt broke off once the server had started answering, or None.

    The SDK retries what fails before an answer starts; an error while the SSE body is read
    (marked by the transport: ``StreamCut`` / ``StreamStalled``, or any connection error once a
    chunk has arrived) reaches us unretried.
    """
    if not isinstance(exc, (openai.APIConnectionError, *_TRANSPORT_ERRORS)):
        return None
    causes = list(_causes(exc))
    if any(isinstance(c, StreamOverdue) for c in causes):
        return (f"the streamed answer was still unfinished at its deadline ({STREAM_DEADLINE_FACTOR:g} × "
                "llm_timeout), though its events kept coming")
    if any(isinstance(c, StreamStalled) for c in causes):
        return "the streamed answer stalled mid-way (no data within the llm_timeout)"
    if started or any(isinstance(c, StreamCut) for c in causes):
        return "the streamed answer broke off mid-way (the connection closed inside the answer)"
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
            if any(isinstance(c, _BROKE_OFF) for c in _causes(exc)):
                # it connected, and the server (or a proxy) hung up inside its answer
                return self._fail("the server closed the connection inside its answer", retryable=True)
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
        if self.streaming and not kwargs.get("response_format"):
            return self._generate_streamed(messages, stop=stop, run_manager=run_manager, **kwargs)
        attempts = (self.max_retries or 0) + 1
        problem = "no attempt was made"
        guards = _guards(run_manager)
        for _ in range(attempts):
            self._admit(guards, run_manager, messages, kwargs)
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
            problem, final = _finish_problem(_finish_reasons(result.generations), self.max_tokens)
            if final:
                raise self._fail(problem)
            if problem is None:
                problem = _message_problem(result, kwargs.get("tools"))
            if problem is None:
                return result
        raise self._fail(problem, retryable=True)

    def _admit(self, guards: list, run_manager: Any, messages, kwargs) -> None:
        """Before each request: the run's budgets reserve its worst case, or refuse it (``BudgetExceeded``)."""
        if not guards or run_manager is None:
            return
        parts: list[Any] = []
        for message in messages:
            parts.append(message.content)
            for attr in ("tool_calls", "additional_kwargs"):
                if getattr(message, attr, None):
                    parts.append(getattr(message, attr))
        parts += [kwargs.get("tools"), kwargs.get("functions"), kwargs.get("response_format")]
        for guard in guards:
            guard.admit(run_manager.run_id, self.model_name, parts, kwargs.get("max_tokens") or self.max_tokens)

    # ---------------------------------------------------------------- streaming
    def _should_stream(self, *, async_api, run_manager=None, **kwargs):
        # invoke (a run manager is open): _generate streams each attempt itself, so the text is live
        # and a retried attempt can be taken back; .stream() (no run manager yet) uses _stream. A
        # structured answer is never streamed (see the module docstring).
        if run_manager is not None or kwargs.get("response_format"):
            return False
        return super()._should_stream(async_api=async_api, run_manager=run_manager, **kwargs)

    def _streamed_attempts(self, messages, stop, run_manager, kwargs, control=None, *, coalesce=False
                           ) -> tuple[list, Any]:
        """``(chunks, ChatResult)`` of the first good streamed attempt; each chunk went to ``run_manager``
        as it arrived. ``control``: the call's run manager when ``run_manager`` is None (``.stream()``),
        for the run's guards (budget, stop signal). ``coalesce``: the caller wants the answer only, so
        when no callback reads tokens the attempt's chunks are merged before they are parsed
        (``coalesce_chunks``)."""
        attempts = (self.max_retries or 0) + 1
        problem = "no attempt was made"
        message_id = f"{LC_ID_PREFIX}-{run_manager.run_id}" if run_manager is not None else None
        control = control if control is not None else run_manager
        guards = _guards(control)
        # each chunk goes to the callbacks only when one of them reads chunks (LangGraph's "messages"
        # mode, a user's streaming handler); handing ~80 chunks a call to handlers that ignore them
        # (the usage tracker, the budget guard) is per-chunk work for nothing
        if run_manager is not None and not _reads_tokens(run_manager):
            run_manager = None
        coalesce = coalesce and run_manager is None
        shown = False  # whether the callbacks hold text (or chunks) of a void attempt

        def take_back() -> None:
            nonlocal shown
            if shown and run_manager is not None:
                run_manager.on_llm_new_token("", chunk=restart_chunk(message_id))
            shown = False

        for _ in range(attempts):
            take_back()
            self._admit(guards, control, messages, kwargs)
            chunks: list = []
            with _slot(self._limiter):
                merging = _Coalesce(guards) if coalesce else None
                context = _COALESCE.set(merging)
                stream = super()._stream(messages, stop=stop, run_manager=None, **kwargs)
                try:
                    for chunk in stream:
                        clean_message(chunk.message)  # valid Unicode before anyone sees the chunk
                        if isinstance(chunk.text, str):
                            chunk.text = valid_text(chunk.text)
                        if chunk.message.id is None and message_id is not None:
                            chunk.message.id = message_id
                        chunks.append(chunk)
                        if run_manager is not None:
                            shown = True
                            run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                        if guards and any(g.stop_requested() for g in guards):
                            raise RunStopped("Stopped during a model call; the run can be resumed.")
                except (openai.APIResponseValidationError, json.JSONDecodeError):
                    problem = "the server's answer is not valid JSON in the OpenAI format"
                    continue
                except ValueError as exc:
                    if not kwargs.get("response_format"):
                        raise
                    # the SDK parses a structured answer as it streams: text that is not JSON is a
                    # parse failure, as the unstreamed parse reports it (invoke_structured falls back)
                    raise OutputParserException(f"the structured answer is not valid JSON: {exc}") from exc
                except Exception as exc:  # noqa: BLE001 - re-raised, translated when we know it
                    cut = _cut_mid_stream(exc, bool(chunks) or bool(merging and merging.received))
                    if cut is None and type(exc) is openai.APIError:
                        # a `data: {"error": ...}` event inside the stream (the SDK raises the bare class)
                        cut = f"the server reported an error inside its streamed answer: {_short_error(exc)}"
                    if cut is not None:
                        problem = cut
                        continue
                    take_back()  # the call fails: its text so far is void too
                    translated = self._translate(exc)
                    if translated is None or translated is exc:
                        raise
                    raise translated from exc
                finally:
                    stream.close()  # an attempt given up mid-way drops its connection now
                    _COALESCE.reset(context)
            # a cut answer first: its tool arguments are cut too, and the limit is the reason
            problem, final = _finish_problem(
                [(c.generation_info or {}).get("finish_reason") for c in chunks], self.max_tokens)
            if final:
                take_back()
                raise self._fail(problem)
            if problem is None:
                problem = _stream_problem(chunks)
            if problem is None:
                result = clean_result(generate_from_stream(iter(chunks)))
                problem = _message_problem(result, kwargs.get("tools"))
            if problem is None:
                return chunks, result
        take_back()
        raise self._fail(problem, retryable=True)

    def _generate_streamed(self, messages, stop=None, run_manager=None, **kwargs):
        return self._streamed_attempts(messages, stop, run_manager, kwargs, coalesce=True)[1]

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        # the chunks of the good attempt only, once it is known good (see the module docstring)
        for chunk in self._streamed_attempts(messages, stop, None, kwargs, control=run_manager)[0]:
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(self, messages, stop=None, run_manager=None, **kwargs):
        from langchain_core.runnables.config import run_in_executor

        control = run_manager.get_sync() if run_manager is not None else None
        chunks, _ = await run_in_executor(None, self._streamed_attempts, messages, stop, None, kwargs, control)
        for chunk in chunks:
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _agenerate(self, messages, stop=None, run_manager=None, **kwargs):
        # The bound is a threading semaphore: run the sync path (streamed or not) in a worker thread.
        from langchain_core.runnables.config import run_in_executor

        sync_manager = run_manager.get_sync() if run_manager else None
        return await run_in_executor(None, self._generate, messages, stop, sync_manager, **kwargs)


# LangChain inspects ``_generate``'s signature on every call (does it take run_manager?); it never
# changes, so it is worked out once (``inspect.signature`` returns a function's ``__signature__``)
BoundedChatOpenAI._generate.__signature__ = inspect.signature(BoundedChatOpenAI._generate)  # type: ignore[attr-defined]


def _stream_problem(chunks: list) -> str | None:
    """Why a stream that ended without an error is still incomplete, or None."""
    if not chunks:
        return "the server's streamed answer was empty (no events)"
    # the streamed tool calls' arguments, strictly: assembling the chunks parses them leniently
    # (partial JSON), so "{not json" would become {} where an unstreamed answer is refused
    calls: dict[Any, list[str]] = {}
    for chunk in chunks:
        for part in getattr(chunk.message, "tool_call_chunks", None) or []:
            name, args = calls.setdefault(part.get("index"), ["", ""])
            calls[part.get("index")] = [name + (part.get("name") or ""), args + (part.get("args") or "")]
    for name, args in calls.values():
        if args.strip():
            try:
                parsed = json.loads(args)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                return f"the model called {name} with arguments that are not valid JSON"
    if not any((c.generation_info or {}).get("finish_reason") for c in chunks):
        # a body that simply ends (no chunked framing, a proxy closing early) looks complete to
        # the client; every OpenAI-compatible server ends an answer with a finish_reason
        return ("the streamed answer ended without a finish reason (cut off?); if a proxy buffers or cuts "
                "server-sent events, set llm_streaming to false")
    return None


def _finish_reasons(generations) -> list:
    return [(g.generation_info or {}).get("finish_reason") for g in generations or []]


def _finish_problem(reasons: list, max_tokens: Any) -> tuple[str | None, bool]:
    """``(problem, final)`` of an answer's finish reasons: an answer the provider cut off is never taken
    as complete. ``length`` (the output limit) is final, a retry would be cut at the same place;
    ``content_filter`` is retried."""
    if "length" in reasons:
        limit = f" of {max_tokens} tokens" if max_tokens else ""
        return (f"the answer was cut off at the output limit{limit} (finish_reason length); raise "
                "llm_max_output_tokens or use a model with a larger output", True)
    if "content_filter" in reasons:
        return "the provider's content filter stopped the answer (finish_reason content_filter)", False
    return None, False


def _reads_tokens(run_manager: Any) -> bool:
    """Whether any handler of a call's run manager does something with streamed tokens (overrides
    ``on_llm_new_token`` and does not ignore LLM events)."""
    from langchain_core.callbacks.base import BaseCallbackHandler

    base = BaseCallbackHandler.on_llm_new_token
    for handler in getattr(run_manager, "handlers", None) or ():
        if getattr(handler, "ignore_llm", False):
            continue
        method = getattr(type(handler), "on_llm_new_token", base)
        if method is not base:
            return True
    return False


def _guards(run_manager: Any) -> list:
    """The run's guards (``usage.RunGuard``: budget and stop signal) among a call's callbacks."""
    return [h for h in getattr(run_manager, "handlers", None) or () if hasattr(h, "admit")]


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
