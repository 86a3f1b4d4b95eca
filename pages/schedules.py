"""Schedules page: the desk's scheduled jobs (add, pause, resume, remove), what they did, and their digests."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from studio import desk_view as view
from studio import ui
from studio.ui import _, tr
from tradingagents import storage
from tradingagents.desk import digest as digests
from tradingagents.desk import schedules
from tradingagents.desk.scheduler import INDEX_DOC, STATE_DOC, WEEKDAY_NAMES
from tradingagents.desk.senders import CHANNELS
from tradingagents.errors import TradingAgentsError
from tradingagents.i18n import Translator
from tradingagents.storage.desk import open_desk_docs

if callable(getattr(ui, "require_router", None)):
    ui.require_router()


def _jobs(config: dict, jobs: list, states: dict, t: Translator) -> None:
    """The jobs, and the chosen one's Pause, Resume and Remove."""
    if jobs:
        st.dataframe(pd.DataFrame(view.schedule_rows(jobs, states, t=t)), hide_index=True, width="stretch")
        row = st.container(horizontal=True, vertical_alignment="bottom")
        pick = row.selectbox(_("Job"), [j.name for j in jobs], key="sched_pick", placeholder=_("Choose an option"))
        job = next(j for j in jobs if j.name == pick)
        if job.paused and row.button(_("Resume"), key="sched_resume"):
            schedules.set_paused(config, pick, False)
            st.rerun()
        if not job.paused and row.button(_("Pause"), key="sched_pause"):
            schedules.set_paused(config, pick, True)
            st.rerun()
        if row.button(_("Remove"), key="sched_remove"):
            schedules.remove_schedule(config, pick, by=config.get("user"))
            st.rerun()
    else:
        st.info(_("No scheduled job yet: add one below."), icon=":material/schedule:")


def _add_job(config: dict, jobs: list, saved: dict) -> None:
    with st.expander(_("Add a job"), expanded=not jobs, icon=":material/add_alarm:"):
        name = st.text_input(_("Name"), placeholder=_("morning"), key="sched_name")
        lists = ["@" + n for n in sorted(saved)]
        what = st.text_input(_("Watchlist"), value=lists[0] if lists else "", key="sched_watchlist",
                             help=_("A saved watchlist (@name, read when the job runs) or tickers: NVDA, AAPL"))
        if lists:
            st.caption(_("Saved watchlists: {names}", names=", ".join(lists)))
        c1, c2 = st.columns(2)
        at = c1.text_input(_("At"), value="07:30", key="sched_at", help=_("HH:MM, 24 hours, in the time zone."))
        tz = c2.text_input(_("Time zone"), value="Europe/London", key="sched_tz",
                           help=_("An IANA time zone: Europe/London, America/New_York, Asia/Tokyo, Asia/Hong_Kong, UTC."))
        days = st.multiselect(_("Days"), list(schedules.DAY_NAMES), default=list(schedules.DAY_NAMES[:5]), key="sched_days",
                              format_func=lambda d: _(WEEKDAY_NAMES[schedules.DAY_NAMES.index(d)]))
        emails = st.text_input(_("E-mail the digest to"), placeholder=_("desk@example.com, pm@example.com"),
                               key="sched_emails")
        webhook = st.text_input(_("Post the digest to a webhook"), placeholder=_("https://hooks.slack.com/services/…"),
                                key="sched_webhook")
        budget = st.number_input(_("Budget per run (USD)"), min_value=0.0, step=0.5, key="sched_budget",
                                 help=_("0 = no budget."))
        if st.button(_("Add the job"), key="sched_add", type="primary", disabled=not name.strip() or not what):
            try:
                schedules.add_schedule(config, {"name": name, "watchlist": what, "at": at, "tz": tz,
                                                "days": days, "emails": [e for e in emails.replace(";", ",").split(",")
                                                                         if e.strip()],
                                                "webhook": webhook or None, "max_cost_usd": budget or None},
                                       by=config.get("user"))
                st.toast(_("Added the job {name}.", name=name.strip()))
                st.rerun()
            except TradingAgentsError as exc:
                st.error(str(exc), icon=":material/error:")
        if not config.get("smtp_url"):
            st.caption(_("E-mail needs the mail server: smtp_url (TRADINGAGENTS_SMTP_URL=smtp://user@host:587, the "
                         "password in TRADINGAGENTS_SMTP_PASSWORD)."))


def _digests(docs: Any, t: Translator) -> None:
    st.subheader(_("Digests"), anchor=False)
    items = list(reversed((docs.get(INDEX_DOC) or {}).get("items") or []))
    if not items:
        st.caption(_("No digest yet: a job keeps one each time it runs."))
    else:
        labels = {i["name"]: view.digest_label(i, t=t) for i in items}
        chosen = st.selectbox(_("Digest"), list(labels), format_func=labels.get, key="sched_digest",
                              placeholder=_("Choose an option"))
        kept = docs.get(chosen) or {}
        for d in kept.get("deliveries") or []:
            channel = CHANNELS.get(d.get("channel"), "")
            if d.get("ok"):
                st.caption(_("Sent by {channel} to {target} ({n} attempt(s)).", channel=_(channel), target=d["target"],
                             n=d["attempts"]))
            else:
                st.warning(_("Not sent by {channel} to {target} after {n} attempt(s): {error}", channel=_(channel),
                             target=d["target"], n=d["attempts"], error=d.get("error")), icon=":material/warning:")
        if isinstance(kept.get("digest"), dict):
            with st.container(border=True, key="sched_digest_view"):
                st.html(digests.digest_body_html(kept["digest"], t, level=4))
            st.download_button(_("Digest (HTML)"), digests.digest_html(kept["digest"], t), file_name=f"{chosen}.html",
                               mime="text/html", key="sched_digest_html", icon=":material/download:")


def main() -> None:
    config = ui.current_config()
    t = tr()
    st.title(_("Schedules"), anchor=False)
    st.html(ui.badges_html(config))
    st.caption(_("A job analyses a watchlist at a time of day on the exchange's trading days: it settles what is due, "
                 "runs the watchlist on the last closed session, and sends its digest by e-mail and/or a webhook. The "
                 "scheduler service runs them: 'python -m tradingagents scheduler' beside the app."))
    try:
        jobs = schedules.list_schedules(config)
        docs = open_desk_docs(config)
        states = dict((docs.get(STATE_DOC) or {}).get("jobs") or {})
        saved = storage.list_watchlists(config)
    except TradingAgentsError as exc:
        st.error(str(exc), icon=":material/error:")
        return
    _jobs(config, jobs, states, t)
    _add_job(config, jobs, saved)
    _digests(docs, t)


main()
