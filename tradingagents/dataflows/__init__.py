"""Market data: providers (demo, yfinance, csv), indicators, analyst tools and settlement returns.

The names most callers need are re-exported here; see ``interface.py`` for the contract.
"""

from tradingagents.dataflows.interface import (
    DATA_UNAVAILABLE,
    NO_DATA,
    DataNotFound,
    MarketDataProvider,
    ProviderUnavailable,
    get_provider,
)

__all__ = ["DATA_UNAVAILABLE", "NO_DATA", "DataNotFound", "MarketDataProvider", "ProviderUnavailable",
           "get_provider"]
