"""The portfolio manager in the loop, in Chromium: a run paused before the Portfolio Manager continues after a
server restart with the note, and the Scoreboard page shows who was right."""

from __future__ import annotations

import json

import pytest

from tests.browser.harness import (
    ARTIFACTS,
    chromium,
    fill_run_form,
    free_port,
    goto_page,
    open_app,
    settled,
    start_run,
    streamlit_server,
    wait_rating,
)

pytestmark = pytest.mark.browser

NOTE = "Earnings next week; keep it small."


def test_a_run_paused_before_the_portfolio_manager_continues_after_a_restart_with_the_note(ta_home):
    port = free_port()  # the same address after the restart, as a user's bookmark
    with chromium(viewport=(1440, 1000)) as page:
        with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-pause-1.log", port=port) as url:
            open_app(page, url)
            fill_run_form(page, "NVDA", "2024-05-10")
            page.get_by_text("Pause before each verdict").click()
            start_run(page)
            page.get_by_text("Paused before the Research Manager").first.wait_for()
            page.get_by_role("button", name="Continue").click()
            page.get_by_text("Paused before the Portfolio Manager").first.wait_for()
        # the server is gone; a new one on the same home offers the paused run to the browser that started it
        with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-pause-2.log", port=port) as url:
            open_app(page, url)
            page.get_by_text("Paused before the Portfolio Manager").first.wait_for()
            page.get_by_label("Your note to the Portfolio Manager").fill(NOTE)
            page.get_by_role("button", name="Continue").click()
            assert wait_rating(page, "NVDA", "2024-05-10")
            page.get_by_text(NOTE).first.wait_for()  # the result shows the note
    doc = json.loads((ta_home / "results" / "NVDA" / "2024-05-10" / "state.json").read_text(encoding="utf-8"))
    assert [(n["before"], n["note"]) for n in doc["meta"]["pm_notes"]] == [("portfolio_manager", NOTE)]


def test_the_scoreboard_page_shows_who_was_right(ta_home):
    from tradingagents.agents.utils.memory import TradingMemoryLog

    log = TradingMemoryLog({"memory_log_path": str(ta_home / "memory" / "trading_memory.md")})
    for ticker, team, pm in (("NVDA", "Buy", "Sell"), ("AAPL", "Buy", "Sell"), ("MSFT", "Hold", "Hold")):
        log.store_decision(ticker, "2024-05-10", f"**Rating**: {team}\nWhy.")
        log.record_pm_decision(ticker, "2024-05-10", {"rating": pm, "reason": "", "by": "pm@desk",
                                                      "at": "2024-05-10T16:00:00Z"})
    log.batch_update_with_outcomes([{"ticker": t, "trade_date": "2024-05-10", "raw_return": a, "alpha_return": a,
                                     "holding_days": 5, "reflection": "."}
                                    for t, a in (("NVDA", 0.03), ("AAPL", -0.04), ("MSFT", 0.01))])
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-scoreboard.log") as url, \
            chromium(viewport=(1440, 1000)) as page:
        open_app(page, url)
        goto_page(page, "Scoreboard")
        settled(page)
        for heading in ("Team vs you", "By role", "By model", "By person"):
            page.get_by_role("heading", name=heading).first.wait_for()
        text = page.locator("[data-testid='stMain']").inner_text()
        assert "On 3 decisions with both calls" in text and "you were right 1, the team 1" in text
        assert "67%" in text  # the team's and your hit rate, 2 of 3
        grids = page.locator("[data-testid='stDataFrame']")
        assert grids.count() >= 3
        page.screenshot(path=str(ARTIFACTS / "scoreboard-1440.png"), full_page=True)
