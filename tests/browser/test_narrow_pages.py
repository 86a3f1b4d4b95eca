"""Every page at 800 px in the browser's light and dark preference: no label, button or figure cut to an
ellipsis and no sideways scroll (the demo walk covers the pages of the demo; this one covers them all)."""

from __future__ import annotations

import pytest

from tests.browser.harness import (
    ARTIFACTS,
    HANG_MS,
    chromium,
    fill_run_form,
    settled,
    start_run,
    streamlit_server,
    wait_rating,
)
from tests.browser.test_demo_script import CUT_TEXT_JS

pytestmark = pytest.mark.browser

PAGES = {"/": "Run an analysis", "/debates": "Debates", "/memory_log": "Memory log", "/memories": "Memories",
         "/history": "History", "/compare": "Compare runs", "/watchlist": "Watchlist", "/backtest": "Backtest",
         "/book": "Book", "/schedules": "Schedules"}


def test_every_page_at_800_px_in_both_themes_cuts_no_text(ta_home):
    with streamlit_server(ta_home, log_path=ARTIFACTS / "narrow-streamlit.log") as url, chromium() as page:
        page.goto(url + "/")
        for date in ("2024-05-10", "2024-06-10"):  # something on every page: runs, debates, a settled entry
            fill_run_form(page, "NVDA", date)
            start_run(page)
            wait_rating(page, "NVDA", date)
        # the desk's pages with something on them: a book and a job
        from tradingagents.desk.schedules import add_schedule
        from tradingagents.storage.book import import_book_csv

        import_book_csv(None, "b.csv", text="ticker,shares,cost_basis\nNVDA,100,90\nAAPL,50,150\n", cash=50_000.0)
        add_schedule(None, {"name": "morning", "watchlist": "NVDA,AAPL", "at": "07:30", "tz": "Europe/London",
                            "webhook": "https://hooks.example.com/services/T000/B000/XXXX"})
        browser = page.context.browser
        for scheme in ("light", "dark"):
            context = browser.new_context(viewport={"width": 800, "height": 1000}, color_scheme=scheme)
            narrow = context.new_page()
            narrow.set_default_timeout(HANG_MS)
            for path, heading in PAGES.items():
                narrow.goto(url + path)
                narrow.get_by_role("heading", name=heading).first.wait_for()
                settled(narrow)  # widgets in their final width
                cut = narrow.evaluate(CUT_TEXT_JS)
                assert cut == [], f"{path} at 800 px ({scheme}) cuts: {cut}"
                wide = narrow.evaluate("() => document.documentElement.scrollWidth")
                assert wide <= 801, f"{path} at 800 px ({scheme}) scrolls sideways ({wide} px)"
            context.close()
