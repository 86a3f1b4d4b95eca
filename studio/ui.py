"""Shared Streamlit helpers: the sidebar settings, the config they make, badges, the job registry.

The only module of ``studio`` that imports streamlit. The API key lives in ``st.session_state``
only: it is passed to the engine as ``api_key=`` and never put into a config, a file or a log.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import os
import runpy
import threading
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from studio import identity, links
from studio.jobs import JobRegistry
from studio.runs import CHANGE_LABELS
from tradingagents import pricing
from tradingagents.config import (
    ANALYST_DATA_LABELS,
    ANALYST_DATA_MODES,
    DATA_VENDORS,
    resolve_config,
)
from tradingagents.errors import ConfigError
from tradingagents.i18n import LANGUAGES as UI_LANGUAGES
from tradingagents.i18n import N_, OUTPUT_LANGUAGE, Translator, normalize_language, translator
from tradingagents.i18n import rating_label as _rating_label
from tradingagents.llm_presets import OFFLINE_LABEL, PROVIDER_PRESETS
from tradingagents.llm_presets import provider_label as preset_label
from tradingagents.rating import RATING_COLORS
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


ENTRYPOINT = Path(__file__).resolve().parents[1] / "app.py"
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


def provider_options() -> list[str]:
    return list(PROVIDER_PRESETS)


def provider_label(name: str) -> str:
    """A provider as a field shows it: "Offline engine (no LLM)" (the presets' label, capitalised), in
    the session's language (run.po holds the presets' labels)."""
    return _(preset_label(name, capital=True))


LEAD_ROLES = identity.LEAD_ROLES
"""A signed-in user whose ID token's ``roles`` or ``groups`` claim holds one of these is a desk lead too."""


def is_desk_lead(who: str | None) -> bool:
    """Whether ``who`` (an owner id or a person's name) is a desk lead: the person signed in to *this*
    session, with a verified e-mail listed exactly in ``desk_leads`` (``TRADINGAGENTS_DESK_LEADS``) or
    a desk-lead role the provider confirms now (``identity.ProviderRoles``). Decided on every call from
    the settings and the provider (a lead removed from either stops being one at the next page load);
    nobody else, and never a browser id."""
    person = current_identity()
    if not who or person is None or who not in (person.key, person.name):
        return False
    try:
        leads = resolve_config()["desk_leads"]
    except ConfigError:
        leads = []
    return identity.is_lead(person, leads, role_now=_role_now)


@st.cache_resource(show_spinner=False)
def _provider_roles() -> identity.ProviderRoles:
    return identity.ProviderRoles()


def _role_now(person: identity.Identity) -> bool:
    """The provider's answer for this session's access token (``[auth]`` ``expose_tokens = "access"``)."""
    auth, token = {}, None
    with contextlib.suppress(Exception):
        auth = dict(st.secrets["auth"])
        token = st.user.tokens.get("access")
    urls = [str(v["server_metadata_url"]) for v in [auth, *auth.values()]
            if isinstance(v, Mapping) and v.get("server_metadata_url")]
    return _provider_roles().lead_role(person, token, urls)


def acts_as_lead() -> bool:
    """The ``lead`` of the ownership table (``tradingagents.ownership``) for this session: a desk lead, or
    anyone when the app has no sign-in (one machine: every person is their own desk)."""
    return not auth_configured() or is_desk_lead(owner())


@st.cache_resource(show_spinner=False)
def get_registry() -> JobRegistry:
    """The one job registry per server process (runs, batches, backtests): jobs survive page switches
    and browser refreshes. Every page passes ``owner()`` to start, stop or resume one; desk leads
    (``is_desk_lead``) may stop or resume anyone's."""
    return JobRegistry(is_desk_lead=is_desk_lead, on_action=_audit_job, guard_keys=True)


def job_target(job: Any) -> str:
    """A job as the audit names it: ``run NVDA 2024-05-10 (id)``, ``batch 3 tickers 2024-05-10 (id)``,
    ``whatif NVDA 2024-05-10 at news (id)``, ``backtest id``."""
    if job.kind == "run":
        return f"run {job.ticker} {job.date} ({job.id})"
    if job.kind == "batch":
        return f"batch {len(job.tickers)} tickers {job.date} ({job.id})"
    if job.kind == "whatif":
        what = "attribution" if job.attribute else f"at {getattr(job.spec, 'at', '?')}"
        return f"whatif {job.ticker} {job.date} {what} ({job.id})"
    return f"{job.kind} {job.id}"


def _audit_job(action: str, job: Any, who: str | None, done: bool) -> None:
    """The registry's ``on_action``: every start, stop and resume asked from a page (runs in that page's
    script thread, so the session's user is known), with the job's owner and whether it was granted."""
    owner_of = (identity.owner_name(job.owner) if identity.is_person(job.owner)
                else ("a browser (no sign-in)" if job.owner else "nobody"))
    audit(action if done else f"{action}_refused", job_target(job), kind=job.kind, job_owner=owner_of)


WARM_MODULES = (
    "pandas",
    "plotly.graph_objects",
    "tradingagents.graph.trading_graph",
    "tradingagents.dataflows.interface",
    "tradingagents.dataflows.tools",
    "tradingagents.dataflows.returns",
    "tradingagents.llm_clients.factory",
    "tradingagents.llm_clients.offline",
    "tradingagents.llm_clients.usage",
    "tradingagents.graph.reflection",
    "langgraph.checkpoint.memory",
    "langgraph.checkpoint.sqlite",
)


WARM_UP_DELAY_S = 3.0  # after the first session's script run: let the browser load that page first
WARM_UP_ENV = "TRADINGAGENTS_STUDIO_WARM_UP"  # "0" turns it off (the bench compares both)


def _lower_this_threads_priority() -> None:
    """Best effort: nice this thread (Linux threads are tasks), so page loads get the CPU first."""
    import os

    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
    except (AttributeError, OSError, PermissionError):
        pass


def _warm(delay_s: float = WARM_UP_DELAY_S) -> None:
    """Import the engine, its data layer and plotly in the background so the first click does not pay.

    It waits ``delay_s`` first (the first page is still being sent and rendered then), runs at a lower
    CPU priority and pauses between modules, so a page load that overlaps it is not slowed.
    """
    import importlib
    import time

    _lower_this_threads_priority()
    time.sleep(delay_s)
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a failed warm-up only means the first run imports it itself
            pass
        time.sleep(0.02)  # give the server's threads the interpreter between modules


@st.cache_resource(show_spinner=False)
def warm_up() -> bool:
    """Once per server process (cached), after the first page is on screen (call it last in app.py)."""
    import os

    if os.environ.get(WARM_UP_ENV, "1").strip() == "0":
        return False
    threading.Thread(target=_warm, name="ta-warm-up", daemon=True).start()
    return True


@st.cache_resource(max_entries=4, show_spinner=False)
def _memory_log_of(path: str, signature: tuple[int, int, int] | None, _config: Any) -> Any:
    from studio.memlog_view import read_log

    return read_log(_config)


def memory_log(config: dict[str, Any]) -> Any:
    """The Memory log page's ``studio.memlog_view.Log`` of ``config``'s log.

    A log file is read once per version (its size, mtime and inode) for the whole server: one shared
    object (``st.cache_resource``), not a pickled copy per rerun; ``warm_server`` reads it at server
    start. A desk database's log is read on every call (it has no cheap version to key a cache by)."""
    from studio.memlog_view import file_signature, read_log
    from tradingagents.storage import storage_url

    if storage_url(config):
        return read_log(config)
    path = Path(config["memory_log_path"])
    return _memory_log_of(str(path), file_signature(path), config)


WARM_SERVER_TIMEOUT_S = 30.0
"""A server starts taking requests after this long even if ``warm_server`` has not finished (a log on a
slow disk): the first page then does the rest itself."""


def warm_server(root: Path = ENTRYPOINT.parent) -> list[str]:
    """What a new server does once, before it takes its first request, so a user's first page does not.

    A new server's first page paid for: compiling the app's script and the page (Streamlit compiles each
    with its "magic" on first use), the emoji catalogue (read once to check the page icon), the Markdown
    converter's first use, the translations, and reading the Memory log (once per version of the log
    file; a desk database's log is read on every visit anyway). Each step is best effort: one that fails
    is left to the first page, as before. Returns the names of the steps that failed.
    """
    import importlib
    import logging

    failed: list[str] = []

    def step(name: str, fn: Any) -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001 - the first page then does this work itself, as before
            failed.append(name)
            logging.getLogger(__name__).debug("warm_server: %s failed", name, exc_info=True)

    def bytecode() -> None:
        from streamlit.runtime import Runtime

        cache = getattr(Runtime.instance(), "_script_cache", None)  # Streamlit's compiled scripts (private)
        if cache is None:
            raise LookupError("Streamlit's script cache is not where this Streamlit keeps it")
        for script in [root / "app.py", *sorted((root / "pages").glob("*.py"))]:
            cache.get_bytecode(str(script))

    def markdown() -> None:
        from studio.memview import situation_html

        situation_html("**a** _b_\n\n- c\n- d\n\n| e | f |\n|---|---|\n| 1 | 2 |\n")

    def translations() -> None:
        for code in UI_LANGUAGES:
            translator(code)

    def memory_log_summary() -> None:
        from tradingagents.storage import storage_url

        config = resolve_config()
        if not storage_url(config):  # a desk database's log has no cache to fill
            memory_log(config)

    # the modules no step below imports (studio.memview and studio.memlog_view come with theirs)
    step("modules", lambda: [importlib.import_module(name) for name in ("streamlit.emojis", "studio.charts")])
    step("bytecode", bytecode)
    step("markdown", markdown)
    step("translations", translations)
    step("memory log", memory_log_summary)
    return failed


@contextlib.asynccontextmanager
async def server_lifespan(_app: Any) -> Any:
    """The lifespan of app.py's ``st.App``: ``warm_server`` runs before the server takes its first request
    (at most ``WARM_SERVER_TIMEOUT_S``; the server starts anyway after that)."""
    import asyncio

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.to_thread(warm_server), WARM_SERVER_TIMEOUT_S)
    yield None


def skip_bare_python_check() -> None:
    """Spare a new server's first page Streamlit's check that the script runs under ``streamlit run``.

    Before the first element of a process, Streamlit walks the whole call stack with its source
    (``inspect.stack()`` in ``env_util.is_repl``) only to decide whether to print "use streamlit run":
    ~80 ms of the first page of every new server. This app only ever runs under ``streamlit run``
    (app.py calls this), so the check is marked done. A later Streamlit without that flag only
    brings the walk back; nothing else depends on it."""
    import streamlit.delta_generator as dg

    if hasattr(dg, "_use_warning_has_been_displayed"):
        dg._use_warning_has_been_displayed = True  # noqa: SLF001 - Streamlit's own once-per-process flag


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
    return resolve_config(partial)


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


def shown(text: Any) -> str:
    """A stored agent text as the session's reader sees it: its rating/action/conviction lines (the
    canonical grammar the engine parses) in the session's language (``decision_card.display_text``)."""
    from tradingagents.graph.decision_card import display_text

    return display_text(str(text or ""), tr())


def rating_label(rating: Any) -> str:
    """A rating in the session's language (the stored name stays the canonical English one)."""
    return _rating_label(rating, language())


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
# Compare's links name the settings by their config keys; the Run page's short names are accepted too
_PREFILL_ALIASES = {"max_debate_rounds": "debate_rounds", "max_risk_discuss_rounds": "risk_rounds",
                    "llm_provider": "provider", "data_vendor": "vendor"}


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
    return {_PREFILL_ALIASES.get(k, k): v for k, v in data.items()
            if not (k in _PREFILL_ALIASES and _PREFILL_ALIASES[k] in data)}, None


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


def browser_id() -> str:
    """An opaque, stable id of this browser (the runs it starts are its own), never shown.

    It is a hash of Streamlit's XSRF cookie (the same across refreshes and tabs of one browser);
    without it (tests, XSRF off) an id kept in this session.
    """
    cookie = None
    with contextlib.suppress(Exception):
        cookie = st.context.cookies.get("_streamlit_xsrf")
    if isinstance(cookie, str) and cookie:
        return hashlib.sha256(("ta-owner:" + cookie).encode()).hexdigest()[:24]
    if "_browser_id" not in st.session_state:
        st.session_state["_browser_id"] = uuid.uuid4().hex
    return st.session_state["_browser_id"]


def auth_configured() -> bool:
    """Whether the app requires sign-in: Streamlit's ``[auth]`` secrets are set (``.streamlit/secrets.toml``
    or ``--secrets.files``). Without them the app is open, as on one's own machine."""
    with contextlib.suppress(Exception):  # no secrets file at all: Streamlit raises on the lookup
        return "auth" in st.secrets
    return False


@st.cache_resource(show_spinner=False)
def _signed_out(home: str) -> dict[str, float]:
    """When each person (``Identity.tag``) last signed out of this server: an ID token issued before that
    no longer signs anyone in (a copied cookie, a tab opened before the sign-out). Kept in
    ``<home>/signed_out.json`` too, so a restart does not bring old cookies back."""
    path = Path(home) / "signed_out.json"
    with contextlib.suppress(OSError, ValueError):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            return {str(k): float(v) for k, v in data.items() if isinstance(v, int | float)}
    return {}


def _remember_sign_out(person: identity.Identity) -> None:
    import time

    from tradingagents.fileio import atomic_write

    home = str(resolve_config()["home"])
    table = _signed_out(home)
    table[person.tag] = time.time()
    path = Path(home) / "signed_out.json"
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps(table, sort_keys=True))


@st.cache_resource(show_spinner=False)
def _signed_in_tokens(home: str) -> set[tuple[str, float | None]]:
    """The sign-ins (person, ID token's ``iat``) this server has recorded in the audit trail of ``home``."""
    return set()


def current_identity() -> identity.Identity | None:
    """The person signed in to this session (``studio.identity``: issuer + subject; the e-mail only when
    verified and exact), or None: no sign-in configured, not signed in, or signed out since this ID
    token was issued."""
    if not auth_configured():
        return None
    with contextlib.suppress(Exception):
        if st.user.get("is_logged_in"):
            claims = {k: st.user.get(k) for k in st.user}
            person = identity.identity_of(claims)
            if person is None:
                return None
            out = _signed_out(str(resolve_config()["home"])).get(person.tag)
            issued = claims.get("iat")
            # ``iat`` is whole seconds: a token from the second of the sign-out or later is a new sign-in
            if out is not None and (not isinstance(issued, int | float) or issued < int(out)):
                return None
            return person
    return None


def signed_in_email() -> str | None:
    """The signed-in person's name (``Identity.name``: the verified e-mail, else their subject marked as
    having none), or None. Never a claim as typed: see ``studio.identity``."""
    person = current_identity()
    return person.name if person else None


def owner() -> str:
    """Who is using the app, for the job registry's one ownership rule (``studio.jobs.may_control``).

    Every page passes it for every kind of job: the signed-in e-mail when the app has sign-in
    (``[auth]`` secrets), else the browser (``browser_id``).
    """
    person = current_identity()
    return person.key if person else browser_id()


def user_label() -> str:
    """Who causes what this session does (``by`` in saved meta and the audit): the signed-in e-mail, else the
    config's ``user`` (``TRADINGAGENTS_USER``) or the OS user the server runs as."""
    from tradingagents.storage import default_user

    return signed_in_email() or default_user(resolve_config())


def audit(action: str, target: str | None = None, **detail: Any) -> None:
    """Record an action of this session's user in the audit trail (storage's ``record_audit``); an audit
    store that cannot be written is reported, never hides the action itself."""
    from tradingagents.storage import record_audit

    try:
        record_audit(resolve_config(), action, by=user_label(), target=target, **detail)
    except Exception as exc:  # noqa: BLE001 - the action happened; say that its record did not
        st.warning(_("The audit trail could not record {action}: {problem}", action=action, problem=exc),
                   icon=":material/warning:")


def not_yours_text(job_owner: str | None, what: str) -> str:
    """Why a watcher has no Stop/Resume button: who started the job and who may control it."""
    if identity.is_person(job_owner):
        job_owner = identity.owner_name(job_owner)
        if what == "resume":
            return _("This run was started by {owner}: you can watch it; only they or a desk lead can resume it.",
                     owner=job_owner)
        return _("This run was started by {owner}: you can watch it; only they or a desk lead can stop or "
                 "resume it.", owner=job_owner)
    if what == "resume":
        return _("This run was started in another browser: only that browser can resume it.")
    return _("This run was started in another browser: you can watch it; only that browser can stop or resume it.")


def sign_in_page() -> None:
    """The only page an unsigned visitor of a configured app sees."""
    st.title(":material/lock: TradingAgents Studio")
    language_picker(main=True)
    st.markdown(_("This desk's app requires sign-in. Runs, decisions and lessons are shown to signed-in users only."))
    redirect = None
    with contextlib.suppress(Exception):
        redirect = str(st.secrets["auth"].get("redirect_uri") or "")
    mismatch = links.sign_in_mismatch(redirect, st.context.url)
    if mismatch:  # the provider would return to another origin, where no sign-in is under way
        st.error(_("Sign-in cannot finish from this address: the provider returns to {there}, and this page is "
                   "{here}. Open the app at {there}, or set `redirect_uri = \"{fixed}\"` in the `[auth]` "
                   "secrets and restart the app.", there=mismatch[0], here=st.context.url.split("?")[0],
                   fixed=mismatch[1]), icon=":material/error:")
    if st.button(_("Sign in"), type="primary", icon=":material/login:", key="sign_in"):
        st.login()


def require_sign_in() -> bool:
    """app.py calls it first: True when the visitor may see the pages (signed in, or no sign-in configured).

    An unsigned visitor of a configured app is routed to ``sign_in_page`` only (a navigation of one
    hidden page, so no other page is listed or reachable by its URL).
    """
    if not auth_configured() or signed_in_email():
        return True
    st.navigation([st.Page(sign_in_page, title=_("Sign in"), url_path="sign_in")], position="hidden").run()
    return False


def sidebar_identity() -> None:
    """Who is signed in and a Sign out button (only when the app has sign-in); records the sign-in once."""
    who = signed_in_email()
    if not who:
        return
    if st.session_state.get("_audited_sign_in") != who:
        st.session_state["_audited_sign_in"] = who
        issued = st.user.get("iat")
        sign_in = (owner(), issued if isinstance(issued, int | float) else None)
        seen = _signed_in_tokens(str(resolve_config()["home"]))
        if sign_in[1] is None or sign_in not in seen:  # one entry a sign-in, not one a page load or tab
            seen.add(sign_in)
            audit("sign_in")
    with st.sidebar:
        if is_desk_lead(who):
            st.markdown(":material/account_circle: " + _("Signed in as **{who}** · desk lead", who=who))
        else:
            st.markdown(":material/account_circle: " + _("Signed in as **{who}**", who=who))
            person = current_identity()
            if person is not None and person.lead_role:  # the ID token says lead; the provider did not, now
                st.caption(_("Your desk-lead role is not confirmed by the sign-in provider now (it was removed, "
                             "or your sign-in has expired): sign out and in again if you should have it."))
        if st.button(_("Sign out"), key="sign_out", icon=":material/logout:"):
            audit("sign_out")
            person = current_identity()
            if person is not None:  # every cookie and tab of this person issued before now stops working
                _remember_sign_out(person)
            st.logout()


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
        return _("{problem} Change the sidebar's **{field}** setting.", problem=exc, field=_(FIELD_OF[key]))
    return str(exc)


def api_key() -> str | None:
    return (st.session_state.get(KEY_API) or "").strip() or None


def input_notes(meta: dict[str, Any]) -> list[str]:
    """What a saved run says about its input, for the result view (``storage.run_notes``; the missing
    data and the memory log's note have their own places there)."""
    from tradingagents.storage import run_notes

    return [("⚠ " if label == "Invented instrument" else "") + _("{label}: {text}", label=_(label), text=text)
            for label, text in run_notes(meta) if label not in ("Missing data", "Memory log")]


def badges_html(config: dict[str, Any]) -> str:
    """The engine and data badges of a config, in the session's language."""
    parts = []
    if config.get("llm_provider") == "offline":
        parts.append(f'<span class="ta-badge ta-offline">{html.escape(_(OFFLINE_LABEL))}</span>')
    else:
        provider = config.get("llm_provider")
        name = preset_label(provider, config.get("backend_url"))
        if provider == "openai_compatible" and config.get("backend_url"):
            from tradingagents.llm_presets import public_url

            name = _("OpenAI-compatible server at {url}", url=public_url(config.get("backend_url")))
        else:
            name = _(name)
        llm = f"{name} · {config.get('quick_think_llm')} / {config.get('deep_think_llm')}"
        badge = _("LLM: {llm}", llm=llm)  # (outside the f-string: the extractor finds it)
        parts.append(f'<span class="ta-badge ta-llm">{html.escape(badge)}</span>')
    if config.get("data_vendor") == "demo":
        badge = _("synthetic demo data")
        parts.append(f'<span class="ta-badge ta-demo">{html.escape(badge)}</span>')
    else:
        badge = _("data: {vendor}", vendor=config.get("data_vendor"))
        parts.append(f'<span class="ta-badge ta-data">{html.escape(badge)}</span>')
    return " ".join(parts)


CSS = """
<style>
.ta-badge{display:inline-block;padding:2px 10px;margin:2px 4px 2px 0;border-radius:999px;font-size:.78rem;
 font-weight:600;letter-spacing:.02em}
.ta-offline{background:#3b2f0b;color:#F2C94C;border:1px solid #F2C94C}
.ta-demo{background:#0b2b3b;color:#56CCF2;border:1px solid #56CCF2}
.ta-llm,.ta-data{background:#1b2433;color:#cfd6e4;border:1px solid #46526a}
.ta-rating{display:inline-block;padding:.35rem 1.4rem;border-radius:999px;font-size:1.6rem;font-weight:800;
 color:#0E1117;letter-spacing:.03em}
.ta-agent{display:flex;justify-content:space-between;padding:4px 8px;margin:3px 0;border-radius:6px;
 background:#161B26;border-left:4px solid #46526a;font-size:.88rem}
.ta-agent.running{border-left-color:#2E9BFF;background:#13233a}
.ta-agent.done{border-left-color:#1DB954}
.ta-agent .t{color:#8A93A6;font-variant-numeric:tabular-nums}
.ta-agent .dot{display:inline-block;width:9px;height:9px;border-radius:50%;background:#46526a;margin-right:8px}
.ta-agent.running .dot{background:#2E9BFF;animation:ta-pulse 1s ease-in-out infinite}
.ta-agent.done .dot{background:#1DB954}
@keyframes ta-pulse{0%,100%{opacity:1}50%{opacity:.3}}
.ta-gantt{font-size:.78rem;margin-top:6px}
.ta-gantt .row{display:flex;align-items:center;height:20px}
.ta-gantt .name{width:150px;flex:none;color:#cfd6e4;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.ta-gantt .track{position:relative;flex:1;height:12px;background:#161B26;border-radius:3px}
.ta-gantt .bar{position:absolute;top:0;height:12px;border-radius:3px}
.ta-gantt .bar.live{animation:ta-pulse 1s ease-in-out infinite}
.ta-gantt .axis{display:flex;justify-content:space-between;margin-left:150px;color:#8A93A6}
.ta-situation{background:#161B26;border-radius:6px;padding:8px 10px;margin:6px 0}
.ta-situation mark{background:#F2C94C;color:#0E1117;border-radius:3px;padding:0 2px}
.ta-team{font-weight:700;margin-top:6px;font-size:.8rem;text-transform:uppercase;color:#8A93A6}
.ta-flow{display:flex;flex-wrap:wrap;align-items:stretch;gap:4px;margin:6px 0 10px}
.ta-flow-box{display:flex;flex-direction:column;gap:2px;padding:6px 10px;border-radius:8px;background:#161B26;
 border:1px solid #46526a;font-size:.8rem;max-width:15rem}
.ta-flow-box b{font-size:.78rem;text-transform:uppercase;color:#56CCF2}
.ta-flow-arrow{align-self:center;color:#8A93A6;font-size:1.1rem}
.ta-rating{white-space:nowrap;max-width:100%}
@media (max-width: 900px){
 .ta-rating{font-size:1.2rem;padding:.25rem 1rem}
 .ta-flow-box{max-width:100%}
 [data-testid="stBaseButton-secondary"] p,[data-testid="stBaseButton-primary"] p,
 [data-testid="stDownloadButton"] p{white-space:nowrap}
}
</style>
"""


def inject_css() -> None:
    st.html(CSS)


def rating_badge_html(rating: str | None) -> str:
    r = rating or "n/a"
    color = RATING_COLORS.get(r, "#8A93A6")
    shown = rating_label(rating) if rating else _("n/a")
    return (f'<span class="ta-rating" data-testid="ta-rating" data-rating="{html.escape(r)}" '
            f'style="background:{color}">{html.escape(shown)}</span>')


KEY_PRICING = "_llm_pricing"  # the session's valid price edits: {model: (input, output)}
KEY_PRICES_EDITOR = "set_prices_editor"
PRICE_COLUMNS = ("model", "$/1M input", "$/1M output")


def list_prices() -> dict[str, tuple[float, float]]:
    """The table the editor starts from: the settings' prices without this session's edits.

    (The defaults, then ``llm_pricing`` of the config, then ``TRADINGAGENTS_LLM_PRICING``.)
    """
    return pricing.pricing_table(resolve_config())


def prices_from_rows(rows: list[dict[str, Any]], base: dict[str, tuple[float, float]]) -> dict:
    """The edited table's rows → the override (only what differs from ``base``); ConfigError if bad."""
    table: dict[str, Any] = {}
    for i, row in enumerate(rows, start=1):
        model = str(row.get(PRICE_COLUMNS[0]) or "").strip()
        inp, out = row.get(PRICE_COLUMNS[1]), row.get(PRICE_COLUMNS[2])
        blank = [v is None or (isinstance(v, float) and v != v) for v in (inp, out)]
        if not model and all(blank):
            continue  # an empty new row
        if not model:
            raise ConfigError(_("Model prices, row {row}: give the model's name (as typed in Quick/Deep model).",
                                row=i))
        if any(blank):
            raise ConfigError(_("Model prices, {model}: give both prices, $ per 1M input and per 1M output tokens.",
                                model=repr(model)))
        if model in table:
            raise ConfigError(_("Model prices: {model} is listed twice; keep one row.", model=repr(model)))
        table[model] = [inp, out]
    valid = pricing.validate_pricing(table, "Model prices") or {}
    return {m: p for m, p in valid.items() if base.get(m) != p}


def _reset_prices() -> None:
    st.session_state.pop(KEY_PRICING, None)
    st.session_state.pop(KEY_PRICES_EDITOR, None)
    st.session_state.pop(KEY_PRICES_START, None)


KEY_PRICES_OPEN = "prices_open"  # the expander's open state (its content is built only while it is open)
KEY_PRICES_START = "_prices_start"  # the rows the open editor started from: the list prices with the session's edits


def prices_editor() -> None:
    """The "Model prices" expander: this session's prices, used by the next runs' estimates and costs.

    The table is built only while the expander is open: its data editor loads pandas (~0.5 s), which
    every page's first run paid before the page drew anything. The session's edits (``KEY_PRICING``)
    outlive a closed expander, and it opens on them again."""
    box = st.expander(_("Model prices"), icon=":material/payments:", key=KEY_PRICES_OPEN, on_change="rerun")
    if not box.open:
        st.session_state.pop(KEY_PRICES_START, None)
        if st.session_state.get(KEY_PRICING):
            with box:
                st.caption(_("Edited in this session: {names}.", names=", ".join(sorted(st.session_state[KEY_PRICING]))))
        return
    base = list_prices()
    with box:
        st.caption(_("USD per 1M tokens. Edits apply to the next runs of this browser session only (never saved "
                     "to a file). Add a row for a model that is not listed."))
        if os.environ.get(pricing.ENV_VAR, "").strip():
            st.caption(_("{env} is set: its models' prices win over edits here.", env=pricing.ENV_VAR))
        rows = st.session_state.get(KEY_PRICES_START)
        if rows is None:  # opened now: start from the prices in force (the editor's edits apply on top of these)
            table = {**base, **(st.session_state.get(KEY_PRICING) or {})}
            rows = [{PRICE_COLUMNS[0]: m, PRICE_COLUMNS[1]: p[0], PRICE_COLUMNS[2]: p[1]} for m, p in table.items()]
            st.session_state[KEY_PRICES_START] = rows
        df = st.data_editor(
            rows, key=KEY_PRICES_EDITOR, num_rows="dynamic", hide_index=True, width="stretch",
            column_config={
                PRICE_COLUMNS[0]: st.column_config.TextColumn(_("model")),
                PRICE_COLUMNS[1]: st.column_config.NumberColumn(_("$/1M input"), min_value=0.0, format="%.3f"),
                PRICE_COLUMNS[2]: st.column_config.NumberColumn(_("$/1M output"), min_value=0.0, format="%.3f"),
            })
        try:
            override = prices_from_rows(list(df), base)
        except ConfigError as exc:
            st.error(_("{problem} Until it is fixed, the last valid prices stay in force.", problem=exc),
                     icon=":material/error:")
        else:
            if override:
                st.session_state[KEY_PRICING] = override
            else:
                st.session_state.pop(KEY_PRICING, None)
        if st.session_state.get(KEY_PRICING):
            names = ", ".join(sorted(st.session_state[KEY_PRICING]))
            st.caption(_("Edited in this session: {names}.", names=names))
        st.button(_("Reset to list prices"), key="prices_reset", on_click=_reset_prices,
                  icon=":material/restart_alt:", disabled=not st.session_state.get(KEY_PRICING))


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
        st.selectbox(_("LLM provider"), providers, key="set_provider", placeholder=_("Choose an option"),
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
            c1.text_input(_("Quick model"), key="set_quick",
                          placeholder=str(preset.get("quick_model") or _("server's model")),
                          help=_("Blank: the provider's default model."))
            c2.text_input(_("Deep model"), key="set_deep",
                          placeholder=str(preset.get("deep_model") or _("server's model")),
                          help=_("Blank: the provider's default model."))
            st.text_input(_("Base URL"), key="set_base_url", placeholder=_("provider default"),
                          help=_("For OpenAI-compatible servers (Ollama, vLLM, …)."))
            st.text_input(_("API key"), key=KEY_API, type="password",
                          help=_("Kept in this browser session only; never written to disk."))
        choices = OFFLINE_LANGUAGES if offline else LANGUAGES
        if st.session_state.get("set_language") not in choices:
            st.session_state["set_language"] = "English"
        st.selectbox(_("Output language"), choices, key="set_language", placeholder=_("Choose an option"),
                     format_func=lambda name: t(LANGUAGE_NAMES.get(name, name)),
                     help=_("The language the reports, debates and decisions are written in."))
        st.selectbox(_("Data source"), VENDORS, key="set_vendor", format_func=lambda v: t(vendor_label(v)),
                     placeholder=_("Choose an option"))
        st.selectbox(_("Analyst data"), ANALYST_DATA_MODES, key="set_analyst_data",
                     format_func=lambda v: t(ANALYST_DATA_LABELS.get(v, v)), placeholder=_("Choose an option"),
                     help=_("Tool calls: each analyst's model asks for the data it needs. Prefetched: each "
                            "analyst fetches its usual data first and makes one model call without tools "
                            "(fewer round trips, for models that cannot call tools)."))
        prices_editor()
        config = current_config()
        st.html(badges_html(config))
    return config


def render_remembered(meta: dict | None, key: str, *, expanded: bool = True) -> None:
    """"What the team remembered": the past decisions and lessons a run's roles were given
    (``meta["memory_used"]``), each linking to its Memory log entry or its lesson (open on the Run page;
    folded above a debate, which it would push below the fold)."""
    from studio.memview import remembered, remembered_url

    items = remembered((meta or {}).get("memory_used"), t=tr())
    if (meta or {}).get("memory_used") is None:
        return  # a run saved before the record existed
    with st.expander(_("What the team remembered ({n})", n=len(items)), expanded=expanded, key=f"remembered_{key}"):
        if not items:
            st.caption(_("Nothing: no settled decision or matching lesson was known by this run's date."))
        for who in dict.fromkeys(i["who"] for i in items):
            st.markdown(f"**{tr().p('role', who)}**")
            st.markdown("\n".join(f"- [{i['text']}]({remembered_url(i)})" for i in items if i["who"] == who))


# ---------------------------------------------------------------------------- the portfolio manager in the loop
def may_act_on_run(meta: dict | None) -> bool:
    """Whether this session may ask the team on its budget, steer or record a call on a run: anyone where the app
    has no sign-in (one's own machine); with sign-in, the run's owner (``meta["by"]``) or a desk lead."""
    if not auth_configured():
        return True
    who = signed_in_email()
    return bool(who) and (who == str((meta or {}).get("by") or "").strip().lower() or is_desk_lead(who))


def _items(meta: dict | None, key: str) -> list[dict]:
    """``meta[key]`` of a saved run (``questions``, ``pm_notes``): its dicts, oldest first."""
    items = (meta or {}).get(key)
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def render_pm_notes(meta: dict | None, key: str) -> None:
    """The portfolio manager's notes to the judges of a run (``meta.pm_notes``), as chat bubbles of the PM."""
    from studio.debates import role_name

    notes = [n for n in _items(meta, "pm_notes") if n.get("note")]
    if not notes:
        return
    with st.expander(_("Portfolio manager's notes") + f" ({len(notes)})", expanded=True, key=f"pm_notes_{key}"):
        for n in notes:
            before = str(n.get("before") or "")
            with st.chat_message("user"):
                st.caption(_("To the {judge} ({by}, {at}): {note}", judge=role_name(before, t=tr())
                             if before in ("research_manager", "portfolio_manager") else before,
                             by=n.get("by") or "?", at=n.get("at") or "", note=""))
                st.markdown(shown(n["note"]))


def paused_panel(ticker: str, date: str, before: str, turns: list, key: str, *, mine: bool) -> str | None:
    """A run paused before a verdict: the debate so far as chat bubbles and a note box for that judge. Returns
    the note when Continue is pressed ("" for none), else None."""
    from studio.debates import role_name

    t = tr()
    judge = role_name(before, t=t) if before in ("research_manager", "portfolio_manager") else before
    with st.container(border=True, key=f"ta-paused-{key}"):
        st.markdown("#### " + _("Paused before the {judge}", judge=judge))
        st.caption(_("{ticker} as of {date} waits at its checkpoint (a server restart keeps it). Read the debate so "
                     "far, leave a note for the {judge} if the committee knows something, then continue.",
                     ticker=ticker, date=date, judge=judge))
        for turn in turns:
            with st.chat_message(turn.speaker_in(t), avatar=turn.avatar):
                st.caption(turn.speaker_in(t) + (f" · {_('round {n}', n=turn.round)}" if turn.round else ""))
                st.markdown(shown(turn.text))
        if not mine:
            st.caption(_("Only whoever started the run or a desk lead may add a note and continue it."))
            return None
        with st.form(f"pause_form_{key}", border=False):
            note = st.text_area(_("Your note to the {judge}", judge=judge), key=f"pause_note_{key}", height=90,
                                placeholder=_("Earnings next week; keep it small."))
            go = st.form_submit_button(_("Continue"), type="primary", icon=":material/play_circle:")
        return (note or "") if go else None


def _question_thread(items: list[dict], key: str) -> None:
    """Questions and answers as chat bubbles: who asked which agent when, the question, the agent's answer."""
    from studio.debates import role_name
    from tradingagents import team

    t = tr()
    for n, item in enumerate(items):
        agent = str(item.get("agent") or "")
        name = role_name(agent, t=t) if agent in team.ROLES else agent
        with st.chat_message("user"):
            st.caption(_("{who} asked the {agent} · {at}", who=item.get("by") or "?", agent=name,
                         at=item.get("at") or ""))
            st.markdown(shown(item.get("question") or ""))
        with st.chat_message(name, avatar=":material/smart_toy:"), st.container(key=f"ta-answer-{key}-{n}"):
            st.markdown(shown(item.get("answer") or ""))


def _ask_box(config: dict[str, Any], roles: list[str], default: str, key: str, answer: Any) -> None:
    """The form to ask one of ``roles`` a question, and the answer being worked out off the script thread
    (``answer(agent, question, by, api_key, on_token)``: a model's call takes seconds; the page follows it)."""
    from studio.debates import role_name

    t = tr()
    with st.form(f"ask_form_{key}", clear_on_submit=True, border=False):
        agent = st.selectbox(_("Agent"), roles, index=roles.index(default) if default in roles else 0,
                             format_func=lambda k: role_name(k, t=t), key=f"ask_agent_{key}",
                             placeholder=_("Choose an option"))
        question = st.text_input(_("Your question"), key=f"ask_text_{key}",
                                 placeholder=_("Why do you expect margins to fall?"))
        asked = st.form_submit_button(_("Ask"), icon=":material/forum:")
    slot = f"_asking_{key}"
    pending: _Asking | None = st.session_state.get(slot)
    if asked and question.strip() and (pending is None or pending.done):
        by, key_now, text = user_label(), api_key(), question.strip()
        pending = st.session_state[slot] = _Asking(
            agent, text, lambda on_token: answer(agent, text, by, key_now, on_token))
    if pending is not None:
        _follow_asking(slot, pending, role_name(pending.agent, t=t), config)


def render_questions(config: dict[str, Any], ticker: str, date: str, meta: dict | None, key: str) -> None:
    """"Ask the team": the run's questions and answers as chat bubbles, and a box to ask any agent that took part
    (answered in its role from the run's material; kept in ``meta.questions``)."""
    from tradingagents.ask import ask, took_part
    from tradingagents.storage import load_run

    try:
        run = load_run(config, ticker, date)
    except Exception:  # noqa: BLE001 - a run not saved (yet): nothing to ask
        return
    items = _items(run.get("meta"), "questions")  # as storage has it now (the page's copy may predate a question)
    with st.container(border=True, key=f"ta-questions-{key}"):
        st.subheader(_("Ask the team"), anchor=False)
        if not items:
            st.caption(_("Ask any agent of this run a question: it answers in its role from this run's material only."))
        _question_thread(items, key)
        if not may_act_on_run(run.get("meta")):
            st.caption(_("Only the run's owner or a desk lead may ask on this run."))
            return
        _ask_box(config, [r.key for r in took_part(run)], "bear", key,
                 lambda agent, text, by, key_now, on_token: ask(config, ticker, date, agent, text, by=by,
                                                                api_key=key_now, on_token=on_token, shared=True))


def render_questions_live(config: dict[str, Any], job: Any, key: str) -> None:
    """"Ask the team" while a run goes: any agent that has spoken answers from what the run has written so far;
    the thread is kept by the run's job and saved with the run (``RunJob.ask``)."""
    from tradingagents.ask import run_so_far, took_part

    roles = [r.key for r in took_part(run_so_far(job.events, job.config))]
    if not roles and not job.questions:
        return
    with st.expander(_("Ask the team") + (f" ({len(job.questions)})" if job.questions else ""),
                     key=f"ta-questions-live-{key}"):
        st.caption(_("Any agent that has spoken answers from what this run has written so far; the thread is saved "
                     "with the run."))
        _question_thread(list(job.questions), f"live-{key}")
        if not may_act_on_run({"by": job.config.get("user") or job.owner}):
            st.caption(_("Only the run's owner or a desk lead may ask on this run."))
            return
        if roles:
            _ask_box(config, roles, roles[-1], f"live-{key}",
                     lambda agent, text, by, key_now, on_token: job.ask(agent, text, by=by, api_key=key_now,
                                                                        on_token=on_token))


class _Asking:
    """One question being answered on a worker thread: the text so far (streamed), then the item or the error.
    ``answer(on_token)`` does the asking (a saved run's ``ask``, or a running job's ``RunJob.ask``)."""

    def __init__(self, agent: str, question: str, answer: Any) -> None:
        self.agent, self.question = agent, question
        self.parts: list[str] = []
        self.error: BaseException | None = None
        self.done = False

        def work() -> None:
            try:
                answer(self.parts.append)
            except Exception as exc:  # noqa: BLE001 - shown on the page
                self.error = exc
            finally:
                self.done = True

        self.thread = threading.Thread(target=work, name=f"ta-ask-{agent}", daemon=True)
        self.thread.start()


def _follow_asking(slot: str, pending: _Asking, name: str, config: dict[str, Any]) -> None:
    """The question being answered, its text as it streams (a fragment polling the worker); when it is done the
    page draws again (the thread from storage) or says what went wrong."""
    if pending.done:
        st.session_state.pop(slot, None)
        if pending.error is not None:
            st.error(config_error_text(pending.error, config), icon=":material/error:")
        return

    @st.fragment(run_every=0.5)
    def follow() -> None:
        if pending.done:
            st.rerun()  # the whole page: the saved thread shows the answer
        with st.chat_message("user"):
            st.markdown(shown(pending.question))
        with st.chat_message(name, avatar=":material/smart_toy:"):
            st.caption(_("The {agent} is answering…", agent=name))
            st.markdown(shown("".join(pending.parts)))

    follow()


def render_your_call(config: dict[str, Any], ticker: str, date: str, team_rating: str | None, meta: dict | None,
                     key: str) -> None:
    """"Your call" beside the decision card: the portfolio manager's own rating and reason, kept in the memory log
    beside the team's (changeable until the entry settles), and once settled who was right."""
    from tradingagents.memory.log_format import pm_outcome
    from tradingagents.rating import RATINGS_5_TIER
    from tradingagents.storage import open_memory_log, record_pm_decision

    try:
        entry = next((e for e in open_memory_log(config).load_entries(texts=False)
                      if e["ticker"] == ticker and e["date"] == date), None)
    except Exception as exc:  # noqa: BLE001 - the log cannot be read: said, the result still shown
        st.caption(_("Your call is not available: {problem}", problem=exc))
        return
    if entry is None:
        return  # not logged (a settled day re-analysed, a blind run)
    pm = entry.get("pm_decision") or {}
    with st.container(border=True, key=f"ta-your-call-{key}"):
        st.markdown("**" + _("Your call") + "**")
        if pm:
            st.caption(_("{who} · {at}: {rating}", who=pm.get("by") or "?", at=pm.get("at") or "",
                         rating=rating_label(pm.get("rating"))))
            if pm.get("reason"):
                st.markdown(shown(pm["reason"]))
        if not entry["pending"]:
            scored = pm_outcome(entry)
            verdict = {True: _("right"), False: _("wrong"), None: _("not scored")}
            st.caption(_("Settled: the team ({team}) was {team_verdict}; you ({pm}) were {pm_verdict}.",
                         team=rating_label(entry["rating"]), team_verdict=verdict[scored["was_right"]],
                         pm=rating_label(pm.get("rating")) if pm else "—",
                         pm_verdict=verdict[scored["pm_was_right"]]))
            return
        if not may_act_on_run(meta):
            st.caption(_("Only the run's owner or a desk lead may record a call on this run."))
            return
        tiers = list(RATINGS_5_TIER)
        current = pm.get("rating") or team_rating or "Hold"
        with st.form(f"your_call_{key}", border=False):
            rating = st.segmented_control(_("Your rating"), tiers, default=current if current in tiers else "Hold",
                                          format_func=rating_label, key=f"pm_rating_{key}")
            reason = st.text_area(_("Reason"), value=pm.get("reason") or "", key=f"pm_reason_{key}", height=80)
            saved = st.form_submit_button(_("Record my call") if not pm else _("Change my call"),
                                          icon=":material/how_to_vote:")
        if saved and rating:
            try:
                result = record_pm_decision(config, ticker, date, rating, reason, by=user_label())
            except Exception as exc:  # noqa: BLE001
                st.error(config_error_text(exc, config), icon=":material/error:")
                return
            if result["status"] == "settled":
                st.warning(_("The decision of {ticker} on {date} is settled: a call is scored on its outcome and can "
                             "no longer change.", ticker=ticker, date=date))
                return
            st.rerun()
