"""Hostile surroundings: credentials in URLs, damaged checkpoints, odd input, bad homes, full disks."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer
from tests.graph_helpers import fail_once_at
from tradingagents import cli
from tradingagents.config import public_config, redact_url
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
PASSWORD = "hunter2-" + "Xq" * 10


def _files_containing(root: Path, secret: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and secret in p.read_bytes()]


# ------------------------------------------------------------------ 12.4 secrets in URLs
def test_redact_url_masks_userinfo_and_secret_query_values():
    assert redact_url("http://user:pw@host:8000/v1") == "http://***@host:8000/v1"
    assert redact_url("https://h/v1?api_key=s3&api-version=2024") == "https://h/v1?api_key=***&api-version=2024"
    assert redact_url("postgresql://app:pw@db:5432/ta") == "postgresql://***@db:5432/ta"
    assert redact_url("no url here") == "no url here"
    cfg = public_config({"backend_url": "http://u:pw@h/v1", "storage_url": "postgresql://u:pw@db/x",
                         "nested": {"url": "http://u:pw@h", "api_key": "sk"}, "openai_api_key": "sk"})
    assert "pw" not in json.dumps(cfg) and "sk" not in json.dumps(cfg)
    assert cfg["backend_url"] == "http://***@h/v1"


def test_credentials_in_the_backend_url_reach_no_file_event_log_or_output(ta_home, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    events = []
    with FakeOpenAIServer() as server:
        url = server.base_url.replace("http://", f"http://admin:{PASSWORD}@")
        cfg = server.llm_config(backend_url=url)
        graph = TradingAgentsGraph(["market"], config=cfg)
        graph.propagate("NVDA", "2024-05-01", on_event=events.append)
        # a failed run keeps its checkpoint (the database is scanned too)
        failing = TradingAgentsGraph(["market"], config=cfg, callbacks=[fail_once_at("Trader")])
        with pytest.raises(RuntimeError):
            failing.propagate("NVDA", "2024-05-20", on_event=events.append)
        assert failing.has_resumable_run("NVDA", "2024-05-20")
        # and the CLI, with the URL as a flag
        code = cli.main(["NVDA", DATE, "--analysts", "market", "--provider", "openai_compatible",
                         "--backend-url", url, "--quick-model", "fake-quick", "--deep-model", "fake-deep"])
        assert code == 0
    out = capsys.readouterr()
    saved = json.loads((ta_home / "results" / "NVDA" / "2024-05-01" / "state.json").read_text())
    assert saved["meta"]["config"]["backend_url"].startswith("http://***@127.0.0.1:")
    files = [p for p in ta_home.rglob("*") if p.is_file()]
    assert any(p.name == "state.json" for p in files) and any(".sqlite" in p.name for p in files)
    assert _files_containing(ta_home, PASSWORD.encode()) == []
    assert PASSWORD not in json.dumps([e.data for e in events], default=str)
    assert PASSWORD not in caplog.text
    assert PASSWORD not in out.out + out.err


# ------------------------------------------------------------------ 12.16 input gaps
@pytest.mark.parametrize("typed, meant", [("ß", "SS"), ("ﬁ", "FI"), ("ＮＶＤＡ", "NVDA"), ("AAPL\u0130", None)])
def test_non_ascii_tickers_are_refused_never_rewritten(typed, meant, capsys, ta_home):
    from tradingagents.validation import InvalidTickerError, validate_ticker

    with pytest.raises(InvalidTickerError, match="plain ASCII") as info:
        validate_ticker(typed)
    if meant:
        assert repr(meant) in str(info.value)
    assert cli.main([typed, DATE]) == cli.EXIT_BAD_INPUT
    assert "plain ASCII" in capsys.readouterr().err
    assert not (ta_home / "results").exists()


def test_results_folders_of_two_tickers_never_collide(tmp_path):
    from tradingagents.graph.checkpointer import checkpoint_path
    from tradingagents.storage.files_runs import run_dir
    from tradingagents.validation import safe_path_component, ticker_from_path_component

    tickers = [".A", "_.A", "A", "..A", "_..A", "BRK-B", "7203.T", "^GSPC", "EURUSD=X"]
    names = [safe_path_component(t) for t in tickers]
    assert len(set(names)) == len(names)
    assert [ticker_from_path_component(n) for n in names] == tickers
    assert all(not n.startswith(".") for n in names)
    # plain tickers keep the folder names they always had
    assert names[tickers.index("BRK-B")] == "BRK-B" and names[tickers.index("_.A")] == "_.A"
    cfg = {"home": str(tmp_path)}
    assert run_dir(cfg, ".A", DATE) != run_dir(cfg, "_.A", DATE)
    assert checkpoint_path(cfg, ".A") != checkpoint_path(cfg, "_.A")


@pytest.mark.parametrize("date", ["1969-12-31", "1900-01-01", "0001-01-01"])
def test_dates_before_1970_are_refused_up_front(date, capsys, ta_home):
    from tradingagents.validation import InvalidDateError, validate_date

    with pytest.raises(InvalidDateError, match="1970-01-01"):
        validate_date(date)
    assert validate_date("1970-01-01") == "1970-01-01"
    # a data range (or a date already stored) may reach further back: price history does
    assert validate_date("1950-06-01", allow_future=True) == "1950-06-01"
    assert cli.main(["NVDA", date]) == cli.EXIT_BAD_INPUT
    assert "1970-01-01" in capsys.readouterr().err


@pytest.mark.parametrize("home", ["/proc/self", "/proc/self/fd/x", "FILE"])
def test_a_home_that_cannot_be_written_exits_2_naming_the_folder(home, capsys, tmp_path):
    if home == "FILE":
        home = str(tmp_path / "a-file")
        Path(home).write_text("not a folder")
    for argv in (["NVDA", DATE, "--home", home], ["settle", "--home", home]):
        assert cli.main(argv) == cli.EXIT_BAD_INPUT
        err = capsys.readouterr().err
        assert home in err and "--home" in err and "writable" in err and "Traceback" not in err


@pytest.fixture
def tiny_disk(tmp_path):
    """A 256 kB tmpfs (root only), else a fake: os.fsync of results and checkpoints says ENOSPC."""
    import subprocess

    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("needs root to mount a tmpfs (the full-disk path is also unit-tested below)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_ends_in_a_clear_message_not_a_traceback(tiny_disk, capsys):
    code = cli.main(["NVDA", DATE, "--home", str(tiny_disk), "--analysts", "market"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    assert "disk is full" in err.lower() and "--home" in err


def test_a_failed_write_names_its_file_and_the_cli_says_what_to_do(monkeypatch, tmp_path, capsys):
    import errno
    import os

    from tradingagents import fileio

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "fsync", full)
    target = tmp_path / "r" / "state.json"
    with pytest.raises(OSError) as info:
        fileio.atomic_write(target, "x")
    assert info.value.filename == str(target) and not list(target.parent.iterdir())  # no half file
    monkeypatch.setattr(fileio.os, "fsync", os.fsync)
    code = cli._explain(info.value)
    err = capsys.readouterr().err
    assert code == 1 and f"The disk is full writing {target}" in err and "Traceback" not in err


def _fill(folder: Path) -> None:
    """Write a file into ``folder`` until its disk says ENOSPC."""
    import errno

    with open(folder / "filler", "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def test_a_disk_that_fills_while_the_checkpoint_database_is_created_leaves_no_half_file(tiny_disk, capsys):
    """Issue 41 (low): a traceback when the disk filled while the checkpoint database was created."""
    from tradingagents.config import resolve_config
    from tradingagents.errors import CheckpointError
    from tradingagents.storage.sqlite_checkpoint import get_checkpointer

    folder = tiny_disk / "checkpoints"
    folder.mkdir()
    _fill(tiny_disk)
    cfg = resolve_config({"home": str(tiny_disk), "checkpoint_dir": str(folder)})
    with pytest.raises(CheckpointError) as info:
        get_checkpointer(cfg, "NVDA")
    text = str(info.value)
    assert "The disk is full" in text and "Free some space" in text and "checkpoint_enabled = false" in text
    assert list(folder.iterdir()) == []  # nothing half-written
    assert cli._explain(info.value) == 1
    err = capsys.readouterr().err
    assert "disk is full" in err.lower() and "Traceback" not in err


def test_sqlite_saying_the_disk_is_full_mid_creation_removes_the_new_file(tmp_path, monkeypatch):
    """The same without a tmpfs: SQLite's own SQLITE_FULL while the new database's tables are made."""
    import sqlite3

    from tradingagents.config import resolve_config
    from tradingagents.errors import CheckpointError
    from tradingagents.storage import sqlite_checkpoint

    def full(self):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(sqlite_checkpoint.SqliteSaver, "setup", full)
    folder = tmp_path / "checkpoints"
    cfg = resolve_config({"home": str(tmp_path), "checkpoint_dir": str(folder)})
    with pytest.raises(CheckpointError, match="The disk is full"):
        sqlite_checkpoint.get_checkpointer(cfg, "NVDA")
    assert list(folder.iterdir()) == []
