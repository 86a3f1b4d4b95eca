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
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
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
    roles = [claims.get("roles"), claims.get("groups")]
    lead = any(isinstance(c, list | tuple) and any(str(r) in LEAD_ROLES for r in c) for c in roles)
    return Identity(str(claims.get("iss") or ""), sub, email, lead)


def is_person(owner: str | None) -> bool:
    """Whether an owner id is a signed-in person's ``Identity.key`` (else a browser id or nobody)."""
    return bool(owner) and SEP in str(owner)


def owner_name(owner: str | None) -> str:
    """The name part of an owner id (``Identity.name``), for messages."""
    return str(owner or "").split(SEP, 1)[0]


def is_lead(identity: Identity | None, desk_leads: Any) -> bool:
    """A desk lead: a verified e-mail listed exactly in ``desk_leads``, or a desk-lead role claim."""
    if identity is None:
        return False
    return identity.lead_role or bool(identity.email and identity.email in list(desk_leads or []))
