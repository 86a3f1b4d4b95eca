"""A Chinese offline run as a reader sees it (issue 26): the stored texts keep the specification's
English grammar lines (``**Rating**: Hold``, ``FINAL TRANSACTION PROPOSAL: **HOLD**`` …, read back by
``rating.parse_rating`` and ``graph.decision_card``), their prose names ratings, actions, data sources
and the post feed's tally in Chinese, and ``decision_card.display_text`` shows the grammar lines in
Chinese too, so that no English word is left but tickers and product names. English is untouched.

Blockquoted source material (lines starting with ``> ``: the posts and headlines the data feeds wrote,
quoted as the source wrote them) is left out of the scan: it is data, not the engine's text.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.i18n_scan import ALLOWED
from tests.browser.i18n_scan import english_in as _english_in
from tradingagents.graph.decision_card import decision_card, display_text
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.i18n import translator
from tradingagents.rating import RATINGS_5_TIER, parse_rating

TEXTS = ("market_report", "sentiment_report", "news_report", "fundamentals_report", "investment_plan",
         "trader_investment_plan", "final_trade_decision")
# name → (ticker, dates, analysts): a full demo run (an OVERWEIGHT); a second full run settling the first (so its
# decision cites a settled call; on a fund, which the demo market gives no company news that week: a
# "Missing data" section — a company has several headlines every week);
# market-only runs that BUY with entry, target and stop. The state of the last date is scanned.
RUNS = {"NVDA": ("NVDA", ("2024-05-10",), None), "QQQ-settled": ("QQQ", ("2024-05-01", "2024-05-20"), None),
        "AAPL": ("AAPL", ("2024-03-01",), ["market"]), "TSLA": ("TSLA", ("2024-04-15",), ["market"])}
ZH, EN = translator("zh"), translator("en")
CJK = re.compile(r"[\u4e00-\u9fff]")
MY_ALLOWED = ALLOWED | {"alpha"}
"""The contract's terminology writes alpha as 超额收益(alpha): the Latin word is part of the Chinese term."""


def english_in(text: str) -> list[str]:
    return _english_in(text, MY_ALLOWED)


def _run(tmp, language: str, ticker: str, dates: tuple[str, ...], analysts) -> dict:
    config = {"home": str(tmp), "output_language": language}
    graph = TradingAgentsGraph(analysts, config=config) if analysts else TradingAgentsGraph(config=config)
    for date in dates:
        state, rating = graph.propagate(ticker, date)
    return {"state": state, "rating": rating, "card": decision_card(state, 5)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRADINGAGENTS_HOME", str(tmp_path_factory.mktemp("home")))
        return {(name, language): _run(tmp_path_factory.mktemp(f"{name}{language}"), language, *RUNS[name])
                for name in RUNS for language in ("Chinese", "English")}


def _without_quotes(text: str) -> str:
    """The text without its blockquoted source material (posts and headlines as the feeds wrote them)."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("> "))


def test_a_chinese_run_shown_has_no_english_left(runs):
    seen_levels = set()
    for ticker in RUNS:
        state = runs[(ticker, "Chinese")]["state"]
        for key in TEXTS:
            shown = display_text(state[key], ZH)
            assert english_in(_without_quotes(shown)) == [], (ticker, key, english_in(_without_quotes(shown)),
                                                              shown[:600])
            seen_levels |= {label for label in ("**入场价**", "**目标价**", "**止损**") if label in shown}
        # the prose itself (before display) already names ratings, actions and data in Chinese
        assert "get_" not in "".join(state[k] for k in TEXTS)
    assert seen_levels == {"**入场价**", "**目标价**", "**止损**"}  # a BUY's levels were among the texts scanned
    settled = runs[("QQQ-settled", "Chinese")]["state"]
    assert "### 缺失数据" in settled["sentiment_report"] and "数据源在 2024-05-13 至 2024-05-20 期间没有数据。" in settled["sentiment_report"]
    assert "最近一次已结算的决策是 2024-05-01 的" in settled["final_trade_decision"]
    nvda = runs[("NVDA", "Chinese")]["state"]
    assert "帖子数据源的统计：看跌 1、看涨 10、中性 5。" in nvda["sentiment_report"]
    assert "Tone tally" not in nvda["sentiment_report"]
    assert "数据来自社交帖子与公司新闻" in nvda["sentiment_report"]
    assert "根据行情数据与技术指标对 NVDA 的技术面解读。" in nvda["market_report"]
    assert "研究经理建议 **增持**" in nvda["trader_investment_plan"]
    assert "### 证据" in nvda["investment_plan"] and "百分之四十" not in nvda["investment_plan"]  # no formula
    assert display_text(nvda["final_trade_decision"], ZH).startswith("**评级**：增持\n")
    # a HOLD's grammar lines shown in Chinese (the settled fund's second call)
    assert "研究经理建议 **持有**" in settled["trader_investment_plan"]
    assert display_text(settled["final_trade_decision"], ZH).startswith("**评级**：持有\n")
    assert "**操作**：持有\n**信心**：低\n" in display_text(settled["final_trade_decision"], ZH)
    assert display_text(settled["trader_investment_plan"], ZH).endswith("最终交易提议：**持有**")
    assert display_text(settled["investment_plan"], ZH).startswith("**建议**：持有\n")


def test_the_stored_chinese_texts_keep_the_grammar_and_parse_as_before(runs):
    for ticker in RUNS:
        zh, en = runs[(ticker, "Chinese")], runs[(ticker, "English")]
        state = zh["state"]
        assert zh["rating"] == en["rating"] and zh["rating"] in RATINGS_5_TIER
        assert state["final_trade_decision"].startswith(f"**Rating**: {zh['rating']}\n")
        assert parse_rating(state["final_trade_decision"]) == zh["rating"]
        assert parse_rating(state["investment_plan"]) == parse_rating(en["state"]["investment_plan"])
        assert parse_rating(state["trader_investment_plan"]) == parse_rating(en["state"]["trader_investment_plan"])
        assert re.search(r"^\*\*Recommendation\*\*: (Buy|Overweight|Hold|Underweight|Sell)$", state["investment_plan"],
                         re.M)
        assert re.search(r"FINAL TRANSACTION PROPOSAL: \*\*(BUY|HOLD|SELL)\*\*$", state["trader_investment_plan"])
        same = ("rating", "action", "conviction", "entry_price", "price_target", "stop_loss", "scored_horizon")
        assert {k: zh["card"][k] for k in same} == {k: en["card"][k] for k in same}, ticker
        assert zh["card"]["position_size"] and CJK.search(zh["card"]["position_size"])


def test_parse_rating_reads_the_grammar_line_when_the_prose_names_ratings_in_chinese():
    text = ("**Rating**: Underweight\n\n### 执行摘要\n\n对 NVDA 给出减持：研究经理建议买入，交易员提议卖出；"
            "不低于 +0.40 为买入，介于 −0.15 与 +0.15 之间为持有。\n\n**Action**: SELL\n**Conviction**: medium")
    assert parse_rating(text) == "Underweight"
    assert parse_rating("研究经理建议 **持有**。\n\n- 操作：买入 — 按目标权重建立完整仓位。\n\n"
                        "FINAL TRANSACTION PROPOSAL: **BUY**") == "Buy"
    assert parse_rating("**Recommendation**: Overweight\n\n不低于 +0.40 为买入，不高于 −0.40 为卖出。") == "Overweight"
    card = decision_card({"final_trade_decision": text})
    assert (card["rating"], card["action"], card["conviction"]) == ("Underweight", "SELL", "medium")


def test_display_text_rewrites_only_the_grammar_lines():
    text = ("**Rating**: Overweight\n\n### 执行摘要\n\nBuy the dip, said a post: Action: HOLD\n"
            "> **Rating**: quoted\n**Action**: BUY\n**Conviction**: high\n**Entry**: 54.69\n"
            "**Price target**: 57.42\n**Stop-loss**: 50.10\n**Position size**: 半仓\n**Time horizon**: 3-6 个月\n\n"
            "FINAL TRANSACTION PROPOSAL: **SELL**")
    shown = display_text(text, ZH)
    assert shown == ("**评级**：增持\n\n### 执行摘要\n\nBuy the dip, said a post: Action: HOLD\n"
                     "> **Rating**: quoted\n**操作**：买入\n**信心**：高\n**入场价**：54.69\n"
                     "**目标价**：57.42\n**止损**：50.10\n**仓位**：半仓\n**期限**：3-6 个月\n\n"
                     "最终交易提议：**卖出**")
    assert display_text("**Recommendation**: Underweight", ZH) == "**建议**：减持"
    assert display_text("**Recommendation**: something else", ZH) == "**建议**：something else"  # not a rating
    assert display_text("**Rating**: **BUY** (high conviction)", ZH) == "**评级**：**买入** (high conviction)"
    assert display_text("**Conviction**: Medium", ZH) == "**信心**：中"


def test_display_text_in_english_is_the_text_itself(runs):
    for (ticker, language), run in runs.items():
        for key in TEXTS:
            text = run["state"][key]
            assert display_text(text, EN) is text and display_text(text, None) is text, (ticker, language, key)
    assert display_text("", ZH) == ""


def test_the_english_run_has_no_chinese_and_keeps_its_prose(runs):
    for ticker in RUNS:
        state = runs[(ticker, "English")]["state"]
        for key in TEXTS:
            assert not CJK.search(state[key]), (ticker, key)
    nvda = runs[("NVDA", "English")]["state"]
    assert "from social posts and company news." in nvda["sentiment_report"]
    assert "The post feed reports: Tone tally: bearish 1, bullish 10, neutral 5." in nvda["sentiment_report"]
    assert "The Research Manager recommends **Overweight**." in nvda["trader_investment_plan"]
    assert "### The evidence" in nvda["investment_plan"] and "forty percent" not in nvda["investment_plan"]
