"""Files that survive a killed writer: atomic replace with fsync, and a cheap inter-process flock."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path

__all__ = ["FlockFile", "atomic_write", "fsync_dir", "temp_prefix", "LOCK_POLL_S"]

# filelock polls a contended lock; its 50 ms default makes 8 busy writers crawl.
LOCK_POLL_S = 0.002


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def temp_prefix(path: Path) -> str:
    return f".{path.name}."


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Unique temp file in the same folder, flush + fsync, os.replace, fsync the folder.

    ``durable=False`` (for caches that can be rebuilt) skips both fsyncs: still never half-written.
    """
    folder = path.parent
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=temp_prefix(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(folder)



class FlockFile:
    """An exclusive ``flock`` on a lock file, cheap enough for one acquisition per add.

    (filelock is used for the log; here it costs more than the rest of an add put together.) The
    descriptor is reopened in a forked child so parent and child never share a lock. Threads are
    serialised by the owner's RLock, so one descriptor per instance is enough.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None
        self._pid = 0

    def __enter__(self) -> FlockFile:
        if self._fd is None or self._pid != os.getpid():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            self._pid = os.getpid()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)

    def __del__(self) -> None:
        if self._fd is not None and self._pid == os.getpid():
            with contextlib.suppress(OSError):
                os.close(self._fd)

