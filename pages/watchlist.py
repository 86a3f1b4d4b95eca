"""Watchlist page: many tickers on a date at once, live tiles (status, rating, cost) that open each run."""

from __future__ import annotations

import datetime as dt
from typing import Any

import streamlit as st

from studio import ui
from studio import watchlist_view as view
from studio.ui import _, tr
from tradingagents import batch, pricing, storage
from tradingagents.errors import TradingAgentsError
from tradingagents.estimates import estimate_batch_cost
from tradingagents.i18n import N_

if callable(getattr(ui, "require_router", None)):
    ui.require_router()

POLL_S = 1.0
SOURCES = {"past runs": N_("past runs"), "typical run": N_("typical run")}  # estimate_batch_cost's source → label


def _saved_lists(config: dict, saved: dict) -> None:
    """Load or delete a saved watchlist."""
    if saved:
        saved_row = st.container(horizontal=True, vertical_alignment="bottom")
        pick = saved_row.selectbox(_("Saved watchlists"), sorted(saved), key="wl_pick", width="stretch",
                                   placeholder=_("Choose an option"))
        if saved_row.button(_("Load"), key="wl_load"):
            st.session_state["wl_tickers"] = ", ".join(saved[pick])
            st.session_state["wl_name"] = pick
            st.rerun()
        if saved_row.button(_("Delete"), key="wl_delete"):
            try:
                storage.delete_watchlist(pick, config, owner=ui.owner(), lead=ui.acts_as_lead(), by=ui.user_label())
                st.rerun()
            except TradingAgentsError as exc:
                st.error(str(exc), icon=":material/error:")


def _fields() -> Any:
    """The watchlist's tickers, date and budget; returns the row of "Save as"."""
    st.text_area(_("Tickers"), key="wl_tickers", height=70, help=_("Separated by commas, spaces or new lines."))
    c1, c2, c3 = st.columns([2, 2, 3])
    c1.date_input(_("Date"), key="wl_date", max_value=dt.date.today(), min_value=dt.date(1990, 1, 1))
    c2.number_input(_("Budget (USD)"), key="wl_budget", min_value=0.0, step=0.5,
                    help=_("0 = no budget. The batch stops each run at a checkpoint before it would go over; run again "
                           "with a larger budget to continue."))
    save_row = c3.container(horizontal=True, vertical_alignment="bottom")  # "Save" keeps its width at 800 px
    save_row.text_input(_("Save as"), key="wl_name", placeholder=_("morning"), width="stretch")
    return save_row


def _tickers() -> list[str]:
    try:
        return batch.parse_tickers(st.session_state["wl_tickers"])
    except TradingAgentsError as exc:
        st.error(str(exc), icon=":material/error:")
    return []


def _save(config: dict, save_row: Any, tickers: list[str]) -> None:
    if save_row.button(_("Save"), key="wl_save", disabled=not tickers, width="content"):
        try:
            storage.save_watchlist(st.session_state["wl_name"], tickers, config, owner=ui.owner(), lead=ui.acts_as_lead(),
                                   by=ui.user_label())
            st.toast(_("Saved watchlist {name}.", name=st.session_state["wl_name"].strip()))
            st.rerun()
        except TradingAgentsError as exc:
            st.error(str(exc), icon=":material/error:")


def _estimate(config: dict, tickers: list[str]) -> None:
    if tickers:
        est = estimate_batch_cost(config, len(tickers))
        if pricing.is_offline(config):
            st.caption(_("{n} tickers · {cost}", n=len(tickers), cost=_(pricing.cost_text(None, offline=True))))
        else:
            shown = _("price unknown") if est["cost_usd"] is None else pricing.cost_text(est["cost_usd"])
            source = _(SOURCES.get(est["source"], est["source"]))
            if est["runs"]:
                st.caption(_("{n} tickers · estimated cost {cost} (from {source}, {runs} saved)", n=len(tickers),
                             cost=shown, source=source, runs=est["runs"]))
            else:
                st.caption(_("{n} tickers · estimated cost {cost} (from {source})", n=len(tickers), cost=shown,
                             source=source))


def _start(config: dict, tickers: list[str]) -> Any:
    """Blind runs and Run watchlist (one batch of one's own at a time); the batch started now, or None."""
    registry, me = ui.get_registry(), ui.owner()
    st.checkbox(_("Blind runs"), key="wl_blind", help=_(
        "Each ticker a blind run in turn: the models see aliases (every watchlist ticker is hidden in each run), dates "
        "shifted by 28 years and rebased prices; results are shown and stored in real names, dates and prices (under "
        "<home>/blind/). No budget with it."))
    # one batch of one's own at a time; someone else's running batch takes nothing from this person
    busy = any(h.running and h.owner == me for h in registry.list("batch"))
    if st.button(_("Run watchlist"), key="wl_start", type="primary", disabled=not tickers or busy):
        budget = float(st.session_state["wl_budget"]) or None
        new_id = registry.start_batch(tickers, st.session_state["wl_date"].isoformat(), config, max_cost_usd=budget,
                                      api_key=ui.api_key(), owner=me, blind=bool(st.session_state.get("wl_blind")))
        st.session_state["wl_id"] = new_id
        return registry.get(new_id, "batch")
    return None


@st.fragment(run_every=POLL_S)
def live(batch_id: str, config: dict) -> None:
    registry, me, t = ui.get_registry(), ui.owner(), tr()
    h = registry.get(batch_id, "batch")
    if h is None:
        return
    mine = h.can_control(me)
    s = h.summary()
    head, stop_col = st.columns([5, 1])
    cost = view.cost_text(s["cost_usd"], t=t)
    head.markdown(f"#### {h.date} · {view.summary_text(s, h.running, t=t)} · {cost}")
    if mine and h.running and stop_col.button(_("Stop"), key="wl_stop", icon=":material/stop_circle:",
                                              help=_("Each run stops at its next checkpoint; run again to resume.")):
        registry.stop(h.id, owner=me)
        st.toast(_("Stopping after the current steps…"))
    if not mine:
        st.caption(_("This batch was started in another browser: you can watch it; only that browser can stop it."))
    st.html(view.tiles_html(h.snapshot(), blind=bool(getattr(h, "blind", False)), t=t))
    st.html(f'<span class="ta-wl-state" data-id="{h.id}" data-status="{h.status}" data-done="{s["done"]}" '
            f'data-total="{s["total"]}"></span>')
    if h.error:
        st.error(h.error, icon=":material/error:")
    for o in h.snapshot():
        if o.error and o.status in ("failed", "budget", "stopped"):
            st.caption(f"**{o.ticker}**: {o.error}")
    if not h.running:
        st.caption(view.end_text(s, t=t))
        from studio import desk_view

        orders = [o for o in desk_view.batch_orders(config, h.snapshot()) if o.get("side") in ("buy", "sell")]
        if orders:  # the orders the ratings make of the book, one ticket for the broker
            st.download_button(_("Order ticket (CSV)"), desk_view.order_ticket_csv(orders),
                               file_name=f"watchlist_{h.date}_orders.csv", mime="text/csv", key=f"wl_ticket_{h.id}",
                               icon=":material/receipt_long:")


def main() -> None:
    config = ui.current_config()
    registry = ui.get_registry()
    st.title(_("Watchlist"), anchor=False)
    st.html(ui.badges_html(config))  # which engine and data source, as on every page
    st.caption(_("Run the team on every ticker of a watchlist on one date, at most {n} model calls at once in all. "
                 "A ticker that fails does not stop the others; running the same watchlist again reuses finished "
                 "tickers and resumes the others.", n=config["max_concurrent_llm_calls"]))

    try:
        saved = storage.list_watchlists(config)
    except TradingAgentsError as exc:
        saved = {}
        st.warning(str(exc))
    for k, v in {"wl_tickers": "NVDA, AAPL, MSFT, 0700.HK", "wl_date": dt.date(2024, 5, 10), "wl_budget": 0.0,
                 "wl_name": ""}.items():
        st.session_state.setdefault(k, v)
    _saved_lists(config, saved)
    save_row = _fields()
    tickers = _tickers()
    _save(config, save_row, tickers)
    _estimate(config, tickers)
    handle = registry.get(st.session_state.get("wl_id"), "batch") or registry.latest("batch")
    handle = _start(config, tickers) or handle
    if handle is not None:
        live(handle.id, config)


main()
