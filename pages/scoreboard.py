"""Scoreboard page: who was right. Hit rate and mean alpha with 95% intervals per role, per model, per person
(the portfolio managers' own calls), the team against you, and the conviction stated against the hit rate;
computed by the engine's scoreboard from the memory log and the saved runs."""

from __future__ import annotations

import streamlit as st

from studio import ui
from studio.ui import _, tr
from tradingagents import team
from tradingagents.errors import TradingAgentsError
from tradingagents.i18n import N_
from tradingagents.scoreboard import gather

ui.require_router()

# the decision card's convictions as the page names them (the scoreboard keeps the card's words)
CONVICTIONS = {"low": N_("low"), "medium": N_("medium"), "high": N_("high")}

def pct(x) -> str:
    return "—" if x is None else f"{x:.0%}"


def signed(x) -> str:
    return "—" if x is None else f"{x:+.2%}"


def interval(pair, fmt=pct) -> str:
    return "—" if not pair else f"{fmt(pair[0])} … {fmt(pair[1])}"


def rows(section: dict, name_of) -> list[dict]:
    return [{_("Who"): name_of(k), _("Calls"): s["n"], _("Hit rate"): pct(s["hit_rate"]),
             _("95% interval"): interval(s["interval"]), _("Mean alpha"): signed(s["mean_alpha"]),
             _("Alpha 95% interval"): interval(s["alpha_interval"], signed)} for k, s in section.items()]


def _team_vs_you(vs: dict) -> None:
    with st.container(border=True, key="ta-team-vs-pm"):
        st.subheader(_("Team vs you"), anchor=False)
        if not vs["n"]:
            st.caption(_("No settled decision has your own call yet."))
            return
        c1, c2, c3 = st.columns(3)
        c1.metric(_("Team's hit rate"), pct(vs["team"]["hit_rate"]), help=interval(vs["team"]["interval"]))
        c2.metric(_("Your hit rate"), pct(vs["pm"]["hit_rate"]), help=interval(vs["pm"]["interval"]))
        c3.metric(_("Agreed"), pct(vs["agreement"]["rate"]), help=interval(vs["agreement"]["interval"]))
        d = vs["disagreed"]
        st.markdown(_("On {n} decisions with both calls. When you disagreed ({d}): you were right {pm}, the team {team}, "
                      "both {both}, neither {neither}.", n=vs["n"], d=d["n"], pm=d["pm_right"], team=d["team_right"],
                      both=d["both_right"], neither=d["neither_right"]))


def _tables(board: dict) -> None:
    t = tr()
    st.subheader(_("By role"), anchor=False)
    st.dataframe(rows(board["by_role"], lambda k: t.p("role", team.ROLES[k].node)), hide_index=True, width="stretch",
                 key="score_roles")
    st.subheader(_("By model"), anchor=False)
    st.dataframe(rows(board["by_model"], str), hide_index=True, width="stretch", key="score_models")
    st.subheader(_("By person"), anchor=False)
    if board["by_person"]:
        st.dataframe(rows(board["by_person"], str), hide_index=True, width="stretch", key="score_people")
    else:
        st.caption(_("No one has recorded a call of their own yet."))
    if board["calibration"]:
        st.subheader(_("Calibration"), anchor=False)
        st.caption(_("The conviction the decision card stated, against how often the team was right."))
        st.dataframe(rows({c["conviction"]: c for c in board["calibration"]}, lambda k: _(CONVICTIONS.get(k, k))),
                     hide_index=True, width="stretch", key="score_calibration")


def main() -> None:
    config = ui.current_config()
    st.title(_("Scoreboard"), anchor=False)
    st.caption(_("Who was right, on the settled decisions: each call scored on the same alpha. A hit rate's interval "
                 "is Wilson's 95% interval; a mean alpha's is ±1.96 standard errors. Record your own calls beside the "
                 "team's (Your call, on the Run page) to see the team against you."))
    try:
        board = gather(config)
    except (TradingAgentsError, OSError, ValueError) as exc:
        st.error(_("The scoreboard cannot be computed: {problem}", problem=exc), icon=":material/error:")
        return
    st.metric(_("Settled decisions"), board["n_settled"])
    if not board["n_settled"]:
        st.info(_("Nothing settled yet: decisions are scored once their holding window has closed (Memory log → "
                  "Settle now)."))
        return
    _team_vs_you(board["team_vs_pm"])
    _tables(board)


main()
