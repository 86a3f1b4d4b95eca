"""Run page: start an analysis, watch it live, stop/resume it, read the result, reopen past runs.

URL parameters (shareable links):

- ``?run=<id>``: the run of this server with that id (watch it; only the browser that started it
  may stop or resume it); a refresh restores its settings into the sidebar.
- ``?ticker=NVDA&date=2024-05-10``: the saved run of that ticker and date under ``<home>/results``;
  with ``&backtest=<id>&variant=<name>`` the one under ``<backtests_dir>/<id>/<name>/results``.
- ``?prefill=<URL-encoded JSON>``: prefill the form and sidebar with {ticker, date, analysts,
  debate_rounds, risk_rounds, provider, vendor} ("run again with changes").
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import re
from pathlib import Path

import streamlit as st

from studio import charts, compare, export, runs, ui
from studio.debates import turns_from_events, turns_from_saved
from studio.jobs import RunJob, paused_state, status_label, steered_by_other
from studio.runs import ANALYST_LABELS, REPORT_TITLES
from studio.ui import _, rating_label, tr
from tradingagents import estimates, pricing, team
from tradingagents.config import ROUND_LIMITS
from tradingagents.errors import (
    ConfigError,
    NotAllowed,
    TradingAgentsError,
    UnknownInstrumentError,
    ValidationError,
)
from tradingagents.graph import whatif
from tradingagents.i18n import N_
from tradingagents.storage import engine_label, engines_text, list_runs, load_run
from tradingagents.validation import DATE_FLOOR as DATE_MIN

ui.require_router()

POLL_S = 0.5  # the live board; the reports below it refresh less often
REPORTS_POLL_S = 2.0
WHATIF_POLL_S = 1.0
LIVE_TEXT_CHARS = 4000
PAST_RUNS_SHOWN = 10  # on this page; the History page lists every run
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")

config = ui.current_config()
registry = ui.get_registry()
me = ui.owner()


def last_business_day(today: dt.date | None = None) -> dt.date:
    """The most recent completed weekday before today."""
    day = (today or dt.date.today()) - dt.timedelta(days=1)
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day


def _clock(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%H:%M:%S") if ts else ""


def error_text(exc: BaseException) -> str:
    """What the page says for a refused start or resume: the sidebar's words, never a class name."""
    if isinstance(exc, ConfigError) and (getattr(exc, "key", None) or getattr(exc, "key_env", None)):
        return ui.config_error_text(exc, config)
    if isinstance(exc, UnknownInstrumentError):  # the engine's words name the CLI's flag; this page has a box
        close = " / ".join(exc.suggestions)
        return (_("The demo market does not list {ticker}: did you mean {close}?", ticker=exc.ticker, close=close)
                if close else _("The demo market does not list {ticker}.", ticker=exc.ticker)) + " " + _(
            "It lists the S&P 100, the big ETFs, major listings in Hong Kong, Tokyo, London, India, China, Toronto "
            "and Sydney, and the benchmark indices. To analyse an invented instrument anyway, tick \"Allow an "
            "invented instrument\" under the form.")
    return str(exc)


def finishes_attr(progress) -> str:
    """Every node-finish time of the run, so a page (and the app bench) can tell what it shows."""
    return ",".join(f"{iv['end']:.3f}" for iv in progress.intervals if iv.get("end") is not None)


def agent_board_html(progress) -> str:
    t = tr()
    rows = []
    settle = progress.settle
    if settle:
        if settle["status"] == "running":
            name = html.escape(_("Settling past decisions"))  # (outside the f-string: the extractor finds it)
            rows.append('<div class="ta-agent running" data-step="settle" data-status="running">'
                        f'<span><i class="dot"></i>{name}</span><span class="t">…</span></div>')
        else:
            what = _("{settled} settled · {pending} pending", settled=settle["settled"], pending=settle["pending"])
            name = html.escape(_("Settled past decisions"))
            rows.append(f'<div class="ta-agent done" data-step="settle" data-status="done">'
                        f'<span><i class="dot"></i>{name}</span>'
                        f'<span class="t">{html.escape(what)}</span></div>')
    for team_name, agents in progress.teams.items():
        rows.append(f'<div class="ta-team">{html.escape(t.p("team", team_name))}</div>')
        for a in agents:
            if a.status == "done":
                times = f"{_clock(a.started)} → {_clock(a.finished)} · {a.duration_s:.1f}s"
            elif a.status == "running":
                times = _("since {clock} · {seconds}s", clock=_clock(a.started), seconds=f"{a.duration_s:.1f}")
            else:
                times = _("pending")
            finished = f"{a.finished:.3f}" if (a.status == "done" and a.finished) else ""
            rows.append(
                f'<div class="ta-agent {a.status}" data-agent="{html.escape(a.agent)}" '
                f'data-status="{a.status}" data-finished="{finished}">'
                f'<span><i class="dot"></i>{html.escape(t.p("role", a.agent))}</span>'
                f'<span class="t">{html.escape(times)}</span></div>'
            )
    return f'<div class="ta-board" data-finishes="{finishes_attr(progress)}">' + "".join(rows) + "</div>"


def flow_html() -> str:
    """The team as a compact flow, from the roster's plan: teams in order, then the memory log."""
    t = tr()

    def short(agent: str, suffix: str) -> str:  # "Market" for "Market Analyst" in English; the role's name otherwise
        return agent.removesuffix(suffix) if t.lang == "en" else t.p("role", agent)

    boxes = []
    for group in team.plan(list(team.ANALYST_KEYS)):
        agents = group["agents"]
        joiner = " ⇄ " if group["team"] == "Research Team" and len(agents) > 2 else " · "
        if group["team"] == "Research Team" and len(agents) > 2:
            names = (joiner.join(short(a, " Researcher") for a in agents[:-1])
                     + f" → {t.p('role', agents[-1])}")
        else:
            names = joiner.join(short(a, " Analyst") if group["team"] == "Analyst Team" else t.p("role", a)
                                for a in agents)
        boxes.append(f'<div class="ta-flow-box"><b>{html.escape(t.p("team", group["team"]))}</b>'
                     f'<span>{html.escape(names)}</span></div>')
    log, what = _("Memory log"), _("each decision is settled later against the market and becomes a lesson")
    boxes.append(f'<div class="ta-flow-box"><b>{html.escape(log)}</b><span>{html.escape(what)}</span></div>')
    return '<div class="ta-flow">' + '<div class="ta-flow-arrow">→</div>'.join(boxes) + "</div>"


def render_reports(p) -> None:
    if not p.reports:
        st.caption(_("Reports appear here as each agent finishes."))
        return
    t = tr()
    newest = p.newest_report
    if newest:
        st.markdown("**" + _("Latest: {title}", title=t.p("report", REPORT_TITLES.get(newest, newest))) + "**")
        with st.container(border=True, height=320):
            with st.container(key="ta-engine-latest"):  # the engine's own words (ta-engine-*)
                st.markdown(ui.shown(p.reports[newest]))
    for key, text in reversed(list(p.reports.items())):
        if key != newest:
            with st.expander(t.p("report", REPORT_TITLES.get(key, key)), expanded=False):
                with st.container(key=f"ta-engine-report-{key}"):
                    st.markdown(ui.shown(text))


def render_progress(handle: RunJob, *, live: bool) -> None:
    p = handle.progress()
    t = tr()
    if live and handle.stopping:
        label = _("Stopping after the current step…")
    elif live and p.settle and p.settle["status"] == "running":
        label = _("Settling past decisions of this ticker before the analysis…")
    elif live and runs.running_agents(p):
        label = runs.working_label(runs.running_agents(p), t=t)
    else:
        label = _("{share} of agents done", share=f"{p.fraction:.0%}")
    st.progress(p.fraction, text=label)
    offline = pricing.is_offline(handle.config)
    # one compact row on a wide screen (the board stays in the first screenful), wrapping when narrow
    with st.container(horizontal=True, gap="small", key="ta-run-metrics"):
        st.metric(_("Elapsed"), f"{p.elapsed_s:.1f}s", width="content")
        st.metric(_("LLM calls"), p.counters["llm_calls"], width="content")
        st.metric(_("Tool calls"), p.counters["tool_calls"], width="content")
        st.metric(_("Tokens in"), f"{p.counters['input_tokens']:,}", width="content")
        st.metric(_("Tokens out"), f"{p.counters['output_tokens']:,}", width="content")
        st.metric(_("Cost"), _(pricing.cost_text(p.cost_usd, offline=offline)), width="content",
                  help=None if offline or p.cost_usd is not None else _("A model of this run has no price: set it "
                  "under Model prices in the sidebar."))
    if live and handle.expected_s:
        st.caption(runs.eta_text(handle.expected_s, p.elapsed_s, p.fraction, t=t))
    left, right = st.columns([2, 3])
    with left:
        if not p.agents:
            st.caption(_("Starting: the board appears with the engine's plan of agents."))
        st.html(agent_board_html(p))
    with right:
        if live:
            if p.current:
                st.markdown("**" + _("{agent} — live text", agent=t.p("role", p.current)) + "**")
                # autoscroll: the box follows the text as it grows (the newest words stay in view)
                with st.container(border=True, height=240, autoscroll=True, key="ta-live-text"):
                    text = p.live_text[-LIVE_TEXT_CHARS:]  # the model's words, as they come
                    st.markdown(text or "_" + _("waiting for the model's first words…") + "_")
            # the timeline first: who works when, in plain names (the tool calls are the data tools' code)
            t_time, t_tools = st.tabs([_("Timeline"), _("Tool calls")])
        else:
            t_reports, t_time, t_tools = st.tabs([_("Reports"), _("Timeline"), _("Tool calls")])
            with t_reports:
                render_reports(p)
        with t_tools:
            if not p.tool_calls:
                st.caption(_("No tool call yet."))
            for call in p.tool_calls[-15:][::-1]:
                args = ", ".join(f"{k}={v!r}" for k, v in (call.get("args") or {}).items())
                who = t.p("role", call.get("agent")) if call.get("agent") else ""
                st.markdown(f"`{call.get('tool')}({args})` — " + _("{agent} · {n} chars", agent=who,
                                                                    n=call.get("result_chars", 0)))
        with t_time:
            # the roles by their shared names (the bars' node names too: no engine identifiers on screen)
            order = [t.p("role", a.agent) for a in p.agents if a.started is not None]
            shown = []
            for iv in p.intervals:
                role = t.p("role", iv.get("agent"))
                shown.append({**iv, "agent": role, "node": role})
            if not shown:
                st.caption(_("The timeline starts with the first agent."))
            elif live:  # light HTML on every poll; the interactive chart once the run has ended
                st.html(charts.timeline_html(shown, order=order, t=t))
            else:
                fig = charts.timeline_figure(shown, order=order, t=t)
                st.plotly_chart(fig, width="stretch", key="timeline_final", config=charts.plotly_config(t))


def changes_note(handle: RunJob) -> None:
    if handle.config_changes:
        diff = _("; ").join(f"{_(label)}: {a or '—'} → {b or '—'}" for label, a, b in handle.config_changes)
        st.info(_("Resumed with the settings on screen now, which differ from the run's original: {diff}.",
                  diff=diff), icon=":material/tune:")
    progress = handle.progress()
    if progress.earlier_engines:  # a checkpoint begun under other models (run_started's earlier_engines)
        st.warning(_("This run resumed a checkpoint begun under other models ({earlier}); the rest runs on "
                     "{current}, and the saved run records both. Start afresh runs it all on one.",
                     earlier=engines_text(progress.earlier_engines, t=tr()),
                     current=engine_label(progress.engine, t=tr())),
                   icon=":material/merge_type:")


@st.fragment(run_every=POLL_S)
def live_run(run_id: str) -> None:
    handle = registry.get(run_id, "run")
    if handle is None or handle.done:
        st.rerun()
        return
    mine = handle.can_control(me)
    with st.container(horizontal=True, vertical_alignment="center"):
        st.markdown("#### " + _("Running **{ticker}** as of {date}", ticker=handle.ticker, date=handle.date))
        if mine and not handle.stopping and st.button(
                _("Stop"), key="stop_run", icon=":material/stop_circle:",
                help=_("Stops before the next agent step; resume later.")):
            registry.stop(run_id, owner=me)
    if handle.stopping:
        st.warning(_("Stopping after the current step… No new agent starts; the checkpoint is kept."),
                   icon=":material/hourglass_top:")
    if not mine:
        st.caption(ui.not_yours_text(handle.owner, "stop or resume"))
    changes_note(handle)
    render_progress(handle, live=True)


@st.fragment(run_every=REPORTS_POLL_S)
def live_reports(run_id: str) -> None:
    handle = registry.get(run_id, "run")
    if handle is None or handle.done:
        return
    st.markdown("##### " + _("Reports so far"))
    render_reports(handle.progress())


@st.cache_data(ttl=600, show_spinner=False)
def _prices(vendor: str, home: str, ticker: str, date: str):
    cfg = {**config, "data_vendor": vendor, "home": home}
    return charts.price_history(cfg, ticker, date)


def agent_costs(meta: dict) -> list[dict]:
    """The per-agent rows of a saved run's cost (meta.usage.by_agent), most expensive first."""
    by_agent = ((meta or {}).get("usage") or {}).get("by_agent") or {}
    offline = pricing.is_offline(meta) or pricing.is_offline((meta or {}).get("config"))
    t = tr()
    rows = [{_("Agent"): t.p("role", name), _("Cost"): _(pricing.cost_text(cost, offline=offline)),
             "_sort": cost if isinstance(cost, (int, float)) else -1.0}
            for name, cost in by_agent.items() if isinstance(name, str)]
    rows.sort(key=lambda r: r["_sort"], reverse=True)
    return [{k: v for k, v in r.items() if k != "_sort"} for r in rows]


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
        rows = agent_costs(meta)
        if rows:
            st.dataframe(rows, hide_index=True, width="stretch", key=f"cost_table_{key}")


def _cost_caption(est: dict) -> str:
    if est.get("source") == "offline engine":
        return _("Estimated cost: {cost}", cost=_(pricing.cost_text(0.0, offline=True)))
    if est.get("cost_usd") is None:
        return _("Estimated cost: — (a model has no price; set it under Model prices in the sidebar)")
    if est.get("source") == "this run":
        return _("Estimated cost: about {cost} (what these agents cost in this run)",
                 cost=pricing.cost_text(est["cost_usd"]))
    return _("Estimated cost: about {cost} (a typical run's token counts at the prices in force)",
             cost=pricing.cost_text(est["cost_usd"]))


def whatif_panel(state: dict, rating: str | None, meta: dict, key: str) -> None:
    """"What if…" on a saved run: pick an agent, edit its output in place (or drop an analyst), see the
    cost, run it as a job; "What moved the decision": every analyst dropped in turn, and the chart."""
    ticker = meta.get("ticker") or state.get("company_of_interest")
    date = meta.get("date") or state.get("trade_date")
    if not ticker or not date:
        return
    t = tr()
    with st.expander(_("What if…"), icon=":material/alt_route:", key=f"whatif_{key}"):
        st.caption(_("Change one agent's output and replay the team from there: the agents before it are taken as "
                     "they were. The fork is saved beside this run; the run, the memory log and the role memories "
                     "stay as they are."))
        ran = set(meta.get("analysts") or team.ANALYST_KEYS)
        roles = [k for k in whatif.FORK_ROLES if not team.ROLES[k].is_analyst or k in ran]
        role_key = st.selectbox(_("Agent"), roles, format_func=lambda k: t.p("role", team.ROLES[k].node),
                                key=f"wi_role_{key}")
        role = team.ROLES[role_key]
        turn = None
        current = str(state.get(role.output_key) or "") if role.output_key else ""
        if role.debate:
            turns = [d for d in meta.get("debate_turns") or [] if d.get("role") == role_key]
            if not turns:
                st.caption(_("This agent spoke no turn in this run."))
                return
            turn = st.selectbox(_("Turn"), [int(d["turn"]) for d in turns], key=f"wi_turn_{key}_{role_key}",
                                format_func=lambda n: _("turn {n}", n=n))
            current = next(str(d.get("text") or "") for d in turns if int(d["turn"]) == turn)
        drop = role.is_analyst and st.checkbox(_("Drop this analyst (\"This report is not available.\")"),
                                               key=f"wi_drop_{key}_{role_key}")
        text = st.text_area(_("Its output"), value=current, height=280, key=f"wi_text_{key}_{role_key}_{turn}",
                            disabled=drop)
        try:
            st.caption(_cost_caption(estimates.estimate_fork_cost(config, meta, role_key)))
        except Exception as exc:  # noqa: BLE001 - an estimate must never block the form
            st.caption(_("No cost estimate: {problem}", problem=exc))
        if st.button(_("Run the what-if"), type="primary", key=f"wi_run_{key}", icon=":material/call_split:"):
            spec = whatif.ForkSpec(at=role_key, text=None if drop else text, drop=bool(drop), turn=turn)
            try:
                st.session_state[f"wi_job_{key}"] = registry.start_whatif(
                    ticker, date, config, spec=spec, api_key=ui.api_key(), owner=me)
            except (ValidationError, ConfigError) as exc:
                st.error(error_text(exc), icon=":material/error:")
        job_id = st.session_state.get(f"wi_job_{key}")
        if job_id:
            job = registry.get(job_id, "whatif")
            if job is not None and job.status == "finished" and not st.session_state.get(f"_wi_opened_{job_id}"):
                st.session_state[f"_wi_opened_{job_id}"] = True  # Compare opens once; back here, the link stays
                n = (job.result or {}).get("n")
                if n is not None:
                    st.switch_page("pages/compare.py", query_params={"a": f"{ticker}|{date}",
                                                                     "b": f"{ticker}|{date}|w{n}"})
            whatif_status(job_id, ticker, date)

    with st.expander(_("What moved the decision"), icon=":material/insights:", key=f"attr_{key}"):
        st.caption(_("One fork per analyst with that analyst dropped (\"This report is not available.\"), side by "
                     "side: which analysts, when removed, move the rating, and by how many tiers."))
        attr_id = st.session_state.get(f"attr_job_{key}")
        job = registry.get(attr_id, "whatif") if attr_id else None
        attribution = (job.result or {}).get("attribution") if job is not None and job.result else meta.get("attribution")
        try:
            est = estimates.estimate_attribution_cost(config, ticker, date)
            st.caption(_cost_caption(est))
        except Exception as exc:  # noqa: BLE001
            st.caption(_("No cost estimate: {problem}", problem=exc))
        if st.button(_("Drop each analyst in turn"), key=f"attr_run_{key}", icon=":material/insights:"):
            try:
                st.session_state[f"attr_job_{key}"] = registry.start_whatif(
                    ticker, date, config, attribute=True, api_key=ui.api_key(), owner=me)
            except (ValidationError, ConfigError) as exc:
                st.error(error_text(exc), icon=":material/error:")
            else:
                st.rerun()
        if job is not None and job.status != "finished":
            whatif_status(job.id, ticker, date)
        if attribution:
            st.plotly_chart(charts.attribution_figure(rating, attribution, t=t), config=charts.plotly_config(t),
                            width="stretch", key=f"attr_chart_{key}")


@st.fragment(run_every=WHATIF_POLL_S)
def whatif_status(job_id: str, ticker: str, date: str) -> None:
    job = registry.get(job_id, "whatif")
    if job is None:
        return
    p = job.progress()
    if job.status == "running":
        with st.container(horizontal=True, vertical_alignment="center"):
            if job.attribute:
                st.caption(_("Forks finished: {n}", n=len(p["done_forks"])))
            else:
                st.caption(_("Replaying the team… {n} agent steps done", n=len(p["finished_nodes"])))
            if job.can_control(me) and not job.stopping and st.button(_("Stop"), key=f"wi_stop_{job_id}",
                                                                     icon=":material/stop_circle:"):
                registry.stop(job_id, owner=me)
        return
    if st.session_state.get(f"_wi_seen_{job_id}") != job.status:
        st.session_state[f"_wi_seen_{job_id}"] = job.status
        st.rerun(scope="app")  # the page draws the outcome (and opens Compare for a finished fork)
    if job.status == "finished" and not job.attribute:
        res = job.result or {}
        st.success(_("What if: {base} → {rating}", base=rating_label(res.get("base_rating")),
                     rating=rating_label(res.get("rating"))), icon=":material/call_split:")
        if res.get("n") is not None:
            st.link_button(_("Compare the run and the fork"),
                           compare.compare_link((ticker, date), (ticker, date, f"w{res['n']}"), ui.language()),
                           icon=":material/compare_arrows:")
    elif job.status in ("failed", "crashed"):
        st.error(_("The what-if failed: {problem}", problem=job.error))
    elif job.status == "stopped":
        st.warning(_("The what-if was stopped."))


def render_order(order: object, ticker: str, date: str, key: str) -> None:
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


def render_result(state: dict, rating: str | None, meta: dict, key: str, forkable: bool = True) -> None:
    ticker = state.get("company_of_interest") or meta.get("ticker", "")
    date = state.get("trade_date") or meta.get("date", "")
    # the badge row above the decision: nothing overlaps at 800 px
    with st.container(horizontal=True, vertical_alignment="center"):
        st.html(ui.rating_badge_html(rating))
        llm = meta.get("llm_label") or meta.get("llm_provider")
        if llm:
            st.caption(_("Portfolio manager's rating · {ticker} · {date} · LLM: {llm} · data: {data}", ticker=ticker,
                         date=date, llm=_(llm), data=_(meta.get("data_label") or meta.get("data_vendor", ""))))
        else:
            st.caption(_("Portfolio manager's rating · {ticker} · {date}", ticker=ticker, date=date))
    for line in ui.input_notes(meta):  # invented instrument, session, CSV rows, re-analysis
        st.caption(line)
    # the decision card: what the committee reads first (the horizon the settlement scores beside the stated one)
    decision = export.card(state, meta, rating)
    st.html(export.card_html(decision, export.currency_of(state, meta), t=tr(), meta=meta,
                             without=("rating",)))  # the rating badge above says the rating
    render_order(meta.get("order"), ticker, date, key)
    with st.container(border=True, height=360, key=f"decision_{key}"):
        if state.get("final_trade_decision"):
            with st.container(key=f"ta-engine-decision-{key}"):
                st.markdown(ui.shown(state["final_trade_decision"]))
        else:
            st.markdown("_" + _("No decision text.") + "_")
    ui.render_your_call(config, ticker, date, rating, meta, key)
    ui.render_pm_notes(meta, key)
    prices = None
    try:
        prices = _prices(meta.get("data_vendor") or config["data_vendor"], config["home"], ticker, date)
    except Exception as exc:  # noqa: BLE001 - a chart failure must not hide the result
        st.info(_("No price chart: {problem}", problem=exc))
    if prices is not None and len(prices):
        st.caption(_("{ticker} daily prices up to {date} (never after), 20- and 50-day moving averages, volume, "
                     "and the decision day marked", ticker=ticker, date=date))
        st.plotly_chart(charts.price_figure(prices, ticker, date, rating, t=tr()), config=charts.plotly_config(tr()),
                        width="stretch", key=f"price_{key}")
    t = tr()
    keys = [k for k in REPORT_TITLES if (state.get(k) or "").strip()]
    if keys:
        tabs = st.tabs([t.p("report", REPORT_TITLES[k]) for k in keys])
        for tab, k in zip(tabs, keys, strict=True):
            with tab:
                record = export.evidence_of(meta, k)
                with st.container(key=f"ta-engine-{k}-{key}"):
                    st.markdown(ui.shown(export.marked_text(state[k], record, ticker)))
                if record is not None:
                    render_evidence(record, f"{k}_{key}")
    ui.render_questions(config, ticker, date, meta, key)
    render_cost(meta, key)
    ui.render_remembered(meta, key)
    if forkable and not meta.get("whatif"):
        whatif_panel(state, rating, meta, key)
    md = export.report_markdown(state, rating, meta, t=t)
    closes = [float(x) for x in prices["Close"].tail(60)] if prices is not None and len(prices) else None
    page = export.report_html(state, rating, meta, closes=closes, t=t)
    with st.container(horizontal=True):
        st.download_button(_("Markdown report"), md, file_name=f"{ticker}_{date}_report.md",
                           mime="text/markdown", key=f"dl_md_{key}", icon=":material/download:")
        st.download_button(_("HTML report"), page, file_name=f"{ticker}_{date}_report.html",
                           mime="text/html", key=f"dl_html_{key}", icon=":material/download:")
        st.download_button(_("PDF handout"), _handout(state, rating, meta, closes), file_name=f"{ticker}_{date}_report.pdf",
                           mime="application/pdf", key=f"dl_pdf_{key}", icon=":material/picture_as_pdf:",
                           type="primary", on_click="ignore")


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


def _handout(state: dict, rating: str | None, meta: dict, closes: list[float] | None) -> bytes:
    """The PDF handout of a result, built once per run (a PDF takes about half a second)."""
    cache = st.session_state.setdefault("_pdf_handouts", {})
    ident = (state.get("company_of_interest"), state.get("trade_date"), (meta or {}).get("thread_id"),
             (meta or {}).get("elapsed_s"), rating, tr().lang)
    if ident not in cache:
        if len(cache) > 8:
            cache.clear()
        cache[ident] = export.report_pdf(state, rating, meta, closes=closes, t=tr())
    return cache[ident]


def start_run(ticker, date, analysts, run_config, blind: bool = False, fresh: bool = False) -> bool:
    """Start a run of this browser; False (with the message on screen) when it was refused."""
    norm = (str(ticker or "")).strip().upper()
    day = date.isoformat() if isinstance(date, dt.date) else str(date)
    busy = [h for h in registry.list("run") if h.status == "running" and h.ticker == norm and h.date == day]
    try:
        if busy:
            raise ValidationError(_("An analysis of {ticker} on {date} is already running; wait for it or stop it. "
                                    "Another date of the same ticker can run at the same time.", ticker=norm, date=day))
        run_id = registry.start_run(ticker, date, analysts, run_config, api_key=ui.api_key(), owner=me, blind=blind,
                                    fresh=fresh)
    except (ValidationError, ConfigError) as exc:
        st.error(error_text(exc), icon=":material/error:")
        return False
    show_run(run_id)
    ui.mark_settings_of_run(run_id)
    st.rerun()
    return True


def show_run(run_id: str) -> None:
    st.session_state["run_id"] = run_id
    st.session_state.pop("saved_run", None)
    lang = st.query_params.get("lang")
    st.query_params.clear()
    st.query_params["run"] = run_id
    if lang:  # the address keeps its language
        st.query_params["lang"] = lang


def estimate_caption() -> None:
    """The estimated cost of a run with the sidebar's and the form's settings, next to Start (paid models)."""
    if pricing.is_offline(config):
        return
    s = st.session_state
    cfg = config
    if all(k in s for k in ("form_debate", "form_risk", "form_parallel", "form_analysts")):
        cfg = {**form_config(), "selected_analysts": list(s["form_analysts"]) or None}
    try:
        est = estimates.estimate_run_cost(cfg)
    except Exception as exc:  # noqa: BLE001 - an estimate must never block the form
        st.caption(_("No cost estimate: {problem}", problem=exc))
        return
    if est["cost_usd"] is None:
        st.caption(_("Estimated cost: — (a model has no price; set it under Model prices in the sidebar)"),
                   help=_("Without a price the run is not billed here in dollars; tokens are still counted."))
        return
    cost = pricing.cost_text(est["cost_usd"])
    if est["source"] == "past runs":
        st.caption(tr().n("Estimated cost: about {cost} (the mean of {n} past run with these settings)",
                          "Estimated cost: about {cost} (the mean of {n} past runs with these settings)",
                          est["runs"], cost=cost))
    else:
        st.caption(_("Estimated cost: about {cost} (a typical run's token counts at the prices in force)", cost=cost))


# the offline engine's pause between words at presenter pace: about 25 words a second, readable aloud
# (a comment, not a docstring: Streamlit's magic would draw a bare string of a page on screen)
PRESENTER_PACE_S = 0.04


def form_config() -> dict:
    s = st.session_state
    out = {**config, "max_debate_rounds": int(s["form_debate"]), "max_risk_discuss_rounds": int(s["form_risk"]),
           "analyst_execution": "parallel" if s["form_parallel"] else "sequential",
           "allow_synthetic": bool(s.get("form_allow_synthetic")),
           "pause_before": bool(s.get("form_pause"))}
    if pricing.is_offline(config) and s.get("form_presenter"):
        out["offline_stream_delay_s"] = PRESENTER_PACE_S
    return out


def apply_prefill(data: dict) -> list[str]:
    """?prefill= values into the form's fields (before the form is drawn); bad values are ignored and
    a date the form cannot show is named (it would break the date field for the whole session)."""
    s = st.session_state
    problems = []
    if isinstance(data.get("ticker"), str):
        s["form_ticker"] = data["ticker"][:64]
    if "date" in data:
        try:
            day = dt.date.fromisoformat(str(data["date"]))
        except ValueError:
            problems.append(_("The link's date {date} is not a date (YYYY-MM-DD): the form keeps its date.",
                              date=repr(str(data["date"])[:40])))
        else:
            if DATE_MIN <= day <= dt.date.today():
                s["form_date"] = day
            else:
                problems.append(_("The link's date {date} is outside the dates an analysis can use "
                                  "({first} to today): the form keeps its date.", date=day.isoformat(),
                                  first=DATE_MIN.isoformat()))
    listed = data.get("analysts") if isinstance(data.get("analysts"), list) else []
    analysts = [a for a in listed if isinstance(a, str) and a in team.ANALYST_KEYS]
    if analysts:
        s["form_analysts"] = analysts
    for field, name in (("form_debate", "debate_rounds"), ("form_risk", "risk_rounds")):
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and ROUND_LIMITS[0] <= value <= ROUND_LIMITS[1]:
            s[field] = value
    return problems


def saved_run_from_url() -> tuple[str, str, dict] | None:
    """``?ticker=&date=`` (and ``&backtest=&variant=``): (ticker, date, config whose results_dir holds it;
    a blind run is saved where every run is)."""
    q = st.query_params
    ticker, date = q.get("ticker"), q.get("date")
    if not ticker or not date:
        return None
    cfg = dict(config)
    backtest, variant = q.get("backtest"), q.get("variant")
    if backtest or variant:
        if not (backtest and variant and SAFE_NAME.match(backtest) and SAFE_NAME.match(variant)):
            st.error(_("The link names a backtest run with a bad id or variant: use letters, digits, '.', '_' "
                       "or '-' for both &backtest= and &variant=."))
            return None
        cfg["results_dir"] = str(Path(config["backtests_dir"]) / backtest / variant / "results")
    return ticker, date, cfg


# ---------------------------------------------------------------------------------------------
st.title(_("Run an analysis"))
st.html(ui.badges_html(config))

# the form starts from the resolved settings (TRADINGAGENTS_* included), for every user, signed in or not
for k, v in (("form_ticker", "NVDA"), ("form_date", last_business_day()),
             ("form_analysts", list(config["selected_analysts"])),
             ("form_debate", min(max(int(config["max_debate_rounds"]), ROUND_LIMITS[0]), ROUND_LIMITS[1])),
             ("form_risk", min(max(int(config["max_risk_discuss_rounds"]), ROUND_LIMITS[0]), ROUND_LIMITS[1])),
             ("form_parallel", config.get("analyst_execution") == "parallel")):
    st.session_state.setdefault(k, v)
# everything shown above the form goes into this one slot, so the form keeps its place on the page
# (no stale copy of it while the page reruns after the onboarding or a notice goes away)
notices = st.container()
prefill = st.session_state.pop("_prefill_form", None)
prefill_problems = [p for p in [st.session_state.pop("_prefill_problem", None)] if p]
if prefill:
    prefill_problems += apply_prefill(prefill)
    notices.info(_("The form is prefilled from the link: change what you like, then start the analysis."),
                 icon=":material/edit_note:")
for problem in prefill_problems:
    notices.warning(problem, icon=":material/link_off:")

past = list_runs(config)
offers = registry.checkpointed_runs(config)

# onboarding: the first visit (no run anywhere yet), until dismissed
if st.session_state.pop("_start_example", False):
    example = {**config, "max_debate_rounds": 1, "max_risk_discuss_rounds": 1, "analyst_execution": "sequential"}
    start_run("NVDA", last_business_day(), list(team.ANALYST_KEYS), example)
first_visit = not past and not registry.list("run") and not offers and not st.session_state.get("onboard_dismissed")
if first_visit:
    with notices, st.container(border=True, key="onboarding"):
        st.markdown("#### " + _("Meet the team"))
        st.markdown(_("A team of agents analyses one stock as of one day, the way a trading firm would: analysts "
                      "write reports, two researchers debate them, a trader proposes, a risk committee argues, "
                      "and the portfolio manager decides. Every decision is logged, settled later against the "
                      "market, and remembered as a lesson."))
        st.html(flow_html())
        with st.container(horizontal=True):
            if st.button(_("Run an example"), type="primary", key="run_example", icon=":material/play_arrow:",
                         help=_("NVDA on the last trading day, with the offline engine and synthetic demo data: "
                                "no key, no network, about ten seconds.")):
                ui.queue_settings({"set_provider": "offline", "set_vendor": "demo"})
                st.session_state["_start_example"] = True
                st.session_state["form_ticker"] = "NVDA"
                st.rerun()
            if st.button(_("Dismiss"), key="onboard_dismiss"):
                st.session_state["onboard_dismissed"] = True
                st.rerun()

# runs checkpointed before a server restart
for o in offers[:5]:
    if o.get("paused_before"):  # paused before a verdict: the debate so far, a note box, Continue
        paused = None
        with contextlib.suppress(Exception):  # a checkpoint that cannot be read: offered as a plain resume below
            paused = paused_state(o["config"], o["analysts"], o["ticker"], o["date"])
        if paused is not None:
            may = not steered_by_other(o.get("owner"), me, ui.is_desk_lead)
            with notices:
                note = ui.paused_panel(o["ticker"], o["date"], paused["paused_before"],
                                       turns_from_saved(paused, {"debate_turns": paused.get("debate_turns") or []}),
                                       f"offer_{o['thread_id']}", mine=may)
            if note is not None:
                try:
                    new_id = registry.adopt(o, config=config, api_key=ui.api_key(), owner=me, note=note,
                                            by=ui.user_label())
                except (ValidationError, ConfigError, NotAllowed) as exc:
                    st.error(error_text(exc), icon=":material/error:")
                else:
                    show_run(new_id)
                    st.rerun()
            continue
    with notices, st.container(border=True):
        said = {"stopped": N_("**{ticker} as of {date}** was stopped and is checkpointed at step {step}. Resume "
                              "continues it with the settings on screen now."),
                "failed": N_("**{ticker} as of {date}** failed and is checkpointed at step {step}. Resume continues "
                             "it with the settings on screen now.")}.get(o.get("ended") or "", N_(
            "**{ticker} as of {date}** did not finish before the server restarted (it was stopped, failed or cut "
            "off) and is checkpointed at step {step}. Resume continues it with the settings on screen now."))
        st.markdown(_(said, ticker=o["ticker"], date=o["date"], step=o["step"]))
        if st.button(_("Resume"), key=f"adopt_{o['thread_id']}", icon=":material/play_circle:"):
            try:
                new_id = registry.adopt(o, config=config, api_key=ui.api_key(), owner=me)
            except (ValidationError, ConfigError, NotAllowed) as exc:
                st.error(error_text(exc), icon=":material/error:")
            else:
                show_run(new_id)
                ui.mark_settings_of_run(new_id)
                st.rerun()

# which run to show: the URL wins (refresh), then the session
run_id = st.query_params.get("run") or (None if st.query_params.get("ticker") else st.session_state.get("run_id"))
handle = registry.get(run_id, "run")
# while a run is in progress the form folds into one line, so the agent board is in the first screenful
# (1440×900); it opens again with a click, and after the run it is the page's first section again
running_now = handle is not None and handle.status == "running"
form_slot = (st.expander(_("New analysis"), icon=":material/add_circle:", key="form_folded") if running_now
             else st.container())

# Enter in a field does not submit: a run (maybe a paid one) starts only from the Start button
with form_slot, st.form("run_form", border=True, enter_to_submit=False):
    # the date needs room for YYYY/MM/DD at 800 px; a label that wraps there keeps its input in line
    c1, c2, c3, c4 = st.columns([1, 1.4, 0.8, 0.8], vertical_alignment="bottom")
    c1.text_input(_("Ticker"), key="form_ticker", placeholder=_("e.g. NVDA, BRK-B, 7203.T"))
    c2.date_input(_("Analysis date"), key="form_date", max_value=dt.date.today(), min_value=DATE_MIN)
    c3.number_input(_("Debate rounds"), min_value=ROUND_LIMITS[0], max_value=ROUND_LIMITS[1], step=1,
                    key="form_debate")
    c4.number_input(_("Risk rounds"), min_value=ROUND_LIMITS[0], max_value=ROUND_LIMITS[1], step=1, key="form_risk")
    # rows that wrap rather than squeeze: at 800 px no label or button is cut to "…"
    t = tr()
    st.multiselect(_("Analysts"), list(team.ANALYST_KEYS), key="form_analysts",
                   format_func=lambda a, t=t: t.p("report", ANALYST_LABELS.get(a, a)),
                   placeholder=_("Choose the analysts"))
    with st.container(horizontal=True, gap="large"):
        st.toggle(_("Analysts in parallel"), key="form_parallel",
                  help=_("Run the selected analysts side by side (see the timeline) instead of one after another."))
        if pricing.is_offline(config):
            st.toggle(_("Presenter pace"), key="form_presenter",
                      help=_("The offline engine writes instantly; this streams its words at a readable speed, "
                             "for a demo in front of an audience. The text is the same."))
    st.checkbox(_("Allow an invented instrument"), key="form_allow_synthetic", value=False,
                help=_("The demo market refuses a ticker it does not list (and suggests the closest ones). Tick "
                       "this to analyse a generated, fictional instrument instead: labelled as invented everywhere "
                       "and kept out of other tickers' lessons."))
    st.checkbox(_("Pause before each verdict"), key="form_pause", value=False,
                help=_("The run stops before the Research Manager and before the Portfolio Manager: read the debate "
                       "so far, leave the judge a note (it is read in the judge's prompt and kept with the run), "
                       "then continue."))
    st.checkbox(_("Blind run"), key="form_blind",
                help=_("The models see an alias, dates shifted by 28 years and rebased prices; what is shown and "
                       "stored is mapped back to the real ticker, dates and prices (History and the Memory log list it, marked blind)."))
    st.checkbox(_("Start afresh"), key="form_fresh",
                help=_("A run of this ticker and date that failed or was stopped keeps a checkpoint, and a new run "
                       "resumes it (also under other models: the page then says so). Tick this to discard it "
                       "and run every agent again."))
    with st.container(horizontal=True, vertical_alignment="center"):
        submitted = st.form_submit_button(_("Start analysis"), type="primary", icon=":material/play_arrow:")
        estimate_caption()

if submitted:
    s = st.session_state
    start_run(s["form_ticker"], s["form_date"], s["form_analysts"], form_config(), blind=bool(s.get("form_blind")),
              fresh=bool(s.get("form_fresh")))

if run_id and handle is None:
    st.warning(_("That run is no longer in this server's memory (the server restarted). "
                 "Its saved result, if it finished, is under **Past runs** below; if it was checkpointed, "
                 "Resume is offered above."))
if run_id:
    ui.keep_in_url("run", "run_id", handle.run_id if handle is not None else None)

if handle is not None:
    if not running_now:
        st.divider()
    mine = handle.can_control(me)
    if handle.status == "running":
        live_run(handle.run_id)
        live_reports(handle.run_id)
        ui.render_questions_live(config, handle, handle.run_id)  # ask any agent that has spoken so far
    else:
        st.markdown("#### " + _("{ticker} as of {date} — {status}", ticker=handle.ticker, date=handle.date,
                                status=status_label(handle.status, tr())))
        st.html(f'<span class="ta-run-state" data-run="{handle.run_id}" data-status="{handle.status}" '
                f'data-created="{handle.created_at:.3f}" data-finished="{handle.finished_at or 0:.3f}" '
                f'data-finishes="{finishes_attr(handle.progress())}"></span>')
        changes_note(handle)
        if handle.status != "finished":
            kept = _(" Its checkpoint is kept: Resume continues where it stopped.") if handle.resumable else ""
            if handle.status == "failed" and (handle.error_key or handle.error_key_env):
                named = ConfigError(handle.error or "")
                named.key, named.key_env = handle.error_key, handle.error_key_env  # type: ignore[attr-defined]
                st.error(ui.config_error_text(named, handle.config), icon=":material/settings:")
            elif handle.status == "failed":
                st.error(_("The run failed: {problem}", problem=handle.error) + kept)
            elif handle.status == "crashed":
                st.error(_("The run crashed: {problem} Please report it with the server log; "
                           "Run again tries once more.", problem=handle.error))
            elif handle.paused_before:
                note = ui.paused_panel(handle.ticker, handle.date, handle.paused_before,
                                       turns_from_events(handle.events), handle.run_id, mine=mine)
                if note is not None:
                    try:
                        registry.continue_paused(handle.run_id, note, owner=me, by=ui.user_label(), config=config,
                                                 api_key=ui.api_key())
                    except (ValidationError, ConfigError) as exc:
                        st.error(error_text(exc), icon=":material/error:")
                    else:
                        st.rerun()
            else:
                st.warning(_("The run was stopped.") + kept)
            if handle.paused_before:  # Continue (above) is its resume
                pass
            elif not mine:
                st.caption(ui.not_yours_text(handle.owner, "resume"))
            else:
                again = _("Resume") if handle.resumable else _("Run again")
                hint = (_("Continues from the checkpoint with the settings on screen now.")
                        if handle.resumable else _("Starts it again with the settings on screen now."))
                with st.container(horizontal=True):
                    again_clicked = st.button(again, type="primary", key="resume_run", icon=":material/play_circle:",
                                              help=hint)
                    afresh_clicked = handle.resumable and st.button(
                        _("Start afresh"), key="afresh_run", icon=":material/restart_alt:",
                        help=_("Discards the checkpoint and runs every agent again with the settings on screen now."))
                if again_clicked or afresh_clicked:
                    try:
                        registry.resume(handle.run_id, owner=me, config=config, api_key=ui.api_key(),
                                        fresh=bool(afresh_clicked))
                    except (ValidationError, ConfigError) as exc:
                        st.error(error_text(exc), icon=":material/error:")
                    else:
                        st.rerun()
            with st.expander(_("Progress when it ended"), expanded=False):
                render_progress(handle, live=False)
        else:
            render_result(handle.final_state or {}, handle.rating, handle.meta, key=handle.run_id,
                          forkable=not handle.blind)
            if st.toggle(_("Show run details: agents, tool calls, timeline"), key=f"details_{handle.run_id}"):
                render_progress(handle, live=False)

# a saved run named by the URL (?ticker=&date=, optionally &backtest=&variant=)
linked = saved_run_from_url()
if linked:
    l_ticker, l_date, l_cfg = linked
    try:
        data = load_run(l_cfg, l_ticker, l_date)
    except (OSError, ValueError) as exc:  # a missing or damaged file is reported, not raised
        st.error(_("Could not open the saved run {ticker} {date}: {problem}", ticker=l_ticker, date=l_date,
                   problem=exc))
    else:
        st.divider()
        if st.query_params.get("backtest"):
            st.markdown("#### " + _("Saved run: {ticker} as of {date} (backtest {backtest}, variant {variant})",
                                    ticker=l_ticker.upper(), date=l_date, backtest=st.query_params.get("backtest"),
                                    variant=st.query_params.get("variant")))
        else:
            st.markdown("#### " + _("Saved run: {ticker} as of {date}", ticker=l_ticker.upper(), date=l_date))
        render_result(data.get("state") or {}, data.get("rating"), data.get("meta") or {},
                      key=f"linked_{l_ticker}_{l_date}",
                      forkable=not (st.query_params.get("backtest") or (data.get("meta") or {}).get("blind")))

# ---------------------------------------------------------------------------------------------
st.divider()
st.subheader(_("Past runs"), help=_("Saved under {folder}", folder=config["results_dir"]))
if not past:
    st.info(_("No saved run yet in this home folder. Start an analysis above: its full report is saved "
              "under results/ and can be reopened here."))
else:
    recent = compare.history_rows(past[:PAST_RUNS_SHOWN], {})  # the History page's labels and times
    columns = {"Open": _("Open"), "Ticker": _("Ticker"), "Date": _("Date"), "Rating": _("Rating"), "LLM": _("LLM"),
               "Saved": _("Saved")}
    table = []
    for r in recent:
        row = r.as_display(lang=ui.language())  # English keys, links in the page's language
        shown_row = {columns[k]: row[k] for k in columns}
        shown_row[columns["Rating"]] = rating_label(row["Rating"]) if row["Rating"] else row["Rating"]
        shown_row[columns["LLM"]] = _(row["LLM"]) if isinstance(row["LLM"], str) else row["LLM"]
        table.append(shown_row)
    st.dataframe(
        table, width="stretch", hide_index=True,
        column_config={columns["Open"]: st.column_config.LinkColumn(columns["Open"], display_text=_("Open run"),
                                                                    width="small")},
    )
    if len(past) > PAST_RUNS_SHOWN:
        st.caption(_("Times in UTC; the newest {shown} of {total}; search, compare and export every run on the "
                     "History page.", shown=PAST_RUNS_SHOWN, total=len(past)))
    else:
        st.caption(_("Times in UTC; search, compare and export every run on the History page."))
    st.page_link("pages/history.py", label=_("History"), icon=":material/history:")
    labels = [f"{r['ticker']} · {r['date']} · {rating_label(r.get('rating')) if r.get('rating') else ''}"
              for r in past]
    with st.container(horizontal=True, vertical_alignment="bottom"):
        pick = st.selectbox(_("Reopen a saved run"), range(len(past)), format_func=lambda i: labels[i],
                            key="reopen_pick", width="stretch", placeholder=_("Choose an option"))
        if st.button(_("Open saved run"), key="reopen_btn", icon=":material/folder_open:", width="content"):
            st.session_state["saved_run"] = (past[pick]["ticker"], past[pick]["date"])
    saved = st.session_state.get("saved_run")
    if saved:
        try:
            data = load_run(config, saved[0], saved[1])
        except Exception as exc:  # noqa: BLE001 - a damaged file is reported, not raised
            st.error(_("Could not open the saved run {ticker} {date}: {problem}", ticker=saved[0], date=saved[1],
                       problem=exc))
        else:
            st.markdown("#### " + _("Saved run: {ticker} as of {date}", ticker=saved[0], date=saved[1]))
            render_result(data.get("state") or {}, data.get("rating"), data.get("meta") or {},
                          key=f"saved_{saved[0]}_{saved[1]}")
