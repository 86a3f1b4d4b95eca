"""Ctrl-C and SIGTERM for the command line: the first asks the run to stop at the next step boundary
(it stays resumable), the second aborts. One place for every subcommand (run, batch, backtest, scheduler).

A signal handler runs on the main thread between two bytecodes, possibly while that thread holds the stop
event's own lock (inside ``Event.wait``). ``Event.set`` takes that lock, so calling it from the handler could
deadlock the process for good (a scheduler once never ended on SIGTERM). The handler takes no lock: it hands
the ``set`` and its message to a short-lived thread, which gets the lock as soon as the main thread lets go."""

from __future__ import annotations

import signal
import sys
import threading


def _ask_to_stop(stop: threading.Event, what: str) -> None:
    # said before the stop is set: a run that ends at once (and its process with it) has said why
    print(f"\nstopping after the current {what}… (Ctrl-C again to abort)", file=sys.stderr, flush=True)
    stop.set()


def stop_handler(stop: threading.Event, what: str = "step"):
    """The signal handler: the first call asks ``stop`` to be set (off this thread), a second one aborts."""
    asked = [False]  # only the main thread, where handlers run, reads and writes it

    def handler(signum, frame):
        if asked[0] or stop.is_set():  # second Ctrl-C: leave now
            raise KeyboardInterrupt
        asked[0] = True
        threading.Thread(target=_ask_to_stop, args=(stop, what), name="stop-signal", daemon=True).start()

    return handler


def install_stop_handlers(stop: threading.Event, what: str = "step") -> dict:
    """Ctrl-C / SIGTERM set ``stop`` (the run ends at the next step boundary); a second Ctrl-C aborts.
    Returns the previous handlers (to restore)."""
    handler = stop_handler(stop, what)
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
    return previous
