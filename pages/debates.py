"""Debates page: a battle view — bull and bear face each other, the three risk voices apart, round
dividers, each judge's verdict pinned beside its debate, replay with play/pause and speed."""

from __future__ import annotations

import html
import time
from typing import Any

import streamlit as st

from studio import theme, ui
from studio.debates import (
    ANSWERS_CAPTION,
    Turn,
    debate_title,
    rebuttals,
    replay_step,
    role_name,
    turns_from_events,
    turns_from_saved,
)
from studio.ui import _, rating_label, tr
from tradingagents import team
from tradingagents.i18n import N_
from tradingagents.storage import list_runs, load_run

ui.require_router()

SPEEDS = {"0.5×": 4.0, "1×": 2.0, "2×": 1.0, "4×": 0.5}  # replay speed → seconds per turn
PANE_HEIGHT = 560


# the view modes (the session keeps the English key; the control shows the label); a page's bare string would be
# drawn by Streamlit's magic, hence comments here
MODES = {"Full debate": N_("Full debate"), "Replay": N_("Replay")}
# a current run's status as its label shows it
STATUS = {"running": N_("running"), "finished": N_("finished"), "failed": N_("failed"), "stopped": N_("stopped"),
          "queued": N_("queued")}

# at a narrow width (where the theme stacks the verdict above its debate) the verdict's pane takes the height its
# text needs, up to the debate pane's: a pending verdict leaves no empty pane between it and the debate. Streamlit
# puts a fixed-height container's height on its layout wrapper (also as its flex basis), so that is sized too.
NARROW_CSS = ("<style>@media (max-width: 1100px){"
              "[data-testid=\"stLayoutWrapper\"]:has(> [class*=\"st-key-ta-verdict-\"]),"
              "[class*=\"st-key-ta-verdict-\"]{height:auto !important;flex:0 0 auto !important;"
              "max-height:" + str(PANE_HEIGHT) + "px !important}"
              "[class*=\"st-key-ta-verdict-\"]{overflow-y:auto !important}}</style>")
PRESENTATION_EXTRA_CSS = ("<style>[data-testid=\"stMainBlockContainer\"] h1{font-size:1.6rem !important;"
                          "padding:0 !important}</style>")


def _sources(config: dict, registry: Any) -> tuple[Any, list[tuple[str, str]]]:
    """This session's run of the server (or None) and the runs to pick from, as (label, id)."""
    sources: list[tuple[str, str]] = []  # (label, id)
    current = registry.get(st.session_state.get("run_id") or st.query_params.get("run"), "run")
    if current is not None:
        sources.append((_("Current run: {ticker} · {date} ({status})", ticker=current.ticker, date=current.date,
                          status=_(STATUS.get(current.status, current.status))), "current"))
    for r in list_runs(config):
        sources.append((f"{r['ticker']} · {r['date']} · {rating_label(r.get('rating'))}",
                        f"saved:{r['ticker']}|{r['date']}"))
    return current, sources


def main() -> None:
    config = ui.current_config()
    registry = ui.get_registry()
    st.html(theme.battle_css())

    head, present_col = st.columns([3, 1.4], vertical_alignment="bottom")
    head.title(_("Debates"), anchor=False)
    presentation = present_col.toggle(_("Presentation"), key="debate_present",
                                      help=_("Full screen for an audience: hides the sidebar and the app's chrome."))
    if presentation:
        # only the debate: the run picker and the mode fold into one closed expander, no captions or memory panel
        st.html(theme.presentation_css() + PRESENTATION_EXTRA_CSS)
        controls = st.expander(_("Run and mode"), expanded=False)
    else:
        st.html(ui.badges_html(config))
        controls = st.container()
    # at a narrow width the verdict stacks under its debate: it takes the height it needs, no empty pane
    st.html(NARROW_CSS)

    current, sources = _sources(config, registry)

    if not sources:
        st.info(_("No debate to show yet. Run an analysis on the **Run** page: the bull and bear researchers, then "
                  "the aggressive, conservative and neutral risk analysts argue it out, and the debates appear here."))
        st.page_link(page="pages/run.py", label=_("Go to the Run page"), icon=":material/rocket_launch:")
        return

    # a link such as /debates?ticker=NVDA&date=2024-05-10 (History, Backtest) opens that saved run
    wanted = f"saved:{st.query_params.get('ticker', '')}|{st.query_params.get('date', '')}"
    ids = [s[1] for s in sources]
    if wanted in ids and st.session_state.get("_debate_link") != wanted:
        st.session_state["_debate_link"] = wanted
        st.session_state["debate_source"] = ids.index(wanted)
    labels = [s[0] for s in sources]
    if st.session_state.get("debate_source", 0) >= len(sources):
        st.session_state["debate_source"] = 0
    choice = controls.selectbox(_("Run"), range(len(sources)), format_func=lambda i: labels[i], key="debate_source",
                                placeholder=_("Choose an option"))
    source_id = sources[choice][1]
    turns: list[Turn]
    if source_id == "current" and current is not None and current.status == "running":
        st.caption(_("Live: the debate fills in as the agents speak."))
        live_debate(current.run_id)
        return
    if source_id == "current" and current is not None:
        if current.status == "finished":
            turns = turns_from_saved(current.final_state, current.meta)
        else:
            turns = turns_from_events(current.events)
    else:
        ticker, date = source_id.split(":", 1)[1].split("|", 1)
        try:
            data = load_run(config, ticker, date)
        except Exception as exc:  # noqa: BLE001 - a damaged file is reported, not raised
            st.error(_("Could not open the saved run {ticker} {date}: {error}", ticker=ticker, date=date, error=exc))
            return
        turns = turns_from_saved(data.get("state"), data.get("meta"))

    saved_meta = (current.meta if source_id == "current" and current is not None and current.status == "finished"
                  else None if source_id == "current" else data.get("meta"))
    if not presentation:
        ui.render_remembered(saved_meta, f"debates_{source_id}", expanded=False)
    if not turns:
        st.info(_("This run has no debate turns yet: they appear once the research team starts."))
        return

    mode = controls.segmented_control(_("Mode"), ["Full debate", "Replay"], default="Full debate", key="debate_mode",
                                      format_func=lambda m: _(MODES[m]))
    if mode == "Replay":
        replay(turns, f"replay_{source_id}")
    else:
        render_turns(turns, turns, replay=False)
    if saved_meta is not None and not presentation:  # a saved run: its questions, and a box to ask
        ui.render_questions(config, saved_meta.get("ticker") or "", saved_meta.get("date") or "", saved_meta,
                            f"debates_{source_id}")


def replay(turns: list[Turn], key: str) -> None:
    """Controls (full reruns) and the replayed view (a fragment that ticks while playing)."""
    s = st.session_state
    s.setdefault(key, 1)
    s.setdefault(f"{key}_playing", False)
    total = len(turns)

    def act(action: str) -> None:
        s[key] = replay_step(s[key], total, action)
        if action in ("start", "back", "next", "end"):
            s[f"{key}_playing"] = False

    def play_pause() -> None:
        playing = not s[f"{key}_playing"]
        if playing and s[key] >= total:
            s[key] = 1  # Play at the end starts over
        s[f"{key}_playing"] = playing
        s[f"{key}_tick"] = time.monotonic()

    playing = s[f"{key}_playing"]
    with st.container(horizontal=True, vertical_alignment="bottom", key="ta-replay-controls"):
        # a wrapping row: on a narrow screen the buttons move to a second line instead of shrinking to "N…"
        st.button(_("Pause") if playing else _("Play"), key="rp_play", type="primary", on_click=play_pause,
                  icon=":material/pause:" if playing else ":material/play_arrow:")
        st.button(_("Start"), key="rp_start", on_click=act, args=("start",), icon=":material/first_page:",
                  disabled=s[key] <= 1)
        st.button(_("Back"), key="rp_back", on_click=act, args=("back",), icon=":material/chevron_left:",
                  disabled=s[key] <= 1)
        st.button(_("Next"), key="rp_next", on_click=act, args=("next",), icon=":material/chevron_right:",
                  disabled=s[key] >= total)
        st.button(_("End"), key="rp_end", on_click=act, args=("end",), icon=":material/last_page:",
                  disabled=s[key] >= total)
        speed = st.select_slider(_("Speed"), list(SPEEDS), value=s.get("rp_speed", "1×"), key="rp_speed", width=180)
    interval = SPEEDS[speed]

    @st.fragment(run_every=interval if playing else None)
    def view() -> None:
        if s.get(f"{key}_playing") and time.monotonic() - s.get(f"{key}_tick", 0.0) >= interval * 0.9:
            s[key] = replay_step(s[key], total, "tick")
            s[f"{key}_tick"] = time.monotonic()
            if s[key] >= total:
                s[f"{key}_playing"] = False
                st.rerun()  # the whole page: the timer stops and Next/End turn grey
        step = s[key]
        st.progress(step / total, text=_("Turn {step} of {total} · playing", step=step, total=total)
                    if s[f"{key}_playing"] else _("Turn {step} of {total}", step=step, total=total))
        render_turns(turns[:step], turns, replay=True)

    view()


@st.fragment(run_every=1.0)
def live_debate(run_id: str) -> None:
    handle = ui.get_registry().get(run_id, "run")
    if handle is None or handle.done:
        st.rerun()
        return
    turns = turns_from_events(handle.events)
    if not turns:
        st.info(_("The researchers have not spoken yet: the analysts are still gathering data."))
    render_turns(turns, turns, replay=False, follow=True)


def _who(role: str) -> str:
    return f'<span class="ta-who-{role}">{html.escape(role_name(role, t=tr()))}</span>'


def render_turns(visible: list[Turn], turns: list[Turn], *, replay: bool, follow: bool | None = None) -> None:
    """Each debate as a battle: its turns in a scroll pane, its verdict beside.

    A finished debate opens at its first turn (the opening argument is read first); a replay or a live
    debate (``follow``) keeps the newest turn in view."""
    answers = rebuttals(turns)
    follow = replay if follow is None else follow
    if not st.session_state.get("debate_present"):
        st.caption(_(ANSWERS_CAPTION))
    shown = {t.debate for t in visible}
    for debate in team.DEBATES:
        if debate not in shown:
            continue
        indexed = [(i, t) for i, t in enumerate(visible) if t.debate == debate]
        st.subheader(debate_title(debate, t=tr()), anchor=False)
        with st.container(key=f"ta-arena-{debate}"):
            pane, verdict_col = st.columns([3, 2])
        with pane, st.container(height=PANE_HEIGHT, autoscroll=follow, border=True, key=f"ta-battle-{debate}"):
            last_round = None
            for i, turn in indexed:
                if turn.kind not in ("turn", "history"):
                    continue
                rnd = turn.round if turn.kind == "turn" else None
                if rnd != last_round or i == indexed[0][0]:
                    label = (_("Round {n}", n=rnd) if rnd is not None
                             else _("Every round (saved before per-turn records)"))
                    st.html(f'<div class="ta-round" data-round="{rnd or ""}">{html.escape(label)}</div>')
                    last_round = rnd
                _bubble(i, turn, answers.get(i))
        with verdict_col:
            _verdict_card(debate, [turn for _i, turn in indexed if turn.kind in ("verdict", "proposal")], replay=replay)
    if replay and len(visible) < len(turns):
        st.caption(_("Next: {speaker}", speaker=turns[len(visible)].speaker_in(tr())))


def _bubble(i: int, turn: Turn, answer: tuple[str, str] | None) -> None:
    side = theme.side(turn.role)
    weights = {"left": [7, 1], "right": [1, 7], "center": [1, 6, 1]}[side]
    cols = st.columns(weights)
    slot = {"left": 0, "right": 1, "center": 1}[side]
    with cols[slot], st.container(key=f"{theme.turn_key(turn.role, i)}-{side}-"):
        with st.chat_message(turn.speaker_in(tr()), avatar=turn.avatar):
            when = _("round {n}", n=turn.round) if turn.round is not None else _("every round")
            st.html(f'<div class="ta-turn-head" data-role="{turn.role}" data-side="{side}">'
                    f"{_who(turn.role)} · {html.escape(when)}</div>")
            if answer is not None:
                opp, sentence = answer
                point = f'<span class="ta-point">{html.escape(sentence[:240])}</span>'  # the model's words
                st.html(f'<div class="ta-answers" data-answers="{opp}">'
                        + _("answers {who}: “{point}”", who=_who(opp), point=point) + "</div>")
            with st.container(key=f"ta-said-{i}"):  # what the agent wrote (in the run's output language)
                st.markdown(ui.shown(turn.text))


def _verdict_card(debate: str, cards: list[Turn], *, replay: bool) -> None:
    judge = team.judge(debate)
    with st.container(height=PANE_HEIGHT, border=True, key=f"ta-verdict-{debate}"):
        if not any(c.kind == "verdict" for c in cards):
            st.markdown(_("{judge} — verdict pending", judge=role_name(judge.key, t=tr())))
            st.caption(_("The judge speaks after the last turn.") if replay else _("Not recorded for this run."))
        for n, card in enumerate(cards):
            who = card.speaker_in(tr())
            st.markdown(_("**{who} — verdict**", who=who) if card.kind == "verdict"
                        else _("**{who} — proposal**", who=who))
            with st.container(key=f"ta-said-{debate}-{card.kind}-{n}"):  # the judge's or the trader's own words
                st.markdown(ui.shown(card.text))


main()
