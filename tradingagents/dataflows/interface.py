"""The market-data provider contract and the factory that picks one from a config.

Every provider is point-in-time: it never returns a row, a statement period, a news item or a post
dated after the ``end``/``as_of`` it is asked for, nor after today.

Sentinels (the text tools return instead of data):

* ``NO_DATA`` — there is no data for the request; the model must not estimate or invent values.
* ``DATA_UNAVAILABLE`` — the provider failed (network, rate limit, broken file…).
"""

from __future__ import annotations

import datetime as _dt
import threading
from collections.abc import Mapping
from typing import Any

import pandas as pd

from tradingagents.default_config import resolve_config
from tradingagents.validation import ValidationError, validate_date, validate_ticker

NO_DATA = "NO_DATA_AVAILABLE:"
DATA_UNAVAILABLE = "DATA_UNAVAILABLE:"

VENDORS = ("demo", "yfinance", "csv")
STATEMENT_KINDS = ("balance_sheet", "cashflow", "income_statement")
STATEMENT_FREQS = ("quarterly", "annual")
OHLCV_COLUMNS = ["Open", "High", "Low", "Close", "Volume"]


from tradingagents.errors import DataNotFound, ProviderUnavailable  # noqa: E402,F401  (one hierarchy)


def today() -> _dt.date:
    """Today's date (one place, so the whole package agrees on it)."""
    return _dt.date.today()


def check_ticker(ticker: object) -> str:
    """Validated upper-case ticker (raises the foundation's ``InvalidTickerError``)."""
    return validate_ticker(ticker)


def check_date(value: object) -> str:
    """Validated ISO date, not in the future (raises the foundation's ``InvalidDateError``)."""
    return validate_date(value)


def clamp_end(end: str) -> str:
    """``end`` validated and never later than today."""
    day = validate_date(end, allow_future=True)
    t = today().isoformat()
    return min(day, t)


def check_range(start: object, end: object) -> tuple[str, str]:
    """Validated (start, end) with end clamped to today; start after end is an error."""
    s = validate_date(start, allow_future=True)
    e = clamp_end(end)  # type: ignore[arg-type]
    if s > validate_date(end, allow_future=True):
        raise ValidationError(
            f"The start date {s} is after the end date {validate_date(end, allow_future=True)}. "
            "Give a start date on or before the end date."
        )
    return s, e


def check_days(value: object, hi: int, name: str = "look_back_days") -> int:
    """A whole number of days clamped to 1..hi; anything else is a ValidationError."""
    if isinstance(value, bool):
        value = int(value)
    try:
        number = int(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise ValidationError(f"{name} must be a whole number of days (1-{hi}), not {str(value)[:40]!r}.") from None
    return max(1, min(hi, number))


def check_statement_args(kind: object, freq: object) -> tuple[str, str]:
    k = str(kind).strip().lower() if isinstance(kind, str) else ""
    aliases = {"balance": "balance_sheet", "cash_flow": "cashflow", "income": "income_statement",
               "income_stmt": "income_statement", "financials": "income_statement"}
    k = aliases.get(k, k)
    if k not in STATEMENT_KINDS:
        raise ValidationError(f"Unknown statement kind {kind!r}. Accepted: {', '.join(STATEMENT_KINDS)}.")
    f = str(freq).strip().lower() if isinstance(freq, str) else ""
    f = {"q": "quarterly", "quarter": "quarterly", "a": "annual", "yearly": "annual", "annually": "annual"}.get(f, f)
    if f not in STATEMENT_FREQS:
        raise ValidationError(f"Unknown frequency {freq!r}. Accepted: {', '.join(STATEMENT_FREQS)}.")
    return k, f


def empty_ohlcv() -> pd.DataFrame:
    df = pd.DataFrame({c: pd.Series(dtype="float64") for c in OHLCV_COLUMNS})
    df["Volume"] = df["Volume"].astype("int64")
    df.index = pd.DatetimeIndex([], name="Date")
    return df


def clip_frame(df: pd.DataFrame, start: str | None, end: str) -> pd.DataFrame:
    """Rows with start <= date <= end (dates compared as calendar days), sorted, tz-naive index."""
    if df is None or len(df) == 0:
        return empty_ohlcv()
    out = df
    if "Date" in out.columns and not isinstance(out.index, pd.DatetimeIndex):
        out = out.set_index("Date")
    idx = pd.DatetimeIndex(pd.to_datetime(out.index))
    if idx.tz is not None:
        idx = idx.tz_localize(None)
    idx = idx.normalize()
    out = out.copy()
    out.index = idx
    out.index.name = "Date"
    out = out.sort_index()
    mask = out.index <= pd.Timestamp(end)
    if start:
        mask &= out.index >= pd.Timestamp(start)
    return out.loc[mask]


class MarketDataProvider:
    """Base class. Subclasses implement the data methods; all of them are point-in-time."""

    vendor: str = "base"
    label: str = "market data"
    supports_social: bool = False

    # -- prices ---------------------------------------------------------------------------------
    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame:
        """Daily Open, High, Low, Close, Volume with a DatetimeIndex named Date; end inclusive."""
        raise NotImplementedError

    # -- company --------------------------------------------------------------------------------
    def fundamentals(self, ticker: str, as_of: str) -> dict[str, Any]:
        raise DataNotFound(f"{self.label} has no fundamentals.")

    def statements(self, ticker: str, kind: str, freq: str, as_of: str) -> pd.DataFrame:
        """A statement table: rows are line items, columns are period-end dates (newest first)."""
        raise DataNotFound(f"{self.label} has no financial statements.")

    def identity(self, ticker: str) -> dict[str, Any]:
        t = check_ticker(ticker)
        return {"name": t, "sector": "Unknown", "industry": "Unknown", "exchange": "Unknown",
                "currency": "Unknown", "data_source": self.label}

    # -- text -----------------------------------------------------------------------------------
    def news(self, ticker: str, start: str, end: str) -> list[dict[str, Any]]:
        raise DataNotFound(f"{self.label} has no company news.")

    def global_news(self, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        raise DataNotFound(f"{self.label} has no global news.")

    def social(self, ticker: str, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        raise DataNotFound(
            f"{self.label} has no social-media posts; the sentiment analyst must rely on news only."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label!r}>"


_CACHE: dict[tuple, MarketDataProvider] = {}
_CACHE_LOCK = threading.Lock()


def _provider_key(cfg: Mapping[str, Any]) -> tuple:
    vendor = str(cfg.get("data_vendor") or "demo").strip().lower()
    if vendor == "csv":
        return (vendor, cfg["csv_data_dir"])
    if vendor == "yfinance":
        try:
            backoff = max(0.0, min(60.0, float(cfg.get("data_retry_backoff", 1.0) or 0.0)))
        except (TypeError, ValueError):
            backoff = 1.0
        return (vendor, cfg["data_cache_dir"], backoff)
    return (vendor,)


def get_provider(config: Mapping[str, Any] | None = None) -> MarketDataProvider:
    """The provider chosen by ``config["data_vendor"]`` (demo, yfinance, csv); partial config OK.

    Instances are cached per (vendor, relevant paths), so repeated calls are cheap; a provider
    holds no per-run state.
    """
    cfg = resolve_config(config)
    key = _provider_key(cfg)
    vendor = key[0]
    if vendor not in VENDORS:
        raise ValidationError(f"Unknown data source {cfg.get('data_vendor')!r}. Accepted: {', '.join(VENDORS)}.")
    with _CACHE_LOCK:
        prov = _CACHE.get(key)
        if prov is not None:
            return prov
        if vendor == "demo":
            from tradingagents.dataflows.demo import DemoProvider

            prov = DemoProvider()
        elif vendor == "csv":
            from tradingagents.dataflows.csv_provider import CSVProvider

            prov = CSVProvider(cfg["csv_data_dir"])
        else:
            from tradingagents.dataflows.yfinance_provider import YFinanceProvider

            prov = YFinanceProvider(cfg["data_cache_dir"], backoff=key[2])
        _CACHE[key] = prov
        return prov
