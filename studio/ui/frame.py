"""The shared frame every page is drawn in: routing through app.py, a plain stop on a bad environment,
the id of what a page shows kept in the URL."""

from __future__ import annotations

import contextlib
import runpy
import threading
from collections.abc import Iterator
from pathlib import Path

import streamlit as st

from studio.ui.lang import _
from tradingagents.config import (
    resolve_config,
)
from tradingagents.errors import ConfigError

ENTRYPOINT = Path(__file__).resolve().parents[2] / "app.py"
_router = threading.local()


@contextlib.contextmanager
def routed() -> Iterator[None]:
    """app.py runs the chosen page inside this: the page then knows the shared frame is drawn. A desk
    database that cannot be reached (``StorageUnavailable``) ends the page in one plain message, not a
    traceback: what was saved stays saved, and the page works again once the database is back."""
    from tradingagents.errors import StorageUnavailable

    _router.active = True
    try:
        yield
    except StorageUnavailable as exc:
        st.error(_("The desk database cannot be reached, so this page cannot be shown now. Nothing saved is "
                   "lost: reload the page once the database is back (whoever runs the desk's PostgreSQL can "
                   "check it). What it said: {problem}", problem=" ".join(str(exc).split())),
                 icon=":material/cloud_off:")
    finally:
        _router.active = False


def require_router() -> None:
    """First line of every page: make sure the page runs inside app.py's frame.

    Streamlit still auto-discovers a ``pages/`` folder beside the entrypoint until some session
    has called ``st.navigation`` (then it ignores the folder, documented). Until then — the first
    request of a fresh server that is a deep link such as ``/debates``, and every run under
    AppTest, which resets that switch per run — it executes ``pages/debates.py`` by itself,
    without the sidebar. A page started that way runs the entrypoint instead (which routes back
    to this same page through ``st.navigation``) and stops its own direct run.
    """
    if getattr(_router, "active", False):
        return
    runpy.run_path(str(ENTRYPOINT), run_name="__main__")
    st.stop()


def require_valid_environment() -> None:
    """Stop with a plain message when a ``TRADINGAGENTS_*`` variable (or the home) cannot work.

    Every page resolves the settings; a bad environment value would otherwise fail each of them
    with a traceback. The message names the variable and what it accepts (the resolver's words).
    """
    try:
        resolve_config()
    except ConfigError as exc:
        st.error(_("The app cannot start with these settings: {problem} Fix it and restart the app "
                   "(`make run`).", problem=exc), icon=":material/error:")
        st.stop()


def keep_in_url(param: str, state_key: str, value: str | None) -> None:
    """Keep the id of what a page shows in the URL (``?param=``, so a refresh finds it) and the session;
    None: it is gone (a restart, a deleted folder), so both forget it."""
    if value is None:
        st.query_params.pop(param, None)
        st.session_state.pop(state_key, None)
        return
    st.session_state[state_key] = value
    if st.query_params.get(param) != value:
        st.query_params[param] = value
