"""Native Anthropic and Gemini: the whole team through langchain-anthropic and langchain-google-genai against
local servers speaking each API (tests/fake_native.py), from the CLI's ``--provider`` to the saved report."""

from __future__ import annotations

import json
import re
import socket

import pytest

from tests.fake_native import FakeAnthropicServer, FakeGeminiServer
from tradingagents import pricing
from tradingagents.cli import main
from tradingagents.errors import LLMCallError
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients.factory import check_llm_config, create_llm
from tradingagents.storage import load_run

DATE = "2024-05-10"
FAKES = {"anthropic": FakeAnthropicServer, "google": FakeGeminiServer}


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    monkeypatch.setenv("GOOGLE_API_KEY", "g-test-key")


def _headings(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("#")]


def _structured_request(provider: str, body: dict) -> bool:
    if provider == "anthropic":
        fmt = (body.get("output_config") or {}).get("format") or {}
        return fmt.get("type") == "json_schema" and not body.get("stream")
    gen = body.get("generationConfig") or {}
    calling = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    return bool(gen.get("responseJsonSchema") or gen.get("responseSchema")) or calling.get("mode") == "ANY"





@pytest.mark.timeout(300)
def test_cli_runs_on_anthropic_and_gemini_with_the_same_report_structure(ta_home, capsys):
    reports, metas = {}, {}
    for provider, fake_cls in FAKES.items():
        with fake_cls(rating="Overweight") as fake:
            home = ta_home / provider
            code = main(["NVDA", DATE, "--provider", provider, "--backend-url", fake.base_url, "--home", str(home),
                         "--sequential"])
            out = capsys.readouterr()
            assert code == 0, out.err
            assert "Rating: Overweight" in out.out
            saved = load_run({"home": str(home)}, "NVDA", DATE)
            meta = saved["meta"]
            usage = meta["usage"]
            # every request went over HTTP, was counted, and was priced from the table
            assert usage["llm_calls"] == len(fake.requests) > 10
            assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
            table = pricing.pricing_table({})
            # (cache reads at the cached-input list price, a tenth of the input's)
            assert usage["cost_usd"] == pytest.approx(
                sum(((i - c) * table[m][0] + c * pricing.cached_input_price(m, table) + o * table[m][1]) / 1e6
                    for m, i, o, c in fake.billed), rel=1e-6)
            # the Portfolio Manager's rating came as structured output; the judges thought with the deep model
            assert any(_structured_request(provider, r) for r in fake.requests)
            models = [str(m) for m, *_ in fake.billed]
            deep = "claude-sonnet-4-5" if provider == "anthropic" else "gemini-2.5-pro"
            assert models.count(deep) == 2
            assert meta["llm_provider"] == provider
            # the key from the environment, in the header each API reads
            sent = {h.get("x-goog-api-key") if provider == "google" else (h.get("x-api-key") or h.get("authorization"))
                    for h in fake.headers}
            assert sent in ({"g-test-key"}, {"sk-ant-test-key"}, {"Bearer sk-ant-test-key"})
            reports[provider] = (home / "results" / "NVDA" / DATE / "report.md").read_text(encoding="utf-8")
            metas[provider] = meta
            if provider == "anthropic":
                # the stable prefix (each role's instructions) is marked for the prompt cache and read back
                assert all(isinstance(r.get("system"), list) and r["system"][0].get("cache_control") == {"type": "ephemeral"}
                           for r in fake.requests if r.get("system"))
    assert _headings(reports["anthropic"]) == _headings(reports["google"])
    assert set(metas["anthropic"]["decision"]) == set(metas["google"]["decision"])
    assert metas["anthropic"]["decision"]["rating"] == metas["google"]["decision"]["rating"] == "Overweight"


@pytest.mark.parametrize("provider", list(FAKES))
@pytest.mark.timeout(300)
def test_native_models_stream_tokens_and_call_tools(provider, ta_home):
    with FAKES[provider](rating="Sell") as fake:
        events = []
        graph = TradingAgentsGraph(config=fake.llm_config(analyst_execution="sequential", selected_analysts=["market"],
                                                          max_debate_rounds=2))
        state, rating = graph.propagate("NVDA", DATE, on_event=events.append)
        if provider == "anthropic":
            # a role that speaks again in the same run (the debaters' second round) reads its prompt from the cache
            assert fake.cache_reads > 0
            usage = graph.last_run["usage"]
            assert usage["llm_calls"] == len(fake.requests)
    assert rating == "Sell"
    assert state["market_report"].strip() and state["final_trade_decision"].startswith("**Rating**: Sell")
    tokens = [e for e in events if e.kind == "token" and e.data.get("text_delta")]
    assert tokens, "no streamed text reached the run's events"
    tools = [e for e in events if e.kind == "tool_call"]
    assert tools and all(e.data["result_chars"] > 0 for e in tools)


@pytest.mark.parametrize("provider", list(FAKES))
def test_unreachable_server_is_an_llm_call_error_naming_it(provider):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = {"llm_provider": provider, "backend_url": f"http://127.0.0.1:{port}", "llm_max_retries": 0,
           "llm_timeout": 5.0}
    llm = create_llm(cfg, "quick")
    with pytest.raises(LLMCallError) as exc:
        llm.invoke("Instrument: NVDA\nAnalysis date: 2024-05-10\nHello")
    text = str(exc.value)
    assert f"127.0.0.1:{port}" in text and "is the server running" in text
    assert "sk-ant-test-key" not in text and "g-test-key" not in text


@pytest.mark.parametrize("provider,env", [("anthropic", "ANTHROPIC_API_KEY"), ("google", "GOOGLE_API_KEY")])
def test_missing_key_names_its_variable(provider, env, monkeypatch):
    from tradingagents.errors import LLMConfigError

    monkeypatch.delenv(env)
    with pytest.raises(LLMConfigError, match=re.escape(env)):
        check_llm_config({"llm_provider": provider})


def test_presets_and_prices():
    from tradingagents.llm_presets import PROVIDER_PRESETS, normalize_provider

    assert PROVIDER_PRESETS["anthropic"]["api"] == "anthropic" and PROVIDER_PRESETS["google"]["api"] == "google"
    assert normalize_provider("Claude") == "anthropic" and normalize_provider("gemini") == "google"
    for provider in ("anthropic", "google"):
        preset = PROVIDER_PRESETS[provider]
        for model in (preset["quick_model"], preset["deep_model"]):
            assert pricing.cost_usd(model, 1_000_000, 0, pricing.pricing_table({})) > 0
    json.dumps(dict(PROVIDER_PRESETS["anthropic"]))


@pytest.mark.parametrize("provider", list(FAKES))
@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "unstreamed"])
def test_an_empty_answer_is_retried_within_the_budget(provider, streaming):
    from tests.fake_openai import agentic_responder

    calls: list[int] = []

    def responder(request: dict) -> dict:
        calls.append(1)
        if len(calls) == 1:
            return {"content": "", "finish_reason": "stop"}
        return agentic_responder(request, rating="Buy")

    with FAKES[provider](responder=responder) as fake:
        llm = create_llm(fake.llm_config(llm_streaming=streaming), "quick")
        answer = llm.invoke("Instrument: NVDA\nAnalysis date: 2024-05-10\nYour call?")
    assert len(fake.requests) == 2
    assert "**Rating**: Buy" in (answer.content if isinstance(answer.content, str) else str(answer.content))
    assert answer.usage_metadata["output_tokens"] > 0
    assert bool(fake.requests[0].get("stream")) == streaming or provider == "google"


@pytest.mark.parametrize("provider", list(FAKES))
def test_the_budget_stops_a_native_run(provider, ta_home):
    from tradingagents.errors import BudgetExceeded

    with FAKES[provider]() as fake:
        graph = TradingAgentsGraph(config=fake.llm_config(analyst_execution="sequential", max_cost_usd=0.0005))
        with pytest.raises(BudgetExceeded) as exc:
            graph.propagate("NVDA", DATE)
    # a budget below one request's worst case (its prompt and the answer limit, priced for the model) refuses
    # the first request before it is sent: nothing was spent, and the run resumes with a larger budget
    assert fake.requests == []
    assert "0.0005" in str(exc.value) or "budget" in str(exc.value).lower()


@pytest.mark.parametrize("provider", list(FAKES))
@pytest.mark.parametrize("streaming", [True, False], ids=["streamed", "unstreamed"])
def test_tool_calls_round_trip(provider, streaming):
    """An analyst's loop on a native model: offered tools, it calls one with arguments from the schema, reads
    the answer and writes its report; a call of a tool that was not offered is retried."""
    from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
    from langchain_core.tools import tool

    from tests.fake_openai import agentic_responder

    @tool
    def get_prices(symbol: str, start_date: str, end_date: str) -> str:
        """Daily prices of symbol between two dates."""
        return f"{symbol} {start_date}..{end_date}: close 900"

    calls: list[int] = []

    def responder(request: dict) -> dict:
        calls.append(1)
        if len(calls) == 1:  # the first answer calls a tool nobody offered
            return {"content": None, "tool_calls": [{"name": "get_crystal_ball", "arguments": {}}]}
        return agentic_responder(request, rating="Hold")

    prompt = [SystemMessage("You are the Market Analyst."),
              HumanMessage("Instrument: NVDA\nAnalysis date: 2024-05-10\nStudy the prices.")]
    with FAKES[provider](responder=responder) as fake:
        llm = create_llm(fake.llm_config(llm_streaming=streaming), "quick").bind_tools([get_prices])
        first = llm.invoke(prompt)
        assert [c["name"] for c in first.tool_calls] == ["get_prices"]
        args = first.tool_calls[0]["args"]
        assert args["symbol"] == "NVDA" and args["end_date"] == "2024-05-10"
        answer = get_prices.invoke(args)
        final = llm.invoke([*prompt, first, ToolMessage(answer, tool_call_id=first.tool_calls[0]["id"])])
    assert len(fake.requests) == 3  # the unknown tool's answer was retried once
    assert "**Rating**: Hold" in str(final.content) and not final.tool_calls
    assert "1 tool result" in str(final.content)  # the tool's answer reached the model


@pytest.mark.parametrize("provider", list(FAKES))
def test_server_errors_are_retried_by_the_sdk_and_a_rejected_key_is_named(provider):
    prompt = "Instrument: NVDA\nAnalysis date: 2024-05-10\nYour call?"
    with FAKES[provider](rating="Hold") as fake:
        fake.faults = [503]
        llm = create_llm(fake.llm_config(llm_streaming=False), "quick")
        assert "**Rating**: Hold" in str(llm.invoke(prompt).content)
        assert len(fake.requests) == 2  # the 503, then the answer
        fake.faults = [401]
        with pytest.raises(LLMCallError) as exc:
            llm.invoke(prompt)
    text = str(exc.value)
    env = "ANTHROPIC_API_KEY" if provider == "anthropic" else "GOOGLE_API_KEY"
    assert "HTTP 401" in text and "API key was rejected" in text and env in text
    assert exc.value.retryable is False and len(fake.requests) == 3  # a rejected key is not retried
    assert "sk-ant-test-key" not in text and "g-test-key" not in text


@pytest.mark.parametrize("provider", list(FAKES))
def test_a_stream_cut_mid_answer_is_retried_and_its_text_taken_back(provider):
    from langchain_core.callbacks import BaseCallbackHandler

    from tradingagents.llm_clients.streaming import is_restart

    class Tokens(BaseCallbackHandler):
        def __init__(self):
            self.texts, self.restarts = [], 0

        def on_llm_new_token(self, token, *, chunk=None, **kwargs):
            if chunk is not None and is_restart(chunk.message):
                self.restarts += 1
                self.texts.clear()
            else:
                self.texts.append(token)

    with FAKES[provider](rating="Buy") as fake:
        fake.cuts = [3]
        seen = Tokens()
        llm = create_llm(fake.llm_config(), "quick")
        answer = llm.invoke("Instrument: NVDA\nAnalysis date: 2024-05-10\nYour call?", config={"callbacks": [seen]})
    assert len(fake.requests) == 2 and seen.restarts == 1
    text = answer.content if isinstance(answer.content, str) else "".join(
        b.get("text", "") for b in answer.content if isinstance(b, dict))
    assert "**Rating**: Buy" in text and "".join(seen.texts) == text


@pytest.mark.parametrize("provider", list(FAKES))
def test_models_built_one_after_another_reuse_one_connection(provider):
    # each run builds its team's models anew: they must reuse the connection the last ones left open, not
    # connect (and, to the real API, shake hands over TLS) again. A Gemini model's SDK client closing must not
    # cut the others off: langchain-google-genai closes a model's client when the model is collected
    prompt = "Instrument: NVDA\nAnalysis date: 2024-05-10\nSay something."
    with FAKES[provider]() as fake:
        models = [create_llm(fake.llm_config(), kind) for kind in ("quick", "deep", "quick")]
        for model in models:
            assert model.invoke(prompt).content
        if provider == "google":
            models[0].client.close()
            assert models[1].invoke(prompt).content
        assert len(fake.requests) == len(models) + (provider == "google")
        assert fake.connections == 1


def test_a_gemini_model_given_its_own_client_arguments_keeps_its_own_client():
    # a caller's client settings (a proxy, say) are the caller's: such a model is not put on the shared pool
    from tradingagents.llm_clients.text import shared_http_client

    with FakeGeminiServer() as fake:
        cfg = fake.llm_config()
        plain = create_llm(cfg, "quick")
        assert plain.client._api_client._httpx_client is shared_http_client()
        from tradingagents.llm_clients.native_chat import BoundedChatGoogle

        own = BoundedChatGoogle(model="gemini-2.5-flash", google_api_key="g-test-key", base_url=fake.base_url,
                                client_args={"headers": {"x-desk": "1"}})
        assert own.client._api_client._httpx_client is not shared_http_client()


@pytest.mark.parametrize("provider", list(FAKES))
def test_a_stopped_fake_ends_its_kept_alive_connections(provider):
    # Gemini's and Anthropic's models share a connection pool per process: a connection a stopped fake kept
    # open must end, or a later fake given the same port would have its requests answered by the stopped one
    import http.client

    fake = FAKES[provider]().start()
    host, port = fake.base_url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    text = "Instrument: NVDA\nAnalysis date: 2024-05-10\nSay something."
    if provider == "anthropic":
        path, body = "/v1/messages", {"model": "claude-haiku-4-5", "max_tokens": 64,
                                      "messages": [{"role": "user", "content": text}]}
    else:
        path, body = "/v1beta/models/gemini-2.5-flash:generateContent", {"contents": [{"role": "user", "parts": [{"text": text}]}]}
    conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 200 and response.read()
    assert fake.connections == 1  # kept alive after its answer
    fake.stop()
    conn.sock.settimeout(120)  # a hang guard: the end arrives at once
    assert conn.sock.recv(1) == b""  # the server closed it
    conn.close()
