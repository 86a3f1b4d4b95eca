"""Ctrl-C and SIGTERM for the command line: the first asks the run to stop at the next step boundary
(it stays resumable), the second aborts. One place for every subcommand (run, batch, backtest)."""

from __future__ import annotations

import signal
import sys
import threading


def install_stop_handlers(stop: threading.Event, what: str = "step") -> dict:
    """Ctrl-C / SIGTERM set ``stop`` (the run ends at the next step boundary); a second Ctrl-C aborts.
    Returns the previous handlers (to restore)."""

    def handler(signum, frame):
        if stop.is_set():  # second Ctrl-C: leave now
            raise KeyboardInterrupt
        stop.set()
        print(f"\nstopping after the current {what}… (Ctrl-C again to abort)", file=sys.stderr, flush=True)

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
    return previous
