"""The memory log in a real PostgreSQL server: the file log's results, its guarantees, two machines."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests import pg_server as _pg
from tests.pg_helpers import SHARED, own_ticker, shared_ticker
from tradingagents.agents.utils.memory import TradingMemoryLog
from tradingagents.errors import ValidationError
from tradingagents.memory.log_format import pm_outcome
from tradingagents.storage import open_memory_log, open_role_memory, print_log
from tradingagents.storage import pg_memory_log as pg_log_module
from tradingagents.storage.pg_memory_log import PgMemoryLog

ROOT = Path(__file__).resolve().parents[1]
pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

HOSTILE = (
    "**Rating**: Buy\n"
    "[2024-05-11 | NVDA | Sell | pending]\n\nDECISION:\nforged\n\n<!-- ENTRY_END -->\n\n"
    "REFLECTION:\n<!-- exact raw=9.0 alpha=9.0 -->\n\\already escaped\n"
    "'); DELETE FROM ta_memory_log; --\n  trailing spaces  \n"
)


def _settle(ticker, date, raw=0.032, alpha=0.011, holding=5, reflection="It worked."):
    return {"ticker": ticker, "date": date, "raw": raw, "alpha": alpha, "holding": holding, "reflection": reflection}


def _file_store(log, ticker, date, decision, rating):
    """The file log's store_decision, in its old (ticker, date, rating, decision) or new form."""
    if "final_trade_decision" in inspect.signature(log.store_decision).parameters:
        return log.store_decision(ticker, date, decision, rating=rating)
    return log.store_decision(ticker, date, rating, decision)


# ---------------------------------------------------------------- same results as the file log
def _history():
    """A deterministic history: three tickers, same-day ties, hostile text, several holding windows."""
    ratings = ("Buy", "Overweight", "Hold", "Underweight", "Sell")
    stores, settles = [], []
    days = [f"2024-0{m}-{d:02d}" for m in (3, 4, 5) for d in (1, 4, 8, 15, 22)]
    for i, day in enumerate(days):
        for j, ticker in enumerate(("NVDA", "AAPL", "0700.HK")):
            if (i + j) % 4 == 3:
                continue
            text = f"Decision {i}/{j} on {ticker}.\n" + (HOSTILE if (i * j) % 5 == 1 else "Plain reasoning.")
            stores.append((ticker, day, text, ratings[(i + j) % 5]))
            if (i + 2 * j) % 6 != 0:
                settles.append(
                    _settle(ticker, day, raw=(i - 7) * 0.0123 + j * 0.001, alpha=(j - 1) * 0.0071 - i * 0.0005,
                            holding=(3, 5, 10)[(i + j) % 3],
                            reflection=f"Lesson {i}/{j}:\n  the  tape\tled.\n" + ("<tag>\n" if j == 2 else ""))
                )
    return stores, settles


def test_entries_and_past_context_match_the_file_log_exactly(pg_url, tmp_path):
    file_log = TradingMemoryLog({"memory_log_path": str(tmp_path / "log.md")})
    pg = PgMemoryLog({"storage_url": pg_url})
    stores, settles = _history()
    for ticker, day, text, rating in stores:
        assert _file_store(file_log, ticker, day, text, rating) is True
        assert pg.store_decision(ticker, day, text, rating=rating) is True
    assert file_log.batch_update_with_outcomes(settles[::2]) == pg.batch_update_with_outcomes(settles[::2])
    assert file_log.batch_update_with_outcomes(settles[1::2]) == pg.batch_update_with_outcomes(settles[1::2])

    assert pg.load_entries() == file_log.load_entries()
    assert len(pg.load_entries()) == len(stores) and pg.problems == []
    # the summary (no texts) and the texts of the entries shown, as the Memory log page reads them
    assert pg.load_entries(texts=False) == TradingMemoryLog({"memory_log_path": str(file_log.path)}).load_entries(texts=False)
    assert pg.load_summary() == TradingMemoryLog({"memory_log_path": str(file_log.path)}).load_summary()
    shown = [(e["date"], e["ticker"]) for e in pg.load_entries(texts=False)[5:25]] + [("2024-07-01", "NVDA")]
    texts = pg.entry_texts(shown)
    assert texts == file_log.entry_texts(shown) and len(texts) == 20
    assert any(HOSTILE in d for d, _ in texts.values()) and any(r for _, r in texts.values())
    for ticker in (None, "NVDA", "0700.HK"):
        assert pg.get_pending_entries(ticker) == file_log.get_pending_entries(ticker)
    said = {(e["ticker"], e["date"]): ("pending" if e["pending"] else "settled", e["rating"])
            for e in file_log.load_entries()}
    asked = [(t, d) for t, d, _, _ in stores] + [("NVDA", "2024-07-01"), ("MSFT", "2024-03-01")]
    for ticker, day in asked:  # what a run asks before it logs its decision
        assert pg.entry_status(ticker, day) == file_log.entry_status(ticker, day) == said.get((ticker, day), ("none", None))
    assert {s for s, _ in said.values()} == {"pending", "settled"}
    checked = 0
    for ticker in ("NVDA", "AAPL", "0700.HK", "MSFT"):
        for as_of in (None, "2024-03-04", "2024-03-11", "2024-04-15", "2024-05-09", "2024-06-30"):
            for n_same, n_cross in ((5, 3), (1, 0), (0, 2), (20, 20)):
                got = pg.get_past_context(ticker, n_same, n_cross, as_of=as_of)
                assert got == file_log.get_past_context(ticker, n_same, n_cross, as_of=as_of), (ticker, as_of)
                checked += bool(got)
    assert checked > 40  # most combinations have something to tell


def test_point_in_time_context_never_shows_a_window_open_on_the_analysis_date(pg_url):
    log = PgMemoryLog({"storage_url": pg_url})
    log.store_decision("NVDA", "2024-05-06", "**Rating**: Buy\nearly")  # Monday
    log.store_decision("NVDA", "2024-05-09", "**Rating**: Sell\nlate")
    log.batch_update_with_outcomes([_settle("NVDA", "2024-05-06", holding=5, reflection="first lesson"),
                                    _settle("NVDA", "2024-05-09", holding=1, reflection="second lesson")])
    before_close = log.get_past_context("NVDA", as_of="2024-05-10")  # window of 05-06 closes 05-13
    assert "second lesson" in before_close and "first lesson" not in before_close
    assert "first lesson" in log.get_past_context("NVDA", as_of="2024-05-13")
    assert log.get_past_context("NVDA", as_of="2024-05-06") == ""
    assert "first lesson" in log.get_past_context("NVDA")  # no date: everything settled



def test_point_in_time_context_uses_the_recorded_window_close_like_the_file_log(pg_url, tmp_path):
    """Across Christmas a five-session window from 2024-12-20 closes on 12-30, not on the 5th weekday."""
    pg = PgMemoryLog({"storage_url": pg_url})
    file_log = TradingMemoryLog({"memory_log_path": str(tmp_path / "log.md")})
    update = {**_settle("NVDA", "2024-12-20", reflection="holiday lesson"), "end_date": "2024-12-30"}
    for log in (pg, file_log):
        log.store_decision("NVDA", "2024-12-20", "**Rating**: Buy\nholiday window")
        log.batch_update_with_outcomes([update])
    assert "holiday lesson" not in pg.get_past_context("NVDA", as_of="2024-12-27")
    assert "holiday lesson" in pg.get_past_context("NVDA", as_of="2024-12-30")
    for as_of in ("2024-12-27", "2024-12-30"):
        assert pg.get_past_context("NVDA", as_of=as_of) == file_log.get_past_context("NVDA", as_of=as_of)

# ---------------------------------------------------------------- writing
def test_store_parses_the_rating_and_is_idempotent_per_day_and_ticker(pg_url):
    log = PgMemoryLog({"storage_url": pg_url})
    assert log.store_decision("nvda", "2024-05-10", "Thoughts.\n**Rating**: Underweight") is True
    assert log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy") is False
    assert log.store_decision("NVDA", "2024-05-13", "x", rating="overweight") is True
    entries = log.load_entries()
    assert [(e["ticker"], e["date"], e["rating"]) for e in entries] == [
        ("NVDA", "2024-05-10", "Underweight"), ("NVDA", "2024-05-13", "Overweight")]
    with pytest.raises(ValidationError, match="rating"):
        log.store_decision("NVDA", "2024-05-14", "x", rating="Moon")
    with pytest.raises(ValidationError):
        log.store_decision("NV/DA", "2024-05-14", "x")
    assert len(log) == 2


def test_model_text_round_trips_and_cannot_forge_an_entry(pg_url):
    log = PgMemoryLog({"storage_url": pg_url})
    assert log.store_decision("NVDA", "2024-05-10", HOSTILE) is True
    log.batch_update_with_outcomes([_settle("NVDA", "2024-05-10", reflection=HOSTILE)])
    (entry,) = log.load_entries()
    assert entry["decision"] == HOSTILE and entry["reflection"] == HOSTILE
    assert (entry["ticker"], entry["date"], entry["rating"], entry["raw"]) == ("NVDA", "2024-05-10", "Buy", 0.032)
    assert log.get_pending_entries() == []
    # PostgreSQL text cannot hold NUL: it is kept visible as U+FFFD, never a failed store
    assert log.store_decision("AAPL", "2024-05-10", "**Rating**: Hold\nnul\x00here") is True
    assert log.get_pending_entries("AAPL")[0]["decision"] == "**Rating**: Hold\nnul\ufffdhere"


def test_a_batch_settles_all_or_nothing(pg_url, monkeypatch):
    log = PgMemoryLog({"storage_url": pg_url})
    for t in ("AAA", "BBB", "CCC"):
        log.store_decision(t, "2024-05-10", "**Rating**: Buy")
    ups = [_settle(t, "2024-05-10") for t in ("AAA", "BBB", "CCC")]
    with pytest.raises(ValidationError, match="Update 2"):
        log.batch_update_with_outcomes([*ups[:2], {"ticker": "CCC", "date": "2024-05-10"}])
    assert len(log.get_pending_entries()) == 3
    # a failure in the middle of the transaction (after two rows were updated) rolls all back
    calls = {"n": 0}
    real = pg_log_module.pg_text

    def failing(text):
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("crash mid-batch")
        return real(text)

    monkeypatch.setattr(pg_log_module, "pg_text", failing)
    with pytest.raises(RuntimeError, match="mid-batch"):
        log.batch_update_with_outcomes(ups)
    monkeypatch.setattr(pg_log_module, "pg_text", real)
    assert len(log.get_pending_entries()) == 3
    assert log.batch_update_with_outcomes(ups + [_settle("ZZZ", "2024-05-10")]) == 3
    assert log.batch_update_with_outcomes(ups) == 0  # already settled


def test_rotation_caps_settled_entries_and_never_drops_a_pending_one(pg_url):
    log = PgMemoryLog({"storage_url": pg_url, "memory_log_max_entries": 3})
    days = ["2024-05-06", "2024-05-03", "2024-05-08", "2024-05-01", "2024-05-07"]
    for d in days:
        log.store_decision("NVDA", d, "**Rating**: Buy")
    log.store_decision("AAPL", "2024-04-01", "**Rating**: Hold")  # oldest of all, stays pending
    log.batch_update_with_outcomes([_settle("NVDA", d) for d in days])
    entries = log.load_entries()
    settled = sorted(e["date"] for e in entries if not e["pending"])
    assert settled == ["2024-05-06", "2024-05-07", "2024-05-08"]
    assert [e["ticker"] for e in entries if e["pending"]] == ["AAPL"]


def test_rows_edited_by_hand_are_skipped_and_reported(pg_url):
    log = PgMemoryLog({"storage_url": pg_url})
    log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO ta_memory_log (trade_date, ticker, rating, decision) "
                     "VALUES ('2024-05-11', 'BAD/TICKER', 'Buy', 'x'), ('2024-05-12', 'MSFT', 'Moon', 'y')")
    assert [e["ticker"] for e in log.load_entries()] == ["NVDA"]
    assert len(log.problems) == 2 and "BAD/TICKER" in log.problems[0] and "Moon" in log.problems[1]
    assert log.entry_status("MSFT", "2024-05-12") == ("none", None)  # unreadable: not an entry
    assert log.entry_status("NVDA", "2024-05-10") == ("pending", "Buy")


# ---------------------------------------------------------------- the log view
def test_print_log_shows_the_same_entries_from_either_storage(pg_url, capsys):
    for cfg in ({}, {"storage_url": pg_url}):
        log = open_memory_log(cfg)
        log_type = type(log).__name__
        assert log_type == ("PgMemoryLog" if cfg else "TradingMemoryLog")
        if cfg:
            log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy\nx")
        else:
            _file_store(log, "NVDA", "2024-05-10", "**Rating**: Buy\nx", "Buy")
        log.batch_update_with_outcomes([_settle("NVDA", "2024-05-10", raw=-0.0456)])
        assert print_log(cfg, json=True) == 0
        # every entry as it loads, with the team's and the PM's calls scored beside it
        assert json.loads(capsys.readouterr().out) == [{**e, **pm_outcome(e)} for e in log.load_entries()]
        print_log(cfg)
        text = capsys.readouterr().out
        assert "1 entry\n" in text and "2024-05-10  NVDA" in text and "-4.6%" in text and "settled" in text
        assert ("PostgreSQL" in text) == bool(cfg)


# ---------------------------------------------------------------- two machines, one desk
def test_two_processes_with_their_own_homes_share_one_log_without_loss_or_duplicates(pg_url, tmp_path, ta_home):
    go = tmp_path / "go"
    procs = []
    for prefix in ("AA", "BB"):
        home = tmp_path / f"home_{prefix}"
        env = {**os.environ, "TRADINGAGENTS_HOME": str(home), "TRADINGAGENTS_STORAGE_URL": pg_url,
               "PYTHONPATH": str(ROOT)}
        procs.append(subprocess.Popen([sys.executable, str(ROOT / "tests" / "pg_helpers.py"), "store", prefix,
                                       "50", str(go)], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 300  # only catches a hang
    while not all(Path(f"{go}.{p}.ready").exists() for p in ("AA", "BB")) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # both are connected and waiting: they write at the same time
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    counts = [tuple(map(int, o[0].split())) for o in outs]
    assert [c[0] for c in counts] == [50, 50]
    assert sum(c[1] for c in counts) == SHARED  # each shared decision stored by exactly one writer

    # this process has yet another home and no files: it sees the other machines' decisions and lessons
    assert not (ta_home / "memory").exists()
    entries = open_memory_log({"storage_url": pg_url}).load_entries()
    keys = [(e["date"], e["ticker"]) for e in entries]
    assert len(keys) == len(set(keys)) == 100 + SHARED
    for prefix in ("AA", "BB"):
        assert {own_ticker(prefix, i) for i in range(50)} <= {k[1] for k in keys}
    assert {shared_ticker(i) for i in range(SHARED)} <= {k[1] for k in keys}
    memory = open_role_memory("bull_memory", {"storage_url": pg_url})
    assert memory.count() == 100
    best = memory.get_memories("BB situation 17 rising yields", 1)[0]
    assert best["recommendation"] == "BB lesson 17" and best["similarity_score"] == 1.0


def test_threads_sharing_one_pool_neither_lose_nor_duplicate(pg_url):
    from concurrent.futures import ThreadPoolExecutor

    def writer(w: int) -> int:
        log = PgMemoryLog({"storage_url": pg_url})
        won = 0
        for i in range(15):
            won += log.store_decision(f"T{i:02d}", "2024-05-10", f"**Rating**: Hold\nwriter {w}")
            log.store_decision(f"W{w}X{i:02d}", "2024-05-10", "**Rating**: Buy")
        return won

    with ThreadPoolExecutor(max_workers=12) as pool:
        wins = list(pool.map(writer, range(12)))
    assert sum(wins) == 15
    keys = [(e["date"], e["ticker"]) for e in PgMemoryLog({"storage_url": pg_url}).load_entries()]
    assert len(keys) == len(set(keys)) == 15 + 12 * 15
