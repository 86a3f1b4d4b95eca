"""Regenerate docs/screenshots/{run_live,debates,memory_log,memories}.png from the real app.

    .venv/bin/python docs/make_screenshots.py

Starts `streamlit run app.py` with a temporary home (offline engine, synthetic demo data), runs four
monthly analyses of NVDA in headless Debian Chromium, and captures each page; ``run_live.png``
is a run in progress through a local fake OpenAI-compatible server that answers in 0.6 s.

``run.png`` (the README's picture of the Run page) and the demo walk's screenshots
(``demo-<n>-<step>-1440-light.png``: first visit, the live run at presenter pace, the decision card, the PDF
handout's summary page, battle view, replay, presentation mode, Compare, History, Memory log, Watchlist,
Backtest) are written by the browser test that walks the demo:
``UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest tests/browser/test_demo_walk.py`` (without the
variable they go to test-artifacts/screenshots/, so `make test` changes no committed file; the 800-px and dark
ones always go there).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.browser.harness import (  # noqa: E402
    chromium,
    fill_run_form,
    goto_page,
    start_run,
    streamlit_server,
    wait_rating,
)

OUT = ROOT / "docs" / "screenshots"
TICKER = "NVDA"
DATES = ("2024-03-08", "2024-04-10", "2024-05-10", "2024-06-10")


def _settle(page, seconds: float = 1.5) -> None:
    """Let charts finish drawing before the capture."""
    time.sleep(seconds)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ta_shots_") as tmp:
        with streamlit_server(Path(tmp)) as url, chromium(viewport=(1440, 1500)) as page:
            page.goto(url + "/")
            page.get_by_role("button", name="Start analysis").wait_for()
            for date in DATES:
                fill_run_form(page, TICKER, date)
                start_run(page)
                wait_rating(page, TICKER, date)

            goto_page(page, "Debates")
            page.get_by_text("Portfolio Manager — verdict").wait_for()
            _settle(page)
            page.screenshot(path=str(OUT / "debates.png"))

            goto_page(page, "Memory log")
            page.get_by_text("Cumulative alpha over time").first.wait_for()
            _settle(page, 2.5)
            page.screenshot(path=str(OUT / "memory_log.png"))

            goto_page(page, "Memories")
            page.get_by_text("Normalised score").first.wait_for()
            _settle(page, 2.0)
            page.screenshot(path=str(OUT / "memories.png"))
        _live_shot(Path(tmp) / "live")
    for name in ("run_live", "debates", "memory_log", "memories"):
        print(OUT / f"{name}.png")


def _live_shot(home: Path) -> None:
    """A run in progress (analysts side by side on the timeline), paced by a local fake LLM server."""
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(latency_s=0.6) as llm:
        env = {"TRADINGAGENTS_LLM_PROVIDER": "openai_compatible", "TRADINGAGENTS_BACKEND_URL": llm.base_url}
        with streamlit_server(home, extra_env=env) as url, chromium(viewport=(1440, 1300)) as page:
            page.goto(url + "/")
            page.get_by_role("button", name="Start analysis").wait_for()
            fill_run_form(page, TICKER, DATES[-1])
            start_run(page)
            page.locator('.ta-agent.done[data-agent="Bear Researcher"]').wait_for(timeout=90_000)
            page.get_by_role("tab", name="Timeline").click()
            time.sleep(0.3)
            page.mouse.wheel(0, 450)
            time.sleep(0.4)
            page.screenshot(path=str(OUT / "run_live.png"))


if __name__ == "__main__":
    main()
