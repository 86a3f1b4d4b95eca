"""The app runs on a password-protected desk database (scram-sha-256: the password must really be sent).

The shared test server trusts every login, so a password lost on the way (masked before use, as the
registry once did) would go unnoticed there; this server refuses a login without the right one.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from studio.jobs import JobRegistry
from tests import pg_server as _pg
from tradingagents import storage

PASSWORD = "s3cr3t-Desk-pw"


class PasswordServer(_pg.PgServer):
    def start(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD + "\n", encoding="utf-8")
        pwfile.chmod(0o644)
        subprocess.run(
            self._cmd(str(self.bindir / "initdb"), "-D", str(self.data), "-U", _pg.SUPERUSER,
                      "--auth=scram-sha-256", f"--pwfile={pwfile}", "--encoding=UTF8", "--locale=C", "--no-sync"),
            check=True, capture_output=True, cwd=self.root,
        )
        opts = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.data} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        subprocess.run(
            self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                      "-o", opts, "start"),
            check=True, capture_output=True, cwd=self.root,
        )

    def url(self, dbname: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{_pg.SUPERUSER}:{password}@127.0.0.1:{self.port}/{dbname}"


@pytest.fixture(scope="module")
def desk():
    server = PasswordServer()
    try:
        server.start()
    except subprocess.CalledProcessError as exc:
        server.stop()
        pytest.fail(f"Could not start the password-protected PostgreSQL server: {exc.stderr!r}")
    yield server
    from tradingagents.storage.pg import close_databases

    close_databases()
    server.stop()


def test_a_run_from_the_app_works_on_a_password_protected_desk(ta_home, desk):
    cfg = {"storage_url": desk.url()}
    reg = JobRegistry()
    job = reg.get(reg.start_run("NVDA", "2024-05-10", ["market"], cfg, owner="A"))
    assert job.wait(300) and job.status == "finished", job.error
    doc = storage.load_run(cfg, "NVDA", "2024-05-10")  # saved in the desk, read back with the password
    assert doc["rating"] and PASSWORD not in json.dumps(doc)
    assert [e["ticker"] for e in storage.open_memory_log(cfg).load_entries()] == ["NVDA"]


def test_a_wrong_password_fails_the_job_with_a_plain_message(ta_home, desk):
    reg = JobRegistry()
    wrong = desk.url(password="not-the-password")
    try:
        job = reg.get(reg.start_run("NVDA", "2024-05-10", ["market"], {"storage_url": wrong}, owner="A"))
    except Exception as exc:  # refused before a thread started: as plain
        message = str(exc)
    else:
        assert job.wait(300) and job.status == "failed"
        message = str(job.error)
    assert "desk database" in message and "not-the-password" not in message and "Traceback" not in message


def test_a_wrong_password_on_the_command_line_is_exit_7_and_one_line(ta_home, desk, monkeypatch, capsys):
    from tradingagents import cli
    from tradingagents.errors import EXIT_STORAGE

    monkeypatch.setenv("TRADINGAGENTS_STORAGE_URL", desk.url(password="not-the-password"))
    code = cli.main(["NVDA", "2024-05-10", "--analysts", "market"])
    err = capsys.readouterr().err
    assert code == EXIT_STORAGE, err
    assert "Traceback" not in err and "not-the-password" not in err and "password authentication failed" in err
