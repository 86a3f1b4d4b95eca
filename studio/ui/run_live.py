"""The Run page's run of this server: the live board (polled fragments), its reports, and an ended run's
message with Stop, Resume, Start afresh or Continue. What to show is decided in ``studio.run_view``."""

from __future__ import annotations

from typing import Any

import streamlit as st

from studio import charts, run_view
from studio.debates import turns_from_events
from studio.jobs import RunJob, status_label
from studio.runs import REPORT_TITLES, eta_text
from studio.ui.access import get_registry, not_yours_text, owner, user_label
from studio.ui.lang import _, shown, tr
from studio.ui.pm_loop import paused_panel, render_questions_live
from studio.ui.run_result import render_result
from studio.ui.settings import api_key, config_error_text, refusal_text
from tradingagents import pricing
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.storage import engine_label, engines_text

POLL_S = 0.5  # the live board; the reports below it refresh less often
REPORTS_POLL_S = 2.0
LIVE_TEXT_CHARS = 4000


def render_reports(p: Any) -> None:
    if not p.reports:
        st.caption(_("Reports appear here as each agent finishes."))
        return
    t = tr()
    newest = p.newest_report
    if newest:
        st.markdown("**" + _("Latest: {title}", title=t.p("report", REPORT_TITLES.get(newest, newest))) + "**")
        with st.container(border=True, height=320):
            with st.container(key="ta-engine-latest"):  # the engine's own words (ta-engine-*)
                st.markdown(shown(p.reports[newest]))
    for key, text in reversed(list(p.reports.items())):
        if key != newest:
            with st.expander(t.p("report", REPORT_TITLES.get(key, key)), expanded=False):
                with st.container(key=f"ta-engine-report-{key}"):
                    st.markdown(shown(text))


def _metrics(p: Any, config: dict) -> None:
    offline = pricing.is_offline(config)
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


def _timeline(p: Any, *, live: bool) -> None:
    t = tr()
    order, bars = run_view.timeline_rows(p, t)
    if not bars:
        st.caption(_("The timeline starts with the first agent."))
    elif live:  # light HTML on every poll; the interactive chart once the run has ended
        st.html(charts.timeline_html(bars, order=order, t=t))
    else:
        fig = charts.timeline_figure(bars, order=order, t=t)
        st.plotly_chart(fig, width="stretch", key="timeline_final", config=charts.plotly_config(t))


def render_progress(handle: RunJob, *, live: bool) -> None:
    p = handle.progress()
    t = tr()
    st.progress(p.fraction, text=run_view.progress_label(p, live=live, stopping=handle.stopping, t=t))
    _metrics(p, handle.config)
    if live and handle.expected_s:
        st.caption(eta_text(handle.expected_s, p.elapsed_s, p.fraction, t=t))
    left, right = st.columns([2, 3])
    with left:
        if not p.agents:
            st.caption(_("Starting: the board appears with the engine's plan of agents."))
        st.html(run_view.agent_board_html(p, t))
    with right:
        if live:
            speaker = p.live_agent or p.current
            if speaker:
                st.markdown("**" + _("{agent} — live text", agent=t.p("role", speaker)) + "**")
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
            for line in run_view.tool_call_lines(p, t):
                st.markdown(line)
        with t_time:
            _timeline(p, live=live)


def changes_note(handle: RunJob) -> None:
    text = run_view.changes_text(handle.config_changes, tr())
    if text:
        st.info(text, icon=":material/tune:")
    progress = handle.progress()
    if progress.earlier_engines:  # a checkpoint begun under other models (run_started's earlier_engines)
        st.warning(_("This run resumed a checkpoint begun under other models ({earlier}); the rest runs on "
                     "{current}, and the saved run records both. Start afresh runs it all on one.",
                     earlier=engines_text(progress.earlier_engines, t=tr()),
                     current=engine_label(progress.engine, t=tr())),
                   icon=":material/merge_type:")


@st.fragment(run_every=POLL_S)
def live_run(run_id: str) -> None:
    registry, me = get_registry(), owner()
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
        st.caption(not_yours_text(handle.owner, "stop or resume"))
    changes_note(handle)
    render_progress(handle, live=True)


@st.fragment(run_every=REPORTS_POLL_S)
def live_reports(run_id: str) -> None:
    handle = get_registry().get(run_id, "run")
    if handle is None or handle.done:
        return
    st.markdown("##### " + _("Reports so far"))
    render_reports(handle.progress())


def _ended_message(config: dict, handle: RunJob, mine: bool) -> None:
    """Why the run ended (a setting, a failure, a crash, a stop), or the paused run's panel and Continue."""
    kept = _(" Its checkpoint is kept: Resume continues where it stopped.") if handle.resumable else ""
    kind = run_view.ended_kind(handle)
    if kind == "config":
        named = ConfigError(handle.error or "")
        named.key, named.key_env = handle.error_key, handle.error_key_env  # type: ignore[attr-defined]
        st.error(config_error_text(named, handle.config), icon=":material/settings:")
    elif kind == "failed":
        st.error(_("The run failed: {problem}", problem=handle.error) + kept)
    elif kind == "crashed":
        st.error(_("The run crashed: {problem} Please report it with the server log; "
                   "Run again tries once more.", problem=handle.error))
    elif kind == "paused":
        note = paused_panel(handle.ticker, handle.date, handle.paused_before,
                            turns_from_events(handle.events), handle.run_id, mine=mine)
        if note is not None:
            try:
                get_registry().continue_paused(handle.run_id, note, owner=owner(), by=user_label(), config=config,
                                               api_key=api_key())
            except (ValidationError, ConfigError) as exc:
                st.error(refusal_text(exc, config), icon=":material/error:")
            else:
                st.rerun()
    else:
        st.warning(_("The run was stopped.") + kept)


def _resume_buttons(config: dict, handle: RunJob) -> None:
    again = _("Resume") if handle.resumable else _("Run again")
    hint = (_("Continues from the checkpoint with the settings on screen now.")
            if handle.resumable else _("Starts it again with the settings on screen now."))
    with st.container(horizontal=True):
        again_clicked = st.button(again, type="primary", key="resume_run", icon=":material/play_circle:", help=hint)
        afresh_clicked = handle.resumable and st.button(
            _("Start afresh"), key="afresh_run", icon=":material/restart_alt:",
            help=_("Discards the checkpoint and runs every agent again with the settings on screen now."))
    if again_clicked or afresh_clicked:
        try:
            get_registry().resume(handle.run_id, owner=owner(), config=config, api_key=api_key(),
                                  fresh=bool(afresh_clicked))
        except (ValidationError, ConfigError) as exc:
            st.error(refusal_text(exc, config), icon=":material/error:")
        else:
            st.rerun()


def ended_run(config: dict, handle: RunJob) -> None:
    """A run that stopped, failed, crashed or paused: what happened, and who may go on with it."""
    mine = handle.can_control(owner())
    _ended_message(config, handle, mine)
    if handle.paused_before:  # Continue (above) is its resume
        pass
    elif not mine:
        st.caption(not_yours_text(handle.owner, "resume"))
    else:
        _resume_buttons(config, handle)
    with st.expander(_("Progress when it ended"), expanded=False):
        render_progress(handle, live=False)


def run_section(config: dict, handle: RunJob, *, running_now: bool) -> None:
    """The run of this server the page shows: live while it runs, then its result or why it ended."""
    if not running_now:
        st.divider()
    if handle.status == "running":
        live_run(handle.run_id)
        live_reports(handle.run_id)
        render_questions_live(config, handle, handle.run_id)  # ask any agent that has spoken so far
        return
    st.markdown("#### " + _("{ticker} as of {date} — {status}", ticker=handle.ticker, date=handle.date,
                            status=status_label(handle.status, tr())))
    st.html(f'<span class="ta-run-state" data-run="{handle.run_id}" data-status="{handle.status}" '
            f'data-created="{handle.created_at:.3f}" data-finished="{handle.finished_at or 0:.3f}" '
            f'data-finishes="{run_view.finishes_attr(handle.progress())}"></span>')
    changes_note(handle)
    if handle.status != "finished":
        ended_run(config, handle)
        return
    render_result(config, handle.final_state or {}, handle.rating, handle.meta, key=handle.run_id,
                  forkable=not handle.blind)
    if st.toggle(_("Show run details: agents, tool calls, timeline"), key=f"details_{handle.run_id}"):
        render_progress(handle, live=False)
