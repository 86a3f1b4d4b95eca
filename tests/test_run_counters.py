"""A run's counters travel with its checkpoint: a resume after the storage was lost counts every segment.

The counters (model calls, tool calls, tokens, node times) are saved in each checkpoint's metadata,
in the same row as the checkpoint (one transaction in PostgreSQL, one write in SQLite); the
end-of-segment copy is kept too and the fuller of the two wins. Real parts: the fake OpenAI server
with the real client, SQLite checkpoints, and the PostgreSQL server the tests start.
"""

from __future__ import annotations

import socket

import psycopg
import pytest

from tests import pg_server as _pg
from tests.fake_openai import FakeOpenAIServer
from tests.graph_helpers import CallCounter, server_fault_at
from tradingagents.errors import EXIT_STORAGE, LLMCallError, StorageUnavailable, exit_code_for
from tradingagents.graph.trading_graph import TradingAgentsGraph

pg_server, pg_url = _pg.pg_server, _pg.pg_url
DATE = "2024-05-10"


def test_counters_survive_a_segment_whose_counter_store_failed(ta_home, monkeypatch):
    """Files: the end-of-segment copy cannot be written (the disk refused it); the checkpoint's own
    counters still make the resumed run count both segments."""
    from tradingagents import storage

    with FakeOpenAIServer() as server:
        config = server.llm_config(llm_max_retries=1)
        fault = server_fault_at(server, "Bull Researcher")  # this call and its one retry fail for good

        def refuse(*_a, **_k):
            raise OSError(28, "No space left on device")

        with monkeypatch.context() as patch, pytest.raises(LLMCallError):
            patch.setattr(storage, "save_run_segments", refuse)
            TradingAgentsGraph(["market"], config=config, callbacks=[fault]).propagate("AAPL", DATE)
        first = len(server.chat_requests) - 2
        assert first > 0
        graph = TradingAgentsGraph(["market"], config=config)
        graph.propagate("AAPL", DATE)
        answered = len(server.chat_requests) - 2  # every request but the two that got a 500
    meta = graph.last_run["record"]["meta"]
    assert meta["resumed"] is True
    assert meta["usage"]["llm_calls"] == answered > first


def _cut_off(admin_url: str, dbname: str, *, allow: bool) -> None:
    """Refuse (or allow again) every connection to ``dbname`` and end the ones open now."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS {"true" if allow else "false"}')
        if not allow:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE datname = %s AND pid <> pg_backend_pid()", (dbname,))


def test_a_desk_database_lost_mid_run_keeps_the_counters_of_its_checkpoint(pg_server, pg_url, tmp_path):
    """PostgreSQL: the desk goes away in the middle of the run (every session killed, new ones
    refused); the run fails with a plain, resumable StorageUnavailable (exit 7); once the desk is back
    the resume counts the first segment's checkpointed calls and the second's."""
    dbname = pg_url.rsplit("/", 1)[1]
    seen: dict[str, int] = {}
    with FakeOpenAIServer() as server:
        config = server.llm_config(home=str(tmp_path / "home"), storage_url=pg_url)

        def lose_the_desk(node: str, n: int) -> None:
            if node == "Bull Researcher" and "before" not in seen:
                seen["before"] = len(server.chat_requests)  # answered and checkpointed before the loss
                _cut_off(pg_server.url(), dbname, allow=False)

        try:
            with pytest.raises(StorageUnavailable) as err:
                TradingAgentsGraph(["market"], config=config,
                                   callbacks=[CallCounter(lose_the_desk)]).propagate("AAPL", DATE)
        finally:
            _cut_off(pg_server.url(), dbname, allow=True)
        assert exit_code_for(err.value) == EXIT_STORAGE and err.value.resumable
        assert "Traceback" not in str(err.value) and dbname in str(err.value)
        first_segment = len(server.chat_requests)
        graph = TradingAgentsGraph(["market"], config=config)
        graph.propagate("AAPL", DATE)
        second_segment = len(server.chat_requests) - first_segment
    meta = graph.last_run["record"]["meta"]
    assert meta["resumed"] is True
    assert seen["before"] > 0 and second_segment > 0
    assert meta["usage"]["llm_calls"] == seen["before"] + second_segment


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("command", [["NVDA", DATE, "--analysts", "market"], ["log"],
                                     ["backtest", "NVDA", "--start", "2024-06-03", "--end", "2024-06-05"]])
def test_an_unreachable_desk_is_one_plain_line_and_exit_7(ta_home, monkeypatch, capsys, command):
    from tradingagents import cli

    monkeypatch.setenv("TRADINGAGENTS_STORAGE_URL", f"postgresql://desk:s3cret@127.0.0.1:{_free_port()}/desk")
    code = cli.main(command)
    err = capsys.readouterr().err
    assert code == EXIT_STORAGE, err
    assert "Traceback" not in err and "s3cret" not in err
    assert "desk database" in err
