"""The Run page in 简体中文 in a real browser (issue 26) and the agent board in the first screenful
while a run is in progress (issue 25): headless Chromium at 1440×900 opens ``/?lang=zh``, runs an
offline analysis, and finds no English a Chinese reader would meet on the board, the timeline, the
result and the reports (``i18n_scan.english_words``)."""

from __future__ import annotations

import re

import pytest

from tests.browser.harness import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    HANG_MS,
    settled,
    streamlit_server,
    wait_idle,
)
from tests.browser.i18n_scan import ALLOWED, english_words

VIEWPORT = (1440, 900)
DATE = ("2024", "05", "10")  # a Friday the demo market trades: no session note

HIDE_JS = """(selectors) => {
  const hidden = [];
  for (const sel of selectors) for (const el of document.querySelectorAll(sel)) {
    if (el.style.display !== 'none') { el.dataset.taScanHidden = '1'; el.style.display = 'none'; hidden.push(sel); }
  }
  return hidden;
}"""
SHOW_JS = """() => { for (const el of document.querySelectorAll('[data-ta-scan-hidden]')) {
  el.style.display = ''; delete el.dataset.taScanHidden; } }"""

BOARD_TOP_JS = """() => {
  const shown = (el) => el.getClientRects().length > 0;
  const team = [...document.querySelectorAll('.ta-board .ta-team')].find(shown);
  const row = [...document.querySelectorAll('.ta-board .ta-agent')].find(shown);
  if (!team || !row) return null;
  const t = team.getBoundingClientRect(), r = row.getBoundingClientRect();
  return {team_y: t.y, row_bottom: r.y + r.height};
}"""
"""Where the live board's first team heading starts and its first agent row ends, read in one pass: two
separate measurements can straddle a redraw of the board and find the first element gone."""

NOT_MINE: list[str] = []
ENGINE_TEXT: list[str] = []
"""What the offline engine writes (reports, the decision text, the live text): Chinese once the engine
writes output_language "Chinese" (the engine's branch); the app's own words are checked without it."""


STREAMLIT_CHROME = frozenset(w.lower() for w in (
    # Streamlit's own ARIA labels and tooltips, which no page can set (the heading anchors' "Link to heading",
    # the date field's segments and "Choose date", the number field's steppers, the multiselect's "Remove" and
    # "Clear all", a help icon's "Help for …", the navigation's "App pages", the tables' toolbars, the sidebar's
    # collapse button, the progress bar's role name)
    "Link", "heading", "year", "month", "day", "Choose", "date", "Decrement", "Increment", "Remove", "Clear", "all",
    "Open", "Help", "for", "Collapse", "sidebar", "App", "pages", "icon", "option", "Add", "row", "Show", "hide",
    "columns", "Download", "Search", "Fullscreen", "progress",
    # Plotly's tool bar over a chart (its buttons' tooltips: "Download plot as a png", "Zoom", "Pan", "Zoom out",
    # "Autoscale", "Reset axes"), drawn by the charting library itself
    "plot", "Zoom", "Pan", "out", "Autoscale", "Reset", "axes",
))
ICONS = ['[data-testid="stIconMaterial"]', '[data-testid="stExpanderIcon"]', 'span[role="img"][translate="no"]']
"""Material icons are glyphs drawn from a ligature ("play_arrow"): their text is not read, it is a picture."""


def _english(page, hide: list[str]) -> list[str]:
    page.evaluate(HIDE_JS, ICONS + hide)
    try:
        return english_words(page, ALLOWED | STREAMLIT_CHROME)
    finally:
        page.evaluate(SHOW_JS)


def _fill_date(page, label: str) -> None:
    for part, value in zip(("year", "month", "day"), DATE, strict=True):
        seg = page.locator(f'[role="spinbutton"][aria-label$="{label}"]').nth(("year", "month", "day").index(part))
        seg.click()
        page.keyboard.type(value)


@pytest.fixture(scope="module")
def zh_session(tmp_path_factory):
    """One server and one Chinese browser (zh-CN, as a Chinese reader's would be) on /?lang=zh."""
    from playwright.sync_api import sync_playwright

    home = tmp_path_factory.mktemp("ta_home_i18n_run")
    with streamlit_server(home) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]}, locale="zh-CN")
            page = context.new_page()
            page.set_default_timeout(HANG_MS)
            page.goto(url + "/?lang=zh")
            page.get_by_role("heading", name="运行分析").first.wait_for()
            settled(page)
            yield page
        finally:
            browser.close()


def _start(page, presenter: bool) -> None:
    box = page.get_by_label("代码")
    wait_idle(page)
    if not box.is_visible() and page.locator(".st-key-form_folded summary").count():
        page.locator(".st-key-form_folded summary").click()  # a run on show keeps the form folded: open it
        box.wait_for()
    box.fill("NVDA")
    _fill_date(page, "分析日期")
    pace = page.locator('.st-key-form_presenter input[type="checkbox"]')
    if pace.is_checked() != presenter:
        page.get_by_text("演示节奏").click()
    page.get_by_role("button", name="开始分析").click()


def test_the_first_visit_in_chinese_has_no_english(zh_session):
    page = zh_session
    assert page.get_by_text("认识团队").first.is_visible()
    found = _english(page, [])
    assert found == [], " ".join(found)


def test_the_board_is_in_the_first_screenful_during_a_run_and_speaks_chinese(zh_session):
    page = zh_session
    _start(page, presenter=True)  # presenter pace: the offline run lasts long enough to look at
    page.locator(".ta-board .ta-agent.running").first.wait_for()
    page.evaluate("() => window.scrollTo(0, 0)")
    page.evaluate("""async () => { await document.fonts.ready;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); }""")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "i18n_run_live_zh_1440x900.png"))
    # the board's top (its first team heading) and its first agent row are inside the 900-px viewport;
    # measured in one pass over the page, as the live board is redrawn while the run goes on
    box = page.wait_for_function(BOARD_TOP_JS, timeout=HANG_MS).json_value()
    assert 0 <= box["team_y"] < VIEWPORT[1], box
    assert box["row_bottom"] <= VIEWPORT[1], box
    assert page.locator(".st-key-form_folded").count() == 1  # the form folded into one line
    found = _english(page, NOT_MINE + ENGINE_TEXT)
    assert found == [], " ".join(found)
    _stop(page)


def _stop(page) -> None:
    page.get_by_role("button", name="停止").click()
    page.locator('span.ta-run-state[data-status="stopped"]').wait_for(state="attached")
    wait_idle(page)


def _finished_run(page) -> None:
    if page.locator('span.ta-run-state[data-status="finished"]').count():
        return
    if page.locator('span.ta-run-state[data-status="running"]').count():  # a run left going: stop it first
        _stop(page)
    page.get_by_role("button", name="重新运行").or_(page.get_by_role("button", name="继续")).first.wait_for()
    _start(page, presenter=False)
    page.locator('span.ta-run-state[data-status="finished"]').wait_for(state="attached")
    page.locator("span.ta-rating").first.wait_for(state="visible")
    settled(page)
    page.get_by_text("显示运行详情").click()  # the board, the tool calls and the timeline of the run
    page.locator(".ta-board").first.wait_for()
    page.get_by_role("tab", name="时间线").first.click()
    settled(page)


def test_the_finished_run_board_timeline_result_and_past_runs_have_no_english(zh_session):
    page = zh_session
    _finished_run(page)
    assert page.locator("span.ta-rating").first.inner_text() in ("买入", "增持", "持有", "减持", "卖出")
    assert page.get_by_text(re.compile("— 已完成")).first.is_visible()
    page.screenshot(path=str(ARTIFACTS / "i18n_run_result_zh_1440x900.png"), full_page=True)
    found = _english(page, NOT_MINE + ENGINE_TEXT)
    assert found == [], " ".join(found)


def test_the_offline_engines_chinese_reports_have_no_english(zh_session):
    page = zh_session
    _finished_run(page)
    written = page.locator('[class*="st-key-ta-engine-"]').first.inner_text()
    assert re.search("[\u4e00-\u9fff]", written), written[:300]  # the offline engine wrote Chinese
    found = _english(page, NOT_MINE)
    assert found == [], " ".join(found)
