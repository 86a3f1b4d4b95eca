"""Every terminal line of the CLI (run, batch, backtest, log) is stripped of control and bidi characters.

A hostile model server (tests/fake_openai.py, the real langchain-openai client) names a tool with
a screen clear, a window title, a clipboard write, an 8-bit CSI, a bell and bidi overrides; the
failure messages quote that name, and nothing of it may reach stdout or stderr raw.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.fake_openai import FakeOpenAIServer, agentic_responder, is_analyst_call

DATE = "2024-05-10"
ROOT = Path(__file__).resolve().parents[1]
EVIL = ("get_\x1b[2J\x1b]0;pwned\x07\x1b]52;c;Y2xpcA==\x1b\\\x9b2J\x9d0;t\x9c\x07"
        "\u202eevil\u202c\u2066x\u2069data")
RAW = ("\x1b", "\x07", "\x9b", "\x9d", "\x9c", "\r", *"\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
MODEL = ["--provider", "openai_compatible", "--quick-model", "q", "--deep-model", "d"]


def _hostile_tool_name(body):
    if is_analyst_call(body):  # a tool call whose arguments are not JSON: the error quotes its name
        return {"content": None, "tool_calls": [{"name": EVIL, "arguments": "{not json"}]}
    return agentic_responder(body)


def _clean(*streams: str) -> None:
    for stream in streams:
        found = sorted({f"U+{ord(c):04X}" for c in stream if c in RAW})
        assert not found, f"raw control characters reached the terminal: {found}"


def test_terminal_safe_strips_bidi_and_8bit_strings_and_keeps_every_script():
    from tradingagents.terminal import terminal_safe

    assert terminal_safe("a\u202eb\u2066c\u2069d\u202ae\u200ff") == "abcdef"
    assert terminal_safe("x\x9d0;title\x9cy\x9b31mz") == "xyz"  # 8-bit OSC and CSI
    assert terminal_safe("مرحبا עברית 中文 é\t\n") == "مرحبا עברית 中文 é\t\n"  # RTL text itself stays


def test_a_hostile_server_reaches_no_terminal_through_run(ta_home, capsys):
    from tradingagents import cli

    with FakeOpenAIServer(_hostile_tool_name) as server:
        code = cli.main(["NVDA", DATE, "--analysts", "market", "--backend-url", server.base_url, *MODEL])
    out = capsys.readouterr()
    assert code == cli.EXIT_LLM_FAILURE
    assert "get_evilxdata" in out.err.replace("0;t", "")
    _clean(out.out, out.err)


def test_a_hostile_server_reaches_no_terminal_through_batch(ta_home, capsys):
    from tradingagents import cli

    with FakeOpenAIServer(_hostile_tool_name) as server:
        code = cli.main(["batch", "NVDA,AAPL", DATE, "--analysts", "market", "--backend-url", server.base_url,
                         *MODEL])
    out = capsys.readouterr()
    assert code == cli.EXIT_LLM_FAILURE
    assert out.err.count("evil") == 2
    _clean(out.out, out.err)


def test_a_hostile_server_reaches_no_terminal_through_backtest(ta_home, capsys):
    from tradingagents import cli

    with FakeOpenAIServer(_hostile_tool_name) as server:
        code = cli.main(["backtest", "NVDA", "--start", "2024-06-03", "--end", "2024-06-05", "--analysts", "market",
                         "--backend-url", server.base_url, *MODEL])
    out = capsys.readouterr()
    assert code == cli.EXIT_LLM_FAILURE, out.err[-2000:]
    assert "evil" in out.err
    _clean(out.out, out.err)


def test_a_backtest_progress_bar_on_a_terminal_keeps_its_own_carriage_return():
    import io

    from tradingagents.backtest.cli import ProgressBar
    from tradingagents.terminal import SafeStream

    class Tty(io.StringIO):
        def isatty(self):
            return True

    raw = Tty()
    bar = ProgressBar(stream=SafeStream(raw))
    bar({"kind": "step_finished", "done": 1, "total": 2, "ticker": "NV\x1b[2JDA\u202e", "date": DATE,
         "rating": "Buy"})
    text = raw.getvalue()
    assert text.startswith("\r[") and "NVDA 2024-05-10 Buy" in text
    _clean(text[1:])


def test_log_piped_into_a_reader_that_stops_ends_quietly(ta_home):
    """``log | head``: the reader closes the pipe before the log is written; no BrokenPipeError."""
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "PYTHONPATH": str(ROOT)}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes a byte
    proc = subprocess.run([sys.executable, "-m", "tradingagents", "log"], stdout=write_end,
                          stderr=subprocess.PIPE, env=env, cwd=ROOT, timeout=300, text=True)
    os.close(write_end)
    assert "BrokenPipeError" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0
