"""The whole product in 简体中文: every page opened with ``?lang=zh`` in headless Chromium shows no English
a reader would meet (tickers, numbers, units and product names aside), on a home whose runs, settled
decisions, lessons, watchlist batch and backtest were all made in Chinese by the CLI
(``TRADINGAGENTS_UI_LANGUAGE=zh``, ``TRADINGAGENTS_OUTPUT_LANGUAGE=Chinese``); the same pages without
``?lang`` are in English. Waits are for conditions; the timeout only catches a hang.
"""

from __future__ import annotations

import getpass
import os
import subprocess
import sys

import pytest

from tests.browser.harness import ARTIFACTS, HANG_MS, ROOT, chromium, settled, streamlit_server
from tests.browser.i18n_scan import ALLOWED, english_words

pytestmark = pytest.mark.browser

PAGES = ("/", "/debates", "/memory_log", "/memories", "/history", "/compare", "/watchlist", "/backtest", "/book",
         "/schedules")
CJK = "[\u4e00-\u9fff]"


def _cli(home, *args: str) -> str:
    env = {**os.environ, "TRADINGAGENTS_HOME": str(home), "TRADINGAGENTS_UI_LANGUAGE": "zh",
           "TRADINGAGENTS_OUTPUT_LANGUAGE": "Chinese"}
    done = subprocess.run([sys.executable, "-m", "tradingagents", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=HANG_MS / 1000, check=False)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stderr[-2000:]}"
    return done.stdout


def _seed(home) -> None:
    _cli(home, "NVDA", "2024-05-10", "-q")
    _cli(home, "NVDA", "2024-06-10", "-q")  # settles the first decision: a reflection and lessons
    _cli(home, "AAPL", "2024-05-10", "-q")
    _cli(home, "settle")
    _cli(home, "batch", "NVDA,AAPL,MSFT", "2024-06-10", "-q")
    _cli(home, "backtest", "NVDA", "--start", "2024-05-01", "--end", "2024-05-20", "--every", "5", "--quiet")
    # the desk: a book, a job (named in Chinese, in UTC) and its digest, made on the batch's session
    (home / "book.csv").write_text("ticker,shares,cost_basis\nAAPL,100,150\n", encoding="utf-8")
    _cli(home, "book", "import", str(home / "book.csv"), "--cash", "100000")
    _cli(home, "schedule", "add", "早盘", "--watchlist", "NVDA,AAPL", "--at", "07:30", "--tz", "UTC")
    _cli(home, "scheduler", "--once", "--now", "2024-06-11T07:31+00:00")


def test_every_page_in_chinese_shows_no_english_and_english_stays(ta_home):
    _seed(ta_home)
    found: dict[str, list[str]] = {}
    with streamlit_server(ta_home, log_path=ARTIFACTS / "i18n-walk-streamlit.log") as url, chromium() as page:
        for path in PAGES:
            page.goto(url + path + "?lang=zh")
            page.get_by_role("heading").first.wait_for()
            page.wait_for_function(f"() => /{CJK}/.test(document.querySelector('h1')?.innerText || '')",
                                   timeout=HANG_MS)
            settled(page)
            page.screenshot(path=str(ARTIFACTS / "screenshots" / f"zh{path.replace('/', '_') or '_run'}.png"),
                            full_page=True)
            words = english_words(page, ALLOWED | {getpass.getuser().lower()})  # "run by": a user's name
            if words:
                found[path] = words
        assert not found, f"English on the Chinese pages: {found}"
        # the language stays with the session: the English pages come back only when asked for
        page.goto(url + "/history?lang=en")
        page.get_by_role("heading", name="History").first.wait_for()
        for path, heading in (("/", "Run an analysis"), ("/memory_log", "Memory log"), ("/backtest", "Backtest")):
            page.goto(url + path)
            page.get_by_role("heading", name=heading).first.wait_for()
