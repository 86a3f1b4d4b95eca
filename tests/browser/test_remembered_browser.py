"""The Run page of a late run shows what the team remembered: the settled earlier decision (linking to its
Memory log entry) and the lessons its roles were given (linking to the Memories page)."""

from __future__ import annotations

import pytest

from tests.browser.harness import (
    ARTIFACTS,
    chromium,
    fill_run_form,
    open_app,
    start_run,
    streamlit_server,
    wait_rating,
)

pytestmark = pytest.mark.browser

TICKER = "NVDA"
FIRST, SECOND = "2024-05-10", "2024-06-10"


def test_a_late_run_shows_what_the_team_remembered(ta_home):
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-remembered.log") as url, chromium() as page:
        open_app(page, url)
        for date in (FIRST, SECOND):
            fill_run_form(page, TICKER, date)
            start_run(page)
            wait_rating(page, TICKER, date)
        page.get_by_text("What the team remembered").first.wait_for()
        decision = page.locator(f'a[href*="memory_log?ticker={TICKER}&date={FIRST}"]')
        decision.first.wait_for()
        assert f"{FIRST} · {TICKER}" in decision.first.inner_text() and "alpha" in decision.first.inner_text()
        lessons = page.locator('a[href*="memories?memory="]')
        lessons.first.wait_for()
        assert lessons.count() >= 1 and "lesson=" in (lessons.first.get_attribute("href") or "")
