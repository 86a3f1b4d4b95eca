"""Helpers for showing memory matches: the query terms a stored situation shares (without numbers and
stop-words), and situations rendered from Markdown safely with those terms highlighted."""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents import team
from tradingagents.i18n import N_, Translator, rating_label, translator

_TOKEN = re.compile(r"\b\w+\b", re.UNICODE)

ROLES = {name: team.MEMORY_ROLE[name].node for name in team.MEMORY_NAMES}
"""Each per-role memory, in roster order, with the name of the role that reads it."""


def tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text or "")]


def shared_terms(query: str, situation: str, memory: Any = None) -> list[str]:
    """Query terms found in ``situation`` (the memory's own ``matched_terms`` when it has one)."""
    fn = getattr(memory, "matched_terms", None)
    if fn is not None:
        try:
            got = fn(query, situation)
            return sorted({str(t).lower() for t in got})
        except TypeError:
            pass
    return sorted(set(tokens(query)) & set(tokens(situation)))


def highlight_html(text: str, terms: Iterable[str]) -> str:
    """``text`` HTML-escaped, with every occurrence of ``terms`` wrapped in <mark>.

    Latin terms match whole words only; CJK terms (single characters after BM25 tokenising) match
    wherever they occur.
    """
    wanted = sorted({t.lower() for t in terms if t}, key=len, reverse=True)
    text = text or ""
    if not wanted:
        return html.escape(text).replace("\n", "<br>")
    alts = [re.escape(t) if not t.isascii() else rf"\b{re.escape(t)}\b" for t in wanted]
    regex = re.compile("|".join(alts), re.IGNORECASE)
    out: list[str] = []
    pos = 0
    for m in regex.finditer(text):
        out.append(html.escape(text[pos:m.start()]))
        out.append(f"<mark>{html.escape(m.group(0))}</mark>")
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out).replace("\n", "<br>")


STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only
or other our ours out over own same she should so some such than that the their theirs them then there these
they this those through to too under until up very was we were what when where which while who whom why will
with would you your yours also per via vs
""".split())
"""English function words: shared by almost every situation, so they explain no match."""


def display_terms(terms: Iterable[str]) -> list[str]:
    """The matched terms worth showing: no stop-words, nothing with a digit, no lone Latin letter."""
    out = []
    for t in terms:
        t = str(t).lower()
        if not t or t in STOP_WORDS or any(ch.isdigit() for ch in t) or (t.isascii() and len(t) < 2):
            continue
        out.append(t)
    return list(dict.fromkeys(out))


EXAMPLE_SITUATIONS = (
    N_("Institutional selling increases in tech while rates continue rising"),
    N_("Earnings beat with raised guidance; the stock gaps up on heavy volume"),
    N_("Regulatory probe announced; sentiment turns negative and volatility spikes"),
    N_("Central bank signals rate cuts; growth stocks rally while the dollar weakens"),
)
"""Short situations a first-time visitor can click to see what a role remembers (marked: the page
shows, and queries with, them in its language)."""

_SAFE_URL = re.compile(r"^(https?:|mailto:)", re.IGNORECASE)
_ATTR_URL = re.compile(r'\s(href|src)="([^"]*)"')
_IMG = re.compile(r"<img\b[^>]*>")
_ALT = re.compile(r'\salt="([^"]*)"')
_TAG_SPLIT = re.compile(r"(<[^>]*>)")


def _clean_url(m: re.Match) -> str:
    url = html.unescape(m.group(2)).strip()
    return f' {m.group(1)}="{m.group(2)}"' if _SAFE_URL.match(url) else ""


_MD = threading.local()


def _markdown():
    """This thread's Markdown converter: ``markdown.markdown()`` builds a new one (its extensions and
    processors) per call, three times the cost of converting a short text with one kept and reset (a
    reset forgets what the last text defined). One per thread: a converter keeps state while it converts,
    and Streamlit runs each script run in a thread of its own."""
    md = getattr(_MD, "md", None)
    if md is None:
        import markdown

        md = _MD.md = markdown.Markdown(extensions=["tables", "sane_lists"])
    return md


def situation_html(text: str, terms: Iterable[str] = ()) -> str:
    """``text`` (Markdown) as safe HTML with ``terms`` wrapped in <mark>.

    Raw HTML in the text is shown as text, not run: ``&`` and ``<`` are escaped before Markdown sees
    them. Only http(s) and mailto links survive; images become their alt text (nothing is fetched).
    Terms are highlighted in text only, never inside a tag or an entity.
    """
    safe = (text or "").replace("&", "&amp;").replace("<", "&lt;")
    body = _markdown().reset().convert(safe)
    body = _IMG.sub(lambda m: (alt.group(1) if (alt := _ALT.search(m.group(0))) else ""), body)
    body = _ATTR_URL.sub(_clean_url, body)
    wanted = sorted({t.lower() for t in terms if t}, key=len, reverse=True)
    if not wanted:
        return body
    alts = [re.escape(t) if not t.isascii() else rf"(?<![&#])\b{re.escape(t)}\b" for t in wanted]
    regex = re.compile("|".join(alts), re.IGNORECASE)
    parts = _TAG_SPLIT.split(body)
    for i in range(0, len(parts), 2):  # even pieces are text between tags
        parts[i] = regex.sub(lambda m: f"<mark>{m.group(0)}</mark>", parts[i])
    return "".join(parts)


ENTRIES_CSS = """<style>
.ta-entry{border:1px solid rgba(128,128,128,.3);border-radius:.5rem;margin:0 0 .5rem}
.ta-entry>summary{cursor:pointer;padding:.6rem 1rem}
.ta-entry>summary:hover{opacity:.8}
.ta-entry[open]>summary{border-bottom:1px solid rgba(128,128,128,.2)}
.ta-entry-body{padding:.75rem 1rem .25rem}
.ta-entry-who{font-size:.875rem;opacity:.65;margin:0 0 .75rem}
</style>"""
"""The look of ``entry_html``'s blocks (an expander's: a bordered box that opens on a click of its label)."""

TABLE_CSS = """<style>
.ta-log-table{overflow:auto;max-height:24rem;margin:0 0 1rem;border:1px solid rgba(128,128,128,.25);border-radius:.5rem}
.ta-log-table table{border-collapse:separate;border-spacing:0;width:100%;font-size:.875rem;font-variant-numeric:tabular-nums}
.ta-log-table th,.ta-log-table td{padding:.3rem .6rem;border-bottom:1px solid rgba(128,128,128,.18);
  text-align:left;white-space:nowrap}
.ta-log-table th{position:sticky;top:0;font-weight:600;background:rgba(128,128,128,.16);backdrop-filter:blur(8px)}
.ta-log-table tbody tr:last-child td{border-bottom:0}
.ta-log-table .num{text-align:right}
.ta-log-table tbody tr:hover{background:rgba(128,128,128,.08)}
</style>"""
"""The look of a static HTML table of text cells: a box that scrolls under its header beyond a dozen rows
(``.num``: a right-aligned number column)."""


def entry_html(summary: str, decision: tuple[str, str], *, who: str = "",
               reflection: tuple[str, str] | None = None) -> str:
    """One memory-log entry as a ``<details>`` block: ``summary`` (plain text, escaped here) is its label;
    opened, it shows ``decision`` and ``reflection`` as (heading, HTML made safe by ``situation_html``) and
    ``who`` (plain text) between them. Many of them in one HTML element cost the browser far less than
    one expander of three or four elements per entry."""
    parts = [f'<details class="ta-entry"><summary>{html.escape(summary)}</summary><div class="ta-entry-body">',
             f'<b>{html.escape(decision[0])}</b><div class="ta-model-text">{decision[1]}</div>']
    if who:
        parts.append(f'<p class="ta-entry-who">{html.escape(who)}</p>')
    if reflection is not None:
        parts.append(f'<b>{html.escape(reflection[0])}</b><div class="ta-model-text">{reflection[1]}</div>')
    parts.append("</div></details>")
    return "".join(parts)


def situation_from_state(state: Mapping[str, Any] | None, limit: int = 2000) -> str:
    """The analysts' reports of a run joined into one situation (what the agents query with)."""
    state = state or {}
    text = "\n\n".join((state.get(k) or "").strip() for k in team.REPORT_KEYS if (state.get(k) or "").strip())
    return text[:limit]


def remembered(memory_used: Mapping[str, Any] | None, *, t: Translator | None = None) -> list[dict[str, Any]]:
    """A run's ``meta["memory_used"]`` as items to show: {kind, who, text, page, params} — each past decision
    links to its Memory log entry (``/memory_log?ticker=…&date=…``), each lesson to the Memories page
    (``/memories?memory=…&lesson=<id>``). [] when the run remembered nothing (or predates the record)."""
    t = t if t is not None else translator("en")
    used = memory_used or {}
    items: list[dict[str, Any]] = []
    for d in used.get("past_decisions") or []:
        alpha = d.get("alpha")
        shown = (t("{alpha} alpha", alpha=f"{float(alpha):+.1%}") if isinstance(alpha, int | float)
                 else t("alpha unknown"))
        items.append({"kind": "decision", "who": t("Past decisions (all roles after the analysts)"),
                      "text": f"{d.get('date')} · {d.get('ticker')} · {rating_label(d.get('rating'), t.lang)} · {shown}",
                      "page": "pages/memory_log.py", "params": {"ticker": d.get("ticker"), "date": d.get("date")}})
    for name, lessons in (used.get("lessons") or {}).items():
        for lesson in lessons:
            score = lesson.get("score")
            shown = t(" (similarity {score})", score=f"{float(score):.2f}") if isinstance(score, int | float) else ""
            who = t.p("role", ROLES[name]) if name in ROLES else name
            items.append({"kind": "lesson", "who": who, "text": f"{lesson.get('lesson')}{shown}",
                          "page": "pages/memories.py", "params": {"memory": name, "lesson": lesson.get("id")}})
    return items


def remembered_url(item: Mapping[str, Any]) -> str:
    """The item's link: ``/memory_log?ticker=NVDA&date=2024-01-02`` or ``/memories?memory=…&lesson=…``."""
    from urllib.parse import urlencode

    stem = str(item["page"]).rsplit("/", 1)[-1].removesuffix(".py")
    return f"/{stem}?{urlencode({k: v for k, v in item['params'].items() if v is not None})}"
