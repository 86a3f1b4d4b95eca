"""History page: every saved run, searchable (ticker, analysis dates, rating, provider, model), one click
to open it on the Run page or its debate, two to compare, and its report as Markdown, HTML or PDF."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from studio import charts, compare, export, theme, ui
from tradingagents.rating import RATINGS_5_TIER
from tradingagents.storage import list_runs, load_run

ui.require_router()


@st.cache_data(show_spinner=False, max_entries=5000)
def _meta(storage_key: str, ticker: str, date: str, saved_at: str) -> dict:
    """One run's saved meta (cached per save: a re-run of the same day has a new saved_at)."""
    try:
        data = load_run(ui.current_config(), ticker, date)
    except Exception:  # noqa: BLE001 - an unreadable run still lists, without model names
        return {}
    meta = dict(data.get("meta") or {})
    out = {k: meta.get(k) for k in ("llm_provider", "quick_think_llm", "deep_think_llm", "data_vendor")}
    usage = meta.get("usage") if isinstance(meta.get("usage"), dict) else {}
    if "cost_usd" in usage:
        out["cost_usd"] = usage["cost_usd"]
    return out


def main() -> None:
    config = ui.current_config()
    st.html(theme.battle_css())
    st.title("History")
    st.html(ui.badges_html(config))
    runs = list_runs(config, include_previous=True)  # a re-analysed session's earlier runs too
    if not runs:
        st.info("No saved run yet. Start an analysis on the **Run** page: each finished run is saved and "
                "listed here, to reopen, compare or export.")
        st.page_link("pages/run.py", label="Go to the Run page", icon=":material/rocket_launch:")
        return
    metas = {(r["ticker"], r["date"]): _meta(str(config.get("results_dir")), r["ticker"], r["date"],
                                             str(r.get("saved_at") or "")) for r in runs}
    rows = compare.history_rows(runs, metas)

    days = sorted(dt.date.fromisoformat(r.date) for r in rows if _is_date(r.date))
    f1, f2, f3 = st.columns([1.2, 1.6, 1.6])
    text = f1.text_input("Ticker", key="hist_ticker", placeholder="e.g. NVDA")
    span = f2.date_input("Analysis dates", value=(days[0], days[-1]) if days else (), key="hist_dates",
                         format="YYYY-MM-DD")
    ratings = f3.multiselect("Rating", [*RATINGS_5_TIER, "—"], key="hist_ratings")
    f4, f5 = st.columns(2)
    providers = f4.multiselect("Provider", sorted({r.provider for r in rows if r.provider}), key="hist_providers",
                               format_func=compare.provider_label)
    models = f5.multiselect("Model", sorted({m for r in rows for m in r.models}), key="hist_models")
    start, end = (tuple(span) + (None, None))[:2] if isinstance(span, (tuple, list)) else (span, span)
    shown = compare.filter_rows(rows, text=text, start=start, end=end, ratings=ratings, providers=providers,
                                models=models)
    st.caption(f"{len(shown)} of {len(rows)} saved runs · times in UTC · select two rows to compare them")
    if not shown:
        st.info("No saved run matches these filters.")
        return
    table, shared = compare.split_constant([r.as_display() for r in shown])
    if shared:  # a value every shown run shares is said once, not repeated on each row
        st.caption("All shown runs: " + " · ".join(f"{k} {v}" for k, v in shared.items()))
    event = st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="multi-row",
        key="hist_table",
        column_config={
            "Open": st.column_config.LinkColumn("Open", display_text="Open run", width="small"),
            "Debates": st.column_config.LinkColumn("Debates", display_text="Debates", width="small"),
            "Rating": st.column_config.TextColumn("Rating", width="medium"),  # "Underweight" uncut
            "Cost": st.column_config.TextColumn("Cost", width="medium"),
        },
    )
    picked = [shown[i] for i in (event.selection.rows if event else []) if i < len(shown)]
    if len(picked) >= 2:
        a, b = picked[0], picked[1]
        st.link_button(f"Compare {a.ticker} {a.date} with {b.ticker} {b.date}",
                       compare.compare_link((a.ticker, a.date, a.version), (b.ticker, b.date, b.version)),
                       type="primary",
                       icon=":material/compare_arrows:")
    elif len(picked) == 1:
        st.caption("Select a second row to compare.")

    st.subheader("Export a report")
    labels = [f"{r.ticker} · {r.date} · {r.rating or '—'}" for r in shown]
    pick = st.selectbox("Run", range(len(shown)), format_func=lambda i: labels[i], key="hist_export")
    row = picked[0] if len(picked) == 1 else shown[pick]
    export_buttons(config, row.ticker, row.date, row.saved_at, key="hist")


@st.cache_data(show_spinner=False, max_entries=64)
def _exports(storage_key: str, ticker: str, date: str, saved_at: str) -> tuple[str, str, bytes]:
    """Markdown, HTML and PDF of one saved run, built once per save (a PDF takes about half a second)."""
    config = ui.current_config()
    data = load_run(config, ticker, date)
    args = (data.get("state") or {}, data.get("rating"), data.get("meta") or {})
    closes = None
    try:  # the handout's price chart: the run's own data source, up to the analysis date
        vendor = args[2].get("data_vendor") or config.get("data_vendor")
        prices = charts.price_history({**config, "data_vendor": vendor}, ticker, date)
        closes = [float(x) for x in prices["Close"].tail(60)] if len(prices) else None
    except Exception:  # noqa: BLE001 - no chart is no reason to refuse the export
        closes = None
    return (export.report_markdown(*args), export.report_html(*args, closes=closes),
            export.report_pdf(*args, closes=closes))


def export_buttons(config, ticker: str, date: str, saved_at: str, *, key: str) -> None:
    """Markdown, HTML and PDF of one saved run, side by side (wrapping on a narrow screen)."""
    try:
        md, page, pdf = _exports(str(config.get("results_dir")), ticker, date, saved_at)
    except Exception as exc:  # noqa: BLE001 - a damaged run is reported, not raised
        st.error(f"Could not export the saved run {ticker} {date}: {exc}")
        return
    row = st.container(horizontal=True, key=f"{key}_exports")
    row.download_button("Markdown", md, file_name=f"{ticker}_{date}_report.md", mime="text/markdown",
                        key=f"{key}_md", icon=":material/download:", on_click="ignore")
    row.download_button("HTML", page, file_name=f"{ticker}_{date}_report.html", mime="text/html",
                        key=f"{key}_html", icon=":material/download:", on_click="ignore")
    row.download_button("PDF", pdf, file_name=f"{ticker}_{date}_report.pdf", mime="application/pdf",
                        key=f"{key}_pdf", icon=":material/picture_as_pdf:", type="primary", on_click="ignore")


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


main()
