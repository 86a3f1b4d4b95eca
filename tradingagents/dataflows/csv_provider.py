"""The user's own daily prices: ``<csv_data_dir>/<TICKER>.csv`` with Date, Open, High, Low, Close, Volume.

Only prices: fundamentals, statements, news and social posts are not available from CSV files and
the tools say so with the NO_DATA sentinel. Files are re-read when they change (mtime and size).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pandas as pd

from tradingagents.dataflows.interface import (
    OHLCV_COLUMNS,
    DataNotFound,
    MarketDataProvider,
    ProviderUnavailable,
    check_range,
    check_ticker,
    clip_frame,
)
from tradingagents.validation import safe_path_component

EXPECTED_HEADER = "Date,Open,High,Low,Close,Volume"
MAX_FILE_BYTES = 200 * 1024 * 1024


class CSVProvider(MarketDataProvider):
    vendor = "csv"
    supports_social = False

    def __init__(self, data_dir: str | os.PathLike[str]):
        self.data_dir = Path(data_dir)
        self.label = f"CSV files in {self.data_dir}"
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple[int, int], pd.DataFrame]] = {}

    def path_for(self, ticker: str) -> Path:
        """The file of a ticker; the name is a validated ticker, so it never leaves the folder."""
        name = safe_path_component(check_ticker(ticker)) + ".csv"
        path = self.data_dir / name
        # belt and braces: the (unresolved) path must sit directly in the folder; a file that is a
        # symlink the user placed there is fine
        if os.path.dirname(os.path.normpath(path)) != os.path.normpath(self.data_dir):
            raise DataNotFound(f"{path} is not inside {self.data_dir}.")
        return path

    def _load(self, ticker: str) -> pd.DataFrame:
        path = self.path_for(ticker)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise DataNotFound(
                f"No CSV file for {check_ticker(ticker)}: expected {path} with the header "
                f"{EXPECTED_HEADER} (one row per trading day)."
            ) from None
        except OSError as exc:
            raise ProviderUnavailable(f"Cannot read {path}: {exc.strerror or exc}.") from None
        if not path.is_file():
            raise DataNotFound(f"{path} is not a file; expected a CSV file with the header {EXPECTED_HEADER}.")
        if st.st_size > MAX_FILE_BYTES:
            raise ProviderUnavailable(f"{path} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB.")
        key = (st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._cache.get(str(path))
            if hit and hit[0] == key:
                return hit[1]
        try:
            raw = pd.read_csv(path)
        except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise DataNotFound(
                f"{path} is not a readable CSV file ({type(exc).__name__}); expected the header {EXPECTED_HEADER}."
            ) from None
        cols = {str(c).strip().lower(): c for c in raw.columns}
        missing = [c for c in ["Date", *OHLCV_COLUMNS] if c.lower() not in cols]
        if missing:
            raise DataNotFound(
                f"{path} lacks the column(s) {', '.join(missing)}; expected the header {EXPECTED_HEADER}."
            )
        df = pd.DataFrame({c: raw[cols[c.lower()]] for c in ["Date", *OHLCV_COLUMNS]})
        dates = pd.to_datetime(df["Date"].astype(str).str.strip().str[:10], format="%Y-%m-%d", errors="coerce")
        bad = int(dates.isna().sum())
        if bad == len(df) and len(df):
            raise DataNotFound(f"{path}: no Date value is in the form YYYY-MM-DD; expected the header {EXPECTED_HEADER}.")
        for c in OHLCV_COLUMNS:
            df[c] = pd.to_numeric(df[c], errors="coerce")
        df.index = pd.DatetimeIndex(dates, name="Date")
        df = df.drop(columns=["Date"])
        df = df[df.index.notna()].dropna(subset=["Close"])
        df["Volume"] = df["Volume"].fillna(0).astype("int64")
        df = df[~df.index.duplicated(keep="last")].sort_index()
        with self._lock:
            self._cache[str(path)] = (key, df)
        return df

    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame:
        s, e = check_range(start, end)
        out = clip_frame(self._load(ticker), s, e).copy()
        out.attrs["data_source"] = self.label
        return out

    def identity(self, ticker: str) -> dict[str, Any]:
        t = check_ticker(ticker)
        return {"name": t, "sector": "Unknown (CSV prices only)", "industry": "Unknown (CSV prices only)",
                "exchange": "Unknown", "currency": "Unknown", "data_source": self.label}
