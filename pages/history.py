"""History page: every saved run, searchable (ticker, analysis dates, rating, provider, model), one click
to open it on the Run page or its debate, two to compare, and its report as Markdown, HTML or PDF."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import streamlit as st

from studio import charts, compare, export, theme, ui
from studio.ui import _, rating_label, tr
from tradingagents.i18n import translator
from tradingagents.rating import RATINGS_5_TIER
from tradingagents.storage import list_runs, load_run

ui.require_router()

NARROW_CSS = """<style>
/* at a narrow width the filters stack (one per line): the date range keeps its whole width, uncut */
@media (max-width: 1000px){
 .st-key-hist_filters [data-testid="stHorizontalBlock"]{flex-direction:column !important;gap:.25rem !important}
 .st-key-hist_filters [data-testid="stColumn"]{width:100% !important;flex:1 1 100% !important;min-width:0 !important}
}
</style>"""


def main() -> None:
    config = ui.current_config()
    st.html(theme.battle_css())
    t = tr()
    st.title(_("History"), anchor=False)
    st.html(ui.badges_html(config))
    st.html(NARROW_CSS)
    runs = list_runs(config, include_previous=True)  # a re-analysed session's earlier runs too
    if not runs:
        st.info(_("No saved run yet. Start an analysis on the **Run** page: each finished run is saved and "
                  "listed here, to reopen, compare or export."))
        st.page_link(page="pages/run.py", label=_("Go to the Run page"), icon=":material/rocket_launch:")
        return
    rows = compare.history_rows(runs)  # each row carries its run's models and cost (list_runs reads them)

    days = sorted(dt.date.fromisoformat(r.date) for r in rows if _is_date(r.date))
    filters = st.container(key="hist_filters")
    f1, f2, f3 = filters.columns([1.2, 1.6, 1.6])
    text = f1.text_input(_("Ticker"), key="hist_ticker", placeholder=_("e.g. NVDA"))
    span = f2.date_input(_("Analysis dates"), value=(days[0], days[-1]) if days else (), key="hist_dates",
                         format="YYYY-MM-DD")
    ratings = f3.multiselect(_("Rating"), [*RATINGS_5_TIER, "—"], key="hist_ratings", format_func=rating_label,
                             placeholder=_("Choose options"))
    f4, f5 = filters.columns(2)
    providers = f4.multiselect(_("Provider"), sorted({r.provider for r in rows if r.provider}), key="hist_providers",
                               format_func=lambda name: compare.provider_label(name, t=t),
                               placeholder=_("Choose options"))
    models = f5.multiselect(_("Model"), sorted({m for r in rows for m in r.models}), key="hist_models",
                            placeholder=_("Choose options"))
    start, end = (tuple(span) + (None, None))[:2] if isinstance(span, (tuple, list)) else (span, span)
    shown = compare.filter_rows(rows, text=text, start=start, end=end, ratings=ratings, providers=providers,
                                models=models)
    st.caption(_("{shown} of {total} saved runs · times in UTC · select two rows to compare them", shown=len(shown),
                 total=len(rows)))
    if not shown:
        st.info(_("No saved run matches these filters."))
        return
    table, shared = compare.split_constant([r.as_display(t=t) for r in shown],
                                           [_(c) for c in compare.CONSTANT_COLUMNS])
    if shared:  # a value every shown run shares is said once, not repeated on each row
        st.caption(_("All shown runs: {values}", values=" · ".join(f"{k} {v}" for k, v in shared.items())))
    event = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="multi-row",
        key="hist_table",
        column_config={
            _("Open"): st.column_config.LinkColumn(_("Open"), display_text=_("Open run"), width="small"),
            _("Debates"): st.column_config.LinkColumn(_("Debates"), display_text=_("Debates"), width="small"),
            _("Rating"): st.column_config.TextColumn(_("Rating"), width="medium"),  # "Underweight" uncut
            _("Cost"): st.column_config.TextColumn(_("Cost"), width="medium"),
        },
    )
    picked = [shown[i] for i in (event.selection.rows if event else []) if i < len(shown)]
    if len(picked) >= 2:
        a, b = picked[0], picked[1]
        st.link_button(_("Compare {a} {a_date} with {b} {b_date}", a=a.ticker, a_date=a.date, b=b.ticker,
                         b_date=b.date),
                       compare.compare_link((a.ticker, a.date, a.version), (b.ticker, b.date, b.version), t.lang),
                       type="primary",
                       icon=":material/compare_arrows:")
    elif len(picked) == 1:
        st.caption(_("Select a second row to compare."))

    st.subheader(_("Export a report"), anchor=False)
    labels = [f"{r.ticker} · {r.date} · {rating_label(r.rating) if r.rating else '—'}" for r in shown]
    pick = st.selectbox(_("Run"), range(len(shown)), format_func=lambda i: labels[i], key="hist_export",
                        placeholder=_("Choose an option"))
    row = picked[0] if len(picked) == 1 else shown[pick]
    export_buttons(config, row.ticker, row.date, row.saved_at, key="hist")


@st.cache_data(show_spinner=False, max_entries=64)
def _export(kind: str, storage_key: str, ticker: str, date: str, saved_at: str, lang: str,
            _config: Any) -> str | bytes:
    """The Markdown, HTML or PDF of one saved run in ``lang``, built once per save (a PDF takes over a second),
    when its button is clicked: Streamlit calls it off the script thread, so it takes the settings as given."""
    data = load_run(_config, ticker, date)
    args = (data.get("state") or {}, data.get("rating"), data.get("meta") or {})
    t = translator(lang)
    if kind == "md":
        return export.report_markdown(*args, t=t)
    closes = None
    try:  # the handout's price chart: the run's own data source, up to the analysis date
        vendor = args[2].get("data_vendor") or _config.get("data_vendor")
        prices = charts.price_history({**_config, "data_vendor": vendor}, ticker, date)
        closes = [float(x) for x in prices["Close"].tail(60)] if len(prices) else None
    except Exception:  # noqa: BLE001 - no chart is no reason to refuse the export
        closes = None
    if kind == "html":
        return export.report_html(*args, closes=closes, t=t)
    return export.report_pdf(*args, closes=closes, t=t)


@st.cache_data(show_spinner=False, max_entries=64)
def _unreadable(storage_key: str, ticker: str, date: str, saved_at: str, _config: Any) -> str | None:
    """Why one saved run cannot be read (None when it can), once per save rather than on every rerun."""
    try:
        load_run(_config, ticker, date)
    except Exception as exc:  # noqa: BLE001 - a damaged run is reported, not raised
        return str(exc)
    return None


def export_buttons(config, ticker: str, date: str, saved_at: str, *, key: str) -> None:
    """Markdown, HTML and PDF of one saved run, side by side (wrapping on a narrow screen); each is built when
    its button is clicked. The saved run is read now, so a damaged one is said here rather than on a click."""
    storage_key = str(config.get("results_dir"))
    problem = _unreadable(storage_key, ticker, date, saved_at, config)
    if problem is not None:
        st.error(_("Could not export the saved run {ticker} {date}: {error}", ticker=ticker, date=date, error=problem))
        return
    ident = (storage_key, ticker, date, saved_at, ui.language())

    def build(kind: str) -> Callable[[], str | bytes]:
        return lambda: _export(kind, *ident, config)

    row = st.container(horizontal=True, key=f"{key}_exports")
    row.download_button(_("Markdown"), build("md"), file_name=f"{ticker}_{date}_report.md", mime="text/markdown",
                        key=f"{key}_md", icon=":material/download:", on_click="ignore")
    row.download_button(_("HTML"), build("html"), file_name=f"{ticker}_{date}_report.html", mime="text/html",
                        key=f"{key}_html", icon=":material/download:", on_click="ignore")
    row.download_button(_("PDF"), build("pdf"), file_name=f"{ticker}_{date}_report.pdf", mime="application/pdf",
                        key=f"{key}_pdf", icon=":material/picture_as_pdf:", type="primary", on_click="ignore")


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


main()
