"""Exports (Markdown, HTML, PDF) of a real offline run and of hostile model text: attributed debate
turns in every format, only http/https/mailto links, no script in the HTML, CJK in the PDF."""

from __future__ import annotations

import logging
import re
import zlib
from html.parser import HTMLParser

import pytest

from studio import export
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.storage.files_runs import load_run

HOSTILE = "\n".join([
    "Buy it. [x](javascript:alert(1)) and [y]( JaVaScRiPt:alert(2) ) and [z](java\tscript:alert(3))",
    "[ok](https://example.com/a) [mail](mailto:pm@example.com) [rel](/etc/passwd) [d](data:text/html,<b>)",
    "[ent](&#106;avascript:alert(4)) [a [nested]](javascript:alert(5)) <javascript:alert(6)>",
    "![img](http://evil.example/pixel.png) <img src=x onerror=alert(7)> <script>alert(8)</script>",
    '<a href="javascript:alert(9)" onclick="alert(10)">a</a> <svg onload=alert(11)>',
    "[ref]: javascript:alert(12)",
    "<!-- ENTRY_END -->", "Bear Researcher: a forged turn inside the bull's text", "\ud800 lone surrogate",
    "### Neutral Analyst · round 9", "中文测试：买入 日本語テスト 한국어",
])


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]

    def handle_data(self, data):
        self.text.append(data)


def _parse(doc: str) -> _Collect:
    c = _Collect()
    c.feed(doc)
    c.close()
    return c


def assert_inert_html(doc: str) -> None:
    c = _parse(doc)
    assert "script" not in c.tags and "img" not in c.tags and "iframe" not in c.tags
    assert not [a for a in c.attrs if a[1].lower().startswith("on")]
    for tag, name, value in c.attrs:
        if name in ("href", "src", "action", "formaction", "xlink:href"):
            assert re.match(r"^(https?://|mailto:)", value), (tag, name, value)
    assert "javascript:" not in " ".join(v for _, _, v in c.attrs).lower()


@pytest.fixture(scope="module")
def saved_run(tmp_path_factory):
    home = tmp_path_factory.mktemp("export_home")
    cfg = resolve_config({"home": str(home)})
    TradingAgentsGraph(config=cfg).propagate("NVDA", "2024-05-10")
    return load_run(cfg, "NVDA", "2024-05-10")


def _hostile_run(saved_run):
    state = dict(saved_run["state"])
    meta = dict(saved_run["meta"])
    state["final_trade_decision"] = HOSTILE + "\n\n" + str(state.get("final_trade_decision"))
    state["market_report"] = HOSTILE
    turns = [dict(t) for t in meta["debate_turns"]]
    turns[0]["text"] = HOSTILE
    meta["debate_turns"] = turns
    return state, meta


def test_debate_turns_are_separate_attributed_paragraphs_in_markdown_html_and_pdf(saved_run):
    state, rating, meta = saved_run["state"], saved_run["rating"], saved_run["meta"]
    turns = meta["debate_turns"]
    risk = [t for t in turns if t["debate"] == "risk"]
    assert {t["role"] for t in risk} == {"aggressive", "conservative", "neutral"}
    md = export.report_markdown(state, rating, meta)
    for t in turns:
        name = {"bull": "Bull Researcher", "bear": "Bear Researcher", "aggressive": "Aggressive Analyst",
                "conservative": "Conservative Analyst", "neutral": "Neutral Analyst"}[t["role"]]
        assert f"**{name}** · round {t['round']}\n\n> {t['text'].splitlines()[0]}" in md
    risk_section = md[md.index("## Risk debate"):]
    assert risk_section.count("\n> ") >= len(risk)  # each turn quoted under its own heading
    doc = export.report_html(state, rating, meta)
    c = _parse(doc)
    assert c.tags.count("blockquote") >= len(turns)
    assert "<strong>Aggressive Analyst</strong> · round 1" in doc
    assert "<strong>Conservative Analyst</strong> · round 1" in doc
    pdf = export.report_pdf(state, rating, meta)
    assert pdf.startswith(b"%PDF-") and len(pdf) > 5_000


def test_hostile_text_leaves_no_live_link_or_script_in_any_export(saved_run):
    state, meta = _hostile_run(saved_run)
    md = export.report_markdown(state, "Buy", meta)
    assert "javascript:alert(1)" not in md.replace("\\(", "").replace("](", "")
    assert "[x](javascript" not in md and "](javascript" not in md.lower() and "](java\tscript" not in md
    unescaped = re.compile(r"(?<!\\)<(script|img|a |svg|!--)")
    assert not unescaped.search(md), unescaped.search(md)
    assert "&lt;script>" in md  # shown literally, not dropped
    assert "[ok](https://example.com/a)" in md and "[mail](mailto:pm@example.com)" in md
    assert "\ud800" not in md and "\ufffd lone surrogate" in md
    md.encode("utf-8")  # valid UTF-8
    # the forged turn stays inside the first bull turn, quoted
    assert "> Bear Researcher: a forged turn inside the bull's text" in md
    doc = export.report_html(state, "Buy", meta)
    doc.encode("utf-8")
    assert_inert_html(doc)
    hrefs = [v for _, k, v in _parse(doc).attrs if k == "href"]
    assert "https://example.com/a" in hrefs and "mailto:pm@example.com" in hrefs
    assert "evil.example" not in " ".join(hrefs)
    assert "<!-- ENTRY_END -->" not in doc  # the text shows, escaped, as text
    pdf = export.report_pdf(state, "Buy", meta)
    assert b"/JavaScript" not in pdf and b"/URI" not in pdf and b"/Launch" not in pdf


@pytest.mark.parametrize("payload", [
    "<script>alert(1)</script>", "<scr<script>ipt>alert(1)</script>", "\"><svg/onload=alert(1)>",
    "[a](javascript:alert(1))", "[a](vbscript:msgbox)", "[a](  javascript&#58;alert(1))", "<<script>>",
    "```\n<script>x</script>\n```", "`<img src=x onerror=alert(1)>`", "| a | <b onmouseover=x>b</b> |\n|---|---|\n| 1 | 2 |",
    "\ud800\udfff\ud800", "[a](https://ok.example/\"onmouseover=\"alert(1))",
])
def test_markdown_to_html_is_inert_for_each_hostile_payload(payload):
    assert_inert_html(export.markdown_to_safe_html(payload))
    assert_inert_html(export.report_html({"final_trade_decision": payload, "market_report": payload}, "Sell", {}))


def test_one_megabyte_of_model_text_exports_whole_and_inert():
    big = ("Word [x](javascript:alert(1)) <script>y</script> 价格 " * 20_000)[:1_000_000]
    doc = export.report_html({"final_trade_decision": big}, "Hold", {})
    md = export.report_markdown({"final_trade_decision": big}, "Hold", {})
    assert_inert_html(doc)
    assert "](javascript" not in md and not re.search(r"(?<!\\)<script", md)


def test_safe_url_allows_only_http_https_and_mailto():
    assert export.safe_url("https://a.example/x?y=1") == "https://a.example/x?y=1"
    assert export.safe_url("mailto:a@b.example") == "mailto:a@b.example"
    for bad in ("javascript:alert(1)", " JAVASCRIPT:x", "java\nscript:x", "&#106;avascript:x", "data:text/html,x",
                "file:///etc/passwd", "/relative", "//host/x", "http:no-host", "vbscript:x", ""):
        assert export.safe_url(bad) is None, bad


def _pdf_font_names(pdf: bytes) -> set[str]:
    return {m.decode() for m in re.findall(rb"/BaseFont\s*/([A-Za-z0-9+\-]+)", pdf)}


def test_pdf_draws_cjk_text_with_an_embedded_cjk_font(caplog):
    assert export.cjk_font_available(), "install fonts-dejavu-core and fonts-wqy-microhei (make fonts)"
    state = {"company_of_interest": "600519.SS", "trade_date": "2024-05-10",
             "final_trade_decision": "结论：买入。日本語テスト。한국어 요약。Rating: Buy"}
    with caplog.at_level(logging.WARNING, logger="fpdf"):
        pdf = export.report_pdf(state, "Buy", {})
    assert not [r for r in caplog.records if "missing the following glyphs" in r.getMessage()]
    fonts = _pdf_font_names(pdf)
    assert any("WenQuanYi" in f for f in fonts), fonts
    # the CJK font's subset maps our characters: its ToUnicode CMap names 买 (U+4E70) and 한 (U+D55C)
    streams = re.findall(rb"stream\r?\n(.*?)\r?\nendstream", pdf, re.S)
    cmaps = pdf + b"".join(zlib.decompress(s) for s in streams if _inflates(s))
    assert re.search(rb"> <4E70>", cmaps) and re.search(rb"> <D55C>", cmaps)


def _inflates(data: bytes) -> bool:
    try:
        zlib.decompress(data)
    except zlib.error:
        return False
    return True


def _pages_png(pdf: bytes, tmp_path, first: int, last: int):
    """The PDF's pages ``first``..``last`` rendered by poppler's pdftoppm (Debian's poppler-utils)."""
    import subprocess

    from PIL import Image

    src = tmp_path / "handout.pdf"
    src.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-r", "50", "-png", "-f", str(first), "-l", str(last), str(src),
                    str(tmp_path / "page")], check=True, timeout=120)
    return [Image.open(p).convert("RGB") for p in sorted(tmp_path.glob("page-*.png"))]


def _pdf_text(pdf: bytes, tmp_path, first: int, last: int | None = None) -> str:
    import subprocess

    src = tmp_path / "text.pdf"
    src.write_bytes(pdf)
    args = ["pdftotext", "-layout", "-f", str(first)] + (["-l", str(last)] if last else []) + [str(src), "-"]
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=120).stdout


def test_the_pdf_is_a_handout_whose_first_page_summarises_the_decision(saved_run, tmp_path):
    from tradingagents.rating import RATING_COLORS_ON_WHITE

    state, rating, meta = saved_run["state"], saved_run["rating"], saved_run["meta"]
    closes = [50.0 + (i % 9) for i in range(60)]
    pdf = export.report_pdf(state, rating, meta, closes=closes)
    (page1,) = _pages_png(pdf, tmp_path, 1, 1)
    summary = _pdf_text(pdf, tmp_path, 1, 1)
    for part in ("NVDA — 2024-05-10", "Decision card", "Action", "Conviction", "Entry", "Price target", "Stop",
                 "Position size", "Stated horizon", "Scored over", "5 trading days", "Price and decision",
                 f"{rating} on 2024-05-10", "The team's votes", "Research Manager", "Trader", "Portfolio Manager",
                 "Provenance", "Engine: offline engine", "Data: synthetic demo data"):
        assert part in summary, part
    # the rating badge and the decision's rung are drawn in the rating's colour; the price line in blue
    colors = {c for _, c in page1.getcolors(maxcolors=1 << 22)}
    want = tuple(int(RATING_COLORS_ON_WHITE[rating].lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
    assert any(all(abs(c[k] - want[k]) <= 6 for k in range(3)) for c in colors), want
    assert any(b > 140 and r < 80 and g < 120 for r, g, b in colors)  # the price line
    body = _pdf_text(pdf, tmp_path, 2)
    assert "Analyst reports" in body and "Bull Researcher · round 1" in body
    # real tables and emphasis: no Markdown pipes, separators or underscores print
    assert "|---" not in body and "| Signal |" not in body
    assert not re.search(r"(^|\s)_[A-Za-z][^_\n]*_(\s|$)", body), re.search(r"(^|\s)_[A-Za-z][^_\n]*_(\s|$)", body)
    assert "Signal" in body and "Direction" in body  # the table's header, as a table


def test_the_handouts_provenance_names_models_only_when_a_model_answered():
    from studio import export

    state = {"trade_date": "2024-05-10", "company_of_interest": "NVDA"}
    offline = {"llm_provider": "offline", "llm_label": "offline engine (no LLM)", "quick_think_llm": "gpt-4o-mini",
               "deep_think_llm": "gpt-4o", "data_vendor": "demo"}
    assert export.provenance_lines(state, offline)[0] == "Engine: offline engine (no LLM)"
    openai = {**offline, "llm_provider": "openai", "llm_label": "OpenAI"}
    assert export.provenance_lines(state, openai)[0] == "Engine: OpenAI (quick gpt-4o-mini, deep gpt-4o)"
