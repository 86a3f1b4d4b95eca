"""The fake server's prompt caching: ``cached_tokens`` as OpenAI reports it, through the real client."""

from __future__ import annotations

import json

from langchain_core.messages import HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from tests.fake_openai import FakeOpenAIServer, PromptCache, openai_tokenizer, rendered_prompt

# ~3,000 tokens of text every request below starts with, and a short variable ending
SHARED = " ".join(f"Line {i}: the market report reads a close of {100 + i}.25 and an RSI of {30 + i % 40}."
                  for i in range(150))


def body(system: str, user: str, model: str = "fake-quick") -> dict:
    return {"model": model, "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}


def shared_tokens(a: dict, b: dict, tokenize) -> int:
    x, y = tokenize(rendered_prompt(a)), tokenize(rendered_prompt(b))
    n = 0
    while n < min(len(x), len(y)) and x[n] == y[n]:
        n += 1
    return n


def cached(cache: PromptCache, request: dict) -> int:
    """The cached tokens of ``request`` (``observe`` also gives its prompt tokens)."""
    return cache.observe(request)[1]


def test_the_tokenizer_is_openais_cl100k():
    name, tokenize = openai_tokenizer()
    assert name == "cl100k_base"
    assert tokenize("hello world") == [15339, 1917]  # cl100k_base's ids, not a 4-character estimate


def test_cached_tokens_are_the_shared_prefix_in_whole_128_token_blocks_from_1024():
    cache = PromptCache()
    first, second = body(SHARED, "Write the bull case."), body(SHARED, "Write the bear case.")
    assert cached(cache, first) == 0  # nothing seen yet
    shared = shared_tokens(first, second, cache.tokenize)
    assert shared > 1024
    read = cached(cache, second)
    assert read == shared // 128 * 128 and read % 128 == 0 and shared - 128 < read <= shared
    # the same prompt again: all of its whole blocks
    total = len(cache.tokenize(rendered_prompt(second)))
    assert cached(cache, second) == total // 128 * 128
    assert [r[2] for r in cache.records] == [0, read, total // 128 * 128]
    assert all(r[1] == len(cache.tokenize(rendered_prompt(b))) for r, b in zip(cache.records, [first, second, second], strict=True))


def test_under_1024_shared_tokens_nothing_is_cached():
    cache = PromptCache()
    short = SHARED[: 2000]  # a few hundred tokens
    cached(cache, body(short, "one"))
    assert cached(cache, body(short, "two")) == 0
    # the prefix must be at the start: the same text after a different first message is not cached
    cached(cache, body(SHARED, "x"))
    assert cached(cache, {"model": "fake-quick", "messages": [{"role": "user", "content": "hi"},
                                                             {"role": "system", "content": SHARED}]}) == 0


def test_the_cache_is_per_model_and_lasts_ten_minutes():
    now = [1000.0]
    cache = PromptCache(clock=lambda: now[0])
    cached(cache, body(SHARED, "a", model="fake-quick"))
    assert cached(cache, body(SHARED, "b", model="fake-deep")) == 0  # another model's cache
    now[0] += 599
    assert cached(cache, body(SHARED, "c", model="fake-quick")) >= 1024
    now[0] += 601  # ten minutes after the last request that started this way
    assert cached(cache, body(SHARED, "d", model="fake-quick")) == 0


def test_tools_come_first_in_the_cached_prefix():
    cache = PromptCache()
    tool = {"type": "function", "function": {"name": "get_news", "parameters": {"type": "object", "properties": {}}}}
    cached(cache, {**body(SHARED, "a"), "tools": [tool]})
    other = json.loads(json.dumps(tool))
    other["function"]["name"] = "get_global_news"
    assert cached(cache, {**body(SHARED, "b"), "tools": [other]}) == 0


def test_the_real_client_reads_cached_tokens_from_the_server():
    with FakeOpenAIServer() as server:
        llm = ChatOpenAI(model="fake-quick", api_key="k", base_url=server.base_url, max_retries=0, timeout=5)
        first = llm.invoke([SystemMessage(SHARED), HumanMessage("Write the bull case.")])
        second = llm.invoke([SystemMessage(SHARED), HumanMessage("Write the bear case.")])
        assert (first.usage_metadata.get("input_token_details") or {}).get("cache_read", 0) == 0
        read = second.usage_metadata["input_token_details"]["cache_read"]
        assert read >= 1024 and read % 128 == 0 and read <= second.usage_metadata["input_tokens"]
        assert read == server.prompt_cache.records[-1][2]
        # streamed answers report it too (usage in the stream's last chunk)
        third = ChatOpenAI(model="fake-quick", api_key="k", base_url=server.base_url, max_retries=0, timeout=5,
                           streaming=True, stream_usage=True).invoke([SystemMessage(SHARED), HumanMessage("Judge.")])
        assert third.usage_metadata["input_token_details"]["cache_read"] >= 1024


def test_a_server_without_caching_reports_none():
    with FakeOpenAIServer(prompt_cache=False) as server:
        llm = ChatOpenAI(model="fake-quick", api_key="k", base_url=server.base_url, max_retries=0, timeout=5)
        for _ in range(2):
            answer = llm.invoke([SystemMessage(SHARED), HumanMessage("again")])
        assert not (answer.usage_metadata.get("input_token_details") or {}).get("cache_read")
