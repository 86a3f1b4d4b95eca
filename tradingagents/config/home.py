"""``check_home``: every folder the engine writes (``WRITABLE_DIRS``) can be created and written."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tradingagents.config.defaults import WRITABLE_DIRS
from tradingagents.config.resolve import resolve_config
from tradingagents.errors import ConfigError


def check_home(config: Mapping[str, Any] | None = None) -> None:
    """Raise ``ConfigError`` (naming the folder and what to do) unless every folder the engine
    writes can be created and written: a home on ``/proc/self``, a read-only disk or a full one is
    reported before any work, never as a traceback in the middle of a run.

    The error's ``key`` names the setting ("home", "results_dir", …) so a front end can name its
    own flag or field. Nothing is left behind: a missing folder is judged by its nearest existing
    parent (a probe file is written there and removed).
    """
    cfg = resolve_config(config)
    for key in WRITABLE_DIRS:
        if not cfg.get(key):
            continue
        folder = Path(cfg[key])
        existing = folder
        while not existing.exists() and existing.parent != existing:
            existing = existing.parent
        try:
            if not existing.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, "it is a file, not a folder", str(existing))
            fd, probe = tempfile.mkstemp(prefix=".write-check.", dir=existing)
            try:
                os.write(fd, b"ok")
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                todo = "Free some space on that disk, or use a home folder on another disk"
            else:
                todo = "Use a folder you can write to"
            where = "" if existing == folder else f" ({existing} {reason.lower()})"
            error = ConfigError(
                f"The {key.replace('_', ' ')} folder {folder} cannot be written"
                + (where or f" ({reason})") + f". {todo}: set --home / TRADINGAGENTS_HOME (or the app's "
                "home setting) to a writable folder."
            )
            error.key = key
            raise error from exc
