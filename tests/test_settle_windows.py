"""A dropped price row never shifts a settlement window silently; duplicate CSV dates are reported."""

from __future__ import annotations

import pandas as pd

from tests.test_data_csv_rows import good, write
from tradingagents.dataflows.csv_provider import CSVProvider
from tradingagents.dataflows.returns import compute_returns

DAYS = [d.date().isoformat() for d in pd.bdate_range("2024-04-01", "2024-06-28")]


def _files(tmp_path, stock_lines):
    write(tmp_path, "ACME", stock_lines)
    write(tmp_path, "SPY", [good(d, 50 + i) for i, d in enumerate(DAYS)])
    return CSVProvider(tmp_path)


def test_a_window_counted_past_a_dropped_row_says_so(tmp_path):
    stock = [good(d, 100 + i) for i, d in enumerate(DAYS)]
    stock[30] = f"{DAYS[30]},1,2,0.5,inf,1000"  # inside the window from DAYS[28]
    out = compute_returns(_files(tmp_path, stock), "ACME", DAYS[28], holding_days=5, benchmark="SPY")
    assert out["end_date"] == DAYS[34]  # five valid rows later: one trading day past the calendar's
    assert out["note"] and DAYS[30] in out["note"] and "dropped" in out["note"]
    clean = compute_returns(_files(tmp_path, [good(d, 100 + i) for i, d in enumerate(DAYS)]), "ACME", DAYS[28],
                            holding_days=5, benchmark="SPY")
    assert clean["end_date"] == DAYS[33] and clean["note"] is None


def test_the_settle_command_names_a_window_shifted_by_a_dropped_row(ta_home, capsys):
    from tradingagents import cli
    from tradingagents.agents.utils.memory import TradingMemoryLog

    data = ta_home / "data"
    data.mkdir()
    stock = [good(d, 100 + i) for i, d in enumerate(DAYS)]
    stock[30] = f"{DAYS[30]},1,2,0.5,-5,1000"
    _files(data, stock)
    TradingMemoryLog(None).store_decision("ACME", DAYS[28], "**Rating**: Buy\nreasons")
    assert cli.main(["settle", "--data", "csv"]) == 0
    out = capsys.readouterr().out
    assert f"{DAYS[28]} ACME Buy" in out and "note:" in out and DAYS[30] in out


def test_duplicate_csv_dates_are_reported(tmp_path):
    lines = [good(d, 100 + i) for i, d in enumerate(DAYS[:10])]
    lines.insert(5, good(DAYS[3], 103))  # the same date twice, the same Close: kept once, reported
    write(tmp_path, "DUP", lines)
    p = CSVProvider(tmp_path)
    df = p.ohlcv("DUP", DAYS[0], DAYS[9])
    assert len(df) == 10
    problems = " | ".join(p.problems("DUP"))
    assert "1 date(s) appear on more than one row" in problems and DAYS[3] in problems
