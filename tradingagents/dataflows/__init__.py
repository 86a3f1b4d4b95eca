"""Market data: providers (demo, yfinance, csv), indicators, analyst tools and settlement returns.

``provider.py`` holds the contract (base class, sentinels, checks, errors, ``VENDORS``);
``interface.py`` the factory ``get_provider``; ``session.py`` the pre-run checks the graph calls.
The names below are loaded on first use, so importing ``tradingagents.dataflows.provider`` imports
neither the factory nor a concrete provider (``VENDORS`` and ``check_vendor`` are the config's).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "get_provider": "interface",
    **{name: "provider" for name in ("DATA_UNAVAILABLE", "NO_DATA", "VENDORS", "DataNotFound", "DataUnavailable",
                                     "MarketDataProvider", "ProviderUnavailable", "check_vendor")},
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = sorted(_EXPORTS)
