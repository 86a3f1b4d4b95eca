"""The saved ``report.md`` and the Markdown export are inert under more than one Markdown renderer.

Model text is written into several parts of a report (the market report, the decision, a debate): a
reference definition in one part and its use in another make one link once the report is joined, and
renderers differ in what they take for a definition (Python-Markdown takes a target on the next line
and a label across lines; CommonMark, through markdown-it-py, takes definitions inside list items and
quotes). Both renderers are run with raw HTML allowed and markdown-it's own link check off, the worst
case of a viewer; every link and
image they make must point at http, https or mailto, and no tag or handler of the model's survives.
"""

from __future__ import annotations

from html.parser import HTMLParser

import markdown as python_markdown
import pytest
from markdown_it import MarkdownIt

from studio import export
from tradingagents import storage
from tradingagents.config import resolve_config
from tradingagents.storage.inert import sanitize_markdown

JS = "javascript:alert({n})"

# (definition, use): each definition goes in one part of the report, its use in another
DEFINITIONS = [
    "[a{n}]:\n" + JS,                                  # the target on the next line (issue 39.8)
    "[b{n}]:\n   <" + JS + ">",                        # … in angle brackets
    "[c{n}]: <" + JS + ">",                            # angle brackets
    "[d{n}]: jav&#x61;script:alert({n})",              # an entity-encoded scheme
    "[e{n}]: &#106;avascript:alert({n})",
    "[f{n}]: JaVaScRiPt:alert({n})",                   # mixed case
    "[g{n}]: java\x01script:alert({n})",               # a control character inside the scheme
    "[h{n}]: \x0bjavascript:alert({n})",
    "[i{n}]: data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "[j{n}]: vbscript:msgbox({n})",
    "[k{n}\nk]: " + JS,                                # a label across two lines
    "- item\n\n  [l{n}]:\n  " + JS,                    # in a list item, target on the next line
    "> [m{n}]:\n> " + JS,                              # in a quote, target on the next line
    "[n{n}]: " + JS + '\n"a title"',                   # a title on the next line
    "[o{n}]:" + JS,                                    # no space after the colon
    "[p{n}\\]]: " + JS,                                # an escaped bracket in the label
    "   [q{n}]:\n\n" + JS,                             # indented (a blank line between is no definition)
    "[r{n}]:\t\n\t" + JS,                              # tabs around the line break
]
USES = ["[x][a{n}] [b{n}] [c{n}][] [d{n}] [e{n}] [f{n}] [g{n}] [h{n}] [i{n}] [j{n}] [k{n} k] [l{n}] "
        "[m{n}] [n{n}] [o{n}] [p{n}\\]] [q{n}] [r{n}]",
        "![img][a{n}] ![img][i{n}]",
        "[inline](\n" + JS + ") [inline2](<" + JS + ">) [inline3]( jav&#x61;script:alert({n}) )"]
SAFE = "[ok](https://example.com/a) [mail](mailto:a@example.com) [def ok][ok{n}]\n\n[ok{n}]: https://example.com/b"


class _Attrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs += [(tag, k, v or "") for k, v in attrs]


def _render(renderer: str, text: str) -> str:
    if renderer == "markdown-it":
        md = MarkdownIt("commonmark", {"html": True})
        md.validateLink = lambda url: True  # markdown-it refuses javascript: itself; a viewer may not
        return md.render(text)
    return python_markdown.markdown(text, extensions=["tables"])


def _assert_inert(html: str) -> None:
    parsed = _Attrs()
    parsed.feed(html)
    for tag, name, value in parsed.attrs:
        assert not name.startswith("on"), (tag, name, value)
        if name in ("href", "src", "action", "formaction", "xlink:href"):
            assert value.startswith(("http://", "https://", "mailto:")), (tag, name, value)
    assert not {"script", "img", "iframe", "svg", "object", "embed"} & set(parsed.tags), parsed.tags


def _hostile_state():
    parts = {"market_report": [], "final_trade_decision": [], "history": []}
    names = list(parts)
    for n, definition in enumerate(DEFINITIONS):
        parts[names[n % 3]].append(definition.format(n=n))           # defined in one part …
        for use in USES:
            parts[names[(n + 1) % 3]].append(use.format(n=n))         # … used in another
    parts["final_trade_decision"].append(SAFE.format(n=0))
    text = {k: "\n\n".join(v) for k, v in parts.items()}
    state = {"company_of_interest": "NVDA", "trade_date": "2024-05-10",
             "market_report": text["market_report"], "final_trade_decision": text["final_trade_decision"],
             "investment_debate_state": {"history": text["history"]}, "risk_debate_state": {"history": ""}}
    meta = {"ticker": "NVDA", "date": "2024-05-10", "analysts": ["market"]}
    return state, meta


@pytest.mark.parametrize("renderer", ["markdown-it", "python-markdown"])
def test_saved_report_and_export_are_inert_under_both_renderers(tmp_path, renderer):
    state, meta = _hostile_state()
    folder = storage.save_run(resolve_config({"home": str(tmp_path)}), state, "Buy", meta)
    saved = (folder / "report.md").read_text(encoding="utf-8")
    for md in (saved, export.report_markdown(state, "Buy", meta)):
        html = _render(renderer, md)
        _assert_inert(html)
        # what is safe still links, and the hostile text is shown, not dropped
        assert 'href="https://example.com/a"' in html and 'href="mailto:a@example.com"' in html
        assert "alert(" in html


@pytest.mark.parametrize("renderer", ["markdown-it", "python-markdown"])
@pytest.mark.parametrize("definition", DEFINITIONS)
def test_each_hostile_definition_is_inert_alone(renderer, definition):
    """One definition and every use in one text, sanitised as one part and as two parts joined."""
    text = definition.format(n=1)
    uses = "\n\n".join(u.format(n=1) for u in USES)
    for md in (sanitize_markdown(text + "\n\n" + uses), sanitize_markdown(text) + "\n\n" + sanitize_markdown(uses),
               sanitize_markdown(uses) + "\n\n" + sanitize_markdown(text)):
        _assert_inert(_render(renderer, md))
        assert sanitize_markdown(md) == md  # sanitising sanitised text changes nothing


def test_a_safe_reference_definition_still_links():
    md = sanitize_markdown("see [the filing][f]\n\n[f]: https://example.com/filing")
    for renderer in ("markdown-it", "python-markdown"):
        assert 'href="https://example.com/filing"' in _render(renderer, md)
