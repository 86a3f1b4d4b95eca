"""The desk's PostgreSQL log carries the same provenance, settlement prices, pending updates and
kept lessons as the file log, with the same results."""

from __future__ import annotations

from tests import pg_server as _pg
from tradingagents.agents.utils.memory import TradingMemoryLog
from tradingagents.storage.pg_memory_log import PgMemoryLog

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

PROV = {"data_vendor": "yfinance", "llm_provider": "openai", "models": {"quick": "gpt-q", "deep": "gpt-d"}}
SETTLE = {"ticker": "NVDA", "date": "2024-05-10", "raw": 0.032, "alpha": 0.011, "holding": 5,
          "reflection": "It worked.", "entry_price": 100.0, "exit_price": 103.2, "bench_raw": 0.021,
          "benchmark": "SPY", "end_date": "2024-05-17",
          "lessons_due": {"trader_memory": ["rates up", "trim"]}, "lessons_known_from": "2024-05-17"}


def test_the_desk_log_keeps_the_same_new_fields_as_the_file_log(pg_url, tmp_path):
    logs = [TradingMemoryLog({"memory_log_path": str(tmp_path / "log.md")}), PgMemoryLog({"storage_url": pg_url})]
    for log in logs:
        assert log.store_decision("NVDA", "2024-05-10", "Hold.", rating="Hold", provenance=PROV) is True
        assert log.update_pending("NVDA", "2024-05-10", "Sell now.", rating="Sell", provenance=PROV) == (
            "updated", "Hold")
        assert log.update_pending("AAPL", "2024-05-10", "Buy.", rating="Buy") == ("stored", None)
        assert log.batch_update_with_outcomes([SETTLE]) == 1
        assert log.update_pending("NVDA", "2024-05-10", "Buy.", rating="Buy") == ("settled", "Sell")
        assert log.lessons_due() == [{"ticker": "NVDA", "date": "2024-05-10", "known_from": "2024-05-17",
                                      "lessons": {"trader_memory": ("rates up", "trim")}}]
        assert log.clear_lessons_due([("NVDA", "2024-05-10")]) == 1 and log.lessons_due() == []
    file_entries, pg_entries = (log.load_entries() for log in logs)
    assert pg_entries == file_entries
    nvda = next(e for e in file_entries if e["ticker"] == "NVDA")
    assert nvda["rating"] == "Sell" and nvda["decision"] == "Sell now." and not nvda["pending"]
    assert nvda["data_vendor"] == "yfinance" and nvda["models"] == {"quick": "gpt-q", "deep": "gpt-d"}
    assert (nvda["entry_price"], nvda["exit_price"], nvda["bench_raw"], nvda["benchmark"], nvda["end_date"]) == (
        100.0, 103.2, 0.021, "SPY", "2024-05-17")
    aapl = next(e for e in file_entries if e["ticker"] == "AAPL")
    assert aapl["data_vendor"] is None and aapl["entry_price"] is None
