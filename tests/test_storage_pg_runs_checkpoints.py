"""Run records, checkpoints and the storage factory against a real PostgreSQL server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests import pg_server as _pg
from tests.pg_helpers import build_graph
from tests.pg_server import _free_port
from tradingagents import storage
from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.config import resolve_config
from tradingagents.errors import CheckpointError, ConfigError, RunAlreadyActive
from tradingagents.graph.checkpointer import TickerCheckpointer, run_signature, thread_id
from tradingagents.storage import (
    ENV_VAR,
    StorageError,
    checkpoint_step,
    clear_checkpoint,
    describe,
    has_checkpoint,
    list_checkpoints,
    open_checkpointer,
    open_memory_log,
    open_role_memory,
    open_run_records,
    run_lock,
    storage_url,
)
from tradingagents.storage.files_runs import render_report_markdown
from tradingagents.storage.pg_checkpoint import PgTickerCheckpointer
from tradingagents.storage.runs import FileRunRecords, PgRunRecords

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures
ROOT = Path(__file__).resolve().parents[1]
SECRET = "s3cr3t-pw"


def _with_password(url: str) -> str:
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{SECRET}@")


def _state(ticker="NVDA", date="2024-05-10", decision="**Rating**: Buy\nGo long."):
    return {"company_of_interest": ticker, "trade_date": date, "final_trade_decision": decision,
            "market_report": "Trend up.\x00", "investment_debate_state": {"history": "Bull: yes\nBear: no"}}


# ---------------------------------------------------------------- the factory
def test_factory_picks_files_without_a_url_and_the_database_with_one(pg_url, monkeypatch):
    assert storage_url({}) is None and describe({}) == "files under the home folder"
    assert isinstance(open_memory_log({}), TradingMemoryLog)
    assert isinstance(open_role_memory("bull_memory", {}), FinancialSituationMemory)
    assert isinstance(open_run_records({}), FileRunRecords)
    with open_checkpointer({}, "NVDA") as saver:
        assert isinstance(saver, TickerCheckpointer)
    monkeypatch.setenv(ENV_VAR, pg_url)
    assert storage_url({}) == pg_url
    assert type(open_memory_log({})).__name__ == "PgMemoryLog"
    assert type(open_role_memory("bull_memory", {})).__name__ == "PgRoleMemory"
    assert isinstance(open_run_records({}), PgRunRecords)
    with open_checkpointer({}, "NVDA") as saver:
        assert isinstance(saver, PgTickerCheckpointer)
    assert storage_url({"storage_url": ""}) is None  # the config's empty value forces files
    # and so it does once resolved: the settings keep "" (files, forced) apart from None (unset: the variable)
    forced = resolve_config({"storage_url": " "})
    assert forced["storage_url"] == "" and storage_url(forced) is None
    assert type(open_memory_log(forced)).__name__ != "PgMemoryLog"
    assert storage_url(resolve_config({})) == pg_url


@pytest.mark.parametrize("bad", ["sqlite:///x.db", "postgresql://host", "postgresql://h:99999/db", "just text"])
def test_a_bad_url_is_a_config_error_naming_where_it_came_from(bad, monkeypatch):
    with pytest.raises(ConfigError, match="storage_url"):
        storage_url({"storage_url": bad})
    monkeypatch.setenv(ENV_VAR, bad)
    with pytest.raises(ConfigError, match=ENV_VAR):
        open_memory_log({})


def test_an_unreachable_server_fails_fast_and_never_shows_the_password():
    url = f"postgresql://desk:{SECRET}@127.0.0.1:{_free_port()}/desk"
    with pytest.raises(StorageError) as err:
        open_memory_log({"storage_url": url})
    assert SECRET not in str(err.value) and "postgresql://desk@127.0.0.1" in str(err.value)
    with pytest.raises(CheckpointError) as err:
        open_checkpointer({"storage_url": url}, "NVDA")
    assert SECRET not in str(err.value)


# ---------------------------------------------------------------- run records
def test_run_records_round_trip_overwrite_and_list_newest_first(pg_url):
    url = _with_password(pg_url)
    records = open_run_records({"storage_url": url})
    where = records.save_run(_state(), "Buy", {"analysts": ["market"], "usage": {"llm_calls": 3}})
    assert where.endswith("#ta_runs/NVDA/2024-05-10") and SECRET not in where
    records.save_run(_state("AAPL"), "Hold")
    records.save_run(_state(decision="**Rating**: Sell"), "Sell")  # same run again: replaces it
    runs = records.list_runs()
    assert [(r["ticker"], r["rating"]) for r in runs] == [("NVDA", "Sell"), ("AAPL", "Hold")]
    assert runs[0]["llm_provider"] == "offline" and runs[0]["date"] == "2024-05-10"
    loaded = records.load_run("nvda", "2024-05-10")
    assert loaded["rating"] == "Sell" and loaded["state"]["final_trade_decision"] == "**Rating**: Sell"
    assert loaded["state"]["market_report"] == "Trend up.\x00"  # JSON keeps even a NUL
    assert loaded["meta"]["config"]["storage_url"] == pg_url  # the URL without its password
    assert records.load_report("NVDA", "2024-05-10") == render_report_markdown(
        _state(decision="**Rating**: Sell"), "Sell", loaded["meta"]).replace("\x00", "\ufffd")
    with pytest.raises(FileNotFoundError, match="No saved run for MSFT"):
        records.load_run("MSFT", "2024-05-10")
    with psycopg.connect(pg_url) as conn:
        dump = "".join(str(row) for row in conn.execute("SELECT * FROM ta_runs").fetchall())
    assert SECRET not in dump and SECRET not in repr(records) and SECRET not in describe({"storage_url": url})


def test_file_and_database_records_hold_the_same_run(pg_url, ta_home):
    files, db = open_run_records({}), open_run_records({"storage_url": pg_url})
    meta = {"analysts": ["market", "news"], "elapsed_s": 1.5}
    folder = storage.save_run({}, _state(), "Buy", meta)  # files_runs' signature, either storage
    assert folder == ta_home / "results" / "NVDA" / "2024-05-10" and (folder / "state.json").is_file()
    assert storage.save_run({"storage_url": pg_url}, _state(), "Buy", meta).endswith("#ta_runs/NVDA/2024-05-10")
    assert [r["ticker"] for r in storage.list_runs({})] == [r["ticker"] for r in storage.list_runs(
        {"storage_url": pg_url})] == ["NVDA"]
    assert storage.load_run({}, "NVDA", "2024-05-10") == files.load_run("NVDA", "2024-05-10")
    a, b = files.load_run("NVDA", "2024-05-10"), db.load_run("NVDA", "2024-05-10")
    assert a["state"] == b["state"] and a["rating"] == b["rating"]
    assert {k: v for k, v in a["meta"].items() if k != "config"} == {k: v for k, v in b["meta"].items() if k != "config"}
    assert files.load_report("NVDA", "2024-05-10") == db.load_report("NVDA", "2024-05-10").replace("\ufffd", "\x00")


@pytest.mark.parametrize("desk", [False, True], ids=["files", "postgres"])
def test_every_listed_run_says_who_ran_it_and_history_shows_it(desk, pg_url, ta_home):
    """History's "By" column was always "—": the listing carried no ``by`` (issue 39)."""
    from studio import compare
    from tradingagents.i18n import translator

    config = {"storage_url": pg_url} if desk else {}
    storage.save_run(config, _state(), "Buy", {"by": "ann@desk.example"})
    storage.save_run(config, _state(), "Hold", {"by": "bob@desk.example"})  # a re-analysis: Ann's is kept as #1
    storage.save_run(config, _state("AAPL"), "Sell", {"by": "carl", "invented": True})
    runs = storage.list_runs(config, include_previous=True)
    by = {(r["ticker"], r["version"]): r["by"] for r in runs}
    assert by == {("NVDA", None): "bob@desk.example", ("NVDA", 1): "ann@desk.example", ("AAPL", None): "carl"}
    assert [r["invented"] for r in runs if r["ticker"] == "AAPL"] == [True]
    shown = [row.as_display(t=translator("en"))["By"] for row in compare.history_rows(runs, {})]
    assert sorted(shown) == ["ann@desk.example", "bob@desk.example", "carl"]


# ---------------------------------------------------------------- checkpoints
def test_a_run_killed_mid_graph_resumes_on_another_machine_from_its_postgres_checkpoint(pg_url, tmp_path):
    ticker, date = "NVDA", "2024-05-10"
    tid = thread_id(ticker, date, run_signature(["market"], 1, 1))
    marker = tmp_path / "first-node-ran"
    env = {**os.environ, "TRADINGAGENTS_HOME": str(tmp_path / "machine_a"), ENV_VAR: _with_password(pg_url),
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "pg_helpers.py"), "checkpoint", ticker, date, tid,
                           str(marker)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr[-2000:]
    assert marker.read_text() == "first\n"

    cfg = {"storage_url": pg_url}  # this process: another home, the same database
    assert has_checkpoint(cfg, ticker, tid) and checkpoint_step(cfg, ticker, tid) == 1
    (listed,) = list_checkpoints(cfg)
    assert (listed["ticker"], listed["thread_id"], listed["date"], listed["step"]) == (ticker, tid, date, 1)
    with open_checkpointer(cfg, ticker) as saver:
        app = build_graph(str(marker), die_in_second=False).compile(checkpointer=saver)
        final = app.invoke(None, {"configurable": {"thread_id": tid}}, durability="sync")
    assert final["steps"] == ["first", "second"]
    assert marker.read_text() == "first\n"  # the finished node did not run again
    assert checkpoint_step(cfg, ticker, tid) == 2
    clear_checkpoint(cfg, ticker, tid)
    assert not has_checkpoint(cfg, ticker, tid) and checkpoint_step(cfg, ticker, tid) is None
    clear_checkpoint(cfg, ticker, tid)  # no-op when there is none


def test_checkpoint_threads_of_two_tickers_stay_apart(pg_url, tmp_path):
    cfg = {"storage_url": pg_url}
    tids = {t: thread_id(t, "2024-05-10", run_signature(["market"], 1, 1)) for t in ("NVDA", "AAPL")}
    for t, tid in tids.items():
        with open_checkpointer(cfg, t) as saver:
            app = build_graph(str(tmp_path / t), die_in_second=False).compile(checkpointer=saver)
            app.invoke({"company_of_interest": t, "trade_date": "2024-05-10", "steps": []},
                       {"configurable": {"thread_id": tid}}, durability="sync")
    clear_checkpoint(cfg, "NVDA", tids["NVDA"])
    assert not has_checkpoint(cfg, "NVDA", tids["NVDA"]) and has_checkpoint(cfg, "AAPL", tids["AAPL"])
    assert [c["ticker"] for c in list_checkpoints(cfg)] == ["AAPL"]


# ---------------------------------------------------------------- one run of a thread at a time
@pytest.mark.parametrize("in_db", [False, True], ids=["files", "database"])
def test_run_lock_refuses_a_second_run_and_frees_with_a_killed_holder(in_db, pg_url, tmp_path, ta_home):
    cfg = {"storage_url": pg_url} if in_db else {}
    tid = thread_id("NVDA", "2024-05-10", run_signature(["market"], 1, 1))
    with run_lock(cfg, "NVDA", tid):
        with pytest.raises(RunAlreadyActive, match="already running"):
            with run_lock(cfg, "nvda", tid):
                pass
        with run_lock(cfg, "AAPL", tid):  # another ticker's run is independent
            pass
    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "PYTHONPATH": str(ROOT)}
    if in_db:
        env[ENV_VAR] = pg_url
    child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "pg_helpers.py"), "lock", "NVDA", tid], env=env,
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "locked", child.stderr.read()[-2000:]
        with pytest.raises(RunAlreadyActive):
            with run_lock(cfg, "NVDA", tid):
                pass
    finally:
        child.kill()
        child.communicate(timeout=300)
    deadline = time.monotonic() + 300  # only catches a hang
    while True:  # the server notices the dropped connection within moments
        try:
            with run_lock(cfg, "NVDA", tid):
                break
        except RunAlreadyActive:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_a_short_password_is_starred_only_where_it_stands_alone():
    from tradingagents.storage.pg import scrub

    url = "postgresql://desk:p@127.0.0.1:9/desk"
    said = scrub(f'connection to server at "127.0.0.1", port 9 failed; password p rejected for {url}', url)
    assert "port 9 failed" in said  # the "p" of "port" is not starred (that would spell the password out)
    assert "password *** rejected" in said and "desk:p@" not in said and "postgresql://desk@127.0.0.1:9/desk" in said


@pytest.mark.parametrize("desk", [False, True], ids=["files", "postgres"])
def test_every_listed_run_carries_its_own_models_and_cost_and_history_shows_them(desk, pg_url, ta_home):
    """History read every run's whole file for its models and cost (2.6 s at 2,000 runs), and gave an
    earlier version the current run's; the listing carries them now, each version its own."""
    from studio import compare
    from tradingagents.i18n import translator

    config = {"storage_url": pg_url} if desk else {}
    models = {"llm_provider": "openai", "quick_think_llm": "gpt-4o-mini"}
    storage.save_run(config, _state(), "Buy", {**models, "deep_think_llm": "gpt-4o", "usage": {"cost_usd": 0.0123}})
    storage.save_run(config, _state(), "Hold", {**models, "deep_think_llm": "o3", "usage": {"cost_usd": None}})
    storage.save_run(config, _state("AAPL"), "Sell", {"llm_provider": "openai", "cost_usd": 0.5})  # an old meta
    runs = {(r["ticker"], r["version"]): r for r in storage.list_runs(config, include_previous=True)}
    assert {k: (r["quick_think_llm"], r["deep_think_llm"], r["cost_usd"]) for k, r in runs.items()} == {
        ("NVDA", 1): ("gpt-4o-mini", "gpt-4o", 0.0123), ("NVDA", None): ("gpt-4o-mini", "o3", None),
        ("AAPL", None): (None, None, 0.5)}
    shown = {(row.ticker, row.version): row.as_display(t=translator("en"))
             for row in compare.history_rows(runs.values())}
    assert shown[("NVDA", 1)]["LLM"].endswith("gpt-4o-mini / gpt-4o") and shown[("NVDA", 1)]["Cost"] == "$0.0123"
    assert shown[("NVDA", None)]["LLM"].endswith("gpt-4o-mini / o3") and shown[("NVDA", None)]["Cost"] == "—"
    assert shown[("AAPL", None)]["Cost"] == "$0.5000"


def test_runs_saved_before_the_listing_column_are_listed_from_their_documents_then_given_it(pg_url, ta_home):
    config = {"storage_url": pg_url}
    models = {"llm_provider": "openai", "quick_think_llm": "gpt-4o-mini", "deep_think_llm": "gpt-4o"}
    storage.save_run(config, _state(), "Buy", {**models, "by": "ann", "usage": {"cost_usd": 0.01}})
    storage.save_run(config, _state(), "Hold", {**models, "by": "bob", "invented": True, "blind": True})
    used = {"past_decisions": [], "lessons": {"bull_memory": [{"id": "l1"}]}}
    storage.save_run(config, _state("AAPL"), "Sell", {"llm_provider": "offline", "cost_usd": 0.5, "memory_used": used})
    listed = storage.list_runs(config, include_previous=True)
    assert storage.list_memory_used(config) == [{"ticker": "AAPL", "date": "2024-05-10", "memory_used": used}]
    with psycopg.connect(pg_url) as conn:  # as an earlier version of the app saved them: no listing columns
        conn.execute("UPDATE ta_runs SET listing = NULL, memory_used = NULL")
        conn.execute("UPDATE ta_run_versions SET listing = NULL")
    assert storage.list_memory_used(config) == [{"ticker": "AAPL", "date": "2024-05-10", "memory_used": used}]
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT ticker, memory_used FROM ta_runs ORDER BY 1").fetchall() == [
            ("AAPL", used), ("NVDA", None)]
        conn.execute("UPDATE ta_runs SET listing = NULL, memory_used = NULL")
    assert storage.list_runs(config) == [r for r in listed if r["version"] is None]
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM ta_runs WHERE listing IS NULL").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM ta_run_versions WHERE listing IS NULL").fetchone() == (1,)
    assert storage.list_runs(config, include_previous=True) == listed
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM ta_run_versions WHERE listing IS NULL").fetchone() == (0,)
    assert storage.list_runs(config, include_previous=True) == listed
    storage.update_run_meta(config, "AAPL", "2024-05-10", {"by": "carl"})  # a meta changed: its listing too
    assert {r["ticker"]: r["by"] for r in storage.list_runs(config)} == {"NVDA": "bob", "AAPL": "carl"}


def test_a_nul_in_the_meta_is_saved_and_listed_as_the_replacement_character(pg_url, ta_home):
    """The document is text and keeps a NUL as its JSON escape; the listing columns are jsonb, which refuses
    that escape: a NUL there is U+FFFD, as the listing read it from the document before."""
    config = {"storage_url": pg_url}
    used = {"past_decisions": [{"ticker": "NVDA", "text": "cut\x00short"}], "lessons": {"bull\x00": [{"id": "l\x00"}]}}
    storage.save_run(config, _state(), "Buy", {"by": "ann\x00", "quick_think_llm": "m\x00", "memory_used": used})
    storage.update_run_meta(config, "NVDA", "2024-05-10", {"deep_think_llm": "d\x00"})
    [row] = storage.list_runs(config)
    assert (row["by"], row["quick_think_llm"], row["deep_think_llm"]) == ("ann\ufffd", "m\ufffd", "d\ufffd")
    [got] = storage.list_memory_used(config)
    assert got["memory_used"] == {"past_decisions": [{"ticker": "NVDA", "text": "cut\ufffdshort"}],
                                  "lessons": {"bull\ufffd": [{"id": "l\ufffd"}]}}
    assert storage.load_run(config, "NVDA", "2024-05-10")["meta"]["by"] == "ann\x00"  # the document keeps it
