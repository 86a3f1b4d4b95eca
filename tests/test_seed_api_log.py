"""``TradingMemoryLog.batch_update_with_outcomes`` called as the specification's documents write it.

The documents key each update ``ticker, trade_date, raw_return, alpha_return, holding_days,
reflection`` (SEED_API.md); our own shorter names are accepted beside them. Both backends (the file
log and the desk's PostgreSQL log) share one check, and both are run here.
"""

from __future__ import annotations

import pytest

from tests import pg_server as _pg
from tradingagents.agents.utils.memory import TradingMemoryLog
from tradingagents.errors import ValidationError

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures


def _documents_update(ticker, trade_date, raw_return, alpha_return, holding_days=5, reflection="It worked."):
    return {"ticker": ticker, "trade_date": trade_date, "raw_return": raw_return, "alpha_return": alpha_return,
            "holding_days": holding_days, "reflection": reflection}


def _file_log(tmp_path):
    return TradingMemoryLog({"memory_log_path": str(tmp_path / "log.md")})


def _pg_log(url):
    from tradingagents.storage.pg_memory_log import PgMemoryLog

    return PgMemoryLog({"storage_url": url})


def _settles_with_documents_keys(log):
    log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy\nStrong data-centre demand.")
    log.store_decision("AAPL", "2024-05-10", "**Rating**: Sell\nWeak handsets.")
    n = log.batch_update_with_outcomes([
        _documents_update("NVDA", "2024-05-10", 0.0321, 0.0114, 5, "Demand held; the call was right."),
        _documents_update("AAPL", "2024-05-10", -0.0456, -0.002, 10, "The drop came as argued."),
    ])
    assert n == 2
    entries = {e["ticker"]: e for e in log.load_entries()}
    assert entries["NVDA"]["pending"] is False and entries["AAPL"]["pending"] is False
    assert entries["NVDA"]["raw"] == pytest.approx(0.0321) and entries["NVDA"]["alpha"] == pytest.approx(0.0114)
    assert entries["AAPL"]["holding"] == 10 and entries["AAPL"]["raw"] == pytest.approx(-0.0456)
    assert entries["NVDA"]["reflection"] == "Demand held; the call was right."
    assert log.get_pending_entries() == []
    assert "+3.2%" in log.get_past_context("NVDA") and "+1.1%" in log.get_past_context("NVDA")


def test_file_log_settles_updates_keyed_as_the_documents_write_them(tmp_path):
    log = _file_log(tmp_path)
    _settles_with_documents_keys(log)
    assert "[2024-05-10 | NVDA | Buy | +3.2% | +1.1% | 5d]" in (tmp_path / "log.md").read_text(encoding="utf-8")


def test_pg_log_settles_updates_keyed_as_the_documents_write_them(pg_url):
    _settles_with_documents_keys(_pg_log(pg_url))


def test_our_short_names_are_still_accepted_and_give_the_same_entry(tmp_path):
    ours, theirs = _file_log(tmp_path / "a"), _file_log(tmp_path / "b")
    for log in (ours, theirs):
        log.store_decision("NVDA", "2024-05-10", "**Rating**: Hold\nMixed.")
    assert ours.batch_update_with_outcomes([{"ticker": "NVDA", "date": "2024-05-10", "raw": 0.01, "alpha": -0.004,
                                             "holding": 5, "reflection": "Flat."}]) == 1
    assert theirs.batch_update_with_outcomes([_documents_update("NVDA", "2024-05-10", 0.01, -0.004, 5, "Flat.")]) == 1
    assert ours.load_entries() == theirs.load_entries()


def test_a_missing_field_is_named_as_the_documents_name_it_and_nothing_is_written(tmp_path):
    log = _file_log(tmp_path)
    log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy\nGo.")
    before = (tmp_path / "log.md").read_bytes()
    bad = _documents_update("NVDA", "2024-05-10", 0.02, 0.01)
    del bad["alpha_return"]
    with pytest.raises(ValidationError, match="alpha_return"):
        log.batch_update_with_outcomes([bad])
    assert (tmp_path / "log.md").read_bytes() == before


def test_the_same_field_given_twice_with_different_values_is_refused(tmp_path):
    log = _file_log(tmp_path)
    log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy\nGo.")
    clash = {**_documents_update("NVDA", "2024-05-10", 0.02, 0.01), "raw": 0.5}
    with pytest.raises(ValidationError, match="raw_return"):
        log.batch_update_with_outcomes([clash])
    assert log.get_pending_entries()[0]["ticker"] == "NVDA"
