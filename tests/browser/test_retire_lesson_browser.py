"""Retiring a lesson from the Memories page's track record in Chromium: the lesson stays stored, no role
retrieves it any more, and the page offers to restore it."""

from __future__ import annotations

import pytest

from tests.browser.harness import ARTIFACTS, HANG_MS, chromium, open_app, streamlit_server, wait_idle
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.memory.situation_memory import FinancialSituationMemory, lesson_id

pytestmark = pytest.mark.browser

LESSONS = [("Volatility spike with institutional selling in tech", "Lower gross exposure."),
           ("Earnings beat with raised guidance in semiconductors", "Add on pullbacks.")]


def test_a_lesson_retired_in_the_browser_is_kept_but_no_longer_retrieved(ta_home):
    cfg = resolve_config()
    FinancialSituationMemory("trader_memory", cfg).add_situations(LESSONS)
    target = lesson_id(*LESSONS[0])
    storage.save_run(cfg, {"company_of_interest": "NVDA", "trade_date": "2024-05-10"}, "Buy",
                     {"memory_used": {"past_decisions": [], "lessons": {"trader_memory": [
                         {"id": target, "score": 1.0, "situation_date": None, "lesson": LESSONS[0][1]}]}}})
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-retire.log") as url, chromium() as page:
        # the link a run's "What the team remembered" gives: the role and the lesson are chosen
        open_app(page, url, f"memories?memory=trader_memory&lesson={target}")
        page.get_by_role("tab", name="Track record").click()
        button = page.get_by_role("button", name="Retire this lesson")
        button.wait_for(timeout=HANG_MS)
        button.click()
        page.get_by_text(f"Lesson {target} retired").wait_for(timeout=HANG_MS)
        page.get_by_role("button", name="Restore this lesson").wait_for(timeout=HANG_MS)
        wait_idle(page)
    mem = FinancialSituationMemory("trader_memory", cfg)
    assert mem.retired_ids() == {target} and mem.count() == 2
    assert [m["id"] for m in mem.recall_lessons(LESSONS[0][0], 2)] == [lesson_id(*LESSONS[1])]
    assert [(e["action"], e["detail"].get("lesson")) for e in storage.read_audit(cfg)
            if e["action"].startswith("memory_")] == [("memory_retire", target)]
