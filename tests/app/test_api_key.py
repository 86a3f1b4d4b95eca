"""Issue 6: an API key typed in the sidebar is used for the calls but never written anywhere."""

from __future__ import annotations

import datetime as dt
import logging

from studio.ui import KEY_API
from tests.app.apptest_utils import new_app, run_until, start_offline_run
from tests.fake_openai import FakeOpenAIServer

KEY = "sk-sidebar-TOPSECRET-4242424242"


def _rating_shown(at) -> bool:
    return any('data-rating="' in h.value for h in at.html)


def test_sidebar_api_key_reaches_the_server_but_no_file_or_log(ta_home, caplog):
    caplog.set_level(logging.DEBUG)
    with FakeOpenAIServer(rating="Overweight") as server:
        at = new_app("run")
        at.selectbox(key="set_provider").set_value("openai_compatible").run()
        at.text_input(key="set_base_url").input(server.base_url)
        at.text_input(key="set_quick").input("fake-quick")
        at.text_input(key="set_deep").input("fake-deep")
        at.text_input(key=KEY_API).input(KEY)
        at.run()
        sidebar = "\n".join(h.value for h in at.sidebar.html)
        assert "offline engine" not in sidebar and "OpenAI-compatible server at " in sidebar
        start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
        run_until(at, _rating_shown, timeout=120)
        assert 'data-rating="Overweight"' in "".join(h.value for h in at.html)
        # the key was really used: it is the bearer token of the requests the engine made
        auth = {h.get("authorization") for h in server.headers}
        assert auth == {f"Bearer {KEY}"}
        # settle through the same session (the key again comes from the session only)
        at.switch_page("pages/memory_log.py").run()
    files = [p for p in ta_home.rglob("*") if p.is_file()]
    assert any(p.name == "state.json" for p in files)
    for path in files:
        assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"
    assert KEY not in caplog.text
    assert KEY not in "".join(str(v) for v in at.query_params.values())
