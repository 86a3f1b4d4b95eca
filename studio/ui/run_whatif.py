"""A saved run's "What if…" (one agent's output changed, the team replayed from there) and "What moved the
decision" (each analyst dropped in turn), each run as a job of the registry and followed by a fragment."""

from __future__ import annotations

from typing import Any

import streamlit as st

from studio import charts, compare, run_view
from studio.ui.access import get_registry, owner
from studio.ui.lang import _, language, rating_label, tr
from studio.ui.settings import api_key, refusal_text
from tradingagents import estimates, team
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.graph import whatif

WHATIF_POLL_S = 1.0


def _fork_form(config: dict, state: dict, meta: dict, ticker: str, date: str, key: str) -> bool:
    """Pick an agent (and its turn), edit its output or drop the analyst, see the cost, run the fork. False: the
    agent spoke no turn (the panel ends there)."""
    t = tr()
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
            return False
        turn = st.selectbox(_("Turn"), [int(d["turn"]) for d in turns], key=f"wi_turn_{key}_{role_key}",
                            format_func=lambda n: _("turn {n}", n=n))
        current = next(str(d.get("text") or "") for d in turns if int(d["turn"]) == turn)
    drop = role.is_analyst and st.checkbox(_("Drop this analyst (\"This report is not available.\")"),
                                           key=f"wi_drop_{key}_{role_key}")
    text = st.text_area(_("Its output"), value=current, height=280, key=f"wi_text_{key}_{role_key}_{turn}",
                        disabled=drop)
    try:
        st.caption(run_view.cost_caption(estimates.estimate_fork_cost(config, meta, role_key), t))
    except Exception as exc:  # noqa: BLE001 - an estimate must never block the form
        st.caption(_("No cost estimate: {problem}", problem=exc))
    if st.button(_("Run the what-if"), type="primary", key=f"wi_run_{key}", icon=":material/call_split:"):
        spec = whatif.ForkSpec(at=role_key, text=None if drop else text, drop=bool(drop), turn=turn)
        try:
            st.session_state[f"wi_job_{key}"] = get_registry().start_whatif(
                ticker, date, config, spec=spec, api_key=api_key(), owner=owner())
        except (ValidationError, ConfigError) as exc:
            st.error(refusal_text(exc, config), icon=":material/error:")
    return True


def _fork_job(ticker: str, date: str, key: str) -> None:
    """The fork started here: followed while it runs; once finished, Compare opens on it (once)."""
    job_id = st.session_state.get(f"wi_job_{key}")
    if not job_id:
        return
    job = get_registry().get(job_id, "whatif")
    if job is not None and job.status == "finished" and not st.session_state.get(f"_wi_opened_{job_id}"):
        st.session_state[f"_wi_opened_{job_id}"] = True  # Compare opens once; back here, the link stays
        n = (job.result or {}).get("n")
        if n is not None:
            st.switch_page("pages/compare.py", query_params={"a": f"{ticker}|{date}",
                                                             "b": f"{ticker}|{date}|w{n}"})
    whatif_status(job_id, ticker, date)


def _attribution(config: dict, rating: str | None, meta: dict, ticker: str, date: str, key: str) -> None:
    t = tr()
    registry = get_registry()
    st.caption(_("One fork per analyst with that analyst dropped (\"This report is not available.\"), side by "
                 "side: which analysts, when removed, move the rating, and by how many tiers."))
    attr_id = st.session_state.get(f"attr_job_{key}")
    job = registry.get(attr_id, "whatif") if attr_id else None
    attribution = (job.result or {}).get("attribution") if job is not None and job.result else meta.get("attribution")
    try:
        est = estimates.estimate_attribution_cost(config, ticker, date)
        st.caption(run_view.cost_caption(est, t))
    except Exception as exc:  # noqa: BLE001
        st.caption(_("No cost estimate: {problem}", problem=exc))
    if st.button(_("Drop each analyst in turn"), key=f"attr_run_{key}", icon=":material/insights:"):
        try:
            st.session_state[f"attr_job_{key}"] = registry.start_whatif(
                ticker, date, config, attribute=True, api_key=api_key(), owner=owner())
        except (ValidationError, ConfigError) as exc:
            st.error(refusal_text(exc, config), icon=":material/error:")
        else:
            st.rerun()
    if job is not None and job.status != "finished":
        whatif_status(job.id, ticker, date)
    if attribution:
        st.plotly_chart(charts.attribution_figure(rating, attribution, t=t), config=charts.plotly_config(t),
                        width="stretch", key=f"attr_chart_{key}")


def whatif_panel(config: dict, state: dict, rating: str | None, meta: dict, key: str) -> None:
    """"What if…" on a saved run: pick an agent, edit its output in place (or drop an analyst), see the
    cost, run it as a job; "What moved the decision": every analyst dropped in turn, and the chart."""
    ticker = meta.get("ticker") or state.get("company_of_interest")
    date = meta.get("date") or state.get("trade_date")
    if not ticker or not date:
        return
    with st.expander(_("What if…"), icon=":material/alt_route:", key=f"whatif_{key}"):
        st.caption(_("Change one agent's output and replay the team from there: the agents before it are taken as "
                     "they were. The fork is saved beside this run; the run, the memory log and the role memories "
                     "stay as they are."))
        if not _fork_form(config, state, meta, ticker, date, key):
            return  # as before: a debater without a turn ends the panel here
        _fork_job(ticker, date, key)
    with st.expander(_("What moved the decision"), icon=":material/insights:", key=f"attr_{key}"):
        _attribution(config, rating, meta, ticker, date, key)


def _whatif_outcome(job: Any, ticker: str, date: str) -> None:
    if job.status == "finished" and not job.attribute:
        res = job.result or {}
        st.success(_("What if: {base} → {rating}", base=rating_label(res.get("base_rating")),
                     rating=rating_label(res.get("rating"))), icon=":material/call_split:")
        if res.get("n") is not None:
            st.link_button(_("Compare the run and the fork"),
                           compare.compare_link((ticker, date), (ticker, date, f"w{res['n']}"), language()),
                           icon=":material/compare_arrows:")
    elif job.status in ("failed", "crashed"):
        st.error(_("The what-if failed: {problem}", problem=job.error))
    elif job.status == "stopped":
        st.warning(_("The what-if was stopped."))


@st.fragment(run_every=WHATIF_POLL_S)
def whatif_status(job_id: str, ticker: str, date: str) -> None:
    registry, me = get_registry(), owner()
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
    _whatif_outcome(job, ticker, date)
