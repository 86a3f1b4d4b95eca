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
A structured answer (``response_format``: ``with_structured_output``, the portfolio manager's
rating) is requested unstreamed even then: the SDK's streaming API parses the JSON as it arrives and
refuses a lone-surrogate escape that the unstreamed path cleans before parsing (``text``), and JSON
is no text to watch. Its message reaches the live panel whole, when it is done, as before.
Off (``streaming=False``, ``disable_streaming=True``): one JSON request per attempt, as before.
"""

from __future__ import annotations

import contextvars
import functools
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
from tradingagents.llm_clients.streaming import restart_chunk
from tradingagents.llm_clients.text import (
    STREAM_DEADLINE_FACTOR,
    StreamCut,
    StreamOverdue,
    StreamStalled,
    clean_message,
    clean_result,
    sse_data,
    valid_text,
)
from tradingagents.llm_presets import PROVIDER_PRESETS, public_url

NO_KEY_PLACEHOLDER = "not-needed"

try:  # the OpenAI SDK's own HTTP library (it also accepts, and our factory passes, an httpx client)
    import httpx2

    _TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (httpx.TransportError, httpx2.TransportError)
    _BROKE_OFF: tuple[type[BaseException], ...] = (httpx.RemoteProtocolError, httpx2.RemoteProtocolError)
    _TIMEOUTS: tuple[type[BaseException], ...] = (httpx.TimeoutException, httpx2.TimeoutException)
    _REQUEST_ERRORS: tuple[type[BaseException], ...] = (httpx.RequestError, httpx2.RequestError)
except ImportError:  # an SDK built on httpx alone
    _TRANSPORT_ERRORS = (httpx.TransportError,)
    _BROKE_OFF = (httpx.RemoteProtocolError,)
    _TIMEOUTS = (httpx.TimeoutException,)
    _REQUEST_ERRORS = (httpx.RequestError,)


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


class _DictChunks:
    """``client.chat.completions`` whose streams yield each chunk as its parsed JSON (a dict), read by
    our own parser (``_events``).

    langchain-openai takes a dict chunk as it is (it calls ``model_dump()`` on anything else), so the
    SDK's per-chunk model construction (``construct_type``, then dumped back to a dict) is skipped:
    it cost more than everything else a streamed run does; so is the SDK's line-by-line SSE decoder
    (``text.sse_data`` splits each part read in one pass, one ``json.loads`` per part). ``create`` and
    ``parse`` send a plain JSON request without the SDK's transform of it (``_post``, ``_post_parse``);
    anything else passes through.
    """

    __slots__ = ("_inner",)

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def create(self, *args: Any, **kwargs: Any) -> Any:
        result = self._post(kwargs) if not args else None
        if result is None:
            result = self._inner.create(*args, **kwargs)
        if isinstance(result, openai.Stream) and getattr(result, "response", None) is not None:
            merging = _COALESCE.get()
            return _CoalescedStream(result, merging) if merging is not None else _EventStream(result)
        return result

    def _body(self, kwargs: dict, method: str) -> dict | None:
        """The request body of ``method(**kwargs)`` as given (options and unset values left out), or None
        when ``kwargs`` is not a plain JSON request of names ``method`` takes."""
        names = _method_names(self._inner, method)
        if names is None or "messages" not in kwargs or "model" not in kwargs:
            return None
        body = {}
        for key, value in kwargs.items():
            if key not in names:
                return None
            if key in _OPTION_NAMES or isinstance(value, _NOT_GIVEN):
                continue
            if not _plain_json(value):
                return None
            body[key] = value
        return body

    def _post(self, kwargs: dict) -> Any:
        """What ``create(**kwargs)`` returns, sent without the SDK's ``maybe_transform`` of the request, or
        None (then ``create`` sends it) when ``kwargs`` is not a plain JSON request of names ``create``
        takes. The transform walks every message and tool against the SDK's TypedDicts (~1 ms a call
        with our prompts) and, for the chat-completions parameters, changes nothing in a plain JSON
        request: no field has an alias or a format (``test_llm_sse`` checks that it gives the same body).
        """
        body = self._body(kwargs, "create")
        if body is None or not isinstance(body.get("response_format", {}), dict):
            return None
        from openai.types.chat import ChatCompletion, ChatCompletionChunk

        options = _request_options(kwargs)
        stream = bool(body.get("stream"))
        return self._inner._post("/chat/completions", body=body, options=options,
                                 cast_to=ChatCompletion if stream else _checked_completion(),
                                 stream=stream, stream_cls=openai.Stream[ChatCompletionChunk])

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        result = self._post_parse(kwargs) if not args else None
        return result if result is not None else self._inner.parse(*args, **kwargs)

    def _post_parse(self, kwargs: dict) -> Any:
        """What ``parse(**kwargs)`` (a structured answer: ``response_format`` a pydantic model) returns, sent
        as the SDK's ``parse`` sends it but without its transform (see ``_post``), or None (then the SDK's
        ``parse`` sends it) when the request is not plain JSON or names tools (the SDK checks and rewrites
        those). The rest is the SDK's own: the schema as ``response_format``, its helper header, and its
        parser that validates the answer into the model (``test_llm_sse`` compares the two)."""
        schema = kwargs.get("response_format")
        if not isinstance(schema, type) or "tools" in kwargs or "stream" in kwargs:
            return None
        body = self._body({k: v for k, v in kwargs.items() if k != "response_format"}, "parse")
        if body is None:
            return None
        from openai.lib._parsing import parse_chat_completion, type_to_response_format_param

        def parser(raw: Any) -> Any:
            return parse_chat_completion(response_format=schema, chat_completion=raw, input_tools=[])

        body["stream"] = False
        body["response_format"] = type_to_response_format_param(schema)
        headers = {"X-Stainless-Helper-Method": "chat.completions.parse", **(kwargs.get("extra_headers") or {})}
        options = _request_options({**kwargs, "extra_headers": headers}, post_parser=parser)
        return self._inner._post("/chat/completions", body=body, options=options, cast_to=_checked_completion(),
                                 stream=False)

    @property
    def with_raw_response(self) -> Any:
        # langchain-openai sends unstreamed requests this way (``to_raw_response_wrapper`` of ``create``,
        # as the SDK's own ``CompletionsWithRawResponse`` builds it): ours, so they skip the transform too
        return _RawResponse(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _RawResponse:
    """``_DictChunks.with_raw_response``: ``create`` and ``parse`` through ``_DictChunks``, the rest the SDK's."""

    __slots__ = ("_chunks", "create", "parse")

    def __init__(self, chunks: _DictChunks) -> None:
        from openai import _legacy_response

        self._chunks = chunks
        self.create = _legacy_response.to_raw_response_wrapper(chunks.create)
        self.parse = _legacy_response.to_raw_response_wrapper(chunks.parse)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._chunks._inner.with_raw_response, name)


@functools.cache
def _checked_completion() -> type:
    """``cast_to`` of an unstreamed answer: a ``ChatCompletion`` whose ``build`` (the SDK's hook for a type
    that builds itself) validates the JSON strictly with pydantic and, for JSON that does not pass
    (a field of another type than the SDK declares), builds it as the SDK does (``construct_type``). The
    SDK's own building walks every field in Python (~0.1 ms an answer); strict validation takes only
    what already has the declared types, unchanged, so the answer is the same ChatCompletion, field for
    field (``test_llm_sse`` compares them)."""
    import pydantic
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    class CheckedChatCompletion(ChatCompletion):
        @classmethod
        def build(cls, *, response: Any, data: object) -> ChatCompletion:
            # log probabilities are the answer's only floats, which validation would turn from 0 into 0.0
            choices = data.get("choices") if isinstance(data, dict) else None
            if isinstance(choices, list) and not any(isinstance(c, dict) and c.get("logprobs") is not None
                                                     for c in choices):
                try:
                    return ChatCompletion.model_validate(data, strict=True)
                except pydantic.ValidationError:
                    pass
            return construct_type(type_=ChatCompletion, value=data)

    return CheckedChatCompletion


_OPTION_NAMES = frozenset(("extra_headers", "extra_query", "extra_body", "timeout"))


def _request_options(kwargs: dict, **more: Any) -> Any:
    """The SDK's request options of a call's ``_OPTION_NAMES`` (and ``more``), as its own methods make them."""
    from openai._base_client import make_request_options

    return make_request_options(extra_headers=kwargs.get("extra_headers"), extra_query=kwargs.get("extra_query"),
                                extra_body=kwargs.get("extra_body"), timeout=kwargs.get("timeout", openai.NOT_GIVEN),
                                security={"bearer_auth": True}, **more)
_NOT_GIVEN: tuple[type, ...] = tuple(t for t in (getattr(openai, "NotGiven", None), getattr(openai, "Omit", None)) if t)


@functools.cache
def _method_names_of(kind: type, method: str) -> frozenset | None:
    """The keyword names ``kind.<method>`` takes."""
    try:
        params = inspect.signature(getattr(kind, method)).parameters
    except (AttributeError, TypeError, ValueError):
        return None
    names = frozenset(n for n, p in params.items() if n != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))
    return names or None


def _method_names(completions: Any, method: str) -> frozenset | None:
    return _method_names_of(type(completions), method) if callable(getattr(completions, "_post", None)) else None


def _plain_json(value: Any) -> bool:
    """Whether ``value`` is made of dicts with str keys, lists, str, int, float, bool and None only."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(k) is str and _plain_json(v) for k, v in value.items())
    if kind is list:
        return all(_plain_json(v) for v in value)
    return False


def _events(response: Any) -> Any:
    """The chunks of a streamed answer's SSE body as dicts, one list per part read (``text.sse_data``).

    What the SDK's stream raises, this raises: a read timeout as ``APITimeoutError``, another transport
    error as ``APIConnectionError`` (each from the transport's error, marked mid-answer by
    ``text._MarkedBody``), a ``data: {"error": …}`` event as ``APIError``, JSON that does not parse as
    ``json.JSONDecodeError``; an event that is no JSON object counts as unparseable too. The response
    is closed when the body ends, at ``[DONE]`` or on an error (after ``[DONE]`` the body's end is
    read first, so the connection is reused).
    """
    request = response.request
    parts = response.iter_bytes()  # held until the response is closed: close() drains it after [DONE]
    try:
        for batch in sse_data(parts):
            chunks, garbled = _parse_batch(batch)
            for i, chunk in enumerate(chunks):
                if type(chunk) is dict and not chunk.get("error"):
                    continue
                if i:
                    yield chunks[:i]  # the events before it came first, as from the SDK
                if type(chunk) is not dict:
                    raise json.JSONDecodeError("a streamed event is not a JSON object", str(chunk)[:80], 0)
                error = chunk["error"]
                message = error.get("message") if isinstance(error, dict) else None
                if not message or not isinstance(message, str):
                    message = "An error occurred during streaming"
                raise openai.APIError(message=message, request=request, body=error)
            if chunks:
                yield chunks
            if garbled is not None:
                raise garbled
    except _TIMEOUTS as err:
        raise openai.APITimeoutError(request=request) from err
    except _REQUEST_ERRORS as err:
        raise openai.APIConnectionError(request=request) from err
    finally:
        response.close()


def _parse_batch(batch: list[bytes]) -> tuple[list, ValueError | None]:
    """``(parsed events, the error of the first that does not parse, or None)``: one ``json.loads`` for
    the whole batch, event by event only when that fails."""
    if len(batch) > 1:
        try:
            chunks = json.loads(b"[" + b",".join(batch) + b"]")
        except ValueError:
            chunks = None
        if isinstance(chunks, list) and len(chunks) == len(batch):
            return chunks, None
    chunks = []
    for data in batch:
        try:
            try:
                chunks.append(json.loads(data))
            except UnicodeDecodeError:  # bytes that are no UTF-8 become U+FFFD, as a lone surrogate does
                chunks.append(json.loads(data.decode("utf-8", "replace")))
        except ValueError as exc:
            return chunks, exc
    return chunks, None


class _EventStream:
    """An SDK stream read by ``_events``: each chunk handed on (a dict) as soon as its part arrived."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __enter__(self) -> _EventStream:
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.close()
        return False

    def close(self) -> None:
        self._inner.close()

    def __iter__(self):
        for chunks in _events(self._inner.response):
            yield from chunks


# set by a streamed attempt whose chunks nobody reads (``_streamed_attempts(coalesce=True)``), read by
# ``_DictChunks.create`` in the same thread: langchain-openai calls it inside the attempt's iteration
_COALESCE: contextvars.ContextVar[_Coalesce | None] = contextvars.ContextVar("ta_coalesce_stream", default=None)


class _Coalesce:
    """One coalesced attempt: the run's guards (checked between events, as per chunk otherwise) and how
    many events arrived (an attempt cut after some of them broke off mid-way)."""

    __slots__ = ("guards", "received")

    def __init__(self, guards: list) -> None:
        self.guards = guards
        self.received = 0


class _CoalescedStream(_EventStream):
    """An SDK stream read to its end by ``_events``, then handed on as ``coalesce_chunks`` of its chunks.
    The stop signal is checked whenever events arrive (each part read)."""

    __slots__ = ("_state",)

    def __init__(self, inner: Any, state: _Coalesce) -> None:
        super().__init__(inner)
        self._state = state

    def __iter__(self):
        events: list = []
        state = self._state
        guards = state.guards
        for chunks in _events(self._inner.response):
            state.received += len(chunks)
            events += chunks
            if guards and any(g.stop_requested() for g in guards):
                raise RunStopped("Stopped during a model call; the run can be resumed.")
        yield from coalesce_chunks(events)


def coalesce_chunks(events: list) -> list:
    """The dict chunks of one streamed answer with its text and tool-call pieces merged into one chunk.

    Parsing a chunk (langchain-openai builds a message chunk per event, then adds them all up) costs
    more than the rest of a streamed call; with nobody reading the tokens, one merged chunk gives the
    same answer. The merge is what adding the chunks up gives: text and tool-call arguments joined in
    order, a tool call's id, type and name from its first piece, the finish chunk's finish reason,
    model, fingerprint and tier; chunks without choices (usage) follow unchanged. Anything it does
    not cover exactly (several choices, log-probabilities, a function call, a repeated tool name or
    id, two finish reasons, a non-dict event) keeps the chunks as they came.
    """
    body: list[dict] = []
    rest: list = []
    for event in events:
        if not isinstance(event, dict) or event.get("type"):
            return events
        choices = event.get("choices")
        if not choices:
            rest.append(event)
            continue
        choice = choices[0]
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if (len(choices) != 1 or not isinstance(delta, dict) or choice.get("index", 0) != 0
                or choice.get("logprobs") or event.get("usage") or delta.get("function_call")):
            return events
        body.append(event)
    if len(body) < 2:
        return events
    role = None
    text: list[str] = []
    calls: dict[Any, dict[str, Any]] = {}
    finish = None
    for event in body:
        choice = event["choices"][0]
        delta = choice["delta"]
        role = role or delta.get("role")
        if delta.get("content"):
            text.append(delta["content"])
        for part in delta.get("tool_calls") or ():
            if not isinstance(part, dict) or "index" not in part or not isinstance(part.get("function"), dict):
                return events
            fn = part["function"]
            call = calls.get(part["index"])
            if call is None:
                calls[part["index"]] = {"index": part["index"], "id": part.get("id"), "type": part.get("type"),
                                        "function": {"name": fn.get("name"), "arguments": fn.get("arguments") or ""}}
                continue
            if part.get("id") is not None or fn.get("name") is not None:
                return events  # adding up would join the repeated pieces: keep them as they came
            call["function"]["arguments"] += fn.get("arguments") or ""
        if choice.get("finish_reason"):
            if finish is not None:
                return events
            finish = event
    delta: dict[str, Any] = {"content": "".join(text)}
    if role:
        delta["role"] = role
    if calls:
        delta["tool_calls"] = list(calls.values())
    last = finish or body[-1]
    merged = {**last, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                   "finish_reason": last["choices"][0].get("finish_reason")}]}
    return [merged, *rest]


def dict_chunks(client: Any) -> Any:
    return client if client is None or isinstance(client, _DictChunks) else _DictChunks(client)


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
