"""``python -m tradingagents`` as a user runs it: configuration errors exit 2 before anything runs,
speak flags and variables, and only resumable failures say how to resume."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]
DATE = "2024-05-10"


def run(home: Path, *argv: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_") and not k.endswith("_API_KEY")}
    full = {**base, "TRADINGAGENTS_HOME": str(home), "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "tradingagents", *argv], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=timeout)


def nothing_written(home: Path) -> bool:
    return not any(home.iterdir()) if home.exists() else True


def assert_config_error(proc: subprocess.CompletedProcess, home: Path, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    low = proc.stderr.lower()
    assert "resume" not in low and "checkpoint" not in low and "sidebar" not in low, proc.stderr
    assert "traceback" not in low and "llmconfigerror" not in low and "configerror" not in low, proc.stderr
    assert proc.stdout == ""
    assert nothing_written(home), sorted(p.name for p in home.iterdir())


def test_missing_key_exits_2_before_anything_runs(tmp_path):
    home = tmp_path / "home"
    proc = run(home, "NVDA", DATE, "--provider", "openai", "--quiet")
    assert_config_error(proc, home, "OPENAI_API_KEY")


def test_unknown_provider_exits_2_naming_the_flag_and_the_providers(tmp_path):
    home = tmp_path / "home"
    proc = run(home, "NVDA", DATE, "--provider", "gemeni")
    assert_config_error(proc, home, "--provider", "'gemeni'", "ollama", "openai_compatible")
    via_env = run(home, "NVDA", DATE, env={"TRADINGAGENTS_LLM_PROVIDER": "gemeni"})
    assert_config_error(via_env, home, "TRADINGAGENTS_LLM_PROVIDER", "'gemeni'")


@pytest.mark.parametrize(
    "variable, value, needles",
    [("TRADINGAGENTS_DATA_VENDOR", "nasdaq", ("demo", "yfinance", "csv")),
     ("TRADINGAGENTS_HOLDING_DAYS", "five", ("a whole number",)),
     ("TRADINGAGENTS_MAX_DEBATE_ROUNDS", "40", ("from 1 to 10",)),
     ("TRADINGAGENTS_MAX_CONCURRENT_LLM_CALLS", "0", ("at least 1",))],
)
def test_a_bad_environment_value_exits_2_naming_the_variable(tmp_path, variable, value, needles):
    home = tmp_path / "home"
    proc = run(home, "NVDA", DATE, "--quiet", env={variable: value})
    assert_config_error(proc, home, variable, value, *needles)


def test_bad_flags_name_the_flag(tmp_path):
    home = tmp_path / "home"
    assert_config_error(run(home, "NVDA", DATE, "--data", "nasdaq"), home, "--data", "'nasdaq'")
    assert_config_error(run(home, "NVDA", DATE, "--debate-rounds", "0"), home, "--debate-rounds")
    assert_config_error(run(home, "NVDA", DATE, "--analysts", "tarot"), home, "--analysts", "tarot")


def test_the_readme_data_vendor_variable_works_with_yahoo(tmp_path):
    # settle with an empty log needs no network: the variable is accepted as yfinance
    home = tmp_path / "home"
    proc = run(home, "settle", env={"TRADINGAGENTS_DATA_VENDOR": "yahoo"})
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to settle" in proc.stdout and "no pending decision" in proc.stdout


def test_a_local_server_that_is_down_is_said_before_the_run_and_nothing_is_promised(tmp_path):
    with FakeOpenAIServer() as srv:
        url = srv.base_url  # closed when the block ends: nothing listens there
    home = tmp_path / "home"
    proc = run(home, "NVDA", DATE, "--analysts", "market", "--provider", "ollama", "--backend-url", url, "--quiet")
    assert proc.returncode == 4, proc.stderr
    assert f"could not connect to {url} — is the server running" in proc.stderr.lower()
    assert "model llama3.1" in proc.stderr and "ollama serve" in proc.stderr  # the preset's model, how to start it
    assert "resume" not in proc.stderr and "nothing ran" in proc.stderr  # a probe before the run: no checkpoint
    assert not (home / "checkpoints").exists() or not any((home / "checkpoints").glob("*.sqlite"))
    assert "Traceback" not in proc.stderr and "APIConnectionError" not in proc.stderr


def test_refused_connection_mid_run_asks_whether_the_server_runs_and_says_how_to_resume(tmp_path):
    with FakeOpenAIServer() as srv:
        url = srv.base_url  # closed when the block ends: nothing listens there
    home = tmp_path / "home"
    proc = run(home, "NVDA", DATE, "--analysts", "market", "--provider", "openai_compatible", "--backend-url", url,
               "--quick-model", "llama3.1", "--deep-model", "llama3.1", "--quiet",
               env={"TRADINGAGENTS_LLM_MAX_RETRIES": "0"})
    assert proc.returncode == 4, proc.stderr
    assert f"could not connect to {url} — is the server running?" in proc.stderr.lower()
    assert "model llama3.1" in proc.stderr
    assert "run the same command again to resume" in proc.stderr
    assert "Traceback" not in proc.stderr and "APIConnectionError" not in proc.stderr


def test_without_checkpoints_a_failure_does_not_promise_a_resume(tmp_path):
    with FakeOpenAIServer() as srv:
        url = srv.base_url
    proc = run(tmp_path / "home", "NVDA", DATE, "--analysts", "market", "--provider", "openai_compatible",
               "--backend-url", url, "--quick-model", "m", "--deep-model", "m",
               "--quiet", "--no-checkpoint", env={"TRADINGAGENTS_LLM_MAX_RETRIES": "0"})
    assert proc.returncode == 4, proc.stderr
    assert "resume" not in proc.stderr and "--no-checkpoint" in proc.stderr and "starts over" in proc.stderr


def test_settle_prints_why_an_entry_stays_pending(tmp_path):
    import pandas as pd

    from tests.test_data_csv_returns import write_csv

    home = tmp_path / "home"
    rows = [(d.date().isoformat(), 10 + 0.01 * i, 10.2 + 0.01 * i, 9.8 + 0.01 * i, 10 + 0.01 * i, 1000 + i)
            for i, d in enumerate(pd.bdate_range("2023-06-01", "2024-05-31"))]
    write_csv(home / "data", "ACME", rows)  # no SPY.csv: the benchmark cannot be priced
    env = {"TRADINGAGENTS_DATA_VENDOR": "csv"}
    made = run(home, "ACME", "2024-05-02", "--analysts", "market", "--quiet", env=env)
    assert made.returncode == 0, made.stderr
    proc = run(home, "settle", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Nothing to settle" not in proc.stdout
    [line] = [ln for ln in proc.stdout.splitlines() if ln.startswith("pending ")]
    assert line.startswith("pending 2024-05-02 ACME: ") and "SPY" in line, proc.stdout
