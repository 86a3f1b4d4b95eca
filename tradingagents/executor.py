"""Where (ticker, steps) tasks run: one small interface, a thread executor today.

A task is one unit of ordered work, e.g. one ticker's backtest steps (their order matters: each
step learns from the ones before, so a task is never split). Tasks are independent of each other
and run concurrently, at most ``max_workers`` at a time.

``Executor.run(fn, tasks, on_done=None) -> list[TaskResult]`` calls ``fn(task)`` for every task
and returns one ``TaskResult`` per task in the order given (``value`` or ``error``: a failing
task never hides the others' results). ``on_done(result)`` is called as each task ends, in the
caller's process (for progress). ``fn`` and the tasks should be picklable (a module-level function
and plain data) so a process- or cluster-based executor can run them too: a Ray variant goes behind
this same interface.

``get_executor(config, n_tasks)``: the ``executor`` setting (env ``TRADINGAGENTS_EXECUTOR``):
``threads`` (default, ``ThreadExecutor``) or ``ray`` (``RayExecutor``), bounded by
``max_concurrent_llm_calls`` (never more workers than tasks).

``RayExecutor``: each task is one Ray task (``max_retries`` retries when its worker process dies;
a task's own exception is handed back, not retried). ``ray_address`` None starts a local Ray on
this machine (``num_cpus`` = the bound, no dashboard, no usage reporting, token authentication on
without Ray's notice about it) that listens on the loopback only: Ray otherwise binds every
interface (``::``) and advertises the machine's own address; ``_local_ray_env`` makes it take
127.0.0.1 as the node's address, which its servers then bind (tests/test_ray.py lists the Ray
processes' listening sockets). An address joins a cluster.

Small batches on a local Ray run on threads: starting a local Ray (its servers, then one worker
process per task that imports the engine again) takes longer than a whole small batch, so with no
``ray_address``, no Ray already running in this process and fewer than ``RAY_LOCAL_MIN_TASKS``
tasks, ``get_executor`` returns a ``ThreadExecutor`` whose ``note`` says why (the CLI prints
``describe(executor)``). A Ray session started in this process is kept for the process's life and
reused by every later batch or backtest (the app's server, a notebook). Ray is imported only when asked for. A task function that cannot be
pickled (a closure over locks) runs on threads instead, with a warning; the batch's and the
backtest's task functions are module-level, so they run in Ray workers. A task's work must be safe to
run twice: the batch's and the backtest's are (results are saved atomically and reused, a run
resumes from its checkpoint in the shared storage), so a killed worker's task resumes on another.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

RAY_MAX_RETRIES = 3
# Fewer tasks than this on a local Ray that is not running yet: threads (see the module's docstring).
RAY_LOCAL_MIN_TASKS = 4


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
    note = ""  # why this executor was chosen when it is not the one the settings asked for

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


class RayExecutor(Executor):
    """Tasks as Ray tasks, at most ``max_workers`` at once, each retried if its worker dies."""

    name = "ray"

    def __init__(self, max_workers: int = 1, address: str | None = None,
                 max_retries: int = RAY_MAX_RETRIES) -> None:
        super().__init__(max_workers)
        self.address = address
        self.max_retries = int(max_retries)

    def run(self, fn, tasks, on_done=None, should_stop=None):
        """As ``Executor.run``; ``should_stop()`` true: no further task is started (their error is
        RunStopped), the ones running finish (a Ray task cannot be told to stop between two steps)."""
        from tradingagents.errors import RunStopped

        items: Sequence = list(tasks)
        results: list[TaskResult] = [TaskResult(i, t) for i, t in enumerate(items)]
        if not items:
            return results
        ray = ensure_ray(self.address, self.max_workers)
        try:
            ray.cloudpickle.dumps(fn)
        except Exception as exc:  # e.g. a bound method of an object holding locks: it cannot leave this process
            log.warning("executor ray: the task function cannot be sent to Ray workers (%s); running these "
                        "%d tasks on threads in this process instead", exc, len(items))
            return ThreadExecutor(self.max_workers).run(fn, items, on_done)
        remote = ray.remote(_call).options(max_retries=self.max_retries, retry_exceptions=False, num_cpus=1)
        pending: dict[Any, TaskResult] = {}
        queue = list(results)
        while queue or pending:
            if queue and should_stop is not None and should_stop():
                for result in queue:
                    result.error = RunStopped("Stopped before this task started; run the same thing again to run it.")
                    if on_done is not None:
                        on_done(result)
                queue = []
                if not pending:
                    break
            while queue and len(pending) < self.max_workers:  # the bound, whatever the cluster's size
                result = queue.pop(0)
                pending[remote.remote(fn, result.task)] = result
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                result = pending.pop(ref)
                try:
                    result.value = ray.get(ref)
                except BaseException as exc:  # noqa: BLE001 - handed back in the result
                    if isinstance(exc, KeyboardInterrupt):
                        for other in pending:
                            ray.cancel(other)
                        raise
                    result.error = _unwrap(exc)
                if on_done is not None:
                    on_done(result)
        return results


def _call(fn, task):  # module level: what a Ray worker runs
    return fn(task)


def _unwrap(exc: BaseException) -> BaseException:
    """The task's own exception from Ray's wrapper (so exit codes and messages stay ours)."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return cause
    return exc


_ray_lock = threading.Lock()


def ensure_ray(address: str | None, num_cpus: int):
    """Ray, connected: the running session, else ``ray.init`` (local on 127.0.0.1 or ``address``)."""
    try:
        import ray
    except ImportError:  # pragma: no cover - ray is in requirements.txt
        raise ConfigError("executor ray needs the ray package: pip install -r requirements.txt.") from None
    with _ray_lock:
        if not ray.is_initialized():
            import os

            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                                      "configure_logging": False}
            if address:
                ray.init(address=address, **kwargs)
            else:
                _local_ray_env(os.environ)
                ray.init(num_cpus=max(1, int(num_cpus)), **kwargs)
    return ray


def _local_ray_env(environ) -> None:
    """A local Ray on the loopback only, without Ray's notice about its token authentication.

    Ray takes the node's address from ``services.get_node_ip_address``, which returns the loopback
    only where ``ray_constants.ENABLE_RAY_CLUSTER`` is off (its switch for single-machine use; an
    explicit ``_node_ip_address="127.0.0.1"`` is turned back into the machine's address); its
    servers then bind 127.0.0.1 instead of every interface. The environment variable reaches the
    processes Ray starts; the constant is set too because this process may have imported ray already.
    Token authentication stays as Ray chooses it (on for a new local cluster); only the warning it
    logs about that choice on every start is filtered out (``_NoTokenNotice``).
    """
    import logging

    import ray._private.ray_constants as ray_constants

    environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    notices = logging.getLogger("ray._private.authentication.authentication_token_setup")
    if not any(isinstance(f, _NoTokenNotice) for f in notices.filters):
        notices.addFilter(_NoTokenNotice())


class _NoTokenNotice:
    """Drops Ray's "Token authentication is enabled for this Ray cluster" warning (noise on every command)."""

    def filter(self, record) -> bool:
        return not str(record.msg).startswith("Token authentication is enabled for this Ray cluster")


def _ray_running() -> bool:
    """A Ray session already connected in this process (importing ray only if it is imported)."""
    import sys

    ray = sys.modules.get("ray")
    return bool(ray is not None and getattr(ray, "is_initialized", lambda: False)())


def describe(executor: Executor) -> str:
    """The executor for a terminal line: its name, and why it was chosen when the settings asked otherwise."""
    label = "threads" if executor.name == "thread" else executor.name
    return f"{label} ({executor.note})" if executor.note else label


def get_executor(config: Mapping[str, Any] | None = None, n_tasks: int | None = None) -> Executor:
    """The executor the config asks for (``executor``, default threads), bounded by max_concurrent_llm_calls."""
    cfg = resolve_config(config)  # executor, max_concurrent_llm_calls, ray_address: checked by their keys' rules
    bound = cfg["max_concurrent_llm_calls"]
    if n_tasks is not None:
        bound = max(1, min(bound, int(n_tasks)))
    if cfg["executor"] == "ray":
        if (not cfg["ray_address"] and n_tasks is not None and n_tasks < RAY_LOCAL_MIN_TASKS
                and not _ray_running()):
            ex = ThreadExecutor(bound)
            ex.note = (f"ray asked for, threads chosen: {n_tasks} task{'s' if n_tasks != 1 else ''} "
                       f"< {RAY_LOCAL_MIN_TASKS}, starting a local Ray would take longer than the "
                       "work; set ray_address to use a running cluster")
            log.info("executor: %s", ex.note)
            return ex
        return RayExecutor(bound, address=cfg["ray_address"])
    return ThreadExecutor(bound)
