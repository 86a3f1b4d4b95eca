"""Run page: start an analysis, watch it live, stop/resume it, read the result, reopen past runs."""

from __future__ import annotations

import datetime as dt
import html

import streamlit as st

from studio import charts, export, ui
from studio.runs import ANALYST_LABELS, REPORT_TITLES, RunHandle
from tradingagents import team
from tradingagents.default_config import ROUND_LIMITS
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.storage import list_runs, load_run

ui.require_router()

POLL_S = 0.5

config = ui.current_config()
registry = ui.get_registry()


def last_business_day(today: dt.date | None = None) -> dt.date:
    """The most recent completed weekday before today."""
    day = (today or dt.date.today()) - dt.timedelta(days=1)
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day


def _clock(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%H:%M:%S") if ts else ""


def finishes_attr(progress) -> str:
    """Every node-finish time of the run, so a page (and the app bench) can tell what it shows."""
    return ",".join(f"{iv['end']:.3f}" for iv in progress.intervals if iv.get("end") is not None)


def agent_board_html(progress) -> str:
    rows = []
    for team_name, agents in progress.teams.items():
        rows.append(f'<div class="ta-team">{html.escape(team_name)}</div>')
        for a in agents:
            if a.status == "done":
                times = f"{_clock(a.started)} → {_clock(a.finished)} · {a.duration_s:.1f}s"
            elif a.status == "running":
                times = f"since {_clock(a.started)} · {a.duration_s:.1f}s"
            else:
                times = "pending"
            finished = f"{a.finished:.3f}" if (a.status == "done" and a.finished) else ""
            rows.append(
                f'<div class="ta-agent {a.status}" data-agent="{html.escape(a.agent)}" '
                f'data-status="{a.status}" data-finished="{finished}">'
                f'<span><i class="dot"></i>{html.escape(a.agent)}</span>'
                f'<span class="t">{times}</span></div>'
            )
    return f'<div class="ta-board" data-finishes="{finishes_attr(progress)}">' + "".join(rows) + "</div>"


def render_progress(handle: RunHandle, *, live: bool) -> None:
    p = handle.progress()
    label = f"{p.current} is working…" if (live and p.current) else f"{p.fraction:.0%} of agents done"
    st.progress(p.fraction, text=label)
    c = st.columns(5)
    c[0].metric("Elapsed", f"{p.elapsed_s:.1f}s")
    c[1].metric("LLM calls", p.counters["llm_calls"])
    c[2].metric("Tool calls", p.counters["tool_calls"])
    c[3].metric("Tokens in", f"{p.counters['input_tokens']:,}")
    c[4].metric("Tokens out", f"{p.counters['output_tokens']:,}")
    left, right = st.columns([2, 3])
    with left:
        if not p.agents:
            st.caption("Starting: the board appears with the engine's plan of agents.")
        st.html(agent_board_html(p))
    with right:
        t_reports, t_tools, t_time = st.tabs(["Reports so far", "Tool calls", "Timeline"])
        with t_reports:
            if not p.reports:
                st.caption("Reports appear here as each agent finishes.")
            for key, text in p.reports.items():
                with st.expander(REPORT_TITLES.get(key, key), expanded=False):
                    st.markdown(text)
        with t_tools:
            if not p.tool_calls:
                st.caption("No tool call yet.")
            for call in p.tool_calls[-15:][::-1]:
                args = ", ".join(f"{k}={v!r}" for k, v in (call.get("args") or {}).items())
                st.markdown(f"`{call.get('tool')}({args})` — {call.get('agent') or ''} · "
                            f"{call.get('result_chars', 0)} chars")
        with t_time:
            order = [a.agent for a in p.agents if a.started is not None]
            if live:  # light HTML on every poll; the interactive chart once the run has ended
                st.html(charts.timeline_html(p.intervals, order=order))
            else:
                st.plotly_chart(charts.timeline_figure(p.intervals, order=order), width="stretch",
                                key="timeline_final")


@st.fragment(run_every=POLL_S)
def live_run(run_id: str) -> None:
    handle = registry.get(run_id)
    if handle is None or handle.done:
        st.rerun()
        return
    head, stop_col = st.columns([5, 1])
    head.markdown(f"#### Running **{handle.ticker}** as of {handle.date}")
    if stop_col.button("Stop", key="stop_run", icon=":material/stop_circle:", help="Stops before the next agent step; resume later."):
        registry.stop(run_id)
        st.toast("Stopping after the current step…")
    render_progress(handle, live=True)


@st.cache_data(ttl=600, show_spinner=False)
def _prices(vendor: str, home: str, ticker: str, date: str):
    cfg = {**config, "data_vendor": vendor, "home": home}
    return charts.price_history(cfg, ticker, date)


def render_result(state: dict, rating: str | None, meta: dict, key: str) -> None:
    ticker = state.get("company_of_interest") or meta.get("ticker", "")
    date = state.get("trade_date") or meta.get("date", "")
    top_l, top_r = st.columns([1, 3])
    with top_l:
        st.caption("Portfolio manager's rating")
        st.html(ui.rating_badge_html(rating))
        st.caption(f"{ticker} · {date}")
        if meta.get("llm_label") or meta.get("llm_provider"):
            st.caption(f"LLM: {meta.get('llm_label') or meta.get('llm_provider')} · "
                       f"data: {meta.get('data_label') or meta.get('data_vendor', '')}")
    with top_r:
        with st.container(border=True, height=360):
            st.markdown(state.get("final_trade_decision") or "_No decision text._")
    prices = None
    try:
        prices = _prices(meta.get("data_vendor") or config["data_vendor"], config["home"], ticker, date)
    except Exception as exc:  # noqa: BLE001 - a chart failure must not hide the result
        st.info(f"No price chart: {exc}")
    if prices is not None and len(prices):
        st.caption(f"{ticker} daily prices up to {date} (never after), 20- and 50-day moving averages, volume, "
                   "and the decision day marked")
        st.plotly_chart(charts.price_figure(prices, ticker, date, rating), width="stretch",
                        key=f"price_{key}")
    keys = [k for k in REPORT_TITLES if (state.get(k) or "").strip()]
    if keys:
        tabs = st.tabs([REPORT_TITLES[k] for k in keys])
        for tab, k in zip(tabs, keys, strict=True):
            with tab:
                st.markdown(state[k])
    md = export.report_markdown(state, rating, meta)
    closes = [float(x) for x in prices["Close"].tail(60)] if prices is not None and len(prices) else None
    page = export.report_html(state, rating, meta, closes=closes)
    d1, d2, _ = st.columns([1, 1, 3])
    d1.download_button("Markdown report", md, file_name=f"{ticker}_{date}_report.md",
                       mime="text/markdown", key=f"dl_md_{key}", icon=":material/download:")
    d2.download_button("HTML report", page, file_name=f"{ticker}_{date}_report.html",
                       mime="text/html", key=f"dl_html_{key}", icon=":material/download:")


# ---------------------------------------------------------------------------------------------
st.title("Run an analysis")
st.html(ui.badges_html(config))

for k, v in (("form_ticker", "NVDA"), ("form_date", last_business_day()), ("form_analysts", list(team.ANALYST_KEYS)),
             ("form_debate", 1), ("form_risk", 1),
             ("form_parallel", config.get("analyst_execution") == "parallel")):
    st.session_state.setdefault(k, v)

with st.form("run_form", border=True):
    c1, c2, c3, c4 = st.columns([1.2, 1.2, 1, 1])
    c1.text_input("Ticker", key="form_ticker", placeholder="e.g. NVDA, BRK-B, 7203.T")
    c2.date_input("Analysis date", key="form_date", max_value=dt.date.today(), min_value=dt.date(1990, 1, 1))
    c3.number_input("Debate rounds", min_value=ROUND_LIMITS[0], max_value=ROUND_LIMITS[1], step=1, key="form_debate")
    c4.number_input("Risk rounds", min_value=ROUND_LIMITS[0], max_value=ROUND_LIMITS[1], step=1, key="form_risk")
    a1, a2 = st.columns([4, 1.2])
    a1.multiselect("Analysts", list(team.ANALYST_KEYS), key="form_analysts",
                   format_func=lambda a: ANALYST_LABELS.get(a, a))
    a2.toggle("Analysts in parallel", key="form_parallel",
              help="Run the selected analysts side by side (see the timeline) instead of one after another.")
    submitted = st.form_submit_button("Start analysis", type="primary", icon=":material/play_arrow:")

if submitted:
    s = st.session_state
    busy = [h for h in registry.list() if h.status == "running"
            and h.ticker == (s["form_ticker"] or "").strip().upper()]
    try:
        if busy:
            raise ValidationError(f"An analysis of {busy[0].ticker} is already running; wait for it or stop it.")
        run_config = {**config, "max_debate_rounds": int(s["form_debate"]),
                      "max_risk_discuss_rounds": int(s["form_risk"]),
                      "analyst_execution": "parallel" if s["form_parallel"] else "sequential"}
        run_id = registry.start(s["form_ticker"], s["form_date"], s["form_analysts"], run_config,
                                api_key=ui.api_key())
    except (ValidationError, ConfigError) as exc:
        st.error(str(exc), icon=":material/error:")
    else:
        st.session_state["run_id"] = run_id
        st.session_state.pop("saved_run", None)
        st.query_params.clear()
        st.query_params["run"] = run_id
        st.rerun()

# which run to show: the URL wins (refresh), then the session
run_id = st.query_params.get("run") or st.session_state.get("run_id")
handle = registry.get(run_id)
if run_id and handle is None:
    st.warning("That run is no longer in this server's memory (the server restarted). "
               "Its saved result, if it finished, is under **Past runs** below.")
    st.query_params.pop("run", None)
    st.session_state.pop("run_id", None)
elif handle is not None:
    st.session_state["run_id"] = handle.run_id
    if st.query_params.get("run") != handle.run_id:
        st.query_params["run"] = handle.run_id

if handle is not None:
    st.divider()
    if handle.status == "running":
        live_run(handle.run_id)
    else:
        st.markdown(f"#### {handle.ticker} as of {handle.date} — {handle.status}")
        st.html(f'<span class="ta-run-state" data-run="{handle.run_id}" data-status="{handle.status}" '
                f'data-created="{handle.created_at:.3f}" data-finished="{handle.finished_at or 0:.3f}" '
                f'data-finishes="{finishes_attr(handle.progress())}"></span>')
        if handle.status != "finished":
            kept = " Its checkpoint is kept: Resume continues where it stopped." if handle.resumable else ""
            if handle.status == "failed":
                st.error(f"The run failed: {handle.error}{kept}")
            elif handle.status == "crashed":
                st.error(f"The run crashed: {handle.error} Please report it with the server log; "
                         "Run again tries once more.")
            else:
                st.warning(f"The run was stopped.{kept}")
            again = "Resume" if handle.resumable else "Run again"
            if st.button(again, type="primary", key="resume_run", icon=":material/play_circle:"):
                registry.resume(handle.run_id)
                st.rerun()
            with st.expander("Progress when it ended", expanded=False):
                render_progress(handle, live=False)
        else:
            render_result(handle.final_state or {}, handle.rating, handle.meta, key=handle.run_id)
            if st.toggle("Show run details: agents, tool calls, timeline", key=f"details_{handle.run_id}"):
                render_progress(handle, live=False)

# ---------------------------------------------------------------------------------------------
st.divider()
st.subheader("Past runs")
past = list_runs(config)
if not past:
    st.info("No saved run yet in this home folder. Start an analysis above: its full report is saved "
            "under results/ and can be reopened here.")
else:
    st.dataframe(
        [{"ticker": r["ticker"], "date": r["date"], "rating": r.get("rating"), "LLM": r.get("llm_provider"),
          "data": r.get("data_vendor"), "saved": r.get("saved_at")} for r in past],
        width="stretch", hide_index=True,
    )
    labels = [f"{r['ticker']} · {r['date']} · {r.get('rating') or ''}" for r in past]
    col_a, col_b = st.columns([3, 1])
    pick = col_a.selectbox("Reopen a saved run", range(len(past)), format_func=lambda i: labels[i],
                           key="reopen_pick")
    if col_b.button("Open saved run", key="reopen_btn", icon=":material/folder_open:"):
        st.session_state["saved_run"] = (past[pick]["ticker"], past[pick]["date"])
    saved = st.session_state.get("saved_run")
    if saved:
        try:
            data = load_run(config, saved[0], saved[1])
        except Exception as exc:  # noqa: BLE001 - a damaged file is reported, not raised
            st.error(f"Could not open the saved run {saved[0]} {saved[1]}: {exc}")
        else:
            st.markdown(f"#### Saved run: {saved[0]} as of {saved[1]}")
            render_result(data.get("state") or {}, data.get("rating"), data.get("meta") or {},
                          key=f"saved_{saved[0]}_{saved[1]}")

