"""Memory log page: decisions with their outcome, filters, pages, settle-now, charts, reflections.

The log is read once per version of the file (``ui.memory_log``: ``st.cache_resource`` keyed by its size,
mtime and inode, one shared object, not a pickled copy per rerun; a new server reads it before its first
request) into plain rows, newest first (``studio.memlog_view``); filters and counts run on the whole log
in Python, only the current page of decisions is drawn, and the log's texts are read for that page only
(``load_entries(texts=False)``, then ``entry_texts``); only the chart picked is built and drawn. pandas is
imported only to build a chart: with 20,000 entries the import and the DataFrame were most of the first
run's time. The page's table is plain HTML (a data grid's canvas, its lazily loaded code and its redraws
were a third of the time until a fresh page settled), and each decision of the page is one ``<details>``
in that same HTML element (50 expanders of three or four elements each were most of what the browser had
to draw).
"""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any, NamedTuple

import streamlit as st

from studio import charts, ui
from studio.memlog_view import (
    LONG_ONLY_CAPTION,
    Entry,
    Log,
    call_alpha,
    long_only_equity,
    memory_changes,
    memory_line,
)
from studio.memview import ENTRIES_CSS, TABLE_CSS, entry_html, situation_html
from studio.ui import _, rating_label, tr
from tradingagents import figures
from tradingagents.i18n import N_
from tradingagents.rating import HOLD_BAND, RATINGS_5_TIER, direction

ui.require_router()

PAGE_SIZES = (25, 50, 100)
RUN_PAGE = "pages/run.py"
CHARTS = {"alpha": N_("Compounded alpha per ticker"), "equity": N_("Equity vs benchmark"),
          "hits": N_("Hit rate by rating")}
CHARTS_DEFAULT = "alpha"
# from this many settled decisions (in the filtered view) no chart is drawn until one is picked: on
# 20,000 entries, Plotly's first chart was most of what was left of the page's time in the browser
# (a comment, not a docstring: Streamlit's magic would show a bare string on the page)
LAZY_CHARTS_FROM = 5_000


class Row(NamedTuple):
    """An entry of the page, as it is shown (an absent number is None, never NaN)."""

    entry: Entry
    raw: float | None
    holding: int | None
    entry_price: float | None
    exit_price: float | None
    bench_raw: float | None
    benchmark: str | None
    end_date: str | None
    by: str | None
    settled_by: str | None
    invented: bool
    decision: str
    reflection: str


def _text(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and value != value) else str(value)


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def row_of(entry: Entry, texts: tuple[str, str] | None) -> Row:
    """``texts``: the entry's (decision, reflection); None when the log no longer holds it."""
    e, number = entry.source, figures.number
    holding = number(e.get("holding"))
    decision, reflection = texts or ("", "")
    return Row(entry, number(e.get("raw")), int(holding) if holding is not None and holding.is_integer() else None,
               number(e.get("entry_price")), number(e.get("exit_price")), number(e.get("bench_raw")),
               _text(e.get("benchmark")), _text(e.get("end_date")), _name(e.get("by")), _name(e.get("settled_by")),
               bool(e.get("invented")), decision or "", reflection or "")


def rows_of(log: Log, entries: list[Entry]) -> list[Row]:
    """The page's rows, their texts read from the log for these entries only."""
    texts = log.texts([(e.date, e.ticker) for e in entries])
    return [row_of(e, texts.get((e.date, e.ticker))) for e in entries]


def load_log(config) -> Log:
    with st.spinner(_("Reading the memory log…")):  # Streamlit shows it after 0.5 s: a long read only
        return ui.memory_log(config)


def show_problems(problems: list[str], path: Path) -> None:
    if not problems:
        return
    st.warning(
        _("{n} block(s) of the memory log could not be read, so they are missing below. They are kept verbatim "
          "in the file (nothing was deleted). To fix: open `{path}`, correct or remove each block listed here "
          "(an entry starts with `[date | ticker | rating | pending]`, a blank line and `DECISION:`, and ends "
          "with the line `<!-- ENTRY_END -->`), then reload this page.", n=len(problems), path=path),
        icon=":material/warning:",
    )
    with st.expander(_("What could not be read ({n})", n=len(problems))):
        for p in problems[:200]:
            st.text(p)
        if len(problems) > 200:
            st.caption(_("… and {n} more.", n=len(problems) - 200))


def settle_section(config) -> None:
    if st.button(_("Settle now"), type="primary", key="settle_now", icon=":material/balance:",
                 help=_("Settle every pending decision whose holding window has closed.")):
        with st.spinner(_("Settling pending decisions against the market…")):
            try:
                from tradingagents.graph.settlement import Settler

                outcome = Settler(config, api_key=ui.api_key()).settle()
            except Exception as exc:  # noqa: BLE001 - shown to the user with what to do
                st.session_state["settle_result"] = ("error", str(exc) or type(exc).__name__)
            else:
                st.session_state["settle_result"] = ("ok", (list(outcome.settled), list(outcome.pending)))
                ui.audit("settle", f"{len(outcome.settled)} decision(s)",
                         settled=[f"{r.get('ticker')} {r.get('date')}" for r in outcome.settled])

    result = st.session_state.get("settle_result")
    if not result:
        return
    kind, payload = result
    with st.container():
        if kind == "error":
            st.error(_("Settling failed: {error} Check the data source in the sidebar and try again.", error=payload))
            return
        settled, pending = payload
        if settled:
            st.success(_("Settled {n} decision(s).", n=len(settled)))
            st.dataframe(
                [{_("ticker"): r.get("ticker"), _("date"): r.get("date"), _("rating"): rating_label(r.get("rating")),
                  _("raw return"): charts.fmt_pct(r.get("raw")), _("alpha"): charts.fmt_pct(r.get("alpha")),
                  _("benchmark"): charts.fmt_text(r.get("benchmark")),
                  _("holding days"): charts.fmt_text(r.get("holding"))}
                 for r in settled],
                hide_index=True, width="stretch", key="settled_table",
            )
        elif not pending:
            st.info(_("Nothing to settle: the log has no pending decision."))
        if pending:
            st.warning(_("{n} decision(s) still pending:", n=len(pending)))
            # the reason is the settler's own sentence (the engine's text)
            st.dataframe([{_("ticker"): p.get("ticker"), _("date"): p.get("date"), _("why"): p.get("reason")}
                          for p in pending], hide_index=True, width="stretch", key="pending_table")


def status_label(status: str) -> str:
    """A status filter's option as shown: all, pending, settled (the log keeps the English words)."""
    return _("all") if status == "all" else charts.status_label(status, tr())


def labels_of(options, label) -> dict:
    """``{option: label(option)}`` made now, in this run: a widget's format_func may also be called
    outside the script's run (Streamlit's test harness does), where the session's language is unknown."""
    return {o: label(o) for o in options}


def filtered(log: Log):
    rows = log.entries
    row = st.container(horizontal=True, wrap=True)  # wraps onto new lines on a narrow window
    with row:
        linked = st.query_params.get("ticker")  # a link from a run's "What the team remembered"
        if linked in log.tickers and "log_tickers" not in st.session_state:
            st.session_state["log_tickers"] = [linked]
        tickers = st.multiselect(_("Ticker"), log.tickers, key="log_tickers", width=280,
                                 placeholder=_("Choose an option"))
        present = {r.rating for r in rows}
        ratings = st.multiselect(_("Rating"), [r for r in RATINGS_5_TIER if r in present], key="log_ratings",
                                 width=280, format_func=labels_of(RATINGS_5_TIER, rating_label).get,
                                 placeholder=_("Choose an option"))
        status = st.segmented_control(_("Status"), ["all", "pending", "settled"], default="all", key="log_status",
                                      format_func=labels_of(("all", "pending", "settled"), status_label).get,
                                      width="content")
    view = rows
    if tickers:
        wanted = set(tickers)
        view = [r for r in view if r.ticker in wanted]
    if ratings:
        wanted = set(ratings)
        view = [r for r in view if r.rating in wanted]
    if status in ("pending", "settled"):
        view = [r for r in view if r.status == status]
    return view, (tuple(tickers), tuple(ratings), status)


def paginate(n_rows: int, filters: tuple) -> tuple[int, int]:
    """(first row, last row + 1) of the current page; back to page 1 when the filters change."""
    row = st.container(horizontal=True, wrap=True, vertical_alignment="bottom")
    size = row.selectbox(_("Per page"), PAGE_SIZES, index=1, key="log_page_size", width=120,
                         placeholder=_("Choose an option"))
    n_pages = max(1, -(-n_rows // size))
    if st.session_state.get("log_filters") != (filters, size):
        st.session_state["log_filters"] = (filters, size)
        st.session_state["log_page"] = 1
    if st.session_state.get("log_page", 1) > n_pages:
        st.session_state["log_page"] = n_pages
    page = int(row.number_input(_("Page"), min_value=1, max_value=n_pages, step=1, key="log_page", width=160))
    first = (page - 1) * size
    last = min(first + size, n_rows)
    row.caption(_("Page {page} of {pages} · decisions {first}–{last} of {n}", page=page, pages=n_pages,
                  first=first + 1 if n_rows else 0, last=last, n=f"{n_rows:,}"))
    return first, last


def memory_section(log: Log, rows: list[Entry]) -> None:
    """One line: what memory changed among the settled decisions shown, and what it earned or cost."""
    settled = [r for r in rows if r.settled]
    if not settled:
        return
    if len(settled) > LAZY_CHARTS_FROM:  # the decisions' texts of that many entries: filter first
        st.caption(_("Filter to at most {n} settled decisions to see what memory changed.",
                     n=f"{LAZY_CHARTS_FROM:,}"))
        return
    texts = log.texts([(r.date, r.ticker) for r in settled])
    st.caption(memory_line(memory_changes(settled, texts), len(settled), tr()))


def charts_section(rows: list[Entry]) -> None:
    n_settled = sum(r.settled for r in rows)
    if not n_settled:
        st.info(_("Charts appear once a decision is settled."))
        return
    t = tr()
    # one chart at a time: only the picked one is built and sent (tabs drew all three at once)
    lazy = n_settled >= LAZY_CHARTS_FROM
    chart = st.segmented_control(_("Chart"), list(CHARTS), format_func=labels_of(CHARTS, lambda c: _(CHARTS[c])).get,
                                 default=None if lazy else CHARTS_DEFAULT, key="log_chart",
                                 label_visibility="collapsed")
    if chart is None and lazy:
        st.caption(_("{n} settled decisions: pick a chart above to draw it.", n=f"{n_settled:,}"))
    if chart is None:
        return
    view = charts.log_frame([r.source for r in rows])  # pandas from here on: only for a chart
    if chart == "alpha":
        st.plotly_chart(charts.cumulative_alpha_figure(view, t=t), width="stretch", config=charts.plotly_config(t), key="cum_alpha_chart")
        n_tickers = len({r.ticker for r in rows if r.settled})
        more = (_(" The {n} tickers with the most settled decisions are drawn; filter by ticker to see others.",
                  n=charts.MAX_TICKER_LINES) if n_tickers > charts.MAX_TICKER_LINES else "")
        st.caption(_("{caption} Alphas of different tickers are never combined.{more}",
                     caption=_(charts.CUMULATIVE_ALPHA_CAPTION), more=more))
    elif chart == "equity":
        # the backtest's position rules (long-only): an Underweight or Sell is flat, never short
        st.plotly_chart(charts.equity_figure(long_only_equity(view), t=t), width="stretch",
                        config=charts.plotly_config(t), key="equity_chart")
        st.caption(_(LONG_ONLY_CAPTION))
    elif chart == "hits":
        stats = charts.rating_stats(view)
        st.plotly_chart(charts.hit_rate_figure(stats, t=t), width="stretch", config=charts.plotly_config(t), key="rating_chart")
        shown = stats.assign(rating=[rating_label(r) for r in stats["rating"]],
                             hit_rate=stats["hit_rate"] * 100, avg_alpha=stats["avg_alpha"] * 100)
        st.dataframe(shown, hide_index=True, width="stretch", key="rating_stats",
                     column_config={"rating": st.column_config.TextColumn(_("rating")),
                                    "count": st.column_config.NumberColumn(_("count")),
                                    "hits": st.column_config.NumberColumn(_("hits")),
                                    "hit_rate": st.column_config.NumberColumn(_("hit rate"), format="%.0f%%"),
                                    "avg_alpha": st.column_config.NumberColumn(_("avg alpha"), format="%+.2f%%")})
        tiers = {d: "/".join(rating_label(r) for r in RATINGS_5_TIER if direction(r) == d) for d in (1, -1, 0)}
        st.caption(_("A hit is the reflections' own rule on the exact alpha: {up} need alpha above 0, {down} below "
                     "0, {flat} within ±{band}.", up=tiers[1], down=tiers[-1], flat=tiers[0], band=f"{HOLD_BAND:.0%}"))


NUMERIC_COLUMNS = ("call alpha", "stock alpha", "raw return", "benchmark return", "entry", "exit", "holding days")


def log_table(rows: list[Row]) -> dict[str, list[str]]:
    """The page's rows as display text, by column (English names, translated when drawn): percentages
    and prices formatted, the dash where a value is absent, statuses and ratings translated."""
    t = tr()
    bench = [r.bench_raw if r.bench_raw is not None else
             (r.raw - r.entry.alpha if r.raw is not None and r.entry.alpha is not None else None) for r in rows]
    return {
        "date": [r.entry.date for r in rows], "ticker": [r.entry.ticker for r in rows],
        "rating": [rating_label(r.entry.rating) for r in rows],
        "status": [charts.status_label(r.entry.status, t) for r in rows],
        "call alpha": [charts.fmt_pct(call_alpha(r.entry.rating, r.entry.alpha)) for r in rows],
        "stock alpha": [charts.fmt_pct(r.entry.alpha) for r in rows],
        "raw return": [charts.fmt_pct(r.raw) for r in rows],
        "benchmark return": [charts.fmt_pct(v) for v in bench],
        "benchmark": [charts.fmt_text(r.benchmark) for r in rows],
        "entry": [charts.fmt_price(r.entry_price) for r in rows],
        "exit": [charts.fmt_price(r.exit_price) for r in rows],
        "exit date": [charts.fmt_text(r.end_date) for r in rows],
        "holding days": [charts.fmt_text(r.holding) for r in rows],
    }


def table_html(columns: dict[str, list[str]]) -> str:
    """``log_table``'s columns as one HTML table (headers translated, numbers right-aligned)."""
    t = tr()
    names = list(columns)
    cls = {n: ' class="num"' if n in NUMERIC_COLUMNS else "" for n in names}
    head = "".join(f"<th{cls[n]}>{html.escape(t(n))}</th>" for n in names)
    body = "".join("<tr>" + "".join(f"<td{cls[n]}>{html.escape(v)}</td>" for n, v in zip(names, values, strict=True)) + "</tr>"
                   for values in zip(*columns.values(), strict=True))
    return f'<div class="ta-log-table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def entries_html(rows: list[Row]) -> str:
    """Every decision of the page as one ``<details>`` (closed: its label; open: the decision, who ran and
    settled it, the reflection), all in one HTML element."""
    decision_head, reflection_head, none_text = _("Decision"), _("Reflection"), _("_none_")
    parts = []
    for row in rows:
        e = row.entry
        tag = (_("call alpha {call} · stock alpha {alpha}", call=f"{call_alpha(e.rating, e.alpha):+.1%}",
                 alpha=f"{e.alpha:+.1%}") if e.settled else status_label("pending"))
        tag += _(" · invented instrument") if row.invented else ""
        who = [_(what, who=v) for what, v in ((N_("run by {who}"), row.by), (N_("settled by {who}"), row.settled_by))
               if v]
        who_text = " · ".join(who)
        # model text: Markdown rendered safely, "$120 and $130" stays prices (st.markdown would typeset math)
        parts.append(entry_html(f"{e.date} · {e.ticker} · {rating_label(e.rating)} · {tag}",
                                (decision_head, situation_html(ui.shown(row.decision) or none_text)),
                                who=who_text[:1].upper() + who_text[1:],
                                reflection=(reflection_head, situation_html(row.reflection)) if row.reflection else None))
    return "".join(parts)


def main() -> None:
    config = ui.current_config()

    st.title(_("Memory log"), anchor=False)
    st.html(ui.badges_html(config))
    st.caption(_("Every decision is logged as pending, then settled against the market after its holding window "
                 "({days} trading days): raw return, alpha versus the benchmark, and a reflection.",
                 days=config["holding_days"]))

    settle_section(config)

    path = Path(config["memory_log_path"])
    log = load_log(config)
    show_problems(log.problems, path)
    if not log.entries:
        st.info(_("The memory log is empty. Each analysis you run on the **Run** page adds its decision here as "
                  "pending; **Settle now** (or the next run of the same ticker) fills in the return and alpha once "
                  "the holding window has passed."))
        st.page_link(RUN_PAGE, label=_("Go to the Run page"), icon=":material/rocket_launch:")
        return

    view, filters = filtered(log)
    m = st.container(horizontal=True, wrap=True)
    alphas = [r.alpha for r in view if r.settled]
    m.metric(_("Decisions"), f"{len(view):,}", width=140)
    m.metric(_("Pending"), f"{sum(r.status == 'pending' for r in view):,}", width=140)
    m.metric(_("Settled"), f"{len(alphas):,}", width=140)
    calls = [call_alpha(r.rating, r.alpha) for r in view if r.settled]
    m.metric(_("Average call alpha"), f"{math.fsum(calls) / len(calls):+.2%}" if calls else charts.DASH, width=160,
             help=_("The alpha each call earned: the stock's alpha when the call was Buy or Overweight, its "
                    "opposite for Underweight or Sell, nothing for Hold."))
    m.metric(_("Average stock alpha"), f"{math.fsum(alphas) / len(alphas):+.2%}" if alphas else charts.DASH,
             width=160, help=_("The stock's own alpha against its benchmark over each window, whatever the call."))
    if len(view) != len(log.entries):
        st.caption(_("{n} of the {total} decisions in the log match the filters.", n=f"{len(view):,}",
                     total=f"{len(log.entries):,}"))

    memory_section(log, view)
    charts_section(view)

    st.subheader(_("Decisions and reflections"), anchor=False)
    first, last = paginate(len(view), filters)  # the view is newest first
    page = rows_of(log, view[first:last])
    st.html(TABLE_CSS + table_html(log_table(page)))
    st.caption(_("Entry and exit are the closes the return was measured between; the benchmark's return is over "
                 "the same window and alpha = raw return − benchmark return. {dash} marks a value that does not "
                 "exist yet (pending) or that older entries did not record.", dash=charts.DASH))
    st.html(ENTRIES_CSS + entries_html(page))

    if path.exists():
        st.download_button(_("Download the raw log (Markdown)"), lambda: path.read_bytes(),
                           file_name="trading_memory.md", mime="text/markdown", key="dl_log",
                           icon=":material/download:")


main()
