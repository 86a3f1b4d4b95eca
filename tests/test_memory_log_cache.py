"""The memory log's entries cache: used only for the log version it was made from, rebuilt otherwise."""

from __future__ import annotations

import json
import os

from tradingagents.agents.utils.memory import SEPARATOR, TradingMemoryLog
from tradingagents.memory import log_cache, trading_log


def _log_with(n: int = 3) -> TradingMemoryLog:
    log = TradingMemoryLog()
    for i in range(n):
        log.store_decision("NVDA", f"2024-05-{10 + i:02d}", f"Decision {i}.", rating="Buy")
    return log


def _fresh() -> list[dict]:
    """What a new reader (a fresh server) gets."""
    return TradingMemoryLog().load_entries()


def _read(path) -> tuple[dict, list, list]:
    """The cache file's three lines: header, summary rows, texts."""
    head, rows, items = path.read_bytes().split(b"\n")
    return json.loads(head), json.loads(rows), json.loads(items)


def _write(path, head: dict, rows: list, items: list) -> None:
    """A cache file of these parts, its text lengths made to fit (a cache as a writer would make it)."""
    def dumps(value) -> bytes:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

    parts, summary = [dumps(i) for i in items], dumps(rows)
    path.write_bytes(dumps({**head, "summary_bytes": len(summary), "text_bytes": [len(p) for p in parts]}) + b"\n"
                     + summary + b"\n[" + b",".join(parts) + b"]")


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
    head, rows, items = _read(path)
    assert head["format"] == log_cache.FORMAT and len(rows) == len(items) == 3
    # the cache is what a new reader uses: a marked cache shows the mark
    items[0][0] = "FROM THE CACHE"
    _write(path, head, rows, items)
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
    good = cache.read_bytes()
    head, rows, items = _read(cache)
    line1, line2, line3 = good.split(b"\n")

    def joined(*lines):
        return b"\n".join(lines)

    damaged = [
        b"", b"{not json", b"[]", line1, joined(line1, line2),
        joined(json.dumps({**head, "format": "something else"}).encode(), line2, line3),
        joined(json.dumps({**head, "columns": head["columns"][:-1]}).encode(), line2, line3),
        joined(json.dumps({**head, "problems": [1]}).encode(), line2, line3),
        joined(json.dumps({**head, "text_bytes": head["text_bytes"][:-1]}).encode(), line2, line3),
        joined(json.dumps({**head, "summary_bytes": head["summary_bytes"] - 1}).encode(), line2, line3),
        joined(line1, json.dumps([row[:-1] for row in rows]).encode(), line3),
        joined(line1, json.dumps([[None] * len(head["columns"])] * 3).encode(), line3),
        joined(line1, line2, line3.replace(b"Decision 1.", b"Decision 10.")),  # a text of another length
        good[: len(good) // 2],  # cut short
    ]
    for bad in damaged:
        for texts in (True, False):  # a summary read trusts no more of it than a whole read
            cache.write_bytes(bad)
            got = TradingMemoryLog().load_entries(texts=texts)
            assert got == (want if texts else [{k: v for k, v in e.items() if k not in ("decision", "reflection")}
                                               for e in want]), bad[:80]
            assert cache.read_bytes() == good  # replaced by a whole one
    # texts of the same length but not JSON: a whole read rebuilds the cache; a summary read does not
    # decode them, and the texts it is asked for then come from the log
    bad_texts = joined(line1, line2, line3.replace(b'"Decision 1."', b'["Decision 1.', 1))
    assert len(bad_texts) == len(good)
    cache.write_bytes(bad_texts)
    assert _fresh() == want and cache.read_bytes() == good
    cache.write_bytes(bad_texts)
    reader = TradingMemoryLog()
    assert len(reader.load_entries(texts=False)) == 3
    assert reader.entry_texts([("2024-05-11", "NVDA")]) == {("2024-05-11", "NVDA"): ("Decision 1.", "")}


def test_a_summary_read_leaves_the_texts_out_and_entry_texts_reads_only_those_asked(ta_home):
    log = _log_with(3)
    full = _fresh()  # writes the cache
    cache = log_cache.cache_path(log.path)
    head, rows, items = _read(cache)
    items[1][0] = "MARKED"  # same version: a reader that uses the cache shows the mark
    _write(cache, head, rows, items)
    reader = TradingMemoryLog()
    summary = reader.load_entries(texts=False)
    assert summary == [{k: v for k, v in e.items() if k not in ("decision", "reflection")} for e in full]
    asked = [("2024-05-11", "NVDA"), ("2024-05-12", "NVDA"), ("2024-06-01", "AAPL")]  # the last: not in the log
    assert reader.entry_texts(asked) == {("2024-05-11", "NVDA"): ("MARKED", ""),
                                         ("2024-05-12", "NVDA"): ("Decision 2.", "")}


def test_entry_texts_follow_the_log_once_it_changed_after_the_summary_read(ta_home):
    log = _log_with(2)
    _fresh()
    reader = TradingMemoryLog()
    reader.load_entries(texts=False)
    log.batch_update_with_outcomes([{"ticker": "NVDA", "date": "2024-05-10", "raw": 0.02, "alpha": 0.01,
                                     "holding": 5, "reflection": "Learnt since."}])  # rewrites the log
    assert reader.entry_texts([("2024-05-10", "NVDA")]) == {("2024-05-10", "NVDA"): ("Decision 0.", "Learnt since.")}


def test_entry_texts_never_read_a_replaced_cache_file_at_the_old_offsets(ta_home):
    log = _log_with(2)
    _fresh()
    reader = TradingMemoryLog()
    reader.load_entries(texts=False)
    cache = log_cache.cache_path(log.path)
    head, rows, items = _read(cache)
    items[1][0] = "Decision Z."  # as long as "Decision 1.": the old offsets would read it as a whole item
    _write(cache, head, rows, items)  # another file in its place: only the file the summary came from is read
    assert reader.entry_texts([("2024-05-11", "NVDA")]) == {("2024-05-11", "NVDA"): ("Decision 1.", "")}


def test_a_summary_read_of_a_log_without_a_cache_parses_it_and_still_gives_the_texts(ta_home):
    log = _log_with(2)
    log_cache.cache_path(log.path).unlink(missing_ok=True)
    reader = TradingMemoryLog()
    summary = reader.load_entries(texts=False)
    assert len(summary) == 2 and all("decision" not in e and "reflection" not in e for e in summary)
    assert reader.entry_texts([("2024-05-10", "NVDA")]) == {("2024-05-10", "NVDA"): ("Decision 0.", "")}
    assert log_cache.cache_path(log.path).exists()  # written for the next reader


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


def test_a_summary_is_the_entries_without_texts_as_rows_from_the_cache_from_a_parse_and_from_a_parsed_log(ta_home):
    log = _log_with(3)
    log.batch_update_with_outcomes([{"ticker": "NVDA", "date": "2024-05-11", "raw": 0.0321, "alpha": 0.0114,
                                     "holding": 5, "reflection": "It worked."}])
    expected = log_cache.summary_rows(_parsed())  # the log parsed, no cache
    assert [r[:7] for r in expected][1] == ["2024-05-11", "NVDA", "Buy", False, 0.0321, 0.0114, 5]
    _fresh()  # writes the cache
    from_cache = TradingMemoryLog()
    assert from_cache.load_summary() == expected
    assert from_cache.entry_texts([("2024-05-11", "NVDA")]) == {("2024-05-11", "NVDA"): ("Decision 1.", "It worked.")}
    log_cache.cache_path(log.path).unlink()
    assert TradingMemoryLog().load_summary() == expected  # parsed (and the cache written again)
    assert log.load_summary() == expected  # the writer's own parsed copy
    assert log_cache.cache_path(log.path).exists()


def test_a_whole_log_is_read_without_cyclic_gc_and_the_collector_is_left_as_it_was(ta_home, monkeypatch):
    import gc

    _log_with(2)
    _fresh()
    seen = []
    real = log_cache.read_cache
    monkeypatch.setattr("tradingagents.memory.trading_log.read_cache",
                        lambda *a, **kw: seen.append(gc.isenabled()) or real(*a, **kw))
    assert gc.isenabled()
    assert len(TradingMemoryLog().load_summary()) == 2
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        TradingMemoryLog().load_entries()
        assert not gc.isenabled()  # a caller that had turned it off keeps it off
    finally:
        gc.enable()


def test_the_past_context_parses_the_log_without_cyclic_gc(ta_home, monkeypatch):
    # what every run reads first: 10,000 entries are ~10,000 new objects, none of them garbage
    import gc

    _log_with(2)
    trading_log._SHARED.clear()  # as in a new process: the writer's version is not there to take
    seen = []
    real = trading_log.scan_blocks
    monkeypatch.setattr(trading_log, "scan_blocks", lambda text: seen.append(gc.isenabled()) or real(text))
    log = TradingMemoryLog()
    assert log.get_past_context("NVDA") is not None
    assert seen == [False] and gc.isenabled()
