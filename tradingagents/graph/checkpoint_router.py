"""One checkpointer for a compiled graph that serves every ticker: each run is routed to its own saver.

A compiled LangGraph graph holds one checkpointer. Checkpoints live in one SQLite database per
ticker (``graph/checkpointer.py``; or the desk's PostgreSQL database), so compiling with the
ticker's saver would force a compile per run. ``CheckpointRouter`` is compiled in instead, once;
each run opens its saver through ``storage.open_checkpointer`` (SQLite: ``checkpointer.get_checkpointer``;
a fresh ``InMemorySaver`` when checkpoints are off) and
registers it under a route token that travels in the run config's ``configurable``::

    router = CheckpointRouter(config)
    graph = workflow.compile(checkpointer=router)           # once per graph shape
    with router.route("NVDA") as configurable:              # per run
        run_config = {"configurable": {"thread_id": tid, **configurable}}
        graph.invoke(state, run_config, durability="sync")

Every saver call (get_tuple, list, put, put_writes, delete_thread, …) is dispatched to the saver
of the config's route; a config without a known route is refused (never a silent wrong database).
The saver is closed when the ``route`` block ends. Routes are independent, so concurrent runs of
different tickers (or dates) on one compiled graph each write to their own database.
"""

from __future__ import annotations

import contextlib
import itertools
import random
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from tradingagents.errors import CheckpointError

ROUTE_KEY = "ta_checkpoint_route"
COUNTERS_KEY = "ta_counters"  # a checkpoint's metadata: the run's counters as of that checkpoint

__all__ = ["COUNTERS_KEY", "ROUTE_KEY", "CheckpointRouter"]


class CheckpointRouter(BaseCheckpointSaver):
    """Dispatches every checkpoint call to the saver registered for the run's route token."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__()
        self.config = config
        self.persistent = bool(config.get("checkpoint_enabled"))
        self._routes: dict[str, BaseCheckpointSaver] = {}
        self._counters: dict[Any, Callable[[], Mapping[str, Any]]] = {}  # a run config's route token → its counters
        self._lock = threading.Lock()
        self._counter = itertools.count(1)

    # ------------------------------------------------------------------ routes
    @contextlib.contextmanager
    def route(self, ticker: str, counters: Callable[[], Mapping[str, Any]] | None = None
              ) -> Iterator[dict[str, str]]:
        """Open the ticker's saver for one run; yields the ``configurable`` entries that select it.

        ``counters`` (the run's counters so far: calls, tokens, node times) is called at every
        checkpoint and its document saved in that checkpoint's metadata under ``COUNTERS_KEY``: the
        same row, so the same transaction (PostgreSQL) or the same write (SQLite). A resume after
        the database was lost mid-run finds the counters of what the checkpoint holds."""
        if self.persistent:
            from tradingagents import storage

            saver: BaseCheckpointSaver = storage.open_checkpointer(self.config, ticker)
        else:
            from langgraph.checkpoint.memory import InMemorySaver

            saver = InMemorySaver()  # one per run: nothing is kept once the run ends
        token = f"{ticker}#{next(self._counter)}"
        with self._lock:
            self._routes[token] = saver
            if counters is not None:
                self._counters[token] = counters
        try:
            yield {ROUTE_KEY: token}
        finally:
            with self._lock:
                self._routes.pop(token, None)
                self._counters.pop(token, None)
            close = getattr(saver, "close", None)
            if callable(close):
                close()  # one connection per run; never leak it

    def saver_for(self, route: Mapping[str, Any]) -> BaseCheckpointSaver:
        """The saver a ``route(...)`` block opened (e.g. to read its ``warnings``)."""
        return self._saver({"configurable": dict(route)})

    def active_routes(self) -> int:
        with self._lock:
            return len(self._routes)

    def _saver(self, config: Mapping[str, Any] | None) -> BaseCheckpointSaver:
        token = ((config or {}).get("configurable") or {}).get(ROUTE_KEY)
        with self._lock:
            saver = self._routes.get(token) if token is not None else None
        if saver is None:
            raise CheckpointError(
                "No checkpoint database is open for this run (the run config carries no known "
                f"{ROUTE_KEY!r}); run the graph inside CheckpointRouter.route(ticker)."
            )
        return saver

    # ------------------------------------------------------------------ the saver interface
    def get_tuple(self, config):
        return self._saver(config).get_tuple(config)

    def list(self, config, *, filter=None, before=None, limit=None):  # noqa: A002 - the base's names
        return self._saver(config if config is not None else before).list(
            config, filter=filter, before=before, limit=limit)

    def put(self, config, checkpoint, metadata, new_versions):
        saver = self._saver(config)
        with self._lock:
            counters = self._counters.get(((config or {}).get("configurable") or {}).get(ROUTE_KEY))
        if counters is not None:
            metadata = {**metadata, COUNTERS_KEY: dict(counters())}
        return saver.put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = "") -> None:
        return self._saver(config).put_writes(config, writes, task_id, task_path)

    def get_delta_channel_history(self, *, config, channels):
        return self._saver(config).get_delta_channel_history(config=config, channels=channels)

    def delete_thread(self, thread_id: str) -> None:
        raise CheckpointError("Delete a thread through checkpointer.clear_checkpoint(config, ticker, thread_id).")

    def get_next_version(self, current, channel=None) -> str:
        # the same scheme as SqliteSaver, PostgresSaver and InMemorySaver: "<counter:032>.<random:016>"
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"
