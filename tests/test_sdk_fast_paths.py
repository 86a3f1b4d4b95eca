"""The fast paths that reach into the OpenAI SDK's internals (``llm_clients/sdk_fast_paths.py``): each gives
what the SDK's own path gives (the same request, the same parsed answer, the same ChatCompletion), on the
SDK versions they were measured on, which constraints.txt pins.

Real parts: the OpenAI SDK and langchain-openai against tests/fake_openai.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import openai
import pytest

from tradingagents.llm_clients import create_llm, sdk_fast_paths


def test_the_installed_sdk_is_the_pinned_one_and_a_measured_one():
    pin = re.search(r"^openai==(\S+)$", (Path(__file__).resolve().parents[1] / "constraints.txt").read_text(),
                    re.MULTILINE)
    assert pin and openai.__version__ == pin.group(1)
    assert sdk_fast_paths.sdk_version() in sdk_fast_paths.MEASURED_SDK and sdk_fast_paths.measured()


def test_on_an_sdk_not_measured_the_client_is_left_as_the_sdk_made_it(monkeypatch):
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        monkeypatch.setattr(openai, "__version__", "9.0.0")
        llm = create_llm(server.llm_config())
        assert not isinstance(llm.client, sdk_fast_paths._DictChunks)
        assert llm.invoke("Instrument: NVDA\nAnalysis date: 2024-05-10").content  # the SDK's own path works
        monkeypatch.undo()
        assert isinstance(create_llm(server.llm_config()).client, sdk_fast_paths._DictChunks)


# ------------------------------------------------------------------ create without the SDK's transform
REQUEST = {
    "model": "fake-quick",
    "messages": [
        {"role": "system", "content": "You are the Market Analyst."},
        {"role": "user", "content": [{"type": "text", "text": "Go."}]},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_stock_data", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "rows"},
    ],
    "tools": [{"type": "function", "function": {"name": "get_stock_data", "description": "Rows.",
                                                "parameters": {"type": "object", "properties": {}}}}],
    "tool_choice": "auto", "parallel_tool_calls": False, "max_tokens": 64, "temperature": 0.0, "seed": 1,
    "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
    "stream_options": {"include_usage": True}, "extra_body": {"top_k": 3},
}


@pytest.mark.parametrize("stream", [True, False])
def test_create_sends_the_body_the_sdk_sends_without_its_transform(stream, monkeypatch):
    from openai._utils import maybe_transform
    from openai.types.chat import completion_create_params

    from tests.fake_openai import FakeOpenAIServer
    from tradingagents.llm_clients import sdk_fast_paths

    request = {**REQUEST, "stream": stream}
    if not stream:
        del request["stream_options"]
    params = (completion_create_params.CompletionCreateParamsStreaming if stream
              else completion_create_params.CompletionCreateParamsNonStreaming)
    body = {k: v for k, v in request.items() if k != "extra_body"}
    assert maybe_transform(body, params) == body  # what makes skipping it safe (an SDK change shows here)
    bypassed = []
    real = sdk_fast_paths._DictChunks._post
    monkeypatch.setattr(sdk_fast_paths._DictChunks, "_post",
                        lambda self, kwargs: bypassed.append(real(self, kwargs)) or bypassed[-1])
    with FakeOpenAIServer() as server:
        llm = create_llm(server.llm_config())
        ours, sdk = llm.client, llm.client._inner  # _DictChunks and the SDK's own completions
        for completions in (sdk, ours):
            if stream:
                with completions.create(**request) as chunks:
                    assert list(chunks)
            else:
                raw = completions.with_raw_response.create(**request)  # how langchain-openai sends it
                assert raw.parse().choices[0].message is not None
        assert len(bypassed) == 1 and bypassed[0] is not None  # ours did not hand it to the SDK's create
        assert len(server.requests) == 2 and server.requests[0] == server.requests[1]
        assert server.requests[1]["top_k"] == 3 and server.requests[1]["messages"] == request["messages"]
        assert server.headers[0].get("authorization") == server.headers[1].get("authorization")



def test_a_structured_answer_is_sent_and_parsed_as_the_sdks_parse_does(monkeypatch):
    """``parse`` (how langchain-openai asks for a structured answer, the Portfolio Manager's) skips the
    SDK's transform too: the same request, the same helper header, the same parsed answer."""
    import json as _json

    from pydantic import BaseModel

    from tests.fake_openai import FakeOpenAIServer
    from tradingagents.llm_clients import sdk_fast_paths

    class Verdict(BaseModel):
        rating: str
        reason: str

    answer = {"rating": "Buy", "reason": "Momentum and margins."}
    bypassed = []
    real = sdk_fast_paths._DictChunks._post_parse
    monkeypatch.setattr(sdk_fast_paths._DictChunks, "_post_parse",
                        lambda self, kwargs: bypassed.append(real(self, kwargs)) or bypassed[-1])
    with FakeOpenAIServer(lambda body: {"content": _json.dumps(answer)}) as server:
        llm = create_llm(server.llm_config())
        assert llm.root_client.chat.completions is llm.client  # where langchain-openai sends it
        ours, sdk = llm.client, llm.client._inner
        parsed = []
        for completions in (sdk, ours):
            raw = completions.with_raw_response.parse(
                model="fake-quick", messages=REQUEST["messages"][:2], response_format=Verdict, max_tokens=64,
                temperature=0.0, extra_body={"top_k": 3})
            parsed.append(raw.parse())
        assert len(bypassed) == 1 and bypassed[0] is not None  # ours did not hand it to the SDK's parse
        assert len(server.requests) == 2 and server.requests[0] == server.requests[1]
        assert server.requests[1]["response_format"]["type"] == "json_schema" and server.requests[1]["top_k"] == 3
        helper = "x-stainless-helper-method"
        assert server.headers[0].get(helper) == server.headers[1].get(helper) == "chat.completions.parse"
        assert type(parsed[0]) is type(parsed[1])
        assert parsed[0].choices[0].message.parsed == parsed[1].choices[0].message.parsed == Verdict(**answer)
        dumps = [p.model_dump(exclude={"id", "created"}, warnings=False) for p in parsed]  # the server's counters
        assert dumps[0] == dumps[1]
        # tools, or a body that is not plain JSON: the SDK's own parse
        assert ours._post_parse({"model": "fake-quick", "messages": [], "response_format": Verdict,
                                 "tools": []}) is None
        assert ours._post_parse({"model": "fake-quick", "messages": (m for m in []),
                                 "response_format": Verdict}) is None


def test_what_is_not_plain_json_goes_through_the_sdks_create():
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as server:
        ours = create_llm(server.llm_config()).client
        generator = {"model": "fake-quick", "messages": (m for m in REQUEST["messages"][:2])}
        assert ours._post(dict(generator)) is None  # the SDK turns an iterable into a list; we do not
        assert ours._post({"model": "fake-quick", "messages": [], "not_a_parameter": 1}) is None
        assert not server.requests  # neither was sent
        raw = ours.with_raw_response.create(**generator)
        assert raw.parse().choices[0].message.content
        assert server.requests[0]["messages"] == REQUEST["messages"][:2]


_ANSWER = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "gpt-4o-mini",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17}}
_CALL = {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}


@pytest.mark.parametrize("answer", [
    _ANSWER,
    {**_ANSWER, "system_fingerprint": "fp", "service_tier": "default", "something_new": {"a": [1, None]}},
    {**_ANSWER, "choices": [{"index": 0, "message": _CALL, "finish_reason": "tool_calls", "logprobs": None}]},
    {**_ANSWER, "usage": {**_ANSWER["usage"], "prompt_tokens_details": {"cached_tokens": 0},
                          "completion_tokens_details": {"reasoning_tokens": 0}}},
    {**_ANSWER, "choices": [{"index": 0, "message": {"role": "assistant", "content": "x", "refusal": None,
                                                      "annotations": []}, "finish_reason": "stop"}]},
    {**_ANSWER, "created": "1700000000"},  # not the declared type: built as the SDK builds it
    {**_ANSWER, "choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "stop",
                             "logprobs": {"content": [{"token": "x", "logprob": 0, "bytes": None,
                                                       "top_logprobs": []}]}}]},
    {**_ANSWER, "choices": None},
], ids=["plain", "extras", "tool_call", "details", "refusal", "off_type", "logprobs", "no_choices"])
def test_an_unstreamed_answer_is_the_chat_completion_the_sdk_builds(answer):
    import copy

    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    from tradingagents.llm_clients.sdk_fast_paths import _checked_completion

    ours = _checked_completion().build(response=None, data=copy.deepcopy(answer))
    sdk = construct_type(type_=ChatCompletion, value=copy.deepcopy(answer))
    assert type(ours) is ChatCompletion
    exclude = {"choices": {"__all__": {"message": {"parsed"}}}} if answer["choices"] else None
    assert repr(ours.model_dump(exclude=exclude, warnings=False)) == repr(sdk.model_dump(exclude=exclude, warnings=False))
    assert repr(ours) == repr(sdk)
