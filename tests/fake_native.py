"""Real HTTP servers on 127.0.0.1 speaking Anthropic's Messages API and the Gemini API, for tests.

``FakeAnthropicServer`` serves ``POST /v1/messages`` (JSON, and ``stream: true`` as Anthropic's SSE events:
message_start, content_block_start/delta/stop with text_delta and input_json_delta, message_delta with the
whole usage as the API now sends it, message_stop). ``FakeGeminiServer`` serves ``POST /v1beta/models/<model>:generateContent`` and
``:streamGenerateContent?alt=sse``. Both translate the request into the chat-completions shape that
``tests.fake_openai.agentic_responder`` reads and answer with what it decides (tool calls with arguments from
the tools' schemas, JSON for a forced tool or a response schema, else a text with ``**Rating**: <rating>``),
so the whole graph runs through them. Usage is counted as ``fake_openai`` counts it (4 characters a token).

The Anthropic fake keeps a prompt cache as Anthropic's does: a system block marked ``cache_control`` is
written on first sight (``cache_creation_input_tokens``) and read on every later request that starts with it
(``cache_read_input_tokens``); ``input_tokens`` is the rest.

``server.faults`` (a list of HTTP statuses) makes the next requests fail with those statuses, in each API's
error format, one request each; ``server.cuts`` (event counts) makes the next streamed answers stop after
that many events with the connection closed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from tests.fake_openai import KeptAliveHandler, _tokens, agentic_responder, end_kept_alive


def _lower_types(schema: Any) -> Any:
    """Gemini's OpenAPI-style schema (``"type": "OBJECT"``) as JSON schema (``"object"``)."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema


class _Handler(KeptAliveHandler):
    fake: _FakeBase

    def log_message(self, format, *args):  # noqa: A002 - quiet
        pass

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        status, payload, events = self.fake.handle(self.path, body, dict(self.headers))
        if events is None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            if status >= 400:  # a retry soon (the SDKs honour it), so a test of retries does not wait seconds
                self.send_header("retry-after-ms", "10")
                self.send_header("retry-after", "0")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        cut = self.fake._cut()
        for i, event in enumerate(events):
            if cut is not None and i >= cut:  # the server dies mid-answer: the connection closes
                self.close_connection = True
                return
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True


class _FakeBase:
    path_prefix = ""

    def __init__(self, *, rating: str = "Hold", responder: Callable[[dict], dict] | None = None):
        self.rating = rating
        self.responder = responder or (lambda req: agentic_responder(req, rating=self.rating))
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.billed: list[tuple[str, int, int]] = []
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""
        self.faults: list[int] = []  # HTTP statuses the next requests get instead of an answer, in order
        self.cuts: list[int] = []  # the next streamed answers stop after this many events, the connection closed
        self.connections = 0  # TCP connections accepted: a client that reuses its connection opens one
        self._idle_connections: set = set()  # kept alive, waiting for their next request
        self._stop = threading.Event()

    def _cut(self) -> int | None:
        with self._lock:
            return self.cuts.pop(0) if self.cuts else None

    def _fault(self) -> int | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    def start(self):
        handler = type("BoundHandler", (_Handler,), {"fake": self})
        self._stop.clear()
        self._server = _Server(("127.0.0.1", 0), handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        end_kept_alive(self)  # as a real server does: the process's shared pools drop them
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _record(self, body: dict, headers: dict) -> int:
        with self._lock:
            self.requests.append(body)
            self.headers.append({k.lower(): v for k, v in headers.items()})
            return len(self.requests)

    def handle(self, path: str, body: dict, headers: dict) -> tuple[int, Any, list[bytes] | None]:
        raise NotImplementedError


# ------------------------------------------------------------------------------------------- Anthropic
class FakeAnthropicServer(_FakeBase):
    """Anthropic's Messages API on 127.0.0.1 (see the module docstring)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self.cached: set[str] = set()
        self.cache_reads = 0

    def llm_config(self, **overrides: Any) -> dict[str, Any]:
        cfg = {"llm_provider": "anthropic", "backend_url": self.base_url, "quick_think_llm": "claude-haiku-4-5",
               "deep_think_llm": "claude-sonnet-4-5", "llm_timeout": 10.0, "llm_max_retries": 2}
        return {**cfg, **overrides}

    @staticmethod
    def chat_body(body: dict) -> dict:
        """The request as the chat-completions body ``agentic_responder`` reads."""
        messages: list[dict] = []
        system = body.get("system")
        if system:
            text = system if isinstance(system, str) else " ".join(b.get("text", "") for b in system)
            messages.append({"role": "system", "content": text})
        for msg in body.get("messages") or []:
            content = msg.get("content")
            if isinstance(content, str):
                messages.append({"role": msg["role"], "content": content})
                continue
            texts = [b.get("text", "") for b in content if b.get("type") == "text"]
            for block in content:
                if block.get("type") == "tool_result":
                    messages.append({"role": "tool", "content": json.dumps(block.get("content"), default=str)})
            if texts or msg["role"] == "assistant":
                messages.append({"role": msg["role"], "content": " ".join(texts)})
        tools = [{"type": "function", "function": {"name": t.get("name"), "parameters": t.get("input_schema") or {}}}
                 for t in body.get("tools") or []]
        choice = body.get("tool_choice") or {}
        out: dict[str, Any] = {"messages": messages, "tools": tools, "model": body.get("model")}
        if choice.get("type") == "tool":
            out["tool_choice"] = {"type": "function", "function": {"name": choice.get("name")}}
        elif choice.get("type") == "none":
            out["tool_choice"] = "none"
        fmt = (body.get("output_config") or {}).get("format") or body.get("output_format") or {}
        if fmt.get("type") == "json_schema":  # native structured output: the answer is JSON text
            out["response_format"] = {"type": "json_schema", "json_schema": {"schema": fmt.get("schema") or {}}}
            out["tools"] = []
        return out

    def _usage(self, body: dict, answer_tokens: int) -> dict[str, int]:
        system = body.get("system")
        prompt = _tokens(body.get("messages") or []) + _tokens(json.dumps(body.get("tools") or []))
        usage = {"input_tokens": prompt, "output_tokens": answer_tokens,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        if isinstance(system, list):
            for block in system:
                tokens = _tokens(block.get("text", ""))
                if block.get("cache_control"):
                    with self._lock:
                        hit = block.get("text", "") in self.cached
                        self.cached.add(block.get("text", ""))
                        self.cache_reads += hit
                    usage["cache_read_input_tokens" if hit else "cache_creation_input_tokens"] += tokens
                else:
                    usage["input_tokens"] += tokens
        elif system:
            usage["input_tokens"] += _tokens(system)
        return usage

    def handle(self, path: str, body: dict, headers: dict):
        if urlsplit(path).path.rstrip("/") != "/v1/messages":
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": f"no route {path}"}}, None
        n = self._record(body, headers)
        if (status := self._fault()) is not None:
            kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
            return status, {"type": "error", "error": {"type": kind, "message": f"HTTP {status} (fake server)"}}, None
        answer = self.responder(self.chat_body(body))
        content: list[dict] = []
        if answer.get("content"):
            content.append({"type": "text", "text": answer["content"]})
        for i, call in enumerate(answer.get("tool_calls") or []):
            args = call["arguments"] if isinstance(call["arguments"], dict) else json.loads(call["arguments"])
            content.append({"type": "tool_use", "id": f"toolu_{n}_{i}", "name": call["name"], "input": args})
        stop = "tool_use" if answer.get("tool_calls") else "end_turn"
        out_tokens = _tokens(content)
        usage = self._usage(body, out_tokens)
        with self._lock:
            self.billed.append((str(body.get("model")), usage["input_tokens"] + usage["cache_read_input_tokens"]
                                + usage["cache_creation_input_tokens"], out_tokens, usage["cache_read_input_tokens"]))
        message = {"id": f"msg_fake_{n}", "type": "message", "role": "assistant", "model": body.get("model"),
                   "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            return 200, message, None

        def event(kind: str, data: dict) -> bytes:
            return f"event: {kind}\ndata: {json.dumps(data)}\n\n".encode()

        start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
        events = [event("message_start", {"type": "message_start", "message": start})]
        for i, block in enumerate(content):
            if block["type"] == "text":
                events.append(event("content_block_start", {"type": "content_block_start", "index": i,
                                                            "content_block": {"type": "text", "text": ""}}))
                text = block["text"]
                for at in range(0, len(text), 24):
                    events.append(event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                        "type": "text_delta", "text": text[at:at + 24]}}))
            else:
                events.append(event("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
                raw = json.dumps(block["input"])
                for at in range(0, len(raw), 24):
                    events.append(event("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {
                        "type": "input_json_delta", "partial_json": raw[at:at + 24]}}))
            events.append(event("content_block_stop", {"type": "content_block_stop", "index": i}))
        events.append(event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop,
                                              "stop_sequence": None}, "usage": usage}))
        events.append(event("message_stop", {"type": "message_stop"}))
        return 200, None, events


# ------------------------------------------------------------------------------------------- Gemini
class FakeGeminiServer(_FakeBase):
    """The Gemini API (generateContent, streamGenerateContent) on 127.0.0.1 (see the module docstring)."""

    def llm_config(self, **overrides: Any) -> dict[str, Any]:
        cfg = {"llm_provider": "google", "backend_url": self.base_url, "quick_think_llm": "gemini-2.5-flash",
               "deep_think_llm": "gemini-2.5-pro", "llm_timeout": 10.0, "llm_max_retries": 2}
        return {**cfg, **overrides}

    @staticmethod
    def chat_body(body: dict) -> dict:
        messages: list[dict] = []
        system = body.get("systemInstruction") or body.get("system_instruction")
        if system:
            messages.append({"role": "system", "content": " ".join(p.get("text", "") for p in system.get("parts") or [])})
        for item in body.get("contents") or []:
            parts = item.get("parts") or []
            for part in parts:
                if "functionResponse" in part or "function_response" in part:
                    messages.append({"role": "tool", "content": json.dumps(part, default=str)})
            texts = [p["text"] for p in parts if "text" in p]
            if texts or item.get("role") == "model":
                messages.append({"role": "assistant" if item.get("role") == "model" else "user",
                                 "content": " ".join(texts)})
        tools = []
        for tool in body.get("tools") or []:
            for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
                params = decl.get("parametersJsonSchema") or _lower_types(decl.get("parameters") or {})
                tools.append({"type": "function", "function": {"name": decl.get("name"), "parameters": params}})
        out: dict[str, Any] = {"messages": messages, "tools": tools}
        calling = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {})
        allowed = calling.get("allowedFunctionNames") or []
        if calling.get("mode") == "ANY" and len(allowed) == 1:
            out["tool_choice"] = {"type": "function", "function": {"name": allowed[0]}}
        elif calling.get("mode") == "NONE":
            out["tool_choice"] = "none"
        gen = body.get("generationConfig") or {}
        schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
        if schema:
            out["response_format"] = {"type": "json_schema", "json_schema": {"schema": _lower_types(schema)}}
            out["tools"] = []
        return out

    def handle(self, path: str, body: dict, headers: dict):
        route = urlsplit(path).path
        model, _, method = route.rpartition("/models/")[2].partition(":")
        if method not in ("generateContent", "streamGenerateContent"):
            return 404, {"error": {"code": 404, "message": f"no route {path}", "status": "NOT_FOUND"}}, None
        self._record(body, headers)
        if (status := self._fault()) is not None:
            name = {401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(status, "INTERNAL")
            return status, {"error": {"code": status, "message": f"HTTP {status} (fake server)", "status": name}}, None
        answer = self.responder(self.chat_body(body))
        parts: list[dict] = []
        if answer.get("content"):
            parts.append({"text": answer["content"]})
        for call in answer.get("tool_calls") or []:
            args = call["arguments"] if isinstance(call["arguments"], dict) else json.loads(call["arguments"])
            parts.append({"functionCall": {"name": call["name"], "args": args}})
        prompt = _tokens(body.get("contents") or []) + _tokens(json.dumps(body.get("systemInstruction") or {}))
        out_tokens = _tokens(parts)
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": out_tokens, "totalTokenCount": prompt + out_tokens}
        with self._lock:
            self.billed.append((model, prompt, out_tokens, 0))
        response = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                    "usageMetadata": usage, "modelVersion": model}
        if method == "generateContent":
            return 200, response, None
        events = []
        text_parts = [p for p in parts if "text" in p]
        if text_parts:
            text = text_parts[0]["text"]
            pieces = [text[at:at + 48] for at in range(0, len(text), 48)]
            for piece in pieces[:-1]:
                chunk = {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}, "index": 0}],
                         "modelVersion": model}
                events.append(f"data: {json.dumps(chunk)}\r\n\r\n".encode())
            last_parts = [{"text": pieces[-1]}] + [p for p in parts if "text" not in p]
        else:
            last_parts = parts
        last = {**response, "candidates": [{"content": {"role": "model", "parts": last_parts},
                                            "finishReason": "STOP", "index": 0}]}
        events.append(f"data: {json.dumps(last)}\r\n\r\n".encode())
        return 200, None, events


__all__ = ["FakeAnthropicServer", "FakeGeminiServer"]
