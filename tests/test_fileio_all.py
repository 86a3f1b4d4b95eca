"""``fileio.atomic_write_all``: several whole files, each fsynced, their folder fsynced once; and
``save_run`` uses it (state.json + report.md: two file fsyncs, one folder fsync, not two)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tradingagents import fileio


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(fileio.TEMP_SUFFIX))


@pytest.fixture
def fsyncs(monkeypatch):
    """Which paths were fsynced, in order (files by their temp name's target, folders as folders)."""
    seen: list[str] = []
    real = os.fsync

    def spy(fd):
        seen.append(os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else str(fd))
        return real(fd)

    monkeypatch.setattr(fileio.os, "fsync", spy)
    return seen


def test_every_file_is_replaced_whole_each_file_synced_each_folder_once(tmp_path, fsyncs):
    a, b, c = tmp_path / "one" / "a.json", tmp_path / "one" / "b.md", tmp_path / "two" / "c.txt"
    b.parent.mkdir()
    b.write_text("old")
    fileio.atomic_write_all([(a, "ä"), (b, b"new"), (c, "c")])
    assert (a.read_bytes(), b.read_bytes(), c.read_bytes()) == ("ä".encode(), b"new", b"c")
    folders = [p for p in fsyncs if Path(p).is_dir()]
    files = [p for p in fsyncs if not Path(p).is_dir()]
    assert len(files) == 3 and all(Path(p).name.endswith(fileio.TEMP_SUFFIX) for p in files)
    assert sorted(folders) == sorted([str(a.parent), str(c.parent)])  # once each, after the files
    assert fsyncs.index(folders[0]) > max(fsyncs.index(p) for p in files)
    assert _temps(a.parent) == [] and _temps(c.parent) == []


def test_a_failure_half_way_leaves_every_file_whole_old_or_new_and_no_temp(tmp_path, monkeypatch):
    first, second = tmp_path / "state.json", tmp_path / "report.md"
    first.write_text("old state")
    second.write_text("old report")
    real = os.replace

    def refuse_second(src, dst):
        if Path(dst) == second:
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(fileio.os, "replace", refuse_second)
    with pytest.raises(OSError):
        fileio.atomic_write_all([(first, "new state"), (second, "new report")])
    assert first.read_text() == "new state" and second.read_text() == "old report"
    assert _temps(tmp_path) == []


def test_not_durable_skips_every_fsync(tmp_path, fsyncs):
    fileio.atomic_write_all([(tmp_path / "a", b"x"), (tmp_path / "b", b"y")], durable=False)
    assert fsyncs == [] and (tmp_path / "b").read_bytes() == b"y"


def test_save_run_syncs_both_files_and_the_run_folder_once(ta_home, fsyncs):
    from tradingagents.storage.files_runs import REPORT_FILE, STATE_FILE, load_run, save_run

    state = {"company_of_interest": "NVDA", "trade_date": "2024-05-10", "final_trade_decision": "Hold."}
    folder = save_run({}, state, "Hold")
    doc = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    assert doc["rating"] == "Hold" and load_run({}, "NVDA", "2024-05-10")["state"]["final_trade_decision"] == "Hold."
    assert (folder / REPORT_FILE).is_file() and _temps(folder) == []
    files = [p for p in fsyncs if not Path(p).is_dir()]
    assert [Path(p).name.split(".")[1] for p in files] == ["state", "report"]
    assert [p for p in fsyncs if Path(p).is_dir()] == [str(folder)]
