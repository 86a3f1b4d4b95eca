"""User CSVs: bad rows are dropped and reported (never abort a batch), and reads use bounded memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tradingagents.dataflows.csv_provider import EXPECTED_HEADER, CSVProvider
from tradingagents.dataflows.returns import compute_returns
from tradingagents.dataflows.tools import make_tools

ROOT = Path(__file__).resolve().parents[1]


def write(folder: Path, ticker: str, lines: list[str], header: str = EXPECTED_HEADER) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{ticker}.csv"
    path.write_text("\n".join([header, *lines]) + "\n")
    return path


def good(day: str, close: float = 100.0, volume: int = 1000) -> str:
    return f"{day},{close},{close + 1},{close - 1},{close},{volume}"


def test_inf_nan_negative_and_junk_rows_are_dropped_with_the_problem_noted(tmp_path):
    days = [d.date().isoformat() for d in pd.bdate_range("2024-05-01", "2024-05-20")]
    lines = [good(d, 100 + i) for i, d in enumerate(days)]
    lines[2] = f"{days[2]},1,2,0.5,inf,1000"          # line 4: inf Close
    lines[3] = f"{days[3]},1,2,0.5,,1000"             # line 5: no Close
    lines[4] = f"{days[4]},1,2,0.5,-3,1000"           # line 6: negative Close
    lines[5] = f"{days[5]},1,2,0.5,104,inf"           # line 7: inf Volume
    lines[6] = f"{days[6]},1,2,0.5,105,-10"           # line 8: negative Volume
    lines[7] = f"{days[7]},1,2,0.5,abc,10"            # line 9: junk Close
    lines[8] = f"{days[8]},1,2,0.5,107,nan"           # line 10: NaN Volume
    lines[9] = "2024/13/45,1,2,0.5,108,10"           # line 11: bad date
    lines[10] = f"{days[10]},inf,2,0.5,109,10"        # line 12: broken Open (row kept)
    write(tmp_path, "BAD", lines)
    p = CSVProvider(tmp_path)
    df = p.ohlcv("BAD", "2024-05-01", "2024-05-31")
    assert len(df) == len(days) - 8
    assert np.isfinite(df["Close"]).all() and (df["Close"] > 0).all()
    assert df["Volume"].dtype == "int64" and (df["Volume"] >= 0).all()
    assert pd.isna(df.loc[days[10], "Open"]) and df.loc[days[10], "Close"] == 109
    problems = " | ".join(p.problems("BAD"))
    assert "4 rows dropped: the Close is missing, not a finite number or not positive (line 4, 5, 6, 9)" in problems
    assert "3 rows dropped: the Volume is missing, not a finite number or negative" in problems
    assert "1 row dropped: the Date is not YYYY-MM-DD (line 11)" in problems
    assert "1 row kept with a broken Open/High/Low" in problems
    assert df.attrs["problems"] == p.problems("BAD")


def test_a_bad_row_never_aborts_settlement_or_a_tool(tmp_path):
    days = [d.date().isoformat() for d in pd.bdate_range("2024-04-01", "2024-06-28")]
    stock = [good(d, 100 + i) for i, d in enumerate(days)]
    stock[30] = f"{days[30]},1,2,0.5,inf,1000"
    bench = [good(d, 50 + i, volume=10) for i, d in enumerate(days)]
    bench[31] = f"{days[31]},1,2,0.5,51,inf"  # was IntCastingNaNError
    write(tmp_path, "ACME", stock)
    write(tmp_path, "SPY", bench)
    p = CSVProvider(tmp_path)
    out = compute_returns(p, "ACME", days[28], holding_days=5, benchmark="SPY")
    assert out is not None and np.isfinite(out["raw"]) and np.isfinite(out["alpha"])
    text = make_tools(as_of=days[-1], provider=p)["get_stock_data"].invoke(
        {"symbol": "ACME", "start_date": days[0], "end_date": days[-1]})
    assert "# Data problem: ACME.csv: 1 row dropped: the Close" in text and "inf" not in text.split("Date,Open")[1]


def test_volume_column_without_values_counts_as_zero(tmp_path):
    write(tmp_path, "IDX", [f"2024-05-0{d},1,2,0.5,{10 + d}," for d in range(1, 4)])
    p = CSVProvider(tmp_path)
    df = p.ohlcv("IDX", "2024-05-01", "2024-05-03")
    assert df["Volume"].tolist() == [0, 0, 0] and len(df) == 3
    assert any("no Volume in the file (taken as 0)" in x for x in p.problems("IDX"))


def test_extra_columns_and_case_of_the_header_are_accepted(tmp_path):
    write(tmp_path, "WIDE", ["2024-05-01,x,1,2,0.5,10,1.5,100", "2024-05-02,y,1,2,0.5,11,1.5,100"],
          header="date,Note,open,high,low,close,Adj Close,volume")
    df = CSVProvider(tmp_path).ohlcv("WIDE", "2024-05-01", "2024-05-02")
    assert df["Close"].tolist() == [10.0, 11.0] and list(df.columns) == ["Open", "High", "Low", "Close", "Volume"]


# VmHWM (the peak resident size of this process image; ru_maxrss would carry the parent's over exec)
_RSS_SCRIPT = """
import re, sys
from pathlib import Path
from tradingagents.dataflows.csv_provider import CSVProvider

def peak_kb():
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))

p = CSVProvider(Path(sys.argv[1]))
p.ohlcv("TINY", "2024-01-01", "2024-12-31")  # the same code path once: lazy imports are not the read
base = peak_kb()
df = p.ohlcv("HUGE", "1900-01-01", "2024-12-31")  # the whole file is loaded (and cached)
print(len(df), (peak_kb() - base) / 1024)
"""


@pytest.mark.timeout(120)
def test_a_big_csv_is_read_in_bounded_memory(tmp_path):
    # ~50 MB: 100k daily rows with a wide notes column; memory must follow the rows kept, not the file
    n = 100_000
    days = pd.date_range("1750-01-01", periods=n, freq="D").strftime("%Y-%m-%d")
    close = 100 + (np.arange(n) % 97) / 10
    pad = "n" * 480
    body = "".join(f"{d},{c:.2f},{c + 1:.2f},{c - 1:.2f},{c:.2f},{1000 + i},{pad}\n"
                   for i, (d, c) in enumerate(zip(days, close, strict=True)))
    write(tmp_path, "TINY", [good("2024-05-01")])
    path = tmp_path / "HUGE.csv"
    path.write_text("Date,Open,High,Low,Close,Volume,Notes\n" + body)
    size_mb = path.stat().st_size / 2**20
    assert size_mb > 45
    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                         cwd=str(ROOT), timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    rows, grown_mb = out.stdout.split()
    assert int(rows) == int((days >= "1900-01-01").sum())
    # reading the whole file at once costs more than the file itself; chunks keep it to a fraction
    assert float(grown_mb) < 0.6 * size_mb, f"peak grew {grown_mb} MB for a {size_mb:.0f} MB file"
