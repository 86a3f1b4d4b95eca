"""The fake OpenAI-compatible server, exercised with the real langchain_openai / openai clients."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Literal

import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from tests.fake_openai import FakeOpenAIServer, Fault, agentic_responder, fill_schema, tool_arguments
from tradingagents.rating import parse_rating

PROMPT = [
    SystemMessage("You are the market analyst.\nInstrument: NVDA\nAnalysis date: 2024-05-10\nBe brief."),
    HumanMessage("Analyse NVDA."),
]


class Decision(BaseModel):
    rating: Literal["Buy", "Overweight", "Hold", "Underweight", "Sell"]
    executive_summary: str
    price_target: float | None = None
    time_horizon: str | None = None
    confidence: int


@tool
def get_stock_data(symbol: str, start_date: str, end_date: str) -> str:
    """OHLCV rows of a symbol between two dates."""
    return f"{symbol} {start_date}..{end_date}"


@tool
def get_indicators(symbol: str, indicator: str, curr_date: str, look_back_days: int = 30) -> str:
    """A technical indicator."""
    return f"{symbol} {indicator} {curr_date} {look_back_days}"


@tool
def get_fundamentals(ticker: str, freq: str, limit: int, curr_date: str, note: str) -> str:
    """Statements."""
    return "ok"


@pytest.fixture
def fake_openai():
    with FakeOpenAIServer() as server:
        yield server


def client(server, **kw) -> ChatOpenAI:
    params = {"model": "fake-quick", "api_key": "test-key", "base_url": server.base_url, "max_retries": 0, "timeout": 5}
    params.update(kw)
    return ChatOpenAI(**params)


def test_plain_answer_carries_rating_lines_and_usage(fake_openai):
    fake_openai.rating = "Underweight"
    answer = client(fake_openai).invoke(PROMPT)
    assert "NVDA" in answer.content and "2024-05-10" in answer.content
    assert "**Rating**: Underweight" in answer.content
    assert "FINAL TRANSACTION PROPOSAL: **SELL**" in answer.content
    assert parse_rating(answer.content) == "Underweight"
    assert answer.usage_metadata["input_tokens"] > 0 and answer.usage_metadata["output_tokens"] > 0
    assert fake_openai.requests[-1]["model"] == "fake-quick"
    assert client(fake_openai).invoke(PROMPT).content == answer.content  # deterministic


def test_tool_calls_then_text_after_tool_results(fake_openai):
    llm = client(fake_openai).bind_tools([get_stock_data, get_indicators])
    first = llm.invoke(PROMPT)
    assert [c["name"] for c in first.tool_calls] == ["get_stock_data", "get_indicators"]
    assert first.tool_calls[0]["args"] == {"symbol": "NVDA", "start_date": "2024-04-10", "end_date": "2024-05-10"}
    assert first.tool_calls[1]["args"] == {
        "symbol": "NVDA",
        "indicator": "rsi",
        "curr_date": "2024-05-10",
        "look_back_days": 7,
    }
    results = [ToolMessage(content="rows", tool_call_id=c["id"]) for c in first.tool_calls]
    second = llm.invoke([*PROMPT, first, *results])
    assert second.tool_calls == []
    assert "2 tool result(s)" in second.content and "**Rating**: Hold" in second.content
    # a new user turn after the tool results asks for tools again
    third = llm.invoke([*PROMPT, first, *results, second, HumanMessage("Continue the analysis of AMD as of 2024-06-03.")])
    assert third.tool_calls and third.tool_calls[0]["args"]["symbol"] == "NVDA"  # the Instrument line wins


def test_placeholder_message_gives_instrument_and_date(fake_openai):
    llm = client(fake_openai).bind_tools([get_stock_data])
    msg = llm.invoke([HumanMessage("Continue the analysis of 7203.T as of 2023-01-31.")])
    assert msg.tool_calls[0]["args"] == {"symbol": "7203.T", "start_date": "2023-01-01", "end_date": "2023-01-31"}


def test_tool_arguments_from_schema_rules():
    params = get_fundamentals.tool_call_schema.model_json_schema()
    args = tool_arguments(params, "MSFT", "2024-03-01")
    assert args == {"ticker": "MSFT", "freq": "quarterly", "limit": 5, "curr_date": "2024-03-01", "note": ""}


def test_structured_output_json_schema(fake_openai):
    fake_openai.rating = "Overweight"
    out = client(fake_openai).with_structured_output(Decision, method="json_schema", include_raw=True).invoke(PROMPT)
    assert out["parsing_error"] is None
    decision = out["parsed"]
    assert isinstance(decision, Decision)
    assert decision.rating == "Overweight"
    assert decision.price_target is None and decision.time_horizon is None
    assert decision.confidence == 0 and decision.executive_summary
    assert fake_openai.requests[-1]["response_format"]["type"] == "json_schema"


def test_structured_output_function_calling(fake_openai):
    fake_openai.rating = "Sell"
    out = client(fake_openai).with_structured_output(Decision, method="function_calling").invoke(PROMPT)
    assert isinstance(out, Decision) and out.rating == "Sell"


def test_fill_schema_enum_falls_back_to_first_value_when_rating_not_allowed():
    schema = {"type": "object", "properties": {"side": {"enum": ["long", "short"]}}, "required": ["side"]}
    assert fill_schema(schema, rating="Hold") == {"side": "long"}


def test_streaming_text_and_tool_calls(fake_openai):
    llm = client(fake_openai, streaming=True, stream_usage=True)
    chunks = list(llm.stream(PROMPT))
    assert len(chunks) > 3
    text = "".join(c.content for c in chunks)
    assert "**Rating**: Hold" in text
    assert fake_openai.requests[-1]["stream"] is True
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    assert total.usage_metadata and total.usage_metadata["output_tokens"] > 0
    msg = client(fake_openai, streaming=True).bind_tools([get_stock_data]).invoke(PROMPT)
    assert msg.tool_calls[0]["name"] == "get_stock_data"
    assert msg.tool_calls[0]["args"]["symbol"] == "NVDA"


def test_models_endpoint_and_unknown_route(fake_openai):
    models = openai.OpenAI(api_key="x", base_url=fake_openai.base_url, max_retries=0).models.list()
    assert [m.id for m in models.data] == ["fake-quick", "fake-deep"]
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(fake_openai.base_url + "/nope", timeout=5)
    assert info.value.code == 404


@pytest.mark.parametrize("status", [429, 500, 503])
def test_status_faults_are_retried_by_the_client(fake_openai, status):
    fake_openai.inject(Fault.status(status, times=2))
    answer = client(fake_openai, max_retries=2).invoke(PROMPT)
    assert "**Rating**" in answer.content
    assert len(fake_openai.requests) == 3  # two failures, then the answer
    assert fake_openai.pending_faults == []


def test_status_fault_without_retries_raises_the_sdk_error(fake_openai):
    fake_openai.inject(Fault.status(429, times=5))
    with pytest.raises(openai.RateLimitError):
        client(fake_openai, max_retries=1).invoke(PROMPT)
    assert len(fake_openai.requests) == 2
    assert fake_openai.pending_faults[0].times == 3


def test_timeout_fault_errors_after_retries(fake_openai):
    # the server would answer only after 10 minutes: an APITimeoutError is the client giving up itself
    fake_openai.inject(Fault.timeout(600.0, times=2))
    with pytest.raises(openai.APITimeoutError):
        client(fake_openai, timeout=0.3, max_retries=1).invoke(PROMPT)
    assert len(fake_openai.requests) == 2


def test_malformed_and_empty_and_unknown_tool_faults(fake_openai):
    fake_openai.inject(Fault.malformed_json())
    with pytest.raises(json.JSONDecodeError):  # a 200 whose body is not JSON: the SDK cannot parse it
        client(fake_openai).invoke(PROMPT)
    fake_openai.inject(Fault.empty_answer())
    assert client(fake_openai).invoke(PROMPT).content == ""
    fake_openai.inject(Fault.unknown_tool("get_crystal_ball"))
    msg = client(fake_openai).bind_tools([get_stock_data]).invoke(PROMPT)
    assert [c["name"] for c in msg.tool_calls] == ["get_crystal_ball"]
    # faults consumed: the next answer is normal
    assert "**Rating**" in client(fake_openai).invoke(PROMPT).content


def test_no_json_schema_rejects_only_response_format_requests(fake_openai):
    fake_openai.inject(Fault.no_json_schema())
    with pytest.raises(openai.BadRequestError) as info:
        client(fake_openai).with_structured_output(Decision, method="json_schema").invoke(PROMPT)
    assert info.value.status_code == 400 and "json_schema not supported" in str(info.value)
    assert "**Rating**" in client(fake_openai).invoke(PROMPT).content  # plain requests still work
    with pytest.raises(openai.BadRequestError):  # persistent until cleared
        client(fake_openai).with_structured_output(Decision, method="json_schema").invoke(PROMPT)
    fake_openai.clear_faults()
    assert client(fake_openai).with_structured_output(Decision, method="json_schema").invoke(PROMPT).rating == "Hold"


def test_faults_are_consumed_in_order(fake_openai):
    fake_openai.inject(Fault.status(500), Fault.empty_answer())
    llm = client(fake_openai)
    with pytest.raises(openai.InternalServerError):
        llm.invoke(PROMPT)
    assert llm.invoke(PROMPT).content == ""
    assert llm.invoke(PROMPT).content != ""


def test_latency_and_max_in_flight():
    # each answer waits until all five requests are at the server: a server that handled them one at a time
    # would never let the first one through (the barrier's timeout breaks it), however slow the machine is
    arrived = threading.Barrier(5, timeout=120)

    def responder(body):
        arrived.wait()
        return agentic_responder(body)

    with FakeOpenAIServer(responder, latency_s=0.2) as server:
        llm = client(server, timeout=150).bind_tools([get_stock_data])  # the timeout only catches a hang
        ids: list[str] = []

        def call():
            msg = llm.invoke(PROMPT)
            ids.extend([msg.id, *(c["id"] for c in msg.tool_calls)])

        threads = [threading.Thread(target=call) for _ in range(5)]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(180)
        elapsed = time.monotonic() - started
        assert server.max_in_flight == 5  # concurrent, not serialised
        deadline = time.monotonic() + 120  # only catches a hang: handlers finish just after replying
        while server.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.in_flight == 0
        assert elapsed >= 0.2  # each answer waited for the server's latency
        assert len(server.requests) == 5
        assert len(ids) == 10 and len(set(ids)) == 10  # completion and tool-call ids never collide


def test_custom_responder_and_bad_request_body():
    seen = []

    def responder(request):
        seen.append(request["messages"][-1]["content"])
        return {"content": "custom answer"}

    with FakeOpenAIServer(responder=responder) as server:
        assert client(server).invoke("hello").content == "custom answer"
        assert seen == ["hello"]
        req = urllib.request.Request(
            server.base_url + "/chat/completions", data=b"{not json", headers={"Content-Type": "application/json"}
        )
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
        assert info.value.code == 400
        assert json.loads(info.value.read())["error"]["type"] == "invalid_request_error"


def test_stop_is_quick_even_with_a_sleeping_request():
    server = FakeOpenAIServer().start()
    server.inject(Fault.timeout(600))
    errors = []

    def call():
        try:
            client(server, timeout=10).invoke(PROMPT)
        except openai.APIError as exc:
            errors.append(exc)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    deadline = time.monotonic() + 120  # only catches a hang
    while not server.in_flight and time.monotonic() < deadline:  # the request is asleep in the server
        time.sleep(0.01)
    assert server.in_flight == 1
    started = time.monotonic()
    server.stop()
    # the sleeping request is woken, not waited out (it would sleep 600 s): a hang guard, not a pace
    assert time.monotonic() - started < 300
    t.join(300)
    assert not t.is_alive()


def test_a_burst_on_one_kept_alive_connection_is_served_on_that_connection():
    """The real openai/httpx client reuses one connection for a burst of requests, as against a real
    server. (The pace per request, which Nagle and delayed ACKs once held at ~40 ms when headers and
    body went out in two writes, is a figure for ``python -m bench perf``, not a test.)"""
    with FakeOpenAIServer() as server:
        oa = openai.OpenAI(api_key="test-key", base_url=server.base_url, max_retries=0, timeout=60)
        msgs = [{"role": "user", "content": "Instrument: NVDA\nAnalysis date: 2024-05-10\nHello"}]
        for _ in range(15):
            out = oa.chat.completions.create(model="fake-quick", messages=msgs)
            assert out.choices[0].message.content
        oa.close()
    assert server.connections == 1 and len(server.requests) == 15


def test_a_held_stream_waits_at_each_hold_until_released(fake_openai):
    """``Fault.hold_stream``: the browser tests look at live text while the server holds the stream,
    so what they see depends on a condition, never on the machine's pace."""
    gate = threading.Semaphore(0)
    fake_openai.inject(Fault.hold_stream(2, 4, gate=gate))
    llm = client(fake_openai, streaming=True)
    pieces: list[str] = []
    reader = threading.Thread(target=lambda: pieces.extend(c.content for c in llm.stream(PROMPT)), daemon=True)
    reader.start()

    def wait_until(cond):
        deadline = time.monotonic() + 120  # only catches a hang
        while not cond() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert cond()

    wait_until(lambda: len(pieces) >= 2)  # the role event and the first piece of text
    held = list(pieces)
    assert fake_openai.in_flight == 1 and reader.is_alive() and len(held) == 2
    gate.release()
    wait_until(lambda: len(pieces) >= 4)
    assert fake_openai.in_flight == 1 and reader.is_alive() and pieces[:2] == held and len(pieces) == 4
    gate.release()
    reader.join(120)
    assert not reader.is_alive() and "**Rating**: Hold" in "".join(pieces)
    assert fake_openai.pending_faults == []


def test_stop_ends_the_kept_alive_connections_as_a_real_server_does():
    """The process's models share one connection pool: a connection a stopped fake kept open must end, or
    a later fake that the OS gives the same port would have its requests answered by the stopped one."""
    import http.client

    server = FakeOpenAIServer().start()
    port = int(server.base_url.split(":")[2].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    body = json.dumps({"model": "fake-quick", "messages": [{"role": "user", "content": "Instrument: NVDA\nHello"}]})
    conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
    assert conn.getresponse().read()
    assert server.connections == 1
    server.stop()
    conn.sock.settimeout(120)  # a hang guard: the end arrives at once
    assert conn.sock.recv(1) == b""  # the server closed it
    conn.close()
