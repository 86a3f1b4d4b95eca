"""The market-data provider contract: the base class, the sentinels, the shared checks and errors.

The factory that picks a provider from a config lives in ``interface.py`` (it imports this module;
this module imports no provider, so there is no cycle).

Every provider is point-in-time: it never returns a row, a statement period, a news item or a post
dated after the ``end``/``as_of`` it is asked for, nor after today.

Sentinels (the text tools return instead of data):

* ``NO_DATA`` — there is no data for the request; the model must not estimate or invent values.
* ``DATA_UNAVAILABLE`` — the provider failed (network, rate limit, broken file…).
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from tradingagents.errors import DataNotFound, DataUnavailable, ProviderUnavailable
from tradingagents.validation import ValidationError, validate_date, validate_ticker

NO_DATA = "NO_DATA_AVAILABLE:"
DATA_UNAVAILABLE = "DATA_UNAVAILABLE:"

# the one list of data sources, their aliases and their one check live in the config (the UI and the CLI
# derive theirs); check_vendor is the config's ``data_vendor`` check, re-exported for the data layer
from tradingagents.config import DATA_VENDORS as VENDORS  # noqa: E402
from tradingagents.config import VENDOR_ALIASES, check_vendor  # noqa: E402

STATEMENT_KINDS = ("balance_sheet", "cashflow", "income_statement")
STATEMENT_FREQS = ("quarterly", "annual")
OHLCV_COLUMNS = ["Open", "High", "Low", "Close", "Volume"]


PLACEHOLDERS = frozenset({"", "none", "null", "nan", "n/a", "na", "-", "--", "—", "?", "unknown", "undefined"})


def clean_value(value: Any) -> Any:
    """``value``, or None when it is a placeholder ("  ", "None", "n/a", "-", "null", NaN…)."""
    if value is None:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str):
        text = " ".join(value.split())
        return None if text.lower() in PLACEHOLDERS else text
    return value


def clean_identity(fields: dict[str, Any]) -> dict[str, Any]:
    """An identity with every placeholder value dropped (the key is left out)."""
    return {k: v for k, v in ((k, clean_value(v)) for k, v in fields.items()) if v is not None}


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
    e = validate_date(end, allow_future=True)  # validated once; clamped to today below (as clamp_end does)
    if s > e:
        raise ValidationError(
            f"The start date {s} is after the end date {e}. "
            "Give a start date on or before the end date."
        )
    return s, min(e, today().isoformat())


def check_days(value: object, hi: int, name: str = "look_back_days") -> int:
    """A whole number of days clamped to 1..hi; anything else is a ValidationError."""
    if isinstance(value, bool):
        value = int(value)
    try:
        # the ignore: any input is tried; what float() refuses (TypeError included) is the ValidationError below
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
    idx = df.index
    if (isinstance(idx, pd.DatetimeIndex) and idx.tz is None and idx.name == "Date" and idx.is_normalized
            and idx.is_monotonic_increasing):
        # already in shape (every provider's own frames, a frame clipped before): a slice of the sorted
        # index, a third of the cost of rebuilding it (pandas copies on write: callers may change it)
        return df.loc[pd.Timestamp(start) if start else None:pd.Timestamp(end)]
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


LOCAL_DATA = "local_data"
"""The key of a tool's ``metadata`` that says its provider is ``local`` (``tools.make_tools`` sets it)."""


@runtime_checkable
class MarketData(Protocol):
    """What every market-data source offers (the seam ``get_provider`` returns; the graph, the tools,
    settlement and the backtest call only these). ``MarketDataProvider`` below is the base class the
    sources derive from (demo, yfinance, csv, and the blind and no-edge wrappers); mypy checks each
    source the factory hands out against this protocol (``interface.get_provider``)."""

    vendor: str
    label: str
    supports_social: bool
    local: bool

    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame: ...

    def fundamentals(self, ticker: str, as_of: str) -> dict[str, Any]: ...

    def statements(self, ticker: str, kind: str, freq: str, as_of: str) -> pd.DataFrame: ...

    def identity(self, ticker: str) -> dict[str, Any]: ...

    def closes_between(self, ticker: str, start: str, end: str) -> pd.Series: ...

    def missing_prices_hint(self, ticker: str, as_of: str) -> str: ...

    def news(self, ticker: str, start: str, end: str) -> list[dict[str, Any]]: ...

    def global_news(self, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]: ...

    def social(self, ticker: str, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]: ...

    def cache_token(self) -> Any: ...


class MarketDataProvider:
    """Base class. Subclasses implement the data methods; all of them are point-in-time."""

    vendor: str = "base"
    label: str = "market data"
    supports_social: bool = False
    # Its data is on this machine (computed, or read from local files): a call has nothing to wait for,
    # so a node's calls run one after another (threads side by side would only take turns at the
    # interpreter lock). A source over the network (the default) has its calls run side by side.
    local: bool = False

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
        """Name, sector, industry, exchange, currency: only the values the source really has
        (a missing one is absent, never a placeholder such as "n/a"); always ``data_source``."""
        return {"name": check_ticker(ticker), "data_source": self.label}

    def closes_between(self, ticker: str, start: str, end: str) -> pd.Series:
        """The closes the source has for ``ticker`` from ``start`` to ``end`` (inclusive): finite,
        positive, one per session, sorted; an empty Series when it has none in the window.

        Settlement uses it to tell whether a benchmark covers a holding window (the dates it has,
        not the last close before them). Raises what ``ohlcv`` raises when the source cannot serve.
        """
        s, e = check_range(start, end)
        df = clip_frame(self.ohlcv(check_ticker(ticker), s, e), s, e)
        if df.empty or "Close" not in df.columns:
            return pd.Series(dtype="float64", name="Close", index=pd.DatetimeIndex([], name="Date"))
        closes = pd.to_numeric(df["Close"], errors="coerce").astype("float64")
        closes = closes[np.isfinite(closes.to_numpy()) & (closes.to_numpy() > 0)]
        closes = closes[~closes.index.duplicated(keep="last")]
        closes.name = "Close"
        return closes

    def missing_prices_hint(self, ticker: str, as_of: str) -> str:
        """What the user can do when this source has no price of ``ticker`` up to ``as_of``."""
        return "check the ticker and the date, or choose the demo market"

    # -- text -----------------------------------------------------------------------------------
    def news(self, ticker: str, start: str, end: str) -> list[dict[str, Any]]:
        raise DataNotFound(f"{self.label} has no company news.")

    def global_news(self, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        raise DataNotFound(f"{self.label} has no global news.")

    def social(self, ticker: str, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        raise DataNotFound(
            f"{self.label} has no social-media posts; the sentiment analyst must rely on news only."
        )

    # the data methods whose answers a tool result is made of (``cache_token`` names them)
    DATA_METHODS = ("ohlcv", "fundamentals", "statements", "identity", "closes_between", "news",
                    "global_news", "social")

    def cache_token(self) -> Any:
        """None, or a hashable token under which the tools may keep their results in-process.

        Only a source whose answers are a pure function of the arguments (the demo market) gives
        one; the tools key each result by it plus the tool, its arguments, the run's analysis date
        and today. The base class (and every live or file source, and the wrappers that delegate)
        gives None: nothing is cached.
        """
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.label!r}>"


__all__ = [
    "DATA_UNAVAILABLE", "NO_DATA", "OHLCV_COLUMNS", "STATEMENT_FREQS", "STATEMENT_KINDS", "VENDORS",
    "VENDOR_ALIASES", "DataNotFound", "DataUnavailable", "MarketData", "MarketDataProvider", "ProviderUnavailable",
    "PLACEHOLDERS", "check_date", "check_days", "check_range", "check_statement_args", "check_ticker", "check_vendor",
    "clamp_end", "clean_identity", "clean_value", "clip_frame", "empty_ohlcv", "today",
]
