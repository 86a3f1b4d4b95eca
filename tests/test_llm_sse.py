"""Our own reading of a streamed answer's SSE body (``text.sse_data``, ``openai_chat._events``).

The unit part feeds ``sse_data`` bodies cut at awkward places; the end-to-end part serves raw SSE bytes
(keep-alive comments, CRLF line ends split between TCP writes, an event without data, a lone-surrogate
escape, a mid-stream error event, a body cut inside an event) to the real langchain-openai client
built by ``create_llm``, with a token reader (chunks handed on as they come) and without (merged).
"""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage

from tradingagents.errors import LLMCallError
from tradingagents.llm_clients import create_llm
from tradingagents.llm_clients.text import sse_data

PROMPT = [HumanMessage("Go.")]


def _parts(body: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *cuts, len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False) if b > a]


def _all(parts) -> list[bytes]:
    return [data for batch in sse_data(parts) for data in batch]


# ------------------------------------------------------------------ the splitter
def test_events_are_the_same_wherever_the_body_is_cut():
    body = (b": keep-alive\r\n\r\ndata: {\"a\": 1}\r\n\r\nevent: ping\r\n\r\nid: 7\ndata: {\"b\":\r\ndata: 2}\n\n"
            b"data:{\"c\": 3}\r\rdata: [DONE]\n\n")
    expected = [b'{"a": 1}', b'{"b":\n2}', b'{"c": 3}']
    assert _all([body]) == expected
    for cut in range(1, len(body)):  # every single cut, CRLFs and blank lines split included
        assert _all(_parts(body, [cut])) == expected, cut
    assert _all([bytes([b]) for b in body]) == expected  # byte by byte


def test_one_part_is_one_batch_and_done_ends_the_reading():
    read: list[int] = []

    def parts():
        for i, part in enumerate([b"data: 1\n\ndata: 2\n\ndata: 3\n", b"\ndata: [DONE]\n\ndata: 4\n\n", b"data: 5\n\n"]):
            read.append(i)
            yield part

    assert list(sse_data(parts())) == [[b"1", b"2"], [b"3"]]  # nothing after [DONE]
    assert read == [0, 1]  # the part after the one holding [DONE] is never asked for


def test_an_unterminated_event_at_the_end_is_dropped():
    assert _all([b"data: 1\n\ndata: 2\n"]) == [b"1"]
    assert _all([b": only a comment\n\n", b"\n\n\n"]) == []


# ------------------------------------------------------------------ a raw SSE server
def _chunk(text: str, finish=None, delta=None) -> bytes:
    event = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "raw",
             "choices": [{"index": 0, "delta": delta if delta is not None else {"content": text},
                          "finish_reason": finish}]}
    return b"data: " + json.dumps(event).encode() + b"\r\n\r\n"


USAGE = (b'data: {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "raw", "choices": [],'
         b' "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}\r\n\r\n')
GOOD = (b": keep-alive\r\n\r\n" + _chunk("", delta={"role": "assistant", "content": ""})
        + _chunk("Hello ").replace(b"Hello ", b"Hello \\ud800 ") + b"event: ping\r\n\r\n"
        + _chunk("world") + _chunk("", finish="stop", delta={}) + USAGE + b"data: [DONE]\r\n\r\n")


class _RawSSE:
    """HTTP/1.1 on 127.0.0.1, keep-alive, answering each POST with the next body of ``bodies`` (the
    last one repeats) as chunked SSE, written in pieces cut at ``cuts``; ``cut_body`` bodies end the
    connection inside the body (no terminating chunk)."""

    def __init__(self, bodies: list[tuple[bytes, bool]], cuts=(7, 40, 41, 200)) -> None:
        self.bodies = bodies
        self.cuts = list(cuts)
        self.requests = 0
        self.connections = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length"))
                while len(buf) < length:
                    buf += conn.recv(65536)
                buf = buf[length:]
                body, cut = self.bodies[min(self.requests, len(self.bodies) - 1)]
                self.requests += 1
                wire = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + b"%x\r\n%s\r\n" % (len(body), body) + (b"" if cut else b"0\r\n\r\n"))
                for piece in _parts(wire, [c + wire.index(b"\r\n\r\n") for c in self.cuts]):
                    conn.sendall(piece)
                    time.sleep(0.002)  # separate reads on the client side
                if cut:
                    conn.shutdown(socket.SHUT_RDWR)
                    return

    def llm(self, **extra):
        cfg = {"llm_provider": "openai_compatible", "backend_url": self.base_url, "quick_think_llm": "raw",
               "deep_think_llm": "raw", "llm_timeout": 10.0, "llm_max_retries": 1, **extra}
        return create_llm(cfg)

    def close(self) -> None:
        self._sock.close()


class _Tokens(BaseCallbackHandler):
    def __init__(self):
        self.seen: list[str] = []

    def on_llm_new_token(self, token, **kwargs):
        self.seen.append(token)


@pytest.fixture
def raw():
    servers: list[_RawSSE] = []

    def make(*bodies: tuple[bytes, bool]) -> _RawSSE:
        servers.append(_RawSSE(list(bodies)))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


@pytest.mark.parametrize("reader", [True, False], ids=["token-reader", "merged"])
def test_comments_crlf_and_a_lone_surrogate_and_one_connection(raw, reader):
    server = raw((GOOD, False))
    llm = server.llm()
    for _ in range(2):
        tokens = _Tokens()
        answer = llm.invoke(PROMPT, config={"callbacks": [tokens]} if reader else None)
        assert answer.content == "Hello \ufffd world"  # the lone surrogate arrived cleaned
        assert answer.response_metadata["finish_reason"] == "stop"
        assert answer.usage_metadata["output_tokens"] == 3
        if reader:  # handed on as they came, each chunk on its own
            assert [t for t in tokens.seen if t] == ["Hello \ufffd ", "world"]
    assert server.requests == 2 and server.connections == 1  # [DONE], then the body's end: reused


@pytest.mark.parametrize("reader", [True, False], ids=["token-reader", "merged"])
def test_bytes_that_are_no_utf8_become_replacement_characters(raw, reader):
    body = GOOD.replace(b"world", b"w\xffrld")
    answer = raw((body, False)).llm().invoke(PROMPT, config={"callbacks": [_Tokens()]} if reader else None)
    assert answer.content == "Hello \ufffd w\ufffdrld"


@pytest.mark.parametrize("reader", [True, False], ids=["token-reader", "merged"])
def test_a_body_cut_inside_an_event_is_retried(raw, reader):
    cut = GOOD[: GOOD.index(b"world") + 2]
    server = raw((cut, True), (GOOD, False))
    answer = server.llm().invoke(PROMPT, config={"callbacks": [_Tokens()]} if reader else None)
    assert answer.content == "Hello \ufffd world" and server.requests == 2


@pytest.mark.parametrize("reader", [True, False], ids=["token-reader", "merged"])
def test_an_error_event_inside_the_stream_is_retried_then_reported(raw, reader):
    error = _chunk("Hel") + b'data: {"error": {"message": "the model overloaded mid-answer"}}\r\n\r\n'
    server = raw((error, False), (GOOD, False))
    config = {"callbacks": [_Tokens()]} if reader else None
    assert server.llm().invoke(PROMPT, config=config).content == "Hello \ufffd world"
    server = raw((error, False))
    with pytest.raises(LLMCallError, match="error inside its streamed answer: the model overloaded mid-answer"):
        server.llm().invoke(PROMPT, config=config)
    assert server.requests == 2


@pytest.mark.parametrize("reader", [True, False], ids=["token-reader", "merged"])
def test_garbled_events_are_retried_as_invalid_json(raw, reader):
    garbled = _chunk("Hello ") + b'data: {"id": "c1", "choices": [\r\n\r\n' + _chunk("x", finish="stop")
    not_object = _chunk("Hello ") + b"data: 42\r\n\r\n" + b"data: [DONE]\r\n\r\n"
    config = {"callbacks": [_Tokens()]} if reader else None
    for bad in (garbled, not_object):
        server = raw((bad, False))
        with pytest.raises(LLMCallError, match="not valid JSON in the OpenAI format"):
            server.llm().invoke(PROMPT, config=config)
        assert server.requests == 2


@pytest.mark.parametrize("reader", [True, False], ids=["token-reader", "merged"])
def test_stop_ends_a_stream_at_its_next_events_not_at_its_end(reader):
    """The stream holds after 3 events; Stop is pressed; the events up to the next hold arrive and the
    call ends there with RunStopped (merged or not), the stream's end never read."""
    from tests.fake_openai import FakeOpenAIServer, Fault
    from tradingagents.errors import RunStopped
    from tradingagents.llm_clients.usage import RunGuard

    gate = threading.Semaphore(0)
    stop = threading.Event()
    with FakeOpenAIServer(lambda body: {"content": "A long answer in many pieces. " * 40}) as server:
        server.inject(Fault.hold_stream(3, 6, gate=gate))
        llm = create_llm(server.llm_config(llm_max_retries=0))
        callbacks = [RunGuard(should_stop=stop.is_set)] + ([_Tokens()] if reader else [])
        outcome: dict = {}

        def call():
            try:
                outcome["answer"] = llm.invoke(PROMPT, config={"callbacks": callbacks})
            except BaseException as exc:  # noqa: BLE001 - inspected below
                outcome["error"] = exc

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        deadline = time.monotonic() + 30
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.2)  # the first 3 events are read
        stop.set()
        gate.release()  # the next events, up to the second hold
        worker.join(30)
        ended_at_the_next_events = not worker.is_alive()
        gate.release()
        worker.join(30)
    assert ended_at_the_next_events and isinstance(outcome.get("error"), RunStopped)


# ------------------------------------------------------------------ h11: whole chunks at once
def _h11_response(reader_wrap=True):
    import h11

    from tradingagents.llm_clients.text import _BATCHED_READER

    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="POST", target="/", headers=[("Host", "x"), ("Content-Length", "0")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert type(conn.next_event()) is h11.Response
    if reader_wrap:
        conn._reader = _BATCHED_READER(conn._reader)
    return conn


def _drain(conn) -> list:
    import h11

    out = []
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            return out
        out.append(event)


def test_whole_chunks_already_received_are_one_piece_and_h11_reads_the_rest():
    import h11

    events = [b"data: {\"n\": %d}\n\n" % i for i in range(10)]
    body = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events) + b"0\r\n\r\n"
    for cut in range(1, len(body)):  # the body in two reads, cut anywhere
        conn = _h11_response()
        conn.receive_data(body[:cut])
        got = _drain(conn)
        conn.receive_data(body[cut:])
        got += _drain(conn)
        data = [e for e in got if type(e) is h11.Data]
        assert b"".join(e.data for e in data) == b"".join(events), cut
        assert len(data) <= 4 and type(got[-1]) is h11.EndOfMessage, cut
        assert conn.their_state is h11.DONE  # the connection can serve the next request


def test_a_malformed_chunk_is_still_h11s_error():
    import h11

    for wrap in (True, False):
        conn = _h11_response(wrap)
        conn.receive_data(b"5\r\nhello\r\nzz\r\nbad\r\n")
        with pytest.raises(h11.RemoteProtocolError):
            _drain(conn)


def test_our_client_reads_a_streamed_answer_in_a_few_parts_not_one_per_event():
    """The fake server writes the whole answer at once: through ``valid_unicode_http_client`` its ~80
    chunks come in one or a few parts (if a dependency change defeats the batching, one per chunk)."""
    from tests.fake_openai import FakeOpenAIServer
    from tradingagents.llm_clients.text import valid_unicode_http_client

    with FakeOpenAIServer(lambda body: {"content": "A long answer in many pieces. " * 40}) as server:
        client = valid_unicode_http_client()
        body = {"model": "fake-quick", "messages": [{"role": "user", "content": "Go."}], "stream": True}
        with client.stream("POST", server.base_url + "/chat/completions", json=body) as response:
            parts = list(response.iter_raw())
    events = b"".join(parts).count(b"data: ")
    assert events > 40 and len(parts) <= 4
