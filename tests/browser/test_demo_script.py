"""The live text of a run through a real model client, in headless Chromium: the Run page's live box while the
model (the fake OpenAI-compatible server, through the real langchain-openai client) holds the Market Analyst's
streamed report at two points. The test looks at the page while the stream is held, releases it, and looks
again, so "the text grew while the run went on" is a condition the page reaches, on any machine at any pace.

The stakeholder demo walk itself (first visit, presenter pace, decision card, PDF, battle view, Compare,
History, Memory log, Watchlist, Backtest at 1440 and 800 px in both themes) is tests/browser/test_demo_walk.py;
this file keeps the one step it cannot take on the offline engine (a model's own stream), at one width.

Nothing here judges the machine's speed: every wait is for a condition, with a timeout that only catches
a hang.
"""

from __future__ import annotations

import json
import threading
from urllib.parse import quote

import pytest

from tests.browser.harness import (  # noqa: F401 - CUT_TEXT_JS: tests/browser/test_narrow_pages.py imports it here
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    CUT_TEXT_JS,
    HANG_MS,
    new_page,
    shot,
    start_run,
    streamlit_server,
    wait_idle,
    wait_rating,
)

pytestmark = pytest.mark.browser

TICKER = "NVDA"
LIVE_TEXT_JS = """() => {
  const head = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .find((e) => e.innerText.trim().endsWith('— live text'));
  const box = head && head.closest('[data-testid="stElementContainer"]').nextElementSibling;
  return box ? [head.innerText.replace('— live text', '').trim(), box.innerText] : null;
}"""


def _nothing_cut(page, where: str) -> None:
    """No label, button or figure shortened to "…" (at 800 px "Start analysis" became "Start …")."""
    cut = page.evaluate(CUT_TEXT_JS)
    assert cut == [], f"text cut short on {where}: {cut}"


def _fake_llm_env(llm) -> dict[str, str]:
    """The live app's model: the fake server, with a read timeout far longer than any hold."""
    return {"TRADINGAGENTS_LLM_PROVIDER": "openai_compatible", "TRADINGAGENTS_BACKEND_URL": llm.base_url,
            "TRADINGAGENTS_QUICK_THINK_LLM": "fake-quick", "TRADINGAGENTS_DEEP_THINK_LLM": "fake-deep",
            "TRADINGAGENTS_LLM_TIMEOUT": "3600"}


def _reports_text(body: dict) -> bool:
    """A streamed request that writes the Market Analyst's report: its fetched prices in its prompt (prefetch),
    or answered by its tools (the analysts' tool loop, the default)."""
    messages = body.get("messages") or []
    system = str((messages or [{}])[0].get("content") or "")
    answered = any(m.get("role") == "tool" and "Stock data for" in str(m.get("content")) for m in messages)
    return bool(body.get("stream")) and system.startswith("You are the Market Analyst") and (
        "<get_stock_data>" in system or answered)


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
    page = new_page(browser, width, 1000, scheme)
    form = {"ticker": TICKER, "date": date, "analysts": ["market"], "debate_rounds": 1, "risk_rounds": 1}
    page.goto(url + "/?prefill=" + quote(json.dumps(form)))
    page.get_by_role("heading", name="Run an analysis").first.wait_for()
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
        shot(page, f"live-text-model-{width}-{scheme}", folder=ARTIFACTS / "screenshots")
    finally:
        gate.release()
        gate.release()  # whatever happened above, the stream goes on to its end
    assert wait_rating(page, TICKER, date, timeout=HANG_MS) in {"Buy", "Overweight", "Hold", "Underweight", "Sell"}
    page.context.close()


def test_live_text_of_a_model_stream_grows_in_its_box(ta_home):
    from playwright.sync_api import sync_playwright

    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer() as llm, \
            streamlit_server(ta_home, log_path=ARTIFACTS / "demo-live-streamlit.log",
                             extra_env=_fake_llm_env(llm)) as live_url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            _live_text_step(browser, live_url, llm, 1440, "dark", "2024-06-10")
        finally:
            browser.close()
