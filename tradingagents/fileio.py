"""The one way the project writes a whole file: a killed writer leaves the old file or the new one.

``atomic_write(path, data, durable=True)`` (``data`` bytes, or text written as UTF-8) and
``atomic_file(path, durable=True)`` (a binary file handle, for writers that stream, such as
``numpy.savez``) both: create a unique temp file ``.<name>.<random>.tmp`` in the same folder (the
folder is made if missing), write, flush, ``fsync``, ``os.replace`` it onto ``path``, then ``fsync``
the folder so the rename itself survives a power cut. ``durable=False`` is for caches that can be
rebuilt (the log's key index, a role memory's BM25 index): both fsyncs are skipped, the file is
still never seen half-written. If anything fails the temp file is removed and the old file is
untouched; an ``OSError`` that names no file (a full disk) is raised again naming ``path``.

``atomic_write_all([(path, data), ...], durable=True)`` replaces several files the same way, in
order, each file's data ``fsync``-ed before its rename, and fsyncs each distinct folder once after
the last rename (not once per file): when it returns every file survives a power cut; a crash
before then leaves each file whole, old or new (which renames survive is then up to the file
system, so use it only for files that need no order among themselves).

``remove_leftovers(path)`` deletes what killed writers of ``path`` left (their temp files); call it
only while holding the lock that serialises the writers of ``path``.

The storage layer owns every file the engine keeps (``tradingagents.storage``); this primitive sits
on the ground floor (the standard library only, nothing of the package) so that the memory layer,
which storage builds on, writes its files the same way without importing storage.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["TEMP_SUFFIX", "atomic_file", "atomic_write", "atomic_write_all", "fsync_dir", "remove_leftovers",
           "temp_prefix"]

TEMP_SUFFIX = ".tmp"


def fsync_dir(folder: Path) -> None:
    """Make a folder's entries (a new or renamed file) durable; a no-op where that is unsupported."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def temp_prefix(path: Path) -> str:
    """How the temp files of ``path``'s writers begin (``.<name>.``); they end in ``TEMP_SUFFIX``."""
    return f".{Path(path).name}."


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str], *, durable: bool = True,
                _sync_folder: bool = True) -> Iterator[BinaryIO]:
    """``with atomic_file(p) as fh: fh.write(...)``: ``p`` is replaced whole when the block ends without error."""
    path = Path(path)
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=temp_prefix(path), suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)  # readers see the old file or the new one, never half of one
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not exc.filename:
            # a failed write (a full disk) names no file: say which one it was
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    if durable and _sync_folder:
        fsync_dir(folder)


def atomic_write(path: str | os.PathLike[str], data: bytes | str, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8); see the module docstring."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_file(path, durable=durable) as fh:
        fh.write(payload)


def atomic_write_all(items: Iterable[tuple[str | os.PathLike[str], bytes | str]], *, durable: bool = True) -> None:
    """Replace each ``path`` with its ``data``, in order; one folder fsync per distinct folder, at the end."""
    folders: dict[Path, None] = {}
    for path, data in items:
        payload = data.encode("utf-8") if isinstance(data, str) else data
        with atomic_file(path, durable=durable, _sync_folder=False) as fh:
            fh.write(payload)
        folders[Path(path).parent] = None
    if durable:
        for folder in folders:
            fsync_dir(folder)


def remove_leftovers(path: str | os.PathLike[str]) -> None:
    """Delete the temp files killed writers of ``path`` left behind (hold the writers' lock)."""
    path = Path(path)
    with contextlib.suppress(OSError):
        for leftover in path.parent.glob(temp_prefix(path) + "*" + TEMP_SUFFIX):
            with contextlib.suppress(OSError):
                leftover.unlink()
