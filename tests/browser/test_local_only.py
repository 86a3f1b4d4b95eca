"""The app loads nothing from outside this machine: every request a browser makes, on every page and
through a whole example run, goes to the app's own address (no font CDN, no analytics)."""

from __future__ import annotations

import urllib.parse

import pytest

from tests.browser.harness import ARTIFACTS, chromium, goto_page, open_app, settled, streamlit_server

pytestmark = pytest.mark.browser

LOCAL = {"127.0.0.1", "localhost", "::1"}


def test_every_request_stays_on_this_machine(ta_home):
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-local-only.log") as url, \
            chromium(viewport=(800, 900)) as page:
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        open_app(page, url)
        page.get_by_text("Meet the team").wait_for()
        page.get_by_role("button", name="Run an example").click()
        page.locator("span.ta-rating").first.wait_for(state="visible")
        # at 800 px the badge sits above the decision text, not over it, and no button is cut to "Ma…"
        badge = page.locator("span.ta-rating").first.bounding_box()
        decision = page.locator("[class*='st-key-decision_']").first.bounding_box()
        assert badge and decision and badge["y"] + badge["height"] <= decision["y"] + 1, (badge, decision)
        for name in ("Markdown report", "HTML report"):
            button = page.get_by_role("button", name=name).first
            assert button.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), f"{name} is truncated"
        for title in ("Debates", "Memory log", "Memories", "Backtest", "Run"):
            goto_page(page, title)
        page.wait_for_load_state("networkidle")  # late loads (favicons, fonts) have come by now
        settled(page)
        page.screenshot(path=str(ARTIFACTS / "local-only-800px.png"), full_page=True)
        foreign = sorted({u for u in requests
                          if urllib.parse.urlsplit(u).scheme in ("http", "https", "ws", "wss")
                          and urllib.parse.urlsplit(u).hostname not in LOCAL})
        assert requests and not foreign, foreign
