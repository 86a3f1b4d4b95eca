"""The exports and the backtest report in Chinese and in English (issue 26).

English is pinned: a fixed run renders to the same Markdown, HTML and card bytes as before the
exports took a language, and to a PDF that looks the same (its text as laid out, every word's box and
every page's pixels: the PDF's bytes depend on the font-subsetting library's version, what it draws
does not). Chinese: every label the exports write is Chinese (no English word is left but names,
tickers and the paper's abbreviations), and the PDF draws the Chinese with the bundled CJK font: the
text reads back with pdftotext and the page's pixels show glyphs where a font without CJK draws nothing.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import re
import subprocess
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest

from studio import export
from tradingagents.backtest import report as bt_report
from tradingagents.backtest.cli import summary_table
from tradingagents.i18n import translator

ZH = translator("zh")
EN = translator("en")

# ---------------------------------------------------------------------------------------------- a fixed run
STATE = {
    "company_of_interest": "NVDA", "trade_date": "2024-05-10",
    "instrument_context": "NVIDIA Corporation (NVDA, NASDAQ, USD)",
    "market_report": "| Signal | Direction |\n|---|---|\n| RSI | up |\n\nThe trend is **up**.",
    "sentiment_report": "Sentiment is mixed.",
    "news_report": "",
    "fundamentals_report": "Margins are wide.",
    "investment_debate_state": {"history": "Bull Analyst: raw"},
    "investment_plan": "Rating: Overweight. Buy on dips.",
    "trader_investment_plan": "FINAL TRANSACTION PROPOSAL: **BUY**\n- Entry: near 101.50\n- Stop-loss: 92.00\n"
                              "- Action: BUY — 3% of the book.",
    "risk_debate_state": {"history": "Aggressive Analyst: raw"},
    "final_trade_decision": ("**Rating**: Overweight\n**Action**: BUY\n**Conviction**: high\n**Entry**: 101.5\n"
                             "**Price target**: 120\n**Stop-loss**: 92\n**Position size**: 3% of the book\n"
                             "**Time horizon**: 3-6 months\n\nThe team leans long."),
    "past_context": "Last time we bought too early.",
}
META = {
    "ticker": "NVDA", "date": "2024-05-10", "llm_label": "offline engine", "data_label": "synthetic demo data",
    "quick_think_llm": "q-model", "deep_think_llm": "d-model",
    "instrument_context": "NVIDIA Corporation (NVDA, NASDAQ, USD)", "invented": False,
    "session_note": "2024-05-11 is a Saturday: analysed as the session of 2024-05-10",
    "data_notes": ["2 CSV rows dropped"], "log_note": "the memory log had 3 entries",
    "analysts": ["market", "social", "news", "fundamentals"], "analyst_execution": "parallel",
    "elapsed_s": 12.345, "by": "alice",
    "usage": {"llm_calls": 14, "tool_calls": 9, "input_tokens": 1000, "output_tokens": 2000},
    "holding_days": 5,
    "debate_turns": [
        {"debate": "invest", "role": "bull", "speaker": "Bull", "round": 1, "text": "Growth is strong."},
        {"debate": "invest", "role": "bear", "speaker": "Bear", "round": 1, "text": "Valuation is stretched."},
        {"debate": "risk", "role": "aggressive", "speaker": "Aggressive", "round": 1, "text": "Size up."},
        {"debate": "risk", "role": "conservative", "speaker": "Conservative", "round": 1, "text": ""},
        {"debate": "risk", "role": "neutral", "speaker": "Neutral", "round": 1, "text": "Stay balanced."},
    ],
}
CLOSES = [100.0 + (i % 7) for i in range(30)]


def _zh_run():
    """The same run with the models' text in Chinese (what a run with output_language Chinese saves)."""
    state, meta = copy.deepcopy(STATE), copy.deepcopy(META)
    state.update({
        "instrument_context": "英伟达公司 (NVDA, NASDAQ, USD)",
        "market_report": "| 信号 | 方向 |\n|---|---|\n| RSI | 向上 |\n\n趋势**向上**。",
        "sentiment_report": "情绪好坏参半。", "fundamentals_report": "利润率很高。",
        "investment_plan": "评级：增持。逢低买入。", "trader_investment_plan": "最终交易提案：买入，仓位 3%。",
        "final_trade_decision": "团队偏多：增持。", "past_context": "上次买得太早。",
    })
    meta.update({"llm_label": "offline engine (no LLM)", "instrument_context": state["instrument_context"],
                 "session_note": "2024-05-11 是星期六：按 2024-05-10 的交易时段分析", "data_notes": ["丢弃了 2 行 CSV"],
                 "log_note": "记忆日志有 3 条", "by": "小明"})
    meta.pop("quick_think_llm")
    meta["debate_turns"] = [dict(t, text=t["text"] and "中文发言。") for t in meta["debate_turns"]]
    return state, meta


# names, tickers and figures that stay as they are in every language
NAMES = {"NVDA", "NASDAQ", "USD", "RSI", "TradingAgents", "Studio", "token", "CR", "ARR", "SR", "MDD", "MACD",
         "SPY", "KDJ", "ZMR", "SMA", "CSV", "alpha", "bps"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'&]+")


def english_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w not in NAMES]


class _Text(HTMLParser):
    """The text a reader sees of an HTML page (the title, aria-labels, the body; not the style)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = False

    def handle_starttag(self, tag, attrs):
        self.skip = tag == "style"
        self.parts += [v or "" for k, v in attrs if k in ("aria-label", "title")]

    def handle_endtag(self, tag):
        self.skip = False

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def visible(doc: str) -> str:
    p = _Text()
    p.feed(doc)
    return " ".join(p.parts)


def _sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def _stable_pdf(pdf: bytes) -> bytes:
    """The PDF without what changes on every call: its creation date, fonts' subset tags, its /ID."""
    pdf = re.sub(rb"/CreationDate \(D:[^)]*\)", b"", pdf)
    pdf = re.sub(rb"/([A-Z]{6})\+", b"/XXXXXX+", pdf)
    return re.sub(rb"/ID \[[^]]*\]", b"", pdf)


# ---------------------------------------------------------------------------------------------- English
def test_english_exports_are_the_same_bytes_as_before_they_took_a_language():
    # pinned again when the card gained the % to target and stop and the Reward:risk row (issue 43):
    # the only change in the Markdown and HTML is those card rows
    decision = export.card(STATE, META, "Overweight")
    for t in (None, EN):
        assert _sha(export.report_markdown(STATE, "Overweight", META, t=t)) == \
            "84d9ac177b7ea91194e3a1bee589ce5d2ed5485cebb05bd8427ae3787417cc8f"
        assert _sha(export.report_html(STATE, "Overweight", META, closes=CLOSES, t=t)) == \
            "335899bae42b7ed7e80e34ce3c152beae34c01b75d404c66beae32c0294814ad"
        assert _sha(export.card_html(decision, export.currency_of(STATE, META), t=t)) == \
            "e32d549a8082b5beb7e7864916006348849e009df528c7647639b57c74e4bfd3"
        assert _sha(export.report_markdown(STATE, None, {}, t=t)) == \
            "8d5697ebcde5bb902349d4fa05d9d6154c520a8204dacd7a03eef64cbf19588a"
        assert export.card_rows(decision, "USD", t=t) == [
            ("Rating", "Overweight"), ("Action", "BUY"), ("Conviction", "High"), ("Entry", "$101.50"),
            ("Price target", "$120.00 (+18.2%)"), ("Stop", "$92.00 (−9.4%)"), ("Reward:risk", "1.9 : 1"),
            ("Position size", "3% of the book"),
            ("Stated horizon", "3-6 months"), ("Scored over", "5 trading days")]
        assert export.provenance_lines(STATE, META, t=t) == [
            "Engine: offline engine (quick q-model, deep d-model)", "Data: synthetic demo data",
            "Analysis date: 2024-05-10; prices read up to that day, never after",
            "Instrument: NVIDIA Corporation (NVDA, NASDAQ, USD)", "Run by: alice", "Run time: 12.3 s"]
    # the calls the pages make today (no t=) still work and give the same
    assert export.report_markdown(STATE, "Overweight", META) == export.report_markdown(STATE, "Overweight", META, t=EN)


def _what_a_reader_sees(pdf: bytes, tmp_path, name: str) -> dict[str, object]:
    """What a person sees of a PDF, not its bytes: the pages, the text as laid out, every word's box
    (pdftotext -bbox, to a tenth of a point) and the pixels of each page rendered by pdftoppm.

    The bytes change with the font-subsetting library's version (fonttools 4.69 writes the same glyphs
    into other bytes than 4.68), so they are no promise; what is drawn where is.
    """
    src = tmp_path / f"{name}.pdf"
    src.write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-layout", str(src), "-"], check=True, capture_output=True,
                          timeout=120).stdout
    bbox = subprocess.run(["pdftotext", "-bbox", str(src), "-"], check=True, capture_output=True, text=True,
                          timeout=120).stdout
    words = re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>',
                       bbox)
    boxes = "\n".join(f"{w}@" + ",".join(f"{float(v):.1f}" for v in box) for *box, w in words)
    subprocess.run(["pdftoppm", "-r", "40", "-gray", str(src), str(tmp_path / name)], check=True, timeout=120)
    pages = sorted(tmp_path.glob(f"{name}-*.pgm"))
    pixels = hashlib.sha256(b"".join(p.read_bytes() for p in pages)).hexdigest()
    return {"pages": len(pages), "text": _sha(text.decode()), "boxes": _sha(boxes), "pixels": pixels}


def test_the_english_pdf_looks_the_same_as_before(tmp_path):
    assert export.cjk_font_available(), "install fonts-dejavu-core and fonts-wqy-microhei (make fonts)"
    full = _what_a_reader_sees(export.report_pdf(STATE, "Overweight", META, closes=CLOSES), tmp_path, "full")
    empty = _what_a_reader_sees(export.report_pdf(STATE, None, {}, closes=[], t=EN), tmp_path, "empty")
    assert full == FULL_PDF_SEEN, full
    assert empty == EMPTY_PDF_SEEN, empty


def test_what_a_reader_sees_tells_a_changed_handout_apart(tmp_path):
    """The fingerprint is not blind: one changed word, or the same words laid out elsewhere, shows."""
    base = _what_a_reader_sees(export.report_pdf(STATE, "Overweight", META, closes=CLOSES), tmp_path, "a")
    worded = copy.deepcopy(STATE)
    worded["fundamentals_report"] = "Margins are thin."
    changed = _what_a_reader_sees(export.report_pdf(worded, "Overweight", META, closes=CLOSES), tmp_path, "b")
    assert changed["text"] != base["text"] and changed["pixels"] != base["pixels"]
    moved = copy.deepcopy(STATE)
    moved["sentiment_report"] = "Sentiment is\n\nmixed."
    spaced = _what_a_reader_sees(export.report_pdf(moved, "Overweight", META, closes=CLOSES), tmp_path, "c")
    assert spaced["boxes"] != base["boxes"] and spaced["pixels"] != base["pixels"]


# Taken from the handout whose bytes were pinned before (fonttools 4.68, sha256 4184546d…): the same with 4.69.
# Pinned again when the card gained the % to target and stop and the Reward:risk row (issue 43): pdftotext
# shows those card cells and the card's grid one row taller, nothing else.
# Pinned again when the pages after the summary became the committee's handout (issue 43, studio.export.
# handout_markdown): page 1's words and their boxes are unchanged (pdftotext -bbox of page 1 compared before and
# after); from page 2 the run's facts list (models, tokens), the decision's grammar lines and the "FINAL
# TRANSACTION PROPOSAL" line are gone, the debates and the rest as before.
FULL_PDF_SEEN: dict[str, object] = {
    "pages": 3, "text": "0b58e3c79f50409342a09b60a76312516d29f91c43cc0808767a8bd4792e9642",
    "boxes": "7efeab12416d9c98fbc6ae8487befa15ecf95129b26b25f905ce08d45d36b3a4",
    "pixels": "2479e891ad1283850d4a9db54076be237ba7b85ceaca77ea39e6b331cc098db1"}
EMPTY_PDF_SEEN: dict[str, object] = {
    "pages": 2, "text": "53d8658c03ff47d6c22c6d8675a886a966a650bde6a6700c1c371385a8eacd1a",
    "boxes": "a540bbfb6a3e1d50c3470a75216565b38596c2f5beeba68f40e6edfbe54fd2aa",
    "pixels": "6bf397315729310e71cc34ba2a31a1d1a8c4f5f6e79f51303011dc8aa94c8ae1"}


# ---------------------------------------------------------------------------------------------- Chinese
def test_the_chinese_card_shows_chinese_labels_and_translated_values_but_keeps_the_canonical_card():
    decision = export.card(STATE, META, "Overweight")
    rows = export.card_rows(decision, "USD", t=ZH)
    assert rows == [("评级", "增持"), ("操作", "买入"), ("信心", "高"), ("入场价", "$101.50"), ("目标价", "$120.00 (+18.2%)"),
                    ("止损", "$92.00 (−9.4%)"), ("盈亏比", "1.9 : 1"), ("仓位", "3% of the book"), ("声明的期限", "3-6 months"),
                    ("结算区间", "5 个交易日")]
    assert decision["rating"] == "Overweight" and decision["action"] == "BUY"  # data stays canonical
    doc = export.card_html(decision, "USD", t=ZH)
    assert 'aria-label="决策卡"' in doc and "Decision card" not in doc and ">增持<" in doc
    md = export.card_markdown(decision, "USD", t=ZH)
    assert md.startswith("## 决策卡\n") and "| 评级 | 增持 |" in md


def test_the_chinese_markdown_and_html_have_no_english_label_left():
    state, meta = _zh_run()
    md = export.report_markdown(state, "Overweight", meta, t=ZH)
    for part in ("# NVDA — 2024-05-10: **增持**", "## 决策卡", "## 投资组合经理的决策", "## 分析师报告", "### 市场分析师",
                 "### 新闻分析师\n\n_本次运行未生成。_", "## 研究辩论（多头 vs 空头）", "**多头研究员** · 第 1 轮",
                 "**保守型分析师** · 第 1 轮\n\n> _（无文本）_", "## 研究经理的计划", "## 交易员的提案", "## 风险辩论",
                 "## 参考的过往决策", "- 模型：离线引擎（无模型）", "- 数据：合成的演示数据",
                 "- 分析师：市场分析师, 情绪分析师, 新闻分析师, 基本面分析师（并行）", "- 运行时间：12.3 秒",
                 "- **数据**：丢弃了 2 行 CSV", "- 交易时段：2024-05-11 是星期六"):
        assert part in md, part
    assert english_words(md) == [], english_words(md)
    # "vs" is the one Latin word the Chinese heading keeps; it is in the catalogue's own text
    doc = export.report_html(state, "Overweight", meta, closes=CLOSES, t=ZH)
    shown = visible(doc)
    assert '<html lang="zh-Hans">' in doc and "<title>TradingAgents 报告 — NVDA 2024-05-10</title>" in doc
    assert "由 TradingAgents Studio 生成。不构成投资建议。" in shown and "收盘价 100.00 → 101.00" in shown
    assert english_words(shown) == [], english_words(shown)
    # the same run in English keeps its English headings (the language is the argument, nothing global)
    assert "## Analyst reports" in export.report_markdown(state, "Overweight", meta)


NAMES.add("vs")


def _pdf_text(pdf: bytes, tmp_path, *args: str) -> str:
    src = tmp_path / "zh.pdf"
    src.write_bytes(pdf)
    return subprocess.run(["pdftotext", *args, str(src), "-"], check=True, capture_output=True, text=True,
                          timeout=120).stdout


def _ink(pdf: bytes, tmp_path, word: str, name: str) -> tuple[int, int]:
    """Dark pixels inside the box where page 1 lays out ``word`` (pdftotext -bbox of the CJK handout,
    rendered by pdftoppm at 72 dpi, so a PDF point is a pixel), and the box's area."""
    from PIL import Image

    src = tmp_path / f"{name}.pdf"
    src.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", "72", "-png", "-f", "1", "-l", "1", "-singlefile", str(src),
                    str(tmp_path / name)], check=True, timeout=120)
    page = Image.open(tmp_path / f"{name}.png").convert("L")
    box = WORD_BOXES[word]
    crop = page.crop(box)
    return sum(crop.histogram()[:128]), crop.width * crop.height


WORD_BOXES: dict[str, tuple[int, int, int, int]] = {}


def test_the_chinese_pdf_draws_its_chinese_with_the_cjk_font(tmp_path, caplog, monkeypatch):
    assert export.cjk_font_available(), "install fonts-dejavu-core and fonts-wqy-microhei (make fonts)"
    state, meta = _zh_run()
    with caplog.at_level(logging.WARNING, logger="fpdf"):
        pdf = export.report_pdf(state, "Overweight", meta, closes=CLOSES, t=ZH)
    assert not [r for r in caplog.records if "missing the following glyphs" in r.getMessage()]
    assert any("WenQuanYi" in f.decode() for f in re.findall(rb"/BaseFont\s*/([A-Za-z0-9+\-]+)", pdf))
    page1 = _pdf_text(pdf, tmp_path, "-layout", "-f", "1", "-l", "1")
    for part in ("NVDA — 2024-05-10", "增持", "决策卡", "评级", "操作", "信心", "入场价", "目标价", "止损", "仓位",
                 "结算区间", "5 个交易日", "价格与决策", "2024-05-10：增持", "团队投票", "买入", "减持", "卖出",
                 "市场分析师", "研究经理", "交易员", "投资组合经理", "来源说明", "引擎：离线引擎（无模型）",
                 "数据：合成的演示数据", "分析日期：2024-05-10", "运行者：小明", "由 TradingAgents Studio 生成"):
        assert part in page1, part
    whole = _pdf_text(pdf, tmp_path, "-layout")
    for part in ("分析师报告", "多头研究员 · 第 1 轮", "风险辩论", "中文发言。", "趋势向上"):
        assert part in whole, part
    assert english_words(whole) == [], english_words(whole)
    # where the handout lays out its headings, the page has glyphs' pixels; with a font that has no
    # CJK glyphs (the fallback font taken away) the same boxes are empty: the test can tell them apart
    bbox = _pdf_text(pdf, tmp_path, "-bbox", "-f", "1", "-l", "1")
    for word in ("决策卡", "团队投票", "来源说明"):
        m = re.search(rf'xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">{word}</word>', bbox)
        assert m, word
        WORD_BOXES[word] = tuple(int(float(v)) for v in m.groups())  # type: ignore[assignment]
    monkeypatch.setattr(export, "CJK_FONT", "wqy/no-such-font.ttc")
    with caplog.at_level(logging.WARNING, logger="fpdf"):
        caplog.clear()
        blank = export.report_pdf(state, "Overweight", meta, closes=CLOSES, t=ZH)
    assert [r for r in caplog.records if "missing the following glyphs" in r.getMessage()]
    for word in WORD_BOXES:
        drawn, area = _ink(pdf, tmp_path, word, "cjk")
        missing, _ = _ink(blank, tmp_path, word, "nocjk")
        assert drawn > area * 0.08, (word, drawn, area)  # strokes of three or four characters
        assert missing < drawn / 10, (word, missing, drawn)


# ---------------------------------------------------------------------------------------------- the backtest report
DAYS = ["2024-06-03", "2024-06-04", "2024-06-05", "2024-06-06"]
_M = {"cr": 0.0312, "arr": 0.41, "sharpe": 1.234, "mdd": 0.021, "hit_rate": 0.5, "avg_alpha": 0.004,
      "turnover": 1.5, "cr_ci": [-0.02, 0.08], "sharpe_ci": [-0.5, 2.5], "alpha": 0.12, "alpha_ci": [-0.1, 0.3],
      "p_value_vs_buy_hold": 0.2345}
BT_METRICS = {"NVDA": {"TradingAgents": dict(_M), "TradingAgents (no memory)": dict(_M, cr=0.01),
                       "Buy & Hold": dict(_M, cr=0.02, hit_rate=None, p_value_vs_buy_hold=None),
                       "MACD": dict(_M, cr=-0.01), "Benchmark (SPY)": dict(_M, cr=0.015)},
              "control": {"worlds": 20, "by_ticker": {"NVDA": {
                  "text": "The team beat Buy & Hold in 9 of 20 worlds with no edge;",
                  "excess_cr": {"mean": 0.001, "p05": -0.03, "p95": 0.04}, "real_beats_share_of_worlds": 0.65}}}}
BT_INFO = {"id": "NVDA_x", "folder": "/tmp/bt/NVDA_x", "llm": "offline engine", "data": "synthetic demo data",
           "spec": {"tickers": ["NVDA"], "start": DAYS[0], "end": DAYS[-1], "every": 1, "allow_short": False,
                    "cost_bps": 5.0, "seed": 7, "portfolio": None, "blind": True, "control": 20},
           "positions": {"Buy": 1.0, "Overweight": 0.5, "Hold": "keep", "Underweight": 0.0, "Sell": 0.0}}
BT_PLANS = {"NVDA": SimpleNamespace(days=DAYS, steps=DAYS[:2], closes=[100.0, 101.0, 99.5, 102.0])}
_EQ = [1.0, 1.01, 0.995, 1.02]
BT_DATA = {"metrics": BT_METRICS, "control": BT_METRICS["control"], "notes": ["No benchmark curve for XYZ: none"],
           "equity": {"NVDA": {k: _EQ for k in BT_METRICS["NVDA"]}}, "days": {"NVDA": DAYS},
           "decisions": {"TradingAgents": [
               {"date": DAYS[0], "ticker": "NVDA", "rating": "Buy", "position": 1.0, "alpha": 0.01},
               {"date": DAYS[1], "ticker": "NVDA", "rating": "Hold", "position": 1.0, "alpha": None}]}}


def test_the_english_backtest_report_and_summary_are_the_same_bytes_as_before():
    # pinned again when the report gained the verdict on the edge (issue 43): the diff against the old bytes is
    # the verdict line, ARR and alpha per year as dashes with the line saying why (4 trading days), and the
    # folder by its name instead of its absolute path
    for lang in (None, "en"):
        assert _sha(bt_report.markdown(BT_INFO, BT_PLANS, BT_DATA, lang=lang)) == \
            "9da870e3cc893e776aa39eac3d84481a12530e2b0e4e521ecdd518ef9b0da16e"
        assert _sha(bt_report.html_page(BT_INFO, BT_PLANS, BT_DATA, lang=lang)) == \
            "1f7a8ca71b9b286f5efa5c3b9692fc14201a3178a8912170df48c1eee8aa5eb7"
    assert summary_table(BT_METRICS, 5.0).splitlines()[:3] == [
        "NVDA",
        "  Strategy                    CR %       CR 95% CI    SR      SR 95% CI  MDD %  p vs B&H",
        "  TradingAgents              +3.12  [-2.00, +8.00]  1.23  [-0.50, 2.50]   2.10     0.234"]
    assert "costs 5 bps per unit of turnover on every strategy; 95% stationary-bootstrap intervals" in \
        summary_table(BT_METRICS, 5.0)


def _zh_backtest_data():
    data = copy.deepcopy(BT_DATA)
    data["notes"] = ["NVDA 没有基准曲线"]
    data["control"]["by_ticker"]["NVDA"]["text"] = "团队在 20 个无优势世界中有 9 个跑赢买入持有；"
    data["metrics"] = dict(data["metrics"], control=data["control"])
    info = dict(BT_INFO, llm="offline engine (no LLM)", folder="/回测/NVDA_1")
    return info, data


def test_the_chinese_backtest_report_has_chinese_labels_and_keeps_names_and_figures():
    info, data = _zh_backtest_data()
    md = bt_report.markdown(info, BT_PLANS, data, lang="zh")
    for part in ("# 回测 NVDA：2024-06-03 → 2024-06-06", "仓位：买入 1.0, 增持 0.5, 持有 保持", "仅做多",
                 "成本：每单位换手 5 个基点", "**盲测运行**", "模型：离线引擎（无模型）；数据：合成的演示数据",
                 "## NVDA（4 个交易日，2 个决策）", "| 策略 | CR % | ARR % | SR | MDD % | 命中率 % |",
                 "| 买入持有 | +2.00 |", "| TradingAgents（无记忆） |", "| 基准（SPY） |", "| MACD | -1.00 |",
                 "## 无优势对照（20 个随机游走世界）", "## 决策", "| 日期 | 代码 | 评级 | 仓位 | 超额收益(alpha) % |",
                 "| 2024-06-03 | NVDA | 买入 | 1 | +1.00 |"):
        assert part in md, part
    assert english_words(md) == [], english_words(md)
    doc = bt_report.html_page(info, BT_PLANS, data, lang="zh")
    shown = visible(doc)
    assert "<html lang='zh-Hans'>" in doc and "NVDA：净值（1.0 = 起点）" in shown and "2024-06-03：买入（仓位 1）" in shown
    assert english_words(shown) == [], english_words(shown)
    # a translated series keeps its strategy's colour and line style
    en_doc = bt_report.html_page(info, BT_PLANS, data, lang="en")
    for colour in ("#1f6feb", "#8250df", "#bf8700", "#953800"):
        assert doc.count(f'stroke="{colour}"') == en_doc.count(f'stroke="{colour}"') > 0, colour
    assert doc.count('stroke-dasharray="5 3"') == en_doc.count('stroke-dasharray="5 3"') > 0
    table = summary_table(data["metrics"], 0.0, t=ZH)
    assert "策略" in table and "买入持有" in table and "（论文的设定）" in table
    assert english_words(table) == [], english_words(table)


def test_the_backtest_report_follows_ui_language_when_no_language_is_given(monkeypatch):
    info, data = _zh_backtest_data()
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "zh")
    assert bt_report.markdown(info, BT_PLANS, data).startswith("# 回测 NVDA")
    assert bt_report.markdown(dict(info, ui_language="en"), BT_PLANS, data).startswith("# Backtest NVDA")
    assert bt_report.markdown(info, BT_PLANS, data, lang="en").startswith("# Backtest NVDA")
    monkeypatch.delenv("TRADINGAGENTS_UI_LANGUAGE")
    assert bt_report.markdown(info, BT_PLANS, data).startswith("# Backtest NVDA")


@pytest.mark.parametrize("fn", [export.card_rows, export.card_markdown, export.card_html, export.report_markdown,
                                export.report_html, export.report_pdf, export.provenance_lines,
                                export.debate_turns_markdown])
def test_every_text_function_takes_a_keyword_only_translator(fn):
    import inspect

    param = inspect.signature(fn).parameters["t"]
    assert param.kind is inspect.Parameter.KEYWORD_ONLY and param.default is None


@pytest.mark.parametrize("invented", [False, True])
def test_the_translated_report_has_every_part_the_english_renderer_has(invented):
    """The Chinese report has the English one's parts (one renderer, ``storage.render_report_markdown``,
    with ``t``): the same headings at the same levels, the same facts, the same bodies."""
    meta = dict(META, invented=invented, missing_data=["no news for NVDA"], version_note="re-run 2")
    for state in (STATE, {"final_trade_decision": "x"}):
        en = export.report_markdown(state, "Hold", meta)
        zh = export.report_markdown(state, "Hold", meta, t=ZH)

        def shape(md: str) -> list[str]:
            return [m.group(1) for m in re.finditer(r"^(#+ |- |> |\| )", md, re.M)]

        assert shape(en) == shape(zh)
        bodies = [line for line in en.splitlines() if line and not re.match(r"^(#|- |\*\*|> |\|)", line)
                  and not line.startswith("_")]
        # the agents' text is as written, its rating/action lines shown in the reader's language
        from tradingagents.graph.decision_card import display_text

        missing = [line for line in bodies if line not in zh and display_text(line, ZH) not in zh]
        assert not missing, missing
    if invented:
        assert "- **虚构的标的**：演示市场未收录 NVDA" in zh


def test_a_missing_benchmark_is_said_in_the_readers_language_with_the_sources_words_apart():
    info, data = _zh_backtest_data()
    data["notes"] = [{"kind": "no_benchmark", "ticker": "NVDA", "benchmark": "SPY",
                      "error": "No prices for SPY between 2024-06-03 and 2024-06-06."}]
    md = bt_report.markdown(info, BT_PLANS, data, lang="zh")
    assert "> 没有 NVDA 的基准曲线：数据源在这段时间没有给出其基准 SPY 的价格。\n>\n> 数据源的原话：`No prices" in md
    doc = bt_report.html_page(info, BT_PLANS, data, lang="zh")
    assert "<p class='note'>没有 NVDA 的基准曲线：数据源在这段时间没有给出其基准 SPY 的价格。</p>" in doc
    folded = "<details class='note'><summary>数据源的原话</summary><code>No prices for SPY"
    assert folded in doc
    apart = doc.split(folded, 1)[0] + doc.split(folded, 1)[1].split("</details>", 1)[1]
    assert english_words(visible(apart)) == [], english_words(visible(apart))  # the source's words only folded
    # English: the one line it always was
    en = bt_report.markdown(dict(info, ui_language="en"), BT_PLANS, data, lang="en")
    assert "> No benchmark curve for NVDA: No prices for SPY between 2024-06-03 and 2024-06-06.\n" in en
