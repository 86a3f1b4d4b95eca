"""create_llm: providers, keys and secrets, retries and LLMCallError, against the fake server."""

from __future__ import annotations

import copy

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool

from tests.fake_openai import FakeOpenAIServer, Fault
from tradingagents.errors import LLMCallError, LLMConfigError
from tradingagents.llm_clients import (
    UsageTracker,
    check_llm_config,
    create_llm,
    create_llms,
    resolve_base_url,
)
from tradingagents.llm_presets import PROVIDER_PRESETS, provider_label, public_url
from tradingagents.team import ROLE_METADATA

PROMPT = [SystemMessage("Instrument: AAPL\nAnalysis date: 2024-05-10\nYou are the trader."), HumanMessage("Go.")]
SECRET = "sk-test-Zq81SECRETvalue9"


@pytest.fixture
def server():
    with FakeOpenAIServer() as srv:
        yield srv


@tool
def get_stock_data(symbol: str, start_date: str, end_date: str) -> str:
    """OHLCV rows."""
    return "rows"


def test_presets_and_labels():
    assert set(PROVIDER_PRESETS) >= {"offline", "openai", "openai_compatible", "ollama", "vllm", "lmstudio", "openrouter", "deepseek"}
    for name, preset in PROVIDER_PRESETS.items():
        assert {"base_url", "key_env", "label"} <= set(preset), name
    assert PROVIDER_PRESETS["ollama"]["base_url"] == "http://localhost:11434/v1"
    assert PROVIDER_PRESETS["vllm"]["base_url"] == "http://localhost:8000/v1"
    assert PROVIDER_PRESETS["lmstudio"]["base_url"] == "http://localhost:1234/v1"
    assert PROVIDER_PRESETS["openrouter"]["base_url"] == "https://openrouter.ai/api/v1"
    assert PROVIDER_PRESETS["deepseek"]["base_url"] == "https://api.deepseek.com/v1"
    with pytest.raises(TypeError):
        PROVIDER_PRESETS["ollama"]["base_url"] = "http://evil"  # read-only
    assert provider_label("offline") == "offline engine (no LLM)"
    assert provider_label("offline", capital=True) == "Offline engine (no LLM)"
    assert provider_label("ollama") == provider_label("ollama", "http://gpu:11434/v1") == "Ollama (local)"
    assert provider_label("openai_compatible", "http://h:1/v1") == "OpenAI-compatible server at http://h:1/v1"
    assert provider_label("openai_compatible") == "OpenAI-compatible server"
    assert provider_label("nope") == "nope" and provider_label(None) == "—"
    assert resolve_base_url({"llm_provider": "ollama"}) == "http://localhost:11434/v1"
    assert resolve_base_url({"llm_provider": "ollama", "backend_url": "http://gpu:11434/v1/"}) == "http://gpu:11434/v1"
    assert resolve_base_url({}) is None


def test_config_errors_are_clear(monkeypatch):
    with pytest.raises(LLMConfigError, match="'gemeni' is not an LLM provider.*ollama"):
        create_llm({"llm_provider": "gemeni"})
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY") as info:
        create_llm({"llm_provider": "openai"})
    assert "sidebar" not in str(info.value) and "resume" not in str(info.value)
    assert info.value.key_env == "OPENAI_API_KEY"  # what the app maps to its sidebar field
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        check_llm_config({"llm_provider": "openai"})  # the same check, building nothing
    with pytest.raises(LLMConfigError, match="OPENROUTER_API_KEY"):
        create_llm({"llm_provider": "openrouter"})
    with pytest.raises(LLMConfigError, match="DEEPSEEK_API_KEY"):
        create_llm({"llm_provider": "deepseek"}, "deep")
    with pytest.raises(LLMConfigError, match="backend_url") as info:
        create_llm({"llm_provider": "openai_compatible"})
    assert info.value.key == "backend_url"
    with pytest.raises(LLMConfigError, match="kind"):
        create_llm({}, "medium")
    assert check_llm_config({"llm_provider": "ollama"}) is None  # no key needed, nothing contacted
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert create_llm({"llm_provider": "openai"}).model_name == "gpt-4o-mini"


def test_env_override_selects_provider(monkeypatch, server):
    monkeypatch.setenv("TRADINGAGENTS_LLM_PROVIDER", "openai_compatible")
    monkeypatch.setenv("TRADINGAGENTS_BACKEND_URL", server.base_url)
    llm = create_llm(None, "deep")
    assert llm.model_name == "gpt-4o"
    assert "**Rating**" in llm.invoke(PROMPT).content
    assert server.requests[-1]["model"] == "gpt-4o"


def test_offline_provider_is_the_default():
    llm = create_llm()
    assert type(llm).__name__ == "OfflineChatModel"
    tracker = UsageTracker()
    llm = create_llm({}, "deep", callbacks=[tracker])
    llm.invoke("Instrument: NVDA\nAnalysis date: 2024-05-10\nhello", {"metadata": {ROLE_METADATA: "trader"}})
    assert tracker.totals()["llm_calls"] == 1


def test_models_use_config_names_timeout_and_retries(server):
    cfg = server.llm_config(quick_think_llm="my-small", deep_think_llm="my/large:70b", llm_timeout=7.5, llm_max_retries=4, llm_temperature=0.2)
    quick = create_llm(cfg, "quick")
    deep = create_llm(cfg, "deep")
    assert quick.model_name == "my-small" and deep.model_name == "my/large:70b"
    assert quick.max_retries == 4 and quick.request_timeout == 7.5 and quick.temperature == 0.2
    deep.invoke(PROMPT)
    assert server.requests[-1]["model"] == "my/large:70b"
    assert server.requests[-1]["temperature"] == 0.2


def test_local_preset_needs_no_key_and_backend_url_overrides(server):
    llm = create_llm({"llm_provider": "ollama", "backend_url": server.base_url, "quick_think_llm": "llama3.1"})
    assert llm.openai_api_base == server.base_url
    assert "**Rating**" in llm.invoke(PROMPT).content
    assert server.headers[-1]["authorization"] == "Bearer not-needed"


def test_keys_come_from_caller_or_env_and_never_leak(server, monkeypatch):
    config = server.llm_config(llm_provider="openrouter")
    before = copy.deepcopy(config)
    tracker = UsageTracker()
    llm = create_llm(config, api_key=SECRET, callbacks=[tracker])
    llm.bind_tools([get_stock_data]).invoke(PROMPT)
    assert server.headers[-1]["authorization"] == f"Bearer {SECRET}"  # the key is really used
    assert config == before  # the caller's config is untouched: no key added
    for text in (repr(llm), str(llm), llm.model_dump_json(), repr(llm.model_dump()), repr(tracker.by_node()), repr(tracker.totals())):
        assert SECRET not in text
    assert SECRET not in repr(vars(tracker))

    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET + "-env")
    llm = create_llm(config)
    llm.invoke(PROMPT)
    assert server.headers[-1]["authorization"] == f"Bearer {SECRET}-env"
    assert SECRET not in repr(llm) and SECRET not in llm.model_dump_json()
    # the caller's key beats the environment
    create_llm(config, api_key="sk-caller").invoke(PROMPT)
    assert server.headers[-1]["authorization"] == "Bearer sk-caller"


def test_error_messages_never_carry_the_key():
    def echo_key(request):
        raise RuntimeError(f"bad key {SECRET}")  # the fake answers 500 with this text

    with FakeOpenAIServer(responder=echo_key) as srv:
        llm = create_llm(srv.llm_config(llm_max_retries=0), api_key=SECRET)
        with pytest.raises(LLMCallError) as info:
            llm.invoke(PROMPT)
    assert info.value.status == 500
    assert SECRET not in str(info.value) and "***" in str(info.value)


def test_429_and_5xx_are_retried_then_succeed(server):
    llm = create_llm(server.llm_config(llm_max_retries=3))
    server.inject(Fault.status(429), Fault.status(500), Fault.status(503))
    answer = llm.invoke(PROMPT)
    assert "**Rating**" in answer.content
    assert len(server.requests) == 4


def test_persistent_429_fails_with_a_plain_message(server):
    llm = create_llm(server.llm_config(llm_max_retries=2))
    server.inject(Fault.status(429, times=10))
    with pytest.raises(LLMCallError) as info:
        llm.invoke(PROMPT)
    err = info.value
    assert len(server.requests) == 3  # bounded: 1 + llm_max_retries
    assert err.status == 429 and err.retryable and err.model == "fake-quick" and err.provider == "openai_compatible"
    assert "HTTP 429" in str(err) and "rate limited" in str(err) and "fake-quick" in str(err)
    assert "after 3 attempts" in str(err)


def test_non_retryable_status_fails_at_once(server):
    llm = create_llm(server.llm_config(llm_max_retries=3))
    server.inject(Fault.status(401, times=5))
    with pytest.raises(LLMCallError) as info:
        llm.invoke(PROMPT)
    assert len(server.requests) == 1
    assert info.value.status == 401 and not info.value.retryable
    assert "API key was rejected" in str(info.value)


def test_timeout_is_retried_then_fails(server):
    llm = create_llm(server.llm_config(llm_timeout=0.25, llm_max_retries=1))
    server.inject(Fault.timeout(600.0, times=5))  # the client gives up long before the server answers
    with pytest.raises(LLMCallError) as info:
        llm.invoke(PROMPT)
    assert len(server.requests) == 2
    assert info.value.status is None and info.value.retryable
    assert "0.25 s timeout" in str(info.value)


def test_timeout_once_then_success(server):
    # a timeout long enough for a normal answer on a busy machine, a fault far longer than it
    llm = create_llm(server.llm_config(llm_timeout=5.0, llm_max_retries=2))
    server.inject(Fault.timeout(600.0))
    assert "**Rating**" in llm.invoke(PROMPT).content
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("fault", "bind", "message"),
    [
        (Fault.malformed_json, False, "not valid JSON"),
        (Fault.empty_answer, False, "empty answer"),
        (lambda times: Fault.unknown_tool("get_crystal_ball", times=times), True, "unknown tool 'get_crystal_ball'"),
    ],
)
def test_bad_answers_are_retried_then_fail_cleanly(server, fault, bind, message):
    llm = create_llm(server.llm_config(llm_max_retries=2))
    runnable = llm.bind_tools([get_stock_data]) if bind else llm
    server.inject(fault(times=1))
    answer = runnable.invoke(PROMPT)  # one bad answer: the retry gets a good one
    assert len(server.requests) == 2
    assert answer.tool_calls or "**Rating**" in answer.content
    if bind:
        assert [c["name"] for c in answer.tool_calls] == ["get_stock_data"]
    server.inject(fault(times=10))
    with pytest.raises(LLMCallError, match=message) as info:
        runnable.invoke(PROMPT)
    assert len(server.requests) == 2 + 3
    if bind:
        assert "get_stock_data" in str(info.value)  # names the tools that exist


def test_unreachable_server_fails_with_connection_message():
    with FakeOpenAIServer() as srv:
        url = srv.base_url
    llm = create_llm({"llm_provider": "openai_compatible", "backend_url": url, "llm_max_retries": 0})
    with pytest.raises(LLMCallError, match="(?i)could not connect") as info:
        llm.invoke(PROMPT)
    assert info.value.retryable


def _closed_port_url() -> str:
    with FakeOpenAIServer() as srv:
        return srv.base_url  # nothing listens there any more: the connection is refused


def test_refused_connection_asks_whether_the_server_runs():
    url = _closed_port_url()
    llm = create_llm({"llm_provider": "ollama", "backend_url": url, "llm_max_retries": 0})
    assert llm.model_name == "llama3.1"  # the Ollama preset's model, not gpt-4o-mini
    with pytest.raises(LLMCallError) as info:
        llm.invoke(PROMPT)
    message = str(info.value)
    assert message.startswith(f"Could not connect to {url} — is the server running?")
    assert "Ollama" in message and "Traceback" not in message and "APIConnectionError" not in message
    assert info.value.exit_code == 4


def test_every_local_preset_names_a_model_that_exists_there(server):
    PRESETS = PROVIDER_PRESETS

    ollama = PRESETS["ollama"]
    assert ollama["quick_model"] == ollama["deep_model"] == "llama3.1" and "llama3.1" in ollama["help"]
    for name in ("vllm", "lmstudio"):  # they serve what they loaded: the model is read from /models
        assert PRESETS[name]["ask_server"] and "/models" in PRESETS[name]["help"]
        quick, deep = create_llms({"llm_provider": name, "backend_url": server.base_url})
        assert quick.model_name == deep.model_name == server.models[0]
        assert "**Rating**" in quick.invoke(PROMPT).content
        assert server.requests[-1]["model"] == server.models[0]
    named = create_llm({"llm_provider": "vllm", "backend_url": server.base_url, "quick_think_llm": "fake-deep"})
    assert named.model_name == "fake-deep"
    with pytest.raises(LLMCallError, match="is the server running"):
        create_llm({"llm_provider": "lmstudio", "backend_url": _closed_port_url()})


def test_create_llms_share_one_bound(server):
    quick, deep = create_llms(server.llm_config(max_concurrent_llm_calls=3))
    assert quick._limiter is deep._limiter
    assert quick.model_name == "fake-quick" and deep.model_name == "fake-deep"
    assert create_llm(server.llm_config())._limiter is not create_llm(server.llm_config())._limiter


async def _ainvoke(llm):
    return await llm.ainvoke(PROMPT)


def test_async_invoke_goes_through_the_same_checks(server):
    import asyncio

    llm = create_llm(server.llm_config(llm_max_retries=1))
    assert "**Rating**" in asyncio.run(_ainvoke(llm)).content
    server.inject(Fault.empty_answer(times=5))
    with pytest.raises(LLMCallError, match="empty answer"):
        asyncio.run(_ainvoke(llm))


def test_urls_in_labels_and_errors_hide_credentials():
    assert public_url("https://user:pw@proxy.example:8443/v1?key=abc") == "https://proxy.example:8443/v1"
    label = provider_label("openai_compatible", "http://bob:hunter2@h:1/v1?token=t")
    assert "hunter2" not in label and "token" not in label and "h:1/v1" in label


@pytest.mark.parametrize(
    "bad", [{"llm_timeout": "soon"}, {"llm_max_retries": "many"}, {"llm_temperature": "warm"}]
)
def test_bad_numeric_settings_are_config_errors(server, bad):
    (key,) = bad
    with pytest.raises(LLMConfigError, match=f"{key}=.*is not valid: expected a"):
        create_llm(server.llm_config(**bad))
