"""Backtest page: the team over a date range, live, then scored like the paper against the baselines."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from studio import backtest_view as view
from studio import links, ui
from studio.charts import plotly_config
from studio.ui import _, rating_label, tr
from tradingagents.backtest.engine import TEAM, TEAM_NO_MEMORY, BacktestSpec, list_backtests
from tradingagents.errors import TradingAgentsError
from tradingagents.i18n import N_

if callable(getattr(ui, "require_router", None)):
    ui.require_router()

POLL_S = 1.0
PORTFOLIO_NAMES = {"none": N_("none"), "equal": N_("equal"), "conviction": N_("conviction")}
RUN_PAGE = "pages/run.py"
DEBATES_PAGE = "pages/debates.py"


def _link(page: str, label: str, params: dict[str, str]) -> None:
    """A link to a run's page; a plain markdown link when that page is not in this app's navigation."""
    try:
        st.page_link(page, label=label, query_params=params, icon=":material/open_in_new:")
    except StreamlitAPIException:
        st.markdown(f"[{label}]({links.page_url(Path(page).stem, params, lang=ui.language())})")


def _read_outputs(folder: str) -> dict | None:
    path = Path(folder)
    if not (path / "metrics.json").is_file():
        return None
    metrics = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
    effect = metrics.pop("memory_effect", None)  # the ablation's summary, not a ticker
    return {"metrics": metrics, "memory_effect": effect,
            "equity": pd.read_csv(path / "equity.csv"),
            "decisions": pd.read_csv(path / "decisions.csv")}


@st.fragment(run_every=POLL_S)
def live(backtest_id: str) -> None:
    registry, me, t = ui.get_registry(), ui.owner(), tr()
    view_config = plotly_config(t)  # Plotly's own mode bar and month names in the page's language
    handle = registry.backtest(backtest_id)
    if handle is None or not handle.running:
        st.rerun()
        return
    p = handle.progress()
    head, stop_col = st.columns([5, 1])
    head.subheader(_("Backtesting {tickers} · {status}", tickers=", ".join(handle.backtest.spec.tickers),
                     status=view.status_name(handle.status, t)), anchor=False)
    if handle.backtest.spec.blind:
        head.badge(_("Blind"), icon=":material/visibility_off:", color="violet")
    if not handle.can_control(me):
        st.caption(_("This backtest was started in another browser: you can watch it; only that browser can stop "
                     "or resume it."))
    elif stop_col.button(_("Stop"), key="bt_stop", icon=":material/stop_circle:",
                         help=_("Stops at the next agent step; every finished step is kept. Resume later.")):
        registry.stop(backtest_id, owner=me)
        st.toast(_("Stopping after the current agent step…"))
    st.progress(p["fraction"], text=view.eta_text(p, t=t))
    st.html(f'<span class="ta-bt-state" data-id="{handle.id}" data-done="{p["done"]}" data-total="{p["total"]}">'
            "</span>")
    for ticker in handle.backtest.spec.tickers:
        curves = {}
        days: list[str] = []
        for variant in handle.backtest.spec.variants:
            d, e = handle.backtest.live_equity(ticker, variant)
            if e:
                curves[variant] = e
                days = d if len(d) > len(days) else days
        if curves:
            plan = handle.backtest.plans[ticker]
            closes = plan.closes[: len(days)]
            curves["Buy & Hold"] = [c / closes[0] for c in closes]
            st.plotly_chart(view.equity_figure(days, curves, title=_("{ticker}: equity so far", ticker=ticker), t=t),
                            width="stretch", config=view_config,
                            key=f"live_{ticker}")


def render_verdict(outputs: dict) -> None:
    """One card on top of the results: is there evidence of an edge over Buy & Hold (the backtest's own
    p-values and no-edge control), with the forest plot of the intervals."""
    t = tr()
    verdict = view.edge_verdict(outputs["metrics"], t=t)
    with st.container(border=True, key="bt_verdict"):
        st.markdown(("### :material/verified: " if verdict["evidence"] else "### :material/balance: ")
                    + verdict["headline"])
        for line in verdict["lines"]:
            st.markdown(f"- {line}")
        st.caption(_("Evidence means the team ahead of Buy & Hold with a one-sided p below {alpha} and, with "
                     "no-edge worlds, above their 95th percentile (the no-skill range).",
                     alpha=f"{view.SIGNIFICANCE:g}"))
        st.plotly_chart(view.forest_figure(outputs["metrics"], t=t), width="stretch", config=plotly_config(t),
                        key="bt_forest")


def render_results(handle, outputs: dict) -> None:
    t = tr()
    view_config = plotly_config(t)
    st.subheader(_("Results"), anchor=False)
    render_verdict(outputs)
    st.caption(_("CR cumulative return, ARR annualised, SR Sharpe ratio (daily, risk-free 0), MDD maximum drawdown; "
                 "hit rate and alpha of the team's decisions over their holding window. Percentages."))
    short = view.short_period({k: len(plan.days) for k, plan in handle.backtest.plans.items()})
    if short is not None:
        st.caption(_("ARR and alpha per year are not shown: {days} trading days are under a year, and an "
                     "annualised figure would overstate them.", days=short))
    table = view.paper_table(outputs["metrics"], t=t, days=short)
    st.dataframe(table, hide_index=True, width="stretch", height=min(38 + 35 * len(table), 900))
    st.caption(_("Costs are charged on every strategy per unit of turnover (Cost bps); the 95% intervals are from a "
                 "stationary block bootstrap of the daily returns; p vs B&H is one-sided (the team's mean daily "
                 "return above Buy & Hold's). PORTFOLIO is the watchlist as one book."))
    for line in view.control_text(outputs["metrics"], t=t):  # the engine's report sentences (its catalogue)
        st.info(line, icon=":material/casino:")
    effect = outputs.get("memory_effect")
    if effect is not None:
        st.markdown(_("**What memory changed**: {differing} of {compared} decisions differ (alpha difference over "
                      "those days {difference}).", differing=effect["differing"], compared=effect["compared"],
                      difference=f"{effect['alpha_difference']:+.2%}"))
        if effect["decisions"]:
            st.dataframe(view.effect_table(effect["decisions"], t=t), hide_index=True, width="stretch")
    equity = outputs["equity"]
    decisions = outputs["decisions"]
    for ticker in handle.backtest.spec.tickers:
        plan = handle.backtest.plans[ticker]
        rows = equity[equity["ticker"] == ticker]
        curves = {s: list(g["equity"]) for s, g in rows.groupby("strategy", sort=False)}
        st.subheader(ticker, anchor=False)
        t1, t2, t3 = st.tabs([_("Equity vs baselines"), _("Drawdown"), _("Ratings over the price")])
        with t1:
            st.plotly_chart(view.equity_figure(plan.days, curves, t=t), width="stretch", config=view_config, key=f"eq_{ticker}")
        with t2:
            st.plotly_chart(view.drawdown_figure(plan.days, curves, t=t), width="stretch", config=view_config, key=f"dd_{ticker}")
        with t3:
            mine = decisions[decisions["ticker"] == ticker].to_dict("records")
            st.plotly_chart(view.ratings_figure(plan.days, plan.closes, mine, ticker, t=t), width="stretch", config=view_config,
                            key=f"rt_{ticker}")
    folder = Path(handle.backtest.folder)
    with st.container(horizontal=True):  # buttons as wide as their labels, wrapping on a narrow window (never cut)
        st.download_button(_("Report (HTML)"), (folder / "report.html").read_bytes(), file_name=f"{handle.id}.html",
                           mime="text/html", key="bt_dl_html", icon=":material/download:")
        st.download_button(_("Report (Markdown)"), (folder / "report.md").read_bytes(), file_name=f"{handle.id}.md",
                           mime="text/markdown", key="bt_dl_md", icon=":material/download:")
        st.download_button(_("Equity (CSV)"), (folder / "equity.csv").read_bytes(),
                           file_name=f"{handle.id}_equity.csv", mime="text/csv", key="bt_dl_eq",
                           icon=":material/download:")


def render_steps(handle, config: dict) -> None:
    t = tr()
    manifest = handle.backtest.manifest.doc
    variants = handle.backtest.spec.variants
    variant = (st.radio(_("Steps of"), variants, horizontal=True, key="bt_steps_variant",
                        format_func=lambda v: view.strategy_name(v, t)) if len(variants) > 1 else TEAM)
    frame = view.steps_frame(manifest, variant)
    note = view.steps_note(handle.progress(), len(frame), t=t)
    if note:
        st.caption(note)
    if frame.empty:
        return
    st.dataframe(view.steps_display(frame, t=t), hide_index=True, width="stretch", height=240)
    labels = [f"{r.ticker} · {r.date} · {rating_label(r.rating)}" for r in frame.itertuples()]
    pick = st.selectbox(_("Open a step's run and debates"), range(len(labels)), format_func=lambda i: labels[i],
                        index=len(labels) - 1, key="bt_step_pick", placeholder=_("Choose an option"))
    row = frame.iloc[pick]
    params = {"ticker": str(row["ticker"]), "date": str(row["date"])}
    if variant == TEAM_NO_MEMORY:
        params.update({"backtest": handle.id, "variant": "no_memory"})
    a, b = st.columns(2)
    with a:
        _link(RUN_PAGE, _("Run {ticker} {date}", ticker=params["ticker"], date=params["date"]), params)
    with b:
        _link(DEBATES_PAGE, _("Debates {ticker} {date}", ticker=params["ticker"], date=params["date"]), params)
    st.caption(_("Saved in `{folder}`", folder=view.home_path(row["run folder"], config["home"])))


def _form(config: dict, today: dt.date) -> tuple[BacktestSpec | None, bool, bool]:
    """The backtest's settings and Start: (the spec, or None when the settings do not make one; Start clicked;
    paid models)."""
    t = tr()
    with st.container(border=True):
        st.text_input(_("Tickers"), key="bt_tickers", placeholder=_("e.g. NVDA,AAPL"), help=_("Comma-separated."))
        c2, c3, c4 = st.columns(3, vertical_alignment="bottom")  # room for a whole YYYY/MM/DD at 800 px
        c2.date_input(t.p("date range", "Start"), key="bt_start", max_value=today, min_value=dt.date(1990, 1, 1))
        c3.date_input(t.p("date range", "End"), key="bt_end", max_value=today, min_value=dt.date(1990, 1, 1))
        c4.number_input(_("Every N trading days"), min_value=1, max_value=250, step=1, key="bt_every")
        with st.container(horizontal=True, vertical_alignment="bottom"):  # wraps at 800 px instead of cutting labels
            st.toggle(_("Compare without memory"), key="bt_compare",
                      help=_('Runs the same dates again with no past context and no role memories ("TradingAgents (no '
                             "memory)\"), kept apart from the desk's log and lessons."))
            st.toggle(_("Allow short"), key="bt_short", help=_("Underweight −0.5 and Sell −1.0 (default long-only: 0)."))
            st.toggle(_("Blind"), key="bt_blind",
                      help=_("The models see an alias, dates shifted by 28 years and rebased prices, never the real "
                             "ticker, name or calendar; results are shown and stored in real names."))
            st.number_input(_("Cost (bps per unit of turnover)"), min_value=0.0, max_value=1000.0, step=1.0,
                            key="bt_cost", width=220, help=_("Charged on every strategy; 0 is the paper's setting."))
            st.selectbox(_("Watchlist as one book"), ("none", "equal", "conviction"), key="bt_portfolio", width=200,
                         format_func=lambda k: t(PORTFOLIO_NAMES[k]), placeholder=_("Choose an option"),
                         help=_("Also score the tickers as one portfolio (PORTFOLIO): equal weights or weights from the "
                                "ratings."))
            st.number_input(_("No-edge worlds"), min_value=0, max_value=200, step=1, key="bt_control", width=160,
                            help=_("Also run the same configuration on N random-walk worlds with no edge."))
        s = st.session_state
        spec = None
        try:
            spec = BacktestSpec.make(s["bt_tickers"], s["bt_start"], s["bt_end"], int(s["bt_every"]), s["bt_compare"],
                                     s["bt_short"], float(s["bt_cost"]), control=int(s["bt_control"]),
                                     portfolio=None if s["bt_portfolio"] == "none" else s["bt_portfolio"],
                                     blind=bool(s["bt_blind"]))
        except TradingAgentsError as exc:
            st.warning(str(exc), icon=":material/edit:")  # the engine's message (its catalogue)
        paid = config.get("llm_provider") != "offline"
        confirmed = True
        if spec is not None:
            steps = view.estimate_steps(spec.tickers, spec.start, spec.end, spec.every, spec.compare_memory,
                                        spec.control)
            if paid:
                st.info(view.cost_estimate_text(steps, config, t=t), icon=":material/payments:")
                st.number_input(_("Budget (USD)"), key="bt_budget", min_value=0.0, step=0.5, width=220,
                                help=_("0 = no budget. The whole backtest (every step, and the reflections settling "
                                       "due decisions) stops at a checkpoint before it would go over; start it again "
                                       "with a larger budget to continue."))
                confirmed = st.checkbox(_("I understand this backtest makes paid model calls"), key="bt_confirm")
            else:
                st.caption(_("About {n} steps on the offline engine (no model calls, no cost).", n=steps))
        start = st.button(_("Start backtest"), type="primary", icon=":material/play_arrow:", key="bt_start_btn",
                          disabled=spec is None or not confirmed)
    return spec, start, paid


def _start(config: dict, spec: BacktestSpec, paid: bool) -> None:
    try:
        budget = float(st.session_state.get("bt_budget") or 0.0) if paid else 0.0
        backtest_id = ui.get_registry().start_backtest(spec, config, api_key=ui.api_key(), owner=ui.owner(),
                                              max_cost_usd=budget or None)
    except TradingAgentsError as exc:
        st.error(str(exc), icon=":material/error:")
    else:
        st.session_state["bt_id"] = backtest_id
        st.query_params["bt"] = backtest_id
        st.rerun()


def _ended(config: dict, handle) -> None:
    """A backtest that is not running: its state, Resume when it stopped or failed, its results when finished."""
    t, me = tr(), ui.owner()
    spec_shown = handle.backtest.spec
    p = handle.progress()
    st.subheader(_("{tickers} · {start} → {end} · every {every} · {status}",
                   tickers=", ".join(spec_shown.tickers), start=spec_shown.start, end=spec_shown.end,
                   every=spec_shown.every, status=view.status_name(handle.status, t)), anchor=False)
    if spec_shown.blind:
        st.badge(_("Blind"), icon=":material/visibility_off:", color="violet")
        st.caption(_("A blind backtest: the models saw an alias, shifted dates and rebased prices; results are "
                     "shown in real names."))
    st.html(f'<span class="ta-bt-state" data-id="{handle.id}" data-status="{handle.status}" '
            f'data-done="{p["done"]}" data-total="{p["total"]}"></span>')
    if handle.status in ("stopped", "failed", "planned"):
        if handle.status == "failed":
            st.error(_("The backtest failed: {error}", error=handle.error))
        elif handle.status == "stopped":
            st.warning(_("Stopped after {done} of {total} steps. Resume continues where it stopped; no finished "
                         "step is redone.", done=p["done"], total=p["total"]))
            if handle.error:  # the budget was reached (the engine's words)
                st.warning(handle.error, icon=":material/payments:")
        if not handle.can_control(me):
            st.caption(_("This backtest was started in another browser: only that browser can resume it."))
        elif st.button(_("Resume"), type="primary", key="bt_resume", icon=":material/play_circle:"):
            ui.get_registry().resume(handle.id, owner=me, api_key=ui.api_key())
            st.rerun()
    if handle.status == "finished":
        outputs = _read_outputs(str(handle.backtest.folder))
        if outputs is None:
            st.error(_("The backtest's outputs are missing from its folder; Resume writes them again."))
        else:
            render_results(handle, outputs)


def _shown(config: dict, handle) -> None:
    st.divider()
    if handle.running:
        live(handle.id)
    else:
        _ended(config, handle)
    st.subheader(_("Steps"), anchor=False)
    render_steps(handle, config)
    st.caption(_("Folder: `{folder}`", folder=view.home_path(handle.backtest.folder, config["home"])))


def _past(config: dict) -> None:
    t, registry = tr(), ui.get_registry()
    st.divider()
    st.subheader(_("Past backtests"), anchor=False)
    past = list_backtests(config)
    if not past:
        st.caption(_("None yet in this home folder."))
    else:
        def _live(row):
            job = registry.get(row["id"], "backtest")
            return None if job is None else {"status": job.status, **{k: job.progress().get(k) for k in ("done", "total")}}

        labels = [view.past_label(r, _live(r), t=t) for r in past]
        col_a, col_b = st.columns([4, 1])
        pick = col_a.selectbox(_("Open a backtest"), range(len(past)), format_func=lambda i: labels[i], key="bt_past_pick",
                               placeholder=_("Choose an option"))
        if col_b.button(_("Open"), key="bt_open", icon=":material/folder_open:"):
            st.session_state["bt_id"] = past[pick]["id"]
            st.query_params["bt"] = past[pick]["id"]
            st.rerun()


def main() -> None:
    config = ui.current_config()
    registry = ui.get_registry()
    st.title(_("Backtest"), anchor=False)
    st.html(ui.badges_html(config))
    st.caption(_("The team over a date range, one decision every N trading days per ticker, learning as it goes "
                 "(each step settles what is due first and sees only outcomes known by its date), scored like the "
                 "TradingAgents paper against Buy & Hold, MACD, KDJ & RSI, ZMR and SMA on the same prices."))

    today = dt.date.today()
    for k, v in (("bt_tickers", "NVDA"), ("bt_start", today - dt.timedelta(days=182)), ("bt_end", today - dt.timedelta(days=1)),
                 ("bt_every", 5), ("bt_compare", False), ("bt_short", False), ("bt_cost", 5.0),
                 ("bt_portfolio", "none"), ("bt_control", 0), ("bt_blind", False), ("bt_budget", 0.0)):
        st.session_state.setdefault(k, v)
    spec, start, paid = _form(config, today)
    if start and spec is not None:
        _start(config, spec, paid)
    # which backtest to show: the URL wins (refresh), then the session
    backtest_id = st.query_params.get("bt") or st.session_state.get("bt_id")
    handle = registry.backtest(backtest_id, config) if backtest_id else None
    if backtest_id and handle is None:
        st.warning(_("That backtest is not in this home folder any more. Start it again above."))
    if backtest_id:
        ui.keep_in_url("bt", "bt_id", handle.id if handle is not None else None)
    if handle is not None:
        _shown(config, handle)
    _past(config)


main()
