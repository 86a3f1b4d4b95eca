"""Who uses the app and what they may do: sign-in and sign-out, the owner of this session's jobs, desk
leads, the audit trail, and the one job registry (wired to all of these)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import streamlit as st

from studio import identity, links
from studio.jobs import JobRegistry
from studio.ui.lang import _, language_picker
from tradingagents.config import (
    resolve_config,
)
from tradingagents.errors import ConfigError

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
