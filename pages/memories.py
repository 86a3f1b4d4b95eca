"""Memories page: query a role's BM25 memory, see scores and matched terms, add lessons, clear a role.

Each role's memory is opened once per server (``st.cache_resource``): an instance picks up lines other
writers appended before it answers, so counts and matches are always current without re-reading and
re-indexing tens of thousands of situations on every rerun.
"""

from __future__ import annotations

import streamlit as st

from studio import charts, ui
from studio.lessons import SORTS, ranked_rows, track_records
from studio.memview import EXAMPLE_SITUATIONS, ROLES, display_terms, shared_terms, situation_html
from studio.ui import _, tr
from tradingagents.errors import NotAllowed
from tradingagents.i18n import Translator
from tradingagents.memory.situation_memory import lesson_id
from tradingagents.storage import (
    edit_role_memory,
    list_memory_used,
    open_memory_log,
    open_role_memory,
    storage_url,
)

ui.require_router()

MAX_TERMS = 24
SHOW_SKIPPED = 50
MAX_RECORDS = 500


def role_name(role: str, t: Translator | None = None) -> str:
    """A role memory's reader in the page's language (the roster's shared names, core.po); a widget's
    format_func passes the ``t`` of the run that drew it (it may be called after that run)."""
    return (t or tr()).p("role", ROLES[role])


def role_lower(role: str) -> str:
    """The role's name inside a sentence: lower case in English ("the bull researcher"), as is in Chinese."""
    return role_name(role).lower() if tr().lang == "en" else role_name(role)


@st.cache_resource(max_entries=32, show_spinner=False)
def _open(role: str, where: tuple, _config):
    """One open memory per (role, storage, BM25 parameters); ``_config`` is not part of the key."""
    return open_role_memory(role, _config)  # files, or the desk's database


def editable(role: str, config: dict):
    """The role's memory for an edit, if this person may (``storage.edit_role_memory``, else NotAllowed)."""
    return edit_role_memory(memory(role, config), who=ui.owner(), lead=ui.acts_as_lead())


def memory(role: str, config: dict):
    where = (str(config["memory_dir"]), storage_url(config), float(config["bm25_k1"]), float(config["bm25_b"]))
    return _open(role, where, config)


def where_of(cfg) -> tuple:
    return (str(cfg["results_dir"]), str(cfg["memory_log_path"]), storage_url(cfg))


@st.cache_data(ttl=10, show_spinner=False)
def _records(where: tuple, _config):
    """The lessons' track records (every saved run's memory_used joined with the log), kept for 10 s so
    a rerun of this page does not read every saved run again."""
    return track_records(list_memory_used(_config), open_memory_log(_config).load_entries())


def set_query(text: str) -> None:
    st.session_state["mem_query"] = text


def _pick_role(config: dict, counts: dict) -> tuple[str, object, str | None]:
    """The role (a run's "What the team remembered" may link one, and a lesson), its memory and the linked lesson;
    the lines of its file that could not be read are said."""
    linked = st.query_params.get("memory")  # a link from a run's "What the team remembered"
    if linked in ROLES and "mem_role" not in st.session_state:
        st.session_state["mem_role"] = linked
    t = tr()
    role = st.selectbox(_("Role"), list(ROLES), format_func=lambda r: f"{role_name(r, t)} ({counts[r]:,})",
                        key="mem_role", placeholder=_("Choose an option"))
    mem = memory(role, config)
    wanted_lesson = st.query_params.get("lesson") if linked == role else None
    if wanted_lesson:
        advice = _("Advice:")
        found = [(s, r) for s, r in mem.items() if lesson_id(s, r) == wanted_lesson]
        with st.container(border=True):
            if found:
                st.markdown(_("**Lesson `{id}`** (linked from a run)", id=wanted_lesson))
                st.html(f'<div class="ta-advice"><b>{advice}</b> {situation_html(found[0][1])}</div>')
            else:
                st.caption(_("Lesson `{id}` is no longer in this memory.", id=wanted_lesson))

    if mem.problems:
        st.warning(
            _("{n} line(s) of `{path}` could not be read and are skipped: the {role} does not see them. Nothing else "
              "is affected. To fix: open the file and correct or delete those lines (each line is one JSON object "
              "with \"situation\" and \"recommendation\" text), then reload this page.",
              n=len(mem.problems), path=mem.path, role=role_lower(role)),
            icon=":material/warning:",
        )
        with st.expander(_("Skipped lines ({n})", n=len(mem.problems))):
            for p in mem.problems[:SHOW_SKIPPED]:
                st.text(p)
            if len(mem.problems) > SHOW_SKIPPED:
                st.caption(_("… and {n} more.", n=len(mem.problems) - SHOW_SKIPPED))
    return role, mem, wanted_lesson


def _query_tab(mem, role: str, count: int) -> None:
    t, advice = tr(), _("Advice:")
    st.text_area(_("Situation"), key="mem_query", height=120,
                 placeholder=_("Describe a market situation, or pick an example below"))
    st.caption(_("Examples to try:"))
    for i, example in enumerate(EXAMPLE_SITUATIONS):
        shown_example = t(example)  # the example in the page's language is what the query gets
        st.button(shown_example, key=f"mem_example_{i}", on_click=set_query, args=(shown_example,), type="tertiary",
                  icon=":material/north_east:")
    n = st.slider(_("Matches"), 1, 10, 3, key="mem_n")
    query = (st.session_state.get("mem_query") or "").strip()
    if count == 0:
        st.info(_("The {role} has no lessons yet. They are added when decisions are settled "
                  "(Memory log → Settle now), or add one by hand in the next tab.", role=role_lower(role)))
    elif not query:
        st.info(_("Type a situation, or click an example, to see what this role remembers about similar ones."))
    else:
        matches = [m for m in mem.get_memories(query, n_matches=int(n)) if m["similarity_score"] > 0]
        if not matches:
            st.info(_("No memory matches these terms: no stored situation shares a word with this query. Try "
                      "other words, or one of the examples."))
        else:
            st.plotly_chart(charts.score_bars_figure(matches, t=t), width="stretch", config=charts.plotly_config(t), key="mem_scores")
            for i, m in enumerate(matches, start=1):
                terms = display_terms(shared_terms(query, m["matched_situation"], mem))
                shown = ", ".join(f"`{w}`" for w in terms[:MAX_TERMS]) or _("only common words and numbers")
                if len(terms) > MAX_TERMS:
                    shown = _("{terms} and {n} more", terms=shown, n=len(terms) - MAX_TERMS)
                with st.container(border=True):
                    st.markdown(_("**#{i}** · score **{score}** · {n} matched term(s): {terms}", i=i,
                                  score=f"{m['similarity_score']:.2f}", n=len(terms), terms=shown))
                    st.progress(max(0.0, min(1.0, float(m["similarity_score"]))))
                    with st.container(height=220 if len(m["matched_situation"]) > 600 else "content", border=False):
                        st.html(f'<div class="ta-situation">{situation_html(m["matched_situation"], terms)}</div>')
                    st.html(f'<div class="ta-advice"><b>{advice}</b> {situation_html(m["recommendation"])}</div>')


def record_table(rows: list[dict], t) -> list[dict]:
    """The track-record table's rows with headers and values in the page's language."""
    retired, in_use = t("retired"), t("in use")
    return [{t("Lesson id"): r["id"], t("Lesson"): r["lesson"], t("Retrieved"): r["retrieved"],
             t("Settled"): r["settled"], t("Right"): r["right"], t("Wrong"): r["wrong"],
             t("Helpfulness"): "—" if r["helpfulness"] is None else t("{share} of {n}", share=f"{r['helpfulness']:.0%}",
                                                                       n=r["settled"]),
             t("Mean alpha"): "—" if r["mean_alpha"] is None else f"{r['mean_alpha']:+.2%}",
             t("Status"): retired if r["retired"] else in_use} for r in rows]


def _set_retired(role: str, lesson: str, retire: bool, config: dict) -> None:
    try:
        editable(role, config).retire(lesson, retire)
    except NotAllowed as exc:
        st.session_state["mem_refused"] = str(exc)
        return
    _records.clear()
    ui.audit("memory_retire" if retire else "memory_restore", role, lesson=lesson)
    st.session_state["mem_retired_msg"] = (
        _("Lesson `{id}` retired: it stays stored but is no longer retrieved.", id=lesson) if retire
        else _("Lesson `{id}` restored: it is retrieved again.", id=lesson))


def _record_tab(config: dict, role: str, mem, wanted_lesson: str | None, may_edit: bool) -> None:
    t = tr()
    st.caption(_("How each lesson fared: **retrieved** is the number of saved runs it was given to; **settled**, "
                 "**right** and **wrong** count those runs' decisions whose holding window has closed, judged by "
                 "the team's rule (bullish tiers need a positive alpha, bearish a negative one, Hold one within "
                 "the band). **Helpfulness** is the share of those settled decisions that were right, shown with "
                 "how many settled; **mean alpha** is their mean alpha. A retired lesson stays stored but no role "
                 "retrieves it; restore it at any time."))
    lessons = mem.lessons()
    if not lessons:
        st.info(_("The {role} has no lessons yet.", role=role_lower(role)))
    else:
        by = st.selectbox(_("Sort by"), list(SORTS), format_func=lambda k: t(SORTS[k]), key="mem_sort",
                          placeholder=_("Choose an option"))
        # rows for the lessons shown only (a large memory's every row cost most of this page's rerun)
        total, rows = ranked_rows(role, lessons, _records(where_of(config), config), by, MAX_RECORDS)
        if total > MAX_RECORDS:
            st.caption(_("The first {n} of {total} lessons in this order.", n=f"{MAX_RECORDS:,}",
                         total=f"{total:,}"))
        st.dataframe(record_table(rows, t), hide_index=True, width="stretch", key="mem_records")
        msg = st.session_state.pop("mem_retired_msg", None)
        if msg:
            st.success(msg)
        ids = [r["id"] for r in rows]
        if wanted_lesson in ids and "mem_pick" not in st.session_state:
            st.session_state["mem_pick"] = wanted_lesson
        by_id = {r["id"]: r for r in rows}
        retired_tag = _("retired")
        pick = st.selectbox(_("Lesson"), ids, key="mem_pick", placeholder=_("Choose an option"),
                            format_func=lambda i: f"{i} · {retired_tag + ' · ' if by_id[i]['retired'] else ''}"
                                                  f"{by_id[i]['lesson'][:80]}")
        chosen = by_id[pick]
        if chosen["retired"]:
            st.button(_("Restore this lesson"), key="mem_restore", icon=":material/undo:",
                      on_click=_set_retired, args=(role, pick, False, config), disabled=not may_edit)
        else:
            st.button(_("Retire this lesson"), key="mem_retire", icon=":material/archive:",
                      on_click=_set_retired, args=(role, pick, True, config), disabled=not may_edit)


def _dismiss() -> None:
    st.session_state.pop("mem_confirm", None)


@st.dialog(_("Add this lesson?"), on_dismiss=_dismiss)
def confirm_add(config: dict, role: str, situation: str, advice: str) -> None:
    st.write(_("It is added to the **{role}**'s memory and read whenever a similar situation comes up.",
               role=role_name(role)))
    st.html(f'<div class="ta-situation">{situation_html(situation)}</div>')
    label = _("Advice:")
    st.html(f"<div><b>{label}</b> {situation_html(advice)}</div>")
    a, b = st.columns(2)
    if a.button(_("Yes, add it"), type="primary", key="confirm_add_yes"):
        try:
            editable(role, config).add_situations([(situation, advice)])
        except NotAllowed as exc:
            st.error(str(exc), icon=":material/lock:")
            return
        ui.audit("memory_add", role, situation=situation[:200], advice=advice[:200])
        st.session_state["mem_done"] = (role, "add", _("Added to the {role}'s memory.", role=role_lower(role)))
        _dismiss()
        st.rerun()
    if b.button(_("Cancel"), key="confirm_add_no"):
        _dismiss()
        st.rerun()


@st.dialog(_("Clear this memory?"), on_dismiss=_dismiss)
def confirm_clear(config: dict, role: str, count: int) -> None:
    st.write(_("This deletes all {n} lesson(s) of the **{role}**. It cannot be undone.", n=f"{count:,}",
               role=role_name(role)))
    a, b = st.columns(2)
    if a.button(_("Yes, clear it"), type="primary", key="confirm_clear_yes"):
        try:
            editable(role, config).clear()
        except NotAllowed as exc:
            st.error(str(exc), icon=":material/lock:")
            return
        ui.audit("memory_retire", role, lessons=count, what="cleared the role's memory")
        st.session_state["mem_done"] = (role, "clear", _("The {role}'s memory is now empty.", role=role_lower(role)))
        _dismiss()
        st.rerun()
    if b.button(_("Cancel"), key="confirm_clear_no"):
        _dismiss()
        st.rerun()


def _edit_tabs(config: dict, role: str, count: int, add_tab, clear_tab, may_edit: bool) -> None:
    """Add a lesson and Clear (a desk lead's), each confirmed in a dialog."""
    done = st.session_state.pop("mem_done", None)
    refused = st.session_state.pop("mem_refused", None)
    if refused:
        st.error(refused, icon=":material/lock:")
    if not may_edit:
        for tab in (add_tab, clear_tab):
            tab.info(_("Only a desk lead can add, retire, restore or clear lessons on this desk; you can read them."),
                     icon=":material/lock:")
    with add_tab:
        if done and done[0] == role and done[1] == "add":
            st.success(done[2])
        with st.form("add_lesson", clear_on_submit=True):
            situation = st.text_area(_("Situation"), key="add_situation")
            advice = st.text_area(_("Advice"), key="add_advice")
            if st.form_submit_button(_("Add to memory"), type="primary", disabled=not may_edit):
                if not situation.strip() or not advice.strip():
                    st.error(_("Both the situation and the advice are needed: describe the market situation and "
                               "what this role should do next time."))
                else:
                    st.session_state["mem_confirm"] = ("add", role, situation.strip(), advice.strip())

    with clear_tab:
        if done and done[0] == role and done[1] == "clear":
            st.success(done[2])
        st.write(_("The {role} holds {n} lesson(s).", role=role_lower(role), n=f"{count:,}"))
        if st.button(_("Clear this role's memory…"), disabled=count == 0 or not may_edit, key="clear_role"):
            st.session_state["mem_confirm"] = ("clear", role)

    pending = st.session_state.get("mem_confirm")
    if pending and pending[1] == role:
        if pending[0] == "add":
            confirm_add(config, *pending[1:])
        else:
            confirm_clear(config, role, count)


def main() -> None:
    config = ui.current_config()
    may_edit = ui.acts_as_lead()  # the ownership table: only a desk lead edits the roles' lessons
    st.title(_("Memories"), anchor=False)
    st.html(ui.badges_html(config))
    st.html("<style>.ta-situation :is(h1,h2,h3,h4,h5,h6){font-size:1rem;margin:.4rem 0 .2rem}"
            ".ta-situation p,.ta-advice p{margin:.2rem 0}</style>")  # a stored report's headings stay small
    st.caption(_("Each role keeps lessons from settled decisions as (situation → advice) pairs and, before it "
                 "speaks, reads the ones whose situations share the most telling words with today's. Scores are "
                 "relative: the best match of a query scores 1."))

    counts = {role: memory(role, config).count() for role in ROLES}
    row = st.container(horizontal=True, wrap=True)  # wraps onto new lines on a narrow window
    for role in ROLES:
        row.metric(role_name(role), f"{counts[role]:,}", width=150)
    role, mem, wanted_lesson = _pick_role(config, counts)
    st.session_state.setdefault("mem_query", "")
    q_tab, rec_tab, add_tab, clear_tab = st.tabs([_(":material/search: Query"), _(":material/military_tech: Track record"),
                                                  _(":material/add: Add a lesson"), _(":material/delete: Clear")])
    with q_tab:
        _query_tab(mem, role, counts[role])
    with rec_tab:
        _record_tab(config, role, mem, wanted_lesson, may_edit)
    _edit_tabs(config, role, counts[role], add_tab, clear_tab, may_edit)


main()
