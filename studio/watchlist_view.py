"""The Watchlist page's tiles (no Streamlit here).

A batch is a job of ``studio.jobs`` (``BatchJob``: ``tradingagents.batch.run_batch`` on a worker
thread with every ticker's live ``TickerOutcome``), kept by the app's one registry so that a page
switch or a refresh finds it again. ``tile_html(outcome)`` is one ticker's tile: status, rating,
cost, and a link that opens the run (``/run?ticker=…&date=…``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from urllib.parse import urlencode

from tradingagents.batch import TickerOutcome

STATUS_LABEL = {"queued": "queued", "running": "running…", "done": "done", "reused": "saved run",
                "failed": "failed", "stopped": "stopped", "budget": "budget reached"}


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
