"""How each market data source is named where people pick or read it (the sidebar, History, Compare).

The sources themselves (``DATA_VENDORS``) are a config fact; their providers live in ``dataflows/``.
It imports only the ground floor's ``i18n``, so the config, the engine and the app can all read it.
"""

from __future__ import annotations

from typing import Any

from tradingagents.i18n import N_, Translator, translator

VENDOR_LABELS: dict[str, str] = {
    "demo": "Demo market (synthetic)",
    "yfinance": "Yahoo Finance (live)",
    "csv": "CSV folder",
}
"""data_vendor → its label; one entry per accepted source (a test checks them against the config)."""


def vendor_label(name: object) -> str:
    """The source's label; an unknown name as it is ("—" when empty)."""
    return VENDOR_LABELS.get(str(name or ""), str(name or "—"))


PRODUCT_LABELS = frozenset({N_("offline engine (no LLM)"), N_("synthetic demo data"), N_("blind run data")})
"""The labels the engine itself writes into a run's meta and a backtest's manifest (``llm_label``,
``data_label``: ``llm_presets.OFFLINE_LABEL``, the demo market's and a blind run's data label; a test
checks they are these): shown in the reader's language. Any other label is a name (a model, a
folder) and is shown as it is."""


def product_label(value: Any, t: Translator) -> Any:
    """``value`` in ``t``'s language when it is one of ``PRODUCT_LABELS``, else unchanged."""
    return t(value) if isinstance(value, str) and value in PRODUCT_LABELS else value


def engine_notice(settings, t: Translator | None = None) -> str | None:
    """The first line of every command that uses the offline engine or the synthetic demo market
    (the CLI, a batch, a backtest), else None: the terminal says what the answers rest on, in ``t``'s
    language (None: English)."""
    t = t or translator(None)
    parts = []
    if str(settings.get("llm_provider") or "").lower() == "offline":
        parts.append(t("offline engine (deterministic stand-in answers, no language model: --provider picks one)"))
    if settings.get("data_vendor") == "demo":
        parts.append(t("synthetic demo market (generated prices, news and figures, not real history: --data "
                       "yfinance or csv for real data)"))
    return t("Note: {parts}.", parts=t("; ").join(parts)) if parts else None
