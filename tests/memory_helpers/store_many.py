"""Store N decisions into a memory log from its own process once a go-file appears.

Usage: python -m tests.memory_helpers.store_many LOG_PATH WORKER_ID COUNT GO_FILE
Prints "ready" when imported and waiting, then "stored <k>" with how many store_decision calls
returned True.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time

from tests.memory_helpers._light_import import load_memory_module

TradingMemoryLog = load_memory_module().TradingMemoryLog


def main(argv: list[str]) -> int:
    log_path, worker, count, go_file = argv[0], int(argv[1]), int(argv[2]), argv[3]
    log = TradingMemoryLog({"memory_log_path": log_path})
    print("ready", flush=True)
    deadline = time.monotonic() + 60
    while not os.path.exists(go_file):
        if time.monotonic() > deadline:
            return 2
        time.sleep(0.002)
    stored = 0
    start = dt.date(2020, 1, 1)
    for i in range(count):
        day = (start + dt.timedelta(days=i)).isoformat()
        stored += log.store_decision(f"W{worker}", day, f"worker {worker} decision {i}\n[{day} | X | Buy | pending]", rating="Hold")
    print(f"stored {stored}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
