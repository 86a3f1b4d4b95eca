"""A cheap inter-process flock for the memories (whole-file writes go through ``tradingagents.fileio``)."""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

__all__ = ["FlockFile", "LOCK_POLL_S"]

# filelock polls a contended lock; its 50 ms default makes 8 busy writers crawl.
LOCK_POLL_S = 0.002


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

