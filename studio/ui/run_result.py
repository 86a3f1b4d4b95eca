"""A finished run's result on the Run page (this server's run, a linked or a reopened saved run): the rating and
its decision card, the order it makes, the price chart, the reports with their evidence, the questions, the cost,
what the team remembered, the what-if panels and the downloads."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from studio import charts, export, run_view
from studio.runs import REPORT_TITLES
from studio.ui.lang import _, shown, tr
from studio.ui.pm_loop import render_pm_notes, render_questions, render_your_call
from studio.ui.run_whatif import whatif_panel
from studio.ui.widgets import input_notes, rating_badge_html, render_remembered
from tradingagents import pricing
from tradingagents.errors import TradingAgentsError


@st.cache_data(ttl=600, show_spinner=False)
def _prices(vendor: str, home: str, ticker: str, date: str, _config: dict) -> Any:
    cfg = {**_config, "data_vendor": vendor, "home": home}
    return charts.price_history(cfg, ticker, date)


def render_cost(meta: dict, key: str) -> None:
    usage = (meta or {}).get("usage") or {}
    if "cost_usd" not in usage and "by_agent" not in usage:
        return  # a run saved before runs were priced
    offline = pricing.is_offline(meta) or pricing.is_offline((meta or {}).get("config"))
    total = _(pricing.cost_text(usage.get("cost_usd"), offline=offline))
    with st.expander(_("Cost of this run: {total}", total=total), expanded=False, icon=":material/payments:"):
        if usage.get("cost_usd") is None and not offline:
            st.caption(_("A model of this run has no price, so the total is unknown: add it under Model prices in "
                         "the sidebar for the next runs."))
        rows = run_view.agent_costs(meta, tr())
        if rows:
            st.dataframe(rows, hide_index=True, width="stretch", key=f"cost_table_{key}")


def render_order(config: dict, order: object, ticker: str, date: str, key: str) -> None:
    """The order the rating makes of the book (on the card above): its ticket as CSV, and the paper book."""
    if not isinstance(order, dict) or order.get("side") not in ("buy", "sell") or not order.get("shares"):
        return
    from studio import desk_view

    row = st.container(horizontal=True, key=f"ta-order-{key}")
    row.download_button(_("Order ticket (CSV)"), desk_view.order_ticket_csv([order]), file_name=f"{ticker}_{date}_order.csv",
                        mime="text/csv", key=f"ticket_{key}", icon=":material/receipt_long:")
    if row.button(_("Apply to the paper book"), key=f"paper_{key}", icon=":material/playlist_add_check:",
                  help=_("Fill the order at the decision's close in the paper book (the Book page charts it).")):
        from tradingagents.desk.paper import apply_order

        try:
            fill = apply_order(config, order, by=config.get("user"))
            st.toast(_("Filled {shares} {ticker} at {price} in the paper book.", shares=fill["shares"], ticker=ticker,
                       price=f"{fill['price']:,.2f}"))
        except TradingAgentsError as exc:
            st.error(str(exc), icon=":material/error:")


def render_evidence(record: dict, key: str) -> None:
    """Under a report: how many of its figures the run's data holds, and each figure's source on click
    (the figures not found are marked in the text above)."""
    missing = len(record.get("not_found") or [])
    label = _("Evidence: {found} of {figures} figures found in the data", found=record.get("found", 0),
              figures=record.get("figures", 0))
    with st.expander(label, icon=":material/fact_check:" if not missing else ":material/report:",
                     key=f"evidence_{key}"):
        rows = export.source_rows(record, t=tr())
        if rows:
            st.dataframe(rows, hide_index=True, width="stretch")
        else:
            st.caption(_("This text states no figures."))


def _handout(state: dict, rating: str | None, meta: dict, closes: list[float] | None) -> Callable[[], bytes]:
    """The PDF handout of a result, built when the button is clicked and then kept for the session.

    A PDF takes over a second of the interpreter: built with the page, it held back the result's first
    frame and slowed a run started right after on the same server. Streamlit runs this callable on its own
    thread when the button is clicked, outside the script: the language and the session's cache are taken
    here, in the script run."""
    cache = st.session_state.setdefault("_pdf_handouts", {})
    t = tr()
    ident = (state.get("company_of_interest"), state.get("trade_date"), (meta or {}).get("thread_id"),
             (meta or {}).get("elapsed_s"), rating, t.lang)

    def build() -> bytes:
        if ident not in cache:
            if len(cache) > 8:
                cache.clear()
            cache[ident] = export.report_pdf(state, rating, meta, closes=closes, t=t)
        return cache[ident]

    return build


def _heading(state: dict, rating: str | None, meta: dict, ticker: str, date: str, key: str,
             closes: list[float] | None) -> None:
    """The rating badge row (with the PDF handout, beside the card it opens with), the run's input notes and
    the decision card."""
    # the badge row above the decision: nothing overlaps at 800 px
    with st.container(horizontal=True, vertical_alignment="center"):
        st.html(rating_badge_html(rating))
        llm = meta.get("llm_label") or meta.get("llm_provider")
        if llm:
            st.caption(_("Portfolio manager's rating · {ticker} · {date} · LLM: {llm} · data: {data}", ticker=ticker,
                         date=date, llm=_(llm), data=_(meta.get("data_label") or meta.get("data_vendor", ""))))
        else:
            st.caption(_("Portfolio manager's rating · {ticker} · {date}", ticker=ticker, date=date))
        st.download_button(_("PDF handout"), _handout(state, rating, meta, closes), file_name=f"{ticker}_{date}_report.pdf",
                           mime="application/pdf", key=f"dl_pdf_{key}", icon=":material/picture_as_pdf:",
                           type="primary", on_click="ignore")
    for line in input_notes(meta):  # invented instrument, session, CSV rows, re-analysis
        st.caption(line)
    # the decision card: what the committee reads first (the horizon the settlement scores beside the stated one)
    decision = export.card(state, meta, rating)
    st.html(export.card_html(decision, export.currency_of(state, meta), t=tr(), meta=meta,
                             without=("rating",)))  # the rating badge above says the rating


def _decision_text(state: dict, key: str) -> None:
    with st.container(border=True, height=360, key=f"decision_{key}"):
        if state.get("final_trade_decision"):
            with st.container(key=f"ta-engine-decision-{key}"):
                st.markdown(shown(state["final_trade_decision"]))
        else:
            st.markdown("_" + _("No decision text.") + "_")


def _load_prices(config: dict, meta: dict, ticker: str, date: str) -> tuple[Any, Exception | None]:
    """The prices up to the decision day (None when there are none), and why not."""
    try:
        return _prices(meta.get("data_vendor") or config["data_vendor"], config["home"], ticker, date, config), None
    except Exception as exc:  # noqa: BLE001 - a chart failure must not hide the result
        return None, exc


def _closes(prices: Any) -> list[float] | None:
    return [float(x) for x in prices["Close"].tail(60)] if prices is not None and len(prices) else None


def _price_chart(prices: Any, problem: Exception | None, ticker: str, date: str, rating: str | None, key: str) -> None:
    """The price chart up to the decision day."""
    if problem is not None:
        st.info(_("No price chart: {problem}", problem=problem))
    if prices is not None and len(prices):
        st.caption(_("{ticker} daily prices up to {date} (never after), 20- and 50-day moving averages, volume, "
                     "and the decision day marked", ticker=ticker, date=date))
        st.plotly_chart(charts.price_figure(prices, ticker, date, rating, t=tr()), config=charts.plotly_config(tr()),
                        width="stretch", key=f"price_{key}")


def _reports(state: dict, meta: dict, ticker: str, key: str) -> None:
    t = tr()
    keys = [k for k in REPORT_TITLES if (state.get(k) or "").strip()]
    if keys:
        tabs = st.tabs([t.p("report", REPORT_TITLES[k]) for k in keys])
        for tab, k in zip(tabs, keys, strict=True):
            with tab:
                record = export.evidence_of(meta, k)
                with st.container(key=f"ta-engine-{k}-{key}"):
                    st.markdown(shown(export.marked_text(state[k], record, ticker)))
                if record is not None:
                    render_evidence(record, f"{k}_{key}")


def _downloads(state: dict, rating: str | None, meta: dict, prices: Any, ticker: str, date: str, key: str) -> None:
    """The Markdown and HTML reports, each built when its button is clicked (see ``_handout``)."""
    t = tr()
    closes = _closes(prices)
    with st.container(horizontal=True):
        st.download_button(_("Markdown report"), lambda: export.report_markdown(state, rating, meta, t=t),
                           file_name=f"{ticker}_{date}_report.md", mime="text/markdown", key=f"dl_md_{key}",
                           icon=":material/download:", on_click="ignore")
        st.download_button(_("HTML report"), lambda: export.report_html(state, rating, meta, closes=closes, t=t),
                           file_name=f"{ticker}_{date}_report.html", mime="text/html", key=f"dl_html_{key}",
                           icon=":material/download:", on_click="ignore")


def render_result(config: dict, state: dict, rating: str | None, meta: dict, key: str, forkable: bool = True) -> None:
    """A finished run, top to bottom as the committee reads it."""
    ticker = state.get("company_of_interest") or meta.get("ticker", "")
    date = state.get("trade_date") or meta.get("date", "")
    prices, problem = _load_prices(config, meta, ticker, date)
    _heading(state, rating, meta, ticker, date, key, _closes(prices))
    render_order(config, meta.get("order"), ticker, date, key)
    _decision_text(state, key)
    render_your_call(config, ticker, date, rating, meta, key)
    render_pm_notes(meta, key)
    _price_chart(prices, problem, ticker, date, rating, key)
    _reports(state, meta, ticker, key)
    render_questions(config, ticker, date, meta, key)
    render_cost(meta, key)
    render_remembered(meta, key)
    if forkable and not meta.get("whatif"):
        whatif_panel(config, state, rating, meta, key)
    _downloads(state, rating, meta, prices, ticker, date, key)
