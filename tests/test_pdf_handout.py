"""The PDF handout a committee keeps (issue 43): every line of the Chinese handout reads back as written
(no Latin text drawn through another font's glyphs), and after the summary page the reports read as prose
with tables, the debates as attributed turns, without tool names, the scoring formula or raw log lines."""

from __future__ import annotations

import copy
import subprocess

import pytest

from studio import export
from tests.test_i18n_exports import META, STATE, _zh_run
from tradingagents.i18n import translator

ZH = translator("zh")
LONG_INSTRUMENT = ("600519.SS — Kweichow Moutai Co., Ltd. (Consumer Defensive / Beverages—Wineries & Distilleries, "
                   "Shanghai Stock Exchange, CNY)")


def _text(pdf: bytes, tmp_path, *args: str) -> str:
    src = tmp_path / "handout.pdf"
    src.write_bytes(pdf)
    return subprocess.run(["pdftotext", *args, str(src), "-"], check=True, capture_output=True, text=True,
                          timeout=120).stdout


@pytest.fixture(autouse=True)
def _fonts():
    if not export.cjk_font_available():
        pytest.fail("install fonts-dejavu-core and fonts-wqy-microhei (make fonts)")


def test_a_wrapped_chinese_line_keeps_its_latin_text_after_the_first_line(tmp_path):
    """A paragraph that begins in the CJK font and wraps: its second line is drawn in the page's font. fpdf2
    named no font for it, so a reader saw "CNY)" as "IAMA" and figures as "V-DA0N" (the bold badge or the
    ladder had set another font on the page)."""
    state, meta = _zh_run()
    state["instrument_context"] = meta["instrument_context"] = LONG_INSTRUMENT + "; data: synthetic demo data"
    state["market_report"] = ("| 信号 | 读数 | 方向 |\n|---|---|---|\n| 趋势 | 收盘价 1635.49 低于 50 日均线 1668.94，"
                              "长期趋势 50 日均线 1668.94 低于 200 日均线 1692.85 | 看跌 |\n")
    pdf = export.report_pdf(state, "Sell", meta, closes=[100.0 + i for i in range(30)], t=ZH)
    page1 = " ".join(_text(pdf, tmp_path, "-f", "1", "-l", "1").split())
    assert "上海证券交易所, CNY)" in page1, page1
    whole = " ".join(_text(pdf, tmp_path).split())
    for figure in ("1635.49", "1668.94", "1692.85"):
        assert whole.count(figure) >= 1, (figure, whole)
    # an English handout never starts a line in the fallback font: its wrapped instrument line as before
    english = " ".join(_text(export.report_pdf(copy.deepcopy(STATE), "Overweight", META), tmp_path).split())
    assert "NVIDIA Corporation (NVDA, NASDAQ, USD)" in english


def _offline_run(ta_home, ticker: str, lang: str, monkeypatch) -> dict:
    import json

    from tradingagents import cli

    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", lang)
    assert cli.main([ticker, "2024-05-10"]) == 0
    return json.loads((ta_home / "results" / ticker / "2024-05-10" / "state.json").read_text(encoding="utf-8"))


def _scale(lang: str) -> str:
    from tradingagents.llm_clients.offline.common import SCALE_TEXT

    return translator(lang)(SCALE_TEXT)


@pytest.mark.parametrize("ticker, lang", [("NVDA", "en"), ("600519.SS", "zh")])
def test_after_the_summary_the_handout_reads_as_prose_tables_and_attributed_turns(ta_home, monkeypatch, tmp_path,
                                                                                 capsys, ticker, lang):
    run = _offline_run(ta_home, ticker, lang, monkeypatch)
    t = translator(lang)
    pdf = export.report_pdf(run["state"], run["rating"], run["meta"], closes=[100.0 + i for i in range(30)], t=t)
    summary = _text(pdf, tmp_path, "-f", "1", "-l", "1")
    assert t("Decision card") in summary and t("The team's votes") in summary and t("Provenance") in summary
    body = _text(pdf, tmp_path, "-layout", "-f", "2")
    flat = " ".join(body.split())
    # the reports, the plan and the proposal: each under its heading, the market report's signals as a table
    for heading in (t("Portfolio Manager's decision"), t("Analyst reports"), t.p("role", "Market Analyst"),
                    t("Research Manager's plan"), t("Trader's proposal"), t("Risk debate")):
        assert heading in body, heading
    head = {"en": ("Signal", "Reading", "Direction"), "zh": ("信号", "读数", "方向")}[lang]  # the engine's own words
    assert re.search(r"^\s*" + r"\s{2,}".join(head), body, re.M), "the signals table"
    # the debates as turns, each headed by its speaker and round
    for role in ("Bull Researcher", "Bear Researcher", "Aggressive Analyst", "Conservative Analyst",
                 "Neutral Analyst"):
        assert f"{t.p('role', role)} · {t('round {n}', n=1)}" in body, role
    # none of what a committee should not read: function names, the formula, raw feed lines, token counts,
    # the grammar lines the card already shows, the per-report footer
    assert not re.search(r"\bget_[a-z]", body), body
    assert " ".join(_scale(lang).split())[:40] not in flat
    assert "@demo_trader" not in body and "T12:" not in body
    assert t("LLM calls: {llm}, tool calls: {tools}, tokens in/out: {tokens_in}/{tokens_out}", llm=1, tools=1,
             tokens_in=1, tokens_out=1)[:6] not in body
    assert "FINAL TRANSACTION PROPOSAL" not in body and t("FINAL TRANSACTION PROPOSAL") not in body
    assert "no language model was used" not in body and "未使用任何语言模型" not in body
    # the headlines one to a line, not run together into one paragraph
    assert len(re.findall(r"^\s*•\s*(?:Synthetic headline:|合成新闻：)", body, re.M)) >= 3, body
    if lang == "zh":
        from tests.test_i18n_exports import english_words

        # names of companies and indicators, tickers and the synthetic headlines' data stay as they are
        prose = re.sub(r"Synthetic headline:.*?\)|Kweichow Moutai Co\., Ltd\.|S&P", "", flat)
        left = {w for w in english_words(prose)} - {"MACD", "RSI", "ATR", "EPS", "Q", "SS", "TradingAgents"}
        assert not left, left


import re  # noqa: E402 - used by the tests above


def test_the_instrument_line_leaves_the_data_source_to_its_own_line():
    state = {"instrument_context": LONG_INSTRUMENT + "; data: synthetic demo data", "trade_date": "2024-05-10"}
    lines = export.provenance_lines(state, {"data_label": "synthetic demo data"}, t=ZH)
    assert lines[1] == "数据：合成的演示数据" and lines[3] == "标的：" + LONG_INSTRUMENT.replace(
        "Consumer Defensive / Beverages—Wineries & Distilleries", "防御性消费 / 酒类酿造").replace(
        "Shanghai Stock Exchange", "上海证券交易所")  # sector and exchange names in Chinese
    assert export.instrument_shown("NVDA — NVIDIA (NASDAQ, USD)") == "NVDA — NVIDIA (NASDAQ, USD)"


def test_handout_text_keeps_the_prose_and_drops_what_a_reader_should_not_see():
    from tradingagents.llm_clients.offline.common import SCALE_TEXT

    past = ("[2024-05-03 | NVDA | Buy | +3.2% | +1.1% | 5d]\n\nDECISION:\nWe bought the breakout.\n\nREFLECTION:\n"
            "The breakout held.\n\n<!-- exact raw=0.0321 alpha=0.0114 -->")
    assert export.handout_text(past) == "We bought the breakout.\n\nThe breakout held."
    report = ("Technical reading of NVDA from get_stock_data and `get_indicators`.\n\n### Voices\n\n"
              "2024-05-10T12:04:00 @demo_trader_1 [bearish] (54 likes): heavy\n\n### Summary\n\nScoring: "
              + SCALE_TEXT + " Net +1, hence Hold.\n\n**Rating**: Hold\nFINAL TRANSACTION PROPOSAL: **HOLD**")
    shown = export.handout_text(report, grammar=True)
    assert shown == ("Technical reading of NVDA from the price history and the technical indicators.\n\n"
                     "### Summary\n\nNet +1, hence Hold."), shown
    zh = export.handout_text("数据来自 get_news。", ZH)
    assert zh == "数据来自 公司新闻。"
