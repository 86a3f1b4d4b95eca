"""Memories page: query a role's BM25 memory, see scores and matched terms, add lessons, clear a role.

Each role's memory is opened once per server (``st.cache_resource``): an instance picks up lines other
writers appended before it answers, so counts and matches are always current without re-reading and
re-indexing tens of thousands of situations on every rerun.
"""

from __future__ import annotations

import streamlit as st

from studio import charts, ui
from studio.lessons import SORTS, lesson_rows, sort_rows, track_records
from studio.memview import EXAMPLE_SITUATIONS, ROLES, display_terms, shared_terms, situation_html
from tradingagents.memory.situation_memory import lesson_id
from tradingagents.storage import list_memory_used, open_memory_log, open_role_memory, storage_url

ui.require_router()

MAX_TERMS = 24
SHOW_SKIPPED = 50
config = ui.current_config()


@st.cache_resource(max_entries=32, show_spinner="Opening the memory…")
def _open(role: str, where: tuple, _config):
    """One open memory per (role, storage, BM25 parameters); ``_config`` is not part of the key."""
    return open_role_memory(role, _config)  # files, or the desk's database


def memory(role: str):
    where = (str(config["memory_dir"]), storage_url(config), float(config["bm25_k1"]), float(config["bm25_b"]))
    return _open(role, where, config)


MAX_RECORDS = 500


def where_of(cfg) -> tuple:
    return (str(cfg["results_dir"]), str(cfg["memory_log_path"]), storage_url(cfg))


@st.cache_data(ttl=10, show_spinner=False)
def _records(where: tuple, _config):
    """The lessons' track records (every saved run's memory_used joined with the log), kept for 10 s so
    a rerun of this page does not read every saved run again."""
    return track_records(list_memory_used(_config), open_memory_log(_config).load_entries())


def set_query(text: str) -> None:
    st.session_state["mem_query"] = text


st.title("Memories")
st.html(ui.badges_html(config))
st.html("<style>.ta-situation :is(h1,h2,h3,h4,h5,h6){font-size:1rem;margin:.4rem 0 .2rem}"
        ".ta-situation p,.ta-advice p{margin:.2rem 0}</style>")  # a stored report's headings stay small
st.caption("Each role keeps lessons from settled decisions as (situation → advice) pairs and reads its best "
           "BM25 matches before it speaks. Scores are divided by the query's best score.")

counts = {role: memory(role).count() for role in ROLES}
row = st.container(horizontal=True, wrap=True)  # wraps onto new lines on a narrow window
for role, label in ROLES.items():
    row.metric(label, f"{counts[role]:,}", width=150)

linked = st.query_params.get("memory")  # a link from a run's "What the team remembered"
if linked in ROLES and "mem_role" not in st.session_state:
    st.session_state["mem_role"] = linked
role = st.selectbox("Role", list(ROLES), format_func=lambda r: f"{ROLES[r]} ({counts[r]:,})", key="mem_role")
mem = memory(role)
wanted_lesson = st.query_params.get("lesson") if linked == role else None
if wanted_lesson:
    found = [(s, r) for s, r in mem.items() if lesson_id(s, r) == wanted_lesson]
    with st.container(border=True):
        if found:
            st.markdown(f"**Lesson `{wanted_lesson}`** (linked from a run)")
            st.html(f'<div class="ta-advice"><b>Advice:</b> {situation_html(found[0][1])}</div>')
        else:
            st.caption(f"Lesson `{wanted_lesson}` is no longer in this memory.")

if mem.problems:
    st.warning(
        f"{len(mem.problems)} line(s) of `{mem.path}` could not be read and are skipped: the "
        f"{ROLES[role].lower()} does not see them. Nothing else is affected. To fix: open the file and correct or "
        "delete those lines (each line is one JSON object with \"situation\" and \"recommendation\" text), "
        "then reload this page.",
        icon=":material/warning:",
    )
    with st.expander(f"Skipped lines ({len(mem.problems)})"):
        for p in mem.problems[:SHOW_SKIPPED]:
            st.text(p)
        if len(mem.problems) > SHOW_SKIPPED:
            st.caption(f"… and {len(mem.problems) - SHOW_SKIPPED} more.")

st.session_state.setdefault("mem_query", "")
q_tab, rec_tab, add_tab, clear_tab = st.tabs([":material/search: Query", ":material/military_tech: Track record",
                                              ":material/add: Add a lesson", ":material/delete: Clear"])

with q_tab:
    st.text_area("Situation", key="mem_query", height=120,
                 placeholder="Describe a market situation, or pick an example below")
    st.caption("Examples to try:")
    for i, example in enumerate(EXAMPLE_SITUATIONS):
        st.button(example, key=f"mem_example_{i}", on_click=set_query, args=(example,), type="tertiary",
                  icon=":material/north_east:")
    n = st.slider("Matches", 1, 10, 3, key="mem_n")
    query = (st.session_state.get("mem_query") or "").strip()
    if counts[role] == 0:
        st.info(f"The {ROLES[role].lower()} has no lessons yet. They are added when decisions are settled "
                "(Memory log → Settle now), or add one by hand in the next tab.")
    elif not query:
        st.info("Type a situation, or click an example, to see what this role remembers about similar ones.")
    else:
        matches = [m for m in mem.get_memories(query, n_matches=int(n)) if m["similarity_score"] > 0]
        if not matches:
            st.info("No memory matches these terms: no stored situation shares a word with this query. Try "
                    "other words, or one of the examples.")
        else:
            st.plotly_chart(charts.score_bars_figure(matches), width="stretch", key="mem_scores")
            for i, m in enumerate(matches, start=1):
                terms = display_terms(shared_terms(query, m["matched_situation"], mem))
                shown = ", ".join(f"`{t}`" for t in terms[:MAX_TERMS]) or "only common words and numbers"
                if len(terms) > MAX_TERMS:
                    shown += f" and {len(terms) - MAX_TERMS} more"
                with st.container(border=True):
                    st.markdown(f"**#{i}** · score **{m['similarity_score']:.2f}** · "
                                f"{len(terms)} matched term(s): {shown}")
                    st.progress(max(0.0, min(1.0, float(m["similarity_score"]))))
                    with st.container(height=220 if len(m["matched_situation"]) > 600 else "content", border=False):
                        st.html(f'<div class="ta-situation">{situation_html(m["matched_situation"], terms)}</div>')
                    st.html(f'<div class="ta-advice"><b>Advice:</b> {situation_html(m["recommendation"])}</div>')


def _set_retired(role: str, lesson: str, retire: bool) -> None:
    memory(role).retire(lesson, retire)
    _records.clear()
    ui.audit("memory_retire" if retire else "memory_restore", role, lesson=lesson)
    st.session_state["mem_retired_msg"] = (f"Lesson `{lesson}` retired: it stays stored but is no longer retrieved."
                                           if retire else f"Lesson `{lesson}` restored: it is retrieved again.")


with rec_tab:
    st.caption("How each lesson fared: **retrieved** is the number of saved runs it was given to; **settled**, "
               "**right** and **wrong** count those runs' decisions whose holding window has closed, judged by "
               "the team's rule (bullish tiers need a positive alpha, bearish a negative one, Hold one within "
               "the band). **Helpfulness** is the share of those settled decisions that were right, shown with "
               "how many settled; **mean alpha** is their mean alpha. A retired lesson stays stored but no role "
               "retrieves it; restore it at any time.")
    rows = lesson_rows(role, mem.lessons(), _records(where_of(config), config))
    if not rows:
        st.info(f"The {ROLES[role].lower()} has no lessons yet.")
    else:
        by = st.selectbox("Sort by", list(SORTS), format_func=SORTS.get, key="mem_sort")
        rows = sort_rows(rows, by)
        if len(rows) > MAX_RECORDS:
            st.caption(f"The first {MAX_RECORDS:,} of {len(rows):,} lessons in this order.")
            rows = rows[:MAX_RECORDS]
        st.dataframe(
            [{"Lesson id": r["id"], "Lesson": r["lesson"], "Retrieved": r["retrieved"], "Settled": r["settled"],
              "Right": r["right"], "Wrong": r["wrong"],
              "Helpfulness": "—" if r["helpfulness"] is None else f"{r['helpfulness']:.0%} of {r['settled']}",
              "Mean alpha": "—" if r["mean_alpha"] is None else f"{r['mean_alpha']:+.2%}",
              "Status": "retired" if r["retired"] else "in use"} for r in rows],
            hide_index=True, width="stretch", key="mem_records")
        msg = st.session_state.pop("mem_retired_msg", None)
        if msg:
            st.success(msg)
        ids = [r["id"] for r in rows]
        if wanted_lesson in ids and "mem_pick" not in st.session_state:
            st.session_state["mem_pick"] = wanted_lesson
        by_id = {r["id"]: r for r in rows}
        pick = st.selectbox("Lesson", ids, key="mem_pick",
                            format_func=lambda i: f"{i} · {'retired · ' if by_id[i]['retired'] else ''}"
                                                  f"{by_id[i]['lesson'][:80]}")
        chosen = by_id[pick]
        if chosen["retired"]:
            st.button("Restore this lesson", key="mem_restore", icon=":material/undo:",
                      on_click=_set_retired, args=(role, pick, False))
        else:
            st.button("Retire this lesson", key="mem_retire", icon=":material/archive:",
                      on_click=_set_retired, args=(role, pick, True))


def _dismiss() -> None:
    st.session_state.pop("mem_confirm", None)


@st.dialog("Add this lesson?", on_dismiss=_dismiss)
def confirm_add(role: str, situation: str, advice: str) -> None:
    st.write(f"It is added to the **{ROLES[role]}**'s memory and read whenever a similar situation comes up.")
    st.html(f'<div class="ta-situation">{situation_html(situation)}</div>')
    st.html(f"<div><b>Advice:</b> {situation_html(advice)}</div>")
    a, b = st.columns(2)
    if a.button("Yes, add it", type="primary", key="confirm_add_yes"):
        memory(role).add_situations([(situation, advice)])
        ui.audit("memory_add", role, situation=situation[:200], advice=advice[:200])
        st.session_state["mem_done"] = (role, f"Added to the {ROLES[role].lower()}'s memory.")
        _dismiss()
        st.rerun()
    if b.button("Cancel", key="confirm_add_no"):
        _dismiss()
        st.rerun()


@st.dialog("Clear this memory?", on_dismiss=_dismiss)
def confirm_clear(role: str) -> None:
    st.write(f"This deletes all {counts[role]:,} lesson(s) of the **{ROLES[role]}**. It cannot be undone.")
    a, b = st.columns(2)
    if a.button("Yes, clear it", type="primary", key="confirm_clear_yes"):
        memory(role).clear()
        ui.audit("memory_retire", role, lessons=counts[role], what="cleared the role's memory")
        st.session_state["mem_done"] = (role, f"The {ROLES[role].lower()}'s memory is now empty.")
        _dismiss()
        st.rerun()
    if b.button("Cancel", key="confirm_clear_no"):
        _dismiss()
        st.rerun()


done = st.session_state.pop("mem_done", None)
with add_tab:
    if done and done[0] == role and "Added" in done[1]:
        st.success(done[1])
    with st.form("add_lesson", clear_on_submit=True):
        situation = st.text_area("Situation", key="add_situation")
        advice = st.text_area("Advice", key="add_advice")
        if st.form_submit_button("Add to memory", type="primary"):
            if not situation.strip() or not advice.strip():
                st.error("Both the situation and the advice are needed: describe the market situation and "
                         "what this role should do next time.")
            else:
                st.session_state["mem_confirm"] = ("add", role, situation.strip(), advice.strip())

with clear_tab:
    if done and done[0] == role and "empty" in done[1]:
        st.success(done[1])
    st.write(f"The {ROLES[role].lower()} holds {counts[role]:,} lesson(s).")
    if st.button("Clear this role's memory…", disabled=counts[role] == 0, key="clear_role"):
        st.session_state["mem_confirm"] = ("clear", role)

pending = st.session_state.get("mem_confirm")
if pending and pending[1] == role:
    if pending[0] == "add":
        confirm_add(*pending[1:])
    else:
        confirm_clear(role)
