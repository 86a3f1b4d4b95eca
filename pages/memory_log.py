"""Memory log page: decisions with their outcome, filters, settle-now, alpha charts, reflections."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from studio import charts, ui
from tradingagents.agents.utils.rating import HOLD_BAND, RATINGS_5_TIER, direction
from tradingagents.storage import open_memory_log

ui.require_router()


def main() -> None:
    config = ui.current_config()

    st.title("Memory log")
    st.html(ui.badges_html(config))
    st.caption("Every decision is logged as pending, then settled against the market after its holding window "
               f"({config['holding_days']} trading days): raw return, alpha versus the benchmark, and a reflection.")

    top_a, top_b = st.columns([1, 4])
    if top_a.button("Settle now", type="primary", key="settle_now", icon=":material/balance:",
                    help="Settle every pending decision whose holding window has closed."):
        with st.spinner("Settling pending decisions against the market…"):
            try:
                from tradingagents.graph.settlement import Settler

                outcome = Settler(config, api_key=ui.api_key()).settle()
            except Exception as exc:  # noqa: BLE001 - shown to the user with what to do
                st.session_state["settle_result"] = ("error", str(exc) or type(exc).__name__)
            else:
                st.session_state["settle_result"] = ("ok", (list(outcome.settled), list(outcome.pending)))

    result = st.session_state.get("settle_result")
    if result:
        kind, payload = result
        with top_b:
            if kind == "error":
                st.error(f"Settling failed: {payload} Check the data source in the sidebar and try again.")
            else:
                settled, pending = payload
                if settled:
                    st.success(f"Settled {len(settled)} decision(s).")
                    st.dataframe(
                        [{"ticker": r.get("ticker"), "date": r.get("date"), "rating": r.get("rating"),
                          "raw": f"{r['raw']:+.1%}" if r.get("raw") is not None else "",
                          "alpha": f"{r['alpha']:+.1%}" if r.get("alpha") is not None else "",
                          "benchmark": r.get("benchmark"), "holding": r.get("holding")} for r in settled],
                        hide_index=True, width="stretch", key="settled_table",
                    )
                elif not pending:
                    st.info("Nothing to settle: the log has no pending decision.")
                if pending:
                    st.warning(f"{len(pending)} decision(s) still pending:")
                    st.dataframe([{"ticker": p.get("ticker"), "date": p.get("date"), "why": p.get("reason")}
                                  for p in pending], hide_index=True, width="stretch", key="pending_table")

    log = open_memory_log(config)  # files, or the desk's database
    entries = log.load_entries()
    if not entries:
        st.info("The memory log is empty. Each analysis you run on the **Run** page adds its decision here as "
                "pending; **Settle now** (or the next run of the same ticker) fills in the return and alpha once "
                "the holding window has passed.")
        st.page_link("pages/run.py", label="Go to the Run page", icon=":material/rocket_launch:")
        return

    df = charts.log_frame(entries)
    f1, f2, f3 = st.columns(3)
    tickers = f1.multiselect("Ticker", sorted(df["ticker"].unique()), key="log_tickers")
    ratings = f2.multiselect("Rating", [r for r in charts.RATING_COLORS if r in set(df["rating"])], key="log_ratings")
    status = f3.segmented_control("Status", ["all", "pending", "settled"], default="all", key="log_status")
    view = df
    if tickers:
        view = view[view["ticker"].isin(tickers)]
    if ratings:
        view = view[view["rating"].isin(ratings)]
    if status in ("pending", "settled"):
        view = view[view["status"] == status]

    m = st.columns(4)
    settled_df = view[view["status"] == "settled"]
    m[0].metric("Decisions", len(view))
    m[1].metric("Pending", int((view["status"] == "pending").sum()))
    m[2].metric("Settled", len(settled_df))
    m[3].metric("Average alpha", f"{settled_df['alpha'].mean():+.2%}" if len(settled_df) else "—")

    st.dataframe(
        view.assign(raw=view["raw"] * 100, alpha=view["alpha"] * 100),
        hide_index=True, width="stretch", key="log_table",
        column_config={
            "raw": st.column_config.NumberColumn("raw return", format="%+.2f%%"),
            "alpha": st.column_config.NumberColumn("alpha", format="%+.2f%%"),
            "holding": st.column_config.NumberColumn("holding days"),
        },
    )

    if len(settled_df):
        c1, c2 = st.columns(2)
        c1.plotly_chart(charts.alpha_figure(view), width="stretch", key="alpha_chart")
        c2.plotly_chart(charts.cumulative_alpha_figure(view), width="stretch", key="cum_alpha_chart")
        stats = charts.rating_stats(view)
        s1, s2 = st.columns([3, 2])
        s1.plotly_chart(charts.rating_stats_figure(stats), width="stretch", key="rating_chart")
        s2.dataframe(stats.assign(hit_rate=stats["hit_rate"] * 100, avg_alpha=stats["avg_alpha"] * 100),
                     hide_index=True, width="stretch", key="rating_stats",
                     column_config={"hit_rate": st.column_config.NumberColumn("hit rate", format="%.0f%%"),
                                    "avg_alpha": st.column_config.NumberColumn("avg alpha", format="%+.2f%%")})
        tiers = {d: "/".join(r for r in RATINGS_5_TIER if direction(r) == d) for d in (1, -1, 0)}
        s2.caption(f"A hit is the reflections' own rule on the exact alpha: {tiers[1]} need alpha above 0, "
                   f"{tiers[-1]} below 0, {tiers[0]} within ±{HOLD_BAND:.0%}.")
    else:
        st.info("Charts appear once a decision is settled.")

    st.subheader("Decisions and reflections")
    by_key = {(str(e.get("date")), str(e.get("ticker"))): e for e in entries}
    for _, row in view.sort_values("date", ascending=False).iterrows():
        e = by_key.get((row["date"], row["ticker"]), {})
        if row["status"] == "settled" and row["alpha"] == row["alpha"]:
            tag = f"alpha {row['alpha']:+.1%}"
        else:
            tag = "pending"
        with st.expander(f"{row['date']} · {row['ticker']} · {row['rating']} · {tag}"):
            st.markdown("**Decision**")
            st.markdown(e.get("decision") or "_none_")
            if e.get("reflection"):
                st.markdown("**Reflection**")
                st.markdown(e["reflection"])

    path = Path(config["memory_log_path"])
    if path.exists():
        st.download_button("Download the raw log (Markdown)", path.read_bytes(), file_name="trading_memory.md",
                           mime="text/markdown", key="dl_log", icon=":material/download:")



main()
