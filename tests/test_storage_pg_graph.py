"""The whole team on one shared desk: the real graph with ``storage_url`` on a real PostgreSQL server.

Two "machines" are two homes pointed at the same database: what one decides and learns, the
other sees — the decision in the log, the settled outcome and the role lessons — and nothing of it
is written to either home's files.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests import pg_server as _pg
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.storage import list_runs, load_run, open_memory_log, open_role_memory

pg_server, pg_url = _pg.pg_server, _pg.pg_url

ROOT = Path(__file__).resolve().parents[1]


def _graph(home: Path, url: str) -> TradingAgentsGraph:
    return TradingAgentsGraph(["market"], config={"home": str(home), "storage_url": url})


def test_two_homes_share_one_desk_decisions_runs_and_lessons(pg_url, tmp_path):
    home_a, home_b = tmp_path / "machine_a", tmp_path / "machine_b"
    first, rating = _graph(home_a, pg_url).propagate("NVDA", "2024-05-01")
    assert rating in ("Buy", "Overweight", "Hold", "Underweight", "Sell")

    # machine B sees A's pending decision and A's saved run
    cfg_b = {"home": str(home_b), "storage_url": pg_url}
    entries = open_memory_log(cfg_b).load_entries()
    assert [(e["date"], e["ticker"], e["rating"], e["pending"]) for e in entries] == [
        ("2024-05-01", "NVDA", rating, True)
    ]
    assert [(r["ticker"], r["date"]) for r in list_runs(cfg_b)] == [("NVDA", "2024-05-01")]
    assert load_run(cfg_b, "NVDA", "2024-05-01")["state"]["final_trade_decision"] == first["final_trade_decision"]

    # B's next run settles A's decision first; A then sees the outcome and B's lessons
    _graph(home_b, pg_url).propagate("NVDA", "2024-05-20")
    cfg_a = {"home": str(home_a), "storage_url": pg_url}
    settled = [e for e in open_memory_log(cfg_a).load_entries() if not e["pending"]]
    assert [(e["date"], e["ticker"]) for e in settled] == [("2024-05-01", "NVDA")]
    assert settled[0]["reflection"] and settled[0]["alpha"] is not None
    assert open_role_memory("trader_memory", cfg_a).count() == 1

    # nothing of the desk's memory went to either home's files
    for home in (home_a, home_b):
        assert not (home / "memory" / "trading_memory.md").exists()
        assert not list((home / "results").glob("**/state.json")) if (home / "results").exists() else True


def test_log_subcommand_prints_the_desk_log_as_json(pg_url, tmp_path):
    _graph(tmp_path / "a", pg_url).propagate("AAPL", "2024-05-01")
    env = {"PATH": "/usr/bin:/bin", "TRADINGAGENTS_HOME": str(tmp_path / "b"), "TRADINGAGENTS_STORAGE_URL": pg_url}
    out = subprocess.run([sys.executable, "-m", "tradingagents", "log", "--json"], capture_output=True, text=True,
                         cwd=str(ROOT), env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    entries = json.loads(out.stdout)
    assert [(e["ticker"], e["date"], e["pending"]) for e in entries] == [("AAPL", "2024-05-01", True)]
    assert "password" not in out.stdout.lower()


def test_a_run_failed_on_one_machine_and_resumed_on_another_counts_every_answered_call(pg_url, tmp_path):
    """Counters survive a resume across machines: the earlier segments' usage lives in the desk too."""
    import pytest

    from tests.fake_openai import FakeOpenAIServer
    from tests.graph_helpers import server_fault_at
    from tradingagents.errors import LLMCallError

    with FakeOpenAIServer() as server:
        def config(home: Path) -> dict:
            return server.llm_config(llm_max_retries=1, home=str(home), storage_url=pg_url)

        fault = server_fault_at(server, "Bull Researcher")  # this call and its one retry fail for good
        with pytest.raises(LLMCallError):
            TradingAgentsGraph(["market"], config=config(tmp_path / "machine_a"),
                               callbacks=[fault]).propagate("AAPL", "2024-05-10")
        before = len(server.chat_requests) - 2
        assert before > 0
        TradingAgentsGraph(["market"], config=config(tmp_path / "machine_b")).propagate("AAPL", "2024-05-10")
        answered = len(server.chat_requests) - 2  # every request but the two that got a 500
    doc = load_run({"home": str(tmp_path / "machine_a"), "storage_url": pg_url}, "AAPL", "2024-05-10")
    assert doc["meta"]["resumed"] is True
    assert doc["meta"]["usage"]["llm_calls"] == answered > before
    for home in ("machine_a", "machine_b"):  # kept in the database, not in either home
        assert not list((tmp_path / home).glob("**/segments/*.json"))
