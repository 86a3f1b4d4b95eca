"""Who a signed-in user is, from the claims of their ID token (UI-neutral: ``ui.py`` passes ``st.user``).

A person is the provider's subject: the issuer and the ``sub`` claim together (``Identity.key``, the
owner of the jobs they start). An e-mail never identifies anyone by itself; it only *names* a person
and makes them a desk lead (``desk_leads``) when all of these hold:

- the provider says it is verified (``email_verified`` is true, the boolean or the string "true");
- it is already in its Unicode normal form NFKC (a full-width ``ｌｅａｄ@…`` is refused, not folded);
- it is plain ASCII with no space or control character anywhere (a trailing no-break space, a
  Cyrillic ``а`` or a zero-width joiner make it a different string that only looks the same);
- it has one ``@`` and something on both sides.

Then it is compared exactly: ``LEAD@desk.example`` is not ``lead@desk.example`` (no lower-casing,
no stripping). A claim that fails any check is ignored, and the person is named by their subject.

A desk-lead *role* claim in the ID token is only a hint: the token lives in a cookie for weeks, so a
role taken away at the provider would keep working until the next sign-in. ``ProviderRoles`` asks the
provider's userinfo endpoint (with the person's access token) whether the role holds *now*, on every
page load (a couple of seconds' cache at most); no answer, another subject, or a revoked token: not a lead.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import unicodedata
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LEAD_ROLES = ("desk_lead", "desk-lead")
"""A signed-in user whose ID token's ``roles`` or ``groups`` claim holds one of these is a desk lead too."""

_EMAIL = re.compile(r"^[!-~]+@[!-~]+$")  # printable ASCII without space on both sides of the @
SEP = " · "
"""Between a person's name and the tag of their subject in ``Identity.key``."""


def canonical_email(value: Any) -> str | None:
    """``value`` when it is an e-mail that may name a person (see the module docstring), else None."""
    if not isinstance(value, str) or not value:
        return None
    if unicodedata.normalize("NFKC", value) != value:
        return None
    if not value.isascii() or not _EMAIL.match(value) or value.count("@") != 1:
        return None
    return value


def verified(claims: Mapping[str, Any]) -> bool:
    flag = claims.get("email_verified")
    return flag is True or (isinstance(flag, str) and flag.strip().lower() == "true")


@dataclass(frozen=True)
class Identity:
    issuer: str
    subject: str
    email: str | None  # verified and canonical, or None
    lead_role: bool = False

    @property
    def tag(self) -> str:
        """A short digest of issuer + subject: two people never share it, one person always has it."""
        return hashlib.sha256(f"{self.issuer}\0{self.subject}".encode()).hexdigest()[:10]

    @property
    def name(self) -> str:
        """How the person is shown and recorded (``by``): the verified e-mail, else the subject, marked."""
        if self.email:
            return self.email
        subject = "".join(ch if ch.isascii() and ch.isprintable() else "?" for ch in self.subject)
        return f"{subject} (no verified e-mail)"

    @property
    def key(self) -> str:
        """The owner id of what this person starts: their name and the tag of their subject."""
        return f"{self.name}{SEP}{self.tag}"


def identity_of(claims: Mapping[str, Any] | None) -> Identity | None:
    """The person of a signed-in user's claims (``st.user``), or None without a subject."""
    if not claims:
        return None
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        return None
    email = canonical_email(claims.get("email")) if verified(claims) else None
    return Identity(str(claims.get("iss") or ""), sub, email, has_lead_role(claims))


def has_lead_role(claims: Mapping[str, Any]) -> bool:
    """Whether claims (an ID token's, or the userinfo endpoint's) hold a desk-lead role (``LEAD_ROLES``)."""
    roles = [claims.get("roles"), claims.get("groups")]
    return any(isinstance(c, list | tuple) and any(str(r) in LEAD_ROLES for r in c) for c in roles)


def is_person(owner: str | None) -> bool:
    """Whether an owner id is a signed-in person's ``Identity.key`` (else a browser id or nobody)."""
    return bool(owner) and SEP in str(owner)


def owner_name(owner: str | None) -> str:
    """The name part of an owner id (``Identity.name``), for messages."""
    return str(owner or "").split(SEP, 1)[0]


def is_lead(identity: Identity | None, desk_leads: Any, role_now: Callable[[Identity], bool] | None = None) -> bool:
    """A desk lead: a verified e-mail listed exactly in ``desk_leads`` (the settings as they are now), or a
    desk-lead role claim that ``role_now`` confirms with the provider now (``ProviderRoles.lead_role``);
    without ``role_now`` the ID token's claim is taken as it is (a test, or a caller with no provider)."""
    if identity is None:
        return False
    if identity.email and identity.email in list(desk_leads or []):
        return True
    if not identity.lead_role:
        return False
    return identity.lead_role if role_now is None else bool(role_now(identity))


def _get_json(url: str, token: str | None = None, timeout: float = 10.0) -> Any:
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the provider's own https/http URL
        return json.loads(resp.read(1_000_000).decode("utf-8"))


class ProviderRoles:
    """Whether a person's desk-lead role still holds at the provider: its userinfo endpoint, asked with
    their access token (Streamlit gives it as ``st.user.tokens["access"]`` when ``[auth]`` has
    ``expose_tokens = "access"``). One per server process; answers are kept ``ttl`` seconds (so a page's
    widgets and fragments do not each ask), and a failed answer is never kept.

    ``metadata_urls`` are the ``server_metadata_url`` of the app's providers; the one whose discovery
    document names the person's issuer is asked. Anything else (no access token, no such provider, an
    HTTP error such as a revoked or expired token, a reply for another subject, not JSON): no role.
    """

    def __init__(self, fetch: Callable[..., Any] | None = None, ttl: float = 2.0, timeout: float = 10.0):
        self._fetch = fetch or (lambda *a, **kw: _get_json(*a, **kw))
        self._ttl, self._timeout = ttl, timeout
        self._lock = threading.Lock()
        self._userinfo: dict[str, str] = {}  # issuer -> its userinfo endpoint (the discovery document)
        self._answers: dict[str, tuple[float, bool]] = {}  # access token -> (when, lead role)

    def _endpoint(self, issuer: str, metadata_urls: Iterable[str]) -> str | None:
        with self._lock:
            if issuer in self._userinfo:
                return self._userinfo[issuer]
        for url in metadata_urls:
            try:
                doc = self._fetch(url, timeout=self._timeout)
            except Exception:  # noqa: BLE001 - another provider may be the one; none: no role
                continue
            if isinstance(doc, dict) and doc.get("issuer") == issuer and isinstance(doc.get("userinfo_endpoint"), str):
                with self._lock:
                    self._userinfo[issuer] = doc["userinfo_endpoint"]
                return doc["userinfo_endpoint"]
        return None

    def lead_role(self, person: Identity, access_token: str | None, metadata_urls: Iterable[str]) -> bool:
        """Whether the provider gives ``person`` a desk-lead role now (see the class docstring)."""
        if not access_token or not person.issuer:
            return False
        now = time.monotonic()
        with self._lock:
            kept = self._answers.get(access_token)
            if kept is not None and now - kept[0] < self._ttl:
                return kept[1]
        endpoint = self._endpoint(person.issuer, metadata_urls)
        if endpoint is None:
            return False
        try:
            claims = self._fetch(endpoint, token=access_token, timeout=self._timeout)
        except Exception:  # noqa: BLE001 - a revoked or expired token, the provider down: not a lead now
            return False
        lead = isinstance(claims, dict) and claims.get("sub") == person.subject and has_lead_role(claims)
        with self._lock:
            self._answers = {k: v for k, v in self._answers.items() if now - v[0] < self._ttl}
            self._answers[access_token] = (now, lead)
        return lead
