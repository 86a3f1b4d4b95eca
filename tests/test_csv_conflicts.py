"""A CSV file that says two things is refused, naming the lines (issue 41, point 8): a date on two rows with
different Closes (used silently, it turned a Hold into an Overweight), and a ``close`` column beside ``Close``
(one silently won)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.test_data_csv_rows import good, write
from tradingagents.dataflows.csv_provider import EXPECTED_HEADER, CSVProvider
from tradingagents.errors import BadCSVError, exit_code_for

DAYS = [d.date().isoformat() for d in pd.bdate_range("2024-04-01", "2024-05-31")]


def test_a_date_with_two_different_closes_is_refused_naming_the_lines(tmp_path):
    lines = [good(d, 100 + i) for i, d in enumerate(DAYS)]
    lines.insert(11, good(DAYS[7], 250))  # line 13 repeats the date of line 9 with another Close
    write(tmp_path, "ACME", lines)
    with pytest.raises(BadCSVError) as info:
        CSVProvider(tmp_path).ohlcv("ACME", DAYS[0], DAYS[-1])
    message = str(info.value)
    assert f"{DAYS[7]} on lines 9, 13" in message and "Keep one row per date" in message
    assert info.value.bad_lines == (9, 13) and exit_code_for(info.value) == 3


def test_repeats_that_agree_are_still_read(tmp_path):
    lines = [good(d, 100 + i) for i, d in enumerate(DAYS)]
    lines.insert(11, good(DAYS[7], 107))
    write(tmp_path, "ACME", lines)
    assert len(CSVProvider(tmp_path).ohlcv("ACME", DAYS[0], DAYS[-1])) == len(DAYS)


@pytest.mark.parametrize("extra", ["close", " CLOSE", "date"])
def test_a_second_column_of_the_same_name_in_another_case_is_refused(tmp_path, extra):
    header = EXPECTED_HEADER + "," + extra
    lines = [good(d, 100 + i) + (",999" if "lose" in extra.lower() else f",{d}") for i, d in enumerate(DAYS)]
    write(tmp_path, "ACME", lines, header=header)
    with pytest.raises(BadCSVError, match="line 1 \\(the header\\)") as info:
        CSVProvider(tmp_path).ohlcv("ACME", DAYS[0], DAYS[-1])
    assert repr(extra) in str(info.value)


def test_the_command_line_refuses_it_with_exit_3(tmp_path, capsys):
    from tradingagents.cli import main

    data = tmp_path / "data"
    lines = [good(d, 100 + i) for i, d in enumerate(DAYS)]
    lines.append(good(DAYS[-1], 1.0))
    write(data, "ACME", lines)
    code = main(["ACME", DAYS[-1], "--data", "csv", "--home", str(tmp_path), "-q"])
    assert code == 3
    assert f"{DAYS[-1]} on lines {len(DAYS) + 1}, {len(DAYS) + 2}" in capsys.readouterr().err
