"""History and comparison of saved runs, UI-neutral: readable rows, filters, the rating ladder, the
configuration difference, usage, and the links that open or re-run a run.

The History and Compare pages render these; nothing here imports streamlit. Saved runs come from
``tradingagents.storage`` (files or PostgreSQL); labels come from the provider presets, so a page
never shows an internal name such as ``openai_compatible`` or a microsecond ISO timestamp.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from tradingagents import pricing, team
from tradingagents.config import PATH_DEFAULTS
from tradingagents.llm_presets import provider_label as preset_label
from tradingagents.rating import RATINGS_5_TIER, parse_rating
from tradingagents.vendors import vendor_label

LADDER = tuple(team.ROLES[k] for k in ("research_manager", "trader", "portfolio_manager"))
"""Who rates, in order: the research manager's plan, the trader's proposal, the final decision."""
PREFILL_KEYS = ("ticker", "date", "analysts", "max_debate_rounds", "max_risk_discuss_rounds", "llm_provider",
                "data_vendor")
NOT_CONFIG = frozenset({
    "ticker", "date", "thread_id", "resumed", "elapsed_s", "usage", "node_times_ms", "debate_turns", "config",
    "instrument_context", "home", *PATH_DEFAULTS, "llm_label", "data_label", "asset_type", "by", "user",
    "desk_leads", "missing_data", "log_note", "session_note", "warnings", "memory_used", "decision", "saved_at",
    "analyst_execution_note",
})
"""Meta keys that describe the run itself, its outcome or where files live, not how it was configured: only
settings a user chose (analysts, rounds, provider, models, data source…) are compared."""


def provider_label(name: Any) -> str:
    """The preset's label ("Offline engine (no LLM)", "OpenAI-compatible server"); the name if unknown."""
    return preset_label(name, capital=True)


def readable_time(iso: Any) -> str:
    """``2026-12-01T09:41:07.123456+00:00`` → ``1 Dec 2026 09:41`` (UTC); "—" when absent or unreadable."""
    try:
        when = dt.datetime.fromisoformat(str(iso))
    except (TypeError, ValueError):
        return "—"
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC)
    return f"{when.day} {when:%b %Y %H:%M}"


def run_link(ticker: str, date: str) -> str:
    """The Run page showing this saved run."""
    return "/run?" + urlencode({"ticker": ticker, "date": date})


def debates_link(ticker: str, date: str) -> str:
    return "/debates?" + urlencode({"ticker": ticker, "date": date})


def compare_link(a: tuple, b: tuple) -> str:
    """``(ticker, date)`` or ``(ticker, date, version)`` of each side (a version: an earlier run)."""
    return "/compare?" + urlencode({"a": "|".join(str(x) for x in a if x is not None),
                                    "b": "|".join(str(x) for x in b if x is not None)})


@dataclass(frozen=True)
class HistoryRow:
    ticker: str
    date: str
    rating: str | None
    saved_at: str
    provider: str  # the preset name (filters); shown through provider_label
    vendor: str
    models: tuple[str, ...] = field(default_factory=tuple)  # quick, deep (empty for the offline engine)
    cost: str = "—"  # the saved meta.usage.cost_usd as shown (run_cost_text)
    by: str = ""  # who ran it (the saved meta's ``by``; empty for a run saved before it was recorded)
    version: int | None = None  # None: the session's current run; n: its n-th earlier run (a re-analysis)
    invented: bool = False  # an invented instrument of the demo market

    @property
    def run_id(self) -> str:
        """The Compare page's id of the run: ``TICKER|DATE``, or ``TICKER|DATE|n`` for an earlier version."""
        return f"{self.ticker}|{self.date}" + (f"|{self.version}" if self.version is not None else "")

    @property
    def saved(self) -> str:
        return readable_time(self.saved_at)

    @property
    def llm(self) -> str:
        label = provider_label(self.provider)
        return f"{label} · {' / '.join(self.models)}" if self.models else label

    def as_display(self) -> dict[str, Any]:
        return {"Ticker": self.ticker, "Date": self.date, "Rating": self.rating or "—", "LLM": self.llm,
                "Cost": self.cost, "Data": vendor_label(self.vendor) + (" · invented instrument" if self.invented else ""),
                "Version": "current" if self.version is None else f"earlier #{self.version}",
                "By": self.by or "—", "Saved": self.saved,
                "Open": run_link(self.ticker, self.date), "Debates": debates_link(self.ticker, self.date)}


CONSTANT_COLUMNS = ("LLM", "Data", "By", "Cost")
"""History columns that are dropped from the table when every shown row has the same value (said once above it)."""


def split_constant(display: list[dict[str, Any]], columns: Iterable[str] = CONSTANT_COLUMNS
                   ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows without the columns every row shares, {column: the shared value}); a single row keeps all."""
    if len(display) < 2:
        return display, {}
    shared = {c: display[0][c] for c in columns if c in display[0] and all(r.get(c) == display[0][c] for r in display)}
    return [{k: v for k, v in r.items() if k not in shared} for r in display], shared


def run_cost_text(meta: Mapping[str, Any] | None, provider: Any = None) -> str:
    """A saved run's cost: "$0.00 · offline engine", "$0.0123", or "—" (no price, or saved before pricing)."""
    meta = meta or {}
    provider = provider or meta.get("llm_provider") or (meta.get("config") or {}).get("llm_provider")
    if str(provider or "").strip().lower() == pricing.OFFLINE_PROVIDER:
        return pricing.cost_text(None, offline=True)
    usage = meta.get("usage") if isinstance(meta.get("usage"), Mapping) else {}
    return pricing.cost_text(usage.get("cost_usd", meta.get("cost_usd")))


def history_rows(runs: Iterable[Mapping[str, Any]], metas: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[HistoryRow]:
    """Rows from ``storage.list_runs`` plus each run's saved meta (for the model names), newest first."""
    out = []
    for r in runs:
        ticker, date = str(r.get("ticker") or ""), str(r.get("date") or "")
        meta = metas.get((ticker, date)) or {}
        provider = str(r.get("llm_provider") or meta.get("llm_provider") or "")
        models: tuple[str, ...] = ()
        if provider and provider != "offline":
            models = tuple(str(m) for m in (meta.get("quick_think_llm"), meta.get("deep_think_llm")) if m)
        out.append(HistoryRow(ticker, date, r.get("rating"), str(r.get("saved_at") or ""), provider,
                              str(r.get("data_vendor") or meta.get("data_vendor") or ""), models,
                              run_cost_text(meta, provider), str(meta.get("by") or ""),
                              r.get("version"), bool(r.get("invented"))))
    return out


def filter_rows(
    rows: Sequence[HistoryRow],
    *,
    text: str = "",
    start: dt.date | None = None,
    end: dt.date | None = None,
    ratings: Iterable[str] = (),
    providers: Iterable[str] = (),
    models: Iterable[str] = (),
) -> list[HistoryRow]:
    """The rows matching every given filter (an empty filter matches all).

    ``text`` matches the ticker (case-insensitive, substring); dates are the analysis dates,
    inclusive; ``models`` matches either of the run's model names.
    """
    text = text.strip().upper()
    ratings, providers, models = set(ratings), set(providers), set(models)
    out = []
    for row in rows:
        try:
            day = dt.date.fromisoformat(row.date)
        except ValueError:
            day = None
        if text and text not in row.ticker.upper():
            continue
        if start and (day is None or day < start):
            continue
        if end and (day is None or day > end):
            continue
        if ratings and (row.rating or "—") not in ratings:
            continue
        if providers and row.provider not in providers:
            continue
        if models and not models & set(row.models):
            continue
        out.append(row)
    return out


# ---------------------------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------------------------
def rating_ladder(state: Mapping[str, Any] | None, saved_rating: str | None) -> list[tuple[str, str | None]]:
    """(role name, rating) for research manager → trader → portfolio manager.

    The portfolio manager's rung is the saved rating (the structured one); the others are read
    from their saved texts with ``parse_rating`` (None when the text is missing).
    """
    state = state or {}
    out = []
    for role in LADDER:
        if role.key == "portfolio_manager" and saved_rating in RATINGS_5_TIER:
            out.append((role.node, saved_rating))
            continue
        text = state.get(role.output_key or "")
        out.append((role.node, parse_rating(str(text), default=None) if text else None))
    return out


def _flat_config(meta: Mapping[str, Any]) -> dict[str, Any]:
    flat = {k: v for k, v in dict(meta.get("config") or {}).items() if k not in NOT_CONFIG}
    flat.update({k: v for k, v in meta.items() if k not in NOT_CONFIG})
    return flat


def _show(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def config_diff(meta_a: Mapping[str, Any] | None, meta_b: Mapping[str, Any] | None) -> list[tuple[str, str, str]]:
    """(setting, value in A, value in B) for every saved setting that differs, sorted by name.

    Providers and data sources are shown by their labels.
    """
    a, b = _flat_config(meta_a or {}), _flat_config(meta_b or {})
    out = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if va == vb:
            continue
        if key == "llm_provider":
            sa, sb = provider_label(va), provider_label(vb)
        elif key == "data_vendor":
            sa, sb = vendor_label(va), vendor_label(vb)
        else:
            sa, sb = _show(va), _show(vb)
        out.append((key, sa, sb))
    return out


USAGE_FIELDS = (("llm_calls", "LLM calls"), ("tool_calls", "Tool calls"), ("input_tokens", "Tokens in"),
                ("output_tokens", "Tokens out"))


def usage_rows(meta_a: Mapping[str, Any] | None, meta_b: Mapping[str, Any] | None) -> list[tuple[str, str, str]]:
    """(measure, A, B): run time, the usage totals and the cost."""
    rows = []
    ea, eb = (meta_a or {}).get("elapsed_s"), (meta_b or {}).get("elapsed_s")
    rows.append(("Run time", f"{float(ea):.1f} s" if ea is not None else "—",
                 f"{float(eb):.1f} s" if eb is not None else "—"))
    ua, ub = dict((meta_a or {}).get("usage") or {}), dict((meta_b or {}).get("usage") or {})
    for key, label in USAGE_FIELDS:
        rows.append((label, f"{int(ua[key]):,}" if key in ua else "—", f"{int(ub[key]):,}" if key in ub else "—"))
    rows.append(("Cost", run_cost_text(meta_a), run_cost_text(meta_b)))
    return rows


def prefill(meta: Mapping[str, Any], ticker: str, date: str) -> dict[str, Any]:
    """The Run form's values for "run again with changes"."""
    config = dict(meta.get("config") or {})
    values = {
        "ticker": ticker,
        "date": date,
        "analysts": list(meta.get("analysts") or config.get("selected_analysts") or list(team.ANALYST_KEYS)),
        "max_debate_rounds": meta.get("max_debate_rounds", config.get("max_debate_rounds")),
        "max_risk_discuss_rounds": meta.get("max_risk_discuss_rounds", config.get("max_risk_discuss_rounds")),
        "llm_provider": meta.get("llm_provider") or config.get("llm_provider"),
        "data_vendor": meta.get("data_vendor") or config.get("data_vendor"),
    }
    return {k: values[k] for k in PREFILL_KEYS}


def prefill_link(meta: Mapping[str, Any], ticker: str, date: str) -> str:
    """``/run?prefill=<url-encoded JSON>``: the Run page opens with this run's settings filled in."""
    doc = json.dumps(prefill(meta, ticker, date), separators=(",", ":"), ensure_ascii=False)
    return "/run?prefill=" + quote(doc, safe="")


def report_sections(state: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(title, state key) of every report and plan, in the order the desk writes them."""
    keys = list(team.REPORT_KEYS) + [r.output_key for r in LADDER if r.output_key]
    titles = {r.output_key: r.node for r in team.ROLES.values() if r.output_key}
    return [(titles.get(k, k), k) for k in keys]
