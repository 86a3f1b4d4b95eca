"""The Watchlist page's tiles (no Streamlit here).

A batch is a job of ``studio.jobs`` (``BatchJob``: ``tradingagents.batch.run_batch`` on a worker
thread with every ticker's live ``TickerOutcome``), kept by the app's one registry so that a page
switch or a refresh finds it again. ``tile_html(outcome)`` is one ticker's tile: status, rating,
cost, and a link that opens the run (``/run?ticker=…&date=…``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from studio import links
from tradingagents.batch import TickerOutcome
from tradingagents.i18n import N_, Translator, rating_label, translator

EN = translator("en")
STATUS_LABEL = {"queued": N_("queued"), "running": N_("running…"), "done": N_("done"), "reused": N_("saved run"),
                "failed": N_("failed"), "stopped": N_("stopped"), "budget": N_("budget reached")}
"""A ticker's status → its label (English; shown with ``t(label)``)."""


def run_link(outcome: TickerOutcome, blind: bool = False, lang: str | None = None) -> str:
    """The Run page's link to a finished ticker's saved run, opening in ``lang`` (a blind one is saved in
    real terms where every run is, so its link is the same; ``blind`` is kept for callers)."""
    return links.page_url("run", {"ticker": outcome.ticker, "date": outcome.session or outcome.date}, lang=lang)


def cost_text(value: float | None, *, t: Translator = EN) -> str:
    """A tile's or the batch's cost: "$0.0123", or "price unknown" in ``t``'s language."""
    return t("price unknown") if value is None else f"${value:.4f}"


def summary_text(summary: dict, running: bool, *, t: Translator = EN) -> str:
    """The batch's head line: how many tickers were analysed, failed or are still to go (one count each,
    so "4/4 finished" never stands beside "some tickers did not finish")."""
    total, ok, ended = summary["total"], summary["ok"], summary["done"]
    parts = [t("{ok} of {total} analysed", ok=ok, total=total)]
    if ended - ok:
        parts.append(t("{n} did not finish", n=ended - ok))
    if total - ended:
        parts.append(t("{n} to go", n=total - ended) if running else t("{n} not started", n=total - ended))
    return " · ".join(parts)


def end_text(summary: dict, *, t: Translator = EN) -> str:
    """The closing caption once the batch ended, from the same counts as ``summary_text``."""
    if summary["ok"] == summary["total"]:
        return t("Finished: all {total} tickers analysed.", total=summary["total"])
    return t("{n} of {total} tickers did not finish: run the watchlist again to continue them (finished tickers "
             "are reused).", n=summary["total"] - summary["ok"], total=summary["total"])


def tile_html(outcome: TickerOutcome, blind: bool = False, *, t: Translator = EN) -> str:
    """One ticker's tile, in ``t``'s language (the rating shown translated; ``data-status`` and the link keep
    the canonical values); a finished one links to its run."""
    label = STATUS_LABEL.get(outcome.status)
    status = t(label) if label is not None else outcome.status
    rating = html.escape(rating_label(outcome.rating, t.lang) if outcome.rating else "—")
    title = html.escape(outcome.error or "")
    body = (f'<div class="ta-tile ta-tile-{html.escape(outcome.status)}" data-ticker="{html.escape(outcome.ticker)}" '
            f'data-status="{html.escape(outcome.status)}" data-rating="{html.escape(outcome.rating or "")}" '
            f'title="{title}">'
            f"<b>{html.escape(outcome.ticker)}</b><br>{html.escape(status)}<br>{rating}<br>"
            f"<small>{html.escape(cost_text(outcome.cost_usd, t=t))}</small>"
            + ('<span class="ta-tile-open">' + html.escape(t("Open run →")) + "</span>" if outcome.ok else "")
            + "</div>")
    if outcome.ok:
        aria = t("Open the run of {ticker}", ticker=outcome.ticker)
        return (f'<a class="ta-tile-link" href="{html.escape(run_link(outcome, blind, t.lang))}" target="_self" '
                f'aria-label="{html.escape(aria)}">{body}</a>')
    return body


TILE_CSS = """<style>
.ta-tiles{display:flex;flex-wrap:wrap;gap:.5rem}
.ta-tile{border:1px solid #8884;border-radius:.5rem;padding:.5rem .75rem;min-width:8rem;
  background:rgba(128,138,160,.08);box-shadow:0 1px 2px rgba(0,0,0,.12)}
.ta-tile-link{text-decoration:none !important;color:inherit !important;display:block;border-radius:.5rem}
.ta-tile-link:hover .ta-tile,.ta-tile-link:focus .ta-tile{background:rgba(46,155,255,.14);border-color:#2E9BFF}
.ta-tile-open{display:block;margin-top:.3rem;font-size:.8rem;font-weight:600;color:#2E9BFF}
.ta-tile-done,.ta-tile-reused{border-color:#2e7d32}
.ta-tile-failed{border-color:#c62828}
.ta-tile-budget,.ta-tile-stopped{border-color:#ef6c00}
</style>"""


def tiles_html(outcomes: Sequence[TickerOutcome], blind: bool = False, *, t: Translator = EN) -> str:
    return TILE_CSS + '<div class="ta-tiles">' + "".join(tile_html(o, blind, t=t) for o in outcomes) + "</div>"
