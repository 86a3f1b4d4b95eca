"""Full-report export: Markdown, a self-contained HTML page and a PDF, all from one Markdown text.

Model text can contain anything, so every format renders from the sanitised tree
(``tradingagents.storage.inert.sanitize_tree``, which the saved ``report.md`` uses too):

- text is made valid UTF-8 first (a lone surrogate becomes U+FFFD, never an encoding error), and
  control and bidi-override characters are dropped;
- every link and image URL is sanitised: only ``http``, ``https`` and ``mailto`` survive; any other
  link (``[x](javascript:alert(1))``, a reference definition also inside a quoted turn) becomes its
  plain text, images become their alt text (the HTML stays free of external resources);
- in the Markdown every ``<`` is the entity ``&lt;`` (never a backslash escape, which a preceding
  backslash in the text would cancel);
- in the HTML, every ``<`` and ``&`` of the source is escaped before the Markdown conversion, and
  the converted HTML is then re-emitted through an allowlist (tags and attributes the Markdown
  syntax makes, nothing else: no ``<script>``, no ``on*`` attribute, no ``style`` from the text);
- the PDF draws text only (no link annotations, no JavaScript).

Debate turns come from ``meta["debate_turns"]`` (the engine's per-turn records, never parsed out of
the text): each turn is its own paragraph, headed by its speaker and round, its text quoted under
it, so a line inside a turn that looks like another speaker stays inside that turn.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown as _md

from tradingagents import team
from tradingagents.rating import RATING_COLORS_ON_WHITE
from tradingagents.storage import inert
from tradingagents.storage.files_runs import render_report_markdown
from tradingagents.storage.inert import (  # noqa: F401 - this module's names since before storage.inert
    SAFE_SCHEMES,
    clean_text,
    safe_url,
    sanitize_links,
    sanitize_markdown,
)

DEBATE_STATE_KEYS = {"invest": "investment_debate_state", "risk": "risk_debate_state"}


_clean = inert.clean_tree


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------
def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.strip().splitlines())


def debate_turns_markdown(records: Iterable[Any], debate: str) -> str:
    """The turns of one debate as separate, attributed paragraphs (speaker, round, quoted text)."""
    parts = []
    for rec in records:
        if not isinstance(rec, Mapping) or rec.get("debate") != debate:
            continue
        role = team.ROLES.get(str(rec.get("role") or ""))
        if role is None or role.debate != debate:
            role = team.speaker_role(debate, str(rec.get("speaker") or ""))
        if role is None:
            continue
        text = clean_text(rec.get("text")).strip()
        rnd = rec.get("round")
        head = f"**{role.node}**" + (f" · round {int(rnd)}" if rnd is not None else "")
        parts.append(f"{head}\n\n{_quote(text) if text else '> _(no text)_'}")
    return "\n\n".join(parts)


def _with_attributed_turns(state: dict[str, Any], meta: Mapping[str, Any]) -> dict[str, Any]:
    """The state with each debate's history replaced by its attributed turns (when recorded)."""
    records = meta.get("debate_turns")
    if not isinstance(records, list) or not records:
        return state
    out = dict(state)
    for debate, key in DEBATE_STATE_KEYS.items():
        turns = debate_turns_markdown(records, debate)
        if turns:
            out[key] = {**dict(out.get(key) or {}), "history": turns}
    return out


def report_markdown(state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None) -> str:
    """The full report as Markdown (the engine's renderer), debate turns attributed, URLs sanitised."""
    return sanitize_markdown(_report_source(state, rating, meta))


def _report_source(state: Mapping[str, Any] | None, rating: str | None, meta: Mapping[str, Any] | None) -> str:
    """The engine's Markdown of the report, rendered from the sanitised tree (``storage.inert``: every
    string of the state and meta made inert first, the debate turns attributed from sanitised text)."""
    safe_state = inert.sanitize_tree(dict(state or {}))
    safe_meta = inert.sanitize_tree(dict(meta or {}))
    return render_report_markdown(_with_attributed_turns(safe_state, safe_meta), rating, safe_meta)


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------
_ALLOWED_TAGS = {
    "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
    "li", "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}
_VOID = {"br", "hr"}
_ALLOWED_ATTRS = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}, "ol": {"start"}}


class _Allowlist(HTMLParser):
    """Re-emits HTML keeping only allowlisted tags and attributes (links sanitised); text escaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _ALLOWED_TAGS:
            return
        kept = []
        for name, value in attrs:
            if name not in _ALLOWED_ATTRS.get(tag, ()):
                continue
            if name == "href":
                value = safe_url(value)
                if value is None:
                    continue
            kept.append(f' {name}="{html.escape(value or "", quote=True)}"')
        if tag == "a" and any(k.startswith(" href") for k in kept):
            kept.append(' rel="noopener noreferrer nofollow"')
        self.out.append(f"<{tag}{''.join(kept)}>")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID:
            self.out.append(f"<{tag}>")

    def handle_endtag(self, tag: str) -> None:
        if tag in _ALLOWED_TAGS and tag not in _VOID:
            self.out.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.out.append(html.escape(data, quote=False))

    # comments, declarations and processing instructions are dropped


def safe_html_fragment(fragment: str) -> str:
    parser = _Allowlist()
    parser.feed(fragment)
    parser.close()
    return "".join(parser.out)


def markdown_to_safe_html(text: str) -> str:
    """Markdown → HTML in which no tag, attribute or URL of the source survives unless allowlisted."""
    # every & and < escaped; the sanitiser's own &lt; entities stay the character "<"
    escaped = sanitize_markdown(text).replace("&", "&amp;").replace("&amp;lt;", "&lt;")
    return safe_html_fragment(_md.markdown(escaped, extensions=["tables", "fenced_code", "sane_lists"]))


def _sparkline_svg(closes: list[float], width: int = 640, height: int = 120) -> str:
    if len(closes) < 2:
        return ""
    lo, hi = min(closes), max(closes)
    span = (hi - lo) or 1.0
    step = width / (len(closes) - 1)
    pts = " ".join(f"{i * step:.1f},{height - (c - lo) / span * (height - 8) - 4:.1f}" for i, c in enumerate(closes))
    color = "#1DB954" if closes[-1] >= closes[0] else "#EB5757"
    return (
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="100%" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="closing prices">'
        f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/></svg>'
        f'<p class="muted">Close {closes[0]:.2f} → {closes[-1]:.2f} (last {len(closes)} sessions up to the analysis date)</p>'
    )


_CSS = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,"Noto Sans CJK SC",sans-serif;
max-width:880px;margin:2rem auto;padding:0 1rem;color:#1c2230;line-height:1.55;background:#fff}
h1{font-size:1.8rem;margin-bottom:.2rem}h2{border-bottom:1px solid #e3e6ee;padding-bottom:.2rem;margin-top:2rem}
.badge{display:inline-block;padding:.25rem .8rem;border-radius:999px;font-weight:700;color:#fff}
.muted{color:#6b7385;font-size:.9rem}code,pre{background:#f4f6fa;border-radius:4px}
pre{padding:.6rem;overflow:auto}table{border-collapse:collapse}td,th{border:1px solid #e3e6ee;padding:.3rem .6rem}
blockquote{margin:.3rem 0 1rem 0;padding:.1rem .9rem;border-left:4px solid #c9cfdb;background:#f7f8fb}
@media (prefers-color-scheme:dark){body{background:#0e1117;color:#e6e9ef}blockquote,code,pre{background:#161b26}
h2{border-color:#2a3242}}
"""
_BADGE_COLORS = RATING_COLORS_ON_WHITE
"""The rating badge on a white page: the app's tier colours, darkened until its white text reads."""


def report_html(
    state: Mapping[str, Any],
    rating: str | None,
    meta: Mapping[str, Any] | None = None,
    closes: list[float] | None = None,
) -> str:
    """A single self-contained HTML document of the report (inline CSS, optional inline SVG prices)."""
    body = markdown_to_safe_html(_report_source(state, rating, meta))
    ticker = html.escape(clean_text((state or {}).get("company_of_interest") or (meta or {}).get("ticker", "")))
    date = html.escape(clean_text((state or {}).get("trade_date") or (meta or {}).get("date", "")))
    badge = ""
    if rating in _BADGE_COLORS:
        badge = f'<p><span class="badge" style="background:{_BADGE_COLORS[rating]}">{html.escape(rating)}</span></p>'
    spark = _sparkline_svg([float(c) for c in closes or []])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>TradingAgents report — {ticker} {date}</title><style>{_CSS}</style></head><body>"
        f"{badge}{spark}{body}"
        "<p class=\"muted\">Generated by TradingAgents Studio. Not investment advice.</p>"
        "</body></html>\n"
    )


# ---------------------------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------------------------
FONT_DIRS = (Path("/usr/share/fonts/truetype"), Path("/usr/share/fonts/opentype"), Path("/usr/share/fonts"))
LATIN_FONTS = {"": "dejavu/DejaVuSans.ttf", "B": "dejavu/DejaVuSans-Bold.ttf"}
CJK_FONT = "wqy/wqy-microhei.ttc"
"""Debian's ``fonts-dejavu-core`` and ``fonts-wqy-microhei`` (glyf TrueType, which fpdf2 subsets;
Micro Hei covers Chinese, Japanese kana and Korean Hangul in one 5 MB font)."""


def _font(rel: str) -> Path | None:
    for base in FONT_DIRS:
        path = base / rel
        if path.is_file():
            return path
    return None


def cjk_font_available() -> bool:
    return _font(CJK_FONT) is not None and _font(LATIN_FONTS[""]) is not None


_INLINE_MARKS = re.compile(r"(\*\*|__|`)")
_LINK_TEXT = re.compile(r"\[([^\]\n]*)\]\(([^)\s]*)\)")


def _plain(text: str) -> str:
    """Inline Markdown as plain text: links as 'text (url)', emphasis and code marks removed."""
    text = _LINK_TEXT.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(2) else m.group(1), text)
    return _INLINE_MARKS.sub("", text).replace("\\", "").replace("&lt;", "<")


def report_pdf(state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None) -> bytes:
    """The report as a PDF: the same sanitised Markdown, drawn as text (headings, quotes, lists).

    CJK text is drawn with Debian's WenQuanYi Micro Hei (``fonts-wqy-microhei``) as the fallback
    of DejaVu Sans; without those fonts, the PDF uses the core Helvetica and non-Latin-1 characters
    become "?" (the Markdown and HTML keep them).
    """
    from fpdf import FPDF

    text = _report_source(state, rating, meta)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_title(clean_text(text.splitlines()[0].lstrip("# ").replace("**", "")) if text else "Report")
    pdf.set_creator("TradingAgents Studio")
    unicode_font = _font(LATIN_FONTS[""]) is not None
    if unicode_font:
        for style, rel in LATIN_FONTS.items():
            path = _font(rel) or _font(LATIN_FONTS[""])
            pdf.add_font("Body", style=style, fname=str(path))
        cjk = _font(CJK_FONT)
        if cjk is not None:
            pdf.add_font("CJK", style="", fname=str(cjk), collection_font_number=0)
            pdf.add_font("CJK", style="B", fname=str(cjk), collection_font_number=0)
            pdf.set_fallback_fonts(["CJK"], exact_match=False)
        family = "Body"
    else:
        family = "Helvetica"

    def fit(s: str) -> str:
        return s if unicode_font else s.encode("latin-1", "replace").decode("latin-1")

    pdf.add_page()
    width = pdf.w - pdf.l_margin - pdf.r_margin
    in_code = False
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        pdf.set_x(pdf.l_margin)
        if not line.strip():
            pdf.ln(2)
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading and not in_code:
            level = len(heading.group(1))
            pdf.set_font(family, "B", {1: 17, 2: 14, 3: 12}.get(level, 11))
            pdf.ln(2)
            pdf.multi_cell(width, 7, fit(_plain(heading.group(2))), new_x="LMARGIN", new_y="NEXT")
            continue
        indent, body, size = 0.0, line, 10
        if line.startswith(">"):
            indent, body = 6.0, line.lstrip(">").strip() or " "
            pdf.set_text_color(60, 66, 80)
        elif re.match(r"^\s*[-*+]\s+", line):
            indent, body = 4.0, "• " + re.sub(r"^\s*[-*+]\s+", "", line)
        bold = body.startswith("**") and body.count("**") >= 2 and body.index("**", 2) < 60
        pdf.set_font(family, "B" if bold else "", size)
        pdf.set_x(pdf.l_margin + indent)
        pdf.multi_cell(width - indent, 5, fit(_plain(body)), new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(0, 0, 0)
    pdf.set_font(family, "", 8)
    pdf.ln(4)
    pdf.multi_cell(width, 4, "Generated by TradingAgents Studio. Not investment advice.", new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
