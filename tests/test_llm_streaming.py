"""Live model text from a networked provider (issue 15.4): the real langchain-openai client streams
against tests/fake_openai.py, the graph turns the chunks into token events, the live panel folds them.

Streaming must weaken nothing: a retried attempt's text never reaches the answer and is taken back
from the panel (token{restart}); usage, llm_calls and cost equal an unstreamed run's; the structured
rating works; llm_streaming off sends no ``stream: true`` request at all.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage

from studio.runs import ProgressFolder
from tests.fake_openai import FakeOpenAIServer, Fault, agentic_responder
from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError, LLMCallError, LLMConfigError
from tradingagents.graph.run_support import _RunReporter
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients import create_llm
from tradingagents.llm_clients.streaming import is_restart

DATE = "2024-05-10"
AGENT = "Market Analyst"
PROMPT = [SystemMessage("Instrument: IBM\nAnalysis date: 2024-02-01"), HumanMessage("Go.")]
PRICES = {"fake-quick": [1000.0, 4000.0], "fake-deep": [2000.0, 8000.0]}


def _market_text(body: dict) -> bool:
    """The Market Analyst's report call: the one after its tool round (the tools' answers in the request),
    or in the prefetch shape its one call (its data fetched and in the prompt)."""
    messages = body.get("messages") or []
    system = str((messages or [{}])[0].get("content") or "")
    answered = any(m.get("role") == "tool" for m in messages)
    return system.startswith("You are the Market Analyst") and ("<get_stock_data>" in system or answered)


def _numbered(counter: dict):
    """A responder whose Market Analyst reports say which attempt wrote them."""
    def responder(body):
        answer = agentic_responder(body)
        if _market_text(body):
            counter["n"] += 1
            answer = {**answer, "content": f"Attempt {counter['n']} says: {answer['content']}"}
        return answer
    return responder


def _run(server, **extra):
    events: list = []
    graph = TradingAgentsGraph(["market"], config=server.llm_config(analyst_execution="sequential", **extra))
    state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
    return graph, state, rating, events


def _report_call_tokens(events):
    """(token events of the Market Analyst's report call, index of its report event)."""
    report_at = next(i for i, e in enumerate(events) if e.kind == "report" and e.data["key"] == "market_report")
    started = max(i for i, e in enumerate(events[:report_at]) if e.kind == "node_started" and e.agent == AGENT)
    tokens = [e for e in events[started:report_at] if e.kind == "token" and e.agent == AGENT]
    return tokens, report_at


class _Tokens(BaseCallbackHandler):
    """The tokens a model sends its callbacks, with "<restart>" for the restart signal."""

    def __init__(self):
        self.seen: list[str] = []

    def on_llm_new_token(self, token, *, chunk=None, **kwargs):
        self.seen.append("<restart>" if chunk is not None and is_restart(chunk.message) else token)


# ------------------------------------------------------------------ through the graph
def test_a_nodes_text_streams_into_the_live_panel_before_its_report(monkeypatch):
    monkeypatch.setattr(_RunReporter, "TOKEN_INTERVAL_S", 0.05)  # the throttle, shortened for the test
    with FakeOpenAIServer(chunk_delay_s=lambda body: 0.03 if _market_text(body) else 0.0) as server:
        _, state, _, events = _run(server)
    tokens, report_at = _report_call_tokens(events)
    finished_at = next(i for i, e in enumerate(events) if i > report_at - 2 and e.kind == "node_finished"
                       and e.agent == AGENT)
    assert len(tokens) >= 3, [t.data for t in tokens]  # several pieces while it was being written …
    assert tokens[-1].ts - tokens[0].ts > 0.1  # … over time, not at once at the end
    assert all(events.index(t) < finished_at for t in tokens)
    assert "".join(t.data["text_delta"] for t in tokens) == state["market_report"]
    assert ProgressFolder().feed(events[:report_at]).live_text[AGENT] == state["market_report"]


def test_a_paused_stream_shows_the_text_it_has_sent_so_far(monkeypatch):
    """The throttle sends buffered text when its interval is up, not only when the next chunk comes:
    a stream that pauses (a slow model) shows everything it has written before the pause."""
    from langchain_core.messages import AIMessageChunk

    monkeypatch.setattr(_RunReporter, "TOKEN_INTERVAL_S", 1.0)
    events: list = []
    reporter = _RunReporter(events.append, debug=False, tracker=None)
    node = "Market Analyst"
    reporter.on_message((AIMessageChunk(content="Momentum "), {"langgraph_node": node}))  # sent at once
    reporter.on_message((AIMessageChunk(content="is strong."), {"langgraph_node": node}))  # within the interval
    deadline = time.monotonic() + 60  # a hang guard only
    while "".join(e.data["text_delta"] for e in events if e.kind == "token") != "Momentum is strong.":
        assert time.monotonic() < deadline, [e.data for e in events]
        time.sleep(0.02)
    reporter.on_message((AIMessageChunk(content=" More"), {"langgraph_node": node}))  # buffered, timer pending
    reporter.terminal("run_finished")
    time.sleep(1.5)  # past the interval: a cancelled timer sends nothing after the terminal event
    assert events[-1].kind == "run_finished"


def test_a_retried_attempt_is_taken_back_from_the_panel_and_never_reaches_the_report(monkeypatch):
    monkeypatch.setattr(_RunReporter, "TOKEN_INTERVAL_S", 0.0)  # every chunk is a token event
    counter = {"n": 0}
    with FakeOpenAIServer(_numbered(counter)) as server:
        server.inject(Fault.cut_stream(after=4, when=_market_text))  # the first report call breaks off
        _, state, _, events = _run(server)
    assert counter["n"] == 2
    report = state["market_report"]
    assert report.startswith("Attempt 2 says:") and "Attempt 1" not in report
    tokens, report_at = _report_call_tokens(events)
    shown_before = tokens[: next(i for i, t in enumerate(tokens) if t.data.get("restart"))]
    assert "Attempt 1" in "".join(t.data["text_delta"] for t in shown_before)  # the void text was shown …
    assert [t.data.get("restart") for t in tokens].count(True) == 1
    assert ProgressFolder().feed(events[:report_at]).live_text[AGENT] == report  # … and taken back
    assert all("Attempt 1" not in str(e.data) for e in events if e.kind in ("report", "run_finished"))


def test_streaming_keeps_usage_calls_cost_and_the_structured_rating_exact(tmp_path):
    runs = {}
    for streaming in (True, False):
        # a server each (its tool-call ids count its requests) and a home each (the second run must
        # not settle, and reflect on, the first one's decision): the two runs see the same prompts
        with FakeOpenAIServer(rating="Underweight") as server:
            graph, state, rating, _ = _run(server, llm_streaming=streaming, llm_pricing=PRICES,
                                           home=str(tmp_path / str(streaming)))
            requests = server.chat_requests
            usage = graph.last_run["record"]["meta"]["usage"]
            runs[streaming] = (usage, rating, state["final_rating"])
            assert usage["llm_calls"] == len(requests)
            structured = [r for r in requests if r.get("response_format")]
            assert structured  # the portfolio manager asked for its structured rating …
            assert not any(r.get("stream") for r in structured)  # … unstreamed, even when streaming
            plain = [r for r in requests if not r.get("response_format")]
            assert all(bool(r.get("stream")) is streaming for r in plain)
            if streaming:
                assert all(r["stream_options"] == {"include_usage": True} for r in plain)
    streamed, unstreamed = runs[True], runs[False]
    assert streamed[1:] == unstreamed[1:] == ("Underweight", "Underweight")
    for key in ("llm_calls", "tool_calls", "input_tokens", "output_tokens"):
        assert streamed[0][key] == unstreamed[0][key] > 0, key
    assert streamed[0]["cost_usd"] == pytest.approx(unstreamed[0]["cost_usd"]) and streamed[0]["cost_usd"] > 0


def test_streaming_off_sends_no_stream_request_and_the_panel_gets_the_answer_whole(monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_LLM_STREAMING", "off")
    with FakeOpenAIServer(chunk_delay_s=0.05) as server:
        _, state, _, events = _run(server)
        assert server.chat_requests and not any(r.get("stream") for r in server.chat_requests)
    tokens, report_at = _report_call_tokens(events)
    assert [t.data["text_delta"] for t in tokens] == [state["market_report"]]


# ------------------------------------------------------------------ the setting
def test_llm_streaming_is_a_validated_setting_with_an_env_var_and_a_cli_flag(monkeypatch):
    from tradingagents.cli import _config_from, _run_parser

    assert resolve_config({})["llm_streaming"] is True
    assert resolve_config({"llm_streaming": "no"})["llm_streaming"] is False
    with pytest.raises(LLMConfigError, match="llm_streaming"):
        resolve_config({"llm_streaming": "perhaps"})
    monkeypatch.setenv("TRADINGAGENTS_LLM_STREAMING", "maybe")
    with pytest.raises(ConfigError, match="TRADINGAGENTS_LLM_STREAMING.*llm_streaming"):
        resolve_config({})
    monkeypatch.setenv("TRADINGAGENTS_LLM_STREAMING", "0")
    assert resolve_config({})["llm_streaming"] is False
    monkeypatch.delenv("TRADINGAGENTS_LLM_STREAMING")
    args = _run_parser().parse_args(["NVDA", DATE, "--no-stream"])
    assert _config_from(args)["llm_streaming"] is False
    assert "llm_streaming" not in _config_from(_run_parser().parse_args(["NVDA", DATE]))


# ------------------------------------------------------------------ the model on its own
def test_a_cut_stream_is_retried_and_only_the_good_attempt_is_kept():
    counter = {"n": 0}

    def responder(body):
        counter["n"] += 1
        return {"content": f"Attempt {counter['n']} wrote this answer in several pieces, one after another."}

    with FakeOpenAIServer(responder) as server:
        llm = create_llm(server.llm_config(llm_max_retries=2))
        server.inject(Fault.cut_stream(after=3))
        tokens = _Tokens()
        answer = llm.invoke(PROMPT, config={"callbacks": [tokens]})
        assert len(server.requests) == 2 and all(r["stream"] for r in server.requests)
        assert answer.content.startswith("Attempt 2") and "Attempt 1" not in answer.content
        live = "".join(tokens.seen)
        assert "<restart>" in live and "Attempt 1" in live.split("<restart>")[0]
        assert live.split("<restart>")[-1] == answer.content
        assert answer.usage_metadata["output_tokens"] > 0  # usage came in the stream

        server.inject(Fault.cut_stream(after=3))  # .stream() hands out the good attempt's chunks only
        pieces = [chunk.content for chunk in llm.stream(PROMPT)]
        assert len(pieces) > 2 and "".join(pieces).startswith("Attempt 4") and "Attempt 3" not in "".join(pieces)

        server.inject(Fault.cut_stream(after=3))  # the async path keeps the same guarantees
        answer = asyncio.run(llm.ainvoke(PROMPT))
        assert answer.content.startswith("Attempt 6") and "Attempt 5" not in answer.content


def test_streamed_calls_reuse_one_connection():
    """The SDK stops reading a stream at [DONE]; unless the body's end is read too, httpx drops the
    connection and every call opens a new one (with a real provider, a new TLS handshake)."""
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config())
        for _ in range(5):
            assert llm.invoke(PROMPT).content
        assert len(server.requests) == 5 and all(r["stream"] for r in server.requests)
        assert server.connections == 1
        server.inject(Fault.cut_stream(after=3))  # a cut stream loses its connection; the retry opens one
        assert llm.invoke(PROMPT).content
        assert server.connections == 2


def test_a_stream_that_keeps_breaking_off_ends_in_a_clear_error_within_the_budget():
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config(llm_max_retries=1))
        server.inject(Fault.cut_stream(after=3, times=5))
        tokens = _Tokens()
        with pytest.raises(LLMCallError, match=r"after 2 attempts\) — the streamed answer broke off") as info:
            llm.invoke(PROMPT, config={"callbacks": [tokens]})
        assert "Could not connect" not in str(info.value) and len(server.requests) == 2
        assert tokens.seen.count("<restart>") == 2 and tokens.seen[-1] == "<restart>"  # no void text left shown


def test_a_stream_that_stalls_mid_way_is_retried_within_the_budget():
    # the first event arrives, then nothing for longer than the timeout: the SDK does not retry
    # that (its retries end once an answer starts), the model does, within its own budget
    with FakeOpenAIServer(chunk_delay_s=1.0) as server:
        llm = create_llm(server.llm_config(llm_timeout=0.3, llm_max_retries=1))
        with pytest.raises(LLMCallError, match="stalled mid-way") as info:
            llm.invoke(PROMPT)
        assert len(server.requests) == 2 and info.value.retryable


def test_a_stream_without_a_finish_reason_counts_as_cut():
    def responder(body):  # a full OpenAI answer whose stream never says it is finished
        return {"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "fake-quick",
                "choices": [{"index": 0, "finish_reason": None,
                             "message": {"role": "assistant", "content": "An answer that simply stops."}}]}

    with FakeOpenAIServer(responder) as server:
        llm = create_llm(server.llm_config(llm_max_retries=1))
        with pytest.raises(LLMCallError, match="without a finish reason.*llm_streaming"):
            llm.invoke(PROMPT)
        assert len(server.requests) == 2
        assert create_llm(server.llm_config(llm_streaming=False)).invoke(PROMPT).content  # unstreamed: fine


def test_streamed_tool_arguments_that_are_not_json_are_refused_like_unstreamed_ones():
    # assembling streamed chunks parses tool arguments leniently ("{not json" would become {})
    from langchain_core.tools import tool

    @tool
    def get_stock_data(symbol: str) -> str:
        """Rows."""
        return "rows"

    def responder(body):
        return {"content": None, "tool_calls": [{"name": "get_stock_data", "arguments": '{"symbol": "IB'}]}

    with FakeOpenAIServer(responder) as server:
        for streaming in (True, False):
            llm = create_llm(server.llm_config(llm_max_retries=1, llm_streaming=streaming))
            with pytest.raises(LLMCallError, match="get_stock_data with arguments that are not valid JSON"):
                llm.bind_tools([get_stock_data]).invoke(PROMPT)
        assert [bool(r.get("stream")) for r in server.requests] == [True, True, False, False]
