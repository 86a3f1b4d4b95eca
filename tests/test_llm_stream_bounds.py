"""Streams that end (issue 24.4): a mid-stream ``data: {"error": …}`` event is retried and then a plain
failure; a ``length`` or ``content_filter`` finish is never kept as a complete answer; an idle bound per
event and a deadline per attempt bound every stream, however steadily a slow server trickles; Stop
interrupts a stream between its events.

Real parts: the langchain-openai client against tests/fake_openai.py; the CLI's ``main``.
"""

from __future__ import annotations

import threading

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage

from tests.fake_openai import FakeOpenAIServer, Fault
from tradingagents.errors import LLMCallError, RunStopped, exit_code_for
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients import create_llm

DATE = "2024-05-10"
PROMPT = [SystemMessage("Instrument: IBM\nAnalysis date: 2024-02-01"), HumanMessage("Go.")]
HANG_S = 60  # a hang guard only: nothing here waits for it on a working build


class _Tokens(BaseCallbackHandler):
    def __init__(self):
        self.seen: list[str] = []

    def on_llm_new_token(self, token, **kwargs):
        chunk = kwargs.get("chunk")
        meta = getattr(getattr(chunk, "message", None), "response_metadata", None) or {}
        self.seen.append("<restart>" if meta.get("tradingagents_stream_restart") else token)


def _long(body):
    return {"content": "A long answer in many pieces. " * 40}


def test_a_mid_stream_error_event_is_retried_and_only_the_good_attempt_is_kept():
    with FakeOpenAIServer(_long) as server:
        llm = create_llm(server.llm_config(llm_max_retries=2))
        server.inject(Fault.stream_error(after=3))
        tokens = _Tokens()
        answer = llm.invoke(PROMPT, config={"callbacks": [tokens]})
        assert len(server.requests) == 2
        assert answer.content == "A long answer in many pieces. " * 40
        assert "<restart>" in tokens.seen


def test_a_stream_that_keeps_failing_mid_way_is_a_plain_failure_and_the_cli_prints_no_traceback(tmp_path, capsys):
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config(llm_max_retries=1))
        server.inject(Fault.stream_error(after=2, times=2, message="upstream generation failed"))
        with pytest.raises(LLMCallError, match="error inside its streamed answer: upstream generation failed") as info:
            llm.invoke(PROMPT)
        assert info.value.retryable and exit_code_for(info.value) == 4 and len(server.requests) == 2

        from tradingagents.cli import main

        server.inject(Fault.stream_error(after=2, times=None))
        code = main(["NVDA", DATE, "--provider", "openai_compatible", "--backend-url", server.base_url,
                     "--quick-model", "fake-quick", "--deep-model", "fake-deep", "--home", str(tmp_path), "-q"])
        err = capsys.readouterr().err
        server.clear_faults()
    assert code == 4 and "error inside its streamed answer" in err and "Traceback" not in err


@pytest.mark.parametrize("streaming", [True, False])
def test_a_content_filter_finish_is_retried_and_never_kept(streaming):
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config(llm_max_retries=1, llm_streaming=streaming))
        server.inject(Fault.finish("content_filter"))
        assert llm.invoke(PROMPT).content  # the retry's answer
        assert len(server.requests) == 2
        server.inject(Fault.finish("content_filter", times=2))
        with pytest.raises(LLMCallError, match="content filter.*finish_reason content_filter"):
            llm.invoke(PROMPT)


@pytest.mark.parametrize("streaming", [True, False])
def test_a_length_finish_is_a_failure_naming_the_limit_without_a_useless_retry(streaming):
    with FakeOpenAIServer(_long) as server:
        llm = create_llm(server.llm_config(llm_max_retries=3, llm_streaming=streaming, llm_max_output_tokens=20))
        with pytest.raises(LLMCallError, match="output limit of 20 tokens.*llm_max_output_tokens"):
            llm.invoke(PROMPT)
        assert len(server.requests) == 1  # the same prompt would be cut at the same place again


def test_a_server_trickling_events_just_inside_the_timeout_meets_the_deadline():
    """One event every 0.4 s with a 0.5 s timeout: the read timeout never fires; the attempt's deadline
    (STREAM_DEADLINE_FACTOR × llm_timeout) ends it long before its ~200 events are sent."""
    with FakeOpenAIServer(_long, chunk_delay_s=0.4) as server:
        llm = create_llm(server.llm_config(llm_timeout=0.5, llm_max_retries=0))
        tokens = _Tokens()
        with pytest.raises(LLMCallError, match="unfinished at its deadline") as info:
            llm.invoke(PROMPT, config={"callbacks": [tokens]})
        assert info.value.retryable
    pieces = [t for t in tokens.seen if t not in ("", "<restart>")]
    assert 0 < len(pieces) < 20 and tokens.seen[-1] == "<restart>"


def test_stop_interrupts_a_stream_between_its_events(tmp_path):
    """The Market Analyst's report streams and holds after 3 events; Stop is pressed; the stream ends at
    its next event (not at its end) and the run stops, resumable."""
    gate = threading.Semaphore(0)
    stop = threading.Event()

    def market_text(body):
        messages = body.get("messages") or []
        system = str((messages or [{}])[0].get("content") or "")
        return system.startswith("You are the Market Analyst")  # its one call: data fetched, report written

    with FakeOpenAIServer(_long) as server:
        server.inject(Fault.hold_stream(3, 6, gate=gate, when=market_text))
        graph = TradingAgentsGraph(["market"], config=server.llm_config(home=str(tmp_path),
                                                                      analyst_execution="sequential"))
        outcome: dict = {}
        seen = threading.Event()

        def on_event(event):
            if event.kind == "token" and event.data.get("text_delta"):
                seen.set()

        def run():
            try:
                graph.propagate("NVDA", DATE, on_event=on_event, should_stop=stop.is_set)
            except BaseException as exc:  # noqa: BLE001 - inspected below
                outcome["error"] = exc

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        assert seen.wait(HANG_S)  # text of the held stream is on screen
        stop.set()
        gate.release()  # the stream sends its next events, up to its second hold
        worker.join(HANG_S)
        ended_at_the_next_event = not worker.is_alive()  # not held at the stream's second hold
        gate.release()
        worker.join(HANG_S)
    assert ended_at_the_next_event
    assert isinstance(outcome.get("error"), RunStopped) and outcome["error"].resumable
