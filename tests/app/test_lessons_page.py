"""AppTest of the Memories page's track record: each lesson's retrievals and outcomes from the runs'
memory_used joined with the log's settled entries, sorting by helpfulness, retiring and restoring."""

from __future__ import annotations

from tests.app.apptest_utils import form_button, new_app
from tests.app.test_memory_pages import pending_block, settled_block, write_log
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.memory.situation_memory import FinancialSituationMemory, lesson_id

L1 = ("Volatility spike with institutional selling in tech", "Lower gross exposure.")
L2 = ("Earnings beat with raised guidance in semiconductors", "Add on pullbacks.")
L3 = ("Rates rise while dividend stocks hold steady", "Hold defensives.")
ID1, ID2, ID3 = (lesson_id(*p) for p in (L1, L2, L3))


def _used(*ids: str) -> dict:
    return {"past_decisions": [], "lessons": {"trader_memory": [
        {"id": i, "score": 1.0, "situation_date": None, "lesson": "…"} for i in ids]}}


def seed() -> dict:
    cfg = resolve_config()
    FinancialSituationMemory("trader_memory", cfg).add_situations([L1, L2, L3])
    runs = [("NVDA", "2020-01-02", "Buy", (ID1, ID2)), ("NVDA", "2020-01-03", "Buy", (ID2,)),
            ("AAPL", "2020-01-04", "Hold", (ID1, ID1))]  # a lesson given twice to one run counts once
    for ticker, day, rating, ids in runs:
        storage.save_run(cfg, {"company_of_interest": ticker, "trade_date": day}, rating, {"memory_used": _used(*ids)})
    write_log([settled_block("2020-01-02", "NVDA", "Buy", 0.02, 0.01),  # right
               settled_block("2020-01-03", "NVDA", "Buy", -0.01, -0.02),  # wrong
               pending_block("2020-01-04", "AAPL")])
    return cfg


def records(at) -> list[dict]:
    frame = next(d.value for d in at.dataframe if "Lesson id" in d.value.columns)
    return frame.to_dict("records")


def test_the_track_record_counts_retrievals_and_outcomes_and_sorts_by_helpfulness(ta_home):
    seed()
    at = new_app("memories")
    at.selectbox(key="mem_role").set_value("trader_memory").run()
    rows = {r["Lesson id"]: r for r in records(at)}
    assert (rows[ID1]["Retrieved"], rows[ID1]["Settled"], rows[ID1]["Right"], rows[ID1]["Wrong"]) == (2, 1, 1, 0)
    assert (rows[ID2]["Retrieved"], rows[ID2]["Settled"], rows[ID2]["Right"], rows[ID2]["Wrong"]) == (2, 2, 1, 1)
    assert (rows[ID3]["Retrieved"], rows[ID3]["Settled"], rows[ID3]["Helpfulness"]) == (0, 0, "—")
    assert rows[ID1]["Helpfulness"] == "100% of 1" and rows[ID2]["Helpfulness"] == "50% of 2"
    assert rows[ID2]["Mean alpha"] == "-0.50%" and rows[ID1]["Mean alpha"] == "+1.00%"
    assert [r["Lesson id"] for r in records(at)] == [ID1, ID2, ID3]  # helpfulness, the default sort
    at.selectbox(key="mem_sort").set_value("newest").run()
    assert [r["Lesson id"] for r in records(at)] == [ID3, ID2, ID1]
    assert any("share of those settled decisions that were right" in str(c.value) for c in at.caption)


def test_retiring_a_lesson_keeps_it_stops_its_retrieval_is_audited_and_can_be_undone(ta_home):
    cfg = seed()
    at = new_app("memories")
    at.selectbox(key="mem_role").set_value("trader_memory").run()
    at.selectbox(key="mem_pick").set_value(ID1).run()
    form_button(at, "Retire this lesson").click().run()
    mem = FinancialSituationMemory("trader_memory", cfg)
    assert mem.retired_ids() == {ID1} and mem.count() == 3
    assert ID1 not in [m["id"] for m in mem.recall_lessons(L1[0], 3)]
    assert {r["Lesson id"]: r["Status"] for r in records(at)}[ID1] == "retired"
    assert any("retired" in s.value for s in at.success)
    form_button(at, "Restore this lesson").click().run()
    assert FinancialSituationMemory("trader_memory", cfg).retired_ids() == frozenset()
    assert mem.recall_lessons(L1[0], 1)[0]["id"] == ID1
    trail = [(e["action"], e["target"], e["detail"].get("lesson")) for e in storage.read_audit(cfg)]
    assert ("memory_retire", "trader_memory", ID1) in trail and ("memory_restore", "trader_memory", ID1) in trail
