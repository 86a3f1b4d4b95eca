"""Background backtests for a UI (UI-neutral: no streamlit here, tested without a browser).

``BacktestRegistry`` keeps one ``BacktestHandle`` per backtest id. ``start`` plans the backtest in
the caller's thread (so bad input is an error before anything runs) and runs it on a worker
thread; starting the same arguments while they run returns the running handle. ``stop`` sets the
event the engine polls (the backtest ends ``stopped`` with every finished step kept); ``resume``
runs it again, which continues where it stopped. ``get(id, config)`` also opens a backtest that is
only on disk (after a server restart), from its manifest, so a page can show it and resume it.
The API key stays in memory in the handle only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from tradingagents.backtest.engine import Backtest, BacktestSpec, backtests_root, load_manifest
from tradingagents.errors import RunStopped
from tradingagents.validation import ValidationError

STATUSES = ("planned", "running", "finished", "failed", "stopped")


class BacktestHandle:
    def __init__(self, backtest: Backtest, api_key: str | None = None) -> None:
        self.backtest = backtest
        self.id = backtest.id
        self._api_key = api_key
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.events: list[dict[str, Any]] = []
        self.error: str | None = backtest.manifest.doc.get("error")
        self.created_at = time.time()
        self.finished_at: float | None = None
        self._lock = threading.Lock()
        self._status = backtest.manifest.doc.get("status") or "planned"
        if self._status == "running":  # on disk as running, but no thread of ours: it was killed
            self._status = "stopped"

    @property
    def status(self) -> str:
        return self._status

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def progress(self) -> dict[str, Any]:
        p = self.backtest.progress()
        p["status"] = self._status
        return p

    def _on_progress(self, event: dict[str, Any]) -> None:
        with self._lock:
            self.events.append(event)
            del self.events[:-200]

    def _work(self) -> None:
        try:
            self.backtest.run(on_progress=self._on_progress, should_stop=self.stop_event.is_set)
            self._status = "finished"
            self.error = None
        except RunStopped:
            self._status = "stopped"
        except Exception as exc:  # noqa: BLE001 - kept for the page to show
            self._status = "failed"
            self.error = str(exc) or type(exc).__name__
        finally:
            self.finished_at = time.time()

    def launch(self) -> None:
        if self.running:
            return
        self.stop_event.clear()
        self.error = None
        self._status = "running"
        self.finished_at = None
        self.backtest.status = "running"
        self.thread = threading.Thread(target=self._work, name=f"ta-backtest-{self.id[:24]}", daemon=True)
        self.thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        if self.thread is None:
            return True
        self.thread.join(timeout)
        return not self.thread.is_alive()


class BacktestRegistry:
    def __init__(self) -> None:
        self._handles: dict[str, BacktestHandle] = {}
        self._lock = threading.Lock()

    def start(self, spec: BacktestSpec, config: Mapping[str, Any] | None = None, *,
              api_key: str | None = None) -> str:
        """Plan and start (or continue) a backtest; returns its id. Raises ValidationError etc. first."""
        backtest = Backtest(spec, config, api_key=api_key)
        with self._lock:
            handle = self._handles.get(backtest.id)
            if handle is not None and handle.running:
                return handle.id
            handle = BacktestHandle(backtest, api_key)
            self._handles[handle.id] = handle
        handle.launch()
        return handle.id

    def get(self, backtest_id: str | None, config: Mapping[str, Any] | None = None) -> BacktestHandle | None:
        """The handle of ``backtest_id``, opened from its folder if this process does not know it."""
        if not backtest_id:
            return None
        with self._lock:
            handle = self._handles.get(backtest_id)
        if handle is not None or config is None:
            return handle
        return self._open(backtest_id, config)

    def _open(self, backtest_id: str, config: Mapping[str, Any]) -> BacktestHandle | None:
        root = backtests_root(config)
        folder = root / backtest_id
        if "/" in backtest_id or backtest_id.startswith(".") or not (folder / "manifest.json").is_file():
            return None
        try:
            doc = load_manifest(folder)
            spec = BacktestSpec(**{**doc["args"]["spec"], "tickers": tuple(doc["args"]["spec"]["tickers"])})
            settings = {k: v for k, v in (doc["args"].get("settings") or {}).items()}
            backtest = Backtest(spec, {**dict(config), **settings})
        except (OSError, ValueError, KeyError, TypeError, ValidationError):
            return None
        if backtest.id != backtest_id:
            return None
        with self._lock:
            return self._handles.setdefault(backtest_id, BacktestHandle(backtest))

    def stop(self, backtest_id: str) -> bool:
        handle = self.get(backtest_id)
        if handle is None or not handle.running:
            return False
        handle.stop_event.set()
        return True

    def resume(self, backtest_id: str, *, api_key: str | None = None) -> bool:
        handle = self.get(backtest_id)
        if handle is None or handle.running or handle.status == "finished":
            return False
        if api_key is not None:
            handle._api_key = api_key
            handle.backtest._api_key = api_key
        handle.launch()
        return True

    def list(self) -> list[BacktestHandle]:
        with self._lock:
            return sorted(self._handles.values(), key=lambda h: h.created_at, reverse=True)
