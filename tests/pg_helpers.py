"""Child processes for the PostgreSQL fault tests ("another machine": its own TRADINGAGENTS_HOME).

    python tests/pg_helpers.py store PREFIX N GO_FILE    # the shared decisions, then N own ones + lessons
    python tests/pg_helpers.py checkpoint TICKER DATE THREAD MARKER   # dies by SIGKILL in step 2
    python tests/pg_helpers.py lock TICKER THREAD        # holds the run lock until killed

The database URL comes from TRADINGAGENTS_STORAGE_URL, as on a real desk.
"""

from __future__ import annotations

import operator
import os
import signal
import sys
import time
from pathlib import Path
from typing import Annotated, TypedDict

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SHARED = 30  # decisions both writers store for the same (date, ticker)


def own_ticker(prefix: str, i: int) -> str:
    return f"{prefix}{i:02d}"


def shared_ticker(i: int) -> str:
    return f"SH{i:02d}"


def store(prefix: str, n: int, go_file: str) -> None:
    from tradingagents.storage import open_memory_log, open_role_memory

    log = open_memory_log({})
    memory = open_role_memory("bull_memory", {})
    Path(f"{go_file}.{prefix}.ready").touch()
    deadline = time.monotonic() + 300  # only catches a hang
    while not os.path.exists(go_file) and time.monotonic() < deadline:  # start both writers together
        time.sleep(0.005)
    # both race for the same (date, ticker) keys first, then each stores its own decisions and lessons
    shared = sum(
        log.store_decision(shared_ticker(i), "2024-05-10", f"**Rating**: Sell\nfrom {prefix}") for i in range(SHARED)
    )
    stored = 0
    for i in range(n):
        stored += log.store_decision(own_ticker(prefix, i), "2024-05-10", f"**Rating**: Buy\n{prefix} decision {i}")
        memory.add_situations([(f"{prefix} situation {i} rising yields", f"{prefix} lesson {i}")])
    print(f"{stored} {shared}", flush=True)


class _State(TypedDict, total=False):
    company_of_interest: str
    trade_date: str
    steps: Annotated[list, operator.add]


def build_graph(marker: str, die_in_second: bool):
    from langgraph.graph import END, START, StateGraph

    def first(state: _State) -> dict:
        with open(marker, "a", encoding="utf-8") as fh:
            fh.write("first\n")
        return {"steps": ["first"]}

    def second(state: _State) -> dict:
        if die_in_second:
            os.kill(os.getpid(), signal.SIGKILL)
        return {"steps": ["second"]}

    graph = StateGraph(_State)
    graph.add_node("first", first)
    graph.add_node("second", second)
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", END)
    return graph


def checkpoint(ticker: str, date: str, thread: str, marker: str) -> None:
    from tradingagents.storage import open_checkpointer

    with open_checkpointer({}, ticker) as saver:
        app = build_graph(marker, die_in_second=True).compile(checkpointer=saver)
        app.invoke(
            {"company_of_interest": ticker, "trade_date": date, "steps": []},
            {"configurable": {"thread_id": thread}},
            durability="sync",
        )
    print("not killed", flush=True)


def hold_lock(ticker: str, thread: str) -> None:
    from tradingagents.storage import run_lock

    with run_lock({}, ticker, thread):
        print("locked", flush=True)
        time.sleep(60)  # until killed


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "store":
        store(args[0], int(args[1]), args[2])
    elif cmd == "checkpoint":
        checkpoint(*args)
    elif cmd == "lock":
        hold_lock(*args)
    else:
        raise SystemExit(f"unknown command {cmd!r}")
