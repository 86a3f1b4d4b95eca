"""The Memory log, Memories and Backtest pages in 中文 (``?lang=zh``) and in English by default, on a
seeded home: settled and pending log entries, lessons with a track record, a finished backtest.

Model-written text (log decisions and reflections, the engine's messages) is not checked here: it is
the offline engine's (another catalogue); what is checked is everything the pages themselves say.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.apptest_utils import APP, PAGES, texts
from tests.app.test_memory_pages import entry_labels, log_table
from tradingagents import storage
from tradingagents.agents.utils.memory import SEPARATOR
from tradingagents.config import resolve_config
from tradingagents.memory.situation_memory import FinancialSituationMemory, lesson_id

CJK = re.compile(r"[\u4e00-\u9fff]")

LESSONS = [("科技股机构抛售增加，利率持续上升", "降低总敞口。"),
           ("业绩超预期并上调指引，股价放量上涨", "回调时加仓。")]


def settled_block(date, ticker, rating, raw, alpha):
    return (f"[{date} | {ticker} | {rating} | {raw * 100:+.1f}% | {alpha * 100:+.1f}% | 5d]\n\nDECISION:\n"
            f"**Rating**: {rating}\n\nGo long.\n\nREFLECTION:\nThe call was right.\n\n"
            f"<!-- exact raw={raw!r} alpha={alpha!r} -->")


def seed_home(home: Path, backtest: bool = True) -> str | None:
    """A log of settled and pending decisions, two Chinese lessons of the trader (one retrieved by a saved
    run), and a finished 5-step offline backtest; returns the backtest's id."""
    cfg = resolve_config()
    path = Path(cfg["memory_log_path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    blocks = [settled_block("2024-05-10", "NVDA", "Buy", 0.05, 0.02),
              settled_block("2024-05-17", "AAPL", "Sell", -0.03, -0.01),
              settled_block("2024-05-24", "NVDA", "Hold", 0.004, 0.001),
              "[2024-06-03 | MSFT | Overweight | pending]\n\nDECISION:\n**Rating**: Overweight\n\nAdd."]
    path.write_text("".join(b + SEPARATOR for b in blocks), encoding="utf-8")
    FinancialSituationMemory("trader_memory", cfg).add_situations(LESSONS)
    storage.save_run(cfg, {"company_of_interest": "NVDA", "trade_date": "2024-05-10"}, "Buy",
                     {"memory_used": {"past_decisions": [], "lessons": {"trader_memory": [
                         {"id": lesson_id(*LESSONS[0]), "score": 1.0, "situation_date": None,
                          "lesson": LESSONS[0][1]}]}}})
    if not backtest:
        return None
    from studio.jobs import JobRegistry
    from tradingagents.backtest.engine import BacktestSpec

    reg = JobRegistry()
    bid = reg.start_backtest(BacktestSpec.make("NVDA", "2024-06-03", "2024-06-07"), {})
    assert reg.backtest(bid).wait(600) and reg.backtest(bid).status == "finished"
    return bid


def open_page(page: str, lang: str | None, query: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    if lang:
        at.query_params["lang"] = lang
    at.run()
    at.switch_page(PAGES[page])
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def seeded(ta_home):
    return seed_home(ta_home)


def test_memory_log_in_chinese_and_in_english(seeded):
    zh = open_page("memory_log", "zh")
    assert zh.title[0].value == "记忆日志"
    assert [m.label for m in zh.metric] == ["决策", "待结算", "已结算", "平均判断超额收益(alpha)", "平均股票超额收益(alpha)"]
    assert list(zh.segmented_control(key="log_chart").options) == ["各代码的复合超额收益(alpha)", "净值与基准",
                                                                   "各评级的命中率"]
    assert list(zh.segmented_control(key="log_status").options) == ["全部", "待结算", "已结算"]
    table = log_table(zh)
    assert "基准收益" in table.columns
    assert list(table.columns[:4]) == ["日期", "代码", "评级", "状态"]
    assert {"买入", "卖出", "持有", "增持"} == set(table["评级"]) and {"待结算", "已结算"} == set(table["状态"])
    labels = entry_labels(zh)
    assert "2024-05-10 · NVDA · 买入 · 判断超额收益(alpha) +2.0% · 股票超额收益(alpha) +2.0%" in labels and "2024-06-03 · MSFT · 增持 · 待结算" in labels
    fig = zh.get("plotly_chart")[0].proto.spec
    assert "各代码的复合超额收益(alpha)（持有期不重叠）" in fig and "compounded alpha" not in fig
    zh.segmented_control(key="log_chart").set_value("hits").run()
    fig = zh.get("plotly_chart")[0].proto.spec
    assert "各评级的命中率" in fig and "买入" in fig and "Hit rate" not in fig
    assert "命中按复盘所用的同一规则" in texts(zh)
    for widget in (zh.multiselect(key="log_tickers"), zh.multiselect(key="log_ratings")):
        assert widget.proto.placeholder == "请选择"
    assert zh.multiselect(key="log_ratings").options == ["买入", "增持", "持有", "卖出"]  # tier order
    # the data keeps the canonical names: filtering by 买入 keeps the Buy entry
    zh.multiselect(key="log_ratings").select("Buy").run()
    assert zh.metric[0].value == "1"

    en = open_page("memory_log", None)
    assert en.title[0].value == "Memory log"
    assert [m.label for m in en.metric] == ["Decisions", "Pending", "Settled", "Average call alpha",
                                            "Average stock alpha"]
    table = log_table(en)
    assert "benchmark return" in table.columns
    assert set(table["rating"]) == {"Buy", "Sell", "Hold", "Overweight"} and set(table["status"]) == {"pending", "settled"}
    assert not CJK.search(texts(en)), "the English page shows Chinese"


def test_memories_in_chinese_and_in_english(seeded):
    zh = open_page("memories", "zh")
    assert zh.title[0].value == "记忆"
    assert [m.label for m in zh.metric] == ["多头研究员", "空头研究员", "研究经理", "交易员", "投资组合经理"]
    assert [t.label for t in zh.tabs] == [":material/search: 查询", ":material/military_tech: 表现记录",
                                          ":material/add: 添加经验教训", ":material/delete: 清空"]
    zh.selectbox(key="mem_role").set_value("trader_memory").run()
    assert zh.selectbox(key="mem_role").proto.placeholder == "请选择"
    zh.button(key="mem_example_0").click().run()
    assert zh.text_area(key="mem_query").value == "利率持续上升之际，机构对科技股的抛售增加"
    line = next(m.value for m in zh.markdown if str(m.value).startswith("**#1**"))
    assert "得分" in line and "个匹配词" in line
    assert "归一化得分" in zh.get("plotly_chart")[0].proto.spec
    records = next(d.value for d in zh.dataframe if "经验教训编号" in d.value.columns)
    assert list(records.columns) == ["经验教训编号", "经验教训", "被检索次数", "已结算", "正确", "错误", "有用度",
                                     "平均超额收益(alpha)", "状态"]
    assert set(records["状态"]) == {"使用中"} and "100% of 1" not in set(records["有用度"])
    assert zh.selectbox(key="mem_sort").options[0] == "有用度（已结算决策中正确的比例）"

    en = open_page("memories", None)
    assert en.title[0].value == "Memories" and [t.label for t in en.tabs][0] == ":material/search: Query"
    en.selectbox(key="mem_role").set_value("trader_memory").run()
    records = next(d.value for d in en.dataframe if "Lesson id" in d.value.columns)
    assert set(records["Status"]) == {"in use"}


def test_backtest_in_chinese_and_in_english(seeded):
    zh = open_page("backtest", "zh", {"bt": seeded})
    assert zh.title[0].value == "回测"
    assert zh.text_input(key="bt_tickers").label == "代码" and zh.date_input(key="bt_start").label == "开始日期"
    assert zh.selectbox(key="bt_portfolio").options == ["无", "等权重", "按信心加权"]
    assert "离线引擎上约" in texts(zh)
    paper = next(d.value for d in zh.dataframe if "策略" in d.value.columns)
    assert {"CR %", "SR", "p 值（对比买入持有）", "成本 bps"} <= set(paper.columns)
    assert {"TradingAgents", "买入持有", "MACD"} <= set(paper["策略"])
    assert [t.label for t in zh.tabs][:3] == ["净值与基线策略", "回撤", "价格上的评级"]
    specs = " ".join(c.proto.spec for c in zh.get("plotly_chart"))
    assert "买入持有" in specs and "净值（1.0 = 起点）" in specs and "Buy & Hold" not in specs
    steps = next(d.value for d in zh.dataframe if "秒" in d.value.columns)
    assert list(steps.columns) == ["代码", "日期", "评级", "秒", "复用", "续跑"]
    assert set(steps["评级"]) <= {"买入", "增持", "持有", "减持", "卖出"}
    assert "已完成" in " ".join(str(h.value) for h in zh.subheader)
    assert "（5/5 步）" in zh.selectbox(key="bt_past_pick").options[0]

    en = open_page("backtest", None, {"bt": seeded})
    paper = next(d.value for d in en.dataframe if "Strategy" in d.value.columns)
    assert "Buy & Hold" in set(paper["Strategy"]) and "p vs B&H" in paper.columns
    assert [t.label for t in en.tabs][:3] == ["Equity vs baselines", "Drawdown", "Ratings over the price"]
    assert "(5/5 steps)" in en.selectbox(key="bt_past_pick").options[0]
    assert not CJK.search(texts(en)), "the English page shows Chinese"
