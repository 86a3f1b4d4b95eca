"""The Watchlist page under AppTest: saved watchlists, estimate, a live batch whose tiles open the runs."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from studio import watchlist_view as view
from tests.app.apptest_utils import texts
from tradingagents import batch, storage

ROOT = Path(__file__).resolve().parents[2]
PAGE = "pages/watchlist.py"


def _page() -> AppTest:
    if PAGE in (ROOT / "app.py").read_text(encoding="utf-8"):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        at.run()
        at.switch_page(PAGE)
    else:  # until the lead lists it in app.py: the page inside the router, with the shared sidebar
        at = AppTest.from_string(
            "import runpy\nfrom studio import ui\nui.sidebar_settings()\nwith ui.routed():\n"
            f"    runpy.run_path({str(ROOT / PAGE)!r}, run_name='__main__')\n", default_timeout=300)
    return at.run()


def _state(at: AppTest) -> dict[str, str]:
    for el in at.html:
        value = str(el.value)
        if "ta-wl-state" in value:
            return {k: value.split(f'data-{k}="')[1].split('"')[0] for k in ("status", "done", "total")}
    return {}


def test_watchlist_page_runs_a_batch_with_tiles_that_open_the_runs(ta_home):
    at = _page()
    assert not at.exception
    assert "4 tickers · $0.00 · offline engine" in texts(at)  # the offline engine costs nothing, as on the Run page
    at.text_area(key="wl_tickers").input("NVDA, AAPL").run()
    at.text_input(key="wl_name").input("pair").run()
    at.button(key="wl_save").click().run()
    assert storage.list_watchlists() == {"pair": ["NVDA", "AAPL"]}
    at.button(key="wl_start").click().run()
    deadline = time.monotonic() + 300  # only catches a hang
    while _state(at).get("status") != "finished":
        assert time.monotonic() < deadline, texts(at)[:1500]
        time.sleep(0.3)
        at.run()
    assert not at.exception
    tiles = "".join(str(el.value) for el in at.html)
    assert tiles.count('data-status="done"') == 2
    assert 'href="./?ticker=NVDA&amp;date=2024-05-10&amp;lang=en"' in tiles


def test_tiles_show_status_rating_and_cost_and_escape_text():
    ok = batch.TickerOutcome("NVDA", "2024-05-10", status="done", rating="Buy", cost_usd=0.0123)
    bad = batch.TickerOutcome("X<b>", "2024-05-10", status="failed", cost_usd=None, error='"quoted" <oops>')
    html = view.tiles_html([ok, bad])
    assert "Buy" in html and "$0.0123" in html and "./?ticker=NVDA&amp;date=2024-05-10&amp;lang=en" in html
    assert "X&lt;b&gt;" in html and "&lt;oops&gt;" in html and "price unknown" in html
    assert html.count("<a ") == 1  # only a finished run opens


def test_another_browsers_batch_is_watched_but_not_stopped(ta_home, monkeypatch):
    import threading

    from studio.ui import get_registry

    release = threading.Event()

    def run_batch(tickers, date, config, *, max_cost_usd, api_key, on_update, should_stop):
        for t in tickers:
            on_update(batch.TickerOutcome(t, date, status="running"))
        release.wait(30)

    monkeypatch.setattr("tradingagents.batch.run_batch", run_batch)
    get_registry.clear()
    job_id = get_registry().start_batch(["NVDA", "AAPL"], "2024-05-10", {}, owner="another-browser")
    try:
        at = _page()
        assert not at.exception
        assert _state(at) == {"status": "running", "done": "0", "total": "2"}  # anyone may watch
        assert not [b for b in at.button if b.key == "wl_stop"]
        assert "only that browser can stop it" in texts(at)
        assert get_registry().get(job_id).running
    finally:
        release.set()
        get_registry().get(job_id).wait(300)
        get_registry.clear()


def test_someone_elses_running_batch_leaves_the_run_button_alone(ta_home, monkeypatch):
    """Issue 41, point 7: one user's running batch disabled everyone's Run watchlist button."""
    import threading

    from studio.ui import get_registry

    release = threading.Event()

    def slow_batch(tickers, date, config, *, max_cost_usd, api_key, on_update, should_stop):
        for t in tickers:
            on_update(batch.TickerOutcome(t, date, status="running"))
        release.wait(120)

    monkeypatch.setattr("tradingagents.batch.run_batch", slow_batch)
    reg = get_registry()
    theirs = reg.start_batch(["NVDA"], "2024-05-10", {}, owner="someone else")
    try:
        assert reg.get(theirs).running
        at = _page()
        assert not at.button(key="wl_start").disabled
    finally:
        release.set()
        reg.wait(theirs, 60)
