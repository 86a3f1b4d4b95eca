"""How each market data source is named where people pick or read it (the sidebar, History, Compare).

The sources themselves (``DATA_VENDORS``) are a config fact; their providers live in ``dataflows/``.
This module imports nothing, so the config, the engine and the app can all read it.
"""

from __future__ import annotations

VENDOR_LABELS: dict[str, str] = {
    "demo": "Demo market (synthetic)",
    "yfinance": "Yahoo Finance (live)",
    "csv": "CSV folder",
}
"""data_vendor → its label; one entry per accepted source (a test checks them against the config)."""


def vendor_label(name: object) -> str:
    """The source's label; an unknown name as it is ("—" when empty)."""
    return VENDOR_LABELS.get(str(name or ""), str(name or "—"))


def engine_notice(settings) -> str | None:
    """The first line of every command that uses the offline engine or the synthetic demo market
    (the CLI, a batch, a backtest), else None: the terminal says what the answers rest on."""
    parts = []
    if str(settings.get("llm_provider") or "").lower() == "offline":
        parts.append("offline engine (deterministic stand-in answers, no language model: --provider picks one)")
    if settings.get("data_vendor") == "demo":
        parts.append("synthetic demo market (generated prices, news and figures, not real history: --data "
                     "yfinance or csv for real data)")
    return ("Note: " + "; ".join(parts) + ".") if parts else None
