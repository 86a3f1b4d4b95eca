"""The app's frame and the Run page in 简体中文 and English (issue 26): which language a session gets
(``?lang=`` → the sidebar's picker → TRADINGAGENTS_UI_LANGUAGE → the browser's language → English),
the picker keeping ``?lang=`` in step, the output language following the UI language, and the
sidebar's plain copy (issue 25: no home folder path, no fields that do not apply, no "BM25")."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from streamlit.runtime.context import ContextProxy
from streamlit.testing.v1 import AppTest

from studio.ui import get_registry
from tests.app.apptest_utils import APP, form_button, run_until, texts

CJK = "\u4e00-\u9fff"


def _open(lang: str | None = None, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    if lang:
        at.query_params["lang"] = lang
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _labels(at: AppTest) -> dict[str, str]:
    """The labels people read on the Run page and in its sidebar, by widget key."""
    out = {"title": at.title[0].value}
    for kind in ("selectbox", "text_input", "date_input", "number_input", "multiselect", "toggle", "checkbox",
                 "radio"):
        for w in getattr(at, kind):
            if w.key:
                out[w.key] = str(w.label)
    for b in at.button:  # a form's submit button is keyed by its label: call it "submit"
        out["submit" if str(b.key or "").startswith("FormSubmitter") else (b.key or b.label)] = str(b.label)
    return out


def _start(at: AppTest, start_label: str, ticker: str, date, analysts: list[str], *, presenter: bool = False):
    at.text_input(key="form_ticker").input(ticker)
    at.date_input(key="form_date").set_value(date)
    at.multiselect(key="form_analysts").set_value(analysts)
    if presenter:
        at.toggle(key="form_presenter").set_value(True)
    form_button(at, start_label).click()
    return at.run()


@pytest.fixture(autouse=True)
def _fresh_server_memory():
    get_registry.clear()
    yield


@pytest.fixture
def browser_locale(monkeypatch):
    """Set what the browser says its language is (``st.context.locale``)."""
    def set_locale(value: str | None) -> None:
        monkeypatch.setattr(ContextProxy, "locale", property(lambda self: value))
    return set_locale


def test_run_page_and_sidebar_in_chinese_and_in_english(ta_home):
    zh = _labels(_open("zh"))
    assert zh["title"] == "运行分析"
    assert zh["form_ticker"] == "代码" and zh["form_date"] == "分析日期" and zh["form_analysts"] == "分析师"
    assert zh["form_debate"] == "辩论轮数" and zh["form_parallel"] == "分析师并行"
    assert zh["set_provider"] == "模型提供方" and zh["set_language"] == "输出语言" and zh["set_vendor"] == "数据源"
    assert zh["submit"] == "开始分析"
    en = _labels(_open("en"))
    assert en["title"] == "Run an analysis"
    assert en["form_ticker"] == "Ticker" and en["form_date"] == "Analysis date" and en["form_analysts"] == "Analysts"
    assert en["set_provider"] == "LLM provider" and en["set_language"] == "Output language"
    assert en["submit"] == "Start analysis"
    # the same widgets, each labelled in both languages (nothing drawn only in one of them)
    assert set(zh) == set(en)


def test_chinese_sidebar_badges_picker_and_analyst_names(ta_home):
    at = _open("zh")
    badges = "\n".join(h.value for h in at.sidebar.html)
    assert "离线引擎（无模型）" in badges and "合成的演示数据" in badges
    assert "offline engine" not in badges and "synthetic" not in badges
    picker = at.sidebar.radio(key="set_ui_lang")
    assert picker.value == "zh" and picker.options == ["English", "简体中文"]  # each language in its own name
    assert at.multiselect(key="form_analysts").options == ["市场", "情绪", "新闻", "基本面"]
    assert at.selectbox(key="set_language").options == ["英语", "中文"]
    assert "认识团队" in texts(at)  # the onboarding card


def test_lang_in_the_address_wins_and_the_picker_keeps_it_in_step(ta_home, monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "en")
    at = _open("zh")
    assert at.title[0].value == "运行分析"  # ?lang= beats the configured language
    # choosing English while the address says ?lang=zh switches to English and rewrites the address
    at.sidebar.radio(key="set_ui_lang").set_value("en").run()
    assert at.title[0].value == "Run an analysis"
    assert at.query_params["lang"] == "en"
    at.sidebar.radio(key="set_ui_lang").set_value("zh").run()
    assert at.title[0].value == "运行分析" and at.query_params["lang"] == "zh"
    at.run()  # stays chosen on the next rerun
    assert at.title[0].value == "运行分析"


def test_the_picker_beats_the_configured_language_without_an_address(ta_home, monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "zh")
    at = _open()
    assert at.title[0].value == "运行分析"
    at.sidebar.radio(key="set_ui_lang").set_value("en").run()
    assert at.title[0].value == "Run an analysis"


def test_configured_language_beats_the_browser_and_the_browser_beats_english(ta_home, monkeypatch, browser_locale):
    browser_locale("zh-CN")
    assert _open().title[0].value == "运行分析"  # the browser's language
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "en")
    assert _open().title[0].value == "Run an analysis"  # the config wins over the browser
    monkeypatch.delenv("TRADINGAGENTS_UI_LANGUAGE")
    browser_locale("fr-FR")
    assert _open().title[0].value == "Run an analysis"  # a language without a catalogue: English
    browser_locale(None)
    assert _open().title[0].value == "Run an analysis"


def test_output_language_follows_the_ui_language_unless_chosen(ta_home, monkeypatch):
    at = _open("zh")
    assert at.selectbox(key="set_language").value == "Chinese"
    at.sidebar.radio(key="set_ui_lang").set_value("en").run()
    assert at.selectbox(key="set_language").value == "English"  # it follows while the user has not picked
    at.selectbox(key="set_language").set_value("Chinese").run()
    at.sidebar.radio(key="set_ui_lang").set_value("zh").run()
    at.sidebar.radio(key="set_ui_lang").set_value("en").run()
    assert at.selectbox(key="set_language").value == "Chinese"  # the user's choice stays
    # a configured Chinese UI (whose CLI writes Chinese) read in English: the page's language decides
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "zh")
    assert _open("en").selectbox(key="set_language").value == "English"
    assert _open().selectbox(key="set_language").value == "Chinese"
    # TRADINGAGENTS_OUTPUT_LANGUAGE is a choice too: a Chinese UI keeps the English it names
    monkeypatch.setenv("TRADINGAGENTS_OUTPUT_LANGUAGE", "English")
    assert _open("zh").selectbox(key="set_language").value == "English"


def test_a_chinese_users_offline_run_is_asked_for_chinese_output(ta_home):
    at = _open("zh")
    _start(at, "开始分析", "NVDA", dt.date(2024, 5, 10), ["market"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.config["output_language"] == "Chinese"
    assert at.query_params["lang"] == "zh"  # starting a run keeps the address's language
    assert handle.wait(120) and handle.status == "finished"
    run_until(at, lambda a: any('data-rating="' in h.value for h in a.html))
    heads = [str(m.value) for m in at.markdown if str(m.value).startswith("####")]
    assert any("— 已完成" in h for h in heads), heads
    assert not any("finished" in h for h in heads)
    assert "投资组合经理的评级" in texts(at)


def test_sidebar_shows_only_what_applies_in_plain_words(ta_home):
    at = _open("en")
    sidebar = "\n".join([*(str(c.value) for c in at.sidebar.caption), *(str(m.value) for m in at.sidebar.markdown),
                         *(str(h.value) for h in at.sidebar.html)])
    assert str(ta_home) not in sidebar  # no home folder path
    assert "BM25" not in sidebar
    # the offline engine has no model, address or key: no disabled fields are drawn
    assert not [w for w in at.sidebar.text_input]
    assert not [w for w in [*at.sidebar.selectbox, *at.sidebar.text_input] if w.disabled]
    # a model provider brings its fields, and a key typed before switching back is kept
    at.selectbox(key="set_provider").set_value("openai").run()
    assert {w.key for w in at.sidebar.text_input} == {"set_quick", "set_deep", "set_base_url", "set_api_key"}
    at.text_input(key="set_api_key").input("sk-kept-123").run()
    at.selectbox(key="set_provider").set_value("offline").run()
    at.selectbox(key="set_provider").set_value("openai").run()
    assert at.text_input(key="set_api_key").value == "sk-kept-123"


def test_the_form_folds_while_a_run_is_in_progress(ta_home):
    at = _open("en")
    assert not [e for e in at.expander if e.label == "New analysis"]
    _start(at, "Start analysis", "NVDA", dt.date(2024, 5, 10), ["market", "news"], presenter=True)
    handle = get_registry().get(at.query_params["run"])
    try:
        at.run()
        assert handle.status == "running"  # presenter pace: the offline run takes a while
        folded = [e for e in at.expander if e.label == "New analysis"]
        assert folded, "the form folds into one line during the run"
        assert at.text_input(key="form_ticker").value == "NVDA"  # still there, inside the fold
    finally:
        handle.stop(handle.owner)
        assert handle.wait(120)
    at.run()
    # after the run the form stays folded while the run is shown: the result keeps its place (no jump)
    assert [e for e in at.expander if e.label == "New analysis"]
    at.query_params.clear()  # no run shown (a new visit): the form is the page's first section again
    at.session_state["run_id"] = None
    at.run()
    assert not [e for e in at.expander if e.label == "New analysis"]


def test_the_sidebar_and_the_form_label_each_setting_as_the_settings_table_does(ta_home):
    """One table per setting (config.table): the sidebar's and the Run form's labels are its labels, in both
    languages, as Compare's change labels and a resume's are."""
    from studio.compare import setting_label as compare_label
    from studio.runs import CHANGE_LABELS
    from tradingagents.config import setting_label
    from tradingagents.i18n import translator

    widgets = {"set_provider": "llm_provider", "set_language": "output_language", "set_vendor": "data_vendor",
               "form_debate": "max_debate_rounds", "form_risk": "max_risk_discuss_rounds",
               "form_analysts": "selected_analysts"}
    for lang in ("en", "zh"):
        labels, t = _labels(_open(lang)), translator(lang)
        for widget, key in widgets.items():
            assert labels[widget] == setting_label(key, t) == compare_label(key, t=t), (lang, widget)
    for key, label in CHANGE_LABELS.items():
        assert label == setting_label(key)


# what a Chinese page may show in Latin letters: tickers, names, units, model and product names, icons
_LATIN_OK = re.compile(r"NVDA|NVIDIA|Corporation|USD|SPY|DemoWire|DemoSocial|TradingAgents|Studio|LLM|PDF|RSI|MACD|"
                       r"ATR|EPS|UTC|@demo_trader_\d+|:material/[a-z_]+:|alpha|Markdown|HTML")


def test_a_chinese_runs_result_reads_in_chinese_headlines_included(ta_home):
    """The Run page's result of a Chinese run (card, reports, debates) shows no English words beyond tickers,
    names and units: the demo market's headlines and posts are Chinese, the evidence names the data it read."""
    at = _open("zh")
    _start(at, "开始分析", "NVDA", dt.date(2024, 5, 10), ["social", "news"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(180) and handle.status == "finished"
    run_until(at, lambda a: any('data-rating="' in h.value for h in a.html))
    shown = re.sub(r"<style>.*?</style>|<[^>]+>", " ", texts(at), flags=re.S)
    assert "合成新闻：" in shown and "合成帖子：" in shown and "Synthetic" not in shown
    english = sorted(set(re.findall(r"(?<![A-Za-z])[A-Za-z]{3,}", _LATIN_OK.sub(" ", shown))))
    assert not english, english
    sources = {str(v) for df in at.dataframe for col in df.value.columns if col == "来源" for v in df.value[col]}
    assert sources and not any(s.startswith("get_") for s in sources), sources
