"""Debates, History, Compare and Watchlist in Chinese with ``?lang=zh`` (or the sidebar's choice) and in
English by default, on saved runs of the offline engine: titles, labels, captions, table columns, the
rating ladder, the battle view, the tiles; ratings and roles shown translated, data and links canonical."""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from studio import compare
from studio import watchlist_view as view
from tests.app.apptest_utils import APP, PAGES, texts
from tests.browser.i18n_scan import english_in
from tradingagents import batch
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.i18n import translator
from tradingagents.rating import RATINGS_5_TIER
from tradingagents.storage import load_run

ZH_RATINGS = {"买入", "增持", "持有", "减持", "卖出"}


def seed_two_runs():
    """Two saved runs (the offline engine writing Chinese), the second with two debate rounds and fewer analysts;
    returns the Chinese config."""
    zh = resolve_config({"output_language": "Chinese"})
    TradingAgentsGraph(config=zh).propagate("NVDA", "2024-05-10")
    TradingAgentsGraph(config=resolve_config({"output_language": "Chinese", "max_debate_rounds": 2}),
                       selected_analysts=["market", "news"]).propagate("AAPL", "2024-06-10")
    return zh


@pytest.fixture
def runs(ta_home):
    return seed_two_runs()


def _open(page: str, lang: str | None = None, *, by_state: bool = False, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    if lang and by_state:
        at.session_state["ui_lang"] = lang
    elif lang:
        at.query_params["lang"] = lang
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(PAGES[page]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _labels(at: AppTest) -> list[str]:
    """The page's own words in the main area: titles, subheaders, captions, alerts, widget labels, help texts
    and options, buttons, tabs. Not the sidebar nor "What the team remembered" (studio/ui/'s, translated by
    its owner: still English on this branch)."""
    main = at.main
    skip: set[str] = set()
    for box in main.get("expander"):
        if "remembered" in str(box.label):
            skip |= {str(e.value) for kind in ("caption", "markdown") for e in box.get(kind)}
    out = [str(e.value) for kind in ("title", "subheader", "caption", "info", "warning", "error") for e in main.get(kind)]
    for kind in ("selectbox", "multiselect", "text_input", "text_area", "date_input", "number_input", "checkbox",
                 "toggle", "button", "select_slider", "segmented_control", "tab"):
        for e in main.get(kind):
            out += [str(getattr(e, "label", "") or ""), str(getattr(e, "help", "") or "")]
            out += [str(o) for o in (getattr(e, "options", None) or [])]
    return [s for s in out if s and s not in skip]


def _no_english(at: AppTest, allowed_extra: frozenset[str] = frozenset()) -> None:
    from tests.browser.i18n_scan import ALLOWED

    bad = {s: english_in(s, ALLOWED | allowed_extra) for s in _labels(at)}
    assert not {s: w for s, w in bad.items() if w}, {s: w for s, w in bad.items() if w}


def test_history_in_chinese_and_in_english(runs):
    at = _open("history", "zh")
    assert at.title[0].value == "历史"
    table = at.dataframe[0].value
    assert {"代码", "日期", "评级", "版本", "保存时间", "打开", "辩论"} <= set(table.columns)
    assert set(table["评级"]) <= ZH_RATINGS and len(table) == 2
    # the links keep the canonical ticker and date
    assert set(table["打开"]) == {"./?ticker=NVDA&date=2024-05-10&lang=zh", "./?ticker=AAPL&date=2024-06-10&lang=zh"}
    assert set(table["版本"]) == {"当前"}
    assert not any(" Dec " in s or " Jan " in s for s in table["保存时间"])  # no English month
    assert any(c.value.startswith("所有显示的运行：") and "演示市场（合成数据）" in c.value for c in at.caption)
    assert at.multiselect(key="hist_ratings").options == ["买入", "增持", "持有", "减持", "卖出", "—"]
    assert at.multiselect(key="hist_providers").options == ["离线引擎（无模型）"]
    from tradingagents.storage import default_user

    _no_english(at, frozenset({default_user({})}))  # who ran it is a name, shown as recorded
    # the filter still works on the canonical ratings
    nvda = load_run(runs, "NVDA", "2024-05-10")["rating"]
    at.multiselect(key="hist_ratings").set_value([nvda]).run()
    assert "NVDA" in set(at.dataframe[0].value["代码"])

    en = _open("history")
    assert en.title[0].value == "History"
    assert {"Ticker", "Date", "Rating", "Open", "Debates"} <= set(en.dataframe[0].value.columns)
    assert set(en.dataframe[0].value["Rating"]) <= set(RATINGS_5_TIER)


def test_compare_in_chinese_and_in_english(runs):
    at = _open("compare", "zh", a="NVDA|2024-05-10", b="AAPL|2024-06-10")
    assert at.title[0].value == "对比运行"
    shown = "\n".join(str(h.value) for h in at.html)
    ladder = shown.split('data-testid="ta-ladder"', 1)[1]
    assert 'data-role="Research Manager">研究经理<' in ladder and 'data-role="Portfolio Manager">投资组合经理<' in ladder
    a = load_run(runs, "NVDA", "2024-05-10")
    assert f'data-rating="{a["rating"]}"' in ladder  # the canonical rating in the data, translated on the pill
    assert any(f">{z}</span>" in ladder for z in ZH_RATINGS) and "评级者" in ladder
    diff = at.dataframe[1].value
    assert "设置" in diff.columns and {"辩论轮数", "分析师"} <= set(diff["设置"])
    analysts = diff[diff["设置"] == "分析师"].iloc[0]
    assert list(analysts.iloc[1:]) == ["市场分析师, 情绪分析师, 新闻分析师, 基本面分析师", "市场分析师, 新闻分析师"]
    usage = at.dataframe[2].value
    assert list(usage[""]) == ["运行时长", "模型调用", "工具调用", "输入词元", "输出词元", "成本"]
    assert list(usage.iloc[-1, 1:]) == ["$0.00 · 离线引擎", "$0.00 · 离线引擎"]
    assert [t.label for t in at.tabs] == ["市场分析师", "情绪分析师", "新闻分析师", "基本面分析师", "研究经理",
                                          "交易员", "投资组合经理"]
    assert "_本次运行未生成。_" in [m.value for m in at.tabs[1].markdown]
    assert all(o.endswith("离线引擎（无模型）") for o in at.selectbox(key="cmp_a").options)
    _no_english(at, frozenset({str(a["meta"].get("by") or "").lower()}))

    en = _open("compare", a="NVDA|2024-05-10", b="AAPL|2024-06-10")
    assert en.title[0].value == "Compare runs"
    assert list(en.dataframe[2].value[""])[0] == "Run time"
    assert 'data-role="Research Manager">Research Manager<' in "\n".join(str(h.value) for h in en.html)


def test_debates_in_chinese_and_in_english_with_the_sidebar_choice_too(runs):
    at = _open("debates", "zh", ticker="AAPL", date="2024-06-10")
    assert at.title[0].value == "辩论"
    assert [s.value for s in at.subheader] == ["投资辩论 — 多头 · 空头", "风险辩论 — 激进 · 保守 · 中性", "向团队提问"]
    shown = texts(at)
    assert "**研究经理 — 裁决**" in shown and "**交易员 — 提案**" in shown and "**投资组合经理 — 裁决**" in shown
    assert ">第 1 轮<" in shown and ">第 2 轮<" in shown
    assert '<span class="ta-who-bull">多头研究员</span> · 第 1 轮' in shown
    assert "回应<span class=\"ta-who-" in shown
    assert at.toggle(key="debate_present").label == "演示模式"
    assert at.selectbox(key="debate_source").value == 0  # the linked run (the newest)
    label = at.selectbox(key="debate_source").options[0].split(" · ")
    assert label[:2] == ["AAPL", "2024-06-10"] and label[2] in ZH_RATINGS
    _no_english(at)
    assert at.segmented_control(key="debate_mode").options == ["完整辩论", "回放"]
    # Replay, chosen in English (AppTest formats a value outside the session, in English), then the address
    # asks for Chinese: the mode (an English key in the session) stays, its controls speak Chinese
    at = _open("debates", ticker="AAPL", date="2024-06-10")
    at.segmented_control(key="debate_mode").set_value("Replay").run()
    assert at.button(key="rp_play").label == "Play"
    at.query_params["lang"] = "zh"
    at.run()
    assert not at.exception
    assert [at.button(key=k).label for k in ("rp_play", "rp_start", "rp_back", "rp_next", "rp_end")] == [
        "播放", "开头", "上一轮", "下一轮", "结尾"]
    assert "研究经理 — 裁决待定" in texts(at) and "下一位：空头研究员" in texts(at)

    by_choice = _open("debates", "zh", by_state=True)  # the sidebar's choice (session_state["ui_lang"])
    assert by_choice.title[0].value == "辩论"

    en = _open("debates", ticker="AAPL", date="2024-06-10")
    assert en.title[0].value == "Debates"
    assert en.subheader[0].value == "Investment debate — Bull · Bear"
    assert "**Research Manager — verdict**" in texts(en)


def test_watchlist_in_chinese_runs_a_batch_with_chinese_tiles(ta_home):
    at = _open("watchlist", "zh")
    assert at.title[0].value == "自选列表"
    assert "4 个代码 · $0.00 · 离线引擎" in texts(at)
    _no_english(at, frozenset({"blind"}))  # the blind runs' folder is named so: <主目录>/blind/
    at.text_area(key="wl_tickers").input("NVDA, AAPL").run()
    at.button(key="wl_start").click().run()
    deadline = time.monotonic() + 300  # only catches a hang
    while 'data-status="finished"' not in texts(at):
        assert time.monotonic() < deadline, texts(at)[:1500]
        time.sleep(0.3)
        at.run()
    shown = texts(at)
    assert "已分析 2 / 2" in shown and "已完成：全部 2 个代码均已分析。" in shown
    assert shown.count("打开运行 →") == 2 and 'aria-label="打开 NVDA 的运行"' in shown
    assert 'href="./?ticker=NVDA&amp;date=2024-05-10&amp;lang=zh"' in shown  # canonical data, the reader's language
    assert any(f"<br>{z}<br>" in shown for z in ZH_RATINGS)

    en = _open("watchlist")
    assert en.title[0].value == "Watchlist" and "4 tickers · $0.00 · offline engine" in texts(en)


def test_the_studio_modules_speak_english_by_default_and_chinese_when_asked():
    zh = translator("zh")
    done = batch.TickerOutcome("NVDA", "2024-05-10", status="done", rating="Underweight", cost_usd=None)
    assert "done" in view.tile_html(done) and "Underweight" in view.tile_html(done)
    tile = view.tile_html(done, t=zh)
    assert "完成" in tile and "减持" in tile and "价格未知" in tile and 'data-rating="Underweight"' in tile
    summary = {"total": 3, "ok": 1, "done": 2, "cost_usd": None}
    assert view.summary_text(summary, True) == "1 of 3 analysed · 1 did not finish · 1 to go"
    assert view.summary_text(summary, False, t=zh) == "已分析 1 / 3 · 1 个未完成 · 1 个未开始"
    assert compare.setting_label("max_debate_rounds") == "Debate rounds"
    assert compare.setting_label("max_debate_rounds", t=zh) == "辩论轮数"
    assert compare.setting_label("some_new_key") == "Some new key"  # never a raw identifier
    assert compare.readable_time("2026-12-01T09:41:07+00:00", t=zh) == "2026-12-01 09:41"
    assert compare.provider_label("offline", t=zh) == "离线引擎（无模型）"
    assert compare.config_diff({"output_language": "English"}, {"output_language": "Chinese"}, t=zh) == [
        ("output_language", "英文", "中文")]
