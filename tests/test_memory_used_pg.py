"""memory_used on a desk database: PostgreSQL's get_past_memory gives what the file log gives, and the
lesson ids a run records are the ones PgRoleMemory gives back after reopening (a real server)."""

from __future__ import annotations

from tests import pg_server as _pg
from tests.test_memory_used import DATE, _seed
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.memory.situation_memory import lesson_id
from tradingagents.memory.trading_log import TradingMemoryLog
from tradingagents.storage.pg_memory_log import PgMemoryLog
from tradingagents.storage.pg_role_memory import PgRoleMemory

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

SETTLED = [("NVDA", "2024-03-01", "Buy", 0.05, 0.021), ("AAPL", "2024-03-04", "Sell", -0.01, 0.013),
           ("NVDA", "2024-04-01", "Overweight", -0.06, -0.075), ("MSFT", "2024-04-02", "Hold", 0.01, 0.004),
           ("NVDA", "2024-05-08", "Sell", -0.02, -0.03)]  # its window closes after DATE


def _fill(log) -> None:
    for ticker, day, rating, _, _ in SETTLED:
        log.store_decision(ticker, day, f"{ticker} {rating} decision of {day}.", rating=rating)
    log.store_decision("NVDA", "2024-05-09", "Still pending.", rating="Hold")
    log.batch_update_with_outcomes([{"ticker": t, "date": d, "raw": raw, "alpha": alpha, "holding": 5,
                                     "reflection": f"Reflection on {t} {d}."} for t, d, _, raw, alpha in SETTLED])


def test_the_desk_log_gives_the_same_past_memory_as_the_file_log(pg_url):
    desk, files = PgMemoryLog(resolve_config({"storage_url": pg_url})), TradingMemoryLog(resolve_config({}))
    for log in (desk, files):
        _fill(log)
    assert isinstance(storage.open_memory_log(resolve_config({"storage_url": pg_url})), PgMemoryLog)
    for ticker in ("NVDA", "AAPL", "TSLA"):
        for as_of in (None, DATE, "2024-03-05"):
            for n_same, n_cross in ((5, 3), (1, 1), (0, 0)):
                on_desk = desk.get_past_memory(ticker, n_same, n_cross, as_of=as_of)
                assert on_desk == files.get_past_memory(ticker, n_same, n_cross, as_of=as_of), (ticker, as_of)
                text, data = on_desk
                assert desk.get_past_context(ticker, n_same, n_cross, as_of=as_of) == text
                assert all(d["date"] < (as_of or "9999") for d in data)
    text, data = desk.get_past_memory("NVDA", as_of=DATE)
    # the entry of 2024-05-08 has not closed by DATE, the pending one never counts
    assert [(d["ticker"], d["date"], d["rating"], d["alpha"]) for d in data][:2] == [
        ("NVDA", "2024-04-01", "Overweight", -0.075), ("NVDA", "2024-03-01", "Buy", 0.021)]
    assert "2024-05-08" not in text and "2024-05-09" not in text


def test_a_run_on_the_desk_records_the_decisions_and_the_lesson_ids_it_was_given(pg_url):
    cfg = {"storage_url": pg_url}
    graph = TradingAgentsGraph(config=cfg)
    assert isinstance(graph.memory_log, PgMemoryLog)
    assert all(isinstance(m, PgRoleMemory) for m in graph.memories.values())
    _seed(graph)
    state, _ = graph.propagate("NVDA", DATE)
    meta = storage.load_run(resolve_config(cfg), "NVDA", DATE)["meta"]
    used = meta["memory_used"]
    reopened = TradingAgentsGraph(config=cfg)
    assert reopened.memory_log.get_past_memory("NVDA", as_of=DATE)[1] == used["past_decisions"]
    assert [(d["date"], d["ticker"]) for d in used["past_decisions"]] == [
        ("2024-04-01", "NVDA"), ("2024-03-01", "NVDA"), ("2024-03-04", "AAPL")]
    assert set(used["lessons"]) == set(graph.memories)
    for name, items in used["lessons"].items():
        again = PgRoleMemory(name, resolve_config(cfg))  # a new instance, as another process would open it
        by_id = {x["id"]: x for x in again.lessons()}
        for item in items:
            assert item["id"] in by_id and by_id[item["id"]]["recommendation"] == item["lesson"]
            assert item["id"] == lesson_id(by_id[item["id"]]["situation"], item["lesson"])
        assert {i["lesson"] for i in items} == {f"{name}: lesson one on momentum.", f"{name}: lesson two on earnings."}
    assert "has settled yet" not in state["final_trade_decision"]
    # the run's saved meta is JSON on the desk too (what the Memories page's track record reads)
    [row] = storage.list_memory_used(resolve_config(cfg))
    assert (row["ticker"], row["date"]) == ("NVDA", DATE) and row["memory_used"] == used
