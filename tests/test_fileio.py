"""The one atomic write (``tradingagents.fileio``): a failed or killed writer leaves the old file whole.

And it is the only one: nothing else in the engine or the app renames a temp file into place or
writes a whole file another way.
"""

from __future__ import annotations

import ast
import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tradingagents import fileio

ROOT = Path(__file__).resolve().parents[1]


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(fileio.TEMP_SUFFIX))


def test_a_write_replaces_the_file_whole_text_as_utf8_and_makes_the_folder(tmp_path):
    target = tmp_path / "new" / "deeper" / "doc.json"
    fileio.atomic_write(target, "näive → ok")
    assert target.read_bytes() == "näive → ok".encode()
    fileio.atomic_write(target, b"\x00bytes")
    assert target.read_bytes() == b"\x00bytes" and _temps(target.parent) == []
    with fileio.atomic_file(target) as fh:  # a streaming writer (numpy.savez) gets a binary handle
        fh.write(b"part one, ")
        fh.write(b"part two")
    assert target.read_bytes() == b"part one, part two" and _temps(target.parent) == []


def test_a_failed_rename_leaves_the_old_file_whole_and_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    target.write_text("the old file")

    def refuse(src, dst):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fileio.os, "replace", refuse)
    with pytest.raises(OSError) as info:
        fileio.atomic_write(target, "the new file " * 1000)
    assert info.value.filename == str(target)  # the error names the file it was writing
    assert target.read_text() == "the old file" and _temps(tmp_path) == []


def test_a_writer_that_fails_half_way_leaves_the_old_file_whole_and_no_temp_file(tmp_path):
    target = tmp_path / "index.npz"
    target.write_bytes(b"old")
    with pytest.raises(ValueError), fileio.atomic_file(target, durable=False) as fh:
        fh.write(b"half of the new")
        raise ValueError("the writer broke")
    assert target.read_bytes() == b"old" and _temps(tmp_path) == []
    with pytest.raises(KeyboardInterrupt), fileio.atomic_file(target) as fh:  # Ctrl-C mid-way, too
        fh.write(b"half")
        raise KeyboardInterrupt
    assert target.read_bytes() == b"old" and _temps(tmp_path) == []


def test_durable_writes_fsync_the_file_and_the_folder_and_caches_skip_both(tmp_path, monkeypatch):
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(fileio.os, "fsync", lambda fd: (synced.append(fd), real(fd)))
    fileio.atomic_write(tmp_path / "a", b"x")
    assert len(synced) == 2  # the temp file before the rename, the folder after it
    synced.clear()
    fileio.atomic_write(tmp_path / "b", b"x", durable=False)
    assert synced == [] and (tmp_path / "b").read_bytes() == b"x"


_KILLED_WRITER = """
import sys
from tradingagents.fileio import atomic_write
path = sys.argv[1]
print("ready", flush=True)
i = 0
while True:
    i += 1
    atomic_write(path, (b"A" if i % 2 else b"B") * 2_000_000)
"""


def test_a_writer_killed_at_any_moment_leaves_one_whole_file_and_leftovers_are_removable(tmp_path):
    target = tmp_path / "big.bin"
    target.write_bytes(b"O" * 2_000_000)
    for delay in (0.0, 0.05, 0.13, 0.31):
        child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(target)], cwd=ROOT,
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "ready"
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        child.stdout.close()
        data = target.read_bytes()
        assert len(data) == 2_000_000 and len(set(data)) == 1, "a half-written file"
    fileio.remove_leftovers(target)  # what a killed writer left (its temp file), under the writers' lock
    assert _temps(tmp_path) == [] and target.exists()


# ------------------------------------------------------------------ exactly one implementation
SCANNED = ("tradingagents", "studio", "pages", "app.py")
PRIMITIVE = "tradingagents/fileio.py"
ALLOWED = {
    ("tradingagents/storage/sqlite_checkpoint.py", "os.replace"):
        "moves a damaged checkpoint database aside (…corrupt-<stamp>): a rename, not a write",
    ("tradingagents/config/home.py", "tempfile.mkstemp"):
        "check_home's probe that a folder is writable: created and removed at once, no file kept",
}
RENAMES = {("os", "replace"), ("os", "rename"), ("os", "renames"), ("shutil", "move"),
           ("tempfile", "mkstemp"), ("tempfile", "NamedTemporaryFile")}


def _whole_file_writes(path: Path) -> list[tuple[str, int]]:
    """(what, line) of every rename-into-place, temp file or whole-file write in one source file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        owner = fn.value.id if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) else None
        if isinstance(fn, ast.Attribute):
            if (owner, fn.attr) in RENAMES:
                found.append((f"{owner}.{fn.attr}", node.lineno))
            elif fn.attr in ("write_text", "write_bytes"):  # pathlib's whole-file writes
                found.append((f".{fn.attr}", node.lineno))
            elif owner == "os" and fn.attr == "fdopen":
                found.append(("os.fdopen", node.lineno))
        # open(path, "w") and path.open("w") (os.open takes flags, not a mode); appends ("a") are fine
        at = 1 if isinstance(fn, ast.Name) and fn.id == "open" else 0 if (
            isinstance(fn, ast.Attribute) and fn.attr == "open" and owner != "os") else None
        if at is not None:
            mode = node.args[at] if len(node.args) > at else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wx"):
                found.append((f"open(mode={mode.value!r})", node.lineno))
    return found


def test_there_is_exactly_one_atomic_write_in_the_project():
    files = []
    for name in SCANNED:
        base = ROOT / name
        files.extend([base] if base.is_file() else sorted(base.rglob("*.py")))
    stray, primitive = [], []
    for f in files:
        rel = f.relative_to(ROOT).as_posix()
        for what, line in _whole_file_writes(f):
            if rel == PRIMITIVE:
                primitive.append(what)
            elif (rel, what) not in ALLOWED:
                stray.append(f"{rel}:{line}: {what}")
    assert stray == [], "write whole files with tradingagents.fileio.atomic_write"
    assert sorted(primitive) == ["os.fdopen", "os.replace", "tempfile.mkstemp"]  # the scan sees the real one
