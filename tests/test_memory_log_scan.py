"""Reading a log by its tags: ``scan_blocks`` / ``scan_keys`` give what ``parse_block`` of every block
gives, on hostile text too, and a store on a log never read before parses no entry."""

from __future__ import annotations

import random

import pytest

import tradingagents.memory.log_format as log_format
import tradingagents.memory.trading_log as trading_log
from tradingagents.memory import SEPARATOR, TradingMemoryLog
from tradingagents.memory.log_format import parse_block, render_block, scan_blocks, scan_keys
from tradingagents.memory.log_index import index_path, key_line

_PROV = {"data_vendor": "demo", "llm_provider": "offline", "models": {"quick": "q", "deep": "d"}}


def _good(rng: random.Random, i: int) -> str:
    date = f"20{10 + i % 14:02d}-{1 + i % 12:02d}-{1 + i % 28:02d}"
    ticker = rng.choice(["NVDA", "AAPL", "BRK.B", "^GSPC", "T1"])
    meta = _PROV if i % 3 else None
    if i % 4 == 0:
        return render_block(date, ticker, "Hold", f"wait {i}\n[not a tag] escaped\nREFLECTION:\nnot a header",
                            meta=meta).raw
    return render_block(date, ticker, rng.choice(["Buy", "Sell", "Overweight"]), f"decision {i}\n\n<b>x</b>",
                        raw=rng.uniform(-0.2, 0.2), alpha=rng.uniform(-0.1, 0.1), holding=5,
                        reflection=f"lesson {i}", meta={**(meta or {}), "end_date": "2030-01-02"}).raw


# each a block's text that must go wherever parse_block sends it (most of them: away from the fast path)
_HOSTILE = [
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nok",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nx\n\nREFLECTION:\nr",  # pending with a reflection
    "[2024-05-10 | NVDA | Buy | +1.0% | +0.5% | 5d]\n\nDECISION:\nno reflection",
    "[1899-12-31 | NVDA | Buy | pending]\n\nDECISION:\nold",
    "[2023-02-30 | NVDA | Buy | pending]\n\nDECISION:\nno such day",
    "[2024-05-10 | nvda | buy | pending]\n\nDECISION:\ngeneral parser",
    "[2024-05-10 | NVDA | Strong Buy | pending]\n\nDECISION:\nunknown rating",
    "[2024-05-10|NVDA|Buy|pending]\n\nDECISION:\ntight tag",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\na\n[2024-05-11 | AAPL | Sell | pending]\n\nDECISION:\nmerged",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\na\n[just a bracket]\nline",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nends on a tag\n[2024-05-11 | AAPL | Sell | pending]",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nx\n\n<!-- meta {\"by\": \"me\"} -->",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nx\n\n<!-- meta {not json} -->",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nx\n\n<!-- meta [1, 2] -->",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\n\n<!-- meta {\"by\": \"me\"} -->",  # meta right after the tag
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nx\n\nREFLECTION:\n<!-- meta {\"by\": \"me\"} -->",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nx\n\nREFLECTION:\n\n<!-- meta {\"by\": \"me\"} -->",
    "[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nx\n\nREFLECTION:\n\n<!-- meta {\"a\":\n\nREFLECTION:\n1} -->",
    "[2024-05-10 | NVDA | Buy | +1.0% | +0.5% | 5d]\n\nDECISION:\nx\n\nREFLECTION:\n\n<!-- meta {\"by\": 1} -->",
    "[2024-05-10 | NVDA | Buy | +1.0% | +0.5% | 5d]\n\nDECISION:\nx\n\nREFLECTION:\nr\n\n<!-- exact raw=0.01 alpha=0.005 -->",
    "[2024-05-10 | NVDA | Buy | +1.0% | +0.5% | 5d]\n\nDECISION:\nx\n\nREFLECTION:\nr\n\n<!-- exact raw=0.5 alpha=0.005 -->",
    "no tag at all",
    "   \n  leading blanks then [2024-05-10 | NVDA | Buy | pending]",
    "<!-- ENTRY_END -->\n\n[2024-05-10 | NVDA | Buy | pending]\n\nDECISION:\nafter a doubled separator",
]


def _same(a, b) -> None:
    assert type(a) is type(b) is log_format.Block
    for attr in ("raw", "core", "meta", "date", "ticker", "rating", "pending", "holding", "problem", "ok"):
        assert getattr(a, attr) == getattr(b, attr), attr
    if a.ok:
        assert a.returns() == b.returns() and a.body() == b.body() and a.to_entry() == b.to_entry()


def _reference(text: str) -> list:
    pieces = text.split(SEPARATOR)
    tail = pieces.pop()
    if tail.strip():
        pieces.append(tail)
    return [parse_block(p) for p in pieces if p.strip()]


@pytest.mark.parametrize("seed", range(8))
def test_scanning_equals_parsing_every_block(seed):
    rng = random.Random(seed)
    blocks = [_good(rng, i) for i in range(40)] + rng.sample(_HOSTILE, k=rng.randint(3, len(_HOSTILE)))
    rng.shuffle(blocks)
    text = "".join(b + SEPARATOR for b in blocks)
    if seed % 2:
        text += rng.choice(["", "   \n", _HOSTILE[0], "[2024-01-02 | T1 | Buy | pending]\n\nDECISION:\ntorn"])
    if seed % 3 == 0:
        text = SEPARATOR + "  \n" + SEPARATOR + text  # empty pieces at the start
    want = _reference(text)
    got = scan_blocks(text)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        _same(a, b)
    assert scan_keys(text) == [f"+ {b.date} {b.ticker}\n" if b.ok else None for b in want]


@pytest.mark.parametrize("block", _HOSTILE)
def test_each_hostile_block_alone_and_among_good_ones(block):
    rng = random.Random(len(block))
    for text in (block, block + SEPARATOR, _good(rng, 1) + SEPARATOR + block + SEPARATOR + _good(rng, 2) + SEPARATOR):
        want = _reference(text)
        got = scan_blocks(text)
        assert len(got) == len(want)
        for a, b in zip(got, want, strict=True):
            _same(a, b)


def test_a_store_on_a_log_never_read_reads_only_the_tags(monkeypatch):
    log = TradingMemoryLog()
    log.path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(4)
    good = [_good(rng, i) for i in range(60)]
    blocks = [*good, good[7], _HOSTILE[8]]  # a duplicate key and a damaged block
    log.path.write_text("".join(b + SEPARATOR for b in blocks))  # a copy: no index beside it
    assert not index_path(log.path).exists()
    parsed: list[str] = []
    real = log_format.parse_block
    monkeypatch.setattr(log_format, "parse_block", lambda raw: parsed.append(raw) or real(raw))
    made: list = []
    monkeypatch.setattr(trading_log, "scan_blocks", lambda text: made.append(text) or log_format.scan_blocks(text))
    fresh = TradingMemoryLog()
    assert fresh.store_decision("NEWT", "2031-01-02", "Rating: Hold. Wait.")
    assert made == []  # no Block made of the log's entries
    assert [p for p in parsed if "NEWT" not in p] == [_HOSTILE[8]]  # (rendering the new entry parses it)
    dup = parse_block(good[7])
    assert not TradingMemoryLog().store_decision(dup.ticker, dup.date, "again")  # the index knows every key
    keys = [key_line(b.date, b.ticker) for b in map(real, good)]
    assert index_path(log.path).read_bytes().count(b"\n+ ") == len(set(keys)) + 1
    # the problems come with the first read: the duplicate and the damaged block
    assert len(fresh.problems) == 2 and made
    entries = TradingMemoryLog().load_entries()
    assert len(entries) == len(set(keys)) + 1 and entries[-1]["ticker"] == "NEWT"
    assert log.path.read_text().endswith(render_block("2031-01-02", "NEWT", "Hold", "Rating: Hold. Wait.").raw
                                         + SEPARATOR)


def test_a_store_on_a_log_never_read_refuses_a_key_it_holds():
    log = TradingMemoryLog()
    log.path.parent.mkdir(parents=True, exist_ok=True)
    block = render_block("2024-05-10", "NVDA", "Buy", "first")
    log.path.write_text(block.raw + SEPARATOR)
    before = log.path.read_bytes()
    assert not TradingMemoryLog().store_decision("nvda", "2024-05-10", "again", rating="Sell")
    assert log.path.read_bytes() == before and b"+ 2024-05-10 NVDA\n" in index_path(log.path).read_bytes()


def test_past_memory_reads_the_newest_first_and_the_later_entry_first_on_one_date():
    # entries logged out of date order (a backfill, a hand edit), several on one date
    rng = random.Random(11)
    rows = [(f"2024-0{1 + i % 3}-{10 + i % 4:02d}", f"T{i}") for i in range(24)]
    rng.shuffle(rows)
    log = TradingMemoryLog()
    log.path.parent.mkdir(parents=True, exist_ok=True)
    log.path.write_text("".join(
        render_block(d, t, "Buy", f"call {t}", raw=0.01, alpha=0.0, holding=5, reflection=f"lesson {t}").raw
        + SEPARATOR for d, t in rows))
    _, shown = TradingMemoryLog().get_past_memory("NONE", n_same=0, n_cross=len(rows))
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], i), reverse=True)
    assert [(e["date"], e["ticker"]) for e in shown] == [rows[i] for i in order]
