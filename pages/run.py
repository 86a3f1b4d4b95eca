"""Run page: start an analysis, watch it live, stop/resume it, read the result, reopen past runs.

URL parameters (shareable links):

- ``?run=<id>``: the run of this server with that id (watch it; only the browser that started it
  may stop or resume it); a refresh restores its settings into the sidebar.
- ``?ticker=NVDA&date=2024-05-10``: the saved run of that ticker and date under ``<home>/results``;
  with ``&backtest=<id>&variant=<name>`` the one under ``<backtests_dir>/<id>/<name>/results``.
- ``?prefill=<URL-encoded JSON>``: prefill the form and sidebar with {ticker, date, analysts,
  debate_rounds, risk_rounds, provider, vendor} ("run again with changes").

What to show is decided in ``studio/run_view.py`` (tested without a browser); the widgets are
``studio/ui/run_form.py`` (the form, the onboarding, checkpointed runs, saved runs), ``run_start.py``
(starting a run), ``run_live.py`` (this server's run), ``run_result.py`` (a result) and ``run_whatif.py``
(its what-if forks).
"""

from __future__ import annotations

import streamlit as st

from studio import ui
from studio.ui import _, run_form, run_live
from tradingagents.storage import list_runs

ui.require_router()


def main() -> None:
    config = ui.current_config()
    registry = ui.get_registry()
    st.title(_("Run an analysis"))
    st.html(ui.badges_html(config))
    run_form.form_start(config)
    # everything shown above the form goes into this one slot, so the form keeps its place on the page
    # (no stale copy of it while the page reruns after the onboarding or a notice goes away)
    notices = st.container()
    run_form.prefill_notices(notices)
    past = list_runs(config)
    offers = registry.checkpointed_runs(config)
    run_form.onboarding(config, notices, first_visit=not past and not registry.list("run") and not offers)
    run_form.checkpoint_offers(config, notices, offers)

    # which run to show: the URL wins (refresh), then the session
    run_id = st.query_params.get("run") or (None if st.query_params.get("ticker") else st.session_state.get("run_id"))
    handle = registry.get(run_id, "run")
    # while a run of this server is shown the form folds into one line, so the agent board is in the first
    # screenful (1440×900) and the result keeps its place when the run ends (unfolding the form then pushed the
    # result down under a presenter's pointer); it opens with a click, and is the first section with no run shown
    running_now = handle is not None and handle.status == "running"
    run_form.run_form(config, folded=handle is not None)
    if run_id and handle is None:
        st.warning(_("That run is no longer in this server's memory (the server restarted). "
                     "Its saved result, if it finished, is under **Past runs** below; if it was checkpointed, "
                     "Resume is offered above."))
    if run_id:
        ui.keep_in_url("run", "run_id", handle.run_id if handle is not None else None)
    if handle is not None:
        run_live.run_section(config, handle, running_now=running_now)
    run_form.linked_run(config)
    run_form.past_runs(config, past)


main()
