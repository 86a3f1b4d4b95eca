"""A version of the memory log is parsed once a process: a new instance (each run's graph opens its own)
takes the blocks another instance read or wrote, and reads again whatever changed since."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

import tradingagents.memory.trading_log as trading_log
from tradingagents.memory import SEPARATOR, TradingMemoryLog
from tradingagents.memory.log_format import render_block


@pytest.fixture
def parses(monkeypatch) -> list[int]:
    """How many times a whole log was parsed (one item per parse: its number of blocks)."""
    trading_log._SHARED.clear()  # as in a new process
    seen: list[int] = []
    real = trading_log.scan_blocks
    monkeypatch.setattr(trading_log, "scan_blocks", lambda text: (blocks := real(text), seen.append(len(blocks)))[0])
    return seen


def _settle(ticker, date, raw=0.02, alpha=0.01, reflection="A lesson."):
    return {"ticker": ticker, "date": date, "raw": raw, "alpha": alpha, "holding": 5, "reflection": reflection}


def _desk_log() -> None:
    """A log written by another process (nothing of it known to this one)."""
    blocks = [render_block(f"2024-0{m}-10", t, "Buy", f"Call on {t} in {m}.", raw=0.01 * m, alpha=0.002 * m, holding=5,
                           reflection=f"{t} lesson {m}.").raw for m in range(1, 6) for t in ("NVDA", "AAPL")]
    blocks.append(render_block("2024-06-10", "NVDA", "Hold", "Waiting.").raw)
    log = TradingMemoryLog()
    log.path.parent.mkdir(parents=True, exist_ok=True)
    log.path.write_text("".join(b + SEPARATOR for b in blocks))


def _parsed_afresh() -> TradingMemoryLog:
    trading_log._SHARED.clear()
    return TradingMemoryLog()


def test_a_new_instance_takes_the_version_another_one_read(parses):
    _desk_log()
    first = TradingMemoryLog().get_past_memory("NVDA")
    assert parses == [11]
    second = TradingMemoryLog()
    assert second.get_past_memory("NVDA") == first and "NVDA lesson 5." in first[0]
    assert second.entry_status("NVDA", "2024-06-10") == ("pending", "Hold")
    assert parses == [11]  # read once in this process
    fresh = _parsed_afresh()
    assert fresh.get_past_memory("NVDA") == first and fresh.load_entries() == second.load_entries()


def test_what_an_instance_writes_is_what_the_next_one_reads(parses):
    _desk_log()
    writer = TradingMemoryLog()
    writer.get_past_context("NVDA")  # a run reads the log, then logs its decision
    assert writer.store_decision("MSFT", "2024-06-11", "Rating: Sell. Exit.", rating="Sell")
    reader = TradingMemoryLog()
    assert reader.entry_status("MSFT", "2024-06-11") == ("pending", "Sell")
    # settlement rewrites the file: the next instance reads the settled entry, still without a parse
    assert writer.batch_update_with_outcomes([_settle("MSFT", "2024-06-11", -0.03, -0.02, "Sold in time.")]) == 1
    later = TradingMemoryLog()
    assert later.entry_status("MSFT", "2024-06-11") == ("settled", "Sell")
    assert "Sold in time." in later.get_past_context("AAPL")
    assert parses == [11]
    assert _parsed_afresh().get_past_memory("MSFT") == later.get_past_memory("MSFT")


def test_a_change_by_another_process_is_read_again(parses):
    _desk_log()
    TradingMemoryLog().get_past_context("NVDA")
    code = ("from tradingagents.memory import TradingMemoryLog\n"
            "assert TradingMemoryLog().store_decision('TSLA', '2024-06-12', 'Rating: Buy. Go.', rating='Buy')\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    assert TradingMemoryLog().entry_status("TSLA", "2024-06-12") == ("pending", "Buy")
    assert parses == [11, 12]


def test_a_log_ending_in_an_unfinished_tail_is_read_by_each_instance(parses):
    # bytes after the last separator: a hand edit, or an append in progress; what they read as depends
    # on the index beside the log, so each instance decides for itself
    _desk_log()
    log = TradingMemoryLog()
    with open(log.path, "a", encoding="utf-8") as fh:
        fh.write("[2024-06-13 | AMD | Buy | pending]\n\nDECISION:\nTyped by hand.")
    a, b = TradingMemoryLog(), TradingMemoryLog()
    assert a.entry_status("AMD", "2024-06-13") == b.entry_status("AMD", "2024-06-13") == ("pending", "Buy")
    assert parses == [12, 12]


def test_a_log_with_damage_shares_its_problems_but_each_instance_owns_its_list(parses):
    _desk_log()
    log = TradingMemoryLog()
    with open(log.path, "a", encoding="utf-8") as fh:
        fh.write("not an entry at all" + SEPARATOR)
    a = TradingMemoryLog()
    a.get_past_context("NVDA")
    b = TradingMemoryLog()
    b.get_past_context("NVDA")
    assert parses == [12]
    assert len(a.problems) == len(b.problems) == 1 and "not read" in b.problems[0]
    b.problems.clear()
    c = TradingMemoryLog()
    c.get_past_context("NVDA")
    assert len(c.problems) == 1 and parses == [12]


def test_instances_in_threads_read_one_version_alike(parses):
    _desk_log()
    want = TradingMemoryLog().get_past_memory("AAPL")
    got: list = []

    def read():
        got.append(TradingMemoryLog().get_past_memory("AAPL"))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert got == [want] * 8 and parses == [11]


def test_only_a_few_logs_are_kept(parses, ta_home):
    paths = [ta_home / f"log{i}.md" for i in range(trading_log._SHARED.size + 1)]
    for p in paths:
        p.write_text(render_block("2024-05-10", "NVDA", "Buy", "Go.").raw + SEPARATOR)
        TradingMemoryLog({"memory_log_path": str(p)}).entry_status("NVDA", "2024-05-10")
    assert len(parses) == len(paths)
    TradingMemoryLog({"memory_log_path": str(paths[-1])}).entry_status("NVDA", "2024-05-10")
    assert len(parses) == len(paths)  # the newest is kept
    TradingMemoryLog({"memory_log_path": str(paths[0])}).entry_status("NVDA", "2024-05-10")
    assert len(parses) == len(paths) + 1  # the oldest was let go


def test_a_huge_log_is_not_kept_after_its_readers(parses, ta_home, monkeypatch):
    # the table outlives the instances: a version above its block budget is parsed by each reader
    monkeypatch.setattr(trading_log._SHARED, "max_blocks", 15)
    small, big = ta_home / "small.md", ta_home / "big.md"
    small.write_text("".join(render_block(f"2024-05-{d:02d}", "NVDA", "Buy", "Go.").raw + SEPARATOR for d in range(1, 6)))
    big.write_text("".join(render_block(f"2024-05-{d:02d}", "AAPL", "Buy", "Go.").raw + SEPARATOR for d in range(1, 12)))
    for path in (small, big, big, small):
        TradingMemoryLog({"memory_log_path": str(path)}).entry_status("NVDA", "2024-05-01")
    # 5 + 11 blocks are over the budget: the big one's version let the small one's go, and back
    assert parses == [5, 11, 5]
    assert [len(v[1]) for v in trading_log._SHARED._versions.values()] == [5]
    big.write_text(big.read_text() * 2)  # 22 blocks (duplicates): above the budget, kept by no one
    for _ in range(2):
        TradingMemoryLog({"memory_log_path": str(big)}).entry_status("AAPL", "2024-05-01")
    assert parses == [5, 11, 5, 22, 22]
    assert [len(v[1]) for v in trading_log._SHARED._versions.values()] == [5]
