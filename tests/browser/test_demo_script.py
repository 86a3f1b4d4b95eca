"""The stakeholder demo script in headless Chromium, at 1440 and 800 px, in the browser's light and dark
preference: first visit, an example run, the live text of a run in progress, the battle view's replay, a
comparison of two runs, a PDF download and the Memory log after settling. Screenshots of each step go to
test-artifacts/screenshots/, or to docs/screenshots/ with UPDATE_SCREENSHOTS=1.

The live-text step runs in every pass against a second app whose model is the fake OpenAI-compatible
server (through the real langchain-openai client) holding the Market Analyst's streamed report at two
points: the test looks at the page while the stream is held, releases it, and looks again, so "the text
grew while the run went on" is a condition the page reaches, on any machine at any pace.

Nothing here judges the machine's speed: every wait is for a condition, with a timeout that only catches
a hang. Asserts stable things only (headings, roles, data attributes, the rating): other pages' wording
may change.
"""

from __future__ import annotations

import json
import os
import threading
from urllib.parse import quote

import pytest

from tests.browser.harness import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    HANG_MS,
    ROOT,
    fill_run_form,
    settled,
    start_run,
    streamlit_server,
    wait_idle,
    wait_rating,
)

pytestmark = pytest.mark.browser

# docs/screenshots/ (committed) only when asked: a plain `make test` leaves the clone as it was
SHOTS = ROOT / "docs" / "screenshots" if os.environ.get("UPDATE_SCREENSHOTS") == "1" else ARTIFACTS / "screenshots"
TICKER = "NVDA"
FIRST, SECOND = "2024-05-10", "2024-06-10"
EXTRA_DATES = ("2024-07-10", "2024-08-09", "2024-09-10")  # one more example run in each later pass
LIVE_DATES = ("2024-06-10", "2024-07-10", "2024-08-09", "2024-09-10")  # a run of its own in each pass
BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(14, 17, 23)"}  # .streamlit/config.toml
LIVE_TEXT_JS = """() => {
  const head = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .find((e) => e.innerText.trim().endsWith('— live text'));
  const box = head && head.closest('[data-testid="stElementContainer"]').nextElementSibling;
  return box ? [head.innerText.replace('— live text', '').trim(), box.innerText] : null;
}"""
COMBOS = [(1440, "dark"), (1440, "light"), (800, "dark"), (800, "light")]


def _shot(page, step: str, width: int, scheme: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    settled(page)
    page.screenshot(path=str(SHOTS / f"demo-{step}-{width}-{scheme}.png"))


def _open(page, url: str, path: str, heading: str) -> None:
    page.goto(url + path)
    page.get_by_role("heading", name=heading).first.wait_for()


def _no_sideways_scroll(page, width: int) -> None:
    overflow = page.evaluate("() => document.documentElement.scrollWidth")
    assert overflow <= width + 1, f"page is {overflow}px wide at a {width}px window"


CUT_TEXT_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] *')]
  .filter((e) => e.innerText && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).textOverflow === 'ellipsis')
  .map((e) => e.innerText.slice(0, 60))"""


def _nothing_cut(page, where: str) -> None:
    """No label, button or figure shortened to "…" (at 800 px "Start analysis" became "Start …")."""
    cut = page.evaluate(CUT_TEXT_JS)
    assert cut == [], f"text cut short on {where}: {cut}"


CONTRAST_JS = """(selector) => {
  // WCAG contrast of each matching element's text against what is behind it (translucent layers composited
  // over the app's background), the lowest
  const rgba = (c) => { const m = c.match(/[\\d.]+/g).map(Number);  // rgb()/rgba(), or color(srgb …) in 0-1
    const k = c.startsWith("color(") ? 255 : 1; return [m[0] * k, m[1] * k, m[2] * k, m.length > 3 ? m[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const behind = (el) => { const layers = []; for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor); if (c[3] > 0) layers.push(c); if (c[3] >= 1) break; }
    let out = [255, 255, 255];
    for (const [r, g, b, a] of layers.reverse()) out = [r * a + out[0] * (1 - a), g * a + out[1] * (1 - a), b * a + out[2] * (1 - a)];
    return out; };
  const ratios = [...document.querySelectorAll(selector)].map((el) => {
    const fg = lum(rgba(getComputedStyle(el).color)), bg = lum(behind(el));
    return (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05); });
  return ratios.length ? Math.min(...ratios) : null;
}"""


def _first_visit_step(browser, url: str, width: int, scheme: str) -> None:
    """A new user's first page (no run anywhere yet): the team's flow, readable in this theme, and one action."""
    context = browser.new_context(viewport={"width": width, "height": 1000}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(HANG_MS)
    _open(page, url, "/", "Run an analysis")
    page.get_by_text("Meet the team").wait_for()
    page.get_by_role("button", name="Run an example").wait_for()
    page.locator(".ta-flow-box span").first.wait_for()
    for selector in (".ta-flow-box span", ".ta-flow-box b"):
        lowest = page.evaluate(CONTRAST_JS, selector)
        assert lowest is not None and lowest >= 3.0, f"{selector} reads at contrast {lowest} in {scheme}"
    _nothing_cut(page, f"the first visit at {width} px")
    _shot(page, "1-first-visit", width, scheme)
    context.close()


def _fake_llm_env(llm) -> dict[str, str]:
    """The live app's model: the fake server, with a read timeout far longer than any hold."""
    return {"TRADINGAGENTS_LLM_PROVIDER": "openai_compatible", "TRADINGAGENTS_BACKEND_URL": llm.base_url,
            "TRADINGAGENTS_QUICK_THINK_LLM": "fake-quick", "TRADINGAGENTS_DEEP_THINK_LLM": "fake-deep",
            "TRADINGAGENTS_LLM_TIMEOUT": "3600"}


def _reports_text(body: dict) -> bool:
    """A streamed request that writes an analyst's report (its tool results are in)."""
    return bool(body.get("stream")) and any(m.get("role") == "tool" for m in body.get("messages") or [])


def _live_box(page, cond_js: str, arg) -> list[str]:
    """Wait until the live-text panel satisfies ``cond_js(agent, text, arg)``; return [agent, text]."""
    page.wait_for_function(
        "([arg]) => { const obs = (" + LIVE_TEXT_JS + ")(); if (!obs || !obs[1].trim()"
        " || obs[1].includes('waiting for the model')) return false; return (" + cond_js + ")(obs[0], obs[1], arg); }",
        arg=[arg], timeout=HANG_MS)
    return page.evaluate(LIVE_TEXT_JS)


def _live_text_step(browser, url: str, llm, width: int, scheme: str, date: str) -> None:
    """A run in progress: the current agent's text grows in its panel while the run goes on; then it ends.

    The fake server holds the Market Analyst's streamed report after 3 and after 7 events: the page is
    looked at during each hold, so the second look must show the first look's text and more of it."""
    from tests.fake_openai import Fault

    gate = threading.Semaphore(0)
    llm.inject(Fault.hold_stream(3, 7, gate=gate, when=_reports_text))
    context = browser.new_context(viewport={"width": width, "height": 1000}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(HANG_MS)
    form = {"ticker": TICKER, "date": date, "analysts": ["market"], "debate_rounds": 1, "risk_rounds": 1}
    _open(page, url, "/?prefill=" + quote(json.dumps(form)), "Run an analysis")
    page.get_by_role("button", name="Start analysis").wait_for()
    # as a presenter would, Start once the prefilled form is drawn and the script is idle (a Start clicked
    # while the script still runs can leave the form's fields blank once the run shows)
    page.wait_for_function("(t) => document.querySelector('input[aria-label=\"Ticker\"]')?.value === t",
                           arg=TICKER)
    wait_idle(page, timeout=HANG_MS)
    start_run(page)
    try:
        agent, first = _live_box(page, "(agent, text) => true", None)  # held after 3 events
        assert page.get_by_text(f"{TICKER} as of {date} — finished").count() == 0, "the run was still going"
        gate.release()  # on to the second hold
        _, later = _live_box(page, "(agent, text, [a, t]) => agent === a && text.length > t.length", [agent, first])
        assert later.startswith(first.rstrip()[:40]), (first, later)
        assert page.get_by_text(f"{TICKER} as of {date} — finished").count() == 0, "the run was still going"
        _nothing_cut(page, f"the live run at {width} px")
        _shot(page, "2b-live-text", width, scheme)
    finally:
        gate.release()
        gate.release()  # whatever happened above, the stream goes on to its end
    assert wait_rating(page, TICKER, date, timeout=HANG_MS) in {"Buy", "Overweight", "Hold", "Underweight", "Sell"}
    context.close()


def test_demo_script_at_two_widths_in_both_themes(ta_home, tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as llm, \
            streamlit_server(ta_home, log_path=ARTIFACTS / "demo-streamlit.log") as url, \
            streamlit_server(tmp_path / "live-home", log_path=ARTIFACTS / "demo-live-streamlit.log",
                             extra_env=_fake_llm_env(llm)) as live_url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            ratings: list[str] = []
            for width, scheme in COMBOS:  # 1. the first visit, on the second app before it has run anything
                _first_visit_step(browser, live_url, width, scheme)
            for n, (width, scheme) in enumerate(COMBOS):
                context = browser.new_context(viewport={"width": width, "height": 1000}, color_scheme=scheme,
                                              accept_downloads=True)
                page = context.new_page()
                page.set_default_timeout(HANG_MS)

                # the app follows the browser's light/dark preference
                _open(page, url, "/", "Run an analysis")
                page.get_by_role("button", name="Start analysis").wait_for()
                bg = page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]'))"
                                   ".backgroundColor")
                assert bg == BACKGROUND[scheme], (scheme, bg)
                _nothing_cut(page, f"the Run page at {width} px")

                # 2. the example run: two offline analyses a month apart the first time (the later steps
                # compare them), one more on its own date in each later pass; then the live text of a run
                # in progress on the paced server
                for date in ((FIRST, SECOND) if n == 0 else (EXTRA_DATES[n - 1],)):
                    fill_run_form(page, TICKER, date)
                    start_run(page)
                    rating = wait_rating(page, TICKER, date, timeout=HANG_MS)
                    assert rating in {"Buy", "Overweight", "Hold", "Underweight", "Sell"}
                    if n == 0:
                        ratings.append(rating)
                _nothing_cut(page, f"the finished run at {width} px")
                _shot(page, "2-example-run", width, scheme)
                _live_text_step(browser, live_url, llm, width, scheme, LIVE_DATES[n])

                # 3. battle view: sides, verdict pinned beside the pane, replay plays and follows the newest
                _open(page, url, f"/debates?ticker={TICKER}&date={SECOND}", "Debates")
                page.locator('.ta-turn-head[data-side="left"][data-role="bull"]').first.wait_for()
                page.locator('.ta-turn-head[data-side="right"][data-role="bear"]').first.wait_for()
                page.locator('.ta-turn-head[data-side="center"][data-role="neutral"]').first.wait_for()
                page.locator(".ta-answers").first.wait_for()
                _nothing_cut(page, f"the battle view at {width} px")
                lowest = page.evaluate(CONTRAST_JS, '[class*="ta-who-"]')
                assert lowest is not None and lowest >= 3.0, f"a speaker's name reads at contrast {lowest} in {scheme}"
                _shot(page, "3-battle", width, scheme)
                page.locator('[data-testid="stButtonGroup"]').get_by_text("Replay", exact=True).click()
                page.get_by_text("Turn 1 of").wait_for()
                page.get_by_role("button", name="Play").click()
                page.get_by_text("Turn 3 of").first.wait_for()
                newest = page.locator('[data-testid="stChatMessage"]').last
                pane = page.locator('[class*="st-key-ta-battle-"]').last
                nb, pb = newest.bounding_box(), pane.bounding_box()
                assert nb and pb and nb["y"] < pb["y"] + pb["height"] and nb["y"] + nb["height"] > pb["y"], \
                    "the newest turn is scrolled into the battle pane"
                _shot(page, "4-replay", width, scheme)
                page.get_by_role("button", name="End").click()
                page.get_by_text("Portfolio Manager — verdict", exact=True).wait_for()
                assert page.get_by_role("button", name="Next").is_disabled()
                verdict = page.locator('[class*="st-key-ta-verdict-"]').first
                assert verdict.is_visible()
                _no_sideways_scroll(page, width)

                # 4. compare the two runs: the ladder ends with each run's saved rating
                ab = f"?a={quote(TICKER + '|' + FIRST)}&b={quote(TICKER + '|' + SECOND)}"
                _open(page, url, "/compare" + ab, "Compare runs")
                ladder = page.locator('[data-testid="ta-ladder"]')
                ladder.wait_for()
                pills = ladder.locator("[data-rating]")
                shown = [pills.nth(i).get_attribute("data-rating") for i in range(pills.count())]
                assert shown[-2:] == ratings, (shown, ratings)
                _nothing_cut(page, f"the Compare page at {width} px")
                _shot(page, "5-compare", width, scheme)
                _no_sideways_scroll(page, width)

                # 5. History and a PDF download
                _open(page, url, "/history", "History")
                page.get_by_role("button", name="PDF").wait_for()
                with page.expect_download() as dl:
                    page.get_by_role("button", name="PDF").click()
                pdf = tmp_path / f"report-{n}.pdf"
                dl.value.save_as(pdf)
                assert pdf.read_bytes().startswith(b"%PDF-") and pdf.stat().st_size > 5_000
                _nothing_cut(page, f"the History page at {width} px")
                _shot(page, "6-history-pdf", width, scheme)
                _no_sideways_scroll(page, width)

                # 6. the Memory log after settling: the first decision has its alpha
                _open(page, url, "/memory_log", "Memory log")
                page.get_by_text("alpha").first.wait_for()
                page.get_by_text(FIRST).first.wait_for(state="attached")  # the settled entry (or its row)
                _nothing_cut(page, f"the Memory log at {width} px")
                _shot(page, "7-memory-log", width, scheme)
                context.close()
        finally:
            browser.close()
