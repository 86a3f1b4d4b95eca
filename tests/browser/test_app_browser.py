"""The real app in headless Chromium: two offline analyses of one ticker a month apart, the rating,
both sides of the debate, and the first decision settled with its alpha on the Memory log page."""

from __future__ import annotations

import re

import pytest

from tests.browser.harness import (
    ARTIFACTS,
    chromium,
    fill_run_form,
    goto_page,
    open_app,
    start_run,
    streamlit_server,
    wait_rating,
)

pytestmark = pytest.mark.browser

TICKER = "NVDA"
FIRST, SECOND = "2024-05-10", "2024-06-10"


def _shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_two_offline_runs_debates_and_settled_memory_log(ta_home):
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-streamlit.log") as url, chromium() as page:
        open_app(page, url)
        page.get_by_text("offline engine (no LLM)").first.wait_for()
        page.get_by_text("synthetic demo data").first.wait_for()
        page.get_by_text("No saved run yet").wait_for()

        # a bad ticker shows an inline message and starts nothing
        fill_run_form(page, "NV/DA", FIRST)
        start_run(page)
        page.get_by_text("is not allowed").wait_for()
        assert page.locator("span.ta-rating").count() == 0

        ratings = []
        for date in (FIRST, SECOND):
            fill_run_form(page, TICKER, date)
            start_run(page)
            ratings.append(wait_rating(page, TICKER, date))
            _shot(page, f"run-{date}")
        assert all(r in {"Buy", "Overweight", "Hold", "Underweight", "Sell"} for r in ratings)
        # a browser refresh keeps the run (its id is in the URL)
        assert "run=" in page.url
        page.reload()
        assert wait_rating(page, TICKER, SECOND) == ratings[1]
        # both runs are saved and listed for reopening
        page.get_by_role("button", name="Open saved run").wait_for()

        goto_page(page, "Debates")
        page.get_by_text("Portfolio Manager — verdict").wait_for()
        bubbles = page.locator('[data-testid="stChatMessage"]')
        text = " ".join(bubbles.all_inner_texts())
        assert "Bull Researcher" in text and "Bear Researcher" in text
        assert "Aggressive Analyst" in text and "Conservative Analyst" in text and "Neutral Analyst" in text
        _shot(page, "debates")

        goto_page(page, "Memory log")
        page.get_by_text(f"{FIRST} · {TICKER} · {ratings[0]} · call alpha").wait_for()
        expander = page.get_by_text(re.compile(rf"{FIRST} · {TICKER} · \w+ · call alpha [+-]\d+\.\d% · stock alpha [+-]\d+\.\d%"))
        assert expander.count() == 1
        page.get_by_text(f"{SECOND} · {TICKER} · {ratings[1]} · pending").wait_for()
        _shot(page, "memory_log")


def test_first_request_of_a_fresh_server_may_be_a_deep_link(ta_home):
    # Until some session has called st.navigation, Streamlit still auto-discovers pages/; a first
    # request to /debates must still get app.py's navigation and shared sidebar, not the bare page.
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-deeplink.log") as url, chromium() as page:
        open_app(page, url, "debates")
        page.get_by_role("heading", name="Debates").wait_for()
        page.get_by_text("No debate to show yet").wait_for()
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Settings").wait_for()
        assert sidebar.get_by_role("link", name="Memory log").count() == 1  # our titles, not file names
        assert sidebar.get_by_role("link", name="app").count() == 0
        goto_page(page, "Memory log")
        page.get_by_text("The memory log is empty").wait_for()
        sidebar.get_by_text("Settings").wait_for()
