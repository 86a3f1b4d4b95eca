"""The desk's book as one run sees it: prices as of the run's date, the Portfolio Manager's context, the order.

``run_book(config, provider, ticker, date)`` reads the stored book (``storage/book.py``) and the
closes of its positions and of ``ticker`` on or before ``date`` (never after), and gives a
``RunBook`` with the text the Portfolio Manager reads (``context``, ``book.holding_context``); after
the decision, ``RunBook.order(rating)`` sizes the order (``book.size_order``) for ``meta["order"]``.
No book stored, a blind run, or a graph with ``use_book`` off (the backtest): None, and the run is
as before.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tradingagents.book import Book, holding_context, size_order

log = logging.getLogger(__name__)

_LOOK_BACK_DAYS = 14


def close_on(provider: Any, ticker: str, date: str) -> float | None:
    """The last close of ``ticker`` on or before ``date`` (None when the source has none)."""
    from tradingagents.dataflows.provider import clip_frame

    start = (pd.Timestamp(date) - pd.Timedelta(days=_LOOK_BACK_DAYS)).date().isoformat()
    try:
        df = clip_frame(provider.ohlcv(ticker, start, date), start, date)
    except Exception as exc:  # noqa: BLE001 - a position the source cannot price is valued at its cost basis
        log.info("no price of %s on %s for the book: %s", ticker, date, exc)
        return None
    if df is None or df.empty or "Close" not in df.columns:
        return None
    closes = pd.to_numeric(df["Close"], errors="coerce").dropna()
    closes = closes[closes > 0]
    return float(closes.iloc[-1]) if len(closes) else None


@dataclass
class RunBook:
    book: Book
    ticker: str
    date: str
    prices: dict[str, float | None] = field(default_factory=dict)
    sector: str | None = None

    @property
    def price(self) -> float | None:
        return self.prices.get(self.ticker)

    @property
    def context(self) -> str:
        return holding_context(self.book, self.ticker, self.prices)

    def order(self, rating: str | None) -> dict[str, Any] | None:
        """The order ``rating`` makes (None: no rating, or no price of the ticker to size it at)."""
        if not rating or self.price is None:
            return None
        order = size_order(rating, self.book, self.ticker, self.price, self.prices, sector=self.sector)
        order["date"] = self.date
        return order


def run_book(config: Mapping[str, Any], provider: Any, ticker: str, date: str) -> RunBook | None:
    """The book for a run of ``ticker`` on ``date``; None when there is none to read (see the module)."""
    if config.get("blind"):
        return None  # a blind run must not read real tickers; the book is the real desk's
    from tradingagents.storage.book import load_book

    book = load_book(config)
    if book is None:
        return None
    prices = {t: close_on(provider, t, date) for t in dict.fromkeys([*book.tickers(), ticker])}
    sector = book.sectors.get(ticker)
    if sector is None and book.max_sector_weight is not None:
        try:
            sector = (provider.identity(ticker) or {}).get("sector")
        except Exception:  # noqa: BLE001 - no sector: the sector limit does not apply
            sector = None
    return RunBook(book, ticker, date, prices, sector)
