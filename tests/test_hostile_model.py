"""A hostile model: lone surrogates, a structured rating contradicted by its own text, forged tags.

Everything goes through the real langchain-openai client against tests/fake_openai.py.
"""

from __future__ import annotations

import json

from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from tests.fake_openai import FakeOpenAIServer, agentic_responder
from tradingagents.agents.managers.portfolio_manager import PortfolioDecision
from tradingagents.graph.results import load_run
from tradingagents.graph.signal_processing import process_signal, state_rating
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients.factory import create_llm
from tradingagents.llm_clients.structured import invoke_structured
from tradingagents.llm_clients.text import valid_data, valid_text

DATE = "2024-05-10"
LONE = "\ud800"


def _encodable(value) -> bool:
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
    return True


def test_valid_text_replaces_lone_surrogates_and_keeps_pairs():
    assert valid_text("a\ud800b") == "a\ufffdb"
    assert valid_text("x\udfff") == "x\ufffd"
    assert valid_text("ok \U0001F600") == "ok \U0001F600"
    assert valid_text("\ud83d\ude00") == "\U0001F600"  # a pair left as two halves recombines
    assert valid_data({"k\ud800": ["v\ud800", ("t\ud800",)]}) == {"k\ufffd": ["v\ufffd", ("t\ufffd",)]}


def test_lone_surrogates_are_replaced_in_text_tool_args_and_structured_output():
    def responder(body):
        if body.get("response_format"):
            return {"content": json.dumps({"rating": "Buy", "executive_summary": f"up {LONE} now",
                                           "investment_thesis": f"t{LONE}"})}
        if body.get("tools"):
            return {"content": None, "tool_calls": [{"name": "echo", "arguments": {"text": f"a{LONE}b"}}]}
        return {"content": f"plain {LONE} text"}

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    with FakeOpenAIServer(responder) as server:
        llm = create_llm(server.llm_config())
        plain = llm.invoke([HumanMessage(content="hi")])
        assert plain.content == "plain \ufffd text" and _encodable(plain.content)
        called = llm.bind_tools([echo]).invoke([HumanMessage(content="hi")])
        assert called.tool_calls[0]["args"] == {"text": "a\ufffdb"}
        decision, raw = invoke_structured(llm, PortfolioDecision, [HumanMessage(content="decide")])
        assert isinstance(decision, PortfolioDecision)  # the structured answer survives, cleaned
        assert decision.rating == "Buy" and decision.executive_summary == "up \ufffd now"
        assert _encodable(raw.content)


def _contradicting_pm(body):
    """Structured rating Buy, with a summary that names another rating (last label: Sell)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and "executive_summary" in json.dumps(fmt):
        return {"content": json.dumps({
            "rating": "Buy",
            "executive_summary": "Last month's rating: Sell. **Rating**: Sell was wrong; now we buy.",
            "investment_thesis": f"Strong demand {LONE}. Final rating: Sell (last quarter).",
        })}
    return agentic_responder(body, rating="Hold")


def test_the_structured_rating_is_the_rating_everywhere(ta_home):
    with FakeOpenAIServer(_contradicting_pm) as server:
        graph = TradingAgentsGraph(["market"], config=server.llm_config())
        events = []
        state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
    # the text alone would say Sell (the last label wins when parsing): the structured answer is Buy
    assert process_signal(state["final_trade_decision"]) == "Sell"
    assert rating == "Buy" and state["final_rating"] == "Buy" and state_rating(state) == "Buy"
    assert state["final_trade_decision"].startswith("**Rating**: Buy")
    assert "\ufffd" in state["final_trade_decision"]  # the lone surrogate arrived cleaned, run completed
    saved = load_run(None, "NVDA", DATE)
    assert saved["rating"] == "Buy" and saved["state"]["final_rating"] == "Buy"
    finished = [e for e in events if e.kind == "run_finished"]
    assert finished and finished[0].data["rating"] == "Buy"
    from tradingagents.agents.utils.memory import TradingMemoryLog

    entries = TradingMemoryLog(None).load_entries()
    assert [(e["ticker"], e["rating"]) for e in entries] == [("NVDA", "Buy")]
    report = (ta_home / "results" / "NVDA" / DATE / "report.md").read_text(encoding="utf-8")
    assert report.splitlines()[0].endswith("**Buy**")


def test_the_offline_engine_keeps_its_structured_rating_in_the_state():
    state, rating = TradingAgentsGraph(["market"]).propagate("NVDA", DATE)
    assert state["final_rating"] == rating
    assert state["final_trade_decision"].startswith(f"**Rating**: {rating}")


def test_process_signal_still_parses_text_for_callers_that_only_have_text():
    assert process_signal("blah\n**Rating**: Underweight") == "Underweight"
    assert state_rating({"final_trade_decision": "**Rating**: Overweight"}) == "Overweight"
    assert state_rating({"final_rating": "Sell", "final_trade_decision": "**Rating**: Buy"}) == "Sell"
    assert state_rating({"final_rating": "Maybe", "final_trade_decision": "**Rating**: Buy"}) == "Buy"
