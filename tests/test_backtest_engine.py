"""End-to-end backtests on the offline engine and the demo market (short ranges, real files)."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import tests.pg_server as _pg
from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.backtest import STRATEGIES, TEAM, TEAM_NO_MEMORY, Backtest, BacktestSpec, run_backtest
from tradingagents.backtest.cli import main as cli_main
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.returns import compute_returns
from tradingagents.errors import RunStopped
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.storage.files_runs import load_run

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures

ROOT = Path(__file__).resolve().parents[1]
START, END = "2024-06-03", "2024-06-28"  # 20 trading days of the demo market


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _closes(ticker: str, start: str, end: str) -> pd.Series:
    df = get_provider({"data_vendor": "demo"}).ohlcv(ticker, start, end)
    return df["Close"].astype(float)


def _metrics_from(equity: list[float]) -> dict[str, float | None]:
    """The issue's formulas, written again independently of the engine (pandas)."""
    e = pd.Series(equity)
    r = e.pct_change().dropna()
    n = len(r)
    std = r.std(ddof=1)
    return {"cr": e.iloc[-1] / e.iloc[0] - 1, "arr": (e.iloc[-1] / e.iloc[0]) ** (252 / n) - 1,
            "sharpe": None if std == 0 else r.mean() / std * math.sqrt(252),
            "mdd": float((1 - e / e.cummax()).max())}


def test_backtest_outputs_follow_from_equity_and_prices(ta_home):
    spec = BacktestSpec.make("NVDA", START, END, every=1)
    events = []
    result = run_backtest(spec, {}, on_progress=events.append)
    folder = result.folder
    assert folder == ta_home / "backtests" / result.id
    for name in ("metrics.json", "equity.csv", "decisions.csv", "report.md", "report.html", "manifest.json"):
        assert (folder / name).is_file(), name

    closes = _closes("NVDA", START, END)
    days = [d.date().isoformat() for d in closes.index]
    assert len(days) == 20

    metrics = json.loads((folder / "metrics.json").read_text())
    assert set(STRATEGIES) <= set(metrics["NVDA"]) and "Benchmark (SPY)" in metrics["NVDA"]
    rows = _read_csv(folder / "equity.csv")
    assert list(rows[0]) == ["date", "ticker", "strategy", "equity"]
    curves: dict[str, list[float]] = {}
    for row in rows:
        curves.setdefault(row["strategy"], []).append(float(row["equity"]))
    assert set(curves) == set(metrics["NVDA"])
    for strategy, curve in curves.items():
        assert [r["date"] for r in rows if r["strategy"] == strategy] == days
        assert curve[0] == 1.0
        expected = _metrics_from(curve)
        got = metrics["NVDA"][strategy]
        for key in ("cr", "arr", "mdd"):
            assert got[key] == pytest.approx(expected[key], rel=1e-12, abs=1e-15), (strategy, key)
        if expected["sharpe"] is None:
            assert got["sharpe"] is None
        else:
            assert got["sharpe"] == pytest.approx(expected["sharpe"], rel=1e-9), strategy

    # Buy & Hold is the prices less the default cost of its entry (5 bps of one unit of turnover,
    # charged on the first mark); the benchmark index is the prices themselves (not traded)
    c = 5 / 10_000
    assert metrics["NVDA"]["Buy & Hold"]["cost_bps"] == 5.0
    bh = [1.0] + [(1 + closes.iloc[1] / closes.iloc[0] - 1 - c) * closes.iloc[t] / closes.iloc[1]
                  for t in range(1, len(closes))]
    assert curves["Buy & Hold"] == pytest.approx(bh, rel=1e-12)
    spy = _closes("SPY", START, END)
    assert curves["Benchmark (SPY)"] == pytest.approx(list(spy / spy.iloc[0]), rel=1e-12)

    # the team's equity follows from decisions.csv and the prices with the position rule, by hand
    decisions = _read_csv(folder / "decisions.csv")
    assert list(decisions[0]) == ["date", "ticker", "rating", "position"]
    assert [d["date"] for d in decisions] == days  # every = 1: one decision per trading day
    by_day = {d["date"]: d for d in decisions}
    pos, held, equity = 0.0, [], [1.0]
    targets = {"Buy": 1.0, "Overweight": 0.5, "Underweight": 0.0, "Sell": 0.0}
    for day in days:
        pos = targets.get(by_day[day]["rating"], pos)
        assert float(by_day[day]["position"]) == pos
        held.append(pos)
    for t in range(1, len(days)):
        change = abs(held[t - 1] - (held[t - 2] if t >= 2 else 0.0))
        equity.append(equity[-1] * (1 + held[t - 1] * (closes.iloc[t] / closes.iloc[t - 1] - 1) - c * change))
    assert curves[TEAM] == pytest.approx(equity, rel=1e-12)

    # hit rate and alpha from the decisions and the engine's own returns
    alphas = []
    for d in decisions:
        out = compute_returns(get_provider({}), "NVDA", d["date"], holding_days=5)
        if out:
            alphas.append(out["alpha"])
    assert metrics["NVDA"][TEAM]["avg_alpha"] == pytest.approx(sum(alphas) / len(alphas))
    assert metrics["NVDA"][TEAM]["decisions"] == 20

    # each step is an ordinary saved run; progress counted every step with an ETA
    for d in days[:3]:
        assert load_run({}, "NVDA", d)["rating"] == by_day[d]["rating"]
    finished = [e for e in events if e["kind"] == "step_finished"]
    assert [e["done"] for e in finished] == list(range(1, 21)) and finished[-1]["total"] == 20
    assert finished[5]["eta_s"] is not None and events[-1]["kind"] == "finished"
    report = (folder / "report.html").read_text()
    assert "<svg" in report and "<script" not in report and "http" not in report.replace("http://www.w3.org", "")
    md = (folder / "report.md").read_text()
    assert "| TradingAgents |" in md and "| Buy & Hold |" in md
    # the verdict on the edge first, and no annualised figure over 20 trading days (a dash in ARR's column)
    assert re.search(r"^\*\*(No evidence|Evidence) of edge: [+−]\d+(?:\.\d)? pts against Buy & Hold, p = \d\.\d{3}\*\*$", md, re.M)
    assert "20 trading days are under a year" in md and "of edge: " in report
    assert f"Folder: `{folder.name}`" in md and str(folder) not in md and str(folder) not in report
    team_row = next(line for line in md.splitlines() if line.startswith("| TradingAgents |"))
    assert team_row.split(" | ")[2] == "–"  # ARR %


_TAG = re.compile(r"\[(\d{4}-\d{2}-\d{2}) \| ([A-Z0-9.^=_+\-]+) \| \w+ \| return [^|]+ \| alpha [^|]+ \| (\d+)d\]")


def test_a_step_never_sees_an_outcome_known_only_after_its_date(ta_home, monkeypatch):
    """Past context and role memories of every step: only outcomes whose window closed by its date."""
    recalls: list[tuple[str, str | None, list[str]]] = []
    real = FinancialSituationMemory.recall_lessons  # what the roles recall through

    def spy(self, current_situation, n_matches=1, *, as_of=None):
        out = real(self, current_situation, n_matches, as_of=as_of)
        with self._lock:
            known = dict(zip(self._situations, self._known_from, strict=True))
        recalls.append((self.name, as_of, [known[m["matched_situation"]] for m in out]))
        return out

    monkeypatch.setattr(FinancialSituationMemory, "recall_lessons", spy)
    spec = BacktestSpec.make("NVDA", START, END, every=1)
    run_backtest(spec, {})
    provider = get_provider({})
    seen_context = 0
    window_end: dict[str, str] = {}
    for day in [d.date().isoformat() for d in _closes("NVDA", START, END).index]:
        past = load_run({}, "NVDA", day)["state"].get("past_context") or ""
        for date, ticker, holding in _TAG.findall(past):
            seen_context += 1
            if date not in window_end:
                window_end[date] = compute_returns(provider, ticker, date, holding_days=int(holding))["end_date"]
            assert date < day and window_end[date] <= day, (day, date, window_end[date])
    assert seen_context > 20  # later steps did learn from earlier ones (the test is not vacuous)
    recalled = [(as_of, k) for _, as_of, known in recalls for k in known]
    assert len(recalled) > 10 and all(as_of is not None for as_of, _ in recalled)
    assert all(k is not None and k <= as_of for as_of, k in recalled)
    # and the memories do hold lessons dated after some of those steps: the filter is what kept them out
    later = [as_of for as_of, _ in recalled if any(k > as_of for k in FinancialSituationMemory(
        "bull_memory")._known_from if k)]
    assert later


@pytest.fixture
def propagate_calls(monkeypatch) -> list[tuple[str, str]]:
    """Every (ticker, date) the graph is asked to propagate, in order (the run itself unchanged)."""
    calls: list[tuple[str, str]] = []
    real = TradingAgentsGraph.propagate

    def counting(self, ticker, trade_date, *args, **kwargs):
        calls.append((ticker, trade_date))
        return real(self, ticker, trade_date, *args, **kwargs)

    monkeypatch.setattr(TradingAgentsGraph, "propagate", counting)
    return calls


def test_stop_then_resume_redoes_no_finished_step(ta_home, propagate_calls):
    calls = propagate_calls
    spec = BacktestSpec.make("NVDA", START, "2024-06-14", every=1)  # 10 steps
    checks: dict[int, int] = {}

    def stop_mid_step_four():
        checks[len(calls)] = checks.get(len(calls), 0) + 1
        return len(calls) == 4 and checks[4] > 4  # a few supersteps into the 4th step

    bt = Backtest(spec, {})
    with pytest.raises(RunStopped):
        bt.run(should_stop=stop_mid_step_four)
    assert bt.done_steps() == 3 and bt.status == "stopped"
    assert json.loads((bt.folder / "manifest.json").read_text())["status"] == "stopped"
    assert not (bt.folder / "metrics.json").exists()
    stopped_on = calls[-1]

    calls.clear()
    again = Backtest(spec, {})
    assert again.id == bt.id and again.done_steps() == 3
    result = again.run()
    assert len(calls) == 7 and calls[0] == stopped_on  # the 3 finished steps were not run again
    manifest = json.loads((result.folder / "manifest.json").read_text())
    steps = manifest["steps"][TEAM]["NVDA"]
    assert len(steps) == 10 and steps[stopped_on[1]]["resumed"] is True  # continued from its checkpoint
    assert manifest["status"] == "finished"

    # a step saved but not yet recorded (killed between the two) is taken from its saved result
    last = max(steps)
    del manifest["steps"][TEAM]["NVDA"][last]
    (result.folder / "manifest.json").write_text(json.dumps(manifest))
    calls.clear()
    Backtest(spec, {}).run()
    assert calls == []
    assert json.loads((result.folder / "manifest.json").read_text())["steps"][TEAM]["NVDA"][last]["reused"] is True


def test_killed_cli_backtest_continues(ta_home, tmp_path):
    args = [sys.executable, "-m", "tradingagents.backtest", "NVDA", "--start", START, "--end", END]
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    manifest = None
    deadline = time.monotonic() + 300  # only catches a hang
    try:
        while time.monotonic() < deadline:
            found = list((ta_home / "backtests").glob("*/manifest.json")) if (ta_home / "backtests").exists() else []
            if found:
                try:
                    done = len(json.loads(found[0].read_text())["steps"].get(TEAM, {}).get("NVDA", {}))
                except (ValueError, OSError):
                    done = 0
                if done >= 3:
                    manifest = found[0]
                    break
            time.sleep(0.05)
    finally:
        proc.kill()  # SIGKILL: no cleanup of any kind
        proc.communicate()
    assert manifest is not None, "the backtest did not get three steps done"
    done_at_kill = len(json.loads(manifest.read_text())["steps"][TEAM]["NVDA"])
    assert done_at_kill < 20
    out = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"resuming ({done_at_kill} of 20 steps done)" in out.stderr  # read after the kill: exact
    assert out.stdout.strip().splitlines()[-1] == f"Backtest: {manifest.parent}"
    entries = TradingMemoryLog({}).load_entries()
    assert len(entries) == 20 and len({(e["date"], e["ticker"]) for e in entries}) == 20  # no duplicate


def test_compare_memory_keeps_the_ablation_apart(ta_home):
    spec = BacktestSpec.make("NVDA,AAPL", START, END, every=5, compare_memory=True)
    result = run_backtest(spec, {"max_concurrent_llm_calls": 4})
    metrics = json.loads((result.folder / "metrics.json").read_text())
    for ticker in ("NVDA", "AAPL"):
        assert {TEAM, TEAM_NO_MEMORY, *STRATEGIES} <= set(metrics[ticker])
        assert metrics[ticker][TEAM_NO_MEMORY]["decisions"] == 4
    desk = TradingMemoryLog({}).load_entries()
    apart = TradingMemoryLog({"memory_log_path": str(result.folder / "no_memory" / "memory" / "trading_memory.md")})
    assert len(desk) == 8 and len(apart.load_entries()) == 8  # 4 steps × 2 tickers each, never mixed
    assert (result.folder / "no_memory" / "results" / "AAPL").is_dir()
    ablation_runs = list((result.folder / "no_memory" / "results").glob("*/*/state.json"))
    assert len(ablation_runs) == 8
    meta = json.loads(ablation_runs[0].read_text())["meta"]["config"]
    assert meta["memory_enabled"] is False
    assert len(_read_csv(result.folder / "decisions_no_memory.csv")) == 8


def test_cli_prints_the_folder_last_and_exit_codes(ta_home, capsys):
    code = cli_main(["NVDA", "--start", START, "--end", "2024-06-07", "--every", "2", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    last = out.strip().splitlines()[-1]
    assert last.startswith("Backtest: ") and Path(last.removeprefix("Backtest: ")).is_dir()
    assert "Buy & Hold" in out and "TradingAgents" in out
    assert cli_main(["NVDA", "--start", "2024-13-01", "--end", "2024-06-07"]) == 2
    assert "Bad input" in capsys.readouterr().err
    assert cli_main(["NVDA", "--start", START]) == 2  # --end missing: usage error
    assert cli_main(["--help"]) == 0


def test_parallel_tickers_share_the_model_call_bound(ta_home, monkeypatch):
    bounds: list[tuple[str, int]] = []
    real = TradingAgentsGraph.__init__

    def spy(self, *args, config=None, **kwargs):
        real(self, *args, config=config, **kwargs)
        bounds.append((self.config["results_dir"], int(self.config["max_concurrent_llm_calls"])))

    monkeypatch.setattr(TradingAgentsGraph, "__init__", spy)
    spec = BacktestSpec.make("NVDA,AAPL", START, "2024-06-05", compare_memory=True)
    bt = Backtest(spec, {"max_concurrent_llm_calls": 4})
    bt.run()
    assert len(bounds) == 4 and {b for _, b in bounds} == {1}  # 4 tasks at once × 1 call each ≤ 4
    bounds.clear()
    Backtest(BacktestSpec.make("NVDA", START, "2024-06-05", every=2), {"max_concurrent_llm_calls": 4}).run()
    assert [b for _, b in bounds] == [4]  # one task alone keeps the whole bound


def test_add_parser_wires_the_subcommand_into_a_main_parser(ta_home, capsys):
    import argparse

    from tradingagents.backtest.cli import add_parser

    parser = argparse.ArgumentParser(prog="python -m tradingagents")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["backtest", "AAPL", "--start", START, "--end", "2024-06-05", "--allow-short",
                              "--cost-bps", "5", "-q"])
    assert args.command == "backtest" and args.allow_short and args.cost_bps == 5.0
    assert args.func(args) == 0
    folder = Path(capsys.readouterr().out.strip().splitlines()[-1].removeprefix("Backtest: "))
    assert json.loads((folder / "manifest.json").read_text())["args"]["spec"]["cost_bps"] == 5.0


def test_on_a_desk_database_a_saved_but_unrecorded_step_is_taken_from_the_database(pg_url, tmp_path,
                                                                                   propagate_calls):
    """With storage_url the runs are saved in PostgreSQL: a step killed between saving and recording
    is taken from its saved run there, not run again (the reuse looked in the home's files only)."""
    url = pg_url
    calls = propagate_calls
    cfg = {"home": str(tmp_path / "home"), "storage_url": url, "selected_analysts": ["market"]}
    spec = BacktestSpec.make("NVDA", START, "2024-06-07", every=2)
    result = run_backtest(spec, cfg)
    assert not list((tmp_path / "home").glob("results/**/state.json"))  # saved in the database
    manifest = json.loads((result.folder / "manifest.json").read_text())
    last = max(manifest["steps"][TEAM]["NVDA"])
    del manifest["steps"][TEAM]["NVDA"][last]
    (result.folder / "manifest.json").write_text(json.dumps(manifest))
    calls.clear()
    run_backtest(spec, cfg)
    assert calls == []
    assert json.loads((result.folder / "manifest.json").read_text())["steps"][TEAM]["NVDA"][last]["reused"] is True
