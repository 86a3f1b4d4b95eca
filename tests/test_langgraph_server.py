"""The trading graph served by LangGraph's own server (``langgraph.json``, ``langgraph dev``), driven
through ``langgraph_sdk`` as a LangGraph user drives it; and its typed configuration."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tradingagents.errors import ConfigError
from tradingagents.graph.served import PREPARE_NODE, TEAM_NODE, Configuration

ROOT = Path(__file__).resolve().parents[1]
LANGGRAPH = Path(sys.executable).with_name("langgraph")
READY_TIMEOUT_S = 180  # a first start imports the server and the engine: generous on a busy machine
RUN_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_langgraph_json_names_the_one_factory():
    spec = json.loads((ROOT / "langgraph.json").read_text())
    path, _, name = spec["graphs"]["trading_agents"].partition(":")
    assert (ROOT / path).resolve() == ROOT / "tradingagents" / "graph" / "served.py"
    assert name == "make_graph"


def test_served_graph_runs_on_the_provider_its_configurable_names(monkeypatch):
    """The run's configurable picks the models (here native Anthropic at a local fake), in process."""
    import asyncio

    from langgraph.checkpoint.memory import InMemorySaver

    from tests.fake_native import FakeAnthropicServer
    from tradingagents.graph.served import make_graph

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-served")
    with FakeAnthropicServer(rating="Buy") as fake:
        config = {"configurable": {"thread_id": "t", "llm_provider": "anthropic", "backend_url": fake.base_url,
                                   "selected_analysts": ["market"], "analyst_execution": "sequential"}}
        graph = asyncio.run(make_graph(config)).copy(update={"checkpointer": InMemorySaver()})
        graph.invoke({"company_of_interest": "NVDA", "trade_date": "2024-05-10"}, config)
        values = graph.get_state(config).values
    assert values["final_rating"] == "Buy" and values["market_report"]
    assert len(fake.requests) >= 9 and {r["model"] for r in fake.requests} == {"claude-haiku-4-5", "claude-sonnet-4-5"}


def test_served_graph_keeps_the_runs_budget(monkeypatch):
    """max_cost_usd in the configurable is the same hard ceiling as propagate's: the call that could pass it
    is refused before it is sent."""
    import asyncio

    from langgraph.checkpoint.memory import InMemorySaver

    from tests.fake_native import FakeAnthropicServer
    from tradingagents.errors import BudgetExceeded
    from tradingagents.graph.served import make_graph

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-served")
    with FakeAnthropicServer() as fake:
        config = {"configurable": {"thread_id": "b", "llm_provider": "anthropic", "backend_url": fake.base_url,
                                   "max_cost_usd": 0.0005}}
        graph = asyncio.run(make_graph(config)).copy(update={"checkpointer": InMemorySaver()})
        with pytest.raises(BudgetExceeded):
            graph.invoke({"company_of_interest": "NVDA", "trade_date": "2024-05-10"}, config)
    assert fake.requests == []


def test_configuration_reads_configurable_and_defaults_offline_demo():
    assert Configuration.from_runnable_config(None).settings()["llm_provider"] == "offline"
    conf = Configuration.from_runnable_config({"configurable": {
        "thread_id": "x", "selected_analysts": ["news", "market"], "max_debate_rounds": 2, "unknown": 1}})
    settings = conf.settings()
    assert (settings["llm_provider"], settings["data_vendor"]) == ("offline", "demo")
    assert settings["max_debate_rounds"] == 2
    assert sorted(settings["selected_analysts"]) == ["market", "news"]
    with pytest.raises(ConfigError, match="max_debate_rounds"):
        Configuration.from_runnable_config({"configurable": {"max_debate_rounds": -1}}).settings()


@pytest.fixture
def server(ta_home):
    if not LANGGRAPH.exists():
        pytest.skip("langgraph-cli[inmem] is not installed (requirements-dev.txt)")
    port = _free_port()
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "LANGGRAPH_CLI_NO_ANALYTICS": "1",
           "LANGSMITH_TRACING": "false", "PYTHONPATH": str(ROOT)}
    # the repo's langgraph.json, its paths made absolute, run from the test's folder: the dev server keeps its
    # threads under its working folder (.langgraph_api), which must be the test's, not the repo
    spec = json.loads((ROOT / "langgraph.json").read_text())
    spec["graphs"] = {k: str((ROOT / v.partition(":")[0]).resolve()) + ":" + v.partition(":")[2]
                      for k, v in spec["graphs"].items()}
    spec["dependencies"] = [str(ROOT)]
    (ta_home / "langgraph.json").write_text(json.dumps(spec))
    log = open(ta_home / "langgraph-dev.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
         "--config", str(ta_home / "langgraph.json")],
        cwd=ta_home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + READY_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail("langgraph dev exited: " + (ta_home / "langgraph-dev.log").read_text()[-3000:])
            try:
                if httpx.get(url + "/ok", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("langgraph dev was not ready: " + (ta_home / "langgraph-dev.log").read_text()[-3000:])
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _stream(client, thread_id, payload, configurable=None):
    """Every node that sent an update (the team's own nodes through the subgraph stream), and the errors."""
    nodes, errors = [], []
    for part in client.runs.stream(thread_id, "trading_agents", input=payload, stream_mode="updates",
                                   stream_subgraphs=True, config={"configurable": configurable or {}}):
        if part.event.startswith("updates"):
            nodes.extend((part.data or {}).keys())
        elif part.event == "error":
            errors.append(part.data)
    return nodes, errors


@pytest.mark.timeout(READY_TIMEOUT_S + 3 * RUN_TIMEOUT_S)
def test_langgraph_dev_serves_the_team_like_propagate(server):
    from langgraph_sdk import get_sync_client

    from tradingagents.graph.signal_processing import state_rating
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    client = get_sync_client(url=server, timeout=RUN_TIMEOUT_S)
    # what Studio draws: the served graph's nodes, and its input schema (the specification's initial state)
    assistant = client.assistants.search(graph_id="trading_agents")[0]
    drawn = {n["id"] for n in client.assistants.get_graph(assistant["assistant_id"])["nodes"]}
    assert {PREPARE_NODE, TEAM_NODE} <= drawn
    # with xray, the team's own agents inside Trading Team (the app's graph is the node's subgraph)
    xray = {n["id"] for n in client.assistants.get_graph(assistant["assistant_id"], xray=True)["nodes"]}
    assert {f"{TEAM_NODE}:Market Analyst", f"{TEAM_NODE}:Portfolio Manager", f"{TEAM_NODE}:tools_market"} <= xray
    schemas = client.assistants.get_schemas(assistant["assistant_id"])
    assert {"company_of_interest", "trade_date"} <= set(schemas["input_schema"]["required"])
    thread = client.threads.create()
    nodes, errors = _stream(client, thread["thread_id"], {"company_of_interest": "NVDA", "trade_date": "2024-05-10"})
    assert errors == []
    # at least one update per node of the team (and of the two served nodes around it)
    expected = {PREPARE_NODE, TEAM_NODE, "Bull Researcher", "Bear Researcher", "Research Manager", "Trader",
                "Aggressive Analyst", "Conservative Analyst", "Neutral Analyst", "Portfolio Manager",
                "Market Analyst", "Sentiment Analyst", "News Analyst", "Fundamentals Analyst",
                "Msg Clear Market", "Msg Clear Sentiment", "Msg Clear News", "Msg Clear Fundamentals"}
    assert expected <= set(nodes), expected - set(nodes)

    state = client.threads.get_state(thread["thread_id"])
    assert state["next"] == []  # the thread ran to the end, kept by the server's checkpointer
    values = state["values"]
    served_rating = state_rating(values)
    assert served_rating in ("Buy", "Overweight", "Hold", "Underweight", "Sell")
    assert f"**Rating**: {served_rating}" in values["final_trade_decision"]
    assert values["company_of_interest"] == "NVDA" and values["trade_date"] == "2024-05-10"
    assert values["market_report"] and values["investment_debate_state"]["judge_decision"]

    # the thread run again starts afresh (the server keeps the thread; no earlier turn is carried over)
    _, errors_again = _stream(client, thread["thread_id"], {"company_of_interest": "NVDA", "trade_date": "2024-05-10"})
    again = client.threads.get_state(thread["thread_id"])["values"]
    assert errors_again == [] and len(again["debate_turns"]) == len(values["debate_turns"]) > 0
    assert state_rating(again) == served_rating

    # the same input through propagate, on the same (fresh) home: the same rating
    _, rating = TradingAgentsGraph().propagate("NVDA", "2024-05-10")
    assert rating == served_rating

    # the run's configurable shapes the graph: one analyst, so only its nodes run
    thread2 = client.threads.create()
    nodes2, errors2 = _stream(client, thread2["thread_id"], {"company_of_interest": "NVDA", "trade_date": "2024-05-10"},
                              {"selected_analysts": ["market"]})
    assert errors2 == [] and "Market Analyst" in nodes2
    assert "News Analyst" not in nodes2 and "Portfolio Manager" in nodes2

    # a bad ticker fails the run with the engine's own message, naming it, before any agent ran
    thread3 = client.threads.create()
    nodes3, errors3 = _stream(client, thread3["thread_id"], {"company_of_interest": "NVDAX", "trade_date": "2024-05-10"})
    assert errors3 and "NVDAX" in json.dumps(errors3)
    assert "Market Analyst" not in nodes3
