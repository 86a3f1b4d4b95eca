"""Helpers for showing memory matches: the query terms a stored situation shares, highlighted safely."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents import team

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


def situation_from_state(state: Mapping[str, Any] | None, limit: int = 2000) -> str:
    """The analysts' reports of a run joined into one situation (what the agents query with)."""
    state = state or {}
    text = "\n\n".join((state.get(k) or "").strip() for k in team.REPORT_KEYS if (state.get(k) or "").strip())
    return text[:limit]
