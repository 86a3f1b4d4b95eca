"""The user's own daily prices: ``<csv_data_dir>/<TICKER>.csv`` with Date, Open, High, Low, Close, Volume.

Files are read in bounded memory (only the six columns, in chunks) and bad rows — an inf/NaN/negative
Close or Volume, a date that is not YYYY-MM-DD — are dropped and listed in ``problems(ticker)`` (and in
``ohlcv(...).attrs["problems"]``) instead of aborting a read. Before an analysis, ``input_check``
refuses a file with such rows (exit 3, with their line numbers) unless ``csv_skip_bad_rows``, refuses
weekly or monthly bars, and notes a history shorter than the longest indicator window. Only prices: fundamentals, statements, news and social posts are not available from CSV files and
the tools say so with the NO_DATA sentinel. Files are re-read when they change (mtime and size).
"""

from __future__ import annotations

import csv
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tradingagents.dataflows.provider import (
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
CHUNK_BYTES = 4 * 1024 * 1024  # about this much of the file is parsed at a time (the peak of a read)


class CSVProvider(MarketDataProvider):
    vendor = "csv"
    supports_social = False
    local = True

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
            close = self.suggest(ticker)
            hint = f"did you mean {' or '.join(close)}? Or " if close else ""
            raise DataNotFound(
                f"No CSV file {path.name} in {self.data_dir}: {hint}add one with the header {EXPECTED_HEADER} "
                "(one row per trading day; the README shows an example)."
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
        df = _read_prices(path)
        with self._lock:
            self._cache[str(path)] = (key, df)
        return df

    def suggest(self, ticker: str, n: int = 3) -> list[str]:
        """The tickers of the folder's files closest to ``ticker`` (a typo's likely meaning)."""
        import difflib

        try:
            names = [p.stem for p in self.data_dir.glob("*.csv")]
        except OSError:
            return []
        return difflib.get_close_matches(check_ticker(ticker), names, n=n, cutoff=0.7)

    def input_check(self, ticker: str, as_of: str, *, skip_bad_rows: bool = False) -> list[str]:
        """Before any model call: can the file be trusted for an analysis as of ``as_of``?

        Raises ``BadCSVError`` (exit 3, naming the file and the first bad lines) when rows do not
        parse, unless ``skip_bad_rows`` (then a note says how many were dropped), and when the bars
        are not daily (weekly or monthly bars would be read, and annualised, as days). Returns notes
        for the run's report and provenance: the rows dropped, and a history shorter than the longest
        indicator window (the 200-day average), which the indicators then lack.
        """
        from tradingagents.dataflows.indicators import WARMUP_ROWS
        from tradingagents.errors import BadCSVError

        full = self._load(ticker)
        path = self.path_for(ticker)
        notes: list[str] = []
        bad = list(full.attrs.get("bad_lines", []))
        dropped = int(full.attrs.get("dropped", 0))
        if dropped:
            lines = ", ".join(str(n) for n in bad[:10]) + (", …" if dropped > len(bad[:10]) else "")
            rows = f"{dropped} row" + ("" if dropped == 1 else "s")
            if not skip_bad_rows:  # refused: nothing was dropped, the file is not used
                them = "it" if dropped == 1 else "them"
                raise BadCSVError(
                    f"{path} has {rows} that {'does' if dropped == 1 else 'do'} not parse: "
                    + "; ".join(f"{why} (line {where})" for why, where in full.attrs.get("unparsed", []))
                    + f". Fix {them} (the header is {EXPECTED_HEADER}), or pass --csv-skip-bad-rows to drop {them}.",
                    path=str(path), bad_lines=tuple(bad),
                )
            notes.append(f"{path.name}: {rows} that {'does' if dropped == 1 else 'do'} not parse "
                         f"{'was' if dropped == 1 else 'were'} dropped (line {lines}).")
        upto = full[full.index <= pd.Timestamp(as_of)]
        if len(upto) >= 3:
            gap = float(np.median(np.diff(upto.index.values[-60:]).astype("timedelta64[D]").astype(float)))
            if gap >= 4.5:
                kind = "monthly" if gap >= 25 else "weekly" if gap >= 6 else f"{gap:.0f} days apart"
                raise BadCSVError(
                    f"{path} holds {kind} bars (the median gap between its rows is {gap:.0f} days); the analysts, "
                    "their indicators, the returns and the backtests read daily bars (one row per trading day), "
                    "so its volatility and Sharpe ratios would be annualised wrongly. Give daily rows.",
                    path=str(path),
                )
        longest = max(WARMUP_ROWS.values())
        if len(upto) < longest:
            notes.append(f"{path.name} has only {len(upto)} row(s) up to {as_of}, fewer than the {longest} the longest "
                         "indicator (the 200-day average) needs: the long-term indicators are missing and the "
                         "decision rests on a short history.")
        return notes

    def problems(self, ticker: str) -> list[str]:
        """What was wrong in the ticker's file (rows dropped and why); empty when all was well."""
        return list(self._load(ticker).attrs.get("problems", []))

    def missing_prices_hint(self, ticker: str, as_of: str) -> str:
        return (f"add rows up to {as_of} to {self.path_for(ticker)} ({EXPECTED_HEADER}), "
                "or choose the demo market")

    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame:
        s, e = check_range(start, end)
        full = self._load(ticker)
        out = clip_frame(full, s, e).copy()
        out.attrs["data_source"] = self.label
        out.attrs["problems"] = list(full.attrs.get("problems", []))
        out.attrs["dropped_days"] = [d for d in full.attrs.get("dropped_days", []) if s <= d <= e]
        return out

    def identity(self, ticker: str) -> dict[str, Any]:
        return {"name": check_ticker(ticker), "data_source": self.label,
                "note": "CSV files carry prices only (no company name, sector or currency)."}


def _read_prices(path: Path) -> pd.DataFrame:
    """The file's rows as floats with a Date index, read in bounded memory.

    Only the six columns are parsed (``usecols``), about ``CHUNK_BYTES`` of the file at a time, each chunk
    converted and filtered before the next is read, so a huge file (or one with wide extra columns)
    never sits in memory whole. Numbers are parsed natively as float64; a file with non-numeric
    junk in a number column is re-read as text and coerced. A row whose Date is not YYYY-MM-DD,
    whose Close is missing, not finite or not positive, or whose Volume is missing, not finite or
    negative is dropped and counted in ``attrs["problems"]`` (a file without any Volume gets 0s);
    a broken Open/High/Low becomes NaN.
    """
    try:
        with open(path, "rb") as fh:
            sample = fh.read(256 * 1024)
        with open(path, encoding="utf-8-sig", newline="") as fh:
            header = next(csv.reader([fh.readline()]), [])
    except UnicodeDecodeError:
        raise DataNotFound(f"{path} is not a readable CSV file (not UTF-8 text); expected the header "
                           f"{EXPECTED_HEADER}.") from None
    except OSError as exc:
        raise ProviderUnavailable(f"Cannot read {path}: {exc.strerror or exc}.") from None
    from tradingagents.errors import BadCSVError

    for wanted in ["Date", *OHLCV_COLUMNS]:  # "close" beside "Close": which one is meant cannot be told
        same = [str(c) for c in header if str(c).strip().lower() == wanted.lower()]
        if len(same) > 1:
            raise BadCSVError(f"{path}, line 1 (the header): the columns {' and '.join(repr(c) for c in same)} are "
                              f"both {wanted}, so which one holds the prices cannot be told; keep one (the header "
                              f"is {EXPECTED_HEADER}).", path=str(path), bad_lines=(1,))
    cols = {str(c).strip().lower(): c for c in header}
    missing = [c for c in ["Date", *OHLCV_COLUMNS] if c.lower() not in cols]
    if missing:
        raise DataNotFound(f"{path} lacks the column(s) {', '.join(missing)}; expected the header {EXPECTED_HEADER}.")
    names = {c: cols[c.lower()] for c in ["Date", *OHLCV_COLUMNS]}
    line_bytes = len(sample) / max(1, sample.count(b"\n"))
    rows = int(max(1_000, min(100_000, CHUNK_BYTES / max(line_bytes, 1.0))))  # rows per chunk
    try:
        try:
            df, counts, examples, total = _read_chunks(path, names, rows, numeric=True)
        except ValueError:  # text in a number column: read it again as strings and coerce
            df, counts, examples, total = _read_chunks(path, names, rows, numeric=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DataNotFound(
            f"{path} is not a readable CSV file ({type(exc).__name__}); expected the header {EXPECTED_HEADER}."
        ) from None
    if total and counts["date"] == total:
        raise DataNotFound(f"{path}: no Date value is in the form YYYY-MM-DD; expected the header {EXPECTED_HEADER}.")
    no_volume = df["Volume"].isna()
    if len(df) and bool(no_volume.all()):
        counts["no_volume"], examples["no_volume"] = len(df), []
        df["Volume"] = 0.0
    elif bool(no_volume.any()):
        counts["volume"] += int(no_volume.sum())
        examples.setdefault("dropped_days", []).extend(d.date().isoformat() for d in df.index[no_volume])
        df = df[~no_volume]
    _refuse_conflicting_days(path, df)
    df = df.drop(columns="_line")
    duplicated = df.index.duplicated(keep="last")
    repeated = sorted({d.date().isoformat() for d in df.index[duplicated]})
    df = df[~duplicated].sort_index()
    df["Volume"] = df["Volume"].astype("int64")
    df.index.name = "Date"
    reasons = {"date": "the Date is not YYYY-MM-DD",
               "close": "the Close is missing, not a finite number or not positive",
               "volume": "the Volume is missing, not a finite number or negative"}
    labels = {
        **{k: f"rows dropped: {why}" for k, why in reasons.items()},
        "ohl": "rows kept with a broken Open/High/Low (left empty)",
        "no_volume": "rows and no Volume in the file (taken as 0)",
    }
    problems = []
    for k, label in labels.items():
        if counts[k]:
            where = ""
            if examples[k]:
                more = ", …" if counts[k] > len(examples[k]) else ""
                where = f" (line {', '.join(str(n) for n in sorted(examples[k])[:5])}{more})"
            label = label.replace("rows ", "row ", 1) if counts[k] == 1 else label  # "1 row dropped"
            problems.append(f"{path.name}: {counts[k]} {label}{where}.")
    if repeated:
        shown = ", ".join(repeated[:5]) + (", …" if len(repeated) > 5 else "")
        problems.append(f"{path.name}: {len(repeated)} date(s) appear on more than one row with the same Close; "
                        f"the last row of each is used ({shown}).")
    df.attrs["problems"] = problems
    df.attrs["unparsed"] = [  # (why, its first lines) of each kind of row that does not parse
        (why, ", ".join(str(n) for n in sorted(examples[k])[:5]) + (", …" if counts[k] > min(5, len(examples[k])) else ""))
        for k, why in reasons.items() if counts[k]]
    df.attrs["dropped_days"] = sorted(set(examples.get("dropped_days", [])) - {d.date().isoformat() for d in df.index})
    df.attrs["dropped"] = counts["date"] + counts["close"] + counts["volume"]
    df.attrs["bad_lines"] = sorted(n for k in ("date", "close", "volume") if counts[k] for n in examples[k])
    return df


def _refuse_conflicting_days(path: Path, df: pd.DataFrame) -> None:
    """``BadCSVError`` naming the lines when a date appears on rows with different Closes (which is the
    day's price cannot be told; using one silently changed a rating). Repeats that agree are kept."""
    from tradingagents.errors import BadCSVError

    repeated = df[df.index.duplicated(keep=False)]
    if repeated.empty:
        return
    conflicts = [(day.date().isoformat(), sorted(int(n) for n in rows["_line"]))
                 for day, rows in repeated.groupby(level=0) if rows["Close"].nunique() > 1]
    if not conflicts:
        return
    shown = "; ".join(f"{day} on lines {', '.join(map(str, lines))}" for day, lines in conflicts[:5])
    more = f"; and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
    raise BadCSVError(f"{path} gives {len(conflicts)} date(s) more than one different Close ({shown}{more}): which is "
                      "the day's price cannot be told. Keep one row per date.", path=str(path),
                      bad_lines=tuple(n for _day, lines in conflicts for n in lines))


def _read_chunks(path: Path, names: dict[str, str], rows: int, *, numeric: bool):
    counts = {"date": 0, "close": 0, "volume": 0, "ohl": 0, "no_volume": 0}
    examples: dict[str, list[int]] = {k: [] for k in counts}
    dtypes = {names["Date"]: str, **{names[c]: ("float64" if numeric else str) for c in OHLCV_COLUMNS}}
    reader = pd.read_csv(path, usecols=list(names.values()), dtype=dtypes, keep_default_na=False,
                         na_values=[""], chunksize=rows, encoding="utf-8-sig")
    parts: list[pd.DataFrame] = []
    total = 0
    with reader:
        for chunk in reader:
            parts.append(_clean_chunk(chunk, names, total, counts, examples))
            total += len(chunk)
    df = pd.concat(parts) if parts else pd.DataFrame(
        {**{c: pd.Series(dtype="float64") for c in OHLCV_COLUMNS}, "_line": pd.Series(dtype="int64")},
        index=pd.DatetimeIndex([], name="Date"))
    return df, counts, examples, total


def _clean_chunk(chunk: pd.DataFrame, names: dict[str, str], offset: int, counts: dict[str, int],
                 examples: dict[str, list[int]]) -> pd.DataFrame:
    """One chunk → float columns with a Date index; bad rows dropped and counted (see ``_read_prices``)."""
    line_no = np.arange(offset + 2, offset + 2 + len(chunk))  # line 1 is the header

    def note(kind: str, mask: np.ndarray) -> None:
        n = int(mask.sum())
        if n:
            counts[kind] += n
            room = 5 - len(examples[kind])
            if room > 0:
                examples[kind].extend(int(x) for x in line_no[mask][:room])

    raw_date = chunk[names["Date"]].fillna("").str.strip().str[:10]
    dates = pd.to_datetime(raw_date, format="%Y-%m-%d", errors="coerce")
    bad_date = dates.isna().to_numpy()
    values = {c: pd.to_numeric(chunk[names[c]], errors="coerce").to_numpy(dtype="float64") for c in OHLCV_COLUMNS}
    close, volume = values["Close"], values["Volume"]
    bad_close = ~bad_date & ~(np.isfinite(close) & (close > 0))
    # a missing Volume is decided over the whole file (see _read_prices); inf, negative or huge is bad
    vol_nan = np.isnan(volume)
    bad_volume = ~bad_date & ~bad_close & ~vol_nan & ~(np.isfinite(volume) & (volume >= 0) & (volume < 9e18))
    keep = ~(bad_date | bad_close | bad_volume)
    # the trading days whose row was dropped (a settlement window must not silently step over one)
    examples.setdefault("dropped_days", []).extend(  # type: ignore[arg-type]
        d.date().isoformat() for d in dates[~bad_date & (bad_close | bad_volume)])
    note("date", bad_date)
    note("close", bad_close)
    note("volume", bad_volume)
    examples_room = 5 - len(examples["volume"])
    if examples_room > 0:  # a missing Volume is only a problem if the file has Volume elsewhere
        examples["volume"].extend(int(x) for x in line_no[keep & vol_nan][:examples_room])
    broken = np.zeros(len(chunk), dtype=bool)
    for c in ("Open", "High", "Low"):
        v = values[c]
        bad = ~(np.isfinite(v) & (v > 0))
        broken |= bad & ~chunk[names[c]].isna().to_numpy()  # a value that is there but unusable
        values[c] = np.where(bad, np.nan, v)
    note("ohl", keep & broken)
    return pd.DataFrame({"Open": values["Open"][keep], "High": values["High"][keep], "Low": values["Low"][keep],
                         "Close": close[keep], "Volume": np.floor(volume[keep]), "_line": line_no[keep]},
                        index=pd.DatetimeIndex(dates[keep], name="Date"))
