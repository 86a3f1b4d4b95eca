"""What-if forks on a PostgreSQL desk: saved in ta_run_forks, the run's row, log and lessons untouched."""

from __future__ import annotations

import psycopg

from tests import pg_server as _pg
from tests.test_whatif import BEARISH_NEWS, DATE
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.graph.whatif import ForkSpec, attribute, fork_run

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures


def _rows(url: str, query: str) -> list:
    with psycopg.connect(url) as conn:
        return conn.execute(query).fetchall()


def test_forks_on_the_desk_leave_the_run_log_and_memories_as_they_were(pg_url, tmp_path):
    cfg = resolve_config({"home": str(tmp_path), "storage_url": pg_url, "selected_analysts": ["market", "news"]})
    TradingAgentsGraph(config=cfg).propagate("NVDA", DATE)
    before = {q: _rows(pg_url, q) for q in (
        "SELECT doc, report FROM ta_runs", "SELECT * FROM ta_memory_log ORDER BY 1, 2",
        "SELECT * FROM ta_role_memory ORDER BY 1, 2", "SELECT count(*) FROM ta_run_versions")}
    out = fork_run(cfg, "NVDA", DATE, ForkSpec(at="news", text=BEARISH_NEWS))
    assert out["n"] == 1 and out["record"]["results_path"].endswith("#ta_runs/NVDA/2024-05-10/whatif/1")
    assert {q: _rows(pg_url, q) for q in before} == before
    forks = storage.list_forks(cfg, "NVDA", DATE)
    assert [f["n"] for f in forks] == [1] and forks[0]["whatif"]["at"] == "News Analyst"
    fork = storage.load_fork(cfg, "NVDA", DATE, 1)
    assert fork["state"]["news_report"] == BEARISH_NEWS and fork["meta"]["whatif"]["rating"] == out["rating"]
    assert not list(tmp_path.glob("results/*/*/whatif"))  # nothing went to files

    result = attribute(cfg, "NVDA", DATE)
    assert set(result["attribution"]) == {"market", "news"}
    assert [f["n"] for f in storage.list_forks(cfg, "NVDA", DATE)] == [1, 2, 3]
    run = storage.load_run(cfg, "NVDA", DATE)
    assert run["meta"]["attribution"] == result["attribution"]
    assert _rows(pg_url, "SELECT * FROM ta_memory_log ORDER BY 1, 2") == before["SELECT * FROM ta_memory_log ORDER BY 1, 2"]
