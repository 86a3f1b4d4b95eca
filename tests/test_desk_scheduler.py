"""Schedules and the scheduler: due times on trading days, one run per due time per desk, digests that
reach a real local SMTP server and a local webhook receiver, retries recorded, three failures pause."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.desk_receivers import SMTPReceiver, WebhookReceiver
from tradingagents import storage
from tradingagents.cli import main
from tradingagents.desk import senders

ROOT = Path(__file__).resolve().parents[1]
MONDAY = "2024-05-13T07:31+01:00"
SATURDAY = "2024-05-11T07:31+01:00"


@pytest.fixture(autouse=True)
def _quick(monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_SELECTED_ANALYSTS", "market")  # the offline team, one analyst: seconds
    monkeypatch.setattr(senders, "RETRY_BACKOFF_S", 0.05)


def _once(now: str, capsys) -> tuple[int, list[dict]]:
    capsys.readouterr()
    code = main(["scheduler", "--once", "--now", now, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _add_morning(capsys, *extra: str) -> None:
    storage.save_watchlist("morning", "NVDA,AAPL")
    assert main(["schedule", "add", "morning", "--watchlist", "@morning", "--at", "07:30", "--tz", "Europe/London",
                 *extra]) == 0
    capsys.readouterr()


def test_a_weekday_job_runs_on_monday_on_fridays_session_and_tells_smtp_and_the_webhook(monkeypatch, capsys):
    with SMTPReceiver() as smtp, WebhookReceiver() as hook:
        monkeypatch.setenv("TRADINGAGENTS_SMTP_URL", f"smtp://127.0.0.1:{smtp.port}")
        _add_morning(capsys, "--email", "desk@example.com", "--email", "pm@example.com", "--webhook", hook.url)

        # Saturday: no session, nothing runs, and it says why
        code, reports = _once(SATURDAY, capsys)
        assert code == 0 and [r["status"] for r in reports] == ["skipped"]
        assert "no session on Saturday 2024-05-11" in reports[0]["message"]
        assert smtp.messages == [] and hook.posts == []

        # Monday 07:31 London: settle, then the watchlist on the last closed session, Friday 2024-05-10
        code, reports = _once(MONDAY, capsys)
        assert code == 0
        (report,) = reports
        assert report["status"] == "ran" and report["session"] == "2024-05-10"
        assert [(o["ticker"], o["status"]) for o in report["outcomes"]] == [("NVDA", "done"), ("AAPL", "done")]
        for ticker in ("NVDA", "AAPL"):
            assert storage.load_run(None, ticker, "2024-05-10")["rating"]
        # one digest by e-mail to both recipients, naming every ticker; the webhook gets the same
        assert len(smtp.messages) == 1
        mail = smtp.messages[0]
        assert "desk@example.com" in mail["To"] and "pm@example.com" in mail["To"]
        assert "morning" in mail["Subject"] and "2024-05-10" in mail["Subject"]
        (text,) = smtp.texts()
        assert "NVDA" in text and "AAPL" in text
        assert len(hook.posts) == 1 and "NVDA" in hook.posts[0]["text"] and "AAPL" in hook.posts[0]["text"]
        assert hook.posts[0]["digest"]["session"] == "2024-05-10"
        assert {d["channel"]: d["ok"] for d in report["deliveries"]} == {"email": True, "webhook": True}

        # the same --once again: the job ran for this due time, it does not run twice
        code, reports = _once("2024-05-13T07:45+01:00", capsys)
        assert [r["status"] for r in reports] == ["not_due"] and "already ran today" in reports[0]["message"]
        assert len(smtp.messages) == 1 and len(hook.posts) == 1

        # the digest is kept for the app, its deliveries recorded
        from tradingagents.storage.desk import open_desk_docs

        kept = open_desk_docs(None).get(report["digest"])
        assert "<html" in kept["html"] and "NVDA" in kept["html"] and all(d["ok"] for d in kept["deliveries"])


def test_two_schedulers_at_the_same_time_run_the_job_once(ta_home, capsys):
    with WebhookReceiver() as hook:
        _add_morning(capsys, "--webhook", hook.url)
        env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home), "TRADINGAGENTS_SELECTED_ANALYSTS": "market"}
        cmd = [sys.executable, "-m", "tradingagents", "scheduler", "--once", "--now", MONDAY, "--json"]
        procs = [subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        results = [p.communicate(timeout=300) for p in procs]
        statuses = sorted(json.loads(out)[0]["status"] for out, _err in results)
        assert statuses[0] in ("claimed", "not_due") and statuses[1] == "ran", results
        assert len(hook.posts) == 1


def test_a_run_missed_while_the_scheduler_was_down_runs_once_at_start_and_says_so(capsys):
    from tradingagents.desk.scheduler import run_due
    from tradingagents.desk.schedules import add_schedule

    storage.save_watchlist("morning", "NVDA")
    add_schedule(None, {"name": "morning", "watchlist": "@morning", "at": "07:30", "tz": "Europe/London"},
                 now=dt.datetime(2024, 5, 1, tzinfo=dt.UTC))
    lines: list[str] = []
    saturday_noon = dt.datetime.fromisoformat("2024-05-11T12:00+01:00")
    (report,) = run_due(None, saturday_noon, on_line=lines.append)
    assert report.status == "ran" and "missed at 2024-05-10 07:30" in report.message
    assert report.session == "2024-05-09"  # Friday's 07:30 job analyses Thursday's close
    (again,) = run_due(None, saturday_noon + dt.timedelta(hours=1))
    assert again.status == "skipped"


def test_webhook_failures_are_retried_and_recorded_and_three_failed_runs_pause_the_job(capsys):
    from tradingagents.desk.scheduler import STATE_DOC
    from tradingagents.desk.schedules import list_schedules
    from tradingagents.storage.desk import open_desk_docs

    storage.save_watchlist("bad", "NVDA")
    with WebhookReceiver(fail=2) as hook:
        assert main(["schedule", "add", "bad", "--watchlist", "@bad", "--at", "07:30", "--tz", "Europe/London",
                     "--webhook", hook.url]) == 0
        storage.save_watchlist("bad", "ZZZQ")  # a ticker the demo market does not list: every run fails
        for day in ("13", "14", "15"):
            code, reports = _once(f"2024-05-{day}T08:00+01:00", capsys)
            assert reports[0]["status"] == "ran" and code == 2
        state = open_desk_docs(None).get(STATE_DOC)["jobs"]["bad"]
        first = state["history"][0]["deliveries"][0]
        assert first == {"channel": "webhook", "ok": True, "attempts": 3, "error": None}  # two 500s, then delivered
        assert state["failures"] == 3 and list_schedules()[0].paused
        assert any("paused" in p["text"] for p in hook.posts)
        code, reports = _once("2024-05-16T08:00+01:00", capsys)
        assert reports[0]["status"] == "paused"
        assert main(["schedule", "resume", "bad"]) == 0
        assert not list_schedules()[0].paused


def test_an_unreachable_webhook_is_recorded_and_the_run_is_kept(capsys):
    from tradingagents.desk.scheduler import run_due
    from tradingagents.desk.schedules import add_schedule

    storage.save_watchlist("morning", "NVDA")
    add_schedule(None, {"name": "morning", "watchlist": "@morning", "at": "07:30", "tz": "Europe/London",
                        "webhook": "http://127.0.0.1:9/hook", "emails": ["desk@example.com"]})
    (report,) = run_due(None, dt.datetime.fromisoformat(MONDAY))
    assert report.status == "ran" and storage.load_run(None, "NVDA", "2024-05-10")["rating"]
    by = {d["channel"]: d for d in report.deliveries}
    assert by["webhook"]["ok"] is False and by["webhook"]["attempts"] == senders.ATTEMPTS and by["webhook"]["error"]
    assert by["email"]["ok"] is False and "smtp_url is not set" in by["email"]["error"]


def test_email_over_starttls_with_a_login(tmp_path, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "cert.pem"))  # the self-signed certificate is trusted
    with SMTPReceiver(tls_dir=tmp_path) as smtp:
        url = f"smtp://desk@127.0.0.1:{smtp.port}"
        refused = senders.send_email(url, ["pm@example.com"], "s", "t", environ={}, attempts=2)
        assert refused.ok is False and refused.attempts == 2 and "TRADINGAGENTS_SMTP_PASSWORD is not set" in refused.error
        sent = senders.send_email(url, ["pm@example.com"], "Digest", "NVDA: Buy", "<p>NVDA: Buy</p>",
                                  environ={"TRADINGAGENTS_SMTP_PASSWORD": "s3cret"})
        assert sent.ok and sent.attempts == 1 and smtp.logins == ["desk"]
        assert [text.strip() for text in smtp.texts()] == ["NVDA: Buy"]


@pytest.mark.parametrize("args, needle", [
    (["--at", "25:00"], "HH:MM"),
    (["--tz", "Mars/Olympus"], "not a time zone"),
    (["--watchlist", "@nope"], "not saved"),
    (["--email", "not-an-address"], "not an e-mail"),
    (["--webhook", "ftp://x"], "http(s) URL"),
])
def test_schedule_add_refuses_bad_input_with_exit_2(args, needle, capsys):
    storage.save_watchlist("morning", "NVDA")
    base = {"--watchlist": "@morning", "--at": "07:30", "--tz": "Europe/London"}
    argv = ["schedule", "add", "job"]
    for flag, value in base.items():
        if flag not in args:
            argv += [flag, value]
    assert main(argv + args) == 2
    assert needle in capsys.readouterr().err
    assert main(["schedule", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_smtp_url_is_checked_and_never_carries_a_password(monkeypatch):
    from tradingagents.config import resolve_config
    from tradingagents.errors import ConfigError

    assert resolve_config({"smtp_url": "smtp://desk@mail.example.com:587"})["smtp_url"].endswith(":587")
    with pytest.raises(ConfigError, match="TRADINGAGENTS_SMTP_PASSWORD"):
        resolve_config({"smtp_url": "smtp://desk:hunter2@mail.example.com:587"})
    with pytest.raises(ConfigError, match="not a mail server URL"):
        resolve_config({"smtp_url": "http://mail.example.com"})


def test_the_scheduler_service_looks_at_the_jobs_and_stops_on_sigterm(ta_home):
    import signal

    env = {**os.environ, "TRADINGAGENTS_HOME": str(ta_home)}
    proc = subprocess.Popen([sys.executable, "-m", "tradingagents", "scheduler", "--poll", "0.2"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "The scheduler is running" in proc.stdout.readline()
        assert "No scheduled job" in proc.stdout.readline()  # its first look at the jobs
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_failed_delivery_is_sent_again_at_the_next_look(capsys):
    from tradingagents.storage.desk import open_desk_docs

    with WebhookReceiver(fail=senders.ATTEMPTS) as hook:  # down for the run's own tries
        _add_morning(capsys, "--webhook", hook.url)
        code, reports = _once(MONDAY, capsys)
        (delivery,) = reports[0]["deliveries"]
        assert reports[0]["status"] == "ran" and delivery["ok"] is False and hook.posts == []
        code, reports = _once("2024-05-13T07:40+01:00", capsys)  # the next look: nothing due, the digest again
        assert reports[0]["status"] == "not_due"
        assert len(hook.posts) == 1 and "NVDA" in hook.posts[0]["text"]
        kept = open_desk_docs(None).get("digest.morning.20240513T0630")
        assert [(d["channel"], d["ok"], d["redeliveries"]) for d in kept["deliveries"]] == [("webhook", True, 1)]
        _once("2024-05-13T07:50+01:00", capsys)
        assert len(hook.posts) == 1  # delivered: never sent twice


def test_a_run_whose_scheduler_died_is_taken_over_and_a_live_one_is_left_alone(capsys):
    import socket

    from tradingagents.desk.scheduler import run_due
    from tradingagents.storage.desk import open_desk_docs

    _add_morning(capsys)
    storage.save_watchlist("morning", "NVDA")
    key = "morning@2024-05-13T06:30+00:00"
    docs = open_desk_docs(None)
    alive = {"host": socket.gethostname(), "pid": os.getpid(), "at": "2024-05-13T06:30:05+00:00"}
    assert docs.claim(key, alive)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TRADINGAGENTS_SELECTED_ANALYSTS", "market")
        (report,) = run_due(None, dt.datetime.fromisoformat(MONDAY))
        assert report.status == "claimed"  # its process is alive: running, not ours to take
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True)
        gone = {**alive, "pid": int(dead.stdout)}
        assert docs.takeover(key, docs.claimed(key), gone) and not docs.takeover(key, {"key": key}, alive)
        (report,) = run_due(None, dt.datetime.fromisoformat(MONDAY))
    assert report.status == "ran" and "did not finish: running it again" in report.message
    assert docs.claimed(key)["pid"] == os.getpid()


def test_a_job_due_on_a_market_holiday_runs_nothing_and_says_why(capsys):
    """Juneteenth 2024 (Wednesday 19 June) is a weekday without a New York session: nothing new to analyse."""
    _add_morning(capsys)
    code, reports = _once("2024-06-19T07:31+01:00", capsys)
    assert code == 0
    [report] = reports
    assert report["status"] == "skipped" and "XNYS has no session on Wednesday 2024-06-19" in report["message"]
    assert "market holiday" in report["message"] and not storage.list_runs({})
    # the holiday is recorded as handled: the next morning runs its own due time, not a "missed" holiday
    code, reports = _once("2024-06-20T07:31+01:00", capsys)
    assert reports[0]["status"] == "ran" and reports[0]["due"].startswith("2024-06-20")
    assert "missed" not in reports[0]["message"]


def test_the_exchange_of_a_ticker_follows_its_suffix():
    from tradingagents.desk.scheduler import closed_on, exchange_of

    assert [exchange_of(t) for t in ("NVDA", "BRK-B", "0700.HK", "VOD.L", "7203.T", "RY.TO")] == \
        ["XNYS", "XNYS", "XHKG", "XLON", "XTKS", "XTSE"]
    assert closed_on(["VOD.L"], dt.date(2024, 5, 6)) == "XLON"  # the early May bank holiday
    assert closed_on(["NVDA"], dt.date(2024, 5, 6)) is None
    assert closed_on(["NVDA"], dt.date(2024, 5, 11)) is None  # a weekend is the job's days' business
