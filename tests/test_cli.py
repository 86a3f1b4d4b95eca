"""``python -m tradingagents``: progress, rating and report path, settle, exit codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer, Fault
from tradingagents import cli
from tradingagents.agents.utils.memory import TradingMemoryLog

ROOT = Path(__file__).resolve().parents[1]
DATE = "2024-05-10"


def test_help_documents_exit_codes(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for line in ("0  ok", "2  bad input", "3  market data provider unavailable", "4  LLM failure", "5  stopped"):
        assert line in out
    # the presets say which model they use (from the presets themselves)
    assert "ollama             llama3.1 / llama3.1 (http://localhost:11434/v1)" in out
    assert "vllm               the model the server serves" in out
    assert cli.main(["settle", "--help"]) == 0


def test_run_prints_rating_and_report_path_and_progress(capsys, ta_home):
    assert cli.main(["nvda", DATE, "--analysts", "market,news", "--parallel"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("Rating: ")
    rating = lines[0].removeprefix("Rating: ")
    report = Path(lines[1].removeprefix("Report: "))
    assert report == ta_home / "results" / "NVDA" / DATE / "report.md" and report.is_file()
    assert f"**{rating}**" in report.read_text().splitlines()[0]
    # the live display went to stderr: start, agents, tools, finish
    err = captured.err
    assert "starting NVDA 2024-05-10: market, news (parallel)" in err
    assert "✓ Market Analyst" in err and "tool get_" in err and f"done: {rating}" in err
    assert "Sentiment Analyst" not in err


@pytest.mark.parametrize(
    "argv, needle",
    [(["NV DA", DATE], "ticker"), (["NVDA", "2024-02-30"], "date"), (["NVDA", DATE, "--analysts", "tarot"], "analyst"),
     (["NVDA", DATE, "--debate-rounds", "0"], "rounds"), (["NVDA"], "usage"), (["NVDA", DATE, "--provider", "nope"], "nope"),
     (["NVDA", DATE, "--asset-type", "tulips"], "asset type")],
)
def test_bad_input_exits_2_with_a_message(capsys, ta_home, argv, needle):
    assert cli.main(argv) == cli.EXIT_BAD_INPUT
    assert needle.lower() in capsys.readouterr().err.lower()
    assert not (ta_home / "results").exists()


def test_missing_key_is_a_configuration_error_with_the_variable_to_set(capsys, ta_home, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert cli.main(["NVDA", DATE, "--provider", "openai", "--quiet"]) == cli.EXIT_BAD_INPUT == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err
    assert "resume" not in err and "checkpoint" not in err and "sidebar" not in err
    assert not (ta_home / "checkpoints").exists() and not (ta_home / "results").exists()


def test_llm_failure_exits_4_and_the_same_command_resumes(capsys, ta_home):
    with FakeOpenAIServer() as server:
        argv = ["NVDA", DATE, "--analysts", "market", "--provider", "openai_compatible", "--backend-url",
                server.base_url, "--quick-model", "fake-quick", "--deep-model", "fake-deep", "--quiet"]
        server.inject(Fault.status(500, times=None))  # until cleared: every retry fails
        assert cli.main(argv) == cli.EXIT_LLM_FAILURE
        err = capsys.readouterr().err
        assert "LLM failure" in err and "resume" in err
        failed_requests = len(server.chat_requests)
        server.clear_faults()
        assert cli.main(argv[:-1]) == cli.EXIT_OK
        captured = capsys.readouterr()
        assert "resuming NVDA 2024-05-10" in captured.err
        assert captured.out.startswith("Rating: ")
    assert failed_requests >= 2  # retried before giving up


def test_exit_codes_come_from_the_error_classes_not_their_text():
    from tradingagents.errors import (
        DataNotFound,
        LLMCallError,
        LLMConfigError,
        ProviderUnavailable,
        RunAlreadyActive,
        exit_code_for,
    )

    assert not hasattr(cli, "_classify")  # no message or class-name heuristics left
    assert exit_code_for(RunAlreadyActive("busy")) == cli.EXIT_BUSY == 6
    assert "6  the same ticker and date is already being analysed" in cli.EXIT_CODES_HELP
    assert exit_code_for(ProviderUnavailable("Yahoo unreachable")) == cli.EXIT_DATA_UNAVAILABLE
    assert exit_code_for(LLMConfigError("no key: set OPENAI_API_KEY")) == cli.EXIT_BAD_INPUT
    assert exit_code_for(LLMCallError("the api key was rejected")) == cli.EXIT_LLM_FAILURE
    try:
        try:
            raise DataNotFound("no NVDA.csv")
        except DataNotFound as inner:
            raise RuntimeError("node failed") from inner
    except RuntimeError as wrapped:
        assert exit_code_for(wrapped) == cli.EXIT_DATA_UNAVAILABLE
    assert exit_code_for(KeyError("bug")) == cli.EXIT_ERROR

    class RateLimitError(Exception):  # a class name that once fooled the old heuristics
        pass

    assert exit_code_for(RateLimitError("429")) == cli.EXIT_ERROR


def test_settle_settles_what_is_due(capsys):
    assert cli.main(["settle"]) == 0
    assert "Nothing to settle" in capsys.readouterr().out
    assert cli.main(["NVDA", "2024-05-01", "--analysts", "market", "--quiet"]) == 0
    capsys.readouterr()
    assert cli.main(["settle", "--ticker", "AAPL"]) == 0
    assert "Nothing to settle" in capsys.readouterr().out
    assert cli.main(["settle"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2024-05-01 NVDA ") and "alpha" in out and "over 5d" in out
    [entry] = TradingMemoryLog(None).load_entries()
    assert not entry["pending"]
    assert cli.main(["settle", "--ticker", "../x"]) == cli.EXIT_BAD_INPUT


@pytest.mark.slow
def test_ctrl_c_stops_between_nodes_with_exit_5_and_resumes(ta_home):
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "tradingagents", "NVDA", DATE, "--debate-rounds", "3", "--risk-rounds", "3"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    deadline = time.time() + 90
    for line in proc.stderr:
        seen.append(line)
        if "wrote market_report" in line:
            proc.send_signal(signal.SIGINT)
            break
        assert time.time() < deadline
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == cli.EXIT_STOPPED, "".join(seen) + err
    assert "stopped (resumable)" in err
    assert not (ta_home / "results" / "NVDA" / DATE).exists()
    again = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "resuming NVDA 2024-05-10" in again.stderr
    assert "wrote market_report" not in again.stderr  # finished before the stop: not run again
    assert again.stdout.startswith("Rating: ")
