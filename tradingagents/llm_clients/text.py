"""Model text made valid Unicode on receipt: lone surrogates (``\\ud800``) become U+FFFD.

A JSON answer may carry ``"\\ud800"``, which Python decodes to a lone surrogate: a ``str`` that
cannot be encoded to UTF-8, so the first file write, SQLite insert or terminal print of it raises
``UnicodeEncodeError`` — one node after the answer arrived, and again on every resume. The chat
model cleans every answer (content, tool-call arguments, structured output, streamed chunks)
before anything else sees it, so nothing downstream can meet such a string.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

import httpx


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (a valid pair is kept as its character)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        # through UTF-16 with surrogatepass, a valid pair recombines and a lone half becomes U+FFFD
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def valid_data(value: Any) -> Any:
    """``value`` (str, list, tuple, dict, or other) with every string in it made valid."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_data(k): valid_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(valid_data(v) for v in value)
    return value


def clean_message(message: Any) -> Any:
    """Clean an AI message (or chunk) in place: content, tool calls, tool-call chunks, extra kwargs."""
    for attr in ("content", "tool_calls", "invalid_tool_calls", "tool_call_chunks", "additional_kwargs"):
        value = getattr(message, attr, None)
        if value is not None and _has_bad(value):
            try:
                setattr(message, attr, valid_data(value))
            except (AttributeError, TypeError, ValueError):
                pass
    return message


def _has_bad(value: Any) -> bool:
    """Whether any string in ``value`` cannot be encoded to UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return False
        except UnicodeEncodeError:
            return True
    if isinstance(value, dict):
        return any(_has_bad(k) or _has_bad(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_bad(v) for v in value)
    return False


def clean_result(result: Any) -> Any:
    """Clean every generation of a ChatResult (message and text) in place; returns it."""
    for gen in getattr(result, "generations", None) or []:
        message = getattr(gen, "message", None)
        if message is not None:
            clean_message(message)
        text = getattr(gen, "text", None)
        if isinstance(text, str) and _has_bad(text):
            try:
                gen.text = valid_text(text)
            except (AttributeError, TypeError, ValueError):
                pass
    return result


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def valid_json_body(body: bytes) -> bytes | None:
    """A JSON body re-encoded without lone surrogates, or None when it has none (or is not JSON).

    The OpenAI SDK parses a structured answer (``response_format``) itself, with pydantic, which
    refuses the whole answer on one ``"\\ud800"`` escape — in the body, or inside the answer's
    own JSON text; cleaning both before the SDK reads them keeps the structured answer (cleaned)
    instead of losing it to the plain-text fallback.
    """
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    fixed = _valid_embedded(data)
    if fixed == data and not _has_bad(data):
        return None  # only valid pairs
    return json.dumps(fixed).encode("ascii")


def _valid_embedded(value: Any) -> Any:
    """``valid_data``, and a string that is itself JSON with a lone-surrogate escape is re-encoded."""
    if isinstance(value, str):
        text = valid_text(value)
        if text[:1] in "{[" and _SURROGATE_ESCAPE.search(text.encode("utf-8")):
            try:
                inner = json.loads(text)
            except ValueError:
                return text
            if _has_bad(inner):
                return json.dumps(valid_data(inner), ensure_ascii=False)
        return text
    if isinstance(value, dict):
        return {k: _valid_embedded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_valid_embedded(v) for v in value]
    return value


def sse_data(parts: Iterable[bytes]) -> Iterator[list[bytes]]:
    """The ``data`` of a server-sent-event body, one list per part read: the events it completed.

    One pass over each part as it arrives (the OpenAI SDK's decoder splits and decodes it line by line,
    then builds an object per event): events end at a blank line (CRLF, LF or CR line ends), the
    lines of an event's ``data`` fields are joined with LF, comments (keep-alive ``: ping``) and the
    other fields (``event``, ``id``, ``retry``) are skipped, an event without data is none, and an
    unterminated event at the body's end is dropped, as the SDK does. ``data: [DONE]`` ends the body:
    the events before it in its part come first, nothing after it is read.
    """
    rest = b""
    for part in parts:
        buf = rest + part if rest else part
        if b"\r" in buf:
            held = b""
            if buf.endswith(b"\r"):  # the first half of a CRLF split between two parts
                buf, held = buf[:-1], b"\r"
            buf = buf.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + held
        if b"\n\n" not in buf:
            rest = buf
            continue
        blocks = buf.split(b"\n\n")
        rest = blocks.pop()
        batch: list[bytes] = []
        for block in blocks:
            if block.startswith(b"data: ") and b"\n" not in block:  # one data line: nearly every event
                data = block[6:]
            else:
                data = _event_data(block)
                if data is None:
                    continue
            if data.startswith(b"[DONE]"):
                if batch:
                    yield batch
                return
            batch.append(data)
        if batch:
            yield batch


def _event_data(block: bytes) -> bytes | None:
    """The data of one event's lines (LF-separated), or None when it has no data field."""
    lines = []
    for line in block.split(b"\n"):
        if line.startswith(b"data"):
            field, _, value = line.partition(b":")
            if field == b"data":
                lines.append(value[1:] if value.startswith(b" ") else value)
    return b"\n".join(lines) if lines else None


class StreamCut(httpx.RemoteProtocolError):
    """The body of a streamed (SSE) answer broke off after the server had started answering."""


class StreamStalled(httpx.ReadTimeout):
    """The body of a streamed (SSE) answer stopped arriving for longer than the timeout."""


class StreamOverdue(StreamStalled):
    """A streamed answer still unfinished at its deadline (``STREAM_DEADLINE_FACTOR`` × the timeout),
    however steadily its events arrive."""


# one streamed attempt may take at most this many times the read timeout (llm_timeout) in all: a
# server that sends one event just inside the timeout cannot hold a call for ever
STREAM_DEADLINE_FACTOR = 5.0


class _MarkedBody(httpx.SyncByteStream):
    """An SSE body whose read errors say they happened mid-answer (``StreamCut`` / ``StreamStalled``).

    The OpenAI SDK retries a request that fails before its answer starts, but an error while the
    SSE body is read reaches the caller as the same ``APIConnectionError`` / ``APITimeoutError``
    as a refused connection; the mark (its ``__cause__``) lets the chat model retry a cut stream
    within its own attempt budget instead of reporting an unreachable server.
    """

    # After the SSE ``data: [DONE]`` event only the body's end is left. The SDK's sync stream stops
    # reading there and closes the response, and httpx drops a connection whose body was not read to
    # the end: every streamed call then opened a new connection (a TLS handshake with a real
    # provider). Once [DONE] has gone by, close() reads that end first so the connection is reused.
    _DONE = b"data: [DONE]"
    _DRAIN_LIMIT = 64 * 1024

    def __init__(self, inner: httpx.SyncByteStream, timeout: float | None = None) -> None:
        self.inner = inner
        self._parts = None
        self._tail = b""
        self._done_seen = False
        self._timeout = timeout if timeout and timeout > 0 else None

    def __iter__(self):
        # the read timeout bounds the wait for bytes; on top of it an idle bound per *event* (bytes that
        # carry no "data" line, such as keep-alive comments, do not count) and a deadline for the body
        timeout = self._timeout
        start = last_event = time.monotonic()
        self._parts = iter(self.inner)
        try:
            for part in self._parts:
                window = self._tail + part
                if not self._done_seen:
                    self._done_seen = self._DONE in window
                self._tail = window[-len(self._DONE):]
                if timeout is not None:
                    now = time.monotonic()
                    if b"data" in window:
                        last_event = now
                    elif now - last_event > timeout:
                        raise StreamStalled(f"no event for {now - last_event:.1f} s (timeout {timeout:g} s)")
                    if now - start > timeout * STREAM_DEADLINE_FACTOR and not self._done_seen:
                        raise StreamOverdue(f"unfinished after {now - start:.1f} s")
                yield part
        except StreamStalled:
            raise
        except httpx.TimeoutException as exc:
            raise StreamStalled(f"the streamed answer stalled: {exc}") from exc
        except httpx.TransportError as exc:
            raise StreamCut(f"the streamed answer broke off: {exc}") from exc
        finally:
            self._parts = None

    def close(self) -> None:
        if self._done_seen and self._parts is not None:
            read = 0
            try:
                for part in self._parts:  # the terminating chunk, normally already received
                    read += len(part)
                    if read > self._DRAIN_LIMIT:
                        break
            except (httpx.HTTPError, OSError):
                pass  # the connection is dropped instead, as without the drain
        self.inner.close()


def _batched_chunked_reader() -> type | None:
    """h11's reader of a chunked body, made to hand on every whole chunk already received as one piece."""
    try:
        import h11
        from h11._readers import ChunkedReader, chunk_header_re
    except ImportError:  # another HTTP/1.1 library under httpx: nothing to batch
        return None

    class BatchedChunkedReader(ChunkedReader):
        """h11 turns each HTTP chunk into its own ``Data`` event, and httpcore, httpx and the SSE reader
        each hand it on as its own part: a streamed answer is one chunk per SSE event, so that chain ran
        ~80 times a call. This reader returns the whole chunks at the front of the receive buffer as one
        ``Data`` (HTTP gives chunk boundaries no meaning) and leaves anything else (a chunk not complete
        yet, the last chunk and trailer, a malformed chunk: h11 raises) to h11's own reading. It never
        waits for more, so text still goes on as it arrives."""

        def __init__(self, reader: ChunkedReader) -> None:  # takes over a reader at a chunk boundary
            self.__dict__.update(reader.__dict__)

        def __call__(self, buf: Any) -> Any:
            if self._bytes_in_chunk or self._reading_trailer or not buf:
                return ChunkedReader.__call__(self, buf)
            data = bytes(buf)
            end = len(data)
            pos = len(self._bytes_to_discard)  # the CRLF after a chunk h11 read
            if pos and not data.startswith(self._bytes_to_discard):
                return ChunkedReader.__call__(self, buf)
            pieces = []
            while True:
                eol = data.find(b"\r\n", pos)
                if eol < 0:
                    break
                header = chunk_header_re.fullmatch(data, pos, eol + 2)
                if header is None:
                    break
                size = int(header["chunk_size"], 16)
                start = eol + 2
                stop = start + size
                if size == 0 or stop + 2 > end or data[stop:stop + 2] != b"\r\n":
                    break
                pieces.append(data[start:stop])
                pos = stop + 2
            if not pieces:
                return ChunkedReader.__call__(self, buf)
            self._bytes_to_discard = b""
            buf.maybe_extract_at_most(pos)
            return h11.Data(data=b"".join(pieces), chunk_start=True, chunk_end=True)

    return BatchedChunkedReader


_BATCHED_READER = _batched_chunked_reader()


def batch_chunked_body(stream: Any) -> bool:
    """Read the chunked body of an httpx response ``stream`` (from ``httpx.HTTPTransport``) with
    ``BatchedChunkedReader``; False (nothing changed) when the stream is not one httpcore reads
    over HTTP/1.1 with h11's chunked reader (HTTP/2, another transport, another library version)."""
    if _BATCHED_READER is None:
        return False
    try:
        h11_state = stream._httpcore_stream._stream._connection._h11_state
        reader = h11_state._reader
    except AttributeError:
        return False
    if type(reader) is not _BATCHED_READER.__mro__[1]:
        return False
    h11_state._reader = _BATCHED_READER(reader)
    return True


class ValidUnicodeTransport(httpx.BaseTransport):
    """An httpx transport that hands on JSON responses with every lone surrogate replaced (and marks
    the read errors of an SSE body, see ``_MarkedBody``, whose chunks already received it reads as one
    part, see ``batch_chunked_body``)."""

    def __init__(self, inner: httpx.BaseTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if "json" not in response.headers.get("content-type", ""):
            # SSE streams are cleaned per chunk by the chat model
            if isinstance(response.stream, httpx.SyncByteStream):
                if "event-stream" in response.headers.get("content-type", ""):
                    batch_chunked_body(response.stream)
                timeout = (request.extensions.get("timeout") or {}).get("read")
                response.stream = _MarkedBody(response.stream, timeout)
            return response
        body = response.read()
        fixed = valid_json_body(body)
        if fixed is None:
            return response
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")]
        return httpx.Response(response.status_code, headers=headers, content=fixed, request=request,
                              extensions=response.extensions)

    def close(self) -> None:
        self.inner.close()


_SSL_CONTEXT: list = []


def _ssl_context():
    """One TLS context for every client of the process: loading the CA bundle takes ~20 ms a client."""
    if not _SSL_CONTEXT:
        _SSL_CONTEXT.append(httpx.create_ssl_context())
    return _SSL_CONTEXT[0]


class _SharedClient(httpx.Client):
    """The process's client: every chat model holds it, so none of them may close it for the others."""

    def close(self) -> None:
        """Nothing: the connections outlive any one model (they close with the process)."""


_SHARED_CLIENTS: dict[Hashable, httpx.Client] = {}
_SHARED_LOCK = threading.Lock()


def _forget_shared_clients() -> None:
    """In a forked child: drop the parent's clients unclosed (their sockets are the parent's)."""
    global _SHARED_LOCK
    _SHARED_LOCK = threading.Lock()
    _SHARED_CLIENTS.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_shared_clients)


def valid_unicode_http_client(auth: tuple[str, str] | None = None) -> httpx.Client:
    """The process's ``httpx.Client`` for the OpenAI SDK (one per basic-auth pair), whose JSON answers
    never carry a lone surrogate.

    Shared by every chat model the process builds, as langchain-openai shares its default client: a
    new team (each run of a batch, each job of the app) reuses the open keep-alive connections instead
    of connecting (and, to a real provider, shaking hands over TLS) again. Nothing per model lives in
    it: the key, the timeout and the retries travel with each request."""
    return _shared(("openai", auth), lambda: _SharedClient(
        transport=ValidUnicodeTransport(httpx.HTTPTransport(verify=_ssl_context())), follow_redirects=True, auth=auth))


def shared_http_client() -> httpx.Client:
    """The process's plain ``httpx.Client`` for an SDK that takes one (google-genai, for the Gemini models):
    shared as ``valid_unicode_http_client`` is, for the same reason; the SDK sends the key, the timeout and
    its retries with each request, and leaves a client it was given open."""
    return _shared("plain", lambda: _SharedClient(verify=_ssl_context(), follow_redirects=True))


def _shared(key: Hashable, build: Callable[[], httpx.Client]) -> httpx.Client:
    with _SHARED_LOCK:
        client = _SHARED_CLIENTS.get(key)
        if client is None:
            client = _SHARED_CLIENTS[key] = build()
        return client


def async_http_client(**kwargs: Any) -> httpx.AsyncClient:
    """The async client langchain-openai insists on building (``BoundedChatOpenAI`` runs its async calls
    on the sync path in a worker thread, so it is not used): built from the shared TLS context, it
    spares the SDK's own (a second HTTP stack imported and a CA bundle loaded, ~0.17 s a process)."""
    return httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(verify=_ssl_context()), follow_redirects=True,
                             **kwargs)
