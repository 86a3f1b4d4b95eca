"""A seeded storm of faults from the fake server: every call either returns a usable answer or
raises LLMCallError, and never sends more requests than its retry budget allows — with the model
streaming its answers (the default) and answering in one piece (llm_streaming off)."""

from __future__ import annotations

import random

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool

from tests.fake_openai import FakeOpenAIServer, Fault
from tradingagents.errors import LLMCallError
from tradingagents.llm_clients import create_llm

PROMPT = [SystemMessage("Instrument: IBM\nAnalysis date: 2024-02-01"), HumanMessage("Go.")]


@tool
def get_stock_data(symbol: str, start_date: str, end_date: str) -> str:
    """OHLCV rows."""
    return "rows"


FAULTS = [
    lambda: Fault.status(429),
    lambda: Fault.status(500),
    lambda: Fault.status(503),
    lambda: Fault.timeout(1.0),
    Fault.malformed_json,
    Fault.empty_answer,
    lambda: Fault.unknown_tool("get_crystal_ball"),
    lambda: Fault.cut_stream(after=3),
]


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "unstreamed"])
def test_fault_storm_gives_answers_or_clean_errors(streaming):
    rng = random.Random(20240510)
    retries = 2
    outcomes = {"ok": 0, "error": 0}
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config(llm_timeout=0.2, llm_max_retries=retries, llm_streaming=streaming))
        bound = llm.bind_tools([get_stock_data])
        for i in range(40):
            server.clear_faults()
            faults = [rng.choice(FAULTS)() for _ in range(rng.randint(0, 4))]
            server.inject(*faults)
            before = len(server.requests)
            use_tools = i % 2 == 0
            try:
                answer = (bound if use_tools else llm).invoke(PROMPT)
            except LLMCallError as exc:
                outcomes["error"] += 1
                assert "LLM call failed" in str(exc) and "fake-quick" in str(exc)
            else:
                outcomes["ok"] += 1
                if use_tools:
                    assert [c["name"] for c in answer.tool_calls] == ["get_stock_data"]
                else:
                    assert "**Rating**" in answer.content
            sent = len(server.requests) - before
            # SDK retries (status, timeout) nested in answer checks (garbled, empty, unknown tool)
            assert 1 <= sent <= (retries + 1) ** 2
            assert sent <= len(faults) + 1  # no request is made once an answer is good
            assert all(bool(r.get("stream")) is streaming for r in server.requests[before:])
    assert outcomes["ok"] > 12 and outcomes["error"] > 0, outcomes
