"""The sidebar's provider choice reaches the native Anthropic client: its key from the session, its URL."""

from __future__ import annotations

import datetime as dt

from studio.ui import KEY_API
from tests.app.apptest_utils import new_app, run_until, start_offline_run
from tests.fake_native import FakeAnthropicServer

KEY = "sk-ant-sidebar-SECRET-777"


def _rating_shown(at) -> bool:
    return any('data-rating="' in h.value for h in at.html)


def test_sidebar_anthropic_run_uses_the_session_key(ta_home, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with FakeAnthropicServer(rating="Underweight") as server:
        at = new_app("run")
        at.selectbox(key="set_provider").set_value("anthropic").run()
        assert any("ANTHROPIC_API_KEY" in c.value for c in at.sidebar.caption)
        at.text_input(key="set_base_url").input(server.base_url)
        at.text_input(key=KEY_API).input(KEY)
        at.run()
        start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
        run_until(at, _rating_shown, timeout=120)
        assert 'data-rating="Underweight"' in "".join(h.value for h in at.html)
    # the session's key is what the SDK sent (anthropic 2.x sends it as a bearer token)
    assert server.requests and {h.get("x-api-key") or h.get("authorization") for h in server.headers} in (
        {KEY}, {f"Bearer {KEY}"})
    assert {r["model"] for r in server.requests} == {"claude-haiku-4-5", "claude-sonnet-4-5"}
    for path in (p for p in ta_home.rglob("*") if p.is_file()):
        assert KEY.encode() not in path.read_bytes(), f"the API key leaked into {path}"
