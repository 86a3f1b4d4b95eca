"""A checkpoint begun under one provider and resumed under another says so, or starts afresh when asked.

A run against an OpenAI-compatible server (the fake one) fails part-way (exit 4, checkpointed); the
same ticker and date with the offline engine then resumes that checkpoint. The output says which
models the checkpoint was begun with, the saved meta's ``ran_on`` and the log entry's meta say which
nodes ran on which, and the report says so too; ``--fresh`` discards the checkpoint instead.
"""

from __future__ import annotations

import json

from tests.fake_openai import FakeOpenAIServer, Fault
from tradingagents import cli
from tradingagents.agents.utils.memory import TradingMemoryLog

DATE = "2024-05-10"


def _bull(body: dict) -> bool:
    # the role's own instructions open the message after the team's shared context
    return any(str(m.get("content") or "").startswith("You are the Bull Researcher") for m in body.get("messages") or [])


def _fail_at_the_bull(server: FakeOpenAIServer) -> list[str]:
    """The networked run: the Market Analyst finishes on the server, the Bull Researcher fails (exit 4)."""
    server.inject(Fault(kind="status", times=None, status_code=500, when=_bull))
    return ["NVDA", DATE, "--analysts", "market", "--provider", "openai_compatible", "--backend-url", server.base_url,
            "--quick-model", "fake-quick", "--deep-model", "fake-deep"]


def test_a_resume_under_other_models_says_so_everywhere(capsys, ta_home):
    with FakeOpenAIServer() as server:
        assert cli.main(_fail_at_the_bull(server)) == cli.EXIT_LLM_FAILURE
    capsys.readouterr()

    assert cli.main(["NVDA", DATE, "--analysts", "market"]) == cli.EXIT_OK  # the offline engine
    captured = capsys.readouterr()
    assert "resuming NVDA 2024-05-10" in captured.err
    warning = captured.err.split("resuming NVDA", 1)[1].split("\n[", 1)[0]
    assert "begun under other models" in warning and "fake-quick" in warning and "Market Analyst" in warning
    assert "--fresh" in warning

    folder = ta_home / "results" / "NVDA" / DATE
    meta = json.loads((folder / "state.json").read_text())["meta"]
    groups = {g["llm_provider"]: g for g in meta["ran_on"]}
    assert set(groups) == {"openai_compatible", "offline"}
    assert "Market Analyst" in groups["openai_compatible"]["nodes"]
    assert groups["openai_compatible"]["quick_think_llm"] == "fake-quick"
    assert {"Bull Researcher", "Portfolio Manager"} <= set(groups["offline"]["nodes"])
    assert not set(groups["offline"]["nodes"]) & set(groups["openai_compatible"]["nodes"])
    # what a person reads after the run: the CLI's lines and the report
    assert "more than one engine made this decision" in captured.out
    report = (folder / "report.md").read_text()
    assert "more than one engine made this decision" in report and "fake-deep" in report
    # the memory log's entry says it too
    entry = next(e for e in TradingMemoryLog({"memory_log_path": str(ta_home / "memory" / "trading_memory.md")})
                 .load_entries() if e["ticker"] == "NVDA")
    assert {g["llm_provider"] for g in entry["ran_on"]} == {"openai_compatible", "offline"}


def test_fresh_discards_the_checkpoint_and_runs_on_one_engine(capsys, ta_home):
    with FakeOpenAIServer() as server:
        assert cli.main(_fail_at_the_bull(server)) == cli.EXIT_LLM_FAILURE
    capsys.readouterr()

    assert cli.main(["NVDA", DATE, "--analysts", "market", "--fresh"]) == cli.EXIT_OK
    captured = capsys.readouterr()
    assert "starting NVDA 2024-05-10" in captured.err and "resuming" not in captured.err
    assert "begun under other models" not in captured.err
    meta = json.loads((ta_home / "results" / "NVDA" / DATE / "state.json").read_text())["meta"]
    assert [g["llm_provider"] for g in meta["ran_on"]] == ["offline"] and meta["resumed"] is False
    assert "Market Analyst" in meta["ran_on"][0]["nodes"]
    assert "more than one engine" not in captured.out


def test_a_resume_under_the_same_models_is_quiet(capsys, ta_home):
    with FakeOpenAIServer() as server:
        argv = _fail_at_the_bull(server)
        assert cli.main(argv) == cli.EXIT_LLM_FAILURE
        server.clear_faults()
        capsys.readouterr()
        assert cli.main(argv) == cli.EXIT_OK
    captured = capsys.readouterr()
    assert "resuming NVDA 2024-05-10" in captured.err and "begun under other models" not in captured.err
    meta = json.loads((ta_home / "results" / "NVDA" / DATE / "state.json").read_text())["meta"]
    assert [g["llm_provider"] for g in meta["ran_on"]] == ["openai_compatible"]
