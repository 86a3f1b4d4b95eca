"""Market data: providers (demo, yfinance, csv), indicators, analyst tools and settlement returns.

``provider.py`` holds the contract (base class, sentinels, checks, errors, ``VENDORS``);
``interface.py`` the factory ``get_provider``; ``session.py`` the pre-run checks the graph calls.
The names below are loaded on first use, so importing ``tradingagents.dataflows.provider`` imports
neither the factory nor a concrete provider (``VENDORS`` and ``check_vendor`` are the config's).
"""

from __future__ import annotations

from tradingagents.lazy import lazy_getattr

_EXPORTS = {
    "get_provider": "interface",
    **{name: "provider" for name in ("DATA_UNAVAILABLE", "NO_DATA", "VENDORS", "DataNotFound", "DataUnavailable",
                                     "MarketDataProvider", "ProviderUnavailable", "check_vendor")},
}

__getattr__ = lazy_getattr(__name__, _EXPORTS)


__all__ = sorted(_EXPORTS)
