"""Compare page: two saved runs side by side — the rating ladder, each report, the configuration
difference, usage — and "run again with changes" (the Run page opens with a run's settings)."""

from __future__ import annotations

import html

import streamlit as st

from studio import compare, export, ui
from studio.ui import _, rating_label, tr
from tradingagents.i18n import Translator
from tradingagents.rating import RATING_COLORS
from tradingagents.storage import list_forks, list_runs, load_fork, load_run

ui.require_router()

LADDER_CSS = """<style>
.ta-ladder{display:grid;grid-template-columns:minmax(9rem,1.2fr) 1fr 1fr;gap:.35rem .8rem;align-items:center}
.ta-ladder .h{font-weight:700;opacity:.75;font-size:.85rem}
.ta-ladder .pill{display:inline-block;padding:.2rem .9rem;border-radius:999px;font-weight:800;color:#0E1117}
.ta-ladder .none{opacity:.6}
@media (max-width:700px){.ta-ladder{grid-template-columns:1fr 1fr 1fr;font-size:.85rem}}
/* at a narrow width the two run pickers stack: each keeps the whole width, its label and value uncut */
@media (max-width:1000px){
 .st-key-cmp_pickers [data-testid="stHorizontalBlock"]{flex-direction:column !important;gap:.25rem !important}
 .st-key-cmp_pickers [data-testid="stColumn"]{width:100% !important;flex:1 1 100% !important;min-width:0 !important}
}
</style>"""


def _pill(rating: str | None) -> str:
    if not rating:
        return '<span class="none">—</span>'
    color = RATING_COLORS.get(rating, "#8A93A6")
    return (f'<span class="pill" data-rating="{html.escape(rating)}" style="background:{color}">'
            f"{html.escape(rating_label(rating))}</span>")


def ladder_html(label_a: str, label_b: str, ladder_a, ladder_b) -> str:
    """The ladder: each rung's role (``data-role``: the canonical name) and both runs' ratings (``data-rating``:
    the canonical rating), shown in the page's language."""
    t = tr()
    cells = [f'<div class="h">{html.escape(_("Who rates"))}</div><div class="h">{html.escape(label_a)}</div>'
             f'<div class="h">{html.escape(label_b)}</div>']
    for (role, ra), (_role, rb) in zip(ladder_a, ladder_b, strict=True):
        cells.append(f'<div data-role="{html.escape(role)}">{html.escape(t.p("role", role))}</div>'
                     f"<div>{_pill(ra)}</div><div>{_pill(rb)}</div>")
    return LADDER_CSS + '<div class="ta-ladder" data-testid="ta-ladder">' + "".join(cells) + "</div>"


def _run_label(r: dict) -> str:
    t = tr()
    rating = rating_label(r.get("rating")) if r.get("rating") else "—"
    label = f"{r['ticker']} · {r['date']} · {rating} · {compare.provider_label(r.get('llm_provider'), t=t)}"
    if r.get("whatif"):
        at = r["whatif"].get("at")
        label += " · " + _("what if #{n} ({agent})", n=str(r["version"])[1:], agent=t.p("role", str(at)) if at else "—")
    elif r.get("version") is not None:
        label += " · " + _("earlier #{n}", n=r["version"])
    return label


def _with_forks(config, runs: list[dict]) -> list[dict]:
    """The run list plus the what-if forks of the sessions the address or the pickers name (after their run)."""
    sessions = []
    for value in (st.query_params.get("a"), st.query_params.get("b"), st.session_state.get("cmp_a"),
                  st.session_state.get("cmp_b")):
        parts = str(value or "").split("|")
        if len(parts) >= 2 and tuple(parts[:2]) not in sessions:
            sessions.append(tuple(parts[:2]))
    out = []
    for r in runs:
        out.append(r)
        if r.get("version") is None and (r["ticker"], r["date"]) in sessions:
            try:
                out += compare.fork_rows(r["ticker"], r["date"], list_forks(config, r["ticker"], r["date"]))
            except Exception:  # noqa: BLE001 - a fork that cannot be listed is left out, the runs stay
                pass
    return out


def whatif_section(run_a: dict, run_b: dict, label_a: str, label_b: str) -> None:
    """When a side is a what-if fork: where it forked, what changed, and the later texts that changed."""
    forks = [(label, run) for label, run in ((label_a, run_a), (label_b, run_b)) if (run.get("meta") or {}).get("whatif")]
    if not forks:
        return
    t = tr()
    st.subheader(_("What if"), anchor=False)
    for label, run in forks:
        w = run["meta"]["whatif"]
        how = (_("{agent}'s report dropped", agent=t.p("role", str(w.get("at")))) if w.get("kind") == "drop"
               else _("{agent}'s output replaced", agent=t.p("role", str(w.get("at")))))
        if w.get("turn"):
            how += " · " + _("turn {n}", n=w["turn"])
        st.markdown(_("**{label}** is a what-if fork: {how}; rating {base} → {rating}.", label=label, how=how,
                      base=rating_label(w.get("base_rating")) if w.get("base_rating") else "—",
                      rating=rating_label(w.get("rating")) if w.get("rating") else "—"))
    changed = compare.changed_keys(run_a.get("state"), run_b.get("state"))
    titles = dict(compare.report_sections(run_a.get("state") or {}, t=t))
    names = {v: k for k, v in titles.items()}
    names.update({"investment_debate_state": _("Research debate (Bull vs Bear)"), "risk_debate_state": _("Risk debate")})
    if changed:
        st.html('<div data-testid="ta-whatif-changed">' + html.escape(
            _("Texts that differ: {names}", names=", ".join(names.get(k, k) for k in changed))) + "</div>")
    else:
        st.caption(_("No text differs between the two."))


def _pick_runs(config: dict, runs: list[dict]) -> tuple[str, str, dict[str, tuple]] | None:
    """Run A and Run B (``?a=``/``?b=`` once, then the pickers), loaded; None when one cannot be read (said)."""
    ids = [f"{r['ticker']}|{r['date']}" + (f"|{r['version']}" if r.get("version") is not None else "") for r in runs]
    labels = {i: _run_label(r) for i, r in zip(ids, runs, strict=True)}
    for side, default in (("a", 1 if len(ids) > 1 else 0), ("b", 0)):
        wanted = st.query_params.get(side)
        if wanted in ids and st.session_state.get(f"_cmp_link_{side}") != wanted:
            st.session_state[f"_cmp_link_{side}"] = wanted
            st.session_state[f"cmp_{side}"] = wanted
        if st.session_state.get(f"cmp_{side}") not in ids:
            st.session_state[f"cmp_{side}"] = ids[default]
    ca, cb = st.container(key="cmp_pickers").columns(2)
    a_id = ca.selectbox(_("Run A"), ids, format_func=labels.get, key="cmp_a", placeholder=_("Choose an option"))
    b_id = cb.selectbox(_("Run B"), ids, format_func=labels.get, key="cmp_b", placeholder=_("Choose an option"))
    loaded = {}
    for side, rid in (("A", a_id), ("B", b_id)):
        ticker, date, *version = rid.split("|")
        try:
            if version and version[0].startswith("w"):
                loaded[side] = (ticker, date, load_fork(config, ticker, date, int(version[0][1:])))
            else:
                loaded[side] = (ticker, date, load_run(config, ticker, date, int(version[0]) if version else None))
        except Exception as exc:  # noqa: BLE001 - a damaged file is reported, not raised
            st.error(_("Could not open the saved run {ticker} {date}: {error}", ticker=ticker, date=date, error=exc))
            return None
    return a_id, b_id, loaded


def _ladder_and_card(run_a: dict, run_b: dict, label_a: str, label_b: str) -> None:
    st.subheader(_("Rating ladder"), anchor=False)
    st.caption(_("Research manager → trader → portfolio manager: how each stage rated the idea. The portfolio "
                 "manager's rating is the saved one; the others are read from their saved plans."))
    st.html(ladder_html(label_a, label_b, compare.rating_ladder(run_a["state"], run_a["rating"]),
                        compare.rating_ladder(run_b["state"], run_b["rating"])))

    st.subheader(_("Decision card"), anchor=False)
    st.caption(_("From each run's Portfolio Manager decision and Trader proposal; \"Scored over\" is the window "
                 "the settlement measures, beside the horizon the decision states."))
    card_a = export.card_rows(export.card(run_a["state"], run_a["meta"], run_a["rating"]),
                              export.currency_of(run_a["state"], run_a["meta"]), t=tr())
    card_b = export.card_rows(export.card(run_b["state"], run_b["meta"], run_b["rating"]),
                              export.currency_of(run_b["state"], run_b["meta"]), t=tr())
    # a run made with a book has an Order row the other may not have: rows by field, the dash where one lacks it;
    # a field named differently in the two (a Hold's reference price beside a Buy's entry) shows both names
    rows_a, rows_b = export.card_fields(card_a), export.card_fields(card_b)
    keys = list(dict.fromkeys([*rows_a, *rows_b]))
    st.dataframe([{"": " / ".join(dict.fromkeys(r[k][0] for r in (rows_a, rows_b) if k in r)),
                   label_a: rows_a[k][1] if k in rows_a else "—", label_b: rows_b[k][1] if k in rows_b else "—"}
                  for k in keys], hide_index=True, width="stretch", key="cmp_card")


def _settings_and_usage(run_a: dict, run_b: dict, label_a: str, label_b: str, t: Translator) -> None:
    st.subheader(_("Configuration difference"), anchor=False)
    diff = compare.config_diff(run_a["meta"], run_b["meta"], t=t)
    if diff:
        st.dataframe([{_("Setting"): compare.setting_label(k, t=t), label_a: va, label_b: vb} for k, va, vb in diff],
                     hide_index=True, width="stretch")
    else:
        st.caption(_("Both runs used the same settings."))

    st.subheader(_("Usage"), anchor=False)
    st.dataframe([{"": k, label_a: va, label_b: vb}
                  for k, va, vb in compare.usage_rows(run_a["meta"], run_b["meta"], t=t)],
                 hide_index=True, width="stretch")


def _run_again(loaded: dict[str, tuple]) -> None:
    (ta, da, run_a), (tb, db, run_b) = loaded["A"], loaded["B"]
    st.subheader(_("Run again with changes"), anchor=False)
    r1, r2 = st.columns(2)
    r1.link_button(_("Run {ticker} {date} again…", ticker=ta, date=da), compare.prefill_link(run_a["meta"], ta, da, ui.language()),
                   icon=":material/replay:")
    r2.link_button(_("Run {ticker} {date} again…", ticker=tb, date=db), compare.prefill_link(run_b["meta"], tb, db, ui.language()),
                   icon=":material/replay:")
    st.caption(_("Opens the Run page with that run's ticker, date, analysts, rounds, provider and data source "
                 "filled in, to change before starting."))


def _reports(run_a: dict, run_b: dict, label_a: str, label_b: str, t: Translator) -> None:
    st.subheader(_("Reports"), anchor=False)
    sections = [(title, k) for title, k in compare.report_sections(run_a["state"], t=t)
                if (run_a["state"].get(k) or run_b["state"].get(k))]
    if not sections:
        st.caption(_("Neither run saved a report."))
        return
    differ = set(compare.changed_keys(run_a["state"], run_b["state"])) if any(
        (r.get("meta") or {}).get("whatif") for r in (run_a, run_b)) else set()
    tabs = st.tabs([f"● {title}" if key in differ else title for title, key in sections])  # ●: a fork changed it
    for tab, (_title, key) in zip(tabs, sections, strict=True):
        with tab:
            left, right = st.columns(2)
            for col, label, run in ((left, label_a, run_a), (right, label_b, run_b)):
                with col:
                    st.markdown(f"**{label}**")
                    with st.container(height=420, border=True, key=f"ta-said-{key}-{label[0]}"):  # the report
                        st.markdown(ui.shown(run["state"].get(key)) or _("_Not produced in this run._"))


def main() -> None:
    config = ui.current_config()
    t = tr()
    st.title(_("Compare runs"), anchor=False)
    st.html(ui.badges_html(config))
    runs = _with_forks(config, list_runs(config, include_previous=True))  # earlier runs and what-if forks open too
    if len(runs) < 2:
        st.info(_("Comparing needs two saved runs. Run two analyses on the **Run** page (another date, other "
                  "analysts or more debate rounds), then pick them here or on the **History** page."))
        st.page_link(page="pages/run.py", label=_("Go to the Run page"), icon=":material/rocket_launch:")
        return
    picked = _pick_runs(config, runs)
    if picked is None:
        return
    a_id, b_id, loaded = picked
    (ta, da, run_a), (tb, db, run_b) = loaded["A"], loaded["B"]
    label_a, label_b = f"A · {ta} {da}", f"B · {tb} {db}"
    if a_id == b_id:
        st.caption(_("Both sides show the same run: pick another for Run B."))
    by_a, by_b = ((r.get("meta") or {}).get("by") or "—" for r in (run_a, run_b))
    st.caption(_("Run by: A · {a} — B · {b}", a=by_a, b=by_b))

    whatif_section(run_a, run_b, label_a, label_b)
    _ladder_and_card(run_a, run_b, label_a, label_b)
    _settings_and_usage(run_a, run_b, label_a, label_b, t)
    _run_again(loaded)
    _reports(run_a, run_b, label_a, label_b, t)


main()
