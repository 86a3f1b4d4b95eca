"""The memory log's entries cache: used only for the log version it was made from, rebuilt otherwise."""

from __future__ import annotations

import json
import os

from tradingagents.agents.utils.memory import SEPARATOR, TradingMemoryLog
from tradingagents.memory import log_cache


def _log_with(n: int = 3) -> TradingMemoryLog:
    log = TradingMemoryLog()
    for i in range(n):
        log.store_decision("NVDA", f"2024-05-{10 + i:02d}", f"Decision {i}.", rating="Buy")
    return log


def _fresh() -> list[dict]:
    """What a new reader (a fresh server) gets."""
    return TradingMemoryLog().load_entries()


def _parsed() -> list[dict]:
    """The log parsed, the cache out of the way."""
    path = log_cache.cache_path(TradingMemoryLog().path)
    saved = path.read_bytes() if path.exists() else None
    path.unlink(missing_ok=True)
    try:
        return _fresh()
    finally:
        if saved is not None:
            path.write_bytes(saved)


def test_a_read_writes_the_cache_and_a_new_reader_gets_the_same_entries_from_it(ta_home):
    log = _log_with(3)
    log.batch_update_with_outcomes([{"ticker": "NVDA", "date": "2024-05-10", "raw": 0.0321, "alpha": 0.0114,
                                     "holding": 5, "reflection": "It worked."}])
    entries = _fresh()  # a reader that has not parsed the log (the writer above has: it uses its own copy)
    path = log_cache.cache_path(log.path)
    assert path.exists() and path.name == "trading_memory-entries.json"
    data = json.loads(path.read_text())
    assert data["format"] == log_cache.FORMAT and len(data["entries"]) == 3
    # the cache is what a new reader uses: a marked cache shows the mark
    data["entries"][0][data["columns"].index("decision")] = "FROM THE CACHE"
    path.write_text(json.dumps(data))
    fresh = _fresh()
    assert fresh[0]["decision"] == "FROM THE CACHE"
    assert fresh[1:] == entries[1:]
    assert fresh[0]["raw"] == 0.0321 and fresh[0]["alpha"] == 0.0114  # exact values kept


def test_a_stale_cache_is_rebuilt_and_never_shows_entries_the_log_no_longer_has(ta_home):
    log = _log_with(3)
    _fresh()
    old = log_cache.cache_path(log.path).read_bytes()
    # the log changes: one more entry (an append), then a hand edit that drops two
    log.store_decision("AAPL", "2024-06-03", "Go long AAPL.", rating="Hold")
    assert [e["ticker"] for e in _fresh()] == ["NVDA", "NVDA", "NVDA", "AAPL"]
    assert log_cache.cache_path(log.path).read_bytes() != old  # rewritten for the new version
    text = log.path.read_text()
    blocks = text.split(SEPARATOR)
    log.path.write_text(SEPARATOR.join([blocks[0], blocks[3], ""]))
    assert [(e["ticker"], e["date"]) for e in _fresh()] == [("NVDA", "2024-05-10"), ("AAPL", "2024-06-03")]
    assert _fresh() == _parsed()


def test_an_old_cache_put_back_is_not_used_for_a_log_with_the_same_size(ta_home):
    log = _log_with(2)
    _fresh()
    cache = log_cache.cache_path(log.path)
    old = cache.read_bytes()
    # the same number of bytes, another decision: a new mtime (and inode: the file is replaced)
    text = log.path.read_text().replace("Decision 1.", "Decision X.")
    tmp = log.path.with_name("edited.md")
    tmp.write_text(text)
    os.replace(tmp, log.path)
    cache.write_bytes(old)  # the cache of the previous version is back in place
    assert [e["decision"] for e in _fresh()] == ["Decision 0.", "Decision X."]


def test_a_damaged_cache_is_ignored_and_replaced(ta_home):
    log = _log_with(3)
    want = _fresh()
    cache = log_cache.cache_path(log.path)
    good = json.loads(cache.read_text())
    damaged = [
        b"", b"{not json", b"[]", json.dumps({**good, "format": "something else"}).encode(),
        json.dumps({**good, "columns": good["columns"][:-1]}).encode(),
        json.dumps({**good, "entries": [row[:-1] for row in good["entries"]]}).encode(),
        json.dumps({**good, "entries": [[None] * len(good["columns"])]}).encode(),
        json.dumps({**good, "problems": [1]}).encode(),
        cache.read_bytes()[: len(cache.read_bytes()) // 2],  # cut short
    ]
    for bad in damaged:
        cache.write_bytes(bad)
        assert _fresh() == want, bad[:80]
        assert json.loads(cache.read_text()) == good  # replaced by a whole one


def test_problems_come_with_the_cached_entries(ta_home):
    log = _log_with(2)
    with open(log.path, "a", encoding="utf-8") as fh:
        fh.write("[not a tag]\n\nsomething typed by hand" + SEPARATOR)
    parsed_log = TradingMemoryLog()
    entries = parsed_log.load_entries()
    assert len(entries) == 2 and len(parsed_log.problems) == 1
    cached_log = TradingMemoryLog()
    assert cached_log.load_entries() == entries
    assert cached_log.problems == parsed_log.problems


def test_a_cache_that_cannot_be_written_does_not_fail_the_read(ta_home):
    log = _log_with(2)
    cache = log_cache.cache_path(log.path)
    cache.mkdir()  # a folder where the file would go: the write fails
    assert [e["decision"] for e in _fresh()] == ["Decision 0.", "Decision 1."]
    assert cache.is_dir()


def test_no_log_no_entries_and_no_cache(ta_home):
    log = TradingMemoryLog()
    assert log.load_entries() == []
    assert not log_cache.cache_path(log.path).exists()
