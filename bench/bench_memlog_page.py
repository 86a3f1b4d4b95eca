"""The Memory log page with 20,000 entries (``TA_BENCH_MEMLOG_ENTRIES`` to change: the issue's goal is at
1,000,000) in headless Chromium, on a fresh server each time.

The home holds bench_pages' 20,000-entry log (three in four settled, 40 tickers). For each of
``FRESH_SERVERS`` new app servers: a new browser context opens ``/memory_log`` as a user's first
request, and the bench records

- ``memlog_page_first_paint_s``: navigation start → the first frame drawn with the page's "Memory log"
  heading (the page records it: a MutationObserver sees the heading laid out, and the next
  ``requestAnimationFrame`` callback is the frame that paints it). Playwright noticing the heading comes
  later by its polling and round trips (0.2-0.6 s on a busy machine), which is not the page's time;
- ``memlog_page_settled_s``: navigation start → the last change of the page, once the script is
  idle, the entries' section ("Decisions and reflections") is drawn and nothing has changed for
  ``QUIET_MS`` (a MutationObserver keeps the time of the last change; the quiet wait is not counted);
- ``memlog_page_server_ready_s``: ``streamlit run app.py`` started → its health check answers. A new
  server warms up before it answers (``studio.ui.warm_server``: the Memory log read once, the scripts
  compiled), so the work it moves out of the first page shows here (no goal: a server starts once).

The app's own modules are compiled to bytecode first, as any earlier start of the app leaves them
(``bench.compile_app_bytecode``).

Medians over the fresh servers (``_max_s`` the slowest); goals 2 s each. Wall time on a shared
machine: read them with the load average the bench prints.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench.bench_pages import LOG_ENTRIES

GOALS: dict[str, tuple[str, float]] = {
    "memlog_page_first_paint_s": ("<=", 2.0),
    "memlog_page_settled_s": ("<=", 2.0),
}

FRESH_SERVERS = 3
# The goal is at 1,000,000 entries (~1.1 GB of log); the bench's default home holds 20,000.
ENTRIES = int(os.environ.get("TA_BENCH_MEMLOG_ENTRIES") or LOG_ENTRIES)
QUIET_MS = 1000

HEADING = "Memory log"

_OBSERVE_JS = """(heading) => {
  window.__taLastChange = performance.now();
  window.__taHeadPaint = null;
  let seen = false;
  new MutationObserver(() => {
    window.__taLastChange = performance.now();
    if (seen) return;
    for (const h of document.querySelectorAll('[data-testid="stMain"] h1')) {
      if (h.textContent.trim() === heading && h.getBoundingClientRect().height > 0) {
        seen = true;
        requestAnimationFrame(() => { window.__taHeadPaint = performance.now(); });
        break;
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
}"""


def _one(url: str, browser) -> tuple[float, float]:
    from tests.browser.harness import wait_idle

    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    try:
        page = context.new_page()
        page.add_init_script(f"({_OBSERVE_JS})({json.dumps(HEADING)})")
        page.goto(url + "/memory_log", wait_until="commit")
        page.wait_for_function("() => window.__taHeadPaint !== null", timeout=300_000)
        first = page.evaluate("() => window.__taHeadPaint") / 1000  # ms since navigation start
        page.get_by_text("Decisions and reflections").first.wait_for(state="visible", timeout=300_000)
        while True:
            wait_idle(page)
            quiet = page.evaluate("() => performance.now() - window.__taLastChange")
            if quiet >= QUIET_MS:
                break
            time.sleep((QUIET_MS - quiet) / 1000 + 0.05)
        last = page.evaluate("() => window.__taLastChange") / 1000  # ms since navigation start
        return first, last
    finally:
        context.close()


def run() -> dict:
    from bench import compile_app_bytecode
    from bench.bench_pages import _write_log
    from tests.browser.harness import chromium, streamlit_server

    compile_app_bytecode()
    firsts, settles, readies = [], [], []
    with tempfile.TemporaryDirectory(prefix="ta_bench_memlog_page_") as tmp:
        home = Path(tmp)
        rng = random.Random(20240510)
        vocab = [f"w{i}" for i in range(5000)]
        _write_log(home / "memory" / "trading_memory.md", rng, vocab, ENTRIES)
        with chromium() as page:
            browser = page.context.browser
            for i in range(FRESH_SERVERS):
                started = time.monotonic()
                with streamlit_server(home, log_path=home / f"server{i}.log") as url:
                    readies.append(time.monotonic() - started)
                    first, last = _one(url, browser)
                firsts.append(first)
                settles.append(last)
    return {
        "memlog_page_first_paint_s": round(statistics.median(firsts), 3),
        "memlog_page_settled_s": round(statistics.median(settles), 3),
        "memlog_page_first_paint_max_s": round(max(firsts), 3),
        "memlog_page_settled_max_s": round(max(settles), 3),
        "memlog_page_server_ready_s": round(statistics.median(readies), 3),
        "memlog_page_entries": ENTRIES,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
