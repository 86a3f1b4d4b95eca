"""The sidebar settings of every page and the config they make (never holding the API key, which lives in
``st.session_state`` only and is passed to the engine as ``api_key=``); restoring them from a run or a link."""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

import streamlit as st

from studio.runs import CHANGE_LABELS
from studio.ui.access import get_registry, owner, signed_in_email
from studio.ui.lang import _, language, language_picker, problem_text, tr
from studio.ui.prices import KEY_PRICING, prices_editor
from studio.ui.widgets import badges_html
from tradingagents.config import (
    ANALYST_DATA_LABELS,
    ANALYST_DATA_MODES,
    DATA_VENDORS,
    prefill_names,
    resolve_config,
    setting_label,
)
from tradingagents.errors import ConfigError
from tradingagents.i18n import N_, OUTPUT_LANGUAGE
from tradingagents.llm_presets import PROVIDER_PRESETS
from tradingagents.llm_presets import provider_label as preset_label
from tradingagents.vendors import vendor_label

VENDORS = DATA_VENDORS
KEY_API = "set_api_key"
LANGUAGES = ("English", "Chinese", "Japanese", "Korean", "Spanish", "French", "German", "Portuguese", "Italian",
             "Hindi", "Arabic", "Russian")
"""Output languages offered for the model providers (config ``output_language``)."""
LANGUAGE_NAMES = {"English": N_("English"), "Chinese": N_("Chinese"), "Japanese": N_("Japanese"),
                  "Korean": N_("Korean"), "Spanish": N_("Spanish"), "French": N_("French"), "German": N_("German"),
                  "Portuguese": N_("Portuguese"), "Italian": N_("Italian"), "Hindi": N_("Hindi"),
                  "Arabic": N_("Arabic"), "Russian": N_("Russian")}
"""Each output language's name, translated where shown (the config keeps the English name)."""
OFFLINE_LANGUAGES = ("English", "Chinese")
"""The output languages the offline engine writes itself (any other falls back to English)."""
FIELD_OF = CHANGE_LABELS
"""The sidebar field of each setting, for messages about it (the labels a resume's changes are listed by)."""


def provider_options() -> list[str]:
    return list(PROVIDER_PRESETS)


def provider_label(name: str) -> str:
    """A provider as a field shows it: "Offline engine (no LLM)" (the presets' label, capitalised), in
    the session's language (run.po holds the presets' labels)."""
    return _(preset_label(name, capital=True))


def _init_defaults() -> None:
    base = resolve_config()
    defaults = {
        "set_provider": base["llm_provider"] if base["llm_provider"] in provider_options() else "offline",
        "set_quick": "",  # blank: the provider's own default model (Ollama: llama3.1)
        "set_deep": "",
        "set_base_url": base.get("backend_url") or "",
        "set_vendor": base["data_vendor"] if base["data_vendor"] in VENDORS else "demo",
        "set_language": _default_output_language(base),
        "set_analyst_data": base["analyst_data"],
        KEY_API: "",
    }
    for k, v in defaults.items():
        if k not in st.session_state:
            st.session_state[k] = v


def _default_output_language(base: Any) -> str:
    """What the models write in, unless the user chose: ``TRADINGAGENTS_OUTPUT_LANGUAGE`` (or a config
    value other than the default English) wins; otherwise the UI language's (a Chinese UI → "Chinese")."""
    chosen = base.get("output_language") or "English"
    followed = OUTPUT_LANGUAGE.get(base.get("ui_language") or "", "English")  # the config's, from its ui_language
    if os.environ.get("TRADINGAGENTS_OUTPUT_LANGUAGE", "").strip() or chosen not in ("English", followed):
        return chosen
    return OUTPUT_LANGUAGE.get(language(), "English")


def _follow_ui_language() -> None:
    """The output language follows the UI language while the user has not picked one in the sidebar:
    switching the UI to 简体中文 makes the next run write Chinese (the offline engine too)."""
    s = st.session_state
    if s.get("_language_chosen"):
        return
    if s.get("_auto_language") is None:
        s["_auto_language"] = s.get("set_language")
    if s.get("set_language") != s["_auto_language"]:  # picked in the sidebar (or restored from a run)
        s["_language_chosen"] = True
        return
    auto = _default_output_language(resolve_config())
    s["set_language"] = s["_auto_language"] = auto


def current_config() -> dict[str, Any]:
    """The resolved config of the sidebar settings (never containing the API key).

    A model name is sent only when the user typed one: a blank field means the provider preset's
    default (Ollama: llama3.1; vLLM and LM Studio: the model the server serves).
    """
    return resolve_config(_typed_settings())


def _typed_settings() -> dict[str, Any]:
    """The settings the sidebar's fields give, before they are checked (``current_config`` resolves them)."""
    _init_defaults()
    s = st.session_state
    partial: dict[str, Any] = {
        "llm_provider": s["set_provider"],
        "backend_url": (s["set_base_url"] or "").strip() or None,
        "data_vendor": s["set_vendor"],
        "output_language": s.get("set_language") or "English",
        "analyst_data": s.get("set_analyst_data") or None,
    }
    for key, field in (("quick_think_llm", "set_quick"), ("deep_think_llm", "set_deep")):
        typed = (s.get(field) or "").strip()
        if typed:
            partial[key] = typed
    if s.get(KEY_PRICING):  # this session's edits of the Model prices table
        partial["llm_pricing"] = dict(s[KEY_PRICING])
    who = signed_in_email()
    if who:  # the engine writes it as ``by`` (runs' meta, log entries, backtests, settlements)
        partial["user"] = who
    return partial


def sidebar_values(config: Any) -> dict[str, Any]:
    """The sidebar fields that show ``config`` (a run's settings): model fields blank where they are the
    preset's default, so the run's provider keeps its defaults."""
    provider = config.get("llm_provider") if config.get("llm_provider") in PROVIDER_PRESETS else "offline"
    preset = PROVIDER_PRESETS[provider]
    values: dict[str, Any] = {"set_provider": provider,
                              "set_base_url": config.get("backend_url") or "",
                              "set_vendor": config.get("data_vendor") if config.get("data_vendor") in VENDORS
                              else "demo",
                              "set_language": config.get("output_language") or "English",
                              "set_analyst_data": config.get("analyst_data") if config.get("analyst_data")
                              in ANALYST_DATA_MODES else ANALYST_DATA_MODES[0]}
    for kind, field in (("quick", "set_quick"), ("deep", "set_deep")):
        name = config.get(f"{kind}_think_llm") or ""
        values[field] = "" if (not name or name == preset.get(f"{kind}_model")) else str(name)
    return values


def queue_settings(values: dict[str, Any]) -> None:
    """Set sidebar fields on the next rerun (a widget's value cannot change once it is drawn)."""
    st.session_state["_pending_settings"] = dict(values)


def mark_settings_of_run(run_id: str) -> None:
    """The sidebar already shows this run's settings (it was started from them): no restore."""
    st.session_state["_settings_of_run"] = run_id


PREFILL_MAX_CHARS = 4000  # a form's worth of settings; a longer link is refused unread
def read_prefill(raw: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """``?prefill=`` as ``(values, problem)``: the JSON object of ticker, date, analysts, rounds,
    provider and vendor (Compare's config-key names accepted), or None and a plain sentence saying
    why the link was not used (too long, not JSON, nested too deeply, not an object)."""
    if not raw:
        return None, None
    if len(raw) > PREFILL_MAX_CHARS:
        return None, _("The link's prefill could not be used: it is {n} characters long (at most {limit}).",
                       n=f"{len(raw):,}", limit=f"{PREFILL_MAX_CHARS:,}")
    try:
        data = json.loads(raw)
    except RecursionError:
        return None, _("The link's prefill could not be used: its JSON is nested too deeply.")
    except ValueError:
        return None, _("The link's prefill could not be used: it is not JSON.")
    if not isinstance(data, dict):
        return None, _("The link's prefill could not be used: it is not a JSON object of settings.")
    return prefill_names(data), None  # Compare's links name settings by config key: the table's URL names


def parse_prefill(raw: str | None) -> dict[str, Any] | None:
    """``?prefill=`` (URL-encoded JSON of ticker, date, analysts, rounds, provider, vendor) or None."""
    return read_prefill(raw)[0]


LINK_SETTINGS = ("set_vendor", "set_language")
"""The sidebar fields a link (``?run=`` of someone else's run, ``?prefill=``) may set: never the provider,
the models, the Base URL or the key."""


def _restore_settings() -> None:
    """Before the sidebar is drawn: queued values, then the settings of the run in the URL (a browser
    refresh starts a new session whose sidebar would otherwise show the defaults), then ``?prefill=``."""
    s = st.session_state
    values: dict[str, Any] = dict(s.pop("_pending_settings", None) or {})
    run_id = st.query_params.get("run")
    if run_id and s.get("_settings_of_run") != run_id:
        handle = get_registry().get(run_id, "run")
        if handle is not None:
            # one's own run (a refresh) brings its settings back; someone else's link brings none of the
            # model's (provider, models, Base URL): the next run of this session must not send its key to
            # an address a colleague's link chose. Its data source and output language are harmless.
            restored = sidebar_values(handle.config)
            if handle.owner != owner():
                restored = {k: v for k, v in restored.items() if k in LINK_SETTINGS}
            values = {**restored, **values}
            s["_settings_of_run"] = run_id
    raw = st.query_params.get("prefill")
    if raw and s.get("_prefill_done") != raw:
        s["_prefill_done"] = raw
        data, problem = read_prefill(raw)
        data = data or {}
        if problem:
            s["_prefill_problem"] = problem
        if isinstance(data.get("provider"), str) and data["provider"] != s.get("set_provider"):
            # a link fills the form, never the model's settings: said, not applied
            s["_prefill_problem"] = _(
                "The link names the provider {provider}; the sidebar keeps yours (choose it there to use it).",
                provider=provider_label(data["provider"]) if data["provider"] in PROVIDER_PRESETS
                else repr(data["provider"][:40]))
        if isinstance(data.get("vendor"), str) and data["vendor"] in VENDORS:
            values.setdefault("set_vendor", data["vendor"])
        s["_prefill_form"] = data
    for k, v in values.items():
        s[k] = v


def config_error_text(exc: BaseException, config: Any = None) -> str:
    """A configuration error in the sidebar's words (``key``/``key_env`` name the field), never a class."""
    key, key_env = getattr(exc, "key", None), getattr(exc, "key_env", None)
    provider = (config or {}).get("llm_provider") if config is not None else None
    label = provider_label(provider) if provider else _("this provider")
    if key_env:
        return _("No API key for {provider}: type it in the sidebar's **API key** field (or set {env} "
                 "before starting the app). Nothing was run.", provider=label, env=key_env)
    if key == "api_key":
        from tradingagents.llm_clients.factory import resolve_base_url
        from tradingagents.llm_presets import public_url

        with contextlib.suppress(Exception):
            return _("The server's API key is sent only to the address this app is set up with, and {url} is another "
                     "one: type your own key in the sidebar's **API key** field, or clear the **Base URL** field. "
                     "Nothing was run.", url=public_url(resolve_base_url(config)))
        return str(exc)
    if key == "backend_url":
        return _("{provider} needs the server's address: fill in the sidebar's **Base URL** field, for example "
                 "http://localhost:11434/v1. Nothing was run.", provider=label)
    if key in ("quick_think_llm", "deep_think_llm"):
        return _("No model name for {provider}: fill in the sidebar's **{field}** field, for example "
                 "gpt-4o-mini or llama3.1. Nothing was run.", provider=label, field=_(FIELD_OF[key]))
    if key in FIELD_OF:
        return _("{problem} Change the sidebar's **{field}** setting.", problem=problem_text(exc),
                 field=_(FIELD_OF[key]))
    return str(exc)


def refusal_text(exc: BaseException, config: Any = None) -> str:
    """What a page says for a refused start or resume: the sidebar's words, never a class name."""
    from studio.run_view import unknown_instrument_text
    from tradingagents.errors import ConfigError, UnknownInstrumentError

    if isinstance(exc, ConfigError) and (getattr(exc, "key", None) or getattr(exc, "key_env", None)):
        return config_error_text(exc, config)
    if isinstance(exc, UnknownInstrumentError):
        return unknown_instrument_text(exc, tr())
    return str(exc)


def api_key() -> str | None:
    return (st.session_state.get(KEY_API) or "").strip() or None


_HIDDEN_WHEN_OFFLINE = ("set_quick", "set_deep", "set_base_url", KEY_API)


def sidebar_settings() -> dict[str, Any]:
    """Render the settings that apply to every page; return the resolved config.

    Only the fields that apply are drawn: with the offline engine there is no model, address or key
    to type (their values are kept for when a model provider is chosen again)."""
    _init_defaults()
    _restore_settings()
    _follow_ui_language()
    with st.sidebar:
        language_picker()
        st.markdown("### :material/tune: " + _("Settings"))
        providers = provider_options()
        t = tr()  # the labels' language is fixed when drawn (a widget's format_func may be called later)
        st.selectbox(setting_label("llm_provider", tr()), providers, key="set_provider", placeholder=_("Choose an option"),
                     format_func=lambda name: t(preset_label(name, capital=True)))
        provider = st.session_state["set_provider"]
        offline = provider == "offline"
        preset = PROVIDER_PRESETS.get(provider) or {}
        if preset.get("help"):
            st.caption(_(str(preset["help"])))
        if offline:
            for k in _HIDDEN_WHEN_OFFLINE:  # an undrawn widget's value would be dropped: keep it
                st.session_state[k] = st.session_state.get(k, "")
        else:
            c1, c2 = st.columns(2)
            c1.text_input(setting_label("quick_think_llm", tr()), key="set_quick",
                          placeholder=str(preset.get("quick_model") or _("server's model")),
                          help=_("Blank: the provider's default model."))
            c2.text_input(setting_label("deep_think_llm", tr()), key="set_deep",
                          placeholder=str(preset.get("deep_model") or _("server's model")),
                          help=_("Blank: the provider's default model."))
            st.text_input(setting_label("backend_url", tr()), key="set_base_url", placeholder=_("provider default"),
                          help=_("For OpenAI-compatible servers (Ollama, vLLM, …)."))
            st.text_input(_("API key"), key=KEY_API, type="password",
                          help=_("Kept in this browser session only; never written to disk."))
        choices = OFFLINE_LANGUAGES if offline else LANGUAGES
        if st.session_state.get("set_language") not in choices:
            st.session_state["set_language"] = "English"
        st.selectbox(setting_label("output_language", tr()), choices, key="set_language", placeholder=_("Choose an option"),
                     format_func=lambda name: t(LANGUAGE_NAMES.get(name, name)),
                     help=_("The language the reports, debates and decisions are written in."))
        st.selectbox(setting_label("data_vendor", tr()), VENDORS, key="set_vendor", format_func=lambda v: t(vendor_label(v)),
                     placeholder=_("Choose an option"))
        st.selectbox(_("Analyst data"), ANALYST_DATA_MODES, key="set_analyst_data",
                     format_func=lambda v: t(ANALYST_DATA_LABELS.get(v, v)), placeholder=_("Choose an option"),
                     help=_("Tool calls: each analyst's model asks for the data it needs. Prefetched: each "
                            "analyst fetches its usual data first and makes one model call without tools "
                            "(fewer round trips, for models that cannot call tools)."))
        prices_editor()
        try:
            config = current_config()
        except ConfigError as exc:
            problem = field_problem_text(exc)
            if problem is None:  # not a field of this sidebar: require_valid_environment says the environment's
                raise
            st.error(problem, icon=":material/settings:")  # under the field, where it is fixed
        else:
            st.html(badges_html(config))
            return config
    # nothing on this page may run with a setting the user typed and the app could not read
    st.error(problem, icon=":material/settings:")
    st.stop()


def field_problem_text(exc: BaseException) -> str | None:
    """What a sidebar field the settings could not take says (its label, the check's own words and what to do);
    None when the problem is not a field's (a ``TRADINGAGENTS_*`` variable, a file)."""
    key = getattr(exc, "key", None)
    if key not in _typed_settings() or getattr(exc, "env_var", None):
        return None
    return _("The sidebar's **{field}** cannot be used: {problem} Correct it there; nothing runs until then.",
             field=setting_label(key, tr()), problem=problem_text(exc))
