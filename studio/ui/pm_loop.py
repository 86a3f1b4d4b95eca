"""The portfolio manager in the loop, on a run's page: notes to the judges, a paused run's panel, "Ask the
team" (answered off the script thread) and "Your call"."""

from __future__ import annotations

import threading
from typing import Any

import streamlit as st

from studio.ui.access import auth_configured, is_desk_lead, signed_in_email, user_label
from studio.ui.lang import _, rating_label, shown, tr
from studio.ui.settings import api_key, config_error_text


def may_act_on_run(meta: dict | None) -> bool:
    """Whether this session may ask the team on its budget, steer or record a call on a run: anyone where the app
    has no sign-in (one's own machine); with sign-in, the run's owner (``meta["by"]``) or a desk lead."""
    if not auth_configured():
        return True
    who = signed_in_email()
    return bool(who) and (who == str((meta or {}).get("by") or "").strip().lower() or is_desk_lead(who))


def _items(meta: dict | None, key: str) -> list[dict]:
    """``meta[key]`` of a saved run (``questions``, ``pm_notes``): its dicts, oldest first."""
    items = (meta or {}).get(key)
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def render_pm_notes(meta: dict | None, key: str) -> None:
    """The portfolio manager's notes to the judges of a run (``meta.pm_notes``), as chat bubbles of the PM."""
    from studio.debates import role_name

    notes = [n for n in _items(meta, "pm_notes") if n.get("note")]
    if not notes:
        return
    with st.expander(_("Portfolio manager's notes") + f" ({len(notes)})", expanded=True, key=f"pm_notes_{key}"):
        for n in notes:
            before = str(n.get("before") or "")
            with st.chat_message("user"):
                st.caption(_("To the {judge} ({by}, {at}): {note}", judge=role_name(before, t=tr())
                             if before in ("research_manager", "portfolio_manager") else before,
                             by=n.get("by") or "?", at=n.get("at") or "", note=""))
                st.markdown(shown(n["note"]))


def paused_panel(ticker: str, date: str, before: str, turns: list, key: str, *, mine: bool) -> str | None:
    """A run paused before a verdict: the debate so far as chat bubbles and a note box for that judge. Returns
    the note when Continue is pressed ("" for none), else None."""
    from studio.debates import role_name

    t = tr()
    judge = role_name(before, t=t) if before in ("research_manager", "portfolio_manager") else before
    with st.container(border=True, key=f"ta-paused-{key}"):
        st.markdown("#### " + _("Paused before the {judge}", judge=judge))
        st.caption(_("{ticker} as of {date} waits at its checkpoint (a server restart keeps it). Read the debate so "
                     "far, leave a note for the {judge} if the committee knows something, then continue.",
                     ticker=ticker, date=date, judge=judge))
        for turn in turns:
            with st.chat_message(turn.speaker_in(t), avatar=turn.avatar):
                st.caption(turn.speaker_in(t) + (f" · {_('round {n}', n=turn.round)}" if turn.round else ""))
                st.markdown(shown(turn.text))
        if not mine:
            st.caption(_("Only whoever started the run or a desk lead may add a note and continue it."))
            return None
        with st.form(f"pause_form_{key}", border=False):
            note = st.text_area(_("Your note to the {judge}", judge=judge), key=f"pause_note_{key}", height=90,
                                placeholder=_("Earnings next week; keep it small."))
            go = st.form_submit_button(_("Continue"), type="primary", icon=":material/play_circle:")
        return (note or "") if go else None


def _question_thread(items: list[dict], key: str) -> None:
    """Questions and answers as chat bubbles: who asked which agent when, the question, the agent's answer."""
    from studio.debates import role_name
    from tradingagents import team

    t = tr()
    for n, item in enumerate(items):
        agent = str(item.get("agent") or "")
        name = role_name(agent, t=t) if agent in team.ROLES else agent
        with st.chat_message("user"):
            st.caption(_("{who} asked the {agent} · {at}", who=item.get("by") or "?", agent=name,
                         at=item.get("at") or ""))
            st.markdown(shown(item.get("question") or ""))
        with st.chat_message(name, avatar=":material/smart_toy:"), st.container(key=f"ta-answer-{key}-{n}"):
            st.markdown(shown(item.get("answer") or ""))


def _ask_box(config: dict[str, Any], roles: list[str], default: str, key: str, answer: Any) -> None:
    """The form to ask one of ``roles`` a question, and the answer being worked out off the script thread
    (``answer(agent, question, by, api_key, on_token)``: a model's call takes seconds; the page follows it)."""
    from studio.debates import role_name

    t = tr()
    with st.form(f"ask_form_{key}", clear_on_submit=True, border=False):
        agent = st.selectbox(_("Agent"), roles, index=roles.index(default) if default in roles else 0,
                             format_func=lambda k: role_name(k, t=t), key=f"ask_agent_{key}",
                             placeholder=_("Choose an option"))
        question = st.text_input(_("Your question"), key=f"ask_text_{key}",
                                 placeholder=_("Why do you expect margins to fall?"))
        asked = st.form_submit_button(_("Ask"), icon=":material/forum:")
    slot = f"_asking_{key}"
    pending: _Asking | None = st.session_state.get(slot)
    if asked and question.strip() and (pending is None or pending.done):
        by, key_now, text = user_label(), api_key(), question.strip()
        pending = st.session_state[slot] = _Asking(
            agent, text, lambda on_token: answer(agent, text, by, key_now, on_token))
    if pending is not None:
        _follow_asking(slot, pending, role_name(pending.agent, t=t), config)


def render_questions(config: dict[str, Any], ticker: str, date: str, meta: dict | None, key: str) -> None:
    """"Ask the team": the run's questions and answers as chat bubbles, and a box to ask any agent that took part
    (answered in its role from the run's material; kept in ``meta.questions``)."""
    from tradingagents.ask import ask, took_part
    from tradingagents.storage import load_run

    try:
        run = load_run(config, ticker, date)
    except Exception:  # noqa: BLE001 - a run not saved (yet): nothing to ask
        return
    items = _items(run.get("meta"), "questions")  # as storage has it now (the page's copy may predate a question)
    with st.container(border=True, key=f"ta-questions-{key}"):
        st.subheader(_("Ask the team"), anchor=False)
        if not items:
            st.caption(_("Ask any agent of this run a question: it answers in its role from this run's material only."))
        _question_thread(items, key)
        if not may_act_on_run(run.get("meta")):
            st.caption(_("Only the run's owner or a desk lead may ask on this run."))
            return
        _ask_box(config, [r.key for r in took_part(run)], "bear", key,
                 lambda agent, text, by, key_now, on_token: ask(config, ticker, date, agent, text, by=by,
                                                                api_key=key_now, on_token=on_token, shared=True))


def render_questions_live(config: dict[str, Any], job: Any, key: str) -> None:
    """"Ask the team" while a run goes: any agent that has spoken answers from what the run has written so far;
    the thread is kept by the run's job and saved with the run (``RunJob.ask``)."""
    from tradingagents.ask import run_so_far, took_part

    roles = [r.key for r in took_part(run_so_far(job.events, job.config))]
    if not roles and not job.questions:
        return
    with st.expander(_("Ask the team") + (f" ({len(job.questions)})" if job.questions else ""),
                     key=f"ta-questions-live-{key}"):
        st.caption(_("Any agent that has spoken answers from what this run has written so far; the thread is saved "
                     "with the run."))
        _question_thread(list(job.questions), f"live-{key}")
        if not may_act_on_run({"by": job.config.get("user") or job.owner}):
            st.caption(_("Only the run's owner or a desk lead may ask on this run."))
            return
        if roles:
            _ask_box(config, roles, roles[-1], f"live-{key}",
                     lambda agent, text, by, key_now, on_token: job.ask(agent, text, by=by, api_key=key_now,
                                                                        on_token=on_token))


class _Asking:
    """One question being answered on a worker thread: the text so far (streamed), then the item or the error.
    ``answer(on_token)`` does the asking (a saved run's ``ask``, or a running job's ``RunJob.ask``)."""

    def __init__(self, agent: str, question: str, answer: Any) -> None:
        self.agent, self.question = agent, question
        self.parts: list[str] = []
        self.error: BaseException | None = None
        self.done = False

        def work() -> None:
            try:
                answer(self.parts.append)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                self.error = exc
            finally:
                self.done = True

        self.thread = threading.Thread(target=work, name=f"ta-ask-{agent}", daemon=True)
        self.thread.start()


def _follow_asking(slot: str, pending: _Asking, name: str, config: dict[str, Any]) -> None:
    """The question being answered, its text as it streams (a fragment polling the worker); when it is done the
    page draws again (the thread from storage) or says what went wrong."""
    if pending.done:
        st.session_state.pop(slot, None)
        if pending.error is not None:
            st.error(config_error_text(pending.error, config), icon=":material/error:")
        return

    @st.fragment(run_every=0.5)
    def follow() -> None:
        if pending.done:
            st.rerun()  # the whole page: the saved thread shows the answer
        with st.chat_message("user"):
            st.markdown(shown(pending.question))
        with st.chat_message(name, avatar=":material/smart_toy:"):
            st.caption(_("The {agent} is answering…", agent=name))
            st.markdown(shown("".join(pending.parts)))

    follow()


def render_your_call(config: dict[str, Any], ticker: str, date: str, team_rating: str | None, meta: dict | None,
                     key: str) -> None:
    """"Your call" beside the decision card: the portfolio manager's own rating and reason, kept in the memory log
    beside the team's (changeable until the entry settles), and once settled who was right."""
    from tradingagents.memory.log_format import pm_outcome
    from tradingagents.rating import RATINGS_5_TIER
    from tradingagents.storage import open_memory_log, record_pm_decision

    try:
        entry = next((e for e in open_memory_log(config).load_entries(texts=False)
                      if e["ticker"] == ticker and e["date"] == date), None)
    except Exception as exc:  # noqa: BLE001 - the log cannot be read: said, the result still shown
        st.caption(_("Your call is not available: {problem}", problem=exc))
        return
    if entry is None:
        return  # not logged (a settled day re-analysed, a blind run)
    pm = entry.get("pm_decision") or {}
    with st.container(border=True, key=f"ta-your-call-{key}"):
        st.markdown("**" + _("Your call") + "**")
        if pm:
            st.caption(_("{who} · {at}: {rating}", who=pm.get("by") or "?", at=pm.get("at") or "",
                         rating=rating_label(pm.get("rating"))))
            if pm.get("reason"):
                st.markdown(shown(pm["reason"]))
        if not entry["pending"]:
            scored = pm_outcome(entry)
            verdict = {True: _("right"), False: _("wrong"), None: _("not scored")}
            st.caption(_("Settled: the team ({team}) was {team_verdict}; you ({pm}) were {pm_verdict}.",
                         team=rating_label(entry["rating"]), team_verdict=verdict[scored["was_right"]],
                         pm=rating_label(pm.get("rating")) if pm else "—",
                         pm_verdict=verdict[scored["pm_was_right"]]))
            return
        if not may_act_on_run(meta):
            st.caption(_("Only the run's owner or a desk lead may record a call on this run."))
            return
        tiers = list(RATINGS_5_TIER)
        current = pm.get("rating") or team_rating or "Hold"
        with st.form(f"your_call_{key}", border=False):
            rating = st.segmented_control(_("Your rating"), tiers, default=current if current in tiers else "Hold",
                                          format_func=rating_label, key=f"pm_rating_{key}")
            reason = st.text_area(_("Reason"), value=pm.get("reason") or "", key=f"pm_reason_{key}", height=80)
            saved = st.form_submit_button(_("Record my call") if not pm else _("Change my call"),
                                          icon=":material/how_to_vote:")
        if saved and rating:
            try:
                result = record_pm_decision(config, ticker, date, rating, reason, by=user_label())
            except Exception as exc:  # noqa: BLE001
                st.error(config_error_text(exc, config), icon=":material/error:")
                return
            if result["status"] == "settled":
                st.warning(_("The decision of {ticker} on {date} is settled: a call is scored on its outcome and can "
                             "no longer change.", ticker=ticker, date=date))
                return
            st.rerun()
