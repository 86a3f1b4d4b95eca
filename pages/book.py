"""Book page: the desk's positions, cash and limits (import a broker's CSV, edit, save), and the paper book's
value over time against the benchmark."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import streamlit as st

from studio import desk_view as view
from studio import ui
from studio.ui import _, tr
from tradingagents.dataflows.interface import get_provider
from tradingagents.desk import paper as paper_book
from tradingagents.errors import TradingAgentsError
from tradingagents.graph.book_view import close_on
from tradingagents.storage.book import import_book_csv, load_book, save_book

if callable(getattr(ui, "require_router", None)):
    ui.require_router()


def _import_box(config: dict, book: Any) -> Any:
    """A broker's CSV into the book (open while there is none); returns the book now."""
    with st.expander(_("Import a broker's CSV"), expanded=book is None, icon=":material/upload_file:"):
        st.caption(_("A header naming ticker, shares and cost_basis (per share; other columns are ignored). A file with a "
                     "row that does not parse is refused with its line numbers, and nothing is imported."))
        upload = st.file_uploader(_("CSV file"), type=["csv"], key="book_csv")
        c1, c2, c3 = st.columns(3)
        cash = c1.number_input(_("Cash"), min_value=0.0, value=float(book.cash) if book else 0.0, step=1000.0,
                               key="book_cash")
        currency = c2.text_input(_("Currency"), value=book.currency if book else "USD", max_chars=3, key="book_currency")
        max_weight = c3.number_input(_("Limit per position (%)"), min_value=0.1, max_value=100.0,
                                     value=float(book.max_weight * 100) if book else 10.0, step=0.5, key="book_max_weight")
        if st.button(_("Import"), key="book_import", disabled=upload is None, type="primary"):
            try:
                text = upload.getvalue().decode("utf-8-sig")
                book = import_book_csv(config, upload.name, text=text, cash=cash, currency=currency,
                                       max_weight=max_weight / 100, by=config.get("user"))
                st.toast(_("Imported {n} position(s) from {file}.", n=len(book.positions), file=upload.name))
            except UnicodeDecodeError:
                st.error(_("The file is not UTF-8 text."), icon=":material/error:")
            except TradingAgentsError as exc:
                st.error(str(exc), icon=":material/error:")
    return book


def _edit_box(config: dict, book: Any) -> None:
    with st.expander(_("Edit the book"), icon=":material/edit:"):
        frame = pd.DataFrame([p.to_doc() for p in book.positions], columns=["ticker", "shares", "cost_basis"])
        edited = st.data_editor(frame, num_rows="dynamic", key="book_editor", width="stretch", hide_index=True,
                                column_config={"ticker": st.column_config.TextColumn(_("Ticker")),
                                               "shares": st.column_config.NumberColumn(_("Shares"), min_value=0),
                                               "cost_basis": st.column_config.NumberColumn(_("Cost basis"), min_value=0)})
        e1, e2, e3 = st.columns(3)
        new_cash = e1.number_input(_("Cash"), min_value=0.0, value=float(book.cash), step=1000.0, key="edit_cash")
        new_currency = e2.text_input(_("Currency"), value=book.currency, max_chars=3, key="edit_currency")
        new_limit = e3.number_input(_("Limit per position (%)"), min_value=0.1, max_value=100.0,
                                    value=float(book.max_weight * 100), step=0.5, key="edit_max_weight")
        if st.button(_("Save the book"), key="book_save"):
            rows = [r for r in edited.to_dict("records") if str(r.get("ticker") or "").strip()]
            try:
                book = save_book(config, book.replace(positions=rows, cash=new_cash, currency=new_currency,
                                                      max_weight=new_limit / 100), by=config.get("user"))
                st.toast(_("Saved the book."))
                st.rerun()
            except TradingAgentsError as exc:
                st.error(str(exc), icon=":material/error:")


def _paper(config: dict, provider: Any, today: str) -> None:
    st.subheader(_("Paper book"), anchor=False)
    st.caption(_("Orders applied from the Run page fill at the decision's close. The paper book starts as a copy of "
                 "the book on its first order."))
    paper = paper_book.load_paper(config)
    if paper is None:
        st.caption(_("No order applied yet."))
    else:
        history = paper_book.paper_history(config, provider, today)
        if len(history):
            bench = history.attrs.get("benchmark", "")
            chart = history.rename(columns={"value": _("Paper book"), "benchmark": bench})
            st.line_chart(chart, height=260)
        st.dataframe(pd.DataFrame(paper["fills"]), hide_index=True, width="stretch")
        if st.button(_("Reset the paper book"), key="paper_reset"):
            paper_book.reset_paper(config, by=config.get("user"))
            st.rerun()


def main() -> None:
    config = ui.current_config()
    t = tr()
    st.title(_("Book"), anchor=False)
    st.html(ui.badges_html(config))
    st.caption(_("What the desk holds. Every run reads it: the Portfolio Manager is told the holding, its weight and "
                 "the limit, and the decision card sizes an order from the rating (Buy towards the target weight, "
                 "Overweight half way, Hold nothing, Underweight trims half, Sell exits), capped by the limits and the "
                 "cash."))
    try:
        book = load_book(config)
    except TradingAgentsError as exc:
        book = None
        st.error(str(exc), icon=":material/error:")
    book = _import_box(config, book)
    if book is None:
        st.info(_("No book yet: import one above, or with 'python -m tradingagents book import FILE'."),
                icon=":material/account_balance_wallet:")
        return
    today = dt.date.today().isoformat()
    provider = get_provider(config)
    prices = {p.ticker: close_on(provider, p.ticker, today) for p in book.positions}
    st.markdown("**" + view.book_summary(book, prices, t=t) + "**")
    st.dataframe(pd.DataFrame(view.book_rows(book, prices, t=t)), hide_index=True, width="stretch")
    _edit_box(config, book)
    _paper(config, provider, today)


main()
