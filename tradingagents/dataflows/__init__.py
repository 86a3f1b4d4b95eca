"""Market data: providers (demo, yfinance, csv), indicators, analyst tools and settlement returns.

``provider.py`` holds the contract (base class, sentinels, checks, errors, ``VENDORS``);
``interface.py`` the factory ``get_provider``; ``session.py`` the pre-run checks the graph calls.
"""

from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.provider import (
    DATA_UNAVAILABLE,
    NO_DATA,
    VENDORS,
    DataNotFound,
    DataUnavailable,
    MarketDataProvider,
    ProviderUnavailable,
)

__all__ = ["DATA_UNAVAILABLE", "NO_DATA", "VENDORS", "DataNotFound", "DataUnavailable", "MarketDataProvider",
           "ProviderUnavailable", "get_provider"]
