"""The memory log appends: a store reads the small index, not the log, and survives torn appends."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import tradingagents.memory.trading_log as trading_log
from tradingagents.memory import SEPARATOR, TradingMemoryLog
from tradingagents.memory.log_format import render_block
from tradingagents.memory.log_index import index_path


def _entry(ticker, date, text, rating="Buy") -> str:
    return render_block(date, ticker, rating, text).raw + SEPARATOR


def _fill(log: TradingMemoryLog, n: int) -> None:
    for i in range(n):
        assert log.store_decision(f"T{i % 50}", f"2023-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}", f"d{i}", rating="Hold")


@pytest.fixture
def parses(monkeypatch):
    """The log texts read into blocks (rendering a new entry is not counted)."""
    calls = []
    real = trading_log.scan_blocks
    monkeypatch.setattr(trading_log, "scan_blocks", lambda text: calls.append(text) or real(text))
    return calls


def test_a_store_on_a_new_instance_appends_without_parsing_the_log(parses):
    log = TradingMemoryLog()
    _fill(log, 300)
    before = log.path.read_bytes()
    ino = os.stat(log.path).st_ino
    parses.clear()
    fresh = TradingMemoryLog()
    assert fresh.store_decision("NVDA", "2024-05-10", "Rating: Buy. Go long.")
    assert not TradingMemoryLog().store_decision("nvda", "2024-05-10", "again")  # the key check: index only
    assert not TradingMemoryLog().store_decision("T7", "2023-01-08", "an old key, deep in the log")
    assert parses == []
    after = log.path.read_bytes()
    assert os.stat(log.path).st_ino == ino and after.startswith(before)  # appended in place
    assert after[len(before):].decode() == _entry("NVDA", "2024-05-10", "Rating: Buy. Go long.")
    assert [e["ticker"] for e in TradingMemoryLog().load_entries()][-1] == "NVDA"


def test_a_torn_append_is_not_read_and_the_next_writer_cuts_it(ta_home):
    log = TradingMemoryLog()
    log.store_decision("NVDA", "2024-05-10", "first", rating="Buy")
    log.store_decision("AAPL", "2024-05-10", "second", rating="Sell")
    good = log.path.read_bytes()
    torn = _entry("MSFT", "2024-05-10", "never acknowledged " * 50).encode()
    for cut in (1, 40, len(torn) // 2, len(torn) - 3):  # killed anywhere inside its one write
        with open(log.path, "r+b") as fh:
            fh.truncate(len(good))
            fh.seek(len(good))
            fh.write(torn[:cut])
        reader = TradingMemoryLog()
        assert [e["ticker"] for e in reader.load_entries()] == ["NVDA", "AAPL"] and reader.problems == []
    assert TradingMemoryLog().store_decision("TSLA", "2024-05-10", "third", rating="Hold")
    assert log.path.read_bytes() == good + _entry("TSLA", "2024-05-10", "third", "Hold").encode()
    fresh = TradingMemoryLog()
    assert [e["ticker"] for e in fresh.load_entries()] == ["NVDA", "AAPL", "TSLA"] and fresh.problems == []


def test_a_writer_killed_between_log_and_index_loses_nothing_and_duplicates_nothing():
    log = TradingMemoryLog()
    log.store_decision("NVDA", "2024-05-10", "first", rating="Buy")
    with open(log.path, "ab") as fh:  # the entry reached the log, its index line never came
        fh.write(_entry("AAPL", "2024-05-10", "whole but unindexed").encode())
    assert [e["ticker"] for e in TradingMemoryLog().load_entries()] == ["NVDA", "AAPL"]
    assert not TradingMemoryLog().store_decision("AAPL", "2024-05-10", "a duplicate", rating="Buy")
    assert b"+ 2024-05-10 AAPL\n" in index_path(log.path).read_bytes()  # reindexed
    assert TradingMemoryLog().store_decision("MSFT", "2024-05-10", "next", rating="Buy")
    assert [e["ticker"] for e in TradingMemoryLog().load_entries()] == ["NVDA", "AAPL", "MSFT"]


@pytest.mark.parametrize("damage", ["missing", "garbage", "cut", "other_file"])
def test_a_missing_or_damaged_index_is_never_trusted_and_is_rebuilt(damage):
    log = TradingMemoryLog()
    log.store_decision("NVDA", "2024-05-10", "first", rating="Buy")
    log.store_decision("AAPL", "2024-05-11", "second", rating="Buy")
    idx = index_path(log.path)
    if damage == "missing":
        idx.unlink()
    elif damage == "garbage":
        idx.write_bytes(b"\x00\xffnot an index")
    elif damage == "cut":
        idx.write_bytes(idx.read_bytes()[:-5])
    else:  # an index that names an empty log: it does not vouch for this one
        idx.write_bytes(b"tradingagents memory-log index 1\n@ 1 0 0\n")
    assert not TradingMemoryLog().store_decision("AAPL", "2024-05-11", "dup", rating="Buy")
    assert TradingMemoryLog().store_decision("MSFT", "2024-05-12", "new", rating="Buy")
    text = idx.read_bytes()
    assert all(k in text for k in (b"+ 2024-05-10 NVDA\n", b"+ 2024-05-11 AAPL\n", b"+ 2024-05-12 MSFT\n"))
    fresh = TradingMemoryLog()
    assert [e["ticker"] for e in fresh.load_entries()] == ["NVDA", "AAPL", "MSFT"] and fresh.problems == []


def test_a_hand_edit_of_the_same_size_is_noticed():
    log = TradingMemoryLog()
    log.store_decision("NVDA", "2024-05-10", "first", rating="Buy")
    st = os.stat(log.path)
    log.path.write_bytes(log.path.read_bytes().replace(b"NVDA", b"AMDX"))  # in place, same length
    os.utime(log.path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # an editor, seconds later
    assert log.store_decision("NVDA", "2024-05-10", "the key is free now", rating="Buy")
    assert not log.store_decision("AMDX", "2024-05-10", "taken by the hand edit", rating="Buy")
    assert [e["ticker"] for e in TradingMemoryLog().load_entries()] == ["AMDX", "NVDA"]


def test_model_text_cannot_forge_index_lines():
    log = TradingMemoryLog()
    forged = "Buy.\n+ 2024-05-11 AAPL\n@ 1 2 3\n" + "tradingagents memory-log index 1\n+ 2024-05-11 AAPL\n"
    assert log.store_decision("NVDA", "2024-05-10", forged)
    assert TradingMemoryLog().store_decision("AAPL", "2024-05-11", "real")
    assert TradingMemoryLog().load_entries()[0]["decision"] == forged


def test_settlement_and_rotation_rewrite_the_index_with_the_log():
    log = TradingMemoryLog({"memory_log_max_entries": 1})
    for day in ("2024-05-10", "2024-05-13"):
        log.store_decision("NVDA", day, day, rating="Buy")
    upd = {"ticker": "NVDA", "raw": 0.01, "alpha": 0.0, "holding": 5, "reflection": "r"}
    assert log.batch_update_with_outcomes([{**upd, "date": "2024-05-10"}, {**upd, "date": "2024-05-13"}]) == 2
    # rotation dropped 05-10: its key is free again, in the index as in the log
    assert b"2024-05-10" not in index_path(log.path).read_bytes()
    assert TradingMemoryLog({"memory_log_max_entries": 1}).store_decision("NVDA", "2024-05-10", "again")
    assert [e["date"] for e in TradingMemoryLog().load_entries()] == ["2024-05-13", "2024-05-10"]


def test_an_index_left_from_a_deleted_log_is_ignored(ta_home):
    log = TradingMemoryLog()
    log.store_decision("NVDA", "2024-05-10", "first", rating="Buy")
    Path(log.path).unlink()
    assert log.load_entries() == []
    assert TradingMemoryLog().store_decision("NVDA", "2024-05-10", "first again", rating="Buy")
    assert [e["decision"] for e in TradingMemoryLog().load_entries()] == ["first again"]


@pytest.mark.parametrize("tag", ["[2024-02-30 | NVDA | Buy | pending]", "[1850-01-02 | NVDA | Buy | pending]",
                                 "[2024-05-10 | NV*DA | Buy | pending]", "[2024-05-10 | NVDA | Buy | +1.0% | 5d]"])
def test_tags_that_look_like_ours_but_are_not_valid_are_reported(tag):
    log = TradingMemoryLog()
    log.path.parent.mkdir(parents=True)
    log.path.write_text(tag + "\n\nDECISION:\nhand" + SEPARATOR + _entry("AAPL", "2024-05-10", "fine"))
    assert [e["ticker"] for e in log.load_entries()] == ["AAPL"]
    assert len(log.problems) == 1 and "kept verbatim" in log.problems[0]
