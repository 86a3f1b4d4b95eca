"""Helpers for driving app.py with Streamlit's AppTest (same process, real engine, temp home)."""

from __future__ import annotations

import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = {
    "run": "pages/run.py",
    "debates": "pages/debates.py",
    "memory_log": "pages/memory_log.py",
    "memories": "pages/memories.py",
    "history": "pages/history.py",
    "compare": "pages/compare.py",
    "backtest": "pages/backtest.py",
    "watchlist": "pages/watchlist.py",
    "book": "pages/book.py",
    "schedules": "pages/schedules.py",
}


def new_app(page: str = "run", timeout: float = 300) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    if page != "run":
        at.switch_page(PAGES[page]).run()
    return at


def texts(at: AppTest) -> str:
    """All visible text of markdown, captions, alerts, html and headers, joined."""
    parts: list[str] = []
    for kind in ("markdown", "caption", "info", "error", "warning", "success", "title", "subheader", "header"):
        for el in getattr(at, kind):
            parts.append(str(el.value))
    for el in at.html:
        parts.append(str(el.value))
    for el in at.expander:
        parts.append(str(el.label))
    return "\n".join(parts)


def form_button(at: AppTest, label_part: str):
    for b in at.button:
        if label_part in str(b.label):
            return b
    raise AssertionError(f"no button with {label_part!r}: {[b.label for b in at.button]}")


def run_until(at: AppTest, predicate, timeout: float = 300.0, step: float = 0.2) -> AppTest:
    deadline = time.monotonic() + timeout
    while True:
        at.run()
        if predicate(at):
            return at
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met in {timeout}s; exceptions={[e.value for e in at.exception]}; "
                                 f"text={texts(at)[:2000]}")
        time.sleep(step)


def start_offline_run(at: AppTest, ticker: str, date, analysts: list[str] | None = None) -> AppTest:
    at.text_input(key="form_ticker").input(ticker)
    at.date_input(key="form_date").set_value(date)
    if analysts is not None:
        at.multiselect(key="form_analysts").set_value(analysts)
    form_button(at, "Start analysis").click()
    return at.run()


def stopping_factory(holder, kind, node):
    """A graph factory for ``JobRegistry``: the real engine, with Stop pressed (from another thread, as a
    browser would) when an event of ``kind`` at ``node`` arrives, while ``holder["armed"]`` (default True).
    ``holder`` carries the registry (``reg``), the run id (``id``) and optionally the ``owner``."""
    import threading

    from studio.jobs import _default_graph_factory

    def factory(**kwargs):
        graph = _default_graph_factory(**kwargs)
        real = graph.propagate

        def propagate(*args, on_event, should_stop):
            def spy(ev):
                on_event(ev)
                if ev.kind == kind and ev.node == node and holder.get("armed", True):
                    t = threading.Thread(target=holder["reg"].stop, args=(holder["id"],),
                                         kwargs={"owner": holder.get("owner")})
                    t.start()
                    t.join()
            return real(*args, on_event=spy, should_stop=should_stop)

        graph.propagate = propagate
        return graph

    return factory
