"""Memory log page: decisions with their outcome, filters, pages, settle-now, charts, reflections.

The log is parsed once per version of the file (``st.cache_data`` keyed by its size, mtime and inode),
filters run on the whole log, and only the current page of decisions is drawn.
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from studio import charts, ui
from studio.memview import situation_html
from tradingagents.rating import HOLD_BAND, RATINGS_5_TIER, direction
from tradingagents.storage import open_memory_log, storage_url

ui.require_router()

PAGE_SIZES = (25, 50, 100)


def file_signature(path: Path) -> tuple[int, int, int] | None:
    """(size, mtime_ns, inode) of the log: a new value for every write (writes replace the file)."""
    try:
        st_ = os.stat(path)
    except FileNotFoundError:
        return None
    return (st_.st_size, st_.st_mtime_ns, st_.st_ino)


def read_log(config):
    """(frame, texts by (date, ticker), problems) of the log as it is now."""
    log = open_memory_log(config)  # files, or the desk's database
    entries = log.load_entries()
    texts = {(str(e.get("date")), str(e.get("ticker"))): (e.get("decision") or "", e.get("reflection") or "",
                                                           bool(e.get("invented")))
             for e in entries}
    return charts.log_frame(entries), texts, list(log.problems)


@st.cache_data(max_entries=4, show_spinner="Reading the memory log…")
def _cached_log(path: str, signature: tuple[int, int, int] | None, _config):
    return read_log(_config)


def load_log(config):
    """The log file is parsed once per version (its size, mtime and inode); a database log is read
    on every rerun (it has no cheap version to key a cache by)."""
    if storage_url(config):
        return read_log(config)
    path = Path(config["memory_log_path"])
    return _cached_log(str(path), file_signature(path), config)


def show_problems(problems: list[str], path: Path) -> None:
    if not problems:
        return
    st.warning(
        f"{len(problems)} block(s) of the memory log could not be read, so they are missing below. They are "
        f"kept verbatim in the file (nothing was deleted). To fix: open `{path}`, correct or remove each "
        "block listed here (an entry starts with `[date | ticker | rating | pending]`, a blank line and "
        "`DECISION:`, and ends with the line `<!-- ENTRY_END -->`), then reload this page.",
        icon=":material/warning:",
    )
    with st.expander(f"What could not be read ({len(problems)})"):
        for p in problems[:200]:
            st.text(p)
        if len(problems) > 200:
            st.caption(f"… and {len(problems) - 200} more.")


def settle_section(config) -> None:
    if st.button("Settle now", type="primary", key="settle_now", icon=":material/balance:",
                    help="Settle every pending decision whose holding window has closed."):
        with st.spinner("Settling pending decisions against the market…"):
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
            st.error(f"Settling failed: {payload} Check the data source in the sidebar and try again.")
            return
        settled, pending = payload
        if settled:
            st.success(f"Settled {len(settled)} decision(s).")
            st.dataframe(
                [{"ticker": r.get("ticker"), "date": r.get("date"), "rating": r.get("rating"),
                  "raw": charts.fmt_pct(r.get("raw")), "alpha": charts.fmt_pct(r.get("alpha")),
                  "benchmark": charts.fmt_text(r.get("benchmark")), "holding": charts.fmt_text(r.get("holding"))}
                 for r in settled],
                hide_index=True, width="stretch", key="settled_table",
            )
        elif not pending:
            st.info("Nothing to settle: the log has no pending decision.")
        if pending:
            st.warning(f"{len(pending)} decision(s) still pending:")
            st.dataframe([{"ticker": p.get("ticker"), "date": p.get("date"), "why": p.get("reason")}
                          for p in pending], hide_index=True, width="stretch", key="pending_table")


def filtered(df):
    row = st.container(horizontal=True, wrap=True)  # wraps onto new lines on a narrow window
    with row:
        linked = st.query_params.get("ticker")  # a link from a run's "What the team remembered"
        if linked in set(df["ticker"]) and "log_tickers" not in st.session_state:
            st.session_state["log_tickers"] = [linked]
        tickers = st.multiselect("Ticker", sorted(df["ticker"].unique()), key="log_tickers", width=280)
        present = set(df["rating"])
        ratings = st.multiselect("Rating", [r for r in RATINGS_5_TIER if r in present], key="log_ratings",
                                 width=280)
        status = st.segmented_control("Status", ["all", "pending", "settled"], default="all", key="log_status",
                                      width="content")
    view = df
    if tickers:
        view = view[view["ticker"].isin(tickers)]
    if ratings:
        view = view[view["rating"].isin(ratings)]
    if status in ("pending", "settled"):
        view = view[view["status"] == status]
    return view, (tuple(tickers), tuple(ratings), status)


def paginate(n_rows: int, filters: tuple) -> tuple[int, int]:
    """(first row, last row + 1) of the current page; back to page 1 when the filters change."""
    row = st.container(horizontal=True, wrap=True, vertical_alignment="bottom")
    size = row.selectbox("Per page", PAGE_SIZES, index=1, key="log_page_size", width=120)
    n_pages = max(1, -(-n_rows // size))
    if st.session_state.get("log_filters") != (filters, size):
        st.session_state["log_filters"] = (filters, size)
        st.session_state["log_page"] = 1
    if st.session_state.get("log_page", 1) > n_pages:
        st.session_state["log_page"] = n_pages
    page = int(row.number_input("Page", min_value=1, max_value=n_pages, step=1, key="log_page", width=160))
    first = (page - 1) * size
    last = min(first + size, n_rows)
    row.caption(f"Page {page} of {n_pages} · decisions {first + 1 if n_rows else 0}–{last} of {n_rows:,}")
    return first, last


def charts_section(view) -> None:
    settled = charts.settled_rows(view)
    if not len(settled):
        st.info("Charts appear once a decision is settled.")
        return
    t1, t2, t3 = st.tabs(["Compounded alpha per ticker", "Equity vs benchmark", "Hit rate by rating"])
    with t1:
        st.plotly_chart(charts.cumulative_alpha_figure(view), width="stretch", key="cum_alpha_chart")
        n_tickers = settled["ticker"].nunique()
        more = (f" The {charts.MAX_TICKER_LINES} tickers with the most settled decisions are drawn; "
                "filter by ticker to see others." if n_tickers > charts.MAX_TICKER_LINES else "")
        st.caption(f"{charts.CUMULATIVE_ALPHA_CAPTION} Alphas of different tickers are never combined.{more}")
    with t2:
        st.plotly_chart(charts.equity_figure(charts.equity_curve(view)), width="stretch", key="equity_chart")
        st.caption(charts.EQUITY_CAPTION)
    with t3:
        stats = charts.rating_stats(view)
        st.plotly_chart(charts.hit_rate_figure(stats), width="stretch", key="rating_chart")
        st.dataframe(stats.assign(hit_rate=stats["hit_rate"] * 100, avg_alpha=stats["avg_alpha"] * 100),
                     hide_index=True, width="stretch", key="rating_stats",
                     column_config={"hit_rate": st.column_config.NumberColumn("hit rate", format="%.0f%%"),
                                    "avg_alpha": st.column_config.NumberColumn("avg alpha", format="%+.2f%%")})
        tiers = {d: "/".join(r for r in RATINGS_5_TIER if direction(r) == d) for d in (1, -1, 0)}
        st.caption(f"A hit is the reflections' own rule on the exact alpha: {tiers[1]} need alpha above 0, "
                   f"{tiers[-1]} below 0, {tiers[0]} within ±{HOLD_BAND:.0%}.")


def main() -> None:
    config = ui.current_config()

    st.title("Memory log")
    st.html(ui.badges_html(config))
    st.caption("Every decision is logged as pending, then settled against the market after its holding window "
               f"({config['holding_days']} trading days): raw return, alpha versus the benchmark, and a reflection.")

    settle_section(config)

    path = Path(config["memory_log_path"])
    df, texts, problems = load_log(config)
    show_problems(problems, path)
    if not len(df):
        st.info("The memory log is empty. Each analysis you run on the **Run** page adds its decision here as "
                "pending; **Settle now** (or the next run of the same ticker) fills in the return and alpha once "
                "the holding window has passed.")
        st.page_link("pages/run.py", label="Go to the Run page", icon=":material/rocket_launch:")
        return

    view, filters = filtered(df)
    m = st.container(horizontal=True, wrap=True)
    settled = charts.settled_rows(view)
    m.metric("Decisions", f"{len(view):,}", width=140)
    m.metric("Pending", f"{int((view['status'] == 'pending').sum()):,}", width=140)
    m.metric("Settled", f"{len(settled):,}", width=140)
    m.metric("Average alpha", f"{settled['alpha'].mean():+.2%}" if len(settled) else charts.DASH, width=140)
    if len(view) != len(df):
        st.caption(f"{len(view):,} of the {len(df):,} decisions in the log match the filters.")

    charts_section(view)

    st.subheader("Decisions and reflections")
    newest = view.sort_values(["date", "ticker"], ascending=[False, True], kind="stable")
    first, last = paginate(len(newest), filters)
    page = newest.iloc[first:last]
    st.dataframe(charts.log_table(page), hide_index=True, width="stretch", key="log_table")
    st.caption("Entry and exit are the closes the return was measured between; the benchmark's return is over "
               f"the same window and alpha = raw return − benchmark return. {charts.DASH} marks a value that "
               "does not exist yet (pending) or that older entries did not record.")
    for row in page.itertuples(index=False):
        decision, reflection, invented = texts.get((row.date, row.ticker), ("", "", False))
        tag = f"alpha {row.alpha:+.1%}" if row.status == "settled" and row.alpha == row.alpha else "pending"
        tag += " · invented instrument" if invented else ""
        with st.expander(f"{row.date} · {row.ticker} · {row.rating} · {tag}"):
            # model text: Markdown rendered safely, "$120 and $130" stays prices (st.markdown would typeset math)
            st.html(f"<b>Decision</b>{situation_html(decision or '_none_')}")
            who = [f"{what} {v}" for what, v in (("run by", getattr(row, "by", None)),
                                                 ("settled by", getattr(row, "settled_by", None)))
                   if isinstance(v, str) and v]
            if who:
                st.caption(" · ".join(who).capitalize())
            if reflection:
                st.html(f"<b>Reflection</b>{situation_html(reflection)}")

    if path.exists():
        st.download_button("Download the raw log (Markdown)", lambda: path.read_bytes(),
                           file_name="trading_memory.md", mime="text/markdown", key="dl_log",
                           icon=":material/download:")


main()
