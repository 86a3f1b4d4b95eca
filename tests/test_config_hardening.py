"""Settings that used to end in a traceback or in a silent surprise: each is one plain message now."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tradingagents.errors import EXIT_BAD_INPUT, ConfigError

ROOT = Path(__file__).resolve().parents[1]
DATE = "2024-05-10"


def _main(capsys, *argv: str) -> tuple[int, str]:
    from tradingagents import cli

    code = cli.main(list(argv))
    return code, capsys.readouterr().err


def test_an_empty_home_variable_is_refused_not_replaced_by_the_users_home(ta_home, monkeypatch, capsys):
    from tradingagents.config import resolve_config

    monkeypatch.setenv("TRADINGAGENTS_HOME", "")
    with pytest.raises(ConfigError, match="TRADINGAGENTS_HOME is set but empty"):
        resolve_config({})
    code, err = _main(capsys, "NVDA", DATE)
    assert code == EXIT_BAD_INPUT and "TRADINGAGENTS_HOME is set but empty" in err and "Traceback" not in err
    assert resolve_config({"home": str(ta_home)})["home"] == str(ta_home)  # --home still works


def test_a_misspelt_variable_is_named_with_the_closest_known_one(ta_home, monkeypatch, caplog):
    from tradingagents.config import resolve_config

    monkeypatch.setenv("TRADINGAGENTS_DATA_VENDR", "csv")
    with caplog.at_level(logging.WARNING, logger="tradingagents.config"):
        settings = resolve_config({})
    assert settings["data_vendor"] == "demo"  # ignored, as before, but not silently:
    assert "TRADINGAGENTS_DATA_VENDR" in caplog.text and "Did you mean TRADINGAGENTS_DATA_VENDOR?" in caplog.text


def test_a_misspelt_variable_warns_on_the_command_lines_stderr(ta_home):
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "TRADINGAGENTS_MAX_DEBATE_ROUND": "3"}
    proc = subprocess.run([sys.executable, "-m", "tradingagents", "log"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "TRADINGAGENTS_MAX_DEBATE_ROUND" in proc.stderr and "TRADINGAGENTS_MAX_DEBATE_ROUNDS" in proc.stderr
    assert proc.stderr.count("TRADINGAGENTS_MAX_DEBATE_ROUND ") == 1  # once, however often settings resolve


def test_the_root_folder_is_refused_as_home(ta_home, capsys):
    from tradingagents.config import resolve_config

    with pytest.raises(ConfigError, match="root of the file system"):
        resolve_config({"home": "/"})
    code, err = _main(capsys, "NVDA", DATE, "--home", "/")
    assert code == EXIT_BAD_INPUT and "root of the file system" in err and "Traceback" not in err


def test_a_recursion_limit_too_small_for_the_team_is_a_plain_message(ta_home, monkeypatch, capsys):
    monkeypatch.setenv("TRADINGAGENTS_MAX_RECUR_LIMIT", "1")
    code, err = _main(capsys, "NVDA", DATE, "--analysts", "market")
    assert code == EXIT_BAD_INPUT, err
    assert "max_recur_limit=1" in err and "Traceback" not in err and "GraphRecursionError" not in err


def test_a_folder_as_memory_log_path_is_a_plain_message(ta_home, monkeypatch, capsys):
    folder = ta_home / "a-folder"
    folder.mkdir()
    monkeypatch.setenv("TRADINGAGENTS_MEMORY_LOG_PATH", str(folder))
    code, err = _main(capsys, "NVDA", DATE, "--analysts", "market")
    assert code == EXIT_BAD_INPUT and "is a folder" in err and "Traceback" not in err
    code, err = _main(capsys, "log")
    assert code == EXIT_BAD_INPUT and "is a folder" in err and "Traceback" not in err


@pytest.mark.parametrize("env", [{"TRADINGAGENTS_LLM_PRICING": '{"fake-q": [1e308, 1e308]}'},
                                 {"TRADINGAGENTS_MAX_COST_USD": "1e309"},
                                 {"TRADINGAGENTS_LLM_TEMPERATURE": "nan"}])
def test_a_price_or_number_that_is_not_finite_or_absurd_is_refused(ta_home, monkeypatch, capsys, env):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, err = _main(capsys, "NVDA", DATE, "--analysts", "market")
    assert code == EXIT_BAD_INPUT and next(iter(env)) in err and "Traceback" not in err


def test_a_saved_run_is_strict_json_even_when_a_number_overflowed(ta_home):
    import json

    from tradingagents.storage.files_runs import save_run

    state = {"company_of_interest": "NVDA", "trade_date": DATE, "final_trade_decision": "**Rating**: Buy",
             "entry": 1e308 * 10, "ratio": float("nan")}
    folder = save_run({}, state, "Buy", {"usage": {"cost_usd": 1e308 * 10}})

    def refuse(constant):
        raise AssertionError(f"{constant} in state.json")

    doc = json.loads((folder / "state.json").read_text(encoding="utf-8"), parse_constant=refuse)
    assert doc["state"]["entry"] is None and doc["state"]["ratio"] is None
    assert doc["meta"]["usage"]["cost_usd"] is None


def test_log_json_keeps_merged_blocks_with_their_problems(ta_home, capsys):
    import json

    from tradingagents.agents.utils.memory import TradingMemoryLog
    from tradingagents.config import resolve_config

    log = TradingMemoryLog(None)
    for day in ("2024-05-01", "2024-05-02", "2024-05-03"):
        log.store_decision("NVDA", day, "**Rating**: Buy\nreasons")
    path = Path(resolve_config({})["memory_log_path"])
    text = path.read_text(encoding="utf-8")
    first_separator = text.index("<!-- ENTRY_END -->")
    path.write_text(text[:first_separator] + text[first_separator + len("<!-- ENTRY_END -->"):], encoding="utf-8")
    from tradingagents import cli

    assert cli.main(["log", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    read = [r for r in records if not r.get("problems")]
    assert [r["date"] for r in read] == ["2024-05-03"]  # the one entry still whole
    merged = [r for r in records if r.get("problems")]
    assert len(merged) == 1 and "merged two entries" in merged[0]["problems"][0]
    assert "2024-05-01" in merged[0]["text"] and "2024-05-02" in merged[0]["text"]  # nothing dropped
