"""The Run page (AppTest, real engine): errors in the sidebar's words, refresh, stop, owners, several
dates at once, resume after a restart, onboarding, output language, links to saved runs and prefill."""

from __future__ import annotations

import datetime as dt
import json
import logging

import pytest
from streamlit.testing.v1 import AppTest

from studio.run_view import PRESENTER_PACE_S
from studio.ui import KEY_API, get_registry
from tests.app.apptest_utils import APP, form_button, new_app, run_until, start_offline_run, texts
from tests.browser.harness import free_port
from tests.fake_openai import FakeOpenAIServer
from tradingagents import team
from tradingagents.config import resolve_config
from tradingagents.dataflows.demo_identities import EXAMPLE_CASE


@pytest.fixture(autouse=True)
def _fresh_server_memory():
    """Each test starts like a fresh server: no run in the registry."""
    get_registry.clear()
    yield


def _rating_shown(at) -> bool:
    return any('data-rating="' in h.value for h in at.html)


def _use_server(at, url: str, provider: str = "openai_compatible"):
    at.selectbox(key="set_provider").set_value(provider).run()
    at.text_input(key="set_base_url").input(url)
    return at.run()


def _opened(run_id: str | None = None, **params) -> AppTest:
    """Another browser (a new session) opening the Run page with these URL parameters."""
    at = AppTest.from_file(APP, default_timeout=300)
    if run_id:
        at.query_params["run"] = run_id
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def test_a_missing_key_speaks_the_sidebars_language_and_offers_no_resume(ta_home):
    at = new_app("run")
    at.selectbox(key="set_provider").set_value("openai").run()
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    errors = " ".join(e.value for e in at.error)
    assert "sidebar's **API key** field" in errors and "OPENAI_API_KEY" in errors
    assert "Error" not in errors.replace("error", "") and "Traceback" not in errors  # no class name
    assert "resum" not in errors.lower()
    assert not [b for b in at.button if "Resume" in str(b.label)]
    assert get_registry().list() == [] and "run" not in at.query_params


def test_a_refused_ollama_connection_is_a_sentence_without_tracebacks(ta_home, caplog, capfd):
    caplog.set_level(logging.INFO)
    at = new_app("run")
    _use_server(at, f"http://127.0.0.1:{free_port()}/v1", provider="ollama")
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    run_until(at, lambda a: any("The run failed" in e.value for e in a.error), timeout=90)
    shown = " ".join(e.value for e in at.error)
    assert "is the server running?" in shown and "llama3.1" in shown
    assert "LLMCallError" not in texts(at) and "Traceback" not in texts(at)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err and "Traceback" not in caplog.text


def test_ollama_blank_models_mean_the_presets_default_and_its_help_is_shown(ta_home):
    at = new_app("run")
    at.selectbox(key="set_provider").set_value("ollama").run()
    from tradingagents.llm_presets import PROVIDER_PRESETS

    assert at.text_input(key="set_quick").value == "" and at.text_input(key="set_deep").value == ""
    assert PROVIDER_PRESETS["ollama"]["help"] in [c.value for c in at.sidebar.caption]
    assert "llama3.1" in "\n".join(h.value for h in at.sidebar.html)  # the badge names the preset's model
    at.text_input(key="set_quick").input("qwen2.5").run()
    html_ = "\n".join(h.value for h in at.sidebar.html)
    assert "qwen2.5 / llama3.1" in html_


def test_output_language_reaches_the_run_and_the_offline_engine_offers_what_it_writes(ta_home):
    at = new_app("run")
    # the offline engine writes English and Chinese itself: those two are offered, the field is live
    assert at.selectbox(key="set_language").options == ["English", "Chinese"]
    assert not at.selectbox(key="set_language").disabled
    with FakeOpenAIServer() as server:
        _use_server(at, server.base_url)
        at.selectbox(key="set_language").set_value("Japanese").run()
        start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
        handle = get_registry().get(at.query_params["run"])
        assert handle.config["output_language"] == "Japanese"
        assert handle.wait(120)


def test_refresh_restores_the_runs_settings_and_stop_answers_at_once(ta_home):
    with FakeOpenAIServer(latency_s=0.3) as server:
        at = new_app("run")
        _use_server(at, server.base_url)
        at.text_input(key="set_quick").input("fake-quick").run()
        start_offline_run(at, "AMD", dt.date(2024, 5, 10), analysts=["market"])
        run_id = at.query_params["run"]
        handle = get_registry().get(run_id)
        # a refresh: a new session of the same browser with the run in the URL shows the run's settings
        refreshed = AppTest.from_file(APP, default_timeout=300)
        refreshed.session_state["_browser_id"] = at.session_state["_browser_id"]  # (the cookie, in a browser)
        refreshed.query_params["run"] = run_id
        refreshed.run()
        assert refreshed.selectbox(key="set_provider").value == "openai_compatible"
        assert refreshed.text_input(key="set_base_url").value == server.base_url
        assert refreshed.text_input(key="set_quick").value == "fake-quick"
        assert refreshed.text_input(key="set_deep").value == ""  # the preset's default, as the run uses
        sidebar = "\n".join(h.value for h in refreshed.sidebar.html)
        assert "offline engine" not in sidebar and "fake-quick" in sidebar
        # another browser opening the link keeps its own model settings (issue 41: a link never rewires them)
        again = _opened(run_id)
        assert again.selectbox(key="set_provider").value == "offline"
        # the refreshed session is another browser here (no cookie): it may watch, not stop
        assert not [b for b in again.button if b.label == "Stop"]
        assert "started in another browser" in texts(again)
        # the owner stops: the page says so in the same rerun
        run_until(at, lambda a: any(b.label == "Stop" for b in a.button))
        form_button(at, "Stop").click().run()
        assert any("Stopping after the current step" in w.value for w in at.warning) or handle.done, texts(at)
        assert handle.wait(120) and handle.status == "stopped"
        started = [e.node for e in handle.events if e.kind == "node_started"]
        assert "Portfolio Manager" not in started
        at.run()
        assert form_button(at, "Resume")
        # the watcher cannot resume it
        again.run()
        assert not [b for b in again.button if "Resume" in str(b.label)]


def test_two_dates_of_one_ticker_run_at_once_but_not_the_same_date(ta_home):
    with FakeOpenAIServer(latency_s=0.2) as server:
        at = new_app("run")
        _use_server(at, server.base_url)
        start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
        first = get_registry().get(at.query_params["run"])
        start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
        assert any("already running" in e.value for e in at.error)
        start_offline_run(at, "NVDA", dt.date(2024, 6, 10), analysts=["market"])
        assert not at.error, [e.value for e in at.error]
        second = get_registry().get(at.query_params["run"])
        assert second is not first and second.date == "2024-06-10"
        assert first.status == "running" or first.done
        assert first.wait(120) and second.wait(120)
        assert (first.status, second.status) == ("finished", "finished"), (first.error, second.error)


def test_after_a_restart_the_page_offers_resume_for_a_checkpointed_run(ta_home):
    with FakeOpenAIServer(latency_s=0.2) as server:
        at = new_app("run")
        _use_server(at, server.base_url)
        start_offline_run(at, "TSLA", dt.date(2024, 5, 10), analysts=["market"])
        handle = get_registry().get(at.query_params["run"])
        # stop once a step is checkpointed (the market analyst has finished)
        run_until(at, lambda a: any(e.kind == "node_finished" for e in handle.events), timeout=60)
        form_button(at, "Stop").click().run()
        assert handle.wait(120) and handle.status == "stopped"
        get_registry.clear()  # the server restarts: its memory of runs is gone
        fresh = AppTest.from_file(APP, default_timeout=300)
        fresh.session_state["_browser_id"] = at.session_state["_browser_id"]  # the same browser (its cookie)
        fresh.run()
        _use_server(fresh, server.base_url)
        # it was stopped, and the page says so (it once said "did not finish before the server restarted")
        assert "**TSLA as of 2024-05-10** was stopped and is checkpointed at step" in texts(fresh)
        assert "did not finish before the server restarted" not in texts(fresh)
        form_button(fresh, "Resume").click().run()
        resumed = get_registry().get(fresh.query_params["run"])
        assert resumed is not None and resumed.wait(120) and resumed.status == "finished", resumed.error
        assert [e.data["resumed"] for e in resumed.events if e.kind == "run_started"] == [True]


def test_first_visit_shows_the_team_and_runs_an_example_then_gets_out_of_the_way(ta_home):
    at = new_app("run")
    flow = next(h.value for h in at.html if 'class="ta-flow"' in h.value)
    positions = [flow.index(g["team"]) for g in team.plan(list(team.ANALYST_KEYS))]
    assert positions == sorted(positions) and flow.index("Memory log") > positions[-1]
    assert "Bull ⇄ Bear" in flow and "Portfolio Manager" in flow
    # the example runs offline on demo data, whatever the sidebar said
    at.selectbox(key="set_provider").set_value("openai").run()
    form_button(at, "Run an example").click().run()
    handle = get_registry().get(at.query_params["run"])
    # the README's session (a decisive call with a full plan: tests/test_example_case.py), at presenter pace
    assert (handle.ticker, str(handle.date)) == EXAMPLE_CASE and handle.config["llm_provider"] == "offline"
    assert handle.config["data_vendor"] == "demo"
    assert handle.config["offline_stream_delay_s"] == PRESENTER_PACE_S
    assert at.text_input(key="form_ticker").value == "NVDA" and str(at.date_input(key="form_date").value) == EXAMPLE_CASE[1]
    assert at.selectbox(key="set_provider").value == "offline"  # the sidebar says what runs
    at.run()
    assert [e for e in at.expander if e.label == "New analysis"]  # the form folded: the run is in view
    handle.stop(handle.owner)  # a paced run takes a minute: its end is not what this test is about
    assert handle.wait(120)
    at.run()
    assert not any('class="ta-flow"' in h.value for h in at.html)  # a run exists: no onboarding
    assert [e for e in at.expander if e.label == "New analysis"]  # and it keeps its place once the run ended
    # a returning user with runs on disk never sees it; a new user may dismiss it
    assert not any('class="ta-flow"' in h.value for h in new_app("run").html)


def test_onboarding_can_be_dismissed(ta_home):
    at = new_app("run")
    form_button(at, "Dismiss").click().run()
    assert not any('class="ta-flow"' in h.value for h in at.html)


def test_links_open_a_saved_run_a_backtest_variant_and_prefill_the_form(ta_home):
    from studio.jobs import JobRegistry

    reg = JobRegistry()
    assert reg.wait(reg.start_run("NVDA", "2024-05-10", ["market"])).status == "finished"
    at = _opened(ticker="NVDA", date="2024-05-10")
    assert "Saved run: NVDA as of 2024-05-10" in texts(at) and _rating_shown(at)
    # a backtest variant's results folder
    cfg = {"results_dir": str(ta_home / "backtests" / "bt1" / "no_memory" / "results")}
    assert reg.wait(reg.start_run("AAPL", "2024-05-10", ["news"], cfg)).status == "finished"
    at = _opened(ticker="AAPL", date="2024-05-10", backtest="bt1", variant="no_memory")
    assert "Saved run: AAPL as of 2024-05-10 (backtest bt1, variant no_memory)" in texts(at)
    # a path in the link is refused
    bad = _opened(ticker="AAPL", date="2024-05-10", backtest="../etc", variant="no_memory")
    assert any("bad id or variant" in e.value for e in bad.error) and not _rating_shown(bad)
    # prefill: form and sidebar
    data = {"ticker": "MSFT", "date": "2024-04-02", "analysts": ["news", "market"], "debate_rounds": 2,
            "risk_rounds": 3, "provider": "ollama", "vendor": "demo"}
    at = _opened(prefill=json.dumps(data))  # the browser decodes ?prefill=<urlencoded json> to this
    assert at.text_input(key="form_ticker").value == "MSFT"
    assert at.date_input(key="form_date").value == dt.date(2024, 4, 2)
    assert at.multiselect(key="form_analysts").value == ["news", "market"]
    assert (at.number_input(key="form_debate").value, at.number_input(key="form_risk").value) == (2, 3)
    assert at.selectbox(key="set_provider").value == "offline"  # a link fills the form, never the model
    assert any("names the provider Ollama (local); the sidebar keeps yours" in w.value for w in at.warning)
    assert any("prefilled from the link" in i.value for i in at.info)
    at.run()  # applied once: a rerun does not overwrite what the user changes afterwards
    assert not any("prefilled from the link" in i.value for i in at.info)
    assert resolve_config()["llm_provider"] == "offline"  # nothing global changed


def test_api_key_field_is_never_restored_from_a_run(ta_home):
    with FakeOpenAIServer() as server:
        at = new_app("run")
        _use_server(at, server.base_url)
        at.text_input(key=KEY_API).input("sk-secret-123456").run()
        start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
        again = _opened(at.query_params["run"])
        assert again.session_state[KEY_API] == ""
        get_registry().get(at.query_params["run"]).wait(120)


def test_another_browsers_run_shows_its_settings_without_credentials(ta_home):
    backend = f"http://alice:hunter2-pass@127.0.0.1:{free_port()}/v1"
    reg = get_registry()
    run_id = reg.start_run("MSFT", "2024-05-10", ["market"], {
        "llm_provider": "openai_compatible", "backend_url": backend, "quick_think_llm": "m", "deep_think_llm": "m",
        "llm_max_retries": 0, "llm_timeout": 2.0}, api_key="sk-other-0123456789", owner="another-browser")
    handle = reg.get(run_id)
    assert handle.wait(120) and handle.status == "failed"
    assert handle.config["backend_url"] == backend  # the run itself used the real address
    at = _opened(run_id)
    assert not at.exception
    # none of its model's settings: this session's next run must not go (with its key) where the link says
    assert at.selectbox(key="set_provider").value == "offline"
    assert at.session_state["set_base_url"] == ""
    shown = texts(at)
    assert "hunter2-pass" not in shown and "sk-other" not in shown
    assert "only that browser can resume it" in shown and not [b for b in at.button if "Resume" in str(b.label)]


@pytest.mark.parametrize("date", ["1969-12-31", "2999-01-01", "1984-13-40"])
def test_a_prefill_date_the_form_cannot_show_is_named_and_the_page_keeps_working(ta_home, date):
    """A link (Compare builds them for old CSV runs too) whose date is outside the form's range used to
    break the Run page for the whole browser session; now the form keeps its date and says why."""
    at = _opened(prefill=json.dumps({"ticker": "MSFT", "date": date, "analysts": "market", "debate_rounds": True}))
    assert not at.exception, at.exception
    assert at.text_input(key="form_ticker").value == "MSFT"
    assert at.date_input(key="form_date").value != date
    assert any("the form keeps its date" in w.value for w in at.warning)
    at.run()  # and the session goes on working
    assert not at.exception
    assert at.multiselect(key="form_analysts").value == list(team.ANALYST_KEYS)  # "market" is no list: ignored


def test_a_prefill_link_of_an_old_run_from_compare_fills_the_form(ta_home):
    from studio import compare

    link = compare.prefill_link({"analysts": ["news"], "max_debate_rounds": 3, "llm_provider": "ollama"},
                                "IBM", "1985-03-01")
    from urllib.parse import parse_qs, unquote, urlsplit

    at = _opened(prefill=unquote(parse_qs(urlsplit(link).query)["prefill"][0]))
    assert not at.exception
    assert at.date_input(key="form_date").value == dt.date(1985, 3, 1)
    assert at.number_input(key="form_debate").value == 3
    assert at.selectbox(key="set_provider").value == "offline"


def test_deeply_nested_prefill_json_is_a_plain_refusal(ta_home):
    at = _opened(prefill="[" * 3000 + "]" * 3000)
    assert not at.exception
    assert any("could not be used" in w.value for w in at.warning)
    at = _opened(prefill="[" * 1999 + "]" * 1999)  # within the length limit, deeper than the parser goes
    assert not at.exception
    assert any("nested too deeply" in w.value for w in at.warning)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unknown_ticker_is_refused_in_the_pages_own_words_not_the_clis(ta_home, lang):
    """The engine's message tells a terminal user to pass --allow-synthetic; the page names its own box."""
    import datetime as _dt

    at = _opened(lang=lang)
    at.text_input(key="form_ticker").input("NVDAA")
    at.date_input(key="form_date").set_value(_dt.date(2024, 5, 10))
    form_button(at, "Start analysis" if lang == "en" else "开始分析").click()
    at.run()
    shown = " ".join(str(e.value) for e in at.error)
    assert "--allow-synthetic" not in shown, shown
    if lang == "en":
        assert "does not list NVDAA: did you mean NVDA" in shown and 'tick "Allow an invented instrument"' in shown
    else:
        assert "演示市场没有 NVDAA" in shown and "允许虚构的标的" in shown


def test_a_base_url_the_settings_cannot_take_is_said_where_it_is_typed_and_nothing_runs(ta_home):
    """A mistyped Base URL stopped the whole page with the check's exception. It is now said under the
    sidebar's field and on the page, in the field's name; nothing on the page can start a run until it is
    corrected, and the page is back as soon as it is."""
    at = new_app("run")
    at.selectbox(key="set_provider").set_value("openai_compatible").run()
    at.text_input(key="set_base_url").input("ftp://nowhere").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [str(e.value) for e in at.error]
    assert len(said) == 2 and all(s.startswith("The sidebar's **Base URL** cannot be used: ") for s in said), said
    assert "http://host:port/v1" in said[0]  # the check's own words say what to write
    assert len(at.sidebar.error) == 1
    assert not any("Start analysis" in str(b.label) for b in at.button)  # no Start to press
    assert get_registry().list("run") == []
    at.text_input(key="set_base_url").input("http://127.0.0.1:9/v1").run()
    assert not at.exception and not at.error
    assert any("Start analysis" in str(b.label) for b in at.button)


def test_a_base_url_the_settings_cannot_take_is_said_in_the_pages_language(ta_home):
    """Under 简体中文 the sentence quoted the settings check's English words (the value, then "is not a server
    URL: use …"); the check gives its message as a catalogue id now, and the page says all of it in Chinese."""
    at = _opened(lang="zh")
    at.selectbox(key="set_provider").set_value("openai_compatible").run()
    at.text_input(key="set_base_url").input("ftp://nowhere").run()
    assert not at.exception, [e.value for e in at.exception]
    said = [str(e.value) for e in at.error]
    assert len(said) == 2 and all(s.startswith("侧边栏的 **服务地址** 无法使用：'ftp://nowhere' 不是服务器地址") for s in said), said
    assert not any(word in said[0] for word in ("is not", "server URL", "use http")), said[0]
