"""A blind run is listed and opened like any other run, marked blind, and quotes real prices everywhere it
is stored under real names (issue 39.7).

``run --blind`` saves the run where every run is saved (``show`` opens it, History and ``log`` list it),
prints the report file as "Report:", and its decision in the memory log, the report, the state and the
blind desk's memory mapped back quote the real prices: exactly the texts a run on real prices writes,
apart from the meta's blind marker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tradingagents import cli, storage
from tradingagents.config import resolve_config

DATE = "2024-05-10"
ARGS = ["NVDA", DATE, "--analysts", "market", "--quiet"]  # an Overweight: the card quotes entry, target, stop
CARD = re.compile(r"^(?:\*\*)?(?:Entry|Price target|Stop-loss)(?:\*\*)?:.*$|^- (?:Entry|Stop-loss):.*$", re.M)


def _decision(home: Path) -> str:
    [entry] = storage.open_memory_log(resolve_config({"home": str(home)})).load_entries()
    return entry["decision"]


NUMBER = re.compile(r"\d+\.\d{2}")


def _same_prices(a: str, b: str) -> bool:
    """The same text, its prices equal to what rounding allows: a level the plan derives (twice the risk) from
    figures the reports print rounded on the blind scale may land a cent or two (0.03%) from the real one;
    a price left on the blind scale would be ~10% off."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    return all(_close(float(x), float(y)) for x, y in zip(NUMBER.findall(a), NUMBER.findall(b), strict=True))


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= max(0.011, 0.0003 * abs(x))


def test_a_blind_run_is_listed_opened_and_quotes_real_prices(capsys, tmp_path, monkeypatch):
    real_home, blind_home = tmp_path / "real", tmp_path / "blind"
    monkeypatch.setenv("TRADINGAGENTS_HOME", str(real_home))
    assert cli.main(ARGS) == cli.EXIT_OK
    capsys.readouterr()
    monkeypatch.setenv("TRADINGAGENTS_HOME", str(blind_home))
    assert cli.main([*ARGS, "--blind"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    # "Report:" is the report file, where every run's is
    report = Path(re.search(r"^Report: (.+)$", out, re.M).group(1))
    assert report == blind_home / "results" / "NVDA" / DATE / "report.md" and report.is_file()
    assert "Blind run: the models saw an alias" in report.read_text()

    # listed: the memory log (marked blind) and the saved runs (History reads them)
    assert cli.main(["log"]) == cli.EXIT_OK
    listing = capsys.readouterr().out
    assert re.search(rf"^{DATE}\s+NVDA\s+Overweight\s+pending.*blind run$", listing, re.M), listing
    assert cli.main(["log", "--json"]) == cli.EXIT_OK
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["blind"] is True and entry["ticker"] == "NVDA" and entry["date"] == DATE
    [row] = storage.list_runs(resolve_config({}))
    assert row["blind"] is True and (row["ticker"], row["date"]) == ("NVDA", DATE)
    from studio.compare import history_rows

    [shown] = history_rows([row], {})
    assert shown.blind and "blind run" in " ".join(map(str, shown.as_display().values()))
    # opened: show prints its report
    assert cli.main(["show", "NVDA", DATE]) == cli.EXIT_OK
    assert "Blind run: the models saw an alias" in capsys.readouterr().out

    # real prices everywhere under real names: the log's decision (and the blind desk's log mapped back),
    # the report's card and the saved meta's decision card are the ones a run on real prices writes
    real_decision = _decision(real_home)
    assert CARD.findall(real_decision) and _same_prices(_decision(blind_home), real_decision)
    mapped_back = (blind_home / "blind" / "real_memory" / "trading_memory.md").read_text()
    assert real_decision.split("\n\n")[0] in mapped_back and "close of 100.00" not in mapped_back
    back_lines = CARD.findall(mapped_back)
    for line in CARD.findall(real_decision):
        assert any(_same_prices(line, other) for other in back_lines), line
    real_report = (real_home / "results" / "NVDA" / DATE / "report.md").read_text()
    blind_lines, real_lines = CARD.findall(report.read_text()), CARD.findall(real_report)
    assert len(blind_lines) == len(real_lines) and all(map(_same_prices, blind_lines, real_lines))
    card = json.loads((report.parent / "state.json").read_text())["meta"]["decision"]
    real_card = json.loads((real_home / "results" / "NVDA" / DATE / "state.json").read_text())["meta"]["decision"]
    for key in ("entry_price", "price_target", "stop_loss"):
        assert card[key] is not None and _close(card[key], real_card[key]), (key, card[key], real_card[key])
