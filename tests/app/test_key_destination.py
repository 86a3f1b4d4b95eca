"""The server's keys go only to the server's addresses (issue 41, point 2): a Base URL a user typed
needs the user's own key. Two fake OpenAI servers: the desk's (named by the environment) and another
one a user points the sidebar at; the other one must never see the desk's key."""

from __future__ import annotations

import datetime as dt

import pytest

from studio.jobs import JobRegistry
from studio.ui import KEY_API
from tests.app.apptest_utils import form_button, new_app, run_until, start_offline_run, texts
from tests.fake_openai import FakeOpenAIServer
from tradingagents.errors import LLMConfigError
from tradingagents.llm_clients.factory import check_key_destination

DESK_KEY = "sk-desk-key-from-the-environment-1111"
OWN_KEY = "sk-users-own-key-2222"


@pytest.fixture
def desk(monkeypatch):
    with FakeOpenAIServer() as desk_llm, FakeOpenAIServer() as other:
        monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", DESK_KEY)
        monkeypatch.setenv("TRADINGAGENTS_LLM_PROVIDER", "openai_compatible")
        monkeypatch.setenv("TRADINGAGENTS_BACKEND_URL", desk_llm.base_url)
        monkeypatch.setenv("TRADINGAGENTS_QUICK_THINK_LLM", "fake-quick")
        monkeypatch.setenv("TRADINGAGENTS_DEEP_THINK_LLM", "fake-deep")
        yield desk_llm, other


def test_the_environment_key_goes_only_where_the_environment_points(ta_home, desk):
    desk_llm, other = desk
    check_key_destination({})  # the desk's own address
    check_key_destination({"backend_url": desk_llm.base_url + "/"})
    with pytest.raises(LLMConfigError, match="type your own API key") as info:
        check_key_destination({"backend_url": other.base_url})
    assert info.value.key == "api_key" and DESK_KEY not in str(info.value)
    check_key_destination({"backend_url": other.base_url}, api_key=OWN_KEY)
    check_key_destination({"llm_provider": "offline", "backend_url": other.base_url})


def test_the_registry_refuses_every_start_and_resume_that_would_send_it_elsewhere(ta_home, desk):
    desk_llm, other = desk
    keys: list = []

    class Stops:
        def propagate(self, ticker, date, *, on_event, should_stop):
            from studio.runs import RunEvent
            from tradingagents import team
            on_event(RunEvent(kind="run_started", data={"plan": team.plan(["market"])}))
            on_event(RunEvent(kind="run_stopped", data={"resumable": True, "record": {}}))
            return {}, None

    def factory(*, selected_analysts, config, api_key):
        keys.append((config["backend_url"], api_key))
        return Stops()

    reg = JobRegistry(graph_factory=factory, guard_keys=True)
    elsewhere = {"backend_url": other.base_url}
    with pytest.raises(LLMConfigError):
        reg.start_run("NVDA", "2024-05-10", ["market"], elsewhere, owner="ann")
    with pytest.raises(LLMConfigError):
        reg.start_batch(["NVDA"], "2024-05-10", elsewhere, owner="ann")
    run_id = reg.start_run("NVDA", "2024-05-10", ["market"], {}, owner="ann")  # the desk's address: fine
    reg.wait(run_id, 60)
    with pytest.raises(LLMConfigError):  # resumed with the sidebar pointing elsewhere, no key of hers
        reg.resume(run_id, owner="ann", config=elsewhere)
    assert reg.resume(run_id, owner="ann", config=elsewhere, api_key=OWN_KEY)
    reg.wait(run_id, 60)
    assert keys == [(desk_llm.base_url, None), (other.base_url, OWN_KEY)]
    assert other.chat_requests == []


def test_the_run_page_says_what_to_do_and_nothing_reaches_the_other_server(ta_home, desk):
    desk_llm, other = desk
    at = new_app("run")
    assert at.selectbox(key="set_provider").value == "openai_compatible"
    at.text_input(key="set_base_url").set_value(other.base_url).run()
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    assert "sent only to the address this app is set up with" in texts(at)
    assert "type your own key" in texts(at)
    assert other.chat_requests == [] and desk_llm.chat_requests == []
    at.text_input(key=KEY_API).set_value(OWN_KEY).run()  # with her own key, her server is hers to use
    form_button(at, "Start analysis").click()
    run_until(at, lambda a: any('data-rating="' in h.value for h in a.html), timeout=120)
    assert other.chat_requests
    assert {h.get("authorization") for h in other.headers} == {f"Bearer {OWN_KEY}"}


def test_a_colleagues_run_link_leaves_the_model_settings_alone(ta_home, desk):
    """Issue 41, point 3: opening a colleague's ?run= link used to copy their Base URL into the sidebar,
    and the next run sent one's own key to their server."""
    from streamlit.testing.v1 import AppTest

    from studio.ui import get_registry
    from tests.app.apptest_utils import APP

    desk_llm, other = desk
    reg = get_registry()
    theirs = reg.start_run("MSFT", "2024-05-10", ["market"], {"backend_url": other.base_url},
                           api_key="sk-colleague-3333", owner="colleague · 0123456789")
    assert reg.wait(theirs, 120).status == "finished"
    before = len(other.chat_requests)
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["run"] = theirs
    at.run()
    assert at.text_input(key="set_base_url").value == desk_llm.base_url  # the server's, not the link's
    at.text_input(key=KEY_API).set_value(OWN_KEY).run()
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    run_until(at, lambda a: any('data-rating="' in h.value for h in a.html) and "NVDA" in texts(a), timeout=120)
    assert len(other.chat_requests) == before  # nothing of this session went to the colleague's server
    assert {h.get("authorization") for h in desk_llm.headers} == {f"Bearer {OWN_KEY}"}


def test_asking_a_run_on_another_address_needs_the_askers_own_key(ta_home, desk):
    """A run made against a user's own server (with their key) is asked from the app by someone without a key:
    the desk's key must not go there (the Ask box and a running job's ask are the app's, like a run)."""
    from tradingagents import storage
    from tradingagents.ask import ask
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    desk_llm, other = desk
    TradingAgentsGraph(["market"], config={"backend_url": other.base_url}, api_key=OWN_KEY).propagate(
        "NVDA", "2024-05-10")
    before = len(other.requests)
    with pytest.raises(LLMConfigError, match="type your own API key"):
        ask({}, "NVDA", "2024-05-10", "bear", "Why?", shared=True)
    assert len(other.requests) == before and not storage.load_run({}, "NVDA", "2024-05-10")["meta"].get("questions")
    item = ask({}, "NVDA", "2024-05-10", "bear", "Why?", shared=True, api_key=OWN_KEY)  # their own key: fine
    assert item["answer"] and len(other.requests) == before + 1
    seen = {h.get("authorization") for h in other.headers}
    assert seen == {f"Bearer {OWN_KEY}"}, seen  # the desk's key never reached the user's server
