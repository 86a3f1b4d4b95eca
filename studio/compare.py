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

from studio import links
from tradingagents import pricing, team
from tradingagents.config import PATH_DEFAULTS, settings_table
from tradingagents.config import setting_label as config_label
from tradingagents.i18n import N_, Translator, rating_label, translator
from tradingagents.llm_presets import provider_label as preset_label
from tradingagents.rating import RATINGS_5_TIER, parse_rating
from tradingagents.vendors import vendor_label

EN = translator("en")

LADDER = tuple(team.ROLES[k] for k in ("research_manager", "trader", "portfolio_manager"))
"""Who rates, in order: the research manager's plan, the trader's proposal, the final decision."""
PREFILL_KEYS = ("ticker", "date", "analysts", "max_debate_rounds", "max_risk_discuss_rounds", "llm_provider",
                "data_vendor")
NOT_CONFIG = frozenset({
    "ticker", "date", "thread_id", "resumed", "elapsed_s", "usage", "node_times_ms", "debate_turns", "config",
    "instrument_context", "home", *PATH_DEFAULTS, "llm_label", "data_label", "asset_type", "by", "user",
    "desk_leads", "missing_data", "log_note", "session_note", "warnings", "memory_used", "decision", "saved_at",
    "analyst_execution_note", "order",
})
"""Meta keys that describe the run itself, its outcome or where files live, not how it was configured: only
settings a user chose (analysts, rounds, provider, models, data source…) are compared."""


def provider_label(name: Any, *, t: Translator = EN) -> str:
    """The preset's label ("Offline engine (no LLM)", "OpenAI-compatible server") in ``t``'s language; the
    name if unknown."""
    return t(preset_label(name, capital=True))


def source_label(name: Any, *, t: Translator = EN) -> str:
    """The data source's label (``vendor_label``: "Demo market (synthetic)") in ``t``'s language; the name if
    unknown."""
    return t(vendor_label(name))


def cost_label(text: str, *, t: Translator = EN) -> str:
    """A cost text of ``run_cost_text`` in ``t``'s language (only the offline engine's has words)."""
    return t(text) if text == pricing.cost_text(None, offline=True) else text


def readable_time(iso: Any, *, t: Translator = EN) -> str:
    """``2026-12-01T09:41:07.123456+00:00`` → ``1 Dec 2026 09:41`` (UTC; in Chinese ``2026-12-01 09:41``);
    "—" when absent or unreadable."""
    try:
        when = dt.datetime.fromisoformat(str(iso))
    except (TypeError, ValueError):
        return "—"
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC)
    if t.lang != "en":  # a month's English abbreviation would be the only English on the row
        return f"{when:%Y-%m-%d %H:%M}"
    return f"{when.day} {when:%b %Y %H:%M}"


def run_link(ticker: str, date: str, lang: str | None = None) -> str:
    """The Run page showing this saved run (``lang``: the reader's language, kept by the new page)."""
    return links.page_url("run", {"ticker": ticker, "date": date}, lang=lang)


def debates_link(ticker: str, date: str, lang: str | None = None) -> str:
    return links.page_url("debates", {"ticker": ticker, "date": date}, lang=lang)


def compare_link(a: tuple, b: tuple, lang: str | None = None) -> str:
    """``(ticker, date)`` or ``(ticker, date, version)`` of each side (a version: an earlier run)."""
    return links.page_url("compare", {"a": "|".join(str(x) for x in a if x is not None),
                                      "b": "|".join(str(x) for x in b if x is not None)}, lang=lang)


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
    blind: bool = False  # a blind run (the models saw an alias and shifted dates; stored in real terms)

    @property
    def run_id(self) -> str:
        """The Compare page's id of the run: ``TICKER|DATE``, or ``TICKER|DATE|n`` for an earlier version."""
        return f"{self.ticker}|{self.date}" + (f"|{self.version}" if self.version is not None else "")

    @property
    def saved(self) -> str:
        return readable_time(self.saved_at)

    @property
    def llm(self) -> str:
        return self.llm_in(EN)

    def llm_in(self, t: Translator) -> str:
        label = provider_label(self.provider, t=t)
        return f"{label} · {' / '.join(self.models)}" if self.models else label

    def as_display(self, *, t: Translator = EN, lang: str | None = None) -> dict[str, Any]:
        """The row as the History table shows it, column names and words in ``t``'s language (the rating
        shown translated; the links keep the canonical ticker and date, and open in ``lang``, by default
        ``t``'s language)."""
        lang = lang or t.lang
        data = source_label(self.vendor, t=t)
        if self.invented:
            data = t("{source} · invented instrument", source=data)
        if self.blind:
            data = t("{source} · blind run", source=data)
        version = t("current") if self.version is None else t("earlier #{n}", n=self.version)
        return {t("Ticker"): self.ticker, t("Date"): self.date,
                t("Rating"): rating_label(self.rating, t.lang) if self.rating else "—",
                t("LLM"): self.llm_in(t), t("Cost"): cost_label(self.cost, t=t), t("Data"): data,
                t("Version"): version, t("By"): self.by or "—", t("Saved"): readable_time(self.saved_at, t=t),
                t("Open"): run_link(self.ticker, self.date, lang),
                t("Debates"): debates_link(self.ticker, self.date, lang)}


HISTORY_COLUMNS = (N_("Ticker"), N_("Date"), N_("Rating"), N_("LLM"), N_("Cost"), N_("Data"), N_("Version"),
                   N_("By"), N_("Saved"), N_("Open"), N_("Debates"))
"""The History table's columns (English; ``as_display`` names them in the page's language)."""
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


def history_rows(runs: Iterable[Mapping[str, Any]],
                 metas: Mapping[tuple[str, str], Mapping[str, Any]] | None = None) -> list[HistoryRow]:
    """Rows from ``storage.list_runs``, newest first. The models and the cost come from the row itself
    (``list_runs`` reads them), or from ``metas``: a saved meta per ``(ticker, date)``."""
    out = []
    for r in runs:
        ticker, date = str(r.get("ticker") or ""), str(r.get("date") or "")
        meta = r if metas is None else metas.get((ticker, date)) or {}
        provider = str(r.get("llm_provider") or meta.get("llm_provider") or "")
        models: tuple[str, ...] = ()
        if provider and provider != "offline":
            models = tuple(str(m) for m in (meta.get("quick_think_llm"), meta.get("deep_think_llm")) if m)
        out.append(HistoryRow(ticker, date, r.get("rating"), str(r.get("saved_at") or ""), provider,
                              str(r.get("data_vendor") or meta.get("data_vendor") or ""), models,
                              run_cost_text(meta, provider), str(r.get("by") or meta.get("by") or ""),
                              r.get("version"), bool(r.get("invented")), bool(r.get("blind") or meta.get("blind"))))
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
    """(role name, rating) for research manager → trader → portfolio manager (the canonical English
    names: the page shows them with ``t.p("role", name)`` and ``rating_label``).

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


SETTINGS = frozenset(row.key for row in settings_table())
SETTING_LABELS: dict[str, str] = {
    "analysts": N_("Analysts"), "online_tools": N_("Online tools"), "benchmark": N_("Benchmark"),
    "execution_mode": N_("Analyst execution"), "blind": N_("Blind run"), "temperature": N_("Temperature"),
    "seed": N_("Seed"),
}
"""Labels of what a run records beside its settings; a setting's label is the settings table's
(``config.table``: the sidebar's and the form's words); a key in neither shows its words."""


def _output_language(value: Any, t: Translator) -> str:
    if value == "English":
        return t.p("language", "English")
    if value == "Chinese":
        return t.p("language", "Chinese")
    return _show(value)


def setting_label(key: str, *, t: Translator = EN) -> str:
    """The label of a saved setting (``max_debate_rounds`` → "Debate rounds"), in ``t``'s language."""
    if key in SETTINGS:
        return config_label(key, t)
    label = SETTING_LABELS.get(key)
    if label is not None:
        return t(label)
    return key.replace("_", " ").strip().capitalize() or key


def _analyst_names(value: Any, t: Translator) -> str:
    roles = {r.key: r for r in team.ANALYSTS}
    names = [t.p("role", roles[str(v)].node) if str(v) in roles else str(v) for v in value]
    return ", ".join(names) or "—"


def _show(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value) or "—"
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


def config_diff(meta_a: Mapping[str, Any] | None, meta_b: Mapping[str, Any] | None, *,
                t: Translator = EN) -> list[tuple[str, str, str]]:
    """(setting, value in A, value in B) for every saved setting that differs, sorted by name (the key:
    the page shows ``setting_label(key)``).

    Providers, data sources, analysts and the output language are shown by their labels in ``t``'s language.
    """
    a, b = _flat_config(meta_a or {}), _flat_config(meta_b or {})
    out = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if va == vb:
            continue
        if key == "llm_provider":
            sa, sb = provider_label(va, t=t), provider_label(vb, t=t)
        elif key == "data_vendor":
            sa, sb = source_label(va, t=t), source_label(vb, t=t)
        elif key in ("analysts", "selected_analysts") and isinstance(va, (list, tuple)) and isinstance(vb, (list, tuple)):
            sa, sb = _analyst_names(va, t), _analyst_names(vb, t)
        elif key == "output_language":
            sa, sb = _output_language(va, t), _output_language(vb, t)
        elif isinstance(va, bool) or isinstance(vb, bool):
            sa, sb = (_show(v) if not isinstance(v, bool) else t("yes") if v else t("no") for v in (va, vb))
        else:
            sa, sb = _show(va), _show(vb)
        out.append((key, sa, sb))
    return out


USAGE_FIELDS = (("llm_calls", N_("LLM calls")), ("tool_calls", N_("Tool calls")), ("input_tokens", N_("Tokens in")),
                ("output_tokens", N_("Tokens out")))


def usage_rows(meta_a: Mapping[str, Any] | None, meta_b: Mapping[str, Any] | None, *,
               t: Translator = EN) -> list[tuple[str, str, str]]:
    """(measure, A, B): run time, the usage totals and the cost, labelled in ``t``'s language."""
    rows = []
    ea, eb = (meta_a or {}).get("elapsed_s"), (meta_b or {}).get("elapsed_s")
    rows.append((t("Run time"), t("{s} s", s=f"{float(ea):.1f}") if ea is not None else "—",
                 t("{s} s", s=f"{float(eb):.1f}") if eb is not None else "—"))
    ua, ub = dict((meta_a or {}).get("usage") or {}), dict((meta_b or {}).get("usage") or {})
    for key, label in USAGE_FIELDS:
        rows.append((t(label), f"{int(ua[key]):,}" if key in ua else "—", f"{int(ub[key]):,}" if key in ub else "—"))
    rows.append((t("Cost"), cost_label(run_cost_text(meta_a), t=t), cost_label(run_cost_text(meta_b), t=t)))
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


def prefill_link(meta: Mapping[str, Any], ticker: str, date: str, lang: str | None = None) -> str:
    """``./?prefill=<url-encoded JSON>``: the Run page opens with this run's settings filled in."""
    doc = json.dumps(prefill(meta, ticker, date), separators=(",", ":"), ensure_ascii=False)
    return links.page_url("run", {"prefill": doc}, lang=lang)


def report_sections(state: Mapping[str, Any] | None, *, t: Translator = EN) -> list[tuple[str, str]]:
    """(title, state key) of every report and plan, in the order the desk writes them; the title is the
    writing role's name in ``t``'s language."""
    keys = list(team.REPORT_KEYS) + [r.output_key for r in LADDER if r.output_key]
    titles = {r.output_key: t.p("role", r.node) for r in team.ROLES.values() if r.output_key}
    return [(titles.get(k, k), k) for k in keys]


def fork_rows(ticker: str, date: str, forks: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A session's what-if forks (``storage.list_forks``) as rows of the Compare page's run list:
    ``version`` is ``w<n>`` (its id is ``TICKER|date|w<n>``) and ``whatif`` its meta.whatif."""
    return [{"ticker": ticker, "date": date, "rating": f.get("rating"), "version": f"w{f['n']}",
             "whatif": dict(f.get("whatif") or {}), "saved_at": f.get("saved_at") or "",
             "llm_provider": f.get("llm_provider"), "data_vendor": f.get("data_vendor")} for f in forks]


def changed_keys(state_a: Mapping[str, Any] | None, state_b: Mapping[str, Any] | None) -> list[str]:
    """The output keys (``team.OUTPUT_KEYS``, then the two debates) whose text differs between two runs."""
    a, b = dict(state_a or {}), dict(state_b or {})
    out = [k for k in team.OUTPUT_KEYS if str(a.get(k) or "") != str(b.get(k) or "")]
    for key in ("investment_debate_state", "risk_debate_state"):
        if str((a.get(key) or {}).get("history") or "") != str((b.get(key) or {}).get("history") or ""):
            out.append(key)
    return out
