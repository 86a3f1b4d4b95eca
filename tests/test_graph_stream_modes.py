"""A run does only the work someone reads (issue 28, the framework's own cost).

- Streamed chunks go to a call's callbacks only when one of them reads tokens (overrides
  ``on_llm_new_token``): the usage tracker and the budget guard ignore them.
- ``propagate`` asks LangGraph for the "messages" stream mode (token events) only with a listener,
  and for "checkpoints" (the stop check at a step boundary) only with a stop signal; the run's
  result, usage and saved meta are the same either way.
- The constructor compiles the configured graph; the first run reuses it.
"""

from __future__ import annotations

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.messages import HumanMessage, SystemMessage

from tests.fake_openai import FakeOpenAIServer
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients import create_llm
from tradingagents.llm_clients.openai_chat import _reads_tokens

PROMPT = [SystemMessage("Instrument: IBM\nAnalysis date: 2024-02-01"), HumanMessage("Go.")]
DATE = "2024-05-10"


class _Ends(BaseCallbackHandler):
    """A handler that reads whole answers only (as the usage tracker does)."""

    def __init__(self):
        self.ends = 0

    def on_llm_end(self, response, **kwargs):
        self.ends += 1


class _Tokens(BaseCallbackHandler):
    def __init__(self):
        self.seen: list[str] = []

    def on_llm_new_token(self, token, **kwargs):
        self.seen.append(token)


class _IgnoresLLM(_Tokens):
    @property
    def ignore_llm(self) -> bool:
        return True


def test_reads_tokens_names_the_handlers_that_take_chunks():
    class Manager:
        def __init__(self, *handlers):
            self.handlers = list(handlers)

    assert not _reads_tokens(Manager())
    assert not _reads_tokens(Manager(_Ends()))
    assert _reads_tokens(Manager(_Ends(), _Tokens()))
    assert not _reads_tokens(Manager(_IgnoresLLM()))  # a handler that ignores LLM events takes none


def test_chunks_are_dispatched_only_to_a_call_whose_callbacks_read_them(monkeypatch):
    dispatched = {"n": 0}
    original = CallbackManagerForLLMRun.on_llm_new_token

    def counting(self, *args, **kwargs):
        dispatched["n"] += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CallbackManagerForLLMRun, "on_llm_new_token", counting)
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config())
        ends = _Ends()
        quiet = llm.invoke(PROMPT, config={"callbacks": [ends]})
        assert server.requests[-1]["stream"]  # still a streamed request …
        assert dispatched["n"] == 0 and ends.ends == 1  # … whose chunks went to nobody
        tokens = _Tokens()
        heard = llm.invoke(PROMPT, config={"callbacks": [_Ends(), tokens]})
        assert dispatched["n"] > 2 and "".join(tokens.seen) == heard.content
    assert quiet.content == heard.content and quiet.usage_metadata == heard.usage_metadata


def _graph(server, tmp_path, name):
    cfg = server.llm_config(home=str(tmp_path / name), analyst_execution="parallel", data_vendor="demo")
    return TradingAgentsGraph(["market", "news"], config=cfg)


def _modes_of(graph, monkeypatch) -> list:
    seen: list = []
    compiled = graph.compiled_graph(["market", "news"])
    real = type(compiled).stream

    def spy(self, *args, **kwargs):
        seen.append(list(kwargs.get("stream_mode") or []))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(compiled), "stream", spy)
    return seen


@pytest.mark.parametrize("listener", [False, True])
def test_stream_modes_follow_who_listens_and_the_result_does_not(listener, tmp_path, monkeypatch):
    # a server each: its tool-call ids count its requests, so both runs see the same prompts
    with FakeOpenAIServer() as server:
        quiet = _graph(server, tmp_path, "quiet")
        assert quiet.compiled_graphs.compiles == 1  # compiled by the constructor
        modes = _modes_of(quiet, monkeypatch)
        events: list = []
        state, rating = quiet.propagate("NVDA", DATE, on_event=events.append if listener else None,
                                        should_stop=(lambda: False) if listener else None)
        assert quiet.compiled_graphs.compiles == 1  # … and reused by the run
        assert all(r["stream"] for r in server.chat_requests if not r.get("response_format"))
    assert modes[0] == (["tasks", "updates", "checkpoints", "messages"] if listener else ["tasks", "updates"])
    if listener:
        assert any(e.kind == "token" for e in events)  # the live text still streams
    with FakeOpenAIServer() as server:
        other = _graph(server, tmp_path, "other")
        other_state, other_rating = other.propagate("NVDA", DATE, on_event=None if listener else (lambda e: None))
    assert rating == other_rating and state["final_trade_decision"] == other_state["final_trade_decision"]
    meta, other_meta = quiet.last_run["record"]["meta"], other.last_run["record"]["meta"]
    for key in ("llm_calls", "tool_calls", "input_tokens", "output_tokens"):
        assert meta["usage"][key] == other_meta["usage"][key] > 0, key
    assert set(meta["node_times_ms"]) == set(other_meta["node_times_ms"])


def test_a_finished_run_clears_its_checkpoint_on_the_connection_it_ran_on(tmp_path, monkeypatch):
    from tradingagents.storage import sqlite_checkpoint as ckpt

    opened: list = []
    real = ckpt._open  # every new connection to a checkpoint database is opened here

    def counting(path):
        opened.append(path)
        return real(path)

    monkeypatch.setattr(ckpt, "_open", counting)
    cfg = {"llm_provider": "offline", "data_vendor": "demo", "home": str(tmp_path), "checkpoint_enabled": True,
           "analyst_execution": "sequential"}
    graph = TradingAgentsGraph(["market"], config=cfg)
    graph.propagate("NVDA", DATE)
    db = ckpt.checkpoint_path(graph.config, "NVDA")
    assert opened == [db]  # one connection for the run, its saving and its clearing
    assert not graph.has_resumable_run("NVDA", DATE)
    with ckpt._connect(db) as conn:  # the thread's rows are gone, not only hidden
        assert conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0] == 0


def _same_answer(quiet, heard):
    assert quiet.content == heard.content
    def calls(message):  # the fake server numbers tool-call ids by request
        return [{**c, "id": str(c["id"]).split("_")[-1]} for c in message.tool_calls]

    assert calls(quiet) == calls(heard) and quiet.invalid_tool_calls == heard.invalid_tool_calls
    assert quiet.usage_metadata == heard.usage_metadata and quiet.response_metadata == heard.response_metadata
    assert quiet.additional_kwargs == heard.additional_kwargs
    assert str(quiet.id).startswith("lc_run-") and str(heard.id).startswith("lc_run-")


def test_an_answer_nobody_watches_is_parsed_once_and_equals_the_streamed_one(monkeypatch):
    """Without a token reader the attempt's chunks are merged before parsing (coalesce_chunks): one
    message chunk instead of one per event, and the same answer, text and tool calls alike."""
    from langchain_core.tools import tool
    from langchain_openai.chat_models.base import BaseChatOpenAI

    @tool
    def get_stock_data(symbol: str, start_date: str, end_date: str) -> str:
        """Prices of a symbol between two dates."""
        return "prices"

    parsed = {"n": 0}
    real = BaseChatOpenAI._convert_chunk_to_generation_chunk

    def counting(self, *args, **kwargs):
        parsed["n"] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(BaseChatOpenAI, "_convert_chunk_to_generation_chunk", counting)
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config())
        for model in (llm, llm.bind_tools([get_stock_data])):
            parsed["n"] = 0
            quiet = model.invoke(PROMPT, config={"callbacks": [_Ends()]})
            quiet_parses = parsed["n"]
            parsed["n"] = 0
            heard = model.invoke(PROMPT, config={"callbacks": [_Tokens()]})
            assert quiet_parses <= 2 < parsed["n"]  # the merged chunk (+ the usage chunk) vs one per event
            _same_answer(quiet, heard)
        assert heard.tool_calls and heard.tool_calls[0]["name"] == "get_stock_data"


def test_coalesce_keeps_what_it_cannot_merge_exactly():
    from tradingagents.llm_clients.openai_chat import coalesce_chunks

    def event(delta, finish=None, **extra):
        return {"id": "c", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish,
                                                      "logprobs": extra.pop("logprobs", None)}], **extra}

    plain = [event({"role": "assistant", "content": "Hel"}), event({"content": "lo"}), event({}, "stop"),
             {"id": "c", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}]
    merged = coalesce_chunks(plain)
    assert len(merged) == 2 and merged[1] is plain[3]
    assert merged[0]["choices"][0]["delta"] == {"role": "assistant", "content": "Hello"}
    assert merged[0]["choices"][0]["finish_reason"] == "stop"
    calls = [event({"tool_calls": [{"index": 0, "id": "t1", "type": "function",
                                    "function": {"name": "f", "arguments": '{"a"'}}]}),
             event({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}, "tool_calls")]
    (one,) = coalesce_chunks(calls)
    assert one["choices"][0]["delta"]["tool_calls"] == [
        {"index": 0, "id": "t1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}]
    repeated = [calls[0], event({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]})]
    with_logprobs = [plain[0], event({"content": "x"}, logprobs={"content": []})]
    two_finishes = [event({"content": "a"}, "stop"), event({"content": "b"}, "stop")]
    for kept in (repeated, with_logprobs, two_finishes, [plain[0]], [plain[0], "not a dict"]):
        assert coalesce_chunks(kept) is kept


def test_a_stop_is_still_honoured_between_the_events_of_an_answer_nobody_watches():
    from tradingagents.errors import RunStopped

    class Guard(BaseCallbackHandler):  # the budget guard's shape: admit + stop_requested, no tokens
        def __init__(self):
            self.asked = 0

        def admit(self, *args, **kwargs):
            pass

        def stop_requested(self):
            self.asked += 1
            return self.asked >= 3  # pressed while the answer is arriving

    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config())
        guard = Guard()
        with pytest.raises(RunStopped):
            llm.invoke(PROMPT, config={"callbacks": [guard]})
        assert guard.asked == 3 and len(server.requests) == 1  # stopped mid-stream, not retried
