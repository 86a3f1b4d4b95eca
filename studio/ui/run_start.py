"""Starting a run from the Run page: its form's Start button (in the button's callback, before the page's
script) and the onboarding's example (from the script); the run is then the one the page shows."""

from __future__ import annotations

from typing import Any

import streamlit as st

from studio import run_view
from studio.ui.access import get_registry, owner
from studio.ui.lang import tr
from studio.ui.settings import api_key, current_config, mark_settings_of_run, refusal_text
from tradingagents.errors import ConfigError, ValidationError

FIRST_WORDS_WAIT_S = 0.3
"""How long a click on Start waits for the model's first words before the live page is drawn: a model that
answers at once is seen writing in that page's first frame instead of at the board's next poll (half a
second later); a slower one leaves the board drawn as before, this much later."""


def show_run(run_id: str) -> None:
    st.session_state["run_id"] = run_id
    st.session_state.pop("saved_run", None)
    lang = st.query_params.get("lang")
    st.query_params.clear()
    st.query_params["run"] = run_id
    if lang:  # the address keeps its language
        st.query_params["lang"] = lang


def begin_run(ticker: Any, date: Any, analysts: Any, run_config: dict, blind: bool, fresh: bool) -> str | None:
    """Start a run of this browser, shown from now on, and wait briefly for its first words; the refusal's
    text (nothing started) when it was refused."""
    registry = get_registry()
    busy = run_view.busy_text(registry.list("run"), ticker, date, tr())
    try:
        if busy:
            raise ValidationError(busy)
        run_id = registry.start_run(ticker, date, analysts, run_config, api_key=api_key(), owner=owner(), blind=blind,
                                    fresh=fresh)
    except (ValidationError, ConfigError) as exc:
        return refusal_text(exc, run_config)
    handle = registry.get(run_id, "run")
    if handle is not None:  # the page that follows shows the first words if they come at once
        handle.wait_for_words(FIRST_WORDS_WAIT_S)
    show_run(run_id)
    mark_settings_of_run(run_id)
    return None


def start_run(ticker: Any, date: Any, analysts: Any, run_config: dict, blind: bool = False, fresh: bool = False) -> bool:
    """Start a run of this browser from a script run (the onboarding's example), then draw the page again with
    it; False (with the message on screen) when it was refused."""
    refused = begin_run(ticker, date, analysts, run_config, blind, fresh)
    if refused:
        st.error(refused, icon=":material/error:")
        return False
    st.rerun()
    return True


START_REFUSED = "_start_refused"


def start_from_form() -> None:
    """The Start button's callback. Streamlit calls it before the page's script, so that very script run draws
    the live page: the click's first frame already holds the board and the model's first words (started from
    the script, the run began only after the page above the button was drawn, and the page was drawn twice)."""
    s = st.session_state
    try:
        run_config = run_view.form_config(current_config(), s)
    except (ValidationError, ConfigError) as exc:  # said under the form, as a refused start is
        refused: str | None = refusal_text(exc)
    else:
        refused = begin_run(s["form_ticker"], s["form_date"], s["form_analysts"], run_config,
                         blind=bool(s.get("form_blind")), fresh=bool(s.get("form_fresh")))
    if refused:
        s[START_REFUSED] = refused  # said under the form by the script run that follows
