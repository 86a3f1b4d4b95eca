"""Who caused what: ``by`` in a run's saved meta and its memory-log entry, ``settled_by`` once settled,
from the config's ``user`` (the app's signed-in e-mail) or TRADINGAGENTS_USER / the OS user; the audit
trail appends and reads back, skipping a torn line."""

from __future__ import annotations

import getpass
import json

from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.memory.log_format import parse_block, render_block
from tradingagents.storage.files_runs import load_run

DATE = "2024-05-10"


def test_a_run_records_the_configured_user_in_its_meta_and_its_log_entry(ta_home):
    graph = TradingAgentsGraph(selected_analysts=["market"], config={"user": "ann@desk.example"})
    graph.propagate("NVDA", DATE)
    assert load_run(graph.config, "NVDA", DATE)["meta"]["by"] == "ann@desk.example"
    entries = storage.open_memory_log(graph.config).load_entries()
    assert [e["by"] for e in entries] == ["ann@desk.example"]


def test_without_a_user_the_cli_records_the_environment_or_the_os_user(ta_home, monkeypatch):
    assert storage.default_user(resolve_config()) == getpass.getuser()
    monkeypatch.setenv("TRADINGAGENTS_USER", "desk-cron")
    assert storage.default_user(resolve_config()) == "desk-cron"
    graph = TradingAgentsGraph(selected_analysts=["market"])
    graph.propagate("AAPL", DATE)
    assert load_run(graph.config, "AAPL", DATE)["meta"]["by"] == "desk-cron"


def test_the_log_meta_line_keeps_by_and_settled_by():
    block = parse_block(render_block(DATE, "NVDA", "Buy", "Buy it.",
                                     meta={"by": "ann@desk.example", "settled_by": "lead@x.example"}).raw)
    assert block.meta["by"] == "ann@desk.example" and block.meta["settled_by"] == "lead@x.example"


def test_the_audit_trail_appends_and_skips_a_torn_line(ta_home):
    cfg = resolve_config()
    storage.record_audit(cfg, "job_start", by="ann@desk.example", target="run NVDA", kind="run")
    with open(cfg["audit_path"], "a", encoding="utf-8") as fh:
        fh.write('{"at": 1, "by": "x", "act')  # a killed writer's half line, no newline after it
    storage.record_audit(cfg, "job_stop", by="lead@desk.example", target="run NVDA")
    got = storage.read_audit(cfg)
    assert [(e["by"], e["action"]) for e in got] == [("ann@desk.example", "job_start"), ("lead@desk.example", "job_stop")]
    assert got[0]["detail"] == {"kind": "run"}
    assert all(json.loads(line) for line in open(cfg["audit_path"], encoding="utf-8") if line.startswith('{"action'))


def test_a_settlement_records_who_settled(ta_home):
    from tradingagents.graph.settlement import Settler

    TradingAgentsGraph(["market"], config={"user": "ann@desk.example"}).propagate("NVDA", "2024-05-01")
    result = Settler({"user": "lead@desk.example"}).settle()
    assert [(s["ticker"], s["date"]) for s in result.settled] == [("NVDA", "2024-05-01")]
    [entry] = storage.open_memory_log(resolve_config()).load_entries()
    assert not entry["pending"]
    assert (entry["by"], entry["settled_by"]) == ("ann@desk.example", "lead@desk.example")
