"""Saved runs: ``results/<TICKER>/<date>/state.json`` and ``report.md``, written atomically.

``state.json`` = ``{"ticker", "date", "rating", "saved_at", "meta", "state"}`` where ``state`` is the
final graph state made JSON-safe (messages become ``{"type", "content", ...}`` dicts) and ``meta``
describes the run (provider labels, analysts, timings, the public part of the config). No API key
is ever written: the config goes through ``public_config`` and nothing else carries secrets.

A re-analysis of the same session keeps history: before the new run is written, the folder's
current ``state.json`` and ``report.md`` are copied to ``previous/<n>/`` (n = 1 for the first run,
counting up), so ``list_runs`` lists every version (``version``, ``previous``) and
``load_run(..., version=n)`` opens an earlier one.

A what-if fork of a run (``graph/whatif.py``) is a variant of it, never a version: it is saved in
``whatif/<n>/`` (the same two files; ``meta.whatif`` says where it forked and what changed), is not
listed by ``list_runs`` (``list_forks`` lists a session's forks) and a re-analysis leaves it alone.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from tradingagents import team
from tradingagents.config import DEFAULT_CONFIG, EXECUTION_LABELS, public_config, resolve_config
from tradingagents.fileio import atomic_write, atomic_write_all
from tradingagents.i18n import (
    EXCHANGE_NAMES,
    N_,
    Translator,
    exchange_label,
    rating_label,
    sector_label,
    translator,
)
from tradingagents.storage.inert import SanitizedView
from tradingagents.validation import safe_path_component, validate_date
from tradingagents.vendors import product_label

STATE_FILE = "state.json"
REPORT_FILE = "report.md"
PREVIOUS_DIR = "previous"  # <run folder>/previous/<n>/: the earlier runs of the same session
WHATIF_DIR = "whatif"  # <run folder>/whatif/<n>/: the what-if forks of the session's run

# (report key, title, analyst key) of every analyst, from the roster
REPORT_SECTIONS = tuple((r.output_key, r.node, r.key) for r in team.ANALYSTS)


NOTE_LABELS = {"Invented instrument": N_("Invented instrument"), "Session": N_("Session"), "Data": N_("Data"),
               "Missing data": N_("Missing data"), "Memory log": N_("Memory log"), "Re-analysis": N_("Re-analysis"),
               "Models": N_("Models"), "Blind run": N_("Blind run")}
"""The labels of ``run_notes`` (English, the keys callers match on) and their catalogue ids."""


def engine_label(engine: Mapping[str, Any], *, t: Translator | None = None) -> str:
    """A run's models as a person reads them: "OpenAI-compatible server (fake-quick, fake-deep)"."""
    t = t or translator(None)
    models = ", ".join(m for m in dict.fromkeys((engine.get("quick_think_llm"), engine.get("deep_think_llm"))) if m)
    label = product_label(str(engine.get("llm_label") or engine.get("llm_provider") or "?"), t)
    return f"{label} ({models})" if models else label


def engines_text(groups: Any, *, t: Translator | None = None) -> str:
    """``ran_on`` groups (``[{llm_provider, llm_label, quick_think_llm, deep_think_llm, nodes}]``) as one
    line: "Market Analyst, Bull Researcher on OpenAI-compatible server (fake-quick, fake-deep); …" (the
    agents only: an analyst's tool and clear nodes go with it)."""
    t = t or translator(None)
    parts = []
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, Mapping):
            continue
        nodes = [str(n) for n in group.get("nodes") or []
                 if str(n) in team.ROLE_BY_NODE and team.ROLE_BY_NODE[str(n)].node == str(n)]
        agents = ", ".join(t.p("role", n) for n in nodes) or t("no agent")
        parts.append(t("{agents} on {engine}", agents=agents, engine=engine_label(group, t=t)))
    return "; ".join(parts)


def mixed_engines(meta: Mapping[str, Any]) -> bool:
    """Whether a run's decision was made by more than one engine (``meta["ran_on"]``: a checkpoint begun
    under other models was resumed)."""
    groups = meta.get("ran_on")
    return isinstance(groups, list) and len(groups) > 1


def run_notes(meta: Mapping[str, Any], *, t: Translator | None = None) -> list[tuple[str, str]]:
    """What a saved run's meta says about its input and its saving, each ``(label, sentence)``: an
    invented instrument, the session a non-trading date was analysed as, data notes (CSV rows dropped,
    short history), missing data, the memory log's note, a re-analysis and a decision made by more than
    one engine (``ran_on``). The report, the CLI and
    the Run page say them in these words. ``t`` (None: English) translates the labels and the
    sentence this module writes; the engine's own notes (session, data) stay as the engine wrote them."""
    t = t or translator(None)
    notes: list[tuple[str, str]] = []
    if meta.get("invented"):
        notes.append(("Invented instrument", t("{ticker} is not listed by the demo market; the run analysed a "
                                               "generated, fictional instrument (--allow-synthetic), not a real "
                                               "company", ticker=meta.get("ticker"))))
    blind = meta.get("blind")
    if isinstance(blind, Mapping):  # stored in real names, dates and prices; the models saw these
        notes.append(("Blind run", t("the models saw an alias, shifted dates and rebased prices; what is stored "
                                     "here is in real names, dates and prices")))
    if meta.get("session_note"):
        notes.append(("Session", str(meta["session_note"])))
    notes += [("Data", str(line)) for line in meta.get("data_notes") or []]
    notes += [("Missing data", str(line)) for line in meta.get("missing_data") or []]
    if meta.get("log_note"):
        notes.append(("Memory log", str(meta["log_note"])))
    if meta.get("version_note"):
        notes.append(("Re-analysis", str(meta["version_note"])))
    if mixed_engines(meta):
        notes.append(("Models", t("more than one engine made this decision (a checkpoint begun under other "
                                  "models was resumed): {engines}", engines=engines_text(meta["ran_on"], t=t))))
    return [(t(NOTE_LABELS[label]), text) for label, text in notes]


def _message_to_dict(msg: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": getattr(msg, "type", type(msg).__name__),
        "content": getattr(msg, "content", str(msg)),
    }
    for attr in ("name", "tool_call_id"):
        value = getattr(msg, attr, None)
        if value:
            out[attr] = value
    calls = getattr(msg, "tool_calls", None)
    if calls:
        out["tool_calls"] = [{"name": c.get("name"), "args": c.get("args"), "id": c.get("id")} for c in calls]
    return out


def to_jsonable(value: Any) -> Any:
    """The final state (or any part of it) as plain JSON data; a non-finite number (an overflowed
    ``1e308`` sum, a NaN) is None, so what is saved is strict JSON (never ``Infinity``/``NaN``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if hasattr(value, "content") and hasattr(value, "type"):
        return _message_to_dict(value)
    if hasattr(value, "model_dump"):
        return to_jsonable(value.model_dump())
    return str(value)


def document_json(doc: Mapping[str, Any], *, sort_keys: bool = False) -> bytes:
    """A saved document (``state.json``, a backtest's manifest) as UTF-8: the text ``json.dumps(doc,
    ensure_ascii=False, indent=2, sort_keys=sort_keys)`` writes (a very small float may be written another way,
    0.00001 for 1e-05: the same number), with a non-finite number as null, as ``to_jsonable`` makes the state's.
    orjson writes it: the standard library's encoder runs in Python when it indents, ~1.7 ms for a run's state
    against 0.03 ms, on every run. What orjson refuses (an integer beyond 64 bits) goes through ``to_jsonable``
    and the standard library instead."""
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
                            | (orjson.OPT_SORT_KEYS if sort_keys else 0))
    except TypeError:
        return json.dumps(to_jsonable(doc), ensure_ascii=False, indent=2, allow_nan=False,
                          sort_keys=sort_keys).encode("utf-8")


def load_document(path: Path) -> Any:
    """A saved JSON document (``state.json``) read and parsed; OSError, or ValueError when it is not JSON.

    orjson parses it (a run's state in 0.13 ms, against 0.36 ms for the standard library); what orjson refuses
    and the standard library takes (a NaN or an integer beyond 64 bits in a hand-edited file) is parsed by the
    standard library, so every file reads as it always did."""
    data = path.read_bytes()
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data.decode("utf-8"))


def _run_key(final_state: Mapping[str, Any], meta: Mapping[str, Any] | None) -> tuple[str, str]:
    """(ticker, date) of a run to save: the state's, else the meta's ("" when neither says: ``run_dir``
    refuses it with the validators' message)."""
    ticker = final_state.get("company_of_interest") or (meta or {}).get("ticker")
    date = final_state.get("trade_date") or (meta or {}).get("date")
    return str(ticker or ""), str(date or "")


def run_dir(config: Mapping[str, Any] | None, ticker: str, date: str) -> Path:
    """``<results_dir>/<TICKER>/<date>``: both parts made safe for a path here, where it is built."""
    cfg = resolve_config(config)
    return Path(cfg["results_dir"]) / safe_path_component(ticker) / validate_date(date, allow_future=True)


def public_meta(config: Mapping[str, Any] | None, meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """The run's meta as saved in state.json: JSON data, with only the public part of the config."""
    cfg = resolve_config(config)
    meta_out = dict(to_jsonable(dict(meta or {})))
    meta_out.setdefault("llm_provider", cfg.get("llm_provider"))
    meta_out.setdefault("data_vendor", cfg.get("data_vendor"))
    meta_out["config"] = to_jsonable(public_config(meta_out.get("config") or cfg))
    return meta_out


def evidence_totals(meta: Mapping[str, Any] | None) -> tuple[int, int] | None:
    """``(found, figures)`` over every text of a run's ``meta["evidence"]`` (``graph/evidence.py``); None for
    a run saved before the ledger existed."""
    evidence = (meta or {}).get("evidence")
    if not isinstance(evidence, Mapping) or not evidence:
        return None
    records = [r for r in evidence.values() if isinstance(r, Mapping)]
    return (sum(int(r.get("found") or 0) for r in records), sum(int(r.get("figures") or 0) for r in records))


def evidence_line(meta: Mapping[str, Any] | None, *, t: Translator | None = None) -> str | None:
    """"Evidence: k of n figures found in the data" of a run (None without a ledger)."""
    totals = evidence_totals(meta)
    if totals is None:
        return None
    return (t or translator(None))("Evidence: {found} of {figures} figures found in the data",
                                   found=totals[0], figures=totals[1])


def evidence_text_title(key: str, *, t: Translator | None = None) -> str:
    """The title of one text of the ledger: a report's, a plan's, or a debate turn's (``invest:Bull:1``)."""
    t = t or translator(None)
    if key in team.REPORT_TITLES:
        return t.p("report", team.REPORT_TITLES[key])
    debate, _, rest = key.partition(":")
    speaker, _, round_ = rest.partition(":")
    if debate in ("invest", "risk") and speaker:
        return t("{speaker}, round {round}", speaker=t.p("speaker", speaker), round=round_)
    return key


def evidence_not_found(meta: Mapping[str, Any] | None, *, t: Translator | None = None) -> list[tuple[str, str, str]]:
    """Every figure the ledger did not find: ``(text title, figure, its sentence)`` in the texts' order."""
    out = []
    for key, record in ((meta or {}).get("evidence") or {}).items():
        for item in (record or {}).get("not_found") or []:
            out.append((evidence_text_title(str(key), t=t), str(item.get("figure") or ""), str(item.get("sentence") or "")))
    return out


def _md_section(title: str, body: str | None, t: Translator, level: int = 2) -> str:
    text = (body or "").strip() or "_" + t("Not produced in this run.") + "_"
    return f"{'#' * level} {title}\n\n{text}\n"


def instrument_shown(context: Any, t: Translator | None = None) -> Any:
    """The run's instrument line as a reader sees it beside the data line: without the "; data: …" the
    engine appends for the models (the data source has its own line, in the reader's language), its sector
    and industry in ``t``'s language ("Technology / Semiconductors" → "科技 / 半导体")."""
    if not isinstance(context, str):
        return context
    shown = re.sub(r";\s*data:\s*[^;()]*$", "", context.strip()) or context
    if t is None or t.lang == "en":
        return shown

    def part_shown(part: str) -> str:  # an exchange's name, else a sector / industry (an unknown name: as it is)
        if part.strip() in EXCHANGE_NAMES:
            return exchange_label(part.strip(), t.lang)
        return " / ".join(sector_label(name.strip(), t.lang) for name in part.split(" / "))

    def named(match: re.Match[str]) -> str:
        return ", ".join(part_shown(part) for part in match.group(0).split(", "))

    # "NVDA — NVIDIA Corp (Technology / Semiconductors, NASDAQ, USD)": the sector and industry, then the exchange
    return re.sub(r"(?<=\()[^()]+(?=\)$)", named, shown)


def render_report_markdown(state: Mapping[str, Any], rating: str | None, meta: Mapping[str, Any] | None, *,
                           t: Translator | None = None) -> str:
    """The human report of one run: decision first, then every report and both debates, its headings
    and labels in ``t``'s language (None: English, the saved ``report.md``'s words; the model's text is
    as it was written).

    Rendered from the sanitised tree (``storage.inert.sanitize_tree``, read through a ``SanitizedView``:
    only what the report shows is sanitised): no model text reaches the Markdown with a live tag or a
    link of another scheme than http, https or mailto."""
    t = t or translator(None)
    state = SanitizedView(dict(state or {}))
    meta = SanitizedView(dict(meta or {}))
    ticker = state.get("company_of_interest") or meta.get("ticker") or "?"
    date = state.get("trade_date") or meta.get("date") or "?"
    lines = [f"# {ticker} — {date}: **{rating_label(rating, t.lang) if rating else t('n/a')}**", ""]
    facts = []
    notes = run_notes(meta, t=t)
    first = {t(NOTE_LABELS["Invented instrument"]), t(NOTE_LABELS["Data"])}
    # what the input lacked comes before anything it decided
    facts += ["- " + t("{label}: {text}", label=f"**{label}**", text=text) for label, text in notes if label in first]
    instrument = meta.get("instrument_context") or state.get("instrument_context")
    if instrument:  # another language: the line as a reader sees it (sector names translated, no data suffix)
        facts.append("- " + t("Instrument: {value}", value=instrument if t.lang == "en" else instrument_shown(instrument, t)))
    if meta.get("llm_label") or meta.get("llm_provider"):
        facts.append("- " + t("Model: {value}", value=product_label(meta.get("llm_label") or meta.get("llm_provider"), t)))
    if meta.get("data_label") or meta.get("data_vendor"):
        facts.append("- " + t("Data: {value}", value=product_label(meta.get("data_label") or meta.get("data_vendor"), t)))
    facts += ["- " + t("{label}: {text}", label=label, text=text) for label, text in notes if label not in first]
    if meta.get("analysts"):
        how = str(meta.get("analyst_execution") or DEFAULT_CONFIG["analyst_execution"])
        names = ", ".join(t.p("analyst", str(a)) for a in meta["analysts"])
        facts.append("- " + t("Analysts: {names} ({execution})", names=names, execution=t(EXECUTION_LABELS.get(how, how))))
    if meta.get("elapsed_s") is not None:
        facts.append("- " + t("Run time: {seconds} s", seconds=f"{float(meta['elapsed_s']):.1f}"))
    usage = meta.get("usage") or {}
    if usage:
        facts.append("- " + t("LLM calls: {llm}, tool calls: {tools}, tokens in/out: {tokens_in}/{tokens_out}",
                              llm=usage.get("llm_calls", 0), tools=usage.get("tool_calls", 0),
                              tokens_in=usage.get("input_tokens", 0), tokens_out=usage.get("output_tokens", 0)))
    evidence = evidence_line(meta, t=t)
    if evidence:
        facts.append("- " + evidence)
    if facts:
        lines += facts + [""]
    pm_notes = [n for n in meta.get("pm_notes") or [] if isinstance(n, Mapping) and n.get("note")]
    if pm_notes:  # what the judges were told by the portfolio manager, before the decision they wrote
        lines.append("## " + t("Portfolio manager's notes") + "\n")
        lines += ["- " + t("To the {judge} ({by}, {at}): {note}", judge=t.p("role", _judge_node(n.get("before"))),
                           by=n.get("by") or "?", at=n.get("at") or "", note=" ".join(str(n["note"]).split()))
                  for n in pm_notes] + [""]
    lines.append(_md_section(t("Portfolio Manager's decision"), state.get("final_trade_decision"), t))
    lines.append("## " + t("Analyst reports") + "\n")
    selected = set(meta.get("analysts") or [])
    for key, title, analyst in REPORT_SECTIONS:
        if selected and analyst not in selected and not state.get(key):
            continue
        lines.append(_md_section(t.p("role", title), state.get(key), t, level=3))
    invest = state.get("investment_debate_state") or {}
    lines.append(_md_section(t("Research debate (Bull vs Bear)"), invest.get("history"), t))
    lines.append(_md_section(t("Research Manager's plan"), state.get("investment_plan"), t))
    lines.append(_md_section(t("Trader's proposal"), state.get("trader_investment_plan"), t))
    risk = state.get("risk_debate_state") or {}
    lines.append(_md_section(t("Risk debate"), risk.get("history"), t))
    if state.get("past_context"):
        lines.append(_md_section(t("Past decisions considered"), state.get("past_context"), t))
    missing = evidence_not_found(meta, t=t)
    if missing:
        body = "\n".join(f"- **{title}**: {figure} — {sentence}" for title, figure, sentence in missing)
        lines.append(_md_section(t("Figures not found in the data"), body, t))
    questions = [q for q in meta.get("questions") or [] if isinstance(q, Mapping) and q.get("question")]
    if questions:  # the appendix: the committee's questions to the team and the answers
        lines.append("## " + t("Questions to the team") + "\n")
        for q in questions:
            lines.append("### " + t("{who} asked the {agent} ({at})", who=q.get("by") or "?",
                                    agent=t.p("role", _judge_node(q.get("agent"))), at=q.get("at") or "") + "\n")
            lines.append(f"> {' '.join(str(q['question']).split())}\n")
            lines.append(str(q.get("answer") or "").strip() + "\n")
    return "\n".join(lines).rstrip() + "\n"


def _judge_node(key: Any) -> str:
    """A roster key's node name ("portfolio_manager" → "Portfolio Manager"); the text itself when unknown."""
    role = team.ROLES.get(str(key or ""))
    return role.node if role else str(key or "?")


def save_run(
    config: Mapping[str, Any] | None,
    final_state: Mapping[str, Any],
    rating: str | None,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write state.json and report.md for the run; returns the run folder.

    The ticker and date come from the (already validated) state; ``run_dir`` makes them path-safe.
    """
    cfg = resolve_config(config)
    folder = run_dir(cfg, *_run_key(final_state, meta))
    ticker, date = folder.parent.name, folder.name
    keep_previous_version(folder)
    meta_out = public_meta(cfg, meta)
    saved_at = _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")
    doc = {
        "ticker": ticker,
        "date": date,
        "rating": rating,
        "saved_at": saved_at,
        "meta": meta_out,
        "state": to_jsonable(dict(final_state)),
    }
    # both files durable, the run folder fsynced once for the two renames (not once per file)
    atomic_write_all([
        (folder / STATE_FILE, document_json(doc)),
        (folder / REPORT_FILE, render_report_markdown(final_state, rating, meta_out)),
    ])
    return folder


def _run_doc(final_state: Mapping[str, Any], rating: str | None, meta_out: Mapping[str, Any], ticker: str,
             date: str) -> dict[str, Any]:
    return {"ticker": ticker, "date": date, "rating": rating,
            "saved_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds"),
            "meta": dict(meta_out), "state": to_jsonable(dict(final_state))}


def save_fork(config: Mapping[str, Any] | None, final_state: Mapping[str, Any], rating: str | None,
              meta: Mapping[str, Any] | None = None) -> Path:
    """Write a what-if fork as ``<run folder>/whatif/<n>/`` (state.json and report.md); returns its folder.

    ``n`` is the next free number, taken by creating its folder (two forks saved at once never share one)."""
    cfg = resolve_config(config)
    base = run_dir(cfg, *_run_key(final_state, meta))
    root = base / WHATIF_DIR
    root.mkdir(parents=True, exist_ok=True)
    n = max((int(p.name) for p in root.iterdir() if p.name.isdigit()), default=0) + 1
    while True:
        try:
            (root / str(n)).mkdir()
            break
        except FileExistsError:
            n += 1
    folder = root / str(n)
    meta_out = public_meta(cfg, meta)
    doc = _run_doc(final_state, rating, meta_out, base.parent.name, base.name)
    atomic_write_all([
        (folder / STATE_FILE, document_json(doc)),
        (folder / REPORT_FILE, render_report_markdown(final_state, rating, meta_out)),
    ])
    return folder


def list_forks(config: Mapping[str, Any] | None, ticker: str, date: str) -> list[dict[str, Any]]:
    """The what-if forks of a session's run, oldest first: ``{n, rating, saved_at, path, whatif, llm_provider,
    data_vendor}``."""
    root = run_dir(config, ticker, date) / WHATIF_DIR
    out = []
    for folder in sorted((p for p in root.iterdir() if p.name.isdigit()), key=lambda p: int(p.name)) \
            if root.is_dir() else []:
        try:
            doc = load_document(folder / STATE_FILE)
        except (OSError, ValueError):
            continue  # a fork still being written, or a foreign file
        if isinstance(doc, dict):
            meta = doc["meta"] if isinstance(doc.get("meta"), dict) else {}
            out.append({"n": int(folder.name), "rating": doc.get("rating"), "saved_at": doc.get("saved_at") or "",
                        "path": str(folder), "whatif": meta.get("whatif") or {},
                        "llm_provider": meta.get("llm_provider"), "data_vendor": meta.get("data_vendor")})
    return out


def load_fork(config: Mapping[str, Any] | None, ticker: str, date: str, n: int) -> dict[str, Any]:
    """``{"state", "rating", "meta"}`` of a session's what-if fork ``n`` (FileNotFoundError when none)."""
    base = run_dir(config, ticker, date)
    path = base / WHATIF_DIR / str(int(n)) / STATE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"No what-if fork {int(n)} of {base.parent.name} on {base.name} (looked for {path}).")
    doc = load_document(path)
    return {"state": doc.get("state") or {}, "rating": doc.get("rating"), "meta": doc.get("meta") or {}}


def update_run_meta(config: Mapping[str, Any] | None, ticker: str, date: str, updates: Mapping[str, Any]) -> None:
    """Add ``updates`` to the meta of a session's current run (state.json rewritten atomically; its state,
    rating and report are kept as they are). FileNotFoundError when there is no run."""
    path = run_dir(config, ticker, date) / STATE_FILE
    if not path.is_file():
        raise FileNotFoundError(f"No saved run for {ticker} on {date} (looked for {path}).")
    doc = load_document(path)
    doc["meta"] = {**(doc.get("meta") or {}), **to_jsonable(dict(updates))}
    atomic_write(path, document_json(doc))


def previous_versions(folder: Path) -> list[int]:
    """The numbers of a run folder's earlier versions, oldest first."""
    root = folder / PREVIOUS_DIR
    if not root.is_dir():
        return []
    return sorted(int(p.name) for p in root.iterdir() if p.name.isdigit() and (p / STATE_FILE).is_file())


def keep_previous_version(folder: Path) -> int | None:
    """Copy the folder's current run to ``previous/<n>/`` before it is replaced; its number, or None."""
    current = folder / STATE_FILE
    if not current.is_file():
        return None
    n = (previous_versions(folder) or [0])[-1] + 1
    target = folder / PREVIOUS_DIR / str(n)
    report = folder / REPORT_FILE
    if report.is_file():
        atomic_write(target / REPORT_FILE, report.read_bytes())
    atomic_write(target / STATE_FILE, current.read_bytes())  # last: a version exists once its state does
    return n


def _run_row(state_file: Path, ticker: str, date: str, version: int | None) -> dict[str, Any] | None:
    try:
        doc = load_document(state_file)
    except (OSError, ValueError):
        return None  # a foreign or broken file is not a run
    if not isinstance(doc, dict):
        return None
    meta: dict[str, Any] = doc["meta"] if isinstance(doc.get("meta"), dict) else {}
    return {
        "ticker": doc.get("ticker") or ticker,
        "date": doc.get("date") or date,
        "rating": doc.get("rating"),
        "path": str(state_file.parent),
        "saved_at": doc.get("saved_at") or "",
        "version": version,  # None: the current run of the session; n: its n-th earlier run
        "previous": version is not None,
        **listing_fields(meta),
    }


RUN_SHAPE_KEYS = ("analysts", "analyst_execution", "analyst_data", "max_debate_rounds", "max_risk_discuss_rounds",
                  "elapsed_s")
"""The run's shape and how long it took, in its row when its meta has them: a new run's ETA is the median time of
the newest runs of the same shape (``studio.runs.expected_duration``), read from the listing."""


def listing_fields(meta: Mapping[str, Any]) -> dict[str, Any]:
    """What a run's row in ``list_runs`` takes from its meta, in the files and the desk database alike (which
    keeps them in a column, ``ta_runs.listing``): the providers; ``invented``; ``by`` (who ran it, empty before it
    was recorded); ``blind`` (the models saw an alias and shifted dates); the models and the cost the History
    page shows (``cost_usd``: a number, else None: no price, or saved before pricing); and ``RUN_SHAPE_KEYS``
    that are set. Given a row's own fields it gives them back."""
    usage = meta["usage"] if isinstance(meta.get("usage"), Mapping) else {}
    cost = usage.get("cost_usd", meta.get("cost_usd"))
    return {
        **{key: meta[key] for key in RUN_SHAPE_KEYS if meta.get(key) is not None},
        "llm_provider": meta.get("llm_provider"),
        "data_vendor": meta.get("data_vendor"),
        "invented": bool(meta.get("invented")),
        "by": str(meta.get("by") or ""),
        "blind": bool(meta.get("blind")),
        "quick_think_llm": meta.get("quick_think_llm"),
        "deep_think_llm": meta.get("deep_think_llm"),
        "cost_usd": float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    }


def list_runs(config: Mapping[str, Any] | None = None, *, include_previous: bool = False) -> list[dict[str, Any]]:
    """Every saved run, newest first: ticker, date, rating, path (the folder), saved_at, providers and models,
    ``cost_usd`` (None: no price, or saved before pricing), ``by``, ``invented``, ``blind``, ``version`` (None
    for a session's current run, n for its earlier runs, listed only with ``include_previous``) and
    ``previous``.

    A run's row is read from its ``state.json`` once per version of the file (``_ROWS``): the Run, History,
    Debates, Compare and Watchlist pages list the runs on every rerun, and reading every file each time took
    0.8 s a rerun at 2,000 runs (a watchlist of 20 over five months)."""
    root = Path(resolve_config(config)["results_dir"])
    if not root.is_dir():
        return []
    runs = _ROWS.rows(root)
    if include_previous:
        runs += _ROWS.rows(root, previous=True)
    runs.sort(key=lambda r: (r["saved_at"], r["date"], r["ticker"]), reverse=True)
    return runs


def _subfolders(path: str) -> list[os.DirEntry[str]]:
    """The folders in ``path`` that ``glob("*")`` finds (not hidden ones); none when it cannot be read."""
    try:
        with os.scandir(path) as entries:
            return [e for e in entries if not e.name.startswith(".") and e.is_dir()]
    except OSError:
        return []


def _state_files(root: Path, previous: bool) -> Iterator[tuple[str, str, str, int | None]]:
    """``(path, ticker folder, date folder, version)`` of the state files ``root.glob("*/*/state.json")`` finds
    (``previous``: ``*/*/previous/<n>/state.json``), whether or not each file exists."""
    for ticker in _subfolders(str(root)):
        for day in _subfolders(ticker.path):
            if not previous:
                yield os.path.join(day.path, STATE_FILE), ticker.name, day.name, None
                continue
            for version in _subfolders(os.path.join(day.path, PREVIOUS_DIR)):
                if version.name.isdigit():
                    yield os.path.join(version.path, STATE_FILE), ticker.name, day.name, int(version.name)


class _RowCache:
    """The rows ``read`` makes of state files (``list_runs``'s, ``list_memory_used``'s), kept per file and version
    of it (inode, size, mtime in ns: a run is saved by an atomic replace, so each save is a new inode), for the
    last ``ROOTS`` results folders of the process.

    A listing stats each file (7 ms at 2,000 runs) and reads only the ones it has not seen in that version; a
    file that is not a run is remembered as such until it changes. A listing replaces what was kept for its
    folder, so a deleted run is forgotten. Rows are handed out as copies. The rows of a folder of more than
    ``BUDGET`` runs are not kept (they would stay in a server's memory)."""

    ROOTS = 4
    BUDGET = 200_000

    def __init__(self, read: Callable[[Path, str, str, int | None], dict[str, Any] | None]) -> None:
        self._read = read  # (state file, ticker folder, date folder, version) -> its row, or None: not a run
        self._lock = threading.Lock()
        self._kept: dict[tuple[str, bool], dict[str, tuple[tuple[int, int, int], dict[str, Any] | None]]] = {}

    def rows(self, root: Path, *, previous: bool = False) -> list[dict[str, Any]]:
        key = (str(root), previous)
        with self._lock:
            known = self._kept.get(key) or {}
        seen: dict[str, tuple[tuple[int, int, int], dict[str, Any] | None]] = {}
        out: list[dict[str, Any]] = []
        for path, ticker, date, version in _state_files(root, previous):
            try:
                st = os.stat(path)
            except OSError:
                continue
            sig = (st.st_ino, st.st_size, st.st_mtime_ns)
            hit = known.get(path)
            row = hit[1] if hit is not None and hit[0] == sig else self._read(Path(path), ticker, date, version)
            seen[path] = (sig, row)
            if row is not None:
                out.append(dict(row))
        with self._lock:
            self._kept.pop(key, None)
            if len(seen) <= self.BUDGET:
                self._kept[key] = seen
            while len(self._kept) > 2 * self.ROOTS:  # two listings a folder: its current runs, its earlier ones
                del self._kept[next(iter(self._kept))]
        return out

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()


_ROWS = _RowCache(_run_row)


def list_memory_used(config: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """``{ticker, date, memory_used}`` of every saved run that records what its roles remembered, in the order of
    their files' paths. Read once per version of each file (``_USED``), as ``list_runs`` does."""
    root = Path(resolve_config(config)["results_dir"])
    if not root.is_dir():
        return []
    rows = sorted(_USED.rows(root), key=lambda r: r["file"])  # in the order of the files' paths
    return [{"ticker": r["ticker"], "date": r["date"], "memory_used": r["memory_used"]} for r in rows]


def _memory_used_row(state_file: Path, ticker: str, date: str, version: int | None) -> dict[str, Any] | None:
    try:
        doc = load_document(state_file)
    except (OSError, ValueError):
        return None
    meta = doc.get("meta") if isinstance(doc, dict) else None
    used = meta.get("memory_used") if isinstance(meta, dict) else None
    if not isinstance(used, dict):
        return None
    return {"ticker": doc.get("ticker") or ticker, "date": doc.get("date") or date, "memory_used": used,
            "file": str(state_file)}


_USED = _RowCache(_memory_used_row)


def load_run(config: Mapping[str, Any] | None, ticker: str, date: str, version: int | None = None) -> dict[str, Any]:
    """``{"state", "rating", "meta"}`` of a saved run (``version``: one of its earlier runs);
    FileNotFoundError saying which is missing.

    ``meta["debate_turns"]`` lists the run's debate turns ({debate, role, speaker, round, turn,
    text}); runs saved before it existed have none.
    """
    base = run_dir(config, ticker, date)
    folder = base if version is None else base / PREVIOUS_DIR / str(int(version))
    path = folder / STATE_FILE
    if not path.is_file():
        which = "" if version is None else f" (earlier version {int(version)})"
        raise FileNotFoundError(
            f"No saved run for {base.parent.name} on {base.name}{which} (looked for {path}). Run the analysis first."
        )
    doc = load_document(path)
    return {"state": doc.get("state") or {}, "rating": doc.get("rating"), "meta": doc.get("meta") or {}}
