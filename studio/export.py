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

Every text-producing function takes a keyword-only ``t`` (a ``tradingagents.i18n.Translator``; None:
English) and writes its headings, labels, provenance lines, vote ladder and debate attribution in
that language: roles with ``t.p("role", …)``, ratings with ``rating_label`` (the card and the files
keep the canonical names). The report's body is the saved ``report.md``'s renderer itself
(``storage.files_runs.render_report_markdown``, which takes the same ``t``), so an English export
keeps the saved report's bytes. The models' text, tickers, dates and figures are never translated.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import markdown as _md

from tradingagents import figures, team
from tradingagents.config import DEFAULT_CONFIG
from tradingagents.graph.decision_card import FIELDS as CARD_FIELDS
from tradingagents.graph.decision_card import (
    GRAMMAR_LABELS,
    decision_card,
    display_text,
    reward_risk,
    scored_horizon,
    shown_plan_value,
)
from tradingagents.graph.decision_card import LABEL_CONTEXTS as CARD_LABEL_CONTEXTS
from tradingagents.graph.decision_card import LABELS as CARD_LABELS
from tradingagents.graph.decision_card import label_of as card_label
from tradingagents.i18n import N_, Translator, rating_label, translator
from tradingagents.rating import RATING_COLORS_ON_WHITE
from tradingagents.storage import inert
from tradingagents.storage.files_runs import evidence_line, instrument_shown, render_report_markdown
from tradingagents.storage.inert import (  # noqa: F401 - this module's names since before storage.inert
    SAFE_SCHEMES,
    clean_text,
    safe_url,
    sanitize_links,
    sanitize_markdown,
)
from tradingagents.vendors import product_label

DEBATE_STATE_KEYS = {"invest": "investment_debate_state", "risk": "risk_debate_state"}


def _tr(t: Translator | None) -> Translator:
    """The translator of an export (None: English, the message ids themselves)."""
    return t if t is not None else translator("en")


def _english(t: Translator) -> bool:
    return t.lang == "en"


_clean = inert.clean_tree


# ---------------------------------------------------------------------------------------------
# the decision card
# ---------------------------------------------------------------------------------------------
def _holding_days(meta: Mapping[str, Any]) -> Any:
    config = meta.get("config") if isinstance(meta.get("config"), Mapping) else {}
    return meta.get("holding_days") or config.get("holding_days") or DEFAULT_CONFIG["holding_days"]


def currency_of(state: Mapping[str, Any] | None, meta: Mapping[str, Any] | None) -> str | None:
    """The instrument's currency as the run's instrument line names it ("…, NASDAQ, USD)"), else None."""
    context = str((meta or {}).get("instrument_context") or (state or {}).get("instrument_context") or "")
    match = re.search(r",\s*([A-Z]{3}|GBp)\)", context)
    return match.group(1) if match else None


def card(state: Mapping[str, Any] | None, meta: Mapping[str, Any] | None, rating: str | None = None) -> dict[str, Any]:
    """The run's decision card: the one the engine saved in ``meta["decision"]``, else read from the state
    (a run saved before the card existed), with the rating the run saved."""
    state, meta = dict(state or {}), dict(meta or {})
    saved = meta.get("decision")
    out = dict(saved) if isinstance(saved, Mapping) else decision_card(state, _holding_days(meta))
    out.setdefault("scored_horizon", scored_horizon(_holding_days(meta)))
    if rating:
        out["rating"] = rating
    if isinstance(meta.get("order"), Mapping):  # the order sized from the desk's book (graph/book_view.py)
        out["order"] = dict(meta["order"])
    return out


CONVICTIONS = {"low": N_("Low"), "medium": N_("Medium"), "high": N_("High")}
ACTIONS = {"BUY": N_("BUY"), "HOLD": N_("HOLD"), "SELL": N_("SELL")}
_SCORED = re.compile(r"^(\d+) trading days?$")


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number != 0 else None


def card_rows(decision: Mapping[str, Any], currency: str | None = None, *,
              t: Translator | None = None) -> list[tuple[str, str]]:
    """(label, value for people) of every card field, in ``t``'s language (None: English); the dash
    where the run did not say. The rating, the action and the conviction are shown translated; the
    card itself keeps their canonical values."""
    t = _tr(t)
    rows = []
    entry = _finite(decision.get("entry_price"))
    hold = str(decision.get("action") or "").upper() == "HOLD"
    for key in CARD_FIELDS:
        value = decision.get(key)
        if key in ("price_target", "stop_loss", "reward_risk") and value is None and hold:
            shown = t("none for a Hold")
        elif key in ("entry_price", "price_target", "stop_loss"):
            shown = figures.price(value, currency) if currency else figures.plain_price(value)
            level = _finite(value)
            if key != "entry_price" and entry and level is not None:
                shown += f" ({(level / entry - 1):+.1%})".replace("-", "−")
        elif key == "reward_risk":
            rr = value if value is not None else reward_risk(decision.get("action"), entry, decision.get("price_target"),
                                                             decision.get("stop_loss"))
            shown = t("{rr} : 1", rr=f"{float(rr):.1f}") if rr is not None else figures.text(None)
        elif key == "conviction" and value:
            shown = str(value).capitalize()
            if str(value).lower() in CONVICTIONS:
                shown = t(CONVICTIONS[str(value).lower()])
        elif key == "rating" and value:
            shown = rating_label(figures.text(value), t.lang)
        elif key == "action" and str(value or "").upper() in ACTIONS:
            shown = t(ACTIONS[str(value).upper()])
        elif key == "scored_horizon" and value and _SCORED.match(str(value)):
            shown = t.n("{n} trading day", "{n} trading days", int(_SCORED.match(str(value)).group(1)))
        elif key in ("position_size", "time_horizon") and value:
            shown = shown_plan_value(str(value), t)  # the engine's fixed phrases in the reader's language
        else:
            shown = figures.text(value)
        context = CARD_LABEL_CONTEXTS.get(key)
        label = t.p(context, CARD_LABELS[key]) if context else t(card_label(key, decision.get("action"), decision.get("rating")))
        rows.append((label, clean_text(shown)))
    if isinstance(decision.get("order"), Mapping):
        from tradingagents.book import order_text

        rows.append((t("Order"), clean_text(order_text(decision["order"], t))))
    return rows


def card_fields(rows: list[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """``card_rows``' rows by their field (``FIELDS`` keys, then "order"): label and value of each."""
    keys = (*CARD_FIELDS, "order")
    return {key: row for key, row in zip(keys, rows, strict=False)}


def card_markdown(decision: Mapping[str, Any], currency: str | None = None, *, t: Translator | None = None) -> str:
    """The card as a Markdown table under its heading (``t``: the language; None: English)."""
    t = _tr(t)
    lines = ["## " + t("Decision card"), "", "| | |", "|---|---|"]
    lines += [f"| {label} | {value.replace('|', '/')} |" for label, value in card_rows(decision, currency, t=t)]
    return "\n".join(lines) + "\n"


def card_html(decision: Mapping[str, Any], currency: str | None = None, *, t: Translator | None = None,
              meta: Mapping[str, Any] | None = None, without: tuple[str, ...] = ()) -> str:
    """The card as a small grid of labelled figures (escaped text; the app's and the HTML export's); with
    the run's ``meta``, its evidence line under the grid ("Evidence: k of n figures found in the data").
    ``without``: fields (``FIELDS`` keys) shown elsewhere on the page, left out (the Run page's rating badge
    already says the rating: the card does not say it twice)."""
    t = _tr(t)
    keys = (*CARD_FIELDS, *(("order",) if isinstance(decision.get("order"), Mapping) else ()))  # card_rows' rows
    rows = [row for key, row in zip(keys, card_rows(decision, currency, t=t), strict=True) if key not in without]
    cells = "".join(
        f'<div class="ta-card-cell"><div class="ta-card-label">{html.escape(label)}</div>'
        f'<div class="ta-card-value">{html.escape(value)}</div></div>'
        for label, value in rows)
    aria = html.escape(t("Decision card"), quote=True)
    line = evidence_line(meta, t=t) if meta is not None else None
    evidence = (f'<div class="ta-card-evidence">{html.escape(line)}</div><style>.ta-card-evidence{{font-size:.85rem;'
                'opacity:.85;margin:-.4rem 0 .8rem}</style>' if line else "")
    return (f'<div class="ta-card" role="group" aria-label="{aria}">{cells}</div>{evidence}'
            "<style>.ta-card{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:.5rem;"
            "margin:.4rem 0 .8rem}.ta-card-cell{border:1px solid rgba(128,128,128,.35);border-radius:8px;"
            "padding:.4rem .6rem}.ta-card-label{font-size:.78rem;opacity:.75}.ta-card-value{font-weight:600;"
            "overflow-wrap:anywhere}</style>")


def evidence_of(meta: Mapping[str, Any] | None, key: str) -> Mapping[str, Any] | None:
    """One text's ledger record (``meta["evidence"][key]``), None for a run saved without a ledger."""
    record = ((meta or {}).get("evidence") or {}).get(key)
    return record if isinstance(record, Mapping) else None


def marked_text(text: str, record: Mapping[str, Any] | None, ticker: str = "") -> str:
    """``text`` (Markdown) with each figure the ledger did not find marked ``:orange-background[…]``, for
    Streamlit's Markdown; the text as it is without a record."""
    from collections import Counter

    from tradingagents.graph.evidence import figures_in

    wanted = Counter(str(item.get("figure")) for item in (record or {}).get("not_found") or [])
    if not wanted:
        return text
    out, pos = [], 0
    for figure in figures_in(text, ticker=ticker):
        if wanted[figure.written] <= 0:
            continue
        wanted[figure.written] -= 1
        start = text.index(figure.written, figure.start)
        end = start + len(figure.written)
        out += [text[pos:start], ":orange-background[" + figure.written.replace("$", "\\$") + "]"]
        pos = end
    return "".join(out) + text[pos:]


def source_rows(record: Mapping[str, Any] | None, *, t: Translator | None = None) -> list[dict[str, str]]:
    """The figures of a text and where each came from, for a table: figure, tool, arguments, excerpt (a
    figure not found: its sentence)."""
    t = _tr(t)
    rows = []
    for item in (record or {}).get("sources") or []:
        args = item.get("args") or {}
        tool = str(item.get("tool"))
        if t.lang == "en":
            shown_args = ", ".join(f"{k}={v}" for k, v in args.items())
        else:  # another language: the data by its name, the arguments by their values (indicators by their names)
            from tradingagents.llm_clients.offline.analysts import INDICATOR_NAMES, tool_name

            def value(key: str, v: Any) -> str:
                if key != "indicator":
                    return str(v)
                return t(", ").join(t(INDICATOR_NAMES[x.strip()]) if x.strip() in INDICATOR_NAMES else x.strip()
                                    for x in str(v).split(","))

            shown_args = t(", ").join(value(k, v) for k, v in args.items())
            tool = tool_name(tool, t)
        rows.append({t("Figure"): str(item.get("figure")), t("Source"): tool,
                     t("Arguments"): shown_args, t("Excerpt"): str(item.get("excerpt"))})
    for item in (record or {}).get("not_found") or []:
        rows.append({t("Figure"): str(item.get("figure")), t("Source"): t("not found in the data"),
                     t("Arguments"): "", t("Excerpt"): str(item.get("sentence"))})
    return rows


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------
def _quote(text: str) -> str:
    return "\n".join(f"> {line}" if line.strip() else ">" for line in text.strip().splitlines())


def debate_turns_markdown(records: Iterable[Any], debate: str, *, t: Translator | None = None) -> str:
    """The turns of one debate as separate, attributed paragraphs (speaker, round, quoted text), the
    speaker's role and the round in ``t``'s language (None: English)."""
    t = _tr(t)
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
        head = f"**{t.p('role', role.node)}**" + (" · " + t("round {n}", n=int(rnd)) if rnd is not None else "")
        parts.append(f"{head}\n\n{_quote(text) if text else '> _' + t('(no text)') + '_'}")
    return "\n\n".join(parts)


def _with_attributed_turns(state: dict[str, Any], meta: Mapping[str, Any], t: Translator | None = None
                           ) -> dict[str, Any]:
    """The state with each debate's history replaced by its attributed turns (when recorded)."""
    records = meta.get("debate_turns")
    if not isinstance(records, list) or not records:
        return state
    out = dict(state)
    for debate, key in DEBATE_STATE_KEYS.items():
        turns = debate_turns_markdown(records, debate, t=t)
        if turns:
            out[key] = {**dict(out.get(key) or {}), "history": turns}
    return out


def report_markdown(state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None, *,
                    t: Translator | None = None) -> str:
    """The full report as Markdown (the engine's renderer), debate turns attributed, URLs sanitised;
    its headings and labels in ``t``'s language (None: English, the saved ``report.md``'s words)."""
    return sanitize_markdown(_report_source(state, rating, meta, t))


def _shown(tree: Any, t: Translator) -> Any:
    """Every agent text of a state as a reader of ``t``'s language sees it (``decision_card.display_text``:
    the rating/action grammar lines translated; the stored text keeps the canonical words)."""
    if isinstance(tree, str):
        return display_text(tree, t)
    if isinstance(tree, Mapping):
        return {k: _shown(v, t) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_shown(v, t) for v in tree]
    return tree


def _report_source(state: Mapping[str, Any] | None, rating: str | None, meta: Mapping[str, Any] | None,
                   t: Translator | None = None) -> str:
    """The engine's Markdown of the report, rendered from the sanitised tree (``storage.inert``: every
    string of the state and meta made inert first, the debate turns attributed from sanitised text).
    English is the engine's renderer itself (the saved ``report.md``); another language the same
    parts with their headings and labels translated."""
    t = _tr(t)
    safe_state = inert.sanitize_tree(dict(state or {}))
    safe_meta = inert.sanitize_tree(dict(meta or {}))
    attributed = _shown(_with_attributed_turns(safe_state, safe_meta, t), t)
    text = render_report_markdown(attributed, rating, safe_meta, t=t)
    summary = card_markdown(card(safe_state, safe_meta, rating), currency_of(safe_state, safe_meta), t=t)
    marker = "## " + t("Portfolio Manager's decision")
    return text.replace(marker, summary + "\n" + marker, 1) if marker in text else summary + "\n" + text


# ---------------------------------------------------------------------------------------------
# the handout's body (the PDF after its summary page)
# ---------------------------------------------------------------------------------------------
TOOL_NAMES = {
    "get_stock_data": N_("the price history"), "get_indicators": N_("the technical indicators"),
    "get_social_posts": N_("social posts"), "get_news": N_("company news"), "get_global_news": N_("global news"),
    "get_fundamentals": N_("the company profile"), "get_income_statement": N_("the income statement"),
    "get_balance_sheet": N_("the balance sheet"), "get_cashflow": N_("the cash-flow statement"),
    "get_insider_transactions": N_("insider transactions"),
}
"""The data tools a text may name, as a reader calls what they return (a handout names no function)."""
_TOOL = re.compile(r"`?\b(get_[a-z_]+)\b`?")
_RAW_LINE = re.compile(
    r"^\s*(?:[-*>]\s*)*(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2})?\s+@\S+"  # a post as the feed gives it
    r"|\[\d{4}-\d{2}-\d{2}\s*\|.*\]\s*$"                                    # a memory log entry's tag
    r"|<!--|&lt;!--|(?:DECISION|REFLECTION|PM DECISION):\s*$)")                # its comments and section labels
_GRAMMAR = re.compile(r"^\s*(?:\*\*(?:" + "|".join(re.escape(k) for k in GRAMMAR_LABELS) + r")\*\*\s*:.*"
                      r"|FINAL TRANSACTION PROPOSAL\s*:.*)$", re.M)


def _scale_texts() -> list[str]:
    """The offline engine's scoring formula in every language (the handout states the outcome, not the rule)."""
    try:
        from tradingagents.llm_clients.offline.common import SCALE_TEXT
    except ImportError:  # an engine that no longer writes it
        return []
    return [translator(lang)(SCALE_TEXT) for lang in ("en", "zh")]


def _footers() -> list[str]:
    try:
        from tradingagents.llm_clients.offline.common import _FOOTER
    except ImportError:
        return []
    return [translator(lang)(_FOOTER) for lang in ("en", "zh")]


def handout_text(text: Any, t: Translator | None = None, *, grammar: bool = False) -> str:
    """An agent's text as the handout prints it: the data tools by what they return, without raw feed or
    log lines, the scoring formula or the offline engine's per-text footer (the summary page says which
    engine wrote it); ``grammar``: the decision grammar's lines (rating, action, levels: the card's) dropped
    too. The rest is the text as written, its grammar words in ``t``'s language."""
    t = _tr(t)
    body = clean_text(text)
    if grammar:
        body = _GRAMMAR.sub("", body)
    body = display_text(body, t)
    for formula in _scale_texts():
        for lead in (t("Scoring: {scale}", scale=formula), formula):
            body = body.replace(lead + " ", "").replace(" " + lead, "").replace(lead, "")
    for footer in _footers():
        body = body.replace(footer, "")
    body = _TOOL.sub(lambda m: t(TOOL_NAMES[m.group(1)]) if m.group(1) in TOOL_NAMES
                     else m.group(1).removeprefix("get_").replace("_", " "), body)
    lines = [line for line in body.splitlines() if not _RAW_LINE.match(line)]
    # the bare ">" between two quoted lines only parts their paragraphs: the run of quotes becomes a list below
    lines = [line for i, line in enumerate(lines)
             if not (line.strip() == ">" and 0 < i < len(lines) - 1
                     and re.match(r"^>\s*\S", lines[i - 1]) and re.match(r"^>\s*\S", lines[i + 1]))]
    # a run of quoted one-liners (headlines, posts) is a list: Markdown would join them into one paragraph
    quoted = [bool(re.match(r"^>\s*\S", line)) for line in lines]
    for i, line in enumerate(lines):
        if quoted[i] and ((i > 0 and quoted[i - 1]) or (i + 1 < len(lines) and quoted[i + 1])):
            lines[i] = "- " + line.lstrip("> ").strip()
    # a heading left with nothing under it (its raw lines dropped) goes too
    kept: list[str] = []
    for line in lines:
        if re.match(r"^#{1,6}\s", line):
            last = len(kept) - 1
            while last >= 0 and not kept[last].strip():
                last -= 1
            if last >= 0 and re.match(r"^#{1,6}\s", kept[last]):
                del kept[last:]
        kept.append(line)
    while kept and (not kept[-1].strip() or re.match(r"^#{1,6}\s", kept[-1])):
        kept.pop()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def handout_markdown(state: Mapping[str, Any] | None, rating: str | None, meta: Mapping[str, Any] | None, *,
                     t: Translator | None = None) -> str:
    """The handout after its summary page, as Markdown: the decision, each analyst's report, the debates as
    attributed turns (speaker and round, each turn quoted), the Research Manager's plan and the Trader's
    proposal, the past decisions the team read, the figures the data did not show and the committee's questions. Prose and tables only: no
    tool names, scoring formula, raw feed or log lines, token counts or the decision grammar the summary
    page's card already shows (``handout_text``)."""
    t = _tr(t)
    state = inert.sanitize_tree(dict(state or {}))
    meta = inert.sanitize_tree(dict(meta or {}))
    records = meta.get("debate_turns") if isinstance(meta.get("debate_turns"), list) else []

    def section(title: str, body: str, level: int = 2) -> list[str]:
        # a text's own headings sit under its section's: its "# Market analysis" is no larger than the section
        body = re.sub(r"^(#{1,6})(?=\s)", lambda m: "#" * min(6, len(m.group(1)) + level), body, flags=re.M)
        return [f"{'#' * level} {title}", "", body or "_" + t("Not produced in this run.") + "_", ""]

    def debate(name: str, key: str) -> str:
        turns = debate_turns_markdown(records, name, t=t) if records else ""
        if not turns:
            return handout_text((state.get(key) or {}).get("history"), t)
        return _TOOL.sub(lambda m: t(TOOL_NAMES.get(m.group(1), m.group(1))), turns)

    out = section(t("Portfolio Manager's decision"), handout_text(state.get("final_trade_decision"), t, grammar=True))
    out += ["## " + t("Analyst reports"), ""]
    selected = set(meta.get("analysts") or [])
    for role in team.ANALYSTS:
        key = role.output_key or ""
        if selected and role.key not in selected and not state.get(key):
            continue
        out += section(t.p("role", role.node), handout_text(state.get(key), t), level=3)
    out += section(t("Research debate (Bull vs Bear)"), debate("invest", "investment_debate_state"))
    out += section(t("Research Manager's plan"), handout_text(state.get("investment_plan"), t, grammar=True))
    out += section(t("Trader's proposal"), handout_text(state.get("trader_investment_plan"), t, grammar=True))
    out += section(t("Risk debate"), debate("risk", "risk_debate_state"))
    past = handout_text(state.get("past_context"), t)
    if past:  # what the team read of its earlier decisions, without the log's tags and markers
        out += section(t("Past decisions considered"), past)
    from tradingagents.storage.files_runs import evidence_not_found

    missing = evidence_not_found(meta, t=t)
    if missing:
        rows = ["| " + " | ".join((t("Text"), t("Figure"), t("Sentence"))) + " |", "|---|---|---|"]
        rows += ["| " + " | ".join(clean_text(c).replace("|", "/") for c in row) + " |" for row in missing]
        out += section(t("Figures not found in the data"), "\n".join(rows))
    questions = [q for q in meta.get("questions") or [] if isinstance(q, Mapping) and q.get("question")]
    if questions:
        out += ["## " + t("Questions to the team"), ""]
        for q in questions:
            agent = team.ROLES.get(str(q.get("agent") or ""))
            out += ["### " + t("{who} asked the {agent} ({at})", who=q.get("by") or "?",
                               agent=t.p("role", agent.node if agent else str(q.get("agent") or "?")),
                               at=q.get("at") or ""), "",
                    f"> {' '.join(str(q['question']).split())}", "", str(q.get("answer") or "").strip(), ""]
    return "\n".join(out).rstrip() + "\n"


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


def _sparkline_svg(closes: list[float], width: int = 640, height: int = 120, t: Translator | None = None,
                   ticker: str = "") -> str:
    from studio.theme import price_colors

    t = _tr(t)
    if len(closes) < 2:
        return ""
    lo, hi = min(closes), max(closes)
    span = (hi - lo) or 1.0
    step = width / (len(closes) - 1)
    pts = " ".join(f"{i * step:.1f},{height - (c - lo) / span * (height - 8) - 4:.1f}" for i, c in enumerate(closes))
    rise, fall = price_colors(ticker)  # red up on Shanghai, Shenzhen and Hong Kong
    color = rise if closes[-1] >= closes[0] else fall
    return (
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="100%" height="{height}" '
        f'xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{html.escape(t("closing prices"), quote=True)}">'
        f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/></svg>'
        '<p class="muted">' + html.escape(t("Close {first} → {last} (last {n} sessions up to the analysis date)",
                                            first=f"{closes[0]:.2f}", last=f"{closes[-1]:.2f}", n=len(closes)))
        + "</p>"
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
    *,
    t: Translator | None = None,
) -> str:
    """A single self-contained HTML document of the report (inline CSS, optional inline SVG prices),
    in ``t``'s language (None: English)."""
    t = _tr(t)
    body = markdown_to_safe_html(_report_source(state, rating, meta, t))
    ticker = html.escape(clean_text((state or {}).get("company_of_interest") or (meta or {}).get("ticker", "")))
    date = html.escape(clean_text((state or {}).get("trade_date") or (meta or {}).get("date", "")))
    badge = ""
    if rating in _BADGE_COLORS:
        badge = (f'<p><span class="badge" style="background:{_BADGE_COLORS[rating]}">'
                 f'{html.escape(rating_label(rating, t.lang))}</span></p>')
    spark = _sparkline_svg([float(c) for c in closes or []], t=t,
                           ticker=clean_text((state or {}).get("company_of_interest") or (meta or {}).get("ticker", "")))
    title = html.escape(t("TradingAgents report — {ticker} {date}", ticker="\x00T", date="\x00D"))
    title = title.replace("\x00T", ticker).replace("\x00D", date)  # already escaped, filled once
    return (
        f"<!DOCTYPE html>\n<html lang=\"{_HTML_LANG.get(t.lang, t.lang)}\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{title}</title><style>{_CSS}</style></head><body>"
        f"{badge}{spark}{body}"
        f"<p class=\"muted\">{html.escape(t('Generated by TradingAgents Studio. Not investment advice.'))}</p>"
        "</body></html>\n"
    )


_HTML_LANG = {"en": "en", "zh": "zh-Hans"}


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


def _hex_rgb(color: str) -> tuple[int, int, int]:
    c = color.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def vote_ladder(state: Mapping[str, Any] | None, meta: Mapping[str, Any] | None,
                rating: str | None) -> list[tuple[str, str | None]]:
    """(voter, tier) of the team's stages: each analyst's net signal, the Research Manager, the Trader and
    the Portfolio Manager (the saved rating). A voter without a readable tier gets None."""
    from tradingagents.llm_clients.offline.common import score_of, signals_in

    state = dict(state or {})
    votes: list[tuple[str, str | None]] = []
    for role in team.ANALYSTS:
        text = str(state.get(role.output_key or "") or "")
        if not text.strip():
            continue
        signals = signals_in(text)
        votes.append((role.node, score_of(signals).tier if signals else None))
    from studio.compare import rating_ladder

    votes += rating_ladder(state, rating)
    return votes


_PDF_LINK = re.compile(r'<a href="([^"]*)"[^>]*>(.*?)</a>', re.S)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")


def _pdf_class():
    """fpdf2's FPDF with the page's font kept right on lines that begin in the fallback (CJK) font.

    fpdf2 (2.8.9) draws such a line by naming the main font inside the line's own text object, which it
    wraps in ``q … Q`` when a colour or font was changed on the line, yet records the font as set on the
    page. The next line of the paragraph then names no font and is drawn in whatever font the page last
    set: Latin text read through another font's glyph ids ("CNY)" printed as "IAMA", a figure as
    "V-DA0N"). Here the main font is set on the page itself before such a line, as fpdf2 does for any
    other line, so every line that follows finds it."""
    from fpdf import FPDF

    class HandoutPDF(FPDF):
        def _render_styled_text_line(self, text_line: Any, *args: Any, **kwargs: Any) -> Any:
            fragments = getattr(text_line, "fragments", None)
            if (fragments and self.page and not kwargs.get("prevent_font_change")
                    and not self.current_font_is_set_on_page and self.current_font is not None
                    and fragments[0].font.fontkey in self._fallback_font_ids
                    and self.current_font.fontkey not in self._fallback_font_ids):
                self._out(self._set_font_for_page(self.current_font, self.font_size_pt))
            return super()._render_styled_text_line(text_line, *args, **kwargs)

    return HandoutPDF


class _Handout:
    """The PDF's drawing: fonts (DejaVu, CJK fallback) and the summary page's parts."""

    def __init__(self, title: str, t: Translator | None = None) -> None:
        self.t = _tr(t)
        pdf = _pdf_class()(format="A4")
        pdf.set_auto_page_break(auto=True, margin=15)
        pdf.set_title(title)
        pdf.set_creator("TradingAgents Studio")
        self.unicode = _font(LATIN_FONTS[""]) is not None
        if self.unicode:
            for style, rel in LATIN_FONTS.items():
                pdf.add_font("Body", style=style, fname=str(_font(rel) or _font(LATIN_FONTS[""])))
            # italics: DejaVu Sans has no oblique in fonts-dejavu-core; the regular face stands in
            pdf.add_font("Body", style="I", fname=str(_font(LATIN_FONTS[""])))
            pdf.add_font("Body", style="BI", fname=str(_font(LATIN_FONTS["B"]) or _font(LATIN_FONTS[""])))
            cjk = _font(CJK_FONT)
            if cjk is not None:
                for style in ("", "B", "I", "BI"):
                    pdf.add_font("CJK", style=style, fname=str(cjk), collection_font_number=0)
                pdf.set_fallback_fonts(["CJK"], exact_match=False)
            self.family = "Body"
        else:
            self.family = "Helvetica"
        self.pdf = pdf

    def fit(self, s: str) -> str:
        return s if self.unicode else s.encode("latin-1", "replace").decode("latin-1")

    @property
    def width(self) -> float:
        return self.pdf.w - self.pdf.l_margin - self.pdf.r_margin

    def heading(self, text: str, size: int = 14) -> None:
        self.pdf.set_font(self.family, "B", size)
        self.pdf.ln(2)
        self.pdf.multi_cell(self.width, 7, self.fit(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(1)

    def text(self, text: str, size: int = 9, gray: int = 0) -> None:
        self.pdf.set_font(self.family, "", size)
        self.pdf.set_text_color(gray, gray, gray)
        self.pdf.multi_cell(self.width, 4.6, self.fit(text), new_x="LMARGIN", new_y="NEXT")
        self.pdf.set_text_color(0, 0, 0)

    def badge(self, rating: str | None) -> None:
        pdf = self.pdf
        color = _BADGE_COLORS.get(rating or "")
        label = rating_label(rating, self.t.lang) if rating else self.t("no rating")
        pdf.set_font(self.family, "B", 13)
        w = pdf.get_string_width(label) + 12
        if color:
            pdf.set_fill_color(*_hex_rgb(color))
            pdf.set_text_color(255, 255, 255)
        pdf.cell(w, 9, self.fit(label), align="C", fill=bool(color), new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(0, 0, 0)
        pdf.ln(2)

    def grid(self, rows: list[tuple[str, str]], columns: int = 3) -> None:
        """The decision card: label over value, ``columns`` to a row, each in a light box."""
        pdf = self.pdf
        w = self.width / columns
        for start in range(0, len(rows), columns):
            y, x0 = pdf.get_y(), pdf.l_margin
            for i, (label, value) in enumerate(rows[start:start + columns]):
                x = x0 + i * w
                pdf.set_draw_color(200, 205, 215)
                pdf.rect(x + 0.5, y, w - 1, 13)
                pdf.set_xy(x + 2, y + 1)
                pdf.set_font(self.family, "", 7.5)
                pdf.set_text_color(100, 108, 125)
                pdf.cell(w - 4, 4, self.fit(label))
                pdf.set_xy(x + 2, y + 5.5)
                pdf.set_font(self.family, "B", 9.5)
                pdf.set_text_color(0, 0, 0)
                shown = value
                while len(shown) > 4 and pdf.get_string_width(shown) > w - 4:
                    shown = shown[:-2].rstrip() + "…" if not shown.endswith("…") else shown[:-2] + "…"
                pdf.cell(w - 4, 6, self.fit(shown))
            pdf.set_xy(pdf.l_margin, y + 15)

    def chart(self, closes: list[float], rating: str | None, date: str) -> None:
        """Closing prices up to the analysis date, the decision marked on the last one."""
        pdf = self.pdf
        if len(closes) < 2:
            self.text(self.t("No price history was available for the chart."), gray=100)
            return
        x0, y0, w, h = pdf.l_margin + 14, pdf.get_y() + 2, self.width - 16, 48
        lo, hi = min(closes), max(closes)
        span = (hi - lo) or 1.0
        pdf.set_draw_color(210, 214, 222)
        pdf.rect(x0, y0, w, h)
        pdf.set_font(self.family, "", 7)
        pdf.set_text_color(100, 108, 125)
        for value, yy in ((hi, y0), (lo, y0 + h - 3)):
            pdf.set_xy(pdf.l_margin - 1, yy)
            pdf.cell(14, 3, figures.plain_price(value), align="R")
        step = w / (len(closes) - 1)
        points = [(x0 + i * step, y0 + h - 2 - (c - lo) / span * (h - 4)) for i, c in enumerate(closes)]
        pdf.set_draw_color(45, 90, 160)
        pdf.set_line_width(0.5)
        for (xa, ya), (xb, yb) in zip(points, points[1:], strict=False):
            pdf.line(xa, ya, xb, yb)
        pdf.set_line_width(0.2)
        xe, ye = points[-1]
        color = _hex_rgb(_BADGE_COLORS.get(rating or "", "#555555"))
        pdf.set_fill_color(*color)
        pdf.ellipse(xe - 1.8, ye - 1.8, 3.6, 3.6, style="F")
        pdf.set_text_color(*color)
        pdf.set_font(self.family, "B", 8)
        label = self.t("{rating} on {date}", rating=rating_label(rating, self.t.lang) if rating
                       else self.t("decision"), date=date)
        pdf.set_xy(max(x0, xe - pdf.get_string_width(label) - 3), max(y0 + 1, ye - 6))
        pdf.cell(pdf.get_string_width(label) + 1, 4, self.fit(label))
        pdf.set_text_color(0, 0, 0)
        pdf.set_xy(pdf.l_margin, y0 + h + 2)
        self.text(self.t("Close {first} → {last}: the last {n} sessions up to the analysis date (never after), "
                         "the decision on the last one.", first=figures.plain_price(closes[0]),
                         last=figures.plain_price(closes[-1]), n=len(closes)), size=7.5, gray=100)

    def ladder(self, votes: list[tuple[str, str | None]]) -> None:
        """One row per voter, the five tiers across, the voter's tier filled in its colour."""
        from tradingagents.rating import RATINGS_5_TIER

        pdf = self.pdf
        name_w = 48
        tier_w = (self.width - name_w) / len(RATINGS_5_TIER)
        pdf.set_font(self.family, "B", 7.5)
        pdf.cell(name_w, 5, "")
        for tier in RATINGS_5_TIER:
            pdf.cell(tier_w, 5, self.fit(rating_label(tier, self.t.lang)), align="C")
        pdf.ln(5)
        for voter, tier in votes:
            pdf.set_font(self.family, "", 8)
            pdf.cell(name_w, 5.5, self.fit(self.t.p("role", voter)))
            for t in RATINGS_5_TIER:
                if t == tier:
                    pdf.set_fill_color(*_hex_rgb(_BADGE_COLORS[t]))
                    pdf.set_text_color(255, 255, 255)
                    pdf.set_font(self.family, "B", 7.5)
                    pdf.cell(tier_w - 1, 5, self.fit(rating_label(t, self.t.lang)), align="C", fill=True)
                    pdf.cell(1, 5, "")
                    pdf.set_text_color(0, 0, 0)
                    pdf.set_font(self.family, "", 8)
                else:
                    pdf.set_draw_color(225, 228, 235)
                    pdf.cell(tier_w - 1, 5, "", border=1)
                    pdf.cell(1, 5, "")
            if tier is None:
                pdf.set_font(self.family, "", 7)
                pdf.set_text_color(120, 120, 120)
            pdf.ln(6)
            pdf.set_text_color(0, 0, 0)


def provenance_lines(state: Mapping[str, Any], meta: Mapping[str, Any], *, t: Translator | None = None) -> list[str]:
    """Engine, data and dates of a run, as plain lines (the handout's provenance), in ``t``'s language
    (None: English); the engine's and the data's labels are the run's own words."""
    t = _tr(t)
    engine = figures.text(product_label(meta.get("llm_label") or meta.get("llm_provider"), t))
    # the offline engine calls no model: the config's default model names it carries were never used
    models = meta.get("quick_think_llm") and str(meta.get("llm_provider") or "").lower() != "offline"
    lines = [
        t("Engine: {engine} (quick {quick}, deep {deep})", engine=engine, quick=meta.get("quick_think_llm"),
          deep=meta.get("deep_think_llm")) if models else t("Engine: {engine}", engine=engine),
        t("Data: {value}", value=figures.text(product_label(meta.get("data_label") or meta.get("data_vendor"), t))),
        t("Analysis date: {date}; prices read up to that day, never after",
          date=figures.text(state.get("trade_date") or meta.get("date"))),
        t("Instrument: {value}", value=figures.text(instrument_shown(meta.get("instrument_context")
                                                                     or state.get("instrument_context"), t))),
    ]
    if meta.get("by"):
        lines.append(t("Run by: {user}", user=meta["by"]))
    if meta.get("elapsed_s") is not None:
        lines.append(t("Run time: {seconds} s", seconds=f"{float(meta['elapsed_s']):.1f}"))
    return [clean_text(line) for line in lines]


def report_pdf(state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None = None,
               closes: list[float] | None = None, *, t: Translator | None = None) -> bytes:
    """The report as a handout: a summary page, then the reports, the debates and the provenance.

    Page 1: ticker, date and rating, the decision card, the closing prices with the decision marked
    (``closes``), the team's vote ladder and the provenance. Then the handout's body
    (``handout_markdown``: the reports as prose with tables, the debates as attributed turns, no tool
    names, formula or raw log lines) rendered as HTML (``markdown_to_safe_html``: real tables, bold and
    italics, each debate turn headed by its speaker and quoted). Text only: no link annotation, no JavaScript. CJK text is
    drawn with Debian's WenQuanYi Micro Hei as the fallback of DejaVu Sans; without those fonts the
    PDF uses the core Helvetica and non-Latin-1 characters become "?". Headings and labels are in
    ``t``'s language (None: English).
    """
    t = _tr(t)
    plain_state = inert.clean_tree(dict(state or {}))
    plain_meta = inert.clean_tree(dict(meta or {}))
    ticker = clean_text(plain_state.get("company_of_interest") or plain_meta.get("ticker") or "")
    date = clean_text(plain_state.get("trade_date") or plain_meta.get("date") or "")
    out = _Handout(t("TradingAgents report — {ticker} {date}", ticker=ticker, date=date), t)
    pdf = out.pdf
    pdf.add_page()
    out.heading(f"{ticker} — {date}", 18)
    out.badge(rating)
    out.heading(t("Decision card"), 12)
    out.grid(card_rows(card(plain_state, plain_meta, rating), currency_of(plain_state, plain_meta), t=t))
    evidence = evidence_line(plain_meta, t=t)
    if evidence:  # the figures not found are listed with the report, after the debates
        out.text(evidence, size=9)
    out.heading(t("Price and decision"), 12)
    out.chart([float(c) for c in closes or [] if figures.number(c) is not None], rating, date)
    out.heading(t("The team's votes"), 12)
    out.ladder(vote_ladder(plain_state, plain_meta, rating))
    out.heading(t("Provenance"), 12)
    for line in provenance_lines(plain_state, plain_meta, t=t):
        out.text(line, size=8)
    out.text(t("Generated by TradingAgents Studio. Not investment advice."), size=7.5, gray=110)

    pdf.add_page()
    body = handout_markdown(state, rating, meta, t=t)
    # text only: a link prints as its text and address, never as a link annotation
    fragment = _PDF_LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})" if m.group(1) not in m.group(2) else m.group(2),
                             markdown_to_safe_html(body))
    pdf.set_font(out.family, "", 10)
    pdf.set_fill_color(238, 241, 246)  # the tables' header and alternate rows (not the ladder's last tier colour)
    pdf.set_draw_color(200, 205, 215)
    try:
        pdf.write_html(out.fit(fragment), font_family=out.family,
                       tag_styles=_pdf_tag_styles(out.family), table_line_separators=True)
    except Exception:  # noqa: BLE001 - a fragment the HTML layout cannot place falls back to plain lines
        pdf.add_page()
        _plain_lines(out, body)
    return bytes(pdf.output())


def _pdf_tag_styles(family: str) -> dict[str, Any]:
    from fpdf.fonts import FontFace, TextStyle

    return {
        "h1": TextStyle(font_family=family, font_style="B", font_size_pt=16, t_margin=4, b_margin=2),
        "h2": TextStyle(font_family=family, font_style="B", font_size_pt=13, t_margin=4, b_margin=2),
        "h3": TextStyle(font_family=family, font_style="B", font_size_pt=11, t_margin=3, b_margin=1),
        "h4": TextStyle(font_family=family, font_style="B", font_size_pt=10, t_margin=2, b_margin=1),
        # an agent text's own headings, under its section's (handout_markdown): bold, in the text's colour
        "h5": TextStyle(font_family=family, font_style="B", font_size_pt=9.5, color=(0, 0, 0), t_margin=2,
                        b_margin=1),
        "h6": TextStyle(font_family=family, font_style="B", font_size_pt=9, color=(60, 66, 80), t_margin=1,
                        b_margin=1),
        "blockquote": TextStyle(font_family=family, color=(60, 66, 80), l_margin=6, t_margin=1, b_margin=2),
        "code": FontFace(family=family),
        "pre": TextStyle(font_family=family, font_size_pt=8),
    }


def _plain_lines(out: _Handout, text: str) -> None:
    """The fallback body: one line of Markdown after another, marks removed."""
    pdf = out.pdf
    for raw in text.splitlines():
        line = raw.rstrip()
        pdf.set_x(pdf.l_margin)
        if not line.strip() or line.startswith("```") or re.match(r"^\s*\|?[-:| ]+\|?\s*$", line):
            pdf.ln(2)
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        if heading:
            out.heading(_plain(heading.group(2)), {1: 16, 2: 13, 3: 11}.get(len(heading.group(1)), 10))
            continue
        if _TABLE_ROW.match(line):
            line = "   ".join(c.strip() for c in line.strip().strip("|").split("|"))
        out.text(_plain(line.lstrip("> ")), size=9)


AUDIT_CSV_COLUMNS = ("when", "by", "action", "target", "detail")


def inert_cell(value: Any) -> str:
    """A CSV cell a spreadsheet shows as text: one that starts like a formula (=, +, -, @, a tab or a carriage
    return) gets a leading apostrophe, so a claim such as ``=HYPERLINK(…)`` in a name is never run."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def audit_csv(rows: list[dict[str, Any]]) -> str:
    """The Audit page's export: the rows shown, their cells inert (``inert_cell``), an English header."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(AUDIT_CSV_COLUMNS))
    writer.writeheader()
    writer.writerows([{k: inert_cell(r.get(k, "")) for k in AUDIT_CSV_COLUMNS} for r in rows])
    return buf.getvalue()
