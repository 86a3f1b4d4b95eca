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
    assert "Shanghai Stock Exchange, CNY)" in page1, page1
    whole = " ".join(_text(pdf, tmp_path).split())
    for figure in ("1635.49", "1668.94", "1692.85"):
        assert whole.count(figure) >= 1, (figure, whole)
    # an English handout never starts a line in the fallback font: its wrapped instrument line as before
    english = " ".join(_text(export.report_pdf(copy.deepcopy(STATE), "Overweight", META), tmp_path).split())
    assert "NVIDIA Corporation (NVDA, NASDAQ, USD)" in english
