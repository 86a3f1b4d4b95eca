"""The Memory log, Memories and Backtest pages in Chromium with ``?lang=zh`` on a seeded home (settled and
pending log entries with charts, Chinese lessons with a query and a track record, a finished backtest):
no English a Chinese reader would meet on the page, other than tickers, numbers and product names.

The scan covers the whole page (main area, sidebar) and the browser tab's title. Left out, by a named
selector: the log entries' decision and reflection bodies (``.ta-model-text``), which this seed writes
by hand in English; ``tests/browser/test_i18n_walk.py`` scans entries the offline engine wrote in
Chinese.
"""

from __future__ import annotations

import pytest

from tests.app.test_i18n_memory import seed_home
from tests.browser.harness import ARTIFACTS, HANG_MS, chromium, streamlit_server, wait_idle
from tests.browser.i18n_scan import ALLOWED, english_words

pytestmark = pytest.mark.browser

MINE = ALLOWED | frozenset({
    "alpha",  # 超额收益(alpha): the contract's term keeps the English word in brackets
    "bps",  # 成本 bps: basis points, as the engine's report names them
    "KDJ", "ZMR",  # the baseline strategies' names (MACD, RSI, SMA are in ALLOWED)
    "CR", "ARR", "SR", "MDD",  # the paper's metric abbreviations, explained in Chinese under the table
})
"""This test's additions to ``i18n_scan.ALLOWED`` (it is not edited): abbreviations and names a Chinese
reader sees in the TradingAgents paper too."""

HIDE_JS = """() => {
  const blank = (sel, keep) => { for (const el of document.querySelectorAll(sel)) if (!keep || !keep(el)) {
    el.textContent = ''; for (const a of ['title', 'aria-label', 'placeholder']) el.removeAttribute(a); } };
  // the seed's hand-written English log entries (the walk test scans engine-written Chinese ones)
  blank('.ta-model-text');
  // Material icons are drawn from their ligature names ("balance", "north_east"): glyphs, not words
  blank('[data-testid="stIconMaterial"], span[role="img"][translate="no"]');
  // Streamlit's own controls that no option of its API names in another language: the hover toolbars of
  // tables and charts (Search, Download, Fullscreen, Show/hide columns), the number inputs' steppers, the
  // date pickers' segment names, the help icons' "Help for …", the select boxes' "Open" button, the progress
  // bars' "progress", the Fullscreen button Streamlit adds to Plotly's mode bar
  blank('[data-testid="stElementToolbar"]');
  blank('[data-testid="stNumberInputStepDown"], [data-testid="stNumberInputStepUp"]');
  for (const el of document.querySelectorAll('[data-testid="stDateInput"] [aria-label], [data-testid="stTooltipHoverTarget"], [data-testid="stTooltipIcon"] [aria-label]'))
    el.removeAttribute('aria-label');
  for (const el of document.querySelectorAll('button[aria-haspopup="listbox"], [role="progressbar"]'))
    el.removeAttribute('aria-label');
  blank('.modebar-btn[data-title="Fullscreen"]');
  // a file path is data (the backtest's folder, named from the home folder: backtests/<id>), like a ticker
  blank('code', (el) => !el.textContent.includes('/'));
}"""


def main_area_words(page) -> list[str]:
    """``english_words`` of the whole page and its title, without what ``HIDE_JS`` leaves out. The pointer is
    moved off the page's content first: a table drawn late under it (a busy machine) showed Streamlit's hover
    toolbar after ``HIDE_JS`` had blanked the toolbars and before the words were read."""
    page.mouse.move(0, 0)
    page.evaluate(HIDE_JS)
    return english_words(page, MINE)


def _open(page, url: str, path: str, heading: str) -> None:
    page.goto(f"{url}/{path}")
    page.get_by_role("heading", name=heading).first.wait_for(timeout=HANG_MS)
    wait_idle(page)


def _settle(page) -> None:
    """Plotly draws after the script: wait for every chart's SVG, then for the page to be idle."""
    wait_idle(page)
    page.wait_for_function("() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
                           ".every((c) => c.querySelector('svg.main-svg'))", timeout=HANG_MS)
    page.evaluate("() => document.fonts.ready")


def test_memory_pages_show_no_english_in_chinese(ta_home):
    backtest_id = seed_home(ta_home)
    found: dict[str, list[str]] = {}
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-i18n-memory.log") as url, chromium() as page:
        _open(page, url, "memory_log?lang=zh", "记忆日志")
        page.get_by_text("决策与复盘").first.wait_for(timeout=HANG_MS)
        page.locator("[data-testid='stPlotlyChart'] svg.main-svg").first.wait_for(timeout=HANG_MS)
        _settle(page)  # a click while the script still reruns lands on entries that are then drawn anew (closed)
        page.locator("details.ta-entry summary").get_by_text("2024-05-10 · NVDA · 买入").first.click()  # open one
        page.locator("details.ta-entry[open]").get_by_text("决策", exact=True).wait_for(timeout=HANG_MS)
        assert page.locator("details.ta-entry[open]").count() == 1
        _settle(page)
        page.screenshot(path=str(ARTIFACTS / "i18n-memory_log-zh.png"), full_page=True)
        found["memory_log"] = main_area_words(page)
        page.reload()
        page.get_by_role("heading", name="记忆日志").first.wait_for(timeout=HANG_MS)
        page.get_by_text("各评级的命中率", exact=True).click()
        page.get_by_text("命中按复盘所用的同一规则").wait_for(timeout=HANG_MS)
        _settle(page)
        found["memory_log hit rate"] = main_area_words(page)

        _open(page, url, "memories?lang=zh&memory=trader_memory", "记忆")
        page.get_by_text("利率持续上升之际").first.click()
        page.get_by_text("个匹配词").first.wait_for(timeout=HANG_MS)
        _settle(page)
        page.screenshot(path=str(ARTIFACTS / "i18n-memories-zh.png"), full_page=True)
        found["memories query"] = main_area_words(page)
        page.reload()
        page.get_by_role("heading", name="记忆").first.wait_for(timeout=HANG_MS)
        page.get_by_role("tab", name="表现记录").click()
        page.get_by_role("button", name="停用这条经验教训").wait_for(timeout=HANG_MS)
        _settle(page)
        found["memories track record"] = main_area_words(page)

        _open(page, url, f"backtest?lang=zh&bt={backtest_id}", "回测")
        page.get_by_text("过往回测").wait_for(timeout=HANG_MS)
        _settle(page)
        page.screenshot(path=str(ARTIFACTS / "i18n-backtest-zh.png"), full_page=True)
        found["backtest"] = main_area_words(page)
    assert found == dict.fromkeys(found, []), found
