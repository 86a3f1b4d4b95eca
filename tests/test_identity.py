"""Who a signed-in user is (studio/identity.py): the provider's subject, an e-mail only when verified and exact."""

from __future__ import annotations

import pytest

from studio.identity import Identity, canonical_email, identity_of, is_lead, is_person, owner_name

ISS = "https://login.desk.example"
LEADS = ["lead@desk.example"]


def _claims(sub: str, email: str | None = None, verified: object = True, **more: object) -> dict:
    out: dict = {"iss": ISS, "sub": sub, **more}
    if email is not None:
        out["email"] = email
        out["email_verified"] = verified
    return out


@pytest.mark.parametrize("forged", [
    "LEAD@desk.example",              # another case: a different string
    "lead@desk.example\u00a0",        # a trailing no-break space
    " lead@desk.example",             # a leading space
    "lead@desk.example\u200b",        # a zero-width space
    "le\u0430d@desk.example",         # a Cyrillic а
    "\uff4c\uff45\uff41\uff44@desk.example",  # full-width letters (NFKC would fold them to lead@…)
    "lead@desk.example\u2028",
    "lead@@desk.example",
])
def test_a_lookalike_e_mail_never_names_the_lead(forged):
    person = identity_of(_claims("mallory", forged))
    assert person is not None
    assert person.email != "lead@desk.example"
    assert not is_lead(person, LEADS)
    assert "lead@desk.example" not in person.key


def test_an_unverified_e_mail_counts_for_nothing():
    for flag in (False, None, "false", 0, "yes"):
        person = identity_of(_claims("mallory", "lead@desk.example", verified=flag))
        assert person.email is None and not is_lead(person, LEADS), flag
        assert person.name == "mallory (no verified e-mail)"
    assert identity_of(_claims("mallory", "lead@desk.example", verified="true")).email == "lead@desk.example"


def test_the_verified_lead_is_a_lead_and_the_subject_is_the_identity():
    lead = identity_of(_claims("u-1", "lead@desk.example"))
    assert is_lead(lead, LEADS) and lead.name == "lead@desk.example"
    twin = identity_of(_claims("u-2", "lead@desk.example"))  # another subject with the same address
    assert twin.key != lead.key  # owns nothing of the first
    other_iss = identity_of({**_claims("u-1", "lead@desk.example"), "iss": "https://evil.example"})
    assert other_iss.key != lead.key
    assert identity_of(_claims("u-1", "lead@desk.example")).key == lead.key  # stable across sign-ins
    assert is_person(lead.key) and owner_name(lead.key) == "lead@desk.example"
    assert not is_person("0123456789abcdef01234567")  # a browser id


def test_a_role_claim_makes_a_lead_and_no_subject_no_identity():
    assert is_lead(identity_of(_claims("r", roles=["desk_lead"])), [])
    assert not is_lead(identity_of(_claims("r", roles=["Desk_Lead "])), [])
    assert identity_of({"email": "lead@desk.example", "email_verified": True}) is None
    assert identity_of(None) is None
    assert not is_lead(None, LEADS)


def test_canonical_email():
    assert canonical_email("ann@desk.example") == "ann@desk.example"
    for bad in ("", None, 3, "ann", "a b@x", "ann@desk.example\u0085", "ａnn@desk.example"):
        assert canonical_email(bad) is None, bad
    assert Identity(ISS, "s\u00a0x", None).name == "s?x (no verified e-mail)"


def _provider(answer):
    calls: list[tuple[str, str | None]] = []

    def fetch(url, token=None, timeout=None):
        calls.append((url, token))
        if url.endswith("openid-configuration"):
            return {"issuer": "https://idp.example", "userinfo_endpoint": "https://idp.example/userinfo"}
        if isinstance(answer, Exception):
            raise answer
        return answer

    return fetch, calls


def test_a_lead_role_counts_only_as_the_provider_gives_it_now():
    from studio.identity import ProviderRoles, identity_of, is_lead

    person = identity_of({"iss": "https://idp.example", "sub": "s-1", "roles": ["desk_lead"]})
    meta = ["https://idp.example/.well-known/openid-configuration"]
    for answer, expected in (({"sub": "s-1", "groups": ["desk-lead"]}, True),
                             ({"sub": "s-1", "roles": []}, False),          # removed at the provider
                             ({"sub": "s-2", "roles": ["desk_lead"]}, False),  # another person's answer
                             (OSError("401 revoked"), False),                 # a revoked or expired token
                             (["not", "claims"], False)):
        fetch, calls = _provider(answer)
        roles = ProviderRoles(fetch=fetch)
        assert roles.lead_role(person, "at-1", meta) is expected, answer
        assert ("https://idp.example/userinfo", "at-1") in calls
        assert is_lead(person, [], role_now=lambda p, r=roles: r.lead_role(p, "at-1", meta)) is expected
    fetch, calls = _provider({"sub": "s-1", "roles": ["desk_lead"]})
    assert ProviderRoles(fetch=fetch).lead_role(person, None, meta) is False  # no access token: not confirmed
    wrong_issuer = identity_of({"iss": "https://evil.example", "sub": "s-1", "roles": ["desk_lead"]})
    assert ProviderRoles(fetch=fetch).lead_role(wrong_issuer, "at-1", meta) is False  # no provider of that issuer
