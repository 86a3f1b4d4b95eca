"""The fast paths of the networked chat model that reach into the OpenAI SDK's internals, in one place.

``BoundedChatOpenAI`` (``openai_chat.py``) talks to the SDK's public API; the factory wraps its
``client.chat.completions`` in ``dict_chunks`` (``_DictChunks``), which skips work the SDK does per call
and per streamed event without changing what comes out:

- ``_DictChunks.create`` / ``parse`` send a plain JSON request through the SDK's ``_post`` without its
  ``maybe_transform`` of the body (``_post``, ``_post_parse``: the SDK's ``make_request_options``,
  ``openai.lib._parsing``);
- an unstreamed answer is built by strict pydantic validation (``_checked_completion``: the SDK's
  ``build`` hook, ``openai._models.construct_type`` for what does not validate);
- a streamed answer's SSE body is read by our own parser (``_events`` over ``text.sse_data``) and its
  chunks handed on as dicts (``_EventStream``), or merged into one when nobody reads the tokens
  (``_CoalescedStream``, ``coalesce_chunks``); ``with_raw_response`` keeps langchain-openai's raw
  wrapper (``openai._legacy_response``).

They were measured, and their equality with the SDK's own path pinned (``tests/test_sdk_fast_paths.py``:
the same request body, the same parsed answer, the same ChatCompletion), on the SDK versions of
``MEASURED_SDK`` (constraints.txt pins one of them). With any other SDK version ``dict_chunks`` leaves
the client as the SDK made it: slower, never different.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import json
from typing import Any

import httpx
import openai

from tradingagents.errors import RunStopped
from tradingagents.llm_clients.text import sse_data

# the OpenAI SDK releases the fast paths were measured on and checked against (major, minor)
MEASURED_SDK: tuple[tuple[int, int], ...] = ((3, 57),)


def sdk_version() -> tuple[int, int] | None:
    """The installed SDK's (major, minor), None when its version does not read as numbers."""
    try:
        major, minor = openai.__version__.split(".")[:2]
        return int(major), int(minor)
    except (AttributeError, ValueError):
        return None


def measured() -> bool:
    """Whether the installed SDK is one the fast paths were measured on."""
    return sdk_version() in MEASURED_SDK


try:  # the OpenAI SDK's own HTTP library (it also accepts, and our factory passes, an httpx client)
    import httpx2

    _TIMEOUTS: tuple[type[BaseException], ...] = (httpx.TimeoutException, httpx2.TimeoutException)
    _REQUEST_ERRORS: tuple[type[BaseException], ...] = (httpx.RequestError, httpx2.RequestError)
except ImportError:  # an SDK built on httpx alone
    _TIMEOUTS = (httpx.TimeoutException,)
    _REQUEST_ERRORS = (httpx.RequestError,)


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
    """``client`` (the SDK's ``chat.completions``) with the fast paths; as it is on an SDK they were not
    measured on (``MEASURED_SDK``)."""
    if client is None or isinstance(client, _DictChunks) or not measured():
        return client
    return _DictChunks(client)
