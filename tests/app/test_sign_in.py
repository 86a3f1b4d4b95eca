"""Sign-in (Streamlit's [auth] secrets): unsigned visitors see only the sign-in; the signed-in e-mail is the
owner; desk leads may stop others' jobs and read the audit; without [auth] nothing changes."""

from __future__ import annotations

import threading

import pytest
from streamlit.testing.v1 import AppTest

from studio.jobs import JobRegistry, may_control
from tests.app.apptest_utils import APP, texts
from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError
from tradingagents.storage import read_audit, record_audit

AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32,
        "client_id": "studio", "client_secret": "secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


ISS = "http://127.0.0.1:9"


def _user(sub: str, email: str | None = None, verified: object = True, **more: object) -> dict:
    """The claims of a signed-in user as the provider's ID token gives them (issuer, subject, e-mail)."""
    out = {"is_logged_in": True, "iss": ISS, "sub": sub, "iat": 2_000_000_000, **more}
    if email is not None:
        out.update(email=email, email_verified=verified)
    return out


def _app(user: dict | None, *, auth: bool = True) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    if auth:
        at.secrets["auth"] = AUTH
    if user is not None:
        at.user = user
    at.run()
    return at


def test_without_auth_secrets_there_is_no_sign_in_and_no_identity(ta_home):
    at = _app({"email": "test@example.com"}, auth=False)
    assert not at.exception
    assert "Sign in" not in [b.label for b in at.button]
    assert "Signed in as" not in texts(at)
    assert at.title[0].value == "Run an analysis"  # the app as today: the Run page, no sign-in


def test_an_unsigned_visitor_sees_only_the_sign_in(ta_home):
    at = _app({"is_logged_in": False})
    assert not at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert "requires sign-in" in texts(at)
    assert not at.sidebar.selectbox  # no settings, no pages


def test_a_signed_in_user_is_named_in_the_sidebar_and_the_sign_in_is_audited(ta_home):
    at = _app(_user("ann-1", "ann@desk.example", name="Ann"))
    assert not at.exception
    assert "Signed in as **ann@desk.example**" in texts(at)
    assert "Sign out" in [b.label for b in at.sidebar.button]
    at.run()  # a rerun of the same session records the sign-in once
    _app(_user("ann-1", "ann@desk.example", name="Ann"))  # and so does another page load with the same sign-in
    entries = [e for e in read_audit(resolve_config()) if e["action"] == "sign_in"]
    assert [e["by"] for e in entries] == ["ann@desk.example"]
    _app(_user("ann-1", "ann@desk.example", iat=2_000_000_001))  # a new sign-in is a new entry
    assert len([e for e in read_audit(resolve_config()) if e["action"] == "sign_in"]) == 2


def test_the_audit_page_is_for_desk_leads_only(ta_home, monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_DESK_LEADS", "lead@desk.example")
    record_audit(resolve_config(), "job_start", by="ann@desk.example", target="run NVDA 2024-05-10 (abc)")
    lead = _app(_user("lead-1", "lead@desk.example"))
    assert "desk lead" in texts(lead)
    lead.switch_page("pages/audit.py").run()
    assert not lead.exception
    assert lead.title[0].value == "Audit"
    assert "ann@desk.example" in lead.dataframe[0].value.to_csv()
    other = _app(_user("ann-1", "ann@desk.example"))
    assert "desk lead" not in texts(other)
    with pytest.raises(ValueError, match="Known pages"):  # not in the navigation of anyone else
        other.switch_page("pages/audit.py")


def test_the_audit_page_filters_by_who_and_what(ta_home, monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_DESK_LEADS", "lead@desk.example")
    cfg = resolve_config()
    record_audit(cfg, "job_start", by="ann@desk.example", target="run NVDA 2024-05-10 (a)", run_id="a")
    record_audit(cfg, "job_stop", by="bob@desk.example", target="run NVDA 2024-05-10 (a)")
    record_audit(cfg, "settle", by="ann@desk.example", target="NVDA 2024-05-10")
    lead = _app(_user("lead-1", "lead@desk.example"))
    lead.switch_page("pages/audit.py").run()
    assert not lead.exception
    table = lead.dataframe[0].value
    assert list(table.columns) == ["when", "by", "action", "target", "detail"]
    assert list(table["action"]) == ["job_start", "job_stop", "settle", "sign_in"]
    assert list(table["detail"])[0] == '{"run_id": "a"}' and list(table["detail"])[1] == ""
    lead.multiselect(key="audit_users").select("ann@desk.example").run()
    table = lead.dataframe[0].value
    assert list(zip(table["by"], table["action"], strict=True)) == [("ann@desk.example", "job_start"),
                                                                   ("ann@desk.example", "settle")]
    assert "**2** of 4 entries" in texts(lead)
    lead.multiselect(key="audit_actions").select("settle").run()
    assert list(lead.dataframe[0].value["target"]) == ["NVDA 2024-05-10"]
    lead.multiselect(key="audit_users").unselect("ann@desk.example").select("bob@desk.example").run()
    assert not lead.dataframe and "**0** of 4 entries" in texts(lead)


@pytest.mark.parametrize("claims", [
    _user("mallory", "LEAD@desk.example"),                      # verified, another case
    _user("mallory", "lead@desk.example\u00a0", verified=False),  # a trailing no-break space, unverified
    _user("mallory", "lead@desk.example", verified=False),       # the very address, unverified
    _user("mallory", "lead@desk.example\u00a0"),                 # a trailing no-break space, "verified"
    {"is_logged_in": True, "email": "lead@desk.example", "email_verified": True},  # no subject at all
])
def test_a_forged_e_mail_is_not_the_lead(ta_home, monkeypatch, claims):
    monkeypatch.setenv("TRADINGAGENTS_DESK_LEADS", "lead@desk.example")
    at = _app(claims)
    assert not at.exception
    assert "desk lead" not in texts(at)
    assert "Signed in as **lead@desk.example**" not in texts(at)
    with pytest.raises(ValueError, match="Known pages"):
        at.switch_page("pages/audit.py")
    assert all(e["by"] != "lead@desk.example" for e in read_audit(resolve_config()))


def test_a_lead_role_taken_away_at_the_provider_ends_at_the_next_page_load(ta_home, monkeypatch):
    """Issue 41, point 6: the role claim sat in the session's ID token until the next sign-in. It is now
    asked of the provider's userinfo endpoint (the session's access token) on every page load."""
    import types

    from studio import identity

    clock = [1000.0]
    monkeypatch.setattr(identity, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    now = {"roles": ["desk_lead"]}
    asked: list[str | None] = []

    def provider(url, token=None, timeout=None):
        if url.endswith("openid-configuration"):
            return {"issuer": ISS, "userinfo_endpoint": ISS + "/userinfo"}
        asked.append(token)
        return {"sub": "lead-1", **now}

    monkeypatch.setattr(identity, "_get_json", provider)
    claims = _user("lead-1", "lead@desk.example", roles=["desk_lead"], tokens={"access": "at-1"})
    at = _app(claims)
    assert "desk lead" in texts(at)
    assert asked and set(asked) == {"at-1"}
    at.switch_page("pages/audit.py").run()
    assert at.title[0].value == "Audit"
    now["roles"] = []  # removed at the provider; the same cookie, the same ID token
    clock[0] += 2.5  # past the few seconds a page's reruns share one answer
    at.switch_page("pages/history.py").run()
    assert "desk lead" not in texts(at)
    assert "Your desk-lead role is not confirmed by the sign-in provider now" in texts(at)
    with pytest.raises(ValueError, match="Known pages"):
        at.switch_page("pages/audit.py")
    no_token = _app(_user("lead-2", "lead@desk.example", roles=["desk_lead"]))  # no access token: no role
    assert "desk lead" not in texts(no_token)


def test_a_signed_out_token_signs_nobody_in(ta_home):
    at = _app(_user("ann-1", "ann@desk.example", iat=1_000))
    assert "Signed in as **ann@desk.example**" in texts(at)
    from studio.identity import identity_of
    from studio.ui import access
    access._remember_sign_out(identity_of(_user("ann-1", "ann@desk.example")))  # as the Sign out button does
    at.run()  # the same cookie (issued before the sign-out) again
    assert [b.label for b in at.button] == ["Sign in"]
    again = _app(_user("ann-1", "ann@desk.example", iat=4_000_000_000))  # a sign-in after it works
    assert "Signed in as **ann@desk.example**" in texts(again)


def test_desk_leads_config_is_checked_and_lower_cased(ta_home, monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_DESK_LEADS", " Lead@Desk.example ,b@desk.example,lead@desk.example")
    assert resolve_config()["desk_leads"] == ["lead@desk.example", "b@desk.example"]
    with pytest.raises(ConfigError, match="desk_leads"):
        resolve_config({"desk_leads": ["not an address"]})


def test_the_registry_tells_every_start_and_stop_granted_or_refused(ta_home):
    told: list[tuple[str, str | None, bool]] = []
    gate = threading.Event()

    class Graph:
        def __init__(self, **kw):
            pass

        def propagate(self, *a, should_stop=None, **kw):
            gate.wait(300)
            from tradingagents.errors import RunStopped
            raise RunStopped("stopped")

    reg = JobRegistry(graph_factory=lambda **kw: Graph(**kw), is_desk_lead=lambda w: w == "lead@x.example",
                      on_action=lambda a, job, who, done: told.append((a, who, done)))
    run_id = reg.start_run("NVDA", "2024-05-10", ["market"], {"llm_provider": "offline"}, owner="ann@x.example")
    assert not reg.stop(run_id, owner="bob@x.example")
    assert reg.stop(run_id, owner="lead@x.example")
    gate.set()
    reg.wait(run_id, 300)
    assert told == [("job_start", "ann@x.example", True), ("job_stop", "bob@x.example", False),
                    ("job_stop", "lead@x.example", True)]
    assert may_control("ann@x.example", "lead@x.example", lambda w: w == "lead@x.example")


@pytest.mark.parametrize("user", [None, _user("ann-1", "ann@desk.example", name="Ann")],
                         ids=["no sign-in", "signed in"])
def test_every_form_starts_from_the_servers_settings(ta_home, monkeypatch, user):
    """The settings a server is started with are the defaults every user's Run page shows (issues 39, 40)."""
    for key, value in {"LLM_PROVIDER": "openai", "MAX_DEBATE_ROUNDS": "2", "MAX_RISK_DISCUSS_ROUNDS": "3",
                       "SELECTED_ANALYSTS": "market,news", "DATA_VENDOR": "csv"}.items():
        monkeypatch.setenv(f"TRADINGAGENTS_{key}", value)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-servers-environment")
    at = _app(user, auth=user is not None)
    assert not at.exception
    assert at.sidebar.selectbox(key="set_provider").value == "openai"
    assert at.sidebar.selectbox(key="set_vendor").value == "csv"
    assert at.number_input(key="form_debate").value == 2 and at.number_input(key="form_risk").value == 3
    assert at.multiselect(key="form_analysts").value == ["market", "news"]


def test_the_audit_page_shows_whether_the_chain_holds_and_exports_inert_cells(ta_home, monkeypatch):
    import json

    from studio.export import audit_csv

    monkeypatch.setenv("TRADINGAGENTS_DESK_LEADS", "lead@desk.example")
    cfg = resolve_config()
    record_audit(cfg, "sign_in", by='=HYPERLINK("http://evil.example","x")', target="a\u2028b")
    record_audit(cfg, "job_start", by="ann@desk.example", target="run NVDA 2024-05-10 (abc)")
    lead = _app(_user("lead-1", "lead@desk.example"))
    lead.switch_page("pages/audit.py").run()
    assert not lead.exception
    assert "The chain verifies: 3 entries" in texts(lead)  # with the lead's own sign-in
    table = lead.dataframe[0].value.to_csv()
    assert "a\u2028b" in table  # the entry with a line separator is listed, not dropped
    export = lead.get("download_button")[0].proto  # made on the click: nothing at a /media/ URL before it
    assert export.deferred_file_id and not export.url
    rows = audit_csv([{"when": "x", "by": '=HYPERLINK("http://evil.example","x")', "action": "sign_in",
                       "target": "-2+3", "detail": "@SUM(1)"}])
    assert "'=HYPERLINK" in rows and "'-2+3" in rows and "'@SUM" in rows
    # a row changed behind the app's back: the page says where the chain breaks
    path = cfg["audit_path"]
    lines = open(path, encoding="ascii").read().split("\n")
    doc = json.loads(lines[1])
    doc["by"] = "bob@desk.example"
    lines[1] = json.dumps(doc)
    open(path, "w", encoding="ascii").write("\n".join(lines))
    lead.run()
    assert "The chain is broken at entry 2 of 3" in texts(lead)
    from tradingagents.i18n import translator
    from tradingagents.storage import verify_audit
    from tradingagents.storage.audit import BREAKS

    reason = BREAKS[verify_audit(cfg).reason]
    assert f"of 3: {reason}." in texts(lead)
    lead.query_params["lang"] = "zh"  # the reason in the reader's language too, not English in a 中文 sentence
    lead.run()
    zh = translator("zh")(reason)
    assert zh != reason and f"哈希链在第 2 条（共 3 条）处断开：{zh}。" in texts(lead)
    assert reason not in texts(lead)


def test_only_a_desk_lead_edits_the_roles_memories(ta_home, monkeypatch):
    """Issue 41, point 7: any signed-in user could add lessons to or clear any role's memory."""
    from tests.app.apptest_utils import form_button
    from tradingagents.agents.utils.memory import FinancialSituationMemory

    monkeypatch.setenv("TRADINGAGENTS_DESK_LEADS", "lead@desk.example")
    cfg = resolve_config()
    FinancialSituationMemory("trader_memory", cfg).add_situations([("rates rising", "trim duration")])
    ann = _app(_user("ann-1", "ann@desk.example"))
    ann.switch_page("pages/memories.py").run()
    ann.selectbox(key="mem_role").set_value("trader_memory").run()
    assert "Only a desk lead can add, retire, restore or clear lessons" in texts(ann)
    assert form_button(ann, "Add to memory").disabled and form_button(ann, "Clear this role's memory").disabled
    assert ann.button(key="mem_retire").disabled
    from tradingagents.errors import NotAllowed
    from tradingagents.storage import edit_role_memory

    with pytest.raises(NotAllowed):  # the storage refuses it too, whatever a page does
        edit_role_memory(FinancialSituationMemory("trader_memory", cfg), who="ann", lead=False)
    lead = _app(_user("lead-1", "lead@desk.example"))
    lead.switch_page("pages/memories.py").run()
    lead.selectbox(key="mem_role").set_value("trader_memory").run()
    form_button(lead, "Clear this role's memory").click().run()
    form_button(lead, "Yes, clear it").click().run()
    assert len(FinancialSituationMemory("trader_memory", cfg)) == 0
    assert [e["by"] for e in read_audit(cfg) if e["action"] == "memory_retire"] == ["lead@desk.example"]
