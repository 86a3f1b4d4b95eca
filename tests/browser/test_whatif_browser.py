"""What if… on a finished run in Chromium: pick the News Analyst, edit its report in place, run the fork,
and Compare opens with the run and the fork side by side; then "What moved the decision" draws its chart."""

from __future__ import annotations

import pytest

from tests.browser.harness import ARTIFACTS, chromium, settled, streamlit_server
from tests.test_whatif import BEARISH_NEWS, DATE
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph

pytestmark = pytest.mark.browser


def test_what_if_on_a_finished_run_opens_compare_with_both(ta_home):
    TradingAgentsGraph(config={}).propagate("NVDA", DATE)
    base = storage.load_run(resolve_config({}), "NVDA", DATE)
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-whatif.log") as url, chromium() as page:
        page.goto(f"{url}/?ticker=NVDA&date={DATE}")
        page.get_by_text("What if…").first.click()
        panel = page.locator(".st-key-whatif_linked_NVDA_2024-05-10")
        panel.get_by_text("Run the what-if").wait_for()
        panel.locator('[data-testid="stSelectbox"]').first.click()
        page.get_by_role("option", name="News Analyst").click()
        box = page.locator(".st-key-wi_text_linked_NVDA_2024-05-10_news_None textarea")  # the News Analyst's text
        box.wait_for()
        page.wait_for_function("() => document.querySelector('.st-key-wi_text_linked_NVDA_2024-05-10_news_None "
                               "textarea')?.value.includes('News analysis')")
        box.fill(BEARISH_NEWS)
        box.press("Control+Enter")  # the text area keeps the edit (Streamlit commits it on blur or Ctrl+Enter)
        settled(page)
        panel.get_by_text("Estimated cost").first.wait_for()
        panel.get_by_role("button", name="Run the what-if").click()

        # the fork runs as a job; when it ends, Compare opens with the run (A) and the fork (B)
        page.get_by_role("heading", name="Compare runs").wait_for()
        page.get_by_text("is a what-if fork").first.wait_for()
        assert "News Analyst's output replaced" in page.get_by_text("is a what-if fork").first.inner_text()
        changed = page.get_by_test_id("ta-whatif-changed")
        changed.wait_for()
        assert "News Analyst" in changed.inner_text() and "Portfolio Manager" in changed.inner_text()
        ladder = page.get_by_test_id("ta-ladder")
        ladder.wait_for()
        fork = storage.load_fork(resolve_config({}), "NVDA", DATE, 1)
        ratings = [el.get_attribute("data-rating") for el in ladder.locator("span.pill").all()]
        assert ratings[-2:] == [base["rating"], fork["rating"]]
        assert fork["state"]["news_report"].strip() == BEARISH_NEWS.strip()
        # the reports side by side, the ones the fork changed marked: the edited report and the later plans
        page.get_by_role("tab", name="● News Analyst").click()
        page.get_by_role("tab", name="● Portfolio Manager").wait_for()
        assert page.get_by_role("tab", name="Market Analyst", exact=True).count() == 1
        page.locator(".st-key-ta-said-news_report-B").get_by_text("Headline risk").wait_for()
        settled(page)
        page.screenshot(path=str(ARTIFACTS / "whatif-compare.png"), full_page=True)

        # back on the run: "What moved the decision" drops each analyst in turn and draws the chart
        page.goto(f"{url}/?ticker=NVDA&date={DATE}")
        page.get_by_text("What moved the decision").first.click()
        attr = page.locator(".st-key-attr_linked_NVDA_2024-05-10")
        attr.get_by_text("Estimated cost").first.wait_for()
        attr.get_by_role("button", name="Drop each analyst in turn").click()
        attr.locator(".gtitle").filter(has_text="What moved the decision").wait_for()
        for name in ("Market Analyst", "News Analyst", "Fundamentals Analyst"):
            attr.locator(".ytick").filter(has_text=name).first.wait_for()
        saved = storage.load_run(resolve_config({}), "NVDA", DATE)
        assert set(saved["meta"]["attribution"]) == set(saved["meta"]["analysts"])
