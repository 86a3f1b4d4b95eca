"""Debates page: bull/bear and risk debates as chat bubbles, with each judge's verdict; replay mode."""

from __future__ import annotations

import streamlit as st

from studio import ui
from studio.debates import Turn, turns_from_events, turns_from_saved
from tradingagents import team
from tradingagents.storage import list_runs, load_run

ui.require_router()


def main() -> None:
    config = ui.current_config()
    registry = ui.get_registry()

    st.title("Debates")
    st.html(ui.badges_html(config))

    past = list_runs(config)

    sources: list[tuple[str, str]] = []  # (label, id)
    current = registry.get(st.session_state.get("run_id") or st.query_params.get("run"))
    if current is not None:
        sources.append((f"Current run: {current.ticker} · {current.date} ({current.status})", "current"))
    for r in past:
        sources.append((f"{r['ticker']} · {r['date']} · {r.get('rating') or ''}", f"saved:{r['ticker']}|{r['date']}"))

    if not sources:
        st.info("No debate to show yet. Run an analysis on the **Run** page: the bull and bear researchers, then "
                "the aggressive, conservative and neutral risk analysts argue it out, and the debates appear here.")
        st.page_link("pages/run.py", label="Go to the Run page", icon=":material/rocket_launch:")
        return

    labels = [s[0] for s in sources]
    choice = st.selectbox("Run", range(len(sources)), format_func=lambda i: labels[i], key="debate_source")
    source_id = sources[choice][1]
    turns: list[Turn]
    if source_id == "current" and current is not None and current.status == "running":
        st.caption("Live: the debate fills in as the agents speak.")
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
            st.error(f"Could not open the saved run {ticker} {date}: {exc}")
            return
        turns = turns_from_saved(data.get("state"), data.get("meta"))

    if not turns:
        st.info("This run has no debate turns yet: they appear once the research team starts.")
        return

    mode = st.segmented_control("Mode", ["Full debate", "Replay"], default="Full debate", key="debate_mode")
    visible = turns
    if mode == "Replay":
        key = f"replay_{source_id}"
        st.session_state.setdefault(key, 1)
        b1, b2, b3, b4, info = st.columns([1, 1, 1, 1, 3])
        if b1.button("Start", key="rp_start", icon=":material/first_page:"):
            st.session_state[key] = 1
        if b2.button("Back", key="rp_back", icon=":material/chevron_left:"):
            st.session_state[key] = max(1, st.session_state[key] - 1)
        if b3.button("Next", key="rp_next", type="primary", icon=":material/chevron_right:"):
            st.session_state[key] = min(len(turns), st.session_state[key] + 1)
        if b4.button("End", key="rp_end", icon=":material/last_page:"):
            st.session_state[key] = len(turns)
        step = st.session_state[key]
        info.progress(step / len(turns), text=f"Turn {step} of {len(turns)}")
        visible = turns[:step]

    render_turns(visible, turns, replay=mode == "Replay")


SECTION_TITLES = {d: f"{team.DEBATE_TITLES[d]} — {' · '.join(r.speaker for r in team.speakers(d))}"
                  for d in team.DEBATES}


@st.fragment(run_every=1.0)
def live_debate(run_id: str) -> None:
    handle = ui.get_registry().get(run_id)
    if handle is None or handle.done:
        st.rerun()
        return
    turns = turns_from_events(handle.events)
    if not turns:
        st.info("The researchers have not spoken yet: the analysts are still gathering data.")
    render_turns(turns, turns, replay=False)


def render_turns(visible: list[Turn], turns: list[Turn], *, replay: bool) -> None:
    shown_section = None
    for i, turn in enumerate(visible):
        if turn.debate != shown_section:
            st.subheader(SECTION_TITLES[turn.debate])
            shown_section = turn.debate
        if turn.kind in ("turn", "history"):
            with st.chat_message(turn.speaker, avatar=turn.avatar):
                when = f"round {turn.round}" if turn.kind == "turn" else "every round (saved before per-turn records)"
                st.markdown(f"**{turn.speaker}** · {when}")
                st.markdown(turn.text)
        else:
            title = {"verdict": "verdict", "proposal": "proposal"}[turn.kind]
            with st.container(border=True):
                st.markdown(f"{turn.avatar} **{turn.speaker} — {title}**")
                st.markdown(turn.text)
        if replay and i == len(visible) - 1 and len(visible) < len(turns):
            st.caption(f"Next: {turns[len(visible)].speaker}")



main()
