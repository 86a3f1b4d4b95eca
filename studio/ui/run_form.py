"""The Run page's form and what surrounds it: the form's defaults and a link's prefill, the onboarding, runs
checkpointed before a restart, starting a run, and the saved runs (linked, past, reopened)."""

from __future__ import annotations

import contextlib
import datetime as dt
from typing import Any

import streamlit as st

from studio import compare, run_view
from studio.debates import turns_from_saved
from studio.jobs import paused_state, steered_by_other
from studio.runs import ANALYST_LABELS
from studio.ui.access import get_registry, is_desk_lead, owner, user_label
from studio.ui.lang import _, language, rating_label, tr
from studio.ui.pm_loop import paused_panel
from studio.ui.run_result import render_result
from studio.ui.run_start import START_REFUSED, show_run, start_from_form, start_run
from studio.ui.settings import api_key, mark_settings_of_run, queue_settings, refusal_text
from tradingagents import estimates, pricing, team
from tradingagents.config import ROUND_LIMITS, setting_label
from tradingagents.dataflows.demo_identities import EXAMPLE_CASE
from tradingagents.errors import ConfigError, NotAllowed, ValidationError
from tradingagents.i18n import N_
from tradingagents.storage import load_run
from tradingagents.validation import DATE_FLOOR as DATE_MIN

PAST_RUNS_SHOWN = 10  # on this page; the History page lists every run
OFFER_SAID = {"stopped": N_("**{ticker} as of {date}** was stopped and is checkpointed at step {step}. Resume "
                            "continues it with the settings on screen now."),
              "failed": N_("**{ticker} as of {date}** failed and is checkpointed at step {step}. Resume continues "
                           "it with the settings on screen now.")}
"""What a checkpointed run's offer says by how the run ended (its offer's ``ended``)."""
OFFER_RESTARTED = N_("**{ticker} as of {date}** did not finish before the server restarted (it was stopped, failed "
                     "or cut off) and is checkpointed at step {step}. Resume continues it with the settings on "
                     "screen now.")


def form_start(config: dict) -> None:
    """The form's first values, once per session: the resolved settings (``TRADINGAGENTS_*`` included), for every
    user, signed in or not."""
    for k, v in run_view.form_defaults(config).items():
        st.session_state.setdefault(k, v)


def prefill_notices(notices: Any) -> None:
    """``?prefill=`` into the form's fields (before the form is drawn), said above it; its problems too."""
    prefill = st.session_state.pop("_prefill_form", None)
    problems = [p for p in [st.session_state.pop("_prefill_problem", None)] if p]
    if prefill:
        values, more = run_view.prefill_values(prefill, t=tr())
        st.session_state.update(values)
        problems += more
        notices.info(_("The form is prefilled from the link: change what you like, then start the analysis."),
                     icon=":material/edit_note:")
    for problem in problems:
        notices.warning(problem, icon=":material/link_off:")


def onboarding(config: dict, notices: Any, first_visit: bool) -> None:
    """The first visit (no run anywhere yet), until dismissed: the team, and a click to run an example."""
    if st.session_state.pop("_start_example", False):
        ticker, date = EXAMPLE_CASE
        start_run(ticker, dt.date.fromisoformat(date), list(team.ANALYST_KEYS), run_view.example_config(config))
    if not first_visit or st.session_state.get("onboard_dismissed"):
        return
    with notices, st.container(border=True, key="onboarding"):
        st.markdown("#### " + _("Meet the team"))
        st.markdown(_("A team of agents analyses one stock as of one day, the way a trading firm would: analysts "
                      "write reports, two researchers debate them, a trader proposes, a risk committee argues, "
                      "and the portfolio manager decides. Every decision is logged, settled later against the "
                      "market, and remembered as a lesson."))
        st.html(run_view.flow_html(tr()))
        with st.container(horizontal=True):
            if st.button(_("Run an example"), type="primary", key="run_example", icon=":material/play_arrow:",
                         help=_("NVDA on 10 May 2024, with the offline engine and synthetic demo data at "
                                "presenter pace: no key, no network, about a minute.")):
                queue_settings({"set_provider": "offline", "set_vendor": "demo"})
                st.session_state["_start_example"] = True
                st.session_state["form_ticker"] = EXAMPLE_CASE[0]  # the form says what runs
                st.session_state["form_date"] = dt.date.fromisoformat(EXAMPLE_CASE[1])
                st.rerun()
            if st.button(_("Dismiss"), key="onboard_dismiss"):
                st.session_state["onboard_dismissed"] = True
                st.rerun()


def _paused_offer(config: dict, notices: Any, o: dict) -> bool:
    """A run paused before a verdict when the server restarted: the debate so far, a note box, Continue.
    False when its checkpoint cannot be read (then it is offered as a plain resume)."""
    paused = None
    with contextlib.suppress(Exception):
        paused = paused_state(o["config"], o["analysts"], o["ticker"], o["date"])
    if paused is None:
        return False
    may = not steered_by_other(o.get("owner"), owner(), is_desk_lead)
    with notices:
        note = paused_panel(o["ticker"], o["date"], paused["paused_before"],
                            turns_from_saved(paused, {"debate_turns": paused.get("debate_turns") or []}),
                            f"offer_{o['thread_id']}", mine=may)
    if note is not None:
        try:
            new_id = get_registry().adopt(o, config=config, api_key=api_key(), owner=owner(), note=note,
                                          by=user_label())
        except (ValidationError, ConfigError, NotAllowed) as exc:
            st.error(refusal_text(exc, config), icon=":material/error:")
        else:
            show_run(new_id)
            st.rerun()
    return True


def checkpoint_offers(config: dict, notices: Any, offers: list[dict]) -> None:
    """Runs checkpointed before a server restart: Resume (or, paused before a verdict, Continue with a note)."""
    for o in offers[:5]:
        if o.get("paused_before") and _paused_offer(config, notices, o):
            continue
        with notices, st.container(border=True):
            st.markdown(_(OFFER_SAID.get(o.get("ended") or "", OFFER_RESTARTED), ticker=o["ticker"], date=o["date"],
                          step=o["step"]))
            if st.button(_("Resume"), key=f"adopt_{o['thread_id']}", icon=":material/play_circle:"):
                try:
                    new_id = get_registry().adopt(o, config=config, api_key=api_key(), owner=owner())
                except (ValidationError, ConfigError, NotAllowed) as exc:
                    st.error(refusal_text(exc, config), icon=":material/error:")
                else:
                    show_run(new_id)
                    mark_settings_of_run(new_id)
                    st.rerun()


def estimate_caption(config: dict) -> None:
    """The estimated cost of a run with the sidebar's and the form's settings, next to Start (paid models)."""
    if pricing.is_offline(config):
        return
    s = st.session_state
    cfg = config
    if all(k in s for k in run_view.FORM_KEYS):
        cfg = {**run_view.form_config(config, s), "selected_analysts": list(s["form_analysts"]) or None}
    try:
        est = estimates.estimate_run_cost(cfg)
    except Exception as exc:  # noqa: BLE001 - an estimate must never block the form
        st.caption(_("No cost estimate: {problem}", problem=exc))
        return
    help_text = (_("Without a price the run is not billed here in dollars; tokens are still counted.")
                 if est["cost_usd"] is None else None)
    st.caption(run_view.run_cost_caption(est, tr()), help=help_text)


def _form_fields(config: dict) -> None:
    # the date needs room for YYYY/MM/DD at 800 px; a label that wraps there keeps its input in line
    c1, c2, c3, c4 = st.columns([1, 1.4, 0.8, 0.8], vertical_alignment="bottom")
    c1.text_input(_("Ticker"), key="form_ticker", placeholder=_("e.g. NVDA, BRK-B, 7203.T"))
    c2.date_input(_("Analysis date"), key="form_date", max_value=dt.date.today(), min_value=DATE_MIN)
    c3.number_input(setting_label("max_debate_rounds", tr()), min_value=ROUND_LIMITS[0], max_value=ROUND_LIMITS[1], step=1,
                    key="form_debate")
    c4.number_input(setting_label("max_risk_discuss_rounds", tr()), min_value=ROUND_LIMITS[0], max_value=ROUND_LIMITS[1], step=1, key="form_risk")
    # rows that wrap rather than squeeze: at 800 px no label or button is cut to "…"
    t = tr()
    st.multiselect(setting_label("selected_analysts", tr()), list(team.ANALYST_KEYS), key="form_analysts",
                   format_func=lambda a, t=t: t.p("report", ANALYST_LABELS.get(a, a)),
                   placeholder=_("Choose the analysts"))
    with st.container(horizontal=True, gap="large"):
        st.toggle(_("Analysts in parallel"), key="form_parallel",
                  help=_("Run the selected analysts side by side (see the timeline) instead of one after another."))
        if pricing.is_offline(config):
            st.toggle(_("Presenter pace"), key="form_presenter",
                      help=_("The offline engine writes instantly; this streams its words at a readable speed, "
                             "for a demo in front of an audience. The text is the same."))


def _form_options() -> None:
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


def run_form(config: dict, *, folded: bool) -> None:
    """The form (folded into one line while a run is in progress, so the agent board is in the first screenful);
    Start begins a run. Enter in a field does not submit: a run (maybe a paid one) starts only from Start."""
    slot = st.expander(_("New analysis"), icon=":material/add_circle:", key="form_folded") if folded else st.container()
    with slot, st.form("run_form", border=True, enter_to_submit=False):
        _form_fields(config)
        _form_options()
        with st.container(horizontal=True, vertical_alignment="center"):
            st.form_submit_button(_("Start analysis"), type="primary", icon=":material/play_arrow:",
                                  on_click=start_from_form)
            estimate_caption(config)
    refused = st.session_state.pop(START_REFUSED, None)
    if refused:
        st.error(refused, icon=":material/error:")


def linked_run(config: dict) -> None:
    """A saved run named by the URL (``?ticker=&date=``, optionally ``&backtest=&variant=``)."""
    q = st.query_params
    linked, problem = run_view.saved_run_link(q, config, tr())
    if problem:
        st.error(problem)
    if not linked:
        return
    l_ticker, l_date, l_cfg = linked
    try:
        data = load_run(l_cfg, l_ticker, l_date)
    except (OSError, ValueError) as exc:  # a missing or damaged file is reported, not raised
        st.error(_("Could not open the saved run {ticker} {date}: {problem}", ticker=l_ticker, date=l_date,
                   problem=exc))
        return
    st.divider()
    if q.get("backtest"):
        st.markdown("#### " + _("Saved run: {ticker} as of {date} (backtest {backtest}, variant {variant})",
                                ticker=l_ticker.upper(), date=l_date, backtest=q.get("backtest"),
                                variant=q.get("variant")))
    else:
        st.markdown("#### " + _("Saved run: {ticker} as of {date}", ticker=l_ticker.upper(), date=l_date))
    render_result(config, data.get("state") or {}, data.get("rating"), data.get("meta") or {},
                  key=f"linked_{l_ticker}_{l_date}",
                  forkable=not (q.get("backtest") or (data.get("meta") or {}).get("blind")))


def _past_table(past: list[dict]) -> None:
    recent = compare.history_rows(past[:PAST_RUNS_SHOWN], {})  # the History page's labels and times
    columns = {"Open": _("Open"), "Ticker": _("Ticker"), "Date": _("Date"), "Rating": _("Rating"), "LLM": _("LLM"),
               "Saved": _("Saved")}
    table = []
    for r in recent:
        row = r.as_display(lang=language())  # English keys, links in the page's language
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


def _reopen(config: dict, past: list[dict]) -> None:
    labels = [f"{r['ticker']} · {r['date']} · {rating_label(r.get('rating')) if r.get('rating') else ''}"
              for r in past]
    with st.container(horizontal=True, vertical_alignment="bottom"):
        pick = st.selectbox(_("Reopen a saved run"), range(len(past)), format_func=lambda i: labels[i],
                            key="reopen_pick", width="stretch", placeholder=_("Choose an option"))
        if st.button(_("Open saved run"), key="reopen_btn", icon=":material/folder_open:", width="content"):
            st.session_state["saved_run"] = (past[pick]["ticker"], past[pick]["date"])
    saved = st.session_state.get("saved_run")
    if not saved:
        return
    try:
        data = load_run(config, saved[0], saved[1])
    except Exception as exc:  # noqa: BLE001 - a damaged file is reported, not raised
        st.error(_("Could not open the saved run {ticker} {date}: {problem}", ticker=saved[0], date=saved[1],
                   problem=exc))
    else:
        st.markdown("#### " + _("Saved run: {ticker} as of {date}", ticker=saved[0], date=saved[1]))
        render_result(config, data.get("state") or {}, data.get("rating"), data.get("meta") or {},
                      key=f"saved_{saved[0]}_{saved[1]}")


def past_runs(config: dict, past: list[dict]) -> None:
    """The newest saved runs, a link to History, and one to reopen here."""
    st.divider()
    st.subheader(_("Past runs"), help=_("Saved under {folder}", folder=config["results_dir"]))
    if not past:
        st.info(_("No saved run yet in this home folder. Start an analysis above: its full report is saved "
                  "under results/ and can be reopened here."))
        return
    _past_table(past)
    _reopen(config, past)
