"""Sign-in through a real OpenID Connect provider on 127.0.0.1 (oidc-provider-mock), driven in Chromium.

Two portfolio managers and a desk lead sign in through the provider's login form. Ann's run is held
mid-analysis by the fake model server (a gate, never a sleep): Bob watches it with no Stop button; the
lead stops it; the audit page, read by the lead, lists every sign-in, the start and the stop with
their users. The app's own ``.streamlit/`` folder is never written: the secrets are a temporary file
passed with ``--secrets.files``.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.request

import authlib  # noqa: F401 - st.login needs it; a pinned requirement: missing, this fails (never skips)
from playwright.sync_api import expect

from tests.browser.harness import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    HANG_MS,
    ROOT,
    app_stop_buttons,
    fill_run_form,
    free_port,
    start_run,
    streamlit_server,
    wait_idle,
)

TICKER, DATE = "NVDA", "2024-05-10"
ANN, BOB, LEAD = "ann@desk.example", "bob@desk.example", "lead@desk.example"


def _reports_text(body: dict) -> bool:
    """A streamed request that writes the Market Analyst's report: its fetched prices in its prompt (prefetch),
    or answered by its tools (the analysts' tool loop, the default)."""
    messages = body.get("messages") or []
    system = str((messages or [{}])[0].get("content") or "")
    answered = any(m.get("role") == "tool" and "Stock data for" in str(m.get("content")) for m in messages)
    return bool(body.get("stream")) and system.startswith("You are the Market Analyst") and (
        "<get_stock_data>" in system or answered)


def _set_claims(issuer: str, sub: str, claims: dict) -> None:
    """The provider's user API: the claims its ID tokens give ``sub`` (e-mail, whether it is verified)."""
    req = urllib.request.Request(f"{issuer}/users/{sub}", data=json.dumps(claims).encode(), method="PUT",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 204


def _sign_in(browser, url: str, issuer: str, sub: str, email: str | None = None, *, verified: bool = True,
             shown: str | None = None):
    """A new browser context (its own cookies) signed in as the provider's user ``sub`` whose e-mail claim
    is ``email`` (verified or not), through the provider's form; waits for the sidebar's name ``shown``."""
    if email is not None:
        _set_claims(issuer, sub, {"email": email, "email_verified": verified})
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(HANG_MS)
    page.goto(url + "/")
    page.get_by_role("button", name="Sign in").click()
    page.locator("input[name=sub]").last.fill(sub)  # the provider's login form
    page.get_by_role("button", name="Authorize").click()
    page.get_by_text(f"Signed in as {shown or email}").wait_for()
    wait_idle(page)
    return page


def test_two_users_and_a_lead_through_a_real_provider(ta_home, tmp_path):
    from oidc_provider_mock import run_server_in_thread
    from playwright.sync_api import sync_playwright

    from tests.fake_openai import FakeOpenAIServer, Fault

    secrets_before = sorted(p.name for p in (ROOT / ".streamlit").iterdir())
    port = free_port()
    app_url = f"http://127.0.0.1:{port}"
    gate = threading.Semaphore(0)
    llm = FakeOpenAIServer().start()
    try:
        llm.inject(Fault.hold_stream(2, gate=gate, when=_reports_text))
        with run_server_in_thread() as oidc:
            issuer = f"http://127.0.0.1:{oidc.server_port}"
            secrets = tmp_path / "secrets.toml"
            secrets.write_text(
                "[auth]\n"
                f'redirect_uri = "{app_url}/oauth2callback"\n'
                'cookie_secret = "a-test-cookie-secret-of-enough-length-0123456789"\n'
                'client_id = "tradingagents-studio"\n'
                'client_secret = "test-client-secret"\n'
                f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n', encoding="utf-8")
            env = {"TRADINGAGENTS_DESK_LEADS": LEAD, "TRADINGAGENTS_LLM_PROVIDER": "openai_compatible",
                   "TRADINGAGENTS_BACKEND_URL": llm.base_url, "TRADINGAGENTS_QUICK_THINK_LLM": "fake-quick",
                   "TRADINGAGENTS_DEEP_THINK_LLM": "fake-deep", "TRADINGAGENTS_LLM_TIMEOUT": "3600",
                   "OPENAI_API_KEY": "sk-test-not-a-real-key"}
            with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-sign-in.log", extra_env=env, port=port,
                                  extra_args=["--secrets.files", str(secrets)]) as url, sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
                try:
                    # an unsigned visitor sees the sign-in only, on every path
                    anon = browser.new_page()
                    anon.set_default_timeout(HANG_MS)
                    anon.goto(url + "/history")
                    anon.get_by_role("button", name="Sign in").wait_for()
                    wait_idle(anon)
                    assert anon.get_by_role("link", name="History").count() == 0
                    assert anon.get_by_text("Start analysis").count() == 0

                    ann = _sign_in(browser, url, issuer, "ann", ANN)
                    fill_run_form(ann, TICKER, DATE)
                    start_run(ann)
                    app_stop_buttons(ann).wait_for()  # the locator finds the app's own Stop
                    ann.wait_for_function("() => location.search.includes('run=')")
                    run_url = ann.url

                    bob = _sign_in(browser, url, issuer, "bob", BOB)
                    bob.goto(run_url)
                    bob.get_by_text(f"This run was started by {ANN}").wait_for()
                    assert app_stop_buttons(bob).count() == 0

                    # accounts whose e-mail claims only look like the lead's or Ann's: never them
                    for sub, email, verified in (("mallory", "LEAD@desk.example", True),
                                                 ("mallet", LEAD + "\u00a0", False),
                                                 ("trudy", "Ann@desk.example\u00a0", False),
                                                 ("eve", LEAD, False)):
                        forged = _sign_in(browser, url, issuer, sub, email, verified=verified,
                                          shown=email if verified else f"{sub} (no verified e-mail)")
                        assert forged.get_by_text("desk lead").count() == 0, sub
                        assert forged.get_by_role("link", name="Audit").count() == 0, sub
                        forged.goto(run_url)
                        forged.get_by_text(f"This run was started by {ANN}").wait_for()
                        assert app_stop_buttons(forged).count() == 0, sub
                        forged.goto(url + "/audit")
                        wait_idle(forged)
                        assert forged.get_by_role("heading", name="Audit").count() == 0, sub
                        forged.context.close()

                    lead = _sign_in(browser, url, issuer, "lead", LEAD)
                    lead.get_by_text("desk lead").first.wait_for()
                    lead.goto(run_url)
                    app_stop_buttons(lead).click()
                    lead.get_by_text("Stopping after the current step").first.wait_for()
                    for _ in range(8):
                        gate.release()  # let the held answer finish: the run stops at its next step
                    ann.get_by_text("stopped").first.wait_for()

                    lead.goto(url + "/audit")
                    lead.get_by_role("heading", name="Audit").wait_for()
                    wait_idle(lead)
                    with lead.expect_download() as dl:
                        lead.get_by_role("button", name="Export CSV").click()
                    rows = dl.value.path().read_text(encoding="utf-8")
                    for who, action in ((ANN, "sign_in"), (BOB, "sign_in"), (LEAD, "sign_in"),
                                        (ANN, "job_start"), (LEAD, "job_stop")):
                        assert any(f",{who},{action}," in line for line in rows.splitlines()), (who, action, rows)
                    assert f"run {TICKER} {DATE}" in rows
                    assert ",LEAD@desk.example,sign_in," in rows  # the verified other-case address, as itself
                    assert ",mallet (no verified e-mail),sign_in," in rows

                    bob.goto(url + "/audit")  # not in Bob's navigation: Streamlit shows its default page
                    wait_idle(bob)
                    assert bob.get_by_role("link", name="Audit").count() == 0
                    assert bob.get_by_role("heading", name="Audit").count() == 0
                finally:
                    browser.close()
    finally:
        for _ in range(16):
            gate.release()
        llm.stop()
    assert sorted(p.name for p in (ROOT / ".streamlit").iterdir()) == secrets_before  # no secrets file left


def test_a_sign_in_set_up_for_another_address_says_so_on_the_page(ta_home, tmp_path):
    """The README's sign-in block named localhost while the app prints 127.0.0.1: sign-in then returned to
    the Sign in screen with nothing said (the server logged "Missing provider for OAuth callback")."""
    from tests.browser.harness import chromium

    port = free_port()
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        "[auth]\n"
        f'redirect_uri = "http://localhost:{port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-of-enough-length-0123456789"\n'
        'client_id = "studio"\nclient_secret = "studio-secret"\n'
        'server_metadata_url = "http://127.0.0.1:9/.well-known/openid-configuration"\n', encoding="utf-8")
    with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-sign-in-origin.log", port=port,
                          extra_args=["--secrets.files", str(secrets)]) as url, chromium() as page:
        page.goto(url + "/")
        page.get_by_role("button", name="Sign in").wait_for()
        page.get_by_text("Sign-in cannot finish from this address").wait_for()
        shown = page.inner_text("body")
        assert f'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"' in shown
        assert f"http://localhost:{port}" in shown
        page.goto(f"http://localhost:{port}/")  # at the address the provider returns to: nothing to fix
        page.get_by_role("button", name="Sign in").wait_for()
        wait_idle(page)
        assert page.get_by_text("Sign-in cannot finish").count() == 0


def test_the_readmes_sign_in_block_works_as_written(ta_home, tmp_path):
    """The README's local sign-in block, pasted into bash (its two ports moved to free ones, its secrets file
    into a temporary folder), signs a user in through the real provider in Chromium."""
    import os
    import re
    import signal
    import subprocess
    import time

    from tests.browser.harness import _healthy, chromium

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(\.venv/bin/python -m oidc_provider_mock[^`]*)```", readme).group(1)
    app_port, oidc_port = free_port(), free_port()
    script = (block.replace("8501", str(app_port)).replace("9400", str(oidc_port))
              .replace("/tmp/studio-secrets.toml", str(tmp_path / "secrets.toml"))
              .replace("streamlit run app.py", f"streamlit run app.py --server.port {app_port} --server.headless true"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_")}
    env["TRADINGAGENTS_HOME"] = str(ta_home)
    with open(ARTIFACTS / "readme-sign-in.log", "wb") as log:
        proc = subprocess.Popen(["bash", "-c", script], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        url = f"http://127.0.0.1:{app_port}"
        deadline = time.monotonic() + HANG_MS / 1000
        while not _healthy(url):
            assert proc.poll() is None, (ARTIFACTS / "readme-sign-in.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the README's app did not start"
            time.sleep(0.2)
        with chromium() as page:
            page.goto(url + "/")
            page.get_by_role("button", name="Sign in").click()
            page.locator("input[name=sub]").last.fill(LEAD)
            page.get_by_role("button", name="Authorize").click()
            page.get_by_text(f"Signed in as {LEAD}").wait_for()
            page.get_by_text("desk lead").first.wait_for()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)


def test_sign_out_ends_a_copied_cookie_and_an_open_tab(ta_home, tmp_path):
    """Issue 41, point 6: sign-out did not end access (a captured cookie worked for 30 days, a tab opened
    before the sign-out stayed signed in). Both now land on the sign-in screen."""
    from oidc_provider_mock import run_server_in_thread
    from playwright.sync_api import sync_playwright

    port = free_port()
    app_url = f"http://127.0.0.1:{port}"
    with run_server_in_thread() as oidc:
        issuer = f"http://127.0.0.1:{oidc.server_port}"
        secrets = tmp_path / "secrets.toml"
        secrets.write_text(
            "[auth]\n"
            f'redirect_uri = "{app_url}/oauth2callback"\n'
            'cookie_secret = "a-test-cookie-secret-of-enough-length-0123456789"\n'
            'client_id = "tradingagents-studio"\n'
            'client_secret = "test-client-secret"\n'
            f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n', encoding="utf-8")
        with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-sign-out.log", port=port,
                              extra_args=["--secrets.files", str(secrets)]) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                ann = _sign_in(browser, url, issuer, "ann", ANN)
                other_tab = ann.context.new_page()  # a second tab of the same browser, open before the sign-out
                other_tab.set_default_timeout(HANG_MS)
                other_tab.goto(url + "/history")
                other_tab.get_by_text(f"Signed in as {ANN}").wait_for()
                stolen = browser.new_context()  # someone who copied the cookies
                stolen.add_cookies(ann.context.cookies())
                thief = stolen.new_page()
                thief.set_default_timeout(HANG_MS)
                thief.goto(url + "/history")
                thief.get_by_text(f"Signed in as {ANN}").wait_for()

                ann.get_by_role("button", name="Sign out").click()
                ann.get_by_role("button", name="End session").click()  # the provider's own sign-out page
                ann.get_by_role("button", name="Sign in").wait_for()

                thief.goto(url + "/history")  # the copied cookie, after the sign-out
                thief.get_by_role("button", name="Sign in").wait_for()
                wait_idle(thief)
                assert thief.get_by_text(f"Signed in as {ANN}").count() == 0
                other_tab.get_by_role("link", name="Memory log").click()  # the open tab's next step
                other_tab.get_by_role("button", name="Sign in").wait_for()

                again = _sign_in(browser, url, issuer, "ann", ANN)  # a new sign-in works at once
                assert again.get_by_text(f"Signed in as {ANN}").count() == 1
            finally:
                browser.close()


def test_a_lead_role_removed_at_the_provider_ends_at_the_next_page_load(ta_home, tmp_path):
    """Issue 41, point 6: a desk-lead role claim lived in the session's ID token, so a role removed at the
    provider kept working until the next sign-in. The app asks the provider's userinfo endpoint now."""
    import time

    from oidc_provider_mock import run_server_in_thread
    from playwright.sync_api import sync_playwright

    port = free_port()
    app_url = f"http://127.0.0.1:{port}"
    rita = "rita@desk.example"
    with run_server_in_thread() as oidc:
        issuer = f"http://127.0.0.1:{oidc.server_port}"
        secrets = tmp_path / "secrets.toml"
        secrets.write_text(
            "[auth]\n"
            f'redirect_uri = "{app_url}/oauth2callback"\n'
            'cookie_secret = "a-test-cookie-secret-of-enough-length-0123456789"\n'
            'client_id = "tradingagents-studio"\n'
            'client_secret = "test-client-secret"\n'
            'expose_tokens = "access"\n'
            f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n', encoding="utf-8")
        claims = {"email": rita, "email_verified": True}
        _set_claims(issuer, "rita", {**claims, "roles": ["desk_lead"]})
        with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-lead-role.log", port=port,
                              extra_args=["--secrets.files", str(secrets)]) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                page = _sign_in(browser, url, issuer, "rita", shown=rita)
                page.get_by_text("desk lead").first.wait_for()
                page.get_by_role("link", name="Audit").wait_for()

                _set_claims(issuer, "rita", claims)  # the role removed at the provider; the same cookie
                deadline = time.monotonic() + HANG_MS / 1000
                while True:  # the next page load past the few seconds one answer is kept
                    page.goto(url + "/history")
                    page.get_by_text(f"Signed in as {rita}").wait_for()
                    wait_idle(page)
                    if page.get_by_text("desk lead").count() == 0:
                        break
                    assert time.monotonic() < deadline, "the removed role still works"
                    page.wait_for_timeout(500)
                assert page.get_by_role("link", name="Audit").count() == 0
                page.goto(url + "/audit")
                wait_idle(page)
                assert page.get_by_role("heading", name="Audit").count() == 0
            finally:
                browser.close()


def test_a_users_own_address_never_gets_the_desks_key_and_a_colleagues_link_leaves_the_sidebar(ta_home, tmp_path):
    """Issue 41, points 2 and 3, through the real provider in Chromium: a signed-in user who points the
    sidebar's Base URL at a server of theirs with no key of their own is refused before anything is sent
    (the desk's key never reaches it); with their own key the run goes there with that key; a colleague
    opening that run's link keeps the desk's address, and their next run goes to the desk with its key."""
    from oidc_provider_mock import run_server_in_thread
    from playwright.sync_api import sync_playwright

    from tests.fake_openai import FakeOpenAIServer

    desk_key, own_key = "sk-desk-key-from-the-environment-1111", "sk-anns-own-key-2222"
    port = free_port()
    app_url = f"http://127.0.0.1:{port}"
    with FakeOpenAIServer() as desk_llm, FakeOpenAIServer() as other, run_server_in_thread() as oidc:
        issuer = f"http://127.0.0.1:{oidc.server_port}"
        secrets = tmp_path / "secrets.toml"
        secrets.write_text(
            "[auth]\n"
            f'redirect_uri = "{app_url}/oauth2callback"\n'
            'cookie_secret = "a-test-cookie-secret-of-enough-length-0123456789"\n'
            'client_id = "tradingagents-studio"\n'
            'client_secret = "test-client-secret"\n'
            f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n', encoding="utf-8")
        env = {"TRADINGAGENTS_LLM_PROVIDER": "openai_compatible", "TRADINGAGENTS_BACKEND_URL": desk_llm.base_url,
               "TRADINGAGENTS_QUICK_THINK_LLM": "fake-quick", "TRADINGAGENTS_DEEP_THINK_LLM": "fake-deep",
               "OPENAI_COMPATIBLE_API_KEY": desk_key, "TRADINGAGENTS_MAX_DEBATE_ROUNDS": "1"}
        with streamlit_server(ta_home, log_path=ARTIFACTS / "browser-key-destination.log", extra_env=env, port=port,
                              extra_args=["--secrets.files", str(secrets)]) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            try:
                ann = _sign_in(browser, url, issuer, "ann", ANN)
                ann.get_by_label("Base URL", exact=True).fill(other.base_url)
                ann.get_by_label("Base URL", exact=True).press("Enter")
                wait_idle(ann)
                fill_run_form(ann, TICKER, DATE)
                start_run(ann)
                ann.get_by_text("type your own key").first.wait_for()
                assert other.chat_requests == [] and desk_llm.chat_requests == []  # nothing sent anywhere

                ann.get_by_label("API key", exact=True).fill(own_key)
                ann.get_by_label("API key", exact=True).press("Enter")
                wait_idle(ann)
                start_run(ann)
                ann.get_by_text("Portfolio Manager").first.wait_for()
                ann.wait_for_function("() => location.search.includes('run=')")
                # the run has ended once its state marker is drawn (the Stop button may not be drawn yet when the
                # address already names the run: its absence alone says nothing)
                ann.locator("span.ta-run-state").wait_for(state="attached")
                run_url = ann.url
                assert other.chat_requests and desk_llm.chat_requests == []
                assert {h.get("authorization") for h in other.headers} == {f"Bearer {own_key}"}

                bob = _sign_in(browser, url, issuer, "bob", BOB)
                bob.goto(run_url)
                bob.locator("[data-rating]").first.wait_for()  # Ann's finished run, opened from her link
                wait_idle(bob)
                # the link filled no provider field: Bob's Base URL is the desk's, as the server set it
                # (a new browser mounts the sidebar's fields after the page's own content, once their code has
                # loaded: the field is waited for until it holds its value, not read the moment it exists)
                expect(bob.get_by_label("Base URL", exact=True)).to_have_value(
                    re.compile(re.escape(desk_llm.base_url.rstrip("/")) + "/?$"), timeout=HANG_MS)
                before = len(other.chat_requests)
                bob.goto(url + "/")
                wait_idle(bob)
                fill_run_form(bob, "AAPL", DATE)
                start_run(bob)
                bob.wait_for_function("() => location.search.includes('run=')")
                # the run has ended once its state marker is drawn (the Stop button may not be drawn yet when the
                # address already names the run: its absence alone says nothing)
                bob.locator("span.ta-run-state").wait_for(state="attached")
                assert len(other.chat_requests) == before and desk_llm.chat_requests
                assert {h.get("authorization") for h in desk_llm.headers} == {f"Bearer {desk_key}"}
                assert all(own_key not in str(h) for h in desk_llm.headers)
            finally:
                browser.close()
