"""Benchmarks: ``python -m bench [module …]`` (``make bench`` runs them all)."""

from __future__ import annotations

from pathlib import Path

APP_PACKAGES = ("studio", "tradingagents")


def compile_app_bytecode() -> None:
    """Write the bytecode of the app's own packages, as any earlier start of the app has left it.

    A server bench measures a new server on an app that has run on this machine before (every start
    but the very first after a clone). In a shell with ``PYTHONDONTWRITEBYTECODE`` set, no start ever
    writes it, and each new server would compile every module of the app from source again (~50 ms
    of the first page); installed libraries are compiled by pip at install time either way."""
    import compileall

    root = Path(__file__).resolve().parents[1]
    for name in APP_PACKAGES:
        compileall.compile_dir(str(root / name), quiet=1, workers=1)
