"""The Watchlist page's logic (no Streamlit here): batches running off the script thread, and tiles.

``BatchRegistry`` (one per server process) starts ``tradingagents.batch.run_batch`` on a daemon
thread and keeps every batch's live ``TickerOutcome``s, so a page switch or a refresh finds the
batch again. ``tile_html(outcome)`` is one ticker's tile: status, rating, cost, and a link that
opens the run (``/run?ticker=…&date=…``).
"""

from __future__ import annotations

import html
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tradingagents.batch import TickerOutcome, exit_code, run_batch

STATUS_LABEL = {"queued": "queued", "running": "running…", "done": "done", "reused": "saved run",
                "failed": "failed", "stopped": "stopped", "budget": "budget reached"}


@dataclass
class BatchHandle:
    id: str
    tickers: list[str]
    date: str
    max_cost_usd: float | None
    outcomes: dict[str, TickerOutcome] = field(default_factory=dict)
    status: str = "running"  # running | finished | failed (nothing could run)
    error: str | None = None
    started: float = field(default_factory=time.time)
    ended: float | None = None
    stop_event: threading.Event = field(default_factory=threading.Event, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def running(self) -> bool:
        return self.status == "running"

    def snapshot(self) -> list[TickerOutcome]:
        with self.lock:
            return [self.outcomes.get(t) or TickerOutcome(t, self.date) for t in self.tickers]

    def summary(self) -> dict[str, Any]:
        outcomes = self.snapshot()
        costs = [o.cost_usd for o in outcomes]
        finished = sum(o.status not in ("queued", "running") for o in outcomes)
        return {"done": finished, "total": len(outcomes),
                "ok": sum(o.ok for o in outcomes),
                "cost_usd": None if any(c is None for c in costs) else sum(costs),
                "exit_code": exit_code(outcomes) if not self.running else None}


class BatchRegistry:
    """Batches of this server process, by id."""

    def __init__(self) -> None:
        self._batches: dict[str, BatchHandle] = {}
        self._lock = threading.Lock()

    def start(self, tickers: Sequence[str], date: str, config: Mapping[str, Any], *,
              max_cost_usd: float | None = None, api_key: str | None = None) -> BatchHandle:
        handle = BatchHandle(uuid.uuid4().hex[:12], list(tickers), date, max_cost_usd)
        with self._lock:
            self._batches[handle.id] = handle

        def on_update(outcome: TickerOutcome) -> None:
            with handle.lock:
                handle.outcomes[outcome.ticker] = outcome

        def work() -> None:
            try:
                run_batch(handle.tickers, date, config, max_cost_usd=max_cost_usd, api_key=api_key,
                          on_update=on_update, should_stop=handle.stop_event.is_set)
                handle.status = "finished"
            except Exception as exc:  # bad settings: nothing ran; the page shows the message
                handle.error = str(exc) or type(exc).__name__
                handle.status = "failed"
            handle.ended = time.time()

        threading.Thread(target=work, name=f"ta-batch-{handle.id}", daemon=True).start()
        return handle

    def get(self, batch_id: str | None) -> BatchHandle | None:
        with self._lock:
            return self._batches.get(batch_id or "")

    def latest(self) -> BatchHandle | None:
        with self._lock:
            return max(self._batches.values(), key=lambda h: h.started, default=None)

    def stop(self, batch_id: str) -> None:
        handle = self.get(batch_id)
        if handle is not None:
            handle.stop_event.set()


def run_link(outcome: TickerOutcome) -> str:
    return "/run?" + urlencode({"ticker": outcome.ticker, "date": outcome.date})


def _cost(value: float | None) -> str:
    return "price unknown" if value is None else f"${value:.4f}"


def tile_html(outcome: TickerOutcome) -> str:
    """One ticker's tile; a finished one links to its run."""
    status = STATUS_LABEL.get(outcome.status, outcome.status)
    rating = html.escape(outcome.rating or "—")
    title = html.escape(outcome.error or "")
    body = (f'<div class="ta-tile ta-tile-{html.escape(outcome.status)}" data-ticker="{html.escape(outcome.ticker)}" '
            f'data-status="{html.escape(outcome.status)}" title="{title}">'
            f"<b>{html.escape(outcome.ticker)}</b><br>{html.escape(status)}<br>{rating}<br>"
            f"<small>{html.escape(_cost(outcome.cost_usd))}</small></div>")
    if outcome.ok:
        return f'<a href="{html.escape(run_link(outcome))}" target="_self" style="text-decoration:none">{body}</a>'
    return body


TILE_CSS = """<style>
.ta-tiles{display:flex;flex-wrap:wrap;gap:.5rem}
.ta-tile{border:1px solid #8884;border-radius:.5rem;padding:.5rem .75rem;min-width:8rem}
.ta-tile-done,.ta-tile-reused{border-color:#2e7d32}
.ta-tile-failed{border-color:#c62828}
.ta-tile-budget,.ta-tile-stopped{border-color:#ef6c00}
</style>"""


def tiles_html(outcomes: Sequence[TickerOutcome]) -> str:
    return TILE_CSS + '<div class="ta-tiles">' + "".join(tile_html(o) for o in outcomes) + "</div>"
