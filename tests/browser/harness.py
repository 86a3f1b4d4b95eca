"""Drive the real app: `streamlit run app.py` on a free port and headless Debian Chromium (Playwright).

Shared by the browser test, the app bench and ``docs/make_screenshots.py``. Never downloads a
browser: Chromium is ``/usr/bin/chromium`` (``make chromium`` installs it).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = ROOT / "test-artifacts"
HANG_MS = int(os.environ.get("TA_BROWSER_HANG_MS", "300000"))
"""How long a wait for the page may take before it counts as a hang (TA_BROWSER_HANG_MS shortens it while a
test is being written). Tests wait for conditions, never for a moment, and never judge the machine's pace: CI's shared two-core machine can be slow at times."""
SETTLED_JS = """async () => { await document.fonts.ready;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))); return true; }"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=1) as resp:  # noqa: S310 - loopback only
            return resp.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def streamlit_server(home: Path, *, log_path: Path | None = None, timeout: float = HANG_MS / 1000,
                     extra_env: dict[str, str] | None = None, extra_args: Sequence[str] = (),
                     port: int | None = None) -> Iterator[str]:
    """Start the app with ``TRADINGAGENTS_HOME=home``; yield its base URL once /_stcore/health is OK.

    ``extra_args``: more ``streamlit run`` flags (e.g. ``--secrets.files`` of a temporary secrets file);
    ``port``: a port chosen beforehand (a sign-in redirect URI names it), else a free one."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_")}
    env.update({"TRADINGAGENTS_HOME": str(home), "PYTHONUNBUFFERED": "1"})
    env.update(extra_env or {})
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
        "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false", *extra_args,
    ]  # no other flag: the app runs on .streamlit/config.toml as a user's `streamlit run app.py` does
    log_path = log_path or (home / "streamlit.log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while not _healthy(url):
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {proc.returncode}: {log_path.read_text()[-2000:]}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"streamlit not healthy after {timeout}s: {log_path.read_text()[-2000:]}")
                time.sleep(0.1)
            yield url
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(5)


@contextlib.contextmanager
def chromium(viewport: tuple[int, int] = (1440, 1000)) -> Iterator[object]:
    """A Playwright page in headless Debian Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
            page = context.new_page()
            page.set_default_timeout(HANG_MS)
            yield page
        finally:
            browser.close()


# ---------------------------------------------------------------------------------------------
# page actions (what a user does)
# ---------------------------------------------------------------------------------------------
def wait_idle(page, timeout: float = HANG_MS) -> None:
    """Wait until Streamlit is not running the script (no 'Running…' status widget)."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"] [data-testid=\"stStatusWidgetRunningIcon\"]')"
        " && document.querySelector('[data-testid=\"stApp\"]') !== null",
        timeout=timeout,
    )


def app_stop_buttons(page):
    """The app's Stop buttons, in the page's own blocks: not the "Stop" that Streamlit's status widget in the
    header shows while a script run lasts over half a second (a busy machine)."""
    return page.locator('[data-testid="stMainBlockContainer"]').get_by_role("button", name="Stop")


def open_app(page, url: str, path: str = "") -> None:
    page.goto(url + "/" + path.lstrip("/"))
    page.get_by_role("heading").first.wait_for()


def fill_run_form(page, ticker: str, date: str) -> None:
    """Type the ticker and the date (YYYY-MM-DD) into the Run form (opening it first, as a person would, when
    a run on show keeps it folded into its "New analysis" line)."""
    box = page.get_by_label("Ticker")
    wait_idle(page)
    if not box.is_visible() and page.locator(".st-key-form_folded summary").count():
        page.locator(".st-key-form_folded summary").click()
        box.wait_for()
    box.fill(ticker)
    year, month, day = date.split("-")
    for part, value in (("year", year), ("month", month), ("day", day)):
        seg = page.get_by_role("spinbutton", name=f"{part}, Analysis date")
        seg.click()
        page.keyboard.type(value)
    page.get_by_role("spinbutton", name="day, Analysis date").wait_for()
    page.wait_for_function(
        "([y, m, d]) => {const g = (t) => document.querySelector(`[aria-label=\"${t}, Analysis date\"]`);"
        " return g('year') && +g('year').getAttribute('aria-valuenow') === y"
        " && +g('month').getAttribute('aria-valuenow') === m && +g('day').getAttribute('aria-valuenow') === d;}",
        arg=[int(year), int(month), int(day)],
    )


def start_run(page) -> float:
    """Click Start; return the click time (time.time())."""
    button = page.get_by_role("button", name="Start analysis")
    t = time.time()
    button.click()
    return t


def settled(page) -> None:
    """The script is idle, every widget is drawn (no placeholder skeleton left: a fresh server loads each
    widget's code the first time a page uses it), the fonts are loaded and two frames have been painted
    since (before a look at sizes or text, or a screenshot)."""
    wait_idle(page)
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')", timeout=HANG_MS)
    page.evaluate(SETTLED_JS)


def wait_rating(page, ticker: str, date: str, timeout: float = HANG_MS) -> str:
    """Wait until the run of ``ticker`` on ``date`` has finished and its rating badge shows."""
    page.get_by_text(f"{ticker} as of {date} — finished").wait_for(timeout=timeout)
    badge = page.locator("span.ta-rating").first
    badge.wait_for(state="visible", timeout=timeout)
    return badge.get_attribute("data-rating") or ""


DONE_OBSERVER_JS = """
([ticker, date]) => {
  // window.__taDone: when (epoch seconds) the page first showed the run of ticker/date finished with its
  // rating badge. One observer per page; each call re-arms it for a new ticker/date.
  window.__taDone = null;
  window.__taWant = `${ticker} as of ${date} — finished`;
  if (window.__taDoneObserver) return;
  const look = () => {
    if (window.__taDone === null && document.querySelector('span.ta-rating')
        && document.body.innerText.includes(window.__taWant)) window.__taDone = Date.now() / 1000;
  };
  window.__taDoneObserver = new MutationObserver(look);
  window.__taDoneObserver.observe(document.body, {subtree: true, childList: true, characterData: true});
}
"""


def goto_page(page, title: str) -> None:
    page.get_by_role("link", name=title).first.click()
    page.get_by_role("heading", name=title).first.wait_for()


LAG_OBSERVER_JS = """
() => {
  // For every node-finish time the page carries (data-finishes), when the page first showed it.
  window.__taSeen = {};
  const scan = () => {
    const now = Date.now() / 1000;
    document.querySelectorAll('[data-finishes]').forEach(el => {
      (el.getAttribute('data-finishes') || '').split(',').forEach(f => {
        if (f && !(f in window.__taSeen)) window.__taSeen[f] = {finished: parseFloat(f), seen: now};
      });
    });
  };
  new MutationObserver(scan).observe(document.body, {subtree: true, childList: true, attributes: true});
  scan();
}
"""


# ---------------------------------------------------------------------------------------------
# looks shared by the demo walk and the other page tests
# ---------------------------------------------------------------------------------------------
SHOTS = ROOT / "docs" / "screenshots" if os.environ.get("UPDATE_SCREENSHOTS") == "1" else ARTIFACTS / "screenshots"
"""Where a browser test's screenshots go: docs/screenshots/ (committed) only with UPDATE_SCREENSHOTS=1, so a plain
`make test` changes no committed file; else test-artifacts/screenshots/."""

CUT_TEXT_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] *')]
  .filter((e) => e.innerText && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).textOverflow === 'ellipsis')
  .map((e) => e.innerText.slice(0, 60))"""
"""The texts of the main area shortened to "…" (a label, button or figure cut by its box)."""

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
"""The lowest WCAG contrast ratio of the elements matching a selector (None: no such element)."""

BOX_JS = """(el) => { const r = el.getBoundingClientRect();
  return {left: r.left, right: r.right, top: r.top + window.scrollY, bottom: r.bottom + window.scrollY,
          width: r.width, height: r.height}; }"""
"""An element's box in page coordinates (top/bottom as if the page were not scrolled)."""


def new_page(browser, width: int, height: int, scheme: str, *, downloads: bool = False):
    """A page in a fresh context of ``browser`` at ``width``×``height`` in the light or dark preference."""
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme,
                                  accept_downloads=downloads)
    page = context.new_page()
    page.set_default_timeout(HANG_MS)
    return page


def shot(page, name: str, *, full_page: bool = False, folder: Path | None = None) -> Path:
    """A screenshot of the settled page as ``<folder or SHOTS>/<name>.png``."""
    folder = folder or SHOTS
    folder.mkdir(parents=True, exist_ok=True)
    settled(page)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def box_of(locator) -> dict:
    """The locator's element box in page coordinates (see BOX_JS)."""
    return locator.evaluate(BOX_JS)
