"""Where (ticker, steps) tasks run: one small interface, a thread executor today.

A task is one unit of ordered work, e.g. one ticker's backtest steps (their order matters: each
step learns from the ones before, so a task is never split). Tasks are independent of each other
and run concurrently, at most ``max_workers`` at a time.

``Executor.run(fn, tasks, on_done=None) -> list[TaskResult]`` calls ``fn(task)`` for every task
and returns one ``TaskResult`` per task in the order given (``value`` or ``error``: a failing
task never hides the others' results). ``on_done(result)`` is called as each task ends, in the
caller's process (for progress). ``fn`` and the tasks should be picklable (a module-level function
and plain data) so a process- or cluster-based executor can run them too: a Ray variant goes behind
this same interface (``executor: ray`` in the config; not built yet, and asked for it gives a
clear ConfigError).

``get_executor(config, n_tasks)``: ``ThreadExecutor`` bounded by ``max_concurrent_llm_calls``
(never more workers than tasks).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tradingagents.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")

EXECUTORS = ("thread",)


@dataclass
class TaskResult(Generic[T, R]):
    index: int
    task: T
    value: R | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Executor:
    """The interface. ``max_workers`` bounds how many tasks run at the same time."""

    name = "base"

    def __init__(self, max_workers: int = 1) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise ConfigError(f"max_workers must be a whole number ≥ 1, not {max_workers!r}.")
        self.max_workers = max_workers

    def run(
        self,
        fn: Callable[[T], R],
        tasks: Iterable[T],
        on_done: Callable[[TaskResult[T, R]], None] | None = None,
    ) -> list[TaskResult[T, R]]:
        raise NotImplementedError


class ThreadExecutor(Executor):
    """Tasks on a pool of ``max_workers`` threads (the embedded default)."""

    name = "thread"

    def run(self, fn, tasks, on_done=None):
        items: Sequence = list(tasks)
        results: list[TaskResult] = [TaskResult(i, t) for i, t in enumerate(items)]
        if not items:
            return results
        lock = threading.Lock()

        def finish(result: TaskResult) -> None:
            if on_done is not None:
                with lock:  # progress callbacks never run concurrently
                    on_done(result)

        if self.max_workers == 1 or len(items) == 1:
            for result in results:  # in the caller's thread: simpler tracebacks, no pool
                try:
                    result.value = fn(result.task)
                except BaseException as exc:  # noqa: BLE001 - handed back in the result
                    if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                        raise
                    result.error = exc
                finish(result)
            return results
        with ThreadPoolExecutor(max_workers=min(self.max_workers, len(items)),
                                thread_name_prefix="ta-task") as pool:
            futures = {pool.submit(fn, r.task): r for r in results}
            for future in as_completed(futures):
                result = futures[future]
                exc = future.exception()
                if exc is None:
                    result.value = future.result()
                else:
                    result.error = exc
                finish(result)
        return results


def get_executor(config: Mapping[str, Any] | None = None, n_tasks: int | None = None) -> Executor:
    """The executor the config asks for (``executor``, default thread), bounded by max_concurrent_llm_calls."""
    cfg = dict(config or {})
    kind = str(cfg.get("executor") or "thread").strip().lower()
    if kind not in EXECUTORS:
        raise ConfigError(f"Unknown executor {cfg.get('executor')!r}; available: {', '.join(EXECUTORS)}.")
    try:
        bound = int(cfg.get("max_concurrent_llm_calls") or 1)
    except (TypeError, ValueError):
        raise ConfigError(
            f"max_concurrent_llm_calls must be a whole number ≥ 1, not {cfg.get('max_concurrent_llm_calls')!r}."
        ) from None
    bound = max(1, bound)
    if n_tasks is not None:
        bound = max(1, min(bound, int(n_tasks)))
    return ThreadExecutor(bound)
