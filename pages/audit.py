"""Audit page (desk leads): the append-only trail of who signed in, started, stopped or resumed a job,
settled decisions and edited memories; filterable, exported as CSV."""

from __future__ import annotations

import datetime as dt
import json

import streamlit as st

from studio import ui
from studio.export import audit_csv
from studio.ui import _
from tradingagents.errors import TradingAgentsError
from tradingagents.storage import read_checked_audit
from tradingagents.storage.audit import BREAKS

if callable(getattr(ui, "require_router", None)):
    ui.require_router()


def _when(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _chain(config: dict) -> list[dict] | None:
    """The trail's entries once the chain is checked and said; None when this session may not read it."""
    st.title(_("Audit"))
    if not ui.is_desk_lead(ui.signed_in_email()):
        st.info(_("The audit trail is shown to desk leads only (the e-mails in `desk_leads` / "
                  "TRADINGAGENTS_DESK_LEADS, or a desk-lead role claim, when the app has sign-in)."),
                icon=":material/lock:")
        return None

    st.caption(_("Every sign-in, job start, stop and resume, settlement and memory edit, oldest first. "
                 "Nothing here can be changed or deleted."))
    try:
        entries, check = read_checked_audit(config)
    except (TradingAgentsError, OSError) as exc:
        st.error(_("The audit trail cannot be read: {problem}", problem=exc), icon=":material/error:")
        return None
    if check.ok:
        st.success(_("The chain verifies: {n} entries, each sealed with the hash of the one before; none was changed "
                     "or removed.", n=check.chained), icon=":material/verified:")
        if check.entries > check.chained:
            st.caption(_("{n} older entries were written before the chain and cannot be checked.",
                         n=check.entries - check.chained))
    else:
        st.error(_("The chain is broken at entry {n} of {total}: {problem}. Entries from there on cannot be trusted; "
                   "compare with a backup of the trail.", n=check.broken_at, total=check.entries,
                   problem=_(BREAKS[check.reason]) if check.reason in BREAKS else check.problem),
                 icon=":material/gpp_bad:")
    return entries


def _table(entries: list[dict]) -> None:
    """The entries, filtered by who and what, and their CSV."""
    rows = [{"when": _when(e["at"]), "by": e["by"], "action": e["action"], "target": e["target"],
             "detail": json.dumps(e["detail"], sort_keys=True) if e["detail"] else ""} for e in entries]
    users = sorted({r["by"] for r in rows})
    actions = sorted({r["action"] for r in rows})
    c1, c2 = st.columns(2)
    pick_users = c1.multiselect(_("By"), users, key="audit_users", placeholder=_("everyone"))
    pick_actions = c2.multiselect(_("Action"), actions, key="audit_actions", placeholder=_("every action"))
    shown = [r for r in rows if (not pick_users or r["by"] in pick_users)
             and (not pick_actions or r["action"] in pick_actions)]
    st.markdown(_("**{shown}** of {total} entries", shown=len(shown), total=len(rows)))
    if shown:
        # the columns named in the session's language on screen; the CSV keeps its English header (a file's format)
        heads = {"when": _("when"), "by": _("by"), "action": _("action"), "target": _("target"), "detail": _("detail")}
        st.dataframe([{heads[k]: v for k, v in r.items()} for r in shown], hide_index=True, width="stretch",
                     key="audit_table")
    # made on the click, over this signed-in session's connection: no copy waits in Streamlit's media store (whose
    # /media/<id> URLs need no cookie) until a desk lead asks for one
    st.download_button(_("Export CSV"), lambda rows=shown: audit_csv(rows), file_name="audit.csv", mime="text/csv",
                       icon=":material/download:", key="audit_csv")


def main() -> None:
    entries = _chain(ui.current_config())
    if entries is not None:
        _table(entries)


main()
