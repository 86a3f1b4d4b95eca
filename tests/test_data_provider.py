"""The provider contract in its own module: no cycle with the factory, one VENDORS, named config errors,
placeholder identity values dropped."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tradingagents import config, errors
from tradingagents.dataflows import interface, provider
from tradingagents.dataflows.provider import (
    VENDORS,
    MarketDataProvider,
    check_vendor,
    clean_identity,
    clean_value,
)

ROOT = Path(__file__).resolve().parents[1]
DATAFLOWS = ROOT / "tradingagents" / "dataflows"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_contract_imports_no_provider_and_providers_import_only_the_contract():
    assert not {m for m in _imports(DATAFLOWS / "provider.py") if m.startswith("tradingagents.dataflows")}
    for name in ("demo.py", "csv_provider.py", "yfinance_provider.py", "session.py"):
        mods = _imports(DATAFLOWS / name)
        assert "tradingagents.dataflows.interface" not in mods, name
        assert "tradingagents.dataflows.provider" in mods, name
    assert "tradingagents.dataflows.provider" in _imports(DATAFLOWS / "interface.py")


def test_importing_the_contract_loads_no_concrete_provider():
    code = ("import sys, tradingagents.dataflows.provider as p; "
            "print(sorted(m for m in sys.modules if m.startswith('tradingagents.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), timeout=300)
    assert out.returncode == 0, out.stderr
    loaded = out.stdout
    for other in ("dataflows.demo'", "dataflows.csv_provider", "dataflows.yfinance_provider", "dataflows.tools",
                  "dataflows.interface"):
        assert other not in loaded
    # the list of data sources is a config fact: the contract reads it from the config, which loads no data layer
    cfg_only = subprocess.run([sys.executable, "-c", "import sys, tradingagents.config; "
                               "print(sorted(m for m in sys.modules if m.startswith('tradingagents.')))"],
                              capture_output=True, text=True, cwd=str(ROOT), timeout=300)
    assert cfg_only.returncode == 0 and "dataflows" not in cfg_only.stdout, cfg_only.stdout + cfg_only.stderr
    lazy = subprocess.run([sys.executable, "-c", "from tradingagents.dataflows import get_provider, NO_DATA; "
                           "print(type(get_provider({'data_vendor': 'demo'})).__name__, NO_DATA)"],
                          capture_output=True, text=True, cwd=str(ROOT), timeout=300)
    assert lazy.stdout.split() == ["DemoProvider", "NO_DATA_AVAILABLE:"], lazy.stderr


def test_one_vendors_tuple_and_the_factory_reexports_the_contract():
    assert interface.VENDORS is provider.VENDORS is VENDORS
    assert interface.MarketDataProvider is MarketDataProvider
    assert VENDORS == ("demo", "yfinance", "csv")


def test_vendor_aliases_and_a_bad_vendor_names_its_setting():
    # one rule for data_vendor: the data layer's check is the config's, so both normalise alike
    assert check_vendor is config.check_vendor is config.CHECKS["data_vendor"]
    assert check_vendor("Yahoo") == "yfinance" and check_vendor(" DEMO ") == "demo"
    assert check_vendor("yahoo-finance") == "yfinance" == config.resolve_config({"data_vendor": "Yahoo Finance"}).data_vendor
    # unset means the config's default source, in the check and in the resolved settings alike
    assert check_vendor(None) == config.DEFAULTS["data_vendor"] == config.resolve_config({}).data_vendor == "demo"
    with pytest.raises(errors.ConfigError, match="expected one of demo, yfinance, csv"):
        check_vendor(3)
    assert type(interface.get_provider({"data_vendor": "yahoo"})).__name__ == "YFinanceProvider"
    with pytest.raises(errors.ConfigError) as exc:
        check_vendor("bloomberg", "TRADINGAGENTS_DATA_VENDOR")
    assert "TRADINGAGENTS_DATA_VENDOR='bloomberg'" in str(exc.value)
    assert "Accepted: demo, yfinance, csv" in str(exc.value)
    assert errors.exit_code_for(exc.value) == errors.EXIT_BAD_INPUT
    with pytest.raises(errors.ConfigError, match="data_vendor='bloomberg'"):
        interface.get_provider({"data_vendor": "bloomberg"})


@pytest.mark.parametrize("value", ["  ", "None", "none", "n/a", "N/A", "-", "null", "NaN", "", "—", float("nan")])
def test_placeholders_are_dropped(value):
    assert clean_value(value) is None
    assert clean_identity({"name": "Apple Inc.", "sector": value}) == {"name": "Apple Inc."}


def test_real_values_survive_cleaning():
    assert clean_value("  Apple   Inc. ") == "Apple Inc."
    assert clean_value(0) == 0 and clean_value(0.5) == 0.5 and clean_value("NASDAQ") == "NASDAQ"


def test_the_base_identity_has_no_placeholder_values():
    class Bare(MarketDataProvider):
        label = "bare"

    ident = Bare().identity("abc")
    assert ident == {"name": "ABC", "data_source": "bare"}


def _frame(dates, tz=None, name="Date"):
    import pandas as pd

    idx = pd.DatetimeIndex(pd.to_datetime(dates), name=name)
    if tz:
        idx = idx.tz_localize(tz)
    return pd.DataFrame({"Close": [float(i + 1) for i in range(len(dates))]}, index=idx)


@pytest.mark.parametrize("start, end", [
    ("2024-05-02", "2024-05-08"), (None, "2024-05-07"), ("2024-05-01", "2024-05-30"), ("2024-05-09", "2024-05-03"),
    ("2024-05-06", "2024-05-06"), ("2024-04-01", "2024-04-30"),
])
def test_a_frame_in_shape_is_clipped_as_one_rebuilt(start, end):
    """clip_frame slices a frame already in shape (naive, midnight, sorted, named Date): the rows are the
    ones the full rebuild keeps, both ends included, duplicate days kept."""
    dates = ["2024-05-01", "2024-05-02", "2024-05-03", "2024-05-06", "2024-05-06", "2024-05-07", "2024-05-08"]
    in_shape = _frame(dates)
    unnamed = _frame(dates, name=None)  # not in shape: the full rebuild
    got = provider.clip_frame(in_shape, start, end)
    want = provider.clip_frame(unnamed, start, end)
    assert list(got.index) == list(want.index) and got.index.name == want.index.name == "Date"
    assert got["Close"].tolist() == want["Close"].tolist()
    got.loc[got.index[:1], "Close"] = -1.0  # the caller's copy: the provider's frame stays as it was
    assert in_shape["Close"].min() > 0


def test_a_frame_out_of_shape_is_rebuilt_before_it_is_clipped():
    unsorted = _frame(["2024-05-03", "2024-05-01", "2024-05-02"])
    assert [d.day for d in provider.clip_frame(unsorted, None, "2024-05-02").index] == [1, 2]
    aware = _frame(["2024-05-01 13:30", "2024-05-02 13:30"], tz="America/New_York")
    out = provider.clip_frame(aware, "2024-05-02", "2024-05-02")
    assert out.index.tz is None and [str(d.date()) for d in out.index] == ["2024-05-02"]
    intraday = _frame(["2024-05-01 10:00", "2024-05-02 10:00"])  # not midnight: normalised, then clipped
    assert len(provider.clip_frame(intraday, "2024-05-02", "2024-05-02")) == 1
