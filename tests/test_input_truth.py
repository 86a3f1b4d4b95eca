"""Input truth (issue 23): no confident decision on a typo, a weekend twice, a half-read CSV or a lost database."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests import pg_server as _pg
from tradingagents.cli import main
from tradingagents.errors import EXIT_STORAGE, BadCSVError, StorageError, UnknownInstrumentError

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures
ROOT = Path(__file__).resolve().parents[1]
DATE = "2024-05-10"  # a Friday
SATURDAY = "2024-05-11"
SECRET = "s3cr3t-pw"


def cli(home: Path, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_") and not k.endswith("_API_KEY")}
    full = {**base, "TRADINGAGENTS_HOME": str(home), "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "tradingagents", *argv], cwd=ROOT, env=full, capture_output=True,
                          text=True, timeout=300)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _log_heads(home: Path) -> list[str]:
    path = home / "memory" / "trading_memory.md"
    return [line for line in path.read_text().splitlines() if line.startswith("[")] if path.exists() else []


# ---------------------------------------------------------------- 1. known instruments only, unless asked
def test_a_ticker_typo_is_refused_with_the_closest_known_ticker_and_leaves_nothing(tmp_path):
    home = tmp_path / "home"
    proc = cli(home, "NVDAA", DATE, "--quiet")
    assert proc.returncode == 2, proc.stderr
    assert "did you mean NVDA?" in proc.stderr and "--allow-synthetic" in proc.stderr
    assert proc.stdout == "" and not (home / "results").exists() and _log_heads(home) == []


def test_allow_synthetic_analyses_an_invented_instrument_labelled_everywhere_and_kept_out_of_lessons(tmp_path):
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    home = tmp_path / "home"
    proc = cli(home, "ZZQX", DATE, "--quiet", "--analysts", "market", "--allow-synthetic")
    assert proc.returncode == 0, proc.stderr
    assert "Invented instrument: ZZQX" in proc.stdout
    doc = json.loads((home / "results" / "ZZQX" / DATE / "state.json").read_text())
    assert doc["meta"]["invented"] is True
    assert "**Invented instrument**" in (home / "results" / "ZZQX" / DATE / "report.md").read_text()
    assert '"invented": true' in (home / "memory" / "trading_memory.md").read_text()
    log = cli(home, "log")
    assert "ZZQX" in log.stdout and "invented instrument" in log.stdout
    # settled later: no lesson enters the shared role memories, and NVDA's past context never cites it
    os.environ["TRADINGAGENTS_HOME"] = str(home)
    graph = TradingAgentsGraph(["market"])
    settled = graph.settle_pending("ZZQX")
    assert [s["ticker"] for s in settled] == ["ZZQX"]
    assert all(m.count() == 0 for m in graph.memories.values())
    text, _ = graph.memory_log.get_past_memory("NVDA", as_of="2024-06-28")
    assert "ZZQX" not in text


def test_suggestions_for_typos_and_a_subcommand_typo_suggests_the_subcommand(tmp_path, capsys):
    from tradingagents.dataflows.demo_identities import suggest

    assert suggest("NVDAA")[0] == "NVDA" and "MSFT" in suggest("MSTF")
    for typo, meant in (("bach", "batch"), ("stettle", "settle"), ("lgo", "log")):
        assert main([typo, DATE]) == 2
        assert f"did you mean '{meant}'" in capsys.readouterr().err
    with pytest.raises(UnknownInstrumentError) as err:
        from tradingagents.dataflows.interface import check_instrument

        check_instrument({"data_vendor": "demo"}, "SAP.DE")
    assert err.value.exit_code == 2


def test_the_run_page_refuses_an_unlisted_ticker_unless_the_box_is_ticked(tmp_path):
    from studio.jobs import JobRegistry
    from tradingagents.validation import ValidationError

    registry = JobRegistry()
    with pytest.raises(ValidationError, match="did you mean NVDA"):
        registry.start_run("NVDAA", DATE, ["market"], {"home": str(tmp_path)}, owner="me")
    job_id = registry.start_run("ZZQX", DATE, ["market"], {"home": str(tmp_path), "allow_synthetic": True},
                                owner="me")
    job = registry.get(job_id, "run")
    job.wait(300)
    assert job.status == "finished", job.result
    assert job.result["record"]["meta"]["invented"] is True


def test_a_missing_csv_file_suggests_a_close_one(tmp_path):
    from tradingagents.dataflows.csv_provider import CSVProvider
    from tradingagents.errors import DataNotFound

    (tmp_path / "NVDA.csv").write_text("Date,Open,High,Low,Close,Volume\n2024-05-10,1,1,1,1,1\n")
    with pytest.raises(DataNotFound, match="did you mean NVDA"):
        CSVProvider(tmp_path).ohlcv("NVDAA", "2024-05-01", DATE)


# ---------------------------------------------------------------- 2. one session, one decision
def test_a_weekend_date_is_its_session_everywhere_and_a_second_run_is_a_reanalysis(tmp_path):
    home = tmp_path / "home"
    first = cli(home, "NVDA", SATURDAY, "--quiet", "--analysts", "market")
    assert first.returncode == 0, first.stderr
    assert f"Session: no session on {SATURDAY} (Saturday); using {DATE}" in first.stdout
    assert f"results/NVDA/{DATE}/report.md" in first.stdout
    second = cli(home, "NVDA", DATE, "--quiet", "--analysts", "market")
    assert second.returncode == 0, second.stderr
    assert "Re-analysis:" in second.stdout
    assert sorted(p.name for p in (home / "results" / "NVDA").iterdir()) == [DATE]
    assert len([h for h in _log_heads(home) if "| NVDA |" in h]) == 1  # one session, one decision
    assert f"[{DATE} | NVDA |" in _log_heads(home)[0]


def test_batch_on_a_sunday_says_the_session(tmp_path):
    home = tmp_path / "home"
    proc = cli(home, "batch", "NVDA,AAPL", "2024-05-12", "--analysts", "market")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(f"session {DATE} (no session on 2024-05-12 (Sunday)") == 2, proc.stdout
    assert (home / "results" / "AAPL" / DATE / "state.json").is_file()


# ---------------------------------------------------------------- 3. a re-analysis keeps history
def _state(decision: str, ticker="NVDA", date=DATE) -> dict:
    return {"company_of_interest": ticker, "trade_date": date, "final_trade_decision": decision}


def test_files_keep_the_earlier_run_as_a_previous_version(tmp_path):
    from tradingagents import storage

    cfg = {"home": str(tmp_path)}
    storage.save_run(cfg, _state("**Rating**: Hold"), "Hold")
    storage.save_run(cfg, _state("**Rating**: Overweight"), "Overweight")
    assert [r["rating"] for r in storage.list_runs(cfg)] == ["Overweight"]  # the current runs only
    both = storage.list_runs(cfg, include_previous=True)
    assert [(r["rating"], r["version"], r["previous"]) for r in both] == [("Overweight", None, False),
                                                                          ("Hold", 1, True)]
    assert storage.load_run(cfg, "NVDA", DATE, version=1)["rating"] == "Hold"
    assert storage.load_run(cfg, "NVDA", DATE)["rating"] == "Overweight"
    with pytest.raises(FileNotFoundError, match="earlier version 2"):
        storage.load_run(cfg, "NVDA", DATE, version=2)


def test_the_log_report_and_state_agree_after_a_reanalysis(tmp_path, monkeypatch):
    from tradingagents.graph.trading_graph import TradingAgentsGraph
    from tradingagents.storage import list_runs, load_run

    monkeypatch.setenv("TRADINGAGENTS_HOME", str(tmp_path))
    day = (pd.Timestamp.today().normalize() - pd.offsets.BDay(1)).date().isoformat()  # its window is still open
    graph = TradingAgentsGraph(["market"])
    _, first = graph.propagate("NVDA", day)
    graph2 = TradingAgentsGraph(["market", "news"])
    _, second = graph2.propagate("NVDA", day)
    saved = load_run({}, "NVDA", day)
    pending = [e for e in graph2.memory_log.get_pending_entries("NVDA") if e["date"] == day]
    assert saved["rating"] == second and [e["rating"] for e in pending] == [second]  # the newest decision
    assert f"**{second}**" in (tmp_path / "results" / "NVDA" / day / "report.md").read_text()
    assert saved["meta"]["version_note"] and first in saved["meta"]["version_note"]
    assert len(list_runs({}, include_previous=True)) == 2


def test_pg_runs_keep_previous_versions(pg_url):
    from tradingagents.storage.runs import PgRunRecords

    records = PgRunRecords({"storage_url": pg_url})
    records.save_run(_state("**Rating**: Hold"), "Hold")
    records.save_run(_state("**Rating**: Buy"), "Buy")
    records.save_run(_state("**Rating**: Sell"), "Sell")
    assert [r["rating"] for r in records.list_runs()] == ["Sell"]
    rows = records.list_runs(include_previous=True)
    assert [(r["rating"], r["version"]) for r in rows] == [("Sell", None), ("Buy", 2), ("Hold", 1)]
    assert records.load_run("NVDA", DATE, 1)["rating"] == "Hold"
    assert records.load_run("NVDA", DATE)["rating"] == "Sell"


# ---------------------------------------------------------------- 4. CSV honesty
def _csv(folder: Path, ticker: str, rows: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{ticker}.csv").write_text("\n".join(["Date,Open,High,Low,Close,Volume", *rows]) + "\n")


def _daily(n: int, end: str = DATE, freq: str = "B") -> list[str]:
    days = pd.date_range(end=end, periods=n, freq=freq)
    return [f"{d.date()},{100 + i},{101 + i},{99 + i},{100 + i},1000" for i, d in enumerate(days)]


def test_a_csv_with_unreadable_rows_is_refused_with_line_numbers_or_skipped_on_request(tmp_path):
    data = tmp_path / "data"
    rows = _daily(260)
    rows[100] = rows[100].replace(",1000", ",abc").replace(",200,", ",N/A,")  # line 102
    rows[150] = rows[150].split(",")[0] + ",1,2,0.5,N/A,10"  # line 152: no Close
    rows[200] = "garbage"  # line 202
    _csv(data, "NVDA", rows)
    home = tmp_path / "home"
    env = {"TRADINGAGENTS_CSV_DATA_DIR": str(data), "TRADINGAGENTS_DATA_VENDOR": "csv"}
    proc = cli(home, "NVDA", DATE, "--quiet", "--analysts", "market", env=env)
    assert proc.returncode == 3, proc.stderr
    assert ("NVDA.csv has 3 rows that do not parse: the Date is not YYYY-MM-DD (line 202); the Close is missing, "
            "not a finite number or not positive (line 102, 152). Fix them") in proc.stderr
    assert "--csv-skip-bad-rows to drop them." in proc.stderr and not (home / "results").exists()
    assert "dropped" not in proc.stderr  # refused: nothing was dropped
    ok = cli(home, "NVDA", DATE, "--quiet", "--analysts", "market", "--csv-skip-bad-rows", env=env)
    assert ok.returncode == 0, ok.stderr
    assert "Data: NVDA.csv: 3 rows that do not parse were dropped (line 102, 152, 202)" in ok.stdout


def test_a_refused_csv_is_said_once_in_the_singular_for_one_row(tmp_path):
    data = tmp_path / "data"
    rows = _daily(260)
    rows[150] = rows[150].split(",")[0] + ",1,2,0.5,N/A,10"  # line 152: no Close
    _csv(data, "NVDA", rows)
    env = {"TRADINGAGENTS_CSV_DATA_DIR": str(data), "TRADINGAGENTS_DATA_VENDOR": "csv"}
    proc = cli(tmp_path / "home", "NVDA", DATE, "--analysts", "market", env=env)  # with the progress lines
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.count("does not parse") == 1 and "1 rows" not in proc.stderr and ".." not in proc.stderr
    assert ("NVDA.csv has 1 row that does not parse: the Close is missing, not a finite number or not positive "
            "(line 152). Fix it (the header is Date,Open,High,Low,Close,Volume), or pass --csv-skip-bad-rows to "
            "drop it.") in proc.stderr


def test_weekly_bars_are_refused_and_a_short_history_is_said_first(tmp_path):
    from tradingagents.dataflows.csv_provider import CSVProvider

    _csv(tmp_path, "WEEK", _daily(120, freq="W-FRI"))
    with pytest.raises(BadCSVError, match="weekly bars"):
        CSVProvider(tmp_path).input_check("WEEK", DATE)
    _csv(tmp_path, "SHORT", _daily(30))
    notes = CSVProvider(tmp_path).input_check("SHORT", DATE)
    assert notes and "only 30 row(s)" in notes[0] and "200" in notes[0]
    from tradingagents.storage.files_runs import render_report_markdown

    report = render_report_markdown(_state("**Rating**: Hold", "SHORT"), "Hold", {"data_notes": notes})
    assert report.splitlines()[2].startswith("- **Data**: SHORT.csv has only 30 row(s)")


def test_the_readme_documents_the_csv_format_and_every_exit_code():
    readme = (ROOT / "README.md").read_text()
    assert "Date,Open,High,Low,Close,Volume" in readme and "--csv-skip-bad-rows" in readme
    for code in range(8):
        assert f"| {code} |" in readme


# ---------------------------------------------------------------- 5. storage failures are not bugs
def test_an_unreachable_desk_is_its_own_exit_code_in_one_line_without_the_password(tmp_path):
    url = f"postgresql://desk:{SECRET}@127.0.0.1:{_closed_port()}/desk"
    home = tmp_path / "home"
    for argv in (["log"], ["settle"], ["NVDA", DATE, "--quiet"], ["batch", "NVDA,AAPL", DATE]):
        proc = cli(home, *argv, env={"TRADINGAGENTS_STORAGE_URL": url})
        assert proc.returncode == EXIT_STORAGE, (argv, proc.stderr)
        lines = [x for x in proc.stderr.splitlines() if x.startswith("Desk database unavailable")]
        assert len(lines) == 1 and "127.0.0.1" in lines[0] and "Check that PostgreSQL is running" in lines[0]
        assert SECRET not in proc.stderr + proc.stdout and "Traceback" not in proc.stderr
        assert "failed" not in proc.stdout  # a batch stops at once: no ticker is tried


def test_a_batch_stops_at_once_when_the_desk_fails_mid_way(tmp_path, monkeypatch):
    import time

    from tradingagents import batch

    def fake_ticker(task, emit=None, stop=None, guard=None, limiter=None):
        if task["ticker"] == "NVDA":  # the desk goes away during NVDA's run
            out = batch.TickerOutcome(task["ticker"], task["date"], status="failed", exit_code=EXIT_STORAGE,
                                      error="Cannot use the desk database")
        else:  # the others wait for the batch's stop (a hang guard only)
            deadline = time.monotonic() + 120
            while not stop() and time.monotonic() < deadline:
                time.sleep(0.01)
            stopped = stop()
            out = batch.TickerOutcome(task["ticker"], task["date"], status="stopped" if stopped else "done",
                                      exit_code=5 if stopped else 0)
        if emit is not None:
            emit(out.to_dict())
        return out.to_dict()

    monkeypatch.setattr(batch, "run_ticker", fake_ticker)
    outcomes = batch.run_batch(["NVDA", "AAPL", "MSFT"], DATE, {"home": str(tmp_path), "executor": "threads"})
    assert [o.status for o in outcomes] == ["failed", "stopped", "stopped"]
    assert batch.exit_code(outcomes) == EXIT_STORAGE


def test_storage_error_lives_in_the_one_error_module():
    from tradingagents.storage.pg import StorageError as Reexported

    assert Reexported is StorageError and StorageError("x").exit_code == 7


def test_a_desk_run_prints_a_report_one_can_open(tmp_path, pg_url):
    home = tmp_path / "home"
    proc = cli(home, "NVDA", DATE, "--quiet", "--analysts", "market", env={"TRADINGAGENTS_STORAGE_URL": pg_url})
    assert proc.returncode == 0, proc.stderr
    assert f"Report: python -m tradingagents show NVDA {DATE}" in proc.stdout and "postgresql://" not in proc.stdout
    shown = cli(home, "show", "NVDA", SATURDAY, env={"TRADINGAGENTS_STORAGE_URL": pg_url})
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"# NVDA — {DATE}:")


def test_show_of_a_trading_day_without_a_saved_run_says_so_and_never_prints_another_days(tmp_path):
    """``show NVDA 2024-05-14`` (a session, nothing saved) printed the run of an earlier day, exit 0 (issue 39)."""
    home = tmp_path / "home"
    assert cli(home, "NVDA", DATE, "--quiet", "--analysts", "market").returncode == 0
    tuesday = cli(home, "show", "NVDA", "2024-05-14")
    assert tuesday.returncode == 2 and tuesday.stdout == ""
    assert "No saved run of NVDA on 2024-05-14: run 'python -m tradingagents NVDA 2024-05-14' first." in tuesday.stderr
    assert "no session" not in tuesday.stderr
    sunday = cli(home, "show", "NVDA", "2024-05-19")  # its session is Friday the 17th: not saved either
    assert sunday.returncode == 2 and "analysed as its session 2024-05-17" in sunday.stderr
    saturday = cli(home, "show", "NVDA", SATURDAY)  # the 10th's run, with the note saying so
    assert saturday.returncode == 0 and saturday.stdout.startswith(f"# NVDA — {DATE}:")
    assert f"no session on {SATURDAY} (Saturday); using {DATE}" in saturday.stderr


# ---------------------------------------------------------------- 6. the terminal tells the truth
def test_every_command_names_the_offline_engine_and_the_synthetic_market_first(tmp_path):
    home = tmp_path / "home"
    for argv in (["NVDA", DATE, "--quiet", "--analysts", "market"], ["settle"],
                 ["batch", "NVDA", DATE, "--analysts", "market"],
                 ["backtest", "NVDA", "--start", "2024-05-06", "--end", DATE, "--every", "5", "--analysts",
                  "market", "--quiet"]):
        proc = cli(home, *argv)
        assert proc.returncode == 0, (argv, proc.stderr)
        first = proc.stderr.splitlines()[0]
        assert first.startswith("Note: offline engine") and "synthetic demo market" in first, argv


def test_a_backtest_without_its_key_is_refused_before_any_progress_and_leaves_nothing(tmp_path):
    home = tmp_path / "home"
    proc = cli(home, "backtest", "NVDA", "--start", "2024-05-06", "--end", DATE, "--provider", "openai")
    assert proc.returncode == 2, proc.stderr
    assert "OPENAI_API_KEY" in proc.stderr and "[" not in proc.stderr and "Backtest " not in proc.stderr
    assert not (home / "backtests").exists() or not any((home / "backtests").iterdir())


def test_analyst_aliases_are_documented(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "technical = market" in out and "sentiment = social" in out


def test_a_local_model_server_that_is_down_is_reported_before_the_run(tmp_path):
    from tradingagents.errors import LocalServerUnreachable
    from tradingagents.llm_clients.factory import check_local_server

    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(LocalServerUnreachable, match="ollama serve") as err:
        check_local_server({"llm_provider": "ollama", "backend_url": url})
    assert err.value.exit_code == 4 and not err.value.resumable
    check_local_server({"llm_provider": "openai"})  # remote providers are not probed


def test_the_run_page_box_is_off_by_default_and_ticked_shows_the_invented_label_and_session(ta_home):
    import datetime as dt

    from tests.app.apptest_utils import new_app, run_until, start_offline_run, texts

    at = new_app("run")
    assert at.checkbox(key="form_allow_synthetic").value is False
    start_offline_run(at, "NVDAA", dt.date(2024, 5, 11), ["market"])
    assert "did you mean NVDA" in texts(at)
    at.checkbox(key="form_allow_synthetic").check()
    start_offline_run(at, "ZZQX", dt.date(2024, 5, 11), ["market"])
    run_until(at, lambda a: "Invented instrument" in texts(a) and "Session: no session on 2024-05-11" in texts(a))
