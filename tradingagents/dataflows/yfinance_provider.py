"""Yahoo Finance through yfinance, with an on-disk SQLite cache, retries and plain errors.

* Prices: ``Ticker.history(period="max", auto_adjust=False)`` once per ticker and day, cached; a
  later request whose end is before the fetch day is served from the cache (those rows were final
  when fetched). ``auto_adjust=False`` keeps the traded close (split-adjusted, not back-adjusted for
  later dividends, which would leak the future into past prices).
* ``.info`` (current snapshot; marked "current snapshot, not as of the analysis date" when the
  analysis date is in the past), statements (a period is shown only once it ended and its report
  was likely out: 45 days after a quarter, 90 after a year) and ``.news`` are cached per day.
* Up to 3 retries with exponential backoff on ``YFRateLimitError``; a connection failure raises
  ``ProviderUnavailable(UNREACHABLE)`` ("Yahoo Finance could not be reached: check the network, or choose…").
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from tradingagents.dataflows.provider import (
    DataNotFound,
    MarketDataProvider,
    ProviderUnavailable,
    check_date,
    check_days,
    check_range,
    check_statement_args,
    check_ticker,
    clean_identity,
    clean_value,
    clip_frame,
    today,
)

UNREACHABLE = ("Yahoo Finance could not be reached: check the network, or choose the demo market "
               "(or CSV files) as the data source.")
RATE_LIMITED = ("Yahoo Finance keeps refusing requests (rate limited, 3 retries) — wait a few minutes, "
                "or switch the data source to demo or CSV.")
SNAPSHOT_NOTE = "current snapshot, not as of the analysis date"
MAX_RETRIES = 3
REPORT_LAG_DAYS = {"quarterly": 45, "annual": 90}
_INFO_FIELDS = [
    ("longName", "name"), ("sector", "sector"), ("industry", "industry"), ("currency", "currency"),
    ("marketCap", "market_cap"), ("sharesOutstanding", "shares_outstanding"), ("trailingPE", "pe_ratio_ttm"),
    ("forwardPE", "forward_pe"), ("trailingEps", "eps_ttm"), ("priceToBook", "price_to_book"),
    ("priceToSalesTrailing12Months", "price_to_sales_ttm"), ("totalRevenue", "revenue_ttm"),
    ("grossMargins", "gross_margin"), ("operatingMargins", "operating_margin"), ("profitMargins", "profit_margin"),
    ("revenueGrowth", "revenue_growth_yoy"), ("earningsGrowth", "earnings_growth_yoy"),
    ("debtToEquity", "debt_to_equity_pct"), ("currentRatio", "current_ratio"), ("returnOnEquity", "return_on_equity"),
    ("freeCashflow", "free_cash_flow_ttm"), ("dividendYield", "dividend_yield_pct"), ("beta", "beta"),
    ("fiftyTwoWeekHigh", "fifty_two_week_high"), ("fiftyTwoWeekLow", "fifty_two_week_low"),
]
_STATEMENT_ATTR = {
    ("balance_sheet", "quarterly"): "quarterly_balance_sheet", ("balance_sheet", "annual"): "balance_sheet",
    ("cashflow", "quarterly"): "quarterly_cashflow", ("cashflow", "annual"): "cashflow",
    ("income_statement", "quarterly"): "quarterly_income_stmt", ("income_statement", "annual"): "income_stmt",
}

T = TypeVar("T")


def _yf():
    import yfinance  # imported lazily: the demo market never needs it

    # By default yfinance logs a failed request and returns an empty frame, which would make an
    # offline machine look like an unknown ticker; let errors reach ``_call`` so it can tell them apart.
    with contextlib.suppress(Exception):
        if yfinance.config.debug.hide_exceptions is not False:
            yfinance.config.debug.hide_exceptions = False
    return yfinance


class YFinanceProvider(MarketDataProvider):
    vendor = "yfinance"
    label = "Yahoo Finance"
    supports_social = False

    def __init__(self, cache_dir: str | os.PathLike[str], *, backoff: float = 1.0,
                 sleep: Callable[[float], None] = time.sleep):
        self.cache_dir = Path(cache_dir)
        self.db_path = self.cache_dir / "yfinance_cache.sqlite"
        self.backoff = max(0.0, float(backoff))
        self._sleep = sleep
        self._lock = threading.Lock()
        self.calls = 0  # yfinance calls made (a cache hit makes none)

    # -- cache ----------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _db(self):
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.db_path, timeout=30)
        try:
            con.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, fetched TEXT NOT NULL, "
                        "payload TEXT NOT NULL)")
            yield con
            con.commit()
        finally:
            con.close()

    def _get(self, key: str) -> tuple[str, Any] | None:
        if not self.db_path.exists():
            return None
        try:
            with self._db() as con:
                row = con.execute("SELECT fetched, payload FROM cache WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        if not row:
            return None
        try:
            return row[0], json.loads(row[1])
        except json.JSONDecodeError:
            return None

    def _put(self, key: str, payload: Any) -> None:
        try:
            with self._db() as con:
                con.execute("INSERT OR REPLACE INTO cache (key, fetched, payload) VALUES (?, ?, ?)",
                            (key, today().isoformat(), json.dumps(payload, default=str)))
        except sqlite3.Error:
            pass  # a cache that cannot be written only costs a refetch

    # -- calls ----------------------------------------------------------------------------------
    def _call(self, fn: Callable[[], T]) -> T:
        yf = _yf()
        exc_mod = yf.exceptions if hasattr(yf, "exceptions") else __import__("yfinance.exceptions").exceptions
        for attempt in range(MAX_RETRIES + 1):
            try:
                self.calls += 1
                return fn()
            except exc_mod.YFRateLimitError:
                if attempt == MAX_RETRIES:
                    raise ProviderUnavailable(RATE_LIMITED) from None
                self._sleep(self.backoff * (2**attempt))
            except (exc_mod.YFTzMissingError, exc_mod.YFPricesMissingError) as exc:
                raise DataNotFound(f"Yahoo Finance has no data for this ticker ({exc}).") from None
            except (OSError, ConnectionError, TimeoutError) as exc:
                status = _http_status(exc)
                if status is None:  # no answer at all: DNS, refused, timeout, TLS
                    raise ProviderUnavailable(UNREACHABLE) from None
                if status == 429:
                    if attempt == MAX_RETRIES:
                        raise ProviderUnavailable(RATE_LIMITED) from None
                    self._sleep(self.backoff * (2**attempt))
                    continue
                if status == 404:
                    raise DataNotFound("Yahoo Finance does not know this ticker (HTTP 404).") from None
                raise ProviderUnavailable(
                    f"Yahoo Finance answered HTTP {status} — try again later, or switch the data source to demo or CSV."
                ) from None
            except exc_mod.YFException as exc:
                raise ProviderUnavailable(f"Yahoo Finance failed: {exc}") from None
        raise ProviderUnavailable(RATE_LIMITED)  # pragma: no cover - loop always returns or raises

    def _ticker(self, t: str):
        return _yf().Ticker(t)

    # -- prices ---------------------------------------------------------------------------------
    def _history(self, t: str, end: str) -> pd.DataFrame:
        key = f"history|{t}"
        hit = self._get(key)
        if hit and (end < hit[0] or hit[0] == today().isoformat()):
            return _frame_from_json(hit[1])
        df = self._call(lambda: self._ticker(t).history(period="max", interval="1d", auto_adjust=False))
        if df is None or not isinstance(df, pd.DataFrame) or df.empty:
            raise DataNotFound(f"Yahoo Finance returned no prices for {t} (unknown or delisted ticker?): "
                               f"{self.missing_prices_hint(t, end)}.")
        df = clip_frame(df, None, today().isoformat())
        cols = [c for c in ("Open", "High", "Low", "Close", "Volume") if c in df.columns]
        df = df[cols]
        self._put(key, _frame_to_json(df))
        return df

    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame:
        t = check_ticker(ticker)
        s, e = check_range(start, end)
        df = clip_frame(self._history(t, e), s, e).copy()
        if "Volume" in df.columns:
            df["Volume"] = df["Volume"].fillna(0).astype("int64")
        df.attrs["data_source"] = self.label
        return df

    # -- company --------------------------------------------------------------------------------
    def _info(self, t: str) -> dict[str, Any]:
        key = f"info|{t}|{today().isoformat()}"
        hit = self._get(key)
        if hit:
            return hit[1]
        info = self._call(lambda: self._ticker(t).info) or {}
        if not isinstance(info, dict):
            info = {}
        self._put(key, info)
        return info

    def identity(self, ticker: str) -> dict[str, Any]:
        t = check_ticker(ticker)
        info = self._info(t)

        def first(*keys: str) -> Any:
            return next((v for v in (clean_value(info.get(k)) for k in keys) if v is not None), None)

        return clean_identity({
            "name": first("longName", "shortName") or t, "sector": first("sector"), "industry": first("industry"),
            "exchange": first("fullExchangeName", "exchange"), "currency": first("currency"),
            "data_source": self.label,
        })

    def missing_prices_hint(self, ticker: str, as_of: str) -> str:
        return ("check the ticker as Yahoo Finance spells it (e.g. 7203.T for Toyota, RELIANCE.NS for Reliance) "
                "and the date, or choose the demo market")

    def fundamentals(self, ticker: str, as_of: str) -> dict[str, Any]:
        t = check_ticker(ticker)
        day = check_date(as_of)
        info = self._info(t)
        out: dict[str, Any] = {"ticker": t, "as_of": day, "data_source": self.label}
        for src, dst in _INFO_FIELDS:
            value = clean_value(info.get(src))
            if value is not None:
                out[dst] = value
        if len(out) <= 3:
            raise DataNotFound(f"Yahoo Finance has no fundamentals for {t}.")
        if day < today().isoformat():
            out["note"] = f"Ratios are a {SNAPSHOT_NOTE} ({today().isoformat()})."
            # the one figure we can rebuild point-in-time: market cap at the analysis date's close
            shares = info.get("sharesOutstanding")
            try:
                closes = self.ohlcv(t, (pd.Timestamp(day) - pd.Timedelta(days=14)).date().isoformat(), day)
            except (DataNotFound, ProviderUnavailable):
                closes = None
            if closes is not None and len(closes):
                out["price"] = round(float(closes["Close"].iloc[-1]), 2)
                out["price_date"] = closes.index[-1].date().isoformat()
                if shares:
                    out["market_cap_at_analysis_date"] = round(float(closes["Close"].iloc[-1]) * float(shares), 0)
        return out

    def statements(self, ticker: str, kind: str, freq: str, as_of: str) -> pd.DataFrame:
        t = check_ticker(ticker)
        k, f = check_statement_args(kind, freq)
        day = pd.Timestamp(check_date(as_of))
        key = f"stmt|{t}|{k}|{f}|{today().isoformat()}"
        hit = self._get(key)
        if hit:
            df = _frame_from_json(hit[1], index_is_dates=False)
        else:
            attr = _STATEMENT_ATTR[(k, f)]
            df = self._call(lambda: getattr(self._ticker(t), attr))
            if df is None or not isinstance(df, pd.DataFrame):
                df = pd.DataFrame()
            self._put(key, _frame_to_json(df))
        if df.empty:
            raise DataNotFound(f"Yahoo Finance has no {f} {k.replace('_', ' ')} for {t}.")
        lag = pd.Timedelta(days=REPORT_LAG_DAYS[f])
        cols = [c for c in df.columns if pd.Timestamp(c) + lag <= day]
        if not cols:
            raise DataNotFound(f"No {f} {k.replace('_', ' ')} period of {t} was likely reported by {day.date()}.")
        out = df[cols]
        out.columns = [pd.Timestamp(c) for c in cols]
        return out

    # -- news -----------------------------------------------------------------------------------
    def _news(self, t: str) -> list[dict[str, Any]]:
        key = f"news|{t}|{today().isoformat()}"
        hit = self._get(key)
        if hit:
            return hit[1]
        raw = self._call(lambda: self._ticker(t).news) or []
        items = [item for item in (_news_item(r) for r in raw if isinstance(r, dict)) if item]
        self._put(key, items)
        return items

    def news(self, ticker: str, start: str, end: str) -> list[dict[str, Any]]:
        t = check_ticker(ticker)
        s, e = check_range(start, end)
        return [it for it in self._news(t) if s <= it["published"][:10] <= e]

    def global_news(self, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        e = check_date(as_of)
        look = check_days(look_back_days, 3650)
        s = (pd.Timestamp(e) - pd.Timedelta(days=look - 1)).date().isoformat()
        items = []
        for proxy in ("SPY", "^GSPC"):
            items.extend(it for it in self._news(proxy) if s <= it["published"][:10] <= e)
        seen: set[str] = set()
        unique = []
        for it in sorted(items, key=lambda x: x["published"], reverse=True):
            if it["title"] not in seen:
                seen.add(it["title"])
                unique.append(it)
        return unique


def _http_status(exc: BaseException) -> int | None:
    """The HTTP status of an error that carries a response (the server answered), else None."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return int(status) if isinstance(status, int) and status > 0 else None


def _news_item(raw: dict[str, Any]) -> dict[str, Any] | None:
    """One yfinance 1.x news entry ({"id", "content": {...}}) or a legacy flat one, normalised."""
    c = raw.get("content") if isinstance(raw.get("content"), dict) else raw
    title = c.get("title")
    if not title:
        return None
    pub = c.get("pubDate") or c.get("displayTime")
    if not pub and c.get("providerPublishTime"):
        pub = _dt.datetime.fromtimestamp(int(c["providerPublishTime"]), tz=_dt.UTC).isoformat()
    if not pub:
        return None
    try:
        ts = pd.Timestamp(pub)
        if ts.tz is not None:
            ts = ts.tz_convert("UTC").tz_localize(None)
        published = ts.isoformat(timespec="seconds")
    except (ValueError, TypeError):
        return None
    provider = c.get("provider")
    source = provider.get("displayName") if isinstance(provider, dict) else c.get("publisher")
    url = c.get("canonicalUrl", {}).get("url") if isinstance(c.get("canonicalUrl"), dict) else c.get("link")
    return {"title": str(title), "source": str(source or "Yahoo Finance"), "published": published,
            "summary": str(c.get("summary") or c.get("description") or ""), "url": url}


def _frame_to_json(df: pd.DataFrame) -> str:
    return df.to_json(orient="split", date_format="iso", date_unit="s")


def _frame_from_json(text: str, index_is_dates: bool = True) -> pd.DataFrame:
    df = pd.read_json(io.StringIO(text), orient="split", dtype=False)
    if index_is_dates and len(df):
        idx = pd.to_datetime(df.index)
        if getattr(idx, "tz", None) is not None:
            idx = idx.tz_localize(None)
        df.index = pd.DatetimeIndex(idx, name="Date")
    elif index_is_dates:
        df.index = pd.DatetimeIndex([], name="Date")
    return df
