"""invoke_structured: json_schema when the server has it, plain text + parse_rating when not."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from tests.fake_openai import FakeOpenAIServer, Fault, agentic_responder
from tradingagents.errors import LLMCallError
from tradingagents.llm_clients import create_llm, forget_json_schema_support, invoke_structured
from tradingagents.llm_clients.structured import JSON_SCHEMA_SUPPORT, support_key
from tradingagents.rating import parse_rating

PROMPT = [
    SystemMessage("You are the portfolio manager.\nInstrument: NVDA\nAnalysis date: 2024-05-10"),
    HumanMessage("Decide."),
]


class PortfolioDecision(BaseModel):
    rating: Literal["Buy", "Overweight", "Hold", "Underweight", "Sell"]
    executive_summary: str
    investment_thesis: str
    price_target: float | None = None
    time_horizon: str | None = None


@pytest.fixture(autouse=True)
def _fresh_support_memory():
    forget_json_schema_support()
    yield
    forget_json_schema_support()


@pytest.fixture
def server():
    with FakeOpenAIServer(rating="Overweight") as srv:
        yield srv


def test_json_schema_answer_is_parsed(server):
    llm = create_llm(server.llm_config())
    obj, raw = invoke_structured(llm, PortfolioDecision, PROMPT)
    assert isinstance(obj, PortfolioDecision)
    assert obj.rating == "Overweight" and obj.price_target is None
    assert isinstance(raw, AIMessage) and json.loads(raw.content)["rating"] == "Overweight"
    assert len(server.requests) == 1
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and "rating" in json.dumps(fmt["json_schema"]["schema"])


def test_rejected_json_schema_falls_back_to_text_and_is_remembered(server):
    server.inject(Fault.no_json_schema())
    llm = create_llm(server.llm_config())
    obj, text = invoke_structured(llm, PortfolioDecision, PROMPT)
    assert obj is None and isinstance(text, str)
    assert parse_rating(text) == "Overweight"
    assert [("response_format" in r) for r in server.requests] == [True, False]
    assert support_key(llm) in JSON_SCHEMA_SUPPORT.snapshot()

    # the next call (even from a new model object on the same server and model) goes straight to text
    again = create_llm(server.llm_config())
    obj, text = invoke_structured(again, PortfolioDecision, PROMPT)
    assert obj is None and parse_rating(text) == "Overweight"
    assert [("response_format" in r) for r in server.requests] == [True, False, False]

    # another model on the same server is tried with json_schema again (rejected, then remembered)
    deep = create_llm(server.llm_config(), "deep")
    invoke_structured(deep, PortfolioDecision, PROMPT)
    assert [("response_format" in r) for r in server.requests[3:]] == [True, False]

    forget_json_schema_support()
    server.clear_faults()
    obj, _ = invoke_structured(llm, PortfolioDecision, PROMPT)
    assert isinstance(obj, PortfolioDecision)


def test_unparseable_structured_answer_falls_back_to_text():
    def responder(request):
        if request.get("response_format"):
            return {"content": "I think **Rating**: Sell, honestly (this is not JSON)"}
        return agentic_responder(request, rating="Underweight")

    with FakeOpenAIServer(responder=responder) as srv:
        obj, text = invoke_structured(create_llm(srv.llm_config()), PortfolioDecision, PROMPT)
        assert obj is None and parse_rating(text) == "Underweight"  # the plain call's text
        assert len(srv.requests) == 2


def test_schema_violation_falls_back_to_text():
    def responder(request):
        if request.get("response_format"):
            return {"content": json.dumps({"rating": "Strong Buy", "executive_summary": "x"})}
        return agentic_responder(request, rating="Buy")

    with FakeOpenAIServer(responder=responder) as srv:
        obj, text = invoke_structured(create_llm(srv.llm_config()), PortfolioDecision, PROMPT)
        assert obj is None and parse_rating(text) == "Buy"


def test_transport_failures_are_raised_not_papered_over(server):
    llm = create_llm(server.llm_config(llm_max_retries=1))
    server.inject(Fault.status(503, times=10))
    with pytest.raises(LLMCallError) as info:
        invoke_structured(llm, PortfolioDecision, PROMPT)
    assert info.value.status == 503
    assert len(server.requests) == 2  # no plain-text call after a server failure
    assert JSON_SCHEMA_SUPPORT.snapshot() == frozenset()


def test_fallback_failure_is_raised(server):
    server.inject(Fault.no_json_schema(), Fault.status(500, times=10))
    with pytest.raises(LLMCallError):
        invoke_structured(create_llm(server.llm_config(llm_max_retries=0)), PortfolioDecision, PROMPT)


def test_model_without_structured_output_support_uses_text():
    llm = FakeListChatModel(responses=["Weighing it all: **Rating**: Underweight"])
    obj, text = invoke_structured(llm, PortfolioDecision, PROMPT)
    assert obj is None and parse_rating(text) == "Underweight"


def test_offline_model_gives_a_schema_instance():
    from langchain_core.runnables import RunnableLambda

    from tests.graph_helpers import as_role

    llm = create_llm({"llm_provider": "offline"}, "deep")
    # as the Portfolio Manager's node calls it (the offline engine answers the role its caller names)
    obj, raw = RunnableLambda(lambda _: invoke_structured(llm, PortfolioDecision, PROMPT)).invoke(
        None, as_role("portfolio_manager"))
    assert isinstance(obj, PortfolioDecision)
    assert obj.rating in ("Buy", "Overweight", "Hold", "Underweight", "Sell")


def test_a_new_server_on_a_reused_url_starts_with_json_schema_again(server):
    server.inject(Fault.no_json_schema())
    llm = create_llm(server.llm_config())
    invoke_structured(llm, PortfolioDecision, PROMPT)
    assert support_key(llm) in JSON_SCHEMA_SUPPORT.snapshot()
    JSON_SCHEMA_SUPPORT.mark_unsupported(("http://elsewhere:1/v1", "m"))
    forget_json_schema_support(server.base_url + "/")
    assert JSON_SCHEMA_SUPPORT.snapshot() == frozenset({("http://elsewhere:1/v1", "m")})


def test_a_structured_answers_schema_is_built_once_and_sent_as_pydantic_builds_it(server, monkeypatch):
    from pydantic.json_schema import GenerateJsonSchema

    from tradingagents.llm_clients.structured import StructuredAnswer

    class Decision(StructuredAnswer):
        rating: Literal["Buy", "Overweight", "Hold", "Underweight", "Sell"]
        executive_summary: str
        price_target: float | None = None

    own = BaseModel.model_json_schema.__func__(Decision)  # pydantic's schema, no cache
    built = []
    real_generate = GenerateJsonSchema.generate
    monkeypatch.setattr(GenerateJsonSchema, "generate",
                        lambda self, *a, **k: built.append(1) or real_generate(self, *a, **k))
    llm = create_llm(server.llm_config())
    for _ in range(3):
        obj, _raw = invoke_structured(llm, Decision, PROMPT)
        assert isinstance(obj, Decision) and obj.rating == "Overweight"
    assert len(built) == 1  # once, not twice a call (langchain-openai's metadata, then the SDK's strict format)
    assert len(server.requests) == 3
    sent = [r["response_format"] for r in server.requests]
    assert sent[0] == sent[1] == sent[2]
    assert sent[0]["json_schema"]["name"] == "Decision" and sent[0]["json_schema"]["strict"] is True
    assert set(sent[0]["json_schema"]["schema"]["properties"]) == set(own["properties"])
    # each caller gets its own copy: a caller that changes it changes nothing for the next
    first = Decision.model_json_schema()
    assert first == own
    first["properties"].clear()
    assert Decision.model_json_schema() == own


def test_a_filtered_structured_answer_falls_back_to_a_plain_call(server):
    server.inject(Fault.finish("content_filter", when=lambda body: bool(body.get("response_format"))))
    obj, text = invoke_structured(create_llm(server.llm_config()), PortfolioDecision, PROMPT)
    assert obj is None and parse_rating(text) == "Overweight"  # the plain call's answer
    assert [bool(r.get("response_format")) for r in server.requests] == [True, False]


def test_a_structured_call_runs_on_the_callers_thread_and_its_callbacks_see_one_model_call(server):
    import threading

    from langchain_core.callbacks import BaseCallbackHandler

    seen: list[tuple[str, object]] = []

    class Record(BaseCallbackHandler):
        def on_chat_model_start(self, serialized, messages, *, invocation_params=None, **kwargs):
            seen.append((threading.current_thread().name, (invocation_params or {}).get("response_format")))

    llm = create_llm(server.llm_config(), callbacks=[Record()])
    obj, raw = invoke_structured(llm, PortfolioDecision, PROMPT)
    assert isinstance(obj, PortfolioDecision) and isinstance(raw, AIMessage)
    # one model call, made by this thread (no thread pool per call), asking for the schema
    assert seen == [(threading.current_thread().name, PortfolioDecision)]
