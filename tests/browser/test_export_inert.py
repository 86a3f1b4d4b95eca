"""Every export of a hostile model's run, rendered in headless Chromium, executes nothing.

The Markdown files (the Run page's download and the saved ``results/<T>/<D>/report.md``) are rendered
with Python-Markdown and with markdown-it-py (CommonMark, its own link check off), both passing raw
HTML through unchanged: the worst case of a viewer that shows a Markdown file's HTML. The HTML export is loaded as it is. Each payload would set a flag on the
window or open a dialog if it ran; every link is clicked too.
"""

from __future__ import annotations

import json

import markdown as _md
import pytest
from markdown_it import MarkdownIt

from studio import export
from tests.browser.harness import HANG_MS, chromium
from tradingagents import storage
from tradingagents.config import resolve_config

pytestmark = pytest.mark.browser

RUNS = ["window.__ran = (window.__ran || []).concat([{n}])", "alert({n})"]


def _payload() -> str:
    lines = []
    for n, code in enumerate(RUNS * 2):
        js = code.format(n=n)
        lines += [
            f"\\<img src=x onerror=\"{js}\">",  # a backslash before the tag (issue 24.7)
            f"<img src=x onerror=\"{js}\"> <svg onload=\"{js}\"></svg> <script>{js}</script>",
            f"[click {n}](javascript:{js}) [ref {n}][evil{n}] <javascript:{js}>",
            f"[evil{n}]: javascript:{js}",
            f"[next{n}]:\njavascript:{js}",  # the target on the next line (issue 39.8), used below
            f"> [quoted next {n}][next{n}] [next{n}]",
            f"> [quoted {n}][q{n}]",
            f"> [q{n}]: javascript:{js}",
            f'<a href="javascript:{js}" onclick="{js}">a {n}</a>',
        ]
    return "\n".join(lines)


def _hostile_run():
    text = _payload()
    state = {"company_of_interest": "NVDA", "trade_date": "2024-05-10", "final_trade_decision": text,
             "market_report": text, "trader_investment_plan": text,
             "investment_debate_state": {"history": text}, "risk_debate_state": {"history": text}}
    meta = {"ticker": "NVDA", "date": "2024-05-10", "analysts": ["market"], "llm_label": text,
            "debate_turns": [{"debate": "invest", "role": "bull", "speaker": "Bull", "round": 1, "turn": 1,
                              "text": text},
                             {"debate": "risk", "role": "aggressive", "speaker": "Aggressive", "round": 1,
                              "turn": 1, "text": text}]}
    return state, meta


def _page(markdown_text: str, renderer: str = "python-markdown") -> str:
    if renderer == "markdown-it":
        md = MarkdownIt("commonmark", {"html": True})
        md.validateLink = lambda url: True  # its own javascript: check off: the sanitiser is what is tested
        body = md.render(markdown_text)
    else:
        body = _md.markdown(markdown_text, extensions=["tables"])
    return "<!DOCTYPE html><html><body>" + body + "</body></html>"


def _assert_nothing_runs(page, doc: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_content(doc, wait_until="load", timeout=HANG_MS)
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map((e) => e.getAttribute('href'))")
    assert all(h.startswith(("http://", "https://", "mailto:")) for h in hrefs), hrefs
    for link in page.query_selector_all("a"):
        link.evaluate("(a) => { a.addEventListener('click', (e) => e.preventDefault()); a.click(); }")
    handlers = page.evaluate(
        "() => [...document.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.name))"
        ".filter((n) => n.startsWith('on'))")
    assert handlers == []
    assert page.evaluate("() => window.__ran === undefined"), page.evaluate("() => JSON.stringify(window.__ran)")
    assert dialogs == []
    assert page.evaluate("() => document.querySelectorAll('script, img, iframe, svg:not(.spark)').length") == 0


def test_every_export_of_a_hostile_run_executes_nothing_in_chromium(tmp_path):
    state, meta = _hostile_run()
    cfg = resolve_config({"home": str(tmp_path)})
    folder = storage.save_run(cfg, state, "Buy", meta)
    saved_md = (folder / "report.md").read_text(encoding="utf-8")
    download_md = export.report_markdown(state, "Buy", meta)
    page_html = export.report_html(state, "Buy", meta, closes=[1.0, 2.0])
    # the payload is shown as text, not dropped
    for md in (saved_md, download_md):
        assert "onerror" in md and "&lt;img" in md
    with chromium() as page:
        docs = [_page(md, r) for md in (saved_md, download_md) for r in ("python-markdown", "markdown-it")]
        for doc in (*docs, page_html):
            _assert_nothing_runs(page, doc)
            assert "onerror" in page.inner_text("body")
    pdf = export.report_pdf(state, "Buy", meta)
    assert b"/JavaScript" not in pdf and b"/URI" not in pdf and b"/Launch" not in pdf
    json.dumps(meta)  # the hostile meta stayed plain data
