"""A throwaway PostgreSQL server for the storage tests: Debian's ``postgresql`` binaries, a fresh
cluster in a temporary folder, listening on 127.0.0.1 on a free port, stopped after the session.

Use from a test module::

    from tests import pg_server as _pg
    pg_server, pg_url = _pg.pg_server, _pg.pg_url

``pg_server`` (session) yields the server; ``pg_url`` (per test) creates a fresh database on it
and yields its URL, so tests never see each other's rows. PostgreSQL refuses to run as root: when
the tests run as root (CI) the cluster belongs to ``nobody`` and the server is started through
``runuser``. ``make test`` installs the package when the binaries are missing; without them the
tests fail with a message saying so (never a silent skip).
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

SUPERUSER = "postgres"
_RUN_AS = "nobody"


def pg_bindir() -> Path | None:
    """The folder with ``initdb``/``pg_ctl``/``postgres``: Debian's newest version, else the PATH."""
    versions = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0,
    )
    for folder in reversed(versions):
        if all(os.access(Path(folder) / b, os.X_OK) for b in ("initdb", "pg_ctl", "postgres")):
            return Path(folder)
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(os.path.realpath(found)).parent
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    def __init__(self) -> None:
        bindir = pg_bindir()
        if bindir is None:
            pytest.fail(
                "PostgreSQL is not installed (no initdb/pg_ctl under /usr/lib/postgresql/*/bin or on the "
                "PATH). Run `make test`, which installs Debian's postgresql package, or "
                "`apt-get install postgresql`."
            )
        self.bindir = bindir
        self.as_root = os.geteuid() == 0
        # as root the cluster belongs to nobody, who must be able to reach it: not under a private TMPDIR
        base = "/tmp" if self.as_root and os.path.isdir("/tmp") else None
        self.root = Path(tempfile.mkdtemp(prefix="ta-pg-", dir=base))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self._db_counter = itertools.count(1)
        if self.as_root:
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, _RUN_AS)

    def _cmd(self, *args: str) -> list[str]:
        return ["runuser", "-u", _RUN_AS, "--", *args] if self.as_root else list(args)

    def start(self) -> None:
        subprocess.run(
            self._cmd(str(self.bindir / "initdb"), "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
                      "--encoding=UTF8", "--locale=C", "--no-sync"),
            check=True, capture_output=True, cwd=self.root,
        )
        opts = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.data} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        subprocess.run(
            self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w",
                      "-t", "60", "-o", opts, "start"),
            check=True, capture_output=True, cwd=self.root,
        )

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        import psycopg

        name = f"t{os.getpid()}_{next(self._db_counter)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(
            self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"),
            capture_output=True, cwd=self.root,
        )
        deadline = time.monotonic() + 120  # only catches a hang
        while (self.data / "postmaster.pid").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        shutil.rmtree(self.root, ignore_errors=True)


_shared: dict[str, object] = {"server": None, "users": 0}


@pytest.fixture(scope="session")
def pg_server():
    """One server for the whole run, however many test modules alias this fixture."""
    if _shared["server"] is None:
        server = PgServer()
        try:
            server.start()
        except subprocess.CalledProcessError as exc:
            log = server.log.read_text(errors="replace")[-2000:] if server.log.exists() else ""
            server.stop()
            pytest.fail(f"Could not start the test PostgreSQL server: {exc.stderr!r}\n{log}")
        _shared["server"] = server
    _shared["users"] += 1
    yield _shared["server"]
    _shared["users"] -= 1
    if _shared["users"] == 0:
        _shared["server"].stop()
        _shared["server"] = None


@pytest.fixture
def pg_url(pg_server) -> str:
    """A fresh, empty database on the session's server (this process's pools on it closed after)."""
    url = pg_server.create_database()
    yield url
    from tradingagents.storage.pg import close_databases

    close_databases()
