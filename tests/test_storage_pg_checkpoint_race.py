"""First-time checkpoint setups racing on an empty PostgreSQL database (real server, real saver).

The saver's migrations build indexes with CREATE INDEX CONCURRENTLY, which waits for every other
session's open statement — including one blocked waiting for the setup lock. Two first-time
openers at once used to deadlock inside PostgreSQL; both must now get a working saver.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import psycopg

from tests import pg_server as _pg
from tradingagents import storage
from tradingagents.storage import pg_checkpoint

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300


def _indexes(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename LIKE 'checkpoint%'").fetchall()
    return {r[0] for r in rows}


def test_two_threads_open_checkpointers_of_two_tickers_at_once_on_a_fresh_database(pg_url):
    pg_checkpoint._forget_setups()  # as a fresh process would be
    cfg = {"storage_url": pg_url}
    go = threading.Barrier(2)
    results: dict[str, object] = {}

    def opener(ticker: str) -> None:
        go.wait()
        try:
            with storage.open_checkpointer(cfg, ticker) as saver:
                saver.get_tuple({"configurable": {"thread_id": f"{ticker}-t", "checkpoint_ns": ""}})
            results[ticker] = "ok"
        except Exception as exc:  # reported below, not swallowed
            results[ticker] = exc

    threads = [threading.Thread(target=opener, args=(t,), daemon=True) for t in ("NVDA", "AAPL")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "the first-time setups hung"
    assert results == {"NVDA": "ok", "AAPL": "ok"}
    assert {"checkpoints_thread_id_idx", "checkpoint_blobs_thread_id_idx",
            "checkpoint_writes_thread_id_idx"} <= _indexes(pg_url)


_CHILD = """
import sys, time, os
sys.path.insert(0, {root!r})
from tradingagents import storage
import tradingagents.storage.pg_checkpoint  # imported before the start line: no jitter
go = {go!r}
open(go + "." + sys.argv[1], "w").close()
deadline = time.monotonic() + 300
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.002)
with storage.open_checkpointer({{"storage_url": {url!r}}}, sys.argv[1]) as saver:
    saver.get_tuple({{"configurable": {{"thread_id": "x", "checkpoint_ns": ""}}}})
print("ok", flush=True)
"""


def test_three_processes_open_checkpointers_at_once_on_a_fresh_database(pg_url, tmp_path):
    go = str(tmp_path / "go")
    code = _CHILD.format(root=str(ROOT), go=go, url=pg_url)
    tickers = ("NVDA", "AAPL", "MSFT")
    procs = [subprocess.Popen([sys.executable, "-c", code, t], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, "TRADINGAGENTS_HOME": str(tmp_path / t)})
             for t in tickers]
    try:
        import time

        deadline = time.monotonic() + 300
        while not all(os.path.exists(f"{go}.{t}") for t in tickers) and time.monotonic() < deadline:
            time.sleep(0.01)
        Path(go).touch()
        outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [(p.returncode, out.strip()) for p, (out, _err) in zip(procs, outs, strict=True)] == [(0, "ok")] * 3, \
        [err[-800:] for _out, err in outs]
    assert "checkpoints_thread_id_idx" in _indexes(pg_url)


def test_a_process_sets_the_tables_up_once_per_database(pg_url, monkeypatch):
    pg_checkpoint._forget_setups()
    calls = []
    real = pg_checkpoint._setup_tables
    monkeypatch.setattr(pg_checkpoint, "_setup_tables", lambda url: (calls.append(url), real(url)))
    cfg = {"storage_url": pg_url}
    for ticker in ("NVDA", "AAPL", "NVDA"):
        with storage.open_checkpointer(cfg, ticker):
            pass
    assert calls == [pg_url]
