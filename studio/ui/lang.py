"""The session's UI language: which one (``?lang=``, the picker, the settings, the browser), ``_`` and
the translated labels every page uses."""

from __future__ import annotations

from typing import Any

import streamlit as st

from tradingagents.config import (
    resolve_config,
)
from tradingagents.errors import ConfigError
from tradingagents.i18n import LANGUAGES as UI_LANGUAGES
from tradingagents.i18n import Translator, normalize_language, translator
from tradingagents.i18n import rating_label as _rating_label

KEY_LANG = "ui_lang"
"""This browser session's UI language code (``i18n.LANGUAGES``), once decided or chosen."""


def language() -> str:
    """The UI language of this browser session, in this order: ``?lang=`` in the address (kept there,
    so a shared link opens in its language), the sidebar's choice, ``TRADINGAGENTS_UI_LANGUAGE`` (the
    config's ``ui_language``), the browser's language, English."""
    asked = normalize_language(st.query_params.get("lang"))
    if asked:
        st.session_state[KEY_LANG] = asked
        return asked
    chosen = st.session_state.get(KEY_LANG)
    if chosen:
        return chosen
    try:
        configured = resolve_config()["ui_language"]
    except ConfigError:  # require_valid_environment says what is wrong, in English
        configured = None
    code = configured or normalize_language(st.context.locale) or "en"
    st.session_state[KEY_LANG] = code
    return code


def tr() -> Translator:
    """The session language's ``Translator`` (``tr()(msgid, **fields)``, ``.n``, ``.p``)."""
    return translator(language())


def _(msgid: str, /, **fields: Any) -> str:
    """``msgid`` in the session's language, ``{fields}`` filled after translating (the pages'
    ``from studio.ui import _``; a constant marked with ``N_`` is translated the same way)."""
    return translator(language())(msgid, **fields)


def problem_text(exc: BaseException) -> str:
    """A check's message in the session's language when the check gave it as a catalogue id
    (``ConfigError.say``), else as the check wrote it."""
    say = getattr(exc, "say", None)
    return tr()(say[0], **say[1]) if say else str(exc)


def shown(text: Any) -> str:
    """A stored agent text as the session's reader sees it: its rating/action/conviction lines (the
    canonical grammar the engine parses) in the session's language (``decision_card.display_text``)."""
    from tradingagents.graph.decision_card import display_text

    return display_text(str(text or ""), tr())


def rating_label(rating: Any) -> str:
    """A rating in the session's language (the stored name stays the canonical English one)."""
    return _rating_label(rating, language())


KEY_LANG_PICK = "set_ui_lang"


def _picked_language() -> None:
    """The picker's on_change: the session's language, and ``?lang=`` in the address in step with it
    (a link the user copies opens in the language on screen; English replaces a ``?lang=zh``)."""
    code = normalize_language(st.session_state.get(KEY_LANG_PICK)) or "en"
    st.session_state[KEY_LANG] = code
    st.query_params["lang"] = code


def language_picker(*, main: bool = False) -> str:
    """English / 简体中文 (``i18n.LANGUAGES``, each named in itself); returns the session's language."""
    code = language()
    st.session_state[KEY_LANG_PICK] = code  # in step with ?lang= and the decided default
    where = st if main else st.sidebar
    where.radio(_("Language"), list(UI_LANGUAGES), key=KEY_LANG_PICK, format_func=UI_LANGUAGES.__getitem__,
                horizontal=True, on_change=_picked_language, label_visibility="collapsed")
    return code
