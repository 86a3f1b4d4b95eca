"""The whole graph through the real langchain-openai client against the fake OpenAI server."""

from __future__ import annotations

import pytest

from tests.fake_openai import (
    FakeOpenAIServer,
    Fault,
    fake_openai,  # noqa: F401
)
from tests.graph_helpers import CallCounter, comparable
from tradingagents.errors import LLMCallError
from tradingagents.graph import checkpointer as ckpt
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"


def _graph(server, mode="sequential", callbacks=None, **extra):
    cfg = server.llm_config(analyst_execution=mode, **extra)
    return TradingAgentsGraph(config=cfg, callbacks=callbacks)


@pytest.mark.parametrize("mode", ["sequential", "parallel"])
def test_full_graph_through_openai_client(fake_openai, mode):  # noqa: F811
    fake_openai.rating = "Underweight"
    events = []
    counter = CallCounter()
    graph = _graph(fake_openai, mode, callbacks=[counter])
    state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
    assert rating == "Underweight"
    assert state["final_trade_decision"].startswith("**Rating**: Underweight")
    for key in ("market_report", "sentiment_report", "news_report", "fundamentals_report",
                "investment_plan", "trader_investment_plan"):
        assert state[key].strip(), key
    # every model call went over HTTP and was counted per node
    assert sum(counter.calls.values()) == len(fake_openai.chat_requests) == graph.last_run["usage"]["llm_calls"]
    assert counter.calls["Research Manager"] == 1 and counter.calls["Portfolio Manager"] == 1
    # tool calls really reached the data tools, with the analysis date
    tools = [e for e in events if e.kind == "tool_call"]
    assert len(tools) >= 4 and all(e.data["result_chars"] > 0 for e in tools)
    assert any(DATE in str(e.data["args"].values()) for e in tools)
    # the PM asked for json_schema structured output
    assert any(r.get("response_format") for r in fake_openai.chat_requests)
    # the two judges use the deep model, every other node the quick one
    models = [r["model"] for r in fake_openai.chat_requests]
    assert models.count("fake-deep") == 2 and models.count("fake-quick") == len(models) - 2
    # the prompts carried the instrument and date lines (the server regexes them)
    assert all("Instrument: NVDA" in str(r["messages"]) for r in fake_openai.chat_requests)


def test_server_without_json_schema_falls_back_to_text(fake_openai):  # noqa: F811
    fake_openai.rating = "Sell"
    fake_openai.inject(Fault.no_json_schema())
    _, rating = _graph(fake_openai).propagate("NVDA", DATE)
    assert rating == "Sell"


@pytest.mark.parametrize(
    "fault",
    [Fault.status(429), Fault.status(500), Fault.malformed_json(), Fault.empty_answer(),
     Fault.unknown_tool("get_crystal_ball")],
    ids=["429", "500", "malformed_json", "empty_answer", "unknown_tool"],
)
def test_transient_faults_are_retried_and_the_run_completes(fake_openai, fault, tmp_path):  # noqa: F811
    ref_state, _ = _graph(fake_openai, home=str(tmp_path / "ref")).propagate("NVDA", DATE)
    undisturbed = len(fake_openai.chat_requests)
    fake_openai.reset_counters()
    fake_openai.inject(fault)
    state, rating = _graph(fake_openai).propagate("NVDA", DATE)
    assert rating == "Hold"
    assert len(fake_openai.chat_requests) == undisturbed + 1  # exactly one retry
    assert comparable(state) == comparable(ref_state)


def _fault_at(server: FakeOpenAIServer, node: str, *faults: Fault) -> CallCounter:
    """Queue ``faults`` on the server just before the first model call of ``node``."""
    done = []

    def on_call(at, n):
        if at == node and not done:
            done.append(at)
            server.inject(*faults)

    return CallCounter(on_call)


@pytest.mark.parametrize(
    "node, fault",
    [
        ("News Analyst", Fault.status(500, times=3)),
        ("Research Manager", Fault.status(503, times=3)),
        ("Portfolio Manager", Fault.timeout(1.5, times=3)),
    ],
)
def test_persistent_fault_fails_cleanly_and_resumes_to_the_same_state(node, fault, tmp_path):
    with FakeOpenAIServer() as server:
        # undisturbed reference run in its own home
        ref_counter = CallCounter()
        ref_state, ref_rating = TradingAgentsGraph(
            config=server.llm_config(home=str(tmp_path / "ref"), llm_timeout=1.0, analyst_execution="sequential"),
            callbacks=[ref_counter]
        ).propagate("NVDA", DATE)
        server.reset_counters()

        counter = _fault_at(server, node, fault)
        # llm_max_retries=2 → 3 attempts, all faulted; sequential: the next requests are the node's
        cfg = server.llm_config(llm_timeout=1.0, analyst_execution="sequential")
        graph = TradingAgentsGraph(config=cfg, callbacks=[counter])
        events = []
        with pytest.raises(LLMCallError) as info:
            graph.propagate("NVDA", DATE, on_event=events.append)
        assert "fake-" in str(info.value) or "model" in str(info.value).lower()
        assert events[-1].kind == "run_failed" and events[-1].data["resumable"] is True
        tid = graph.thread_id("NVDA", DATE)
        assert ckpt.has_checkpoint(graph.config, "NVDA", tid)
        first = dict(counter.calls)
        counter.reset()

        state, rating = graph.propagate("NVDA", DATE)
        second = dict(counter.calls)
    assert graph.last_run["resumed"] is True
    assert rating == ref_rating
    assert comparable(state) == comparable(ref_state)
    # nodes that finished before the fault were not run again
    finished_before = {n for n in first if n != node}
    assert finished_before and not finished_before & set(second)
    # every model call of the undisturbed run happened once, plus the one that failed
    for name in set(ref_counter.calls) | set(first) | set(second):
        assert first.get(name, 0) + second.get(name, 0) == ref_counter.calls[name] + (name == node), name
    assert not ckpt.has_checkpoint(graph.config, "NVDA", tid)  # success cleared it


def test_max_concurrent_llm_calls_bounds_parallel_branches():
    with FakeOpenAIServer(latency_s=0.15) as server:
        TradingAgentsGraph(config=server.llm_config(analyst_execution="parallel",
                                                    max_concurrent_llm_calls=2)).propagate("NVDA", DATE)
        assert server.max_in_flight == 2
        server.reset_counters()
        server.max_in_flight = 0
        TradingAgentsGraph(config=server.llm_config(analyst_execution="parallel",
                                                    max_concurrent_llm_calls=4)).propagate("AAPL", DATE)
        assert server.max_in_flight == 4  # four analyst branches really overlap
