"""``python -m tradingagents mcp`` driven by the ``mcp`` SDK's own client over stdio (and its tools' work
without a transport): the tools are listed, analyze returns a rating, errors carry the CLI's message."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tradingagents.mcp_server import TOOL_NAMES, ToolFailed, Tools

ROOT = Path(__file__).resolve().parents[1]
CALL_TIMEOUT_S = 300


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _data(result) -> dict:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(_text(result))


async def _session_run(home: Path, body) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_")}
    env.update({"TRADINGAGENTS_HOME": str(home), "PYTHONPATH": str(ROOT)})
    params = StdioServerParameters(command=sys.executable, args=["-m", "tradingagents", "mcp"], env=env, cwd=ROOT)
    with anyio.fail_after(CALL_TIMEOUT_S * 2):
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await body(session)


@pytest.mark.timeout(CALL_TIMEOUT_S * 3)
def test_mcp_stdio_lists_tools_analyzes_and_reports_errors(ta_home):
    seen: dict = {}

    async def body(session):
        tools = await session.list_tools()
        seen["tools"] = {t.name: t for t in tools.tools}
        progress: list = []

        async def on_progress(done, total, message):
            progress.append((done, total, message))

        seen["analyze"] = await session.call_tool("analyze", {"ticker": "NVDA", "date": "2024-05-10"},
                                                  progress_callback=on_progress)
        seen["progress"] = progress
        seen["bad"] = await session.call_tool("analyze", {"ticker": "NVDAX", "date": "2024-05-10"})
        seen["bad_date"] = await session.call_tool("analyze", {"ticker": "NVDA", "date": "2024-13-40"})
        seen["get_run"] = await session.call_tool("get_run", {"ticker": "NVDA", "date": "2024-05-10"})
        seen["ask"] = await session.call_tool("ask", {"ticker": "NVDA", "date": "2024-05-10", "agent": "bear",
                                                      "question": "What worries you most?"})
        seen["ask_bad"] = await session.call_tool("ask", {"ticker": "NVDA", "date": "2024-05-10", "agent": "oracle",
                                                          "question": "Will it go up?"})
        seen["log"] = await session.call_tool("memory_log", {"ticker": "NVDA", "limit": 5})
        seen["settle"] = await session.call_tool("settle", {})
        seen["backtest"] = await session.call_tool("backtest_summary", {"id": "../etc"})

    anyio.run(_session_run, ta_home, body)

    assert set(TOOL_NAMES) <= set(seen["tools"])
    props = seen["tools"]["analyze"].input_schema["properties"]
    assert {"ticker", "date", "analysts", "max_cost_usd"} <= set(props) and "ctx" not in props

    ok = seen["analyze"]
    assert not ok.is_error, _text(ok)
    out = _data(ok)
    assert out["rating"] in ("Buy", "Overweight", "Hold", "Underweight", "Sell")
    assert out["decision"]["rating"] == out["rating"]
    assert Path(out["report_path"]).is_file() and Path(out["report_path"]).is_relative_to(ta_home)

    # a ticker the demo market does not list: an MCP tool error with the CLI's message and exit code
    # one progress notification per agent of the plan (4 analysts and 8 other roles), in order
    progress = seen["progress"]
    assert [p[0] for p in progress] == list(range(1, 13)) and {p[1] for p in progress} == {12}
    assert progress[-1][2] == "Portfolio Manager finished"

    bad = seen["bad"]
    assert bad.is_error
    assert "NVDAX" in _text(bad) and "exit 2" in _text(bad) and "NVDA" in _text(bad)
    assert seen["bad_date"].is_error and "2024-13-40" in _text(seen["bad_date"])

    run = _data(seen["get_run"])
    assert run["rating"] == out["rating"] and "**Rating**" in run["report"]
    asked = seen["ask"]
    assert not asked.is_error, _text(asked)
    assert _data(asked)["answer"].strip() and _data(asked)["question"] == "What worries you most?"
    assert seen["ask_bad"].is_error and "oracle" in _text(seen["ask_bad"]) and "exit 2" in _text(seen["ask_bad"])
    log = _data(seen["log"])
    assert log["total"] == 1 and log["entries"][0]["pending"] is True
    assert log["entries"][0]["rating"] == out["rating"]
    settled = _data(seen["settle"])
    assert settled["settled"] == [] or all(s["ticker"] == "NVDA" for s in settled["settled"])
    assert seen["backtest"].is_error and "exit 2" in _text(seen["backtest"])


def test_tools_share_the_cli_checks(ta_home):
    tools = Tools({"data_vendor": "demo"})
    with pytest.raises(ToolFailed) as exc:
        tools.call(tools.memory_log, None, 0)
    assert exc.value.code == 2 and "limit" in str(exc.value)
    with pytest.raises(ToolFailed) as exc:
        tools.call(tools.get_run, "NVDA", "2024-05-10")
    assert exc.value.code == 2 and "No saved run of NVDA on 2024-05-10" in str(exc.value)
    with pytest.raises(ToolFailed) as exc:
        Tools({"llm_provider": "nonsense"}).call(Tools({"llm_provider": "nonsense"}).settle)
    assert exc.value.code == 2 and "nonsense" in str(exc.value)
    assert tools.call(tools.memory_log) == {"total": 0, "entries": []}


@pytest.mark.timeout(CALL_TIMEOUT_S * 2)
def test_mcp_streamable_http_on_loopback(ta_home):
    import socket
    import subprocess
    import time

    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_")}
    env.update({"TRADINGAGENTS_HOME": str(ta_home), "PYTHONPATH": str(ROOT)})
    proc = subprocess.Popen([sys.executable, "-m", "tradingagents", "mcp", "--http", f"127.0.0.1:{port}"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + CALL_TIMEOUT_S
        while True:
            assert proc.poll() is None, proc.stderr.read().decode(errors="replace")[-2000:]
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline, "the MCP HTTP server did not listen"
            time.sleep(0.2)
        seen: dict = {}

        async def main():
            with anyio.fail_after(CALL_TIMEOUT_S):
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams, \
                        ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    seen["tools"] = {t.name for t in (await session.list_tools()).tools}
                    seen["log"] = await session.call_tool("memory_log", {"limit": 3})
                    seen["bad"] = await session.call_tool("memory_log", {"ticker": "NOT A TICKER!"})

        anyio.run(main)
        assert set(TOOL_NAMES) <= seen["tools"]
        assert _data(seen["log"]) == {"total": 0, "entries": []}
        assert seen["bad"].is_error and "exit 2" in _text(seen["bad"])
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_http_address_is_checked(capsys):
    from tradingagents.mcp_server import main

    assert main(["--http", "localhost"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err
