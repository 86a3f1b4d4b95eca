"""Memories page: query a role's BM25 memory, see scores and matched terms, add lessons, clear a role."""

from __future__ import annotations

import streamlit as st

from studio import charts, ui
from studio.memview import ROLES, highlight_html, shared_terms, situation_from_state
from tradingagents.storage import open_role_memory

ui.require_router()

MAX_TERMS = 24
config = ui.current_config()

st.title("Memories")
st.html(ui.badges_html(config))
st.caption("Each role keeps lessons from settled decisions as (situation → advice) pairs and reads its best "
           "BM25 matches before it speaks. Scores are divided by the query's best score.")


def memory(role: str):
    return open_role_memory(role, config)  # files, or the desk's database


counts = {role: len(memory(role)) for role in ROLES}
cols = st.columns(len(ROLES))
for col, (role, label) in zip(cols, ROLES.items(), strict=True):
    col.metric(label, counts[role])

role = st.selectbox("Role", list(ROLES), format_func=lambda r: f"{ROLES[r]} ({counts[r]})", key="mem_role")
mem = memory(role)

if "mem_query" not in st.session_state:
    prefill = ""
    try:
        from tradingagents.storage import list_runs, load_run

        runs = list_runs(config)
        if runs:
            prefill = situation_from_state(load_run(config, runs[0]["ticker"], runs[0]["date"]).get("state"))
    except Exception:  # noqa: BLE001 - prefill is a convenience only
        prefill = ""
    st.session_state["mem_query"] = prefill

q_tab, add_tab, clear_tab = st.tabs([":material/search: Query", ":material/add: Add a lesson", ":material/delete: Clear"])

with q_tab:
    st.text_area("Situation", key="mem_query", height=140,
                 placeholder="e.g. Institutional selling increases in tech while rates continue rising")
    n = st.slider("Matches", 1, 10, 3, key="mem_n")
    query = (st.session_state.get("mem_query") or "").strip()
    if counts[role] == 0:
        st.info(f"The {ROLES[role].lower()} has no lessons yet. They are added when decisions are settled "
                "(Memory log → Settle now), or add one by hand in the next tab.")
    elif not query:
        st.info("Type a situation to see what this role remembers about similar ones.")
    else:
        matches = mem.get_memories(query, n_matches=int(n))
        if not matches:
            st.info("No stored situation shares a word with this query.")
        else:
            st.plotly_chart(charts.score_bars_figure(matches), width="stretch", key="mem_scores")
            for i, m in enumerate(matches, start=1):
                terms = shared_terms(query, m["matched_situation"], mem)
                shown = ", ".join(f"`{t}`" for t in terms[:MAX_TERMS]) or "—"
                if len(terms) > MAX_TERMS:
                    shown += f" and {len(terms) - MAX_TERMS} more"
                with st.container(border=True):
                    st.markdown(f"**#{i}** · score **{m['similarity_score']:.2f}** · "
                                f"{len(terms)} matched term(s): {shown}")
                    st.progress(max(0.0, min(1.0, float(m["similarity_score"]))))
                    with st.container(height=200 if len(m["matched_situation"]) > 600 else "content", border=False):
                        st.html(f'<div class="ta-situation">{highlight_html(m["matched_situation"], terms)}</div>')
                    st.markdown(f"**Advice:** {m['recommendation']}")

with add_tab:
    with st.form("add_lesson", clear_on_submit=True):
        situation = st.text_area("Situation", key="add_situation")
        advice = st.text_area("Advice", key="add_advice")
        if st.form_submit_button("Add to memory", type="primary"):
            if not situation.strip() or not advice.strip():
                st.error("Both the situation and the advice are needed: describe the market situation and "
                         "what this role should do next time.")
            else:
                mem.add_situations([(situation.strip(), advice.strip())])
                st.session_state["mem_added"] = role
                st.rerun()
    if st.session_state.pop("mem_added", None) == role:
        st.success(f"Added to the {ROLES[role].lower()}'s memory.")


def _dismiss_clear() -> None:
    st.session_state.pop("clear_pending", None)


@st.dialog("Clear this memory?", on_dismiss=_dismiss_clear)
def confirm_clear(role: str) -> None:
    st.write(f"This deletes all {counts[role]} lesson(s) of the **{ROLES[role]}**. It cannot be undone.")
    a, b = st.columns(2)
    if a.button("Yes, clear it", type="primary", key="confirm_clear_yes"):
        memory(role).clear()
        st.session_state["mem_cleared"] = role
        _dismiss_clear()
        st.rerun()
    if b.button("Cancel", key="confirm_clear_no"):
        _dismiss_clear()
        st.rerun()


with clear_tab:
    if st.session_state.pop("mem_cleared", None) == role:
        st.success(f"The {ROLES[role].lower()}'s memory is now empty.")
    st.write(f"The {ROLES[role].lower()} holds {counts[role]} lesson(s).")
    if st.button("Clear this role's memory…", disabled=counts[role] == 0, key="clear_role"):
        st.session_state["clear_pending"] = role
    if st.session_state.get("clear_pending") == role:
        confirm_clear(role)
