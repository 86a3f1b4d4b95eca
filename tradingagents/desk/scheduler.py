"""The scheduler: a thin loop over the desk's due jobs, each settled first, then batched, then digested.

``run_due(config, now)`` looks at every job once, at the time ``now`` (aware), and says what it did:

* a job is due at its latest occurrence at or before ``now`` (``schedules.latest_occurrence``): today's
  (in the job's zone) once its time has come; an earlier day's only when the scheduler missed it while
  it was down and the job already existed then: it runs once at the next start, and says so;
* a day that is not one of the job's days (the exchange has no session: a weekend) runs nothing, and
  says why;
* before it runs, the job claims ``<job>@<due time>`` in storage (``storage/desk.py``: a file, or a row
  of the desk database): a second scheduler on the same desk (another process, another machine, a
  second ``--once``) finds the claim and leaves the job alone;
* a run settles the log's due decisions, then runs the watchlist (``batch.run_batch``) on the last
  session closed before the due day (``dataflows/session.py``: Monday 07:30 runs Friday's), under the
  job's budget; then its digest is kept (``digest.<job>.<stamp>`` with an index, ``digests``) and sent
  (``senders.py``: e-mail and/or webhook, retried; each delivery's outcome is recorded in the digest);
* a kept digest whose delivery failed is sent again at each of the next ``REDELIVERIES`` looks;
* a run with a failed ticker counts a failure, a clean one clears the count; three in a row pause the
  job and send an alert.

The state (the last due time run, the ratings of the last run, failures in a row) is the desk document
``scheduler``. ``serve(config)`` is the service: ``run_due`` every ``POLL_S`` seconds until stopped.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from tradingagents.config import resolve_config, ui_translator
from tradingagents.desk import digest as digests
from tradingagents.desk import senders
from tradingagents.desk.schedules import Schedule, latest_occurrence, list_schedules, set_paused
from tradingagents.errors import ValidationError
from tradingagents.i18n import N_, Translator
from tradingagents.storage.desk import open_desk_docs

log = logging.getLogger(__name__)

__all__ = ["MAX_FAILURES", "POLL_S", "JobReport", "parse_now", "run_due", "serve"]

STATE_DOC = "scheduler"
INDEX_DOC = "digests"
MAX_FAILURES = 3
POLL_S = 30.0
KEEP_DIGESTS = 200
KEEP_HISTORY = 30
STALE_CLAIM_S = 6 * 3600  # a claim from another machine this old, with its run unfinished, is taken over
REDELIVERIES = 3  # later looks that send a failed delivery again (each one attempt), after the run's own tries


@dataclass
class JobReport:
    job: str
    status: str  # ran | failed | skipped | not_due | claimed | paused
    message: str
    due: str | None = None
    session: str | None = None
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    digest: str | None = None  # the kept digest's document name

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_now(text: str) -> dt.datetime:
    """``--now``: an ISO time with its offset (2024-05-13T07:31+01:00); one without is refused."""
    try:
        when = dt.datetime.fromisoformat(str(text).strip())
    except ValueError:
        raise ValidationError(f"--now {str(text)[:40]!r} is not an ISO time such as 2024-05-13T07:31+01:00.") from None
    if when.tzinfo is None:
        raise ValidationError(f"--now {text!r} has no offset: write it as 2024-05-13T07:31+01:00 (or …Z for UTC).")
    return when


def _iso(when: dt.datetime | None) -> str | None:
    return when.isoformat(timespec="minutes") if when is not None else None


def _shown(when: dt.datetime, job: Schedule) -> str:
    return f"{when.strftime('%Y-%m-%d %H:%M')} {job.tz}"


def _state(config: Mapping[str, Any]) -> dict[str, Any]:
    doc = open_desk_docs(config).get(STATE_DOC)
    return dict(doc.get("jobs") or {}) if isinstance(doc, Mapping) else {}


def _save_state(config: Mapping[str, Any], name: str, fn: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    def put(old: Any) -> dict[str, Any]:
        jobs = dict(old.get("jobs") or {}) if isinstance(old, Mapping) else {}
        jobs[name] = fn(dict(jobs.get(name) or {}))
        return {"version": 1, "jobs": jobs}

    open_desk_docs(config).update(STATE_DOC, put)


WEEKDAY_NAMES = (N_("Monday"), N_("Tuesday"), N_("Wednesday"), N_("Thursday"), N_("Friday"), N_("Saturday"),
                 N_("Sunday"))


def _days(job: Schedule, t: Translator) -> str:
    return t("weekdays") if job.days_text() == "weekdays" else job.days_text()


def _due(job: Schedule, now: dt.datetime, state: Mapping[str, Any],
         t: Translator) -> tuple[dt.datetime | None, str, str]:
    """(the due time to run now or None, what to say, the report's status when nothing runs)."""
    local = now.astimezone(job.zone)
    latest = latest_occurrence(job, now)
    last = state.get("last_due")
    last_due = dt.datetime.fromisoformat(last) if last else None
    created = dt.datetime.fromisoformat(job.created_at) if job.created_at else None
    if latest is not None and last_due is not None and latest <= last_due:
        latest = None  # already run
    if latest is not None and latest.date() == local.date():
        if created is not None and created <= now and latest < created:
            return None, t("not due: added after today's {at}; it first runs on its next day", at=job.at), "not_due"
        return latest, t("due at {due}", due=_shown(latest, job)), "ran"
    if latest is not None and (last_due is not None or (created is not None and created <= latest)):
        return latest, t("missed at {due} while the scheduler was not running: running it once now",
                         due=_shown(latest, job)), "ran"
    if local.weekday() not in job.days:
        return None, t("nothing runs: no session on {day} {date} (the job runs on {days})",
                       day=t(WEEKDAY_NAMES[local.weekday()]), date=local.date().isoformat(), days=_days(job, t)), "skipped"
    if last_due is not None and last_due.astimezone(job.zone).date() == local.date():
        return None, t("already ran today at {at}", at=job.at), "not_due"
    return None, t("not due until {at} {tz}", at=job.at, tz=job.tz), "not_due"


EXCHANGE_OF_SUFFIX = {"": "XNYS", ".L": "XLON", ".T": "XTKS", ".HK": "XHKG", ".TO": "XTSE", ".AX": "XASX",
                      ".NS": "XBOM", ".BO": "XBOM", ".SS": "XSHG", ".SZ": "XSHG"}
"""A ticker's exchange suffix → its exchange calendar (``exchange_calendars``' ISO 10383 codes); the empty
suffix is New York's, as the benchmark map's default is SPY."""


def exchange_of(ticker: str) -> str:
    suffix = "." + ticker.rsplit(".", 1)[1].upper() if "." in ticker else ""
    return EXCHANGE_OF_SUFFIX.get(suffix, EXCHANGE_OF_SUFFIX[""])


def _calendar(code: str) -> Any:
    import exchange_calendars

    with _CALENDARS_LOCK:
        if code not in _CALENDARS:
            _CALENDARS[code] = exchange_calendars.get_calendar(code)
        return _CALENDARS[code]


_CALENDARS: dict[str, Any] = {}
_CALENDARS_LOCK = threading.Lock()


def closed_on(tickers: list[str], day: dt.date) -> str | None:
    """The exchange (of the watchlist's first ticker, as ``_session_before`` reads its sessions) when it has
    no session on ``day`` although it is a weekday: a market holiday. None when it trades, or when the
    calendar does not cover ``day``."""
    if not tickers or day.weekday() >= 5:
        return None
    code = exchange_of(tickers[0])
    try:
        return None if _calendar(code).is_session(day.isoformat()) else code
    except Exception:  # noqa: BLE001 - outside the calendar's years: the prices will tell
        return None


def _session_before(config: Mapping[str, Any], tickers: list[str], day: dt.date) -> str:
    """The last session closed before ``day`` (the exchange of the first ticker: its benchmark's prices)."""
    from tradingagents.config import benchmark_for
    from tradingagents.dataflows.interface import get_provider
    from tradingagents.dataflows.session import session_for

    provider = get_provider(config)
    before = (day - dt.timedelta(days=1)).isoformat()
    try:
        return session_for(provider, benchmark_for(tickers[0], config), before)[0]
    except Exception:  # noqa: BLE001 - no benchmark prices: the ticker's own
        return session_for(provider, tickers[0], before)[0]


def _orders_and_breaches(config: Mapping[str, Any], outcomes: list[dict[str, Any]],
                         session: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from tradingagents import storage
    from tradingagents.book import valuation
    from tradingagents.dataflows.interface import get_provider
    from tradingagents.graph.book_view import close_on
    from tradingagents.storage.book import load_book

    orders: dict[str, Any] = {}
    for o in outcomes:
        if o.get("rating"):
            try:
                orders[o["ticker"]] = (storage.load_run(config, o["ticker"], o.get("session") or session)
                                       .get("meta") or {}).get("order")
            except (FileNotFoundError, ValueError, OSError):
                orders[o["ticker"]] = None
    book = load_book(config)
    breaches = []
    if book is not None and book.positions:
        provider = get_provider(config)
        v = valuation(book, {t: close_on(provider, t, session) for t in book.tickers()})
        for ticker, row in v["positions"].items():
            if row["weight"] > book.max_weight + 1e-9:
                breaches.append({"ticker": ticker, "weight": row["weight"], "limit": book.max_weight})
    return orders, breaches


def _deliver(config: Mapping[str, Any], job: Schedule, subject: str, text: str, html: str | None,
             payload: Mapping[str, Any], *, channels: set[str] | None = None,
             attempts: int | None = None) -> list[dict[str, Any]]:
    out = []
    if job.emails and (channels is None or "email" in channels):
        if config.get("smtp_url"):
            out.append(senders.send_email(config["smtp_url"], list(job.emails), subject, text, html,
                                          attempts=attempts).to_dict())
        else:
            out.append(senders.Delivery("email", ", ".join(job.emails), False, 0,
                                        "smtp_url is not set (TRADINGAGENTS_SMTP_URL=smtp://user@host:587)").to_dict())
    if job.webhook and (channels is None or "webhook" in channels):
        out.append(senders.post_webhook(job.webhook, payload, attempts=attempts).to_dict())
    return out


def _keep_digest(config: Mapping[str, Any], name: str, doc: Mapping[str, Any]) -> None:
    docs = open_desk_docs(config)
    docs.update(name, lambda _old: dict(doc))

    def index(old: Any) -> dict[str, Any]:
        items = list(old.get("items") or []) if isinstance(old, Mapping) else []
        items = [i for i in items if i.get("name") != name]
        items.append({"name": name, "job": doc["digest"]["job"], "due": doc["digest"]["due"],
                      "session": doc["digest"]["session"], "alerts": len(doc["digest"]["alerts"]),
                      "created_at": doc["digest"]["created_at"]})
        return {"version": 1, "items": items[-KEEP_DIGESTS:]}

    docs.update(INDEX_DOC, index)


def _redeliver(config: Mapping[str, Any], jobs: Mapping[str, Schedule], say: Callable[[str], None],
               t: Translator) -> None:
    """Send each kept digest's failed deliveries again (one attempt per look, ``REDELIVERIES`` looks at most,
    to the job's recipients now); each outcome replaces the failed record, with its count."""
    docs = open_desk_docs(config)
    index = docs.get(INDEX_DOC)
    for item in list((index or {}).get("items") or [])[-20:] if isinstance(index, Mapping) else []:
        name = item.get("name")
        kept = docs.get(name) if name else None
        job = jobs.get(item.get("job"))
        if not isinstance(kept, Mapping) or job is None:
            continue
        failed = [d for d in kept.get("deliveries") or []
                  if not d.get("ok") and int(d.get("redeliveries") or 0) < REDELIVERIES]
        if not failed:
            continue
        digest = kept["digest"]
        again = []
        for d in kept.get("deliveries") or []:
            if d in failed:
                one = [x for x in _deliver(config, job, kept.get("subject") or "", kept.get("text") or "",
                                           kept.get("html"), digests.webhook_payload(digest, t),
                                           channels={d["channel"]}, attempts=1)]
                d = {**(one[0] if one else d), "redeliveries": int(d.get("redeliveries") or 0) + 1}
                say(t("{job}: the digest of {due} sent again by {channel}: {outcome}", job=job.name, due=digest["due"],
                      channel=t(senders.CHANNELS.get(d["channel"], "")),
                      outcome=t("delivered") if d["ok"] else t("failed")))
            again.append(d)
        docs.update(name, lambda old, again=again: {**(old or {}), "deliveries": again})


def _alert(config: Mapping[str, Any], job: Schedule, message: str, t: Translator) -> list[dict[str, Any]]:
    subject, text = digests.alert_text(job.name, message, t)
    return _deliver(config, job, subject, text, None, {"text": subject + "\n\n" + text, "alert": message})


def _run_job(config: Mapping[str, Any], job: Schedule, due: dt.datetime, said: str, now: dt.datetime,
             t: Translator, api_key: str | None, on_line: Callable[[str], None],
             should_stop: Callable[[], bool] | None = None) -> JobReport:
    from tradingagents.batch import run_batch
    from tradingagents.graph.settlement import Settler

    state = _state(config).get(job.name) or {}
    report = JobReport(job.name, "ran", said, due=_iso(due))
    try:
        tickers = job.tickers(config)
        session = _session_before(config, tickers, due.astimezone(job.zone).date())
        report.session = session
        on_line(t("{job}: {said}; settling, then {n} ticker(s) on the last closed session {session}", job=job.name,
                  said=said, n=len(tickers), session=session))
        settled = Settler(config, api_key=api_key).settle().settled
        outcomes = [o.to_dict() for o in run_batch(tickers, session, config, max_cost_usd=job.max_cost_usd,
                                                   api_key=api_key, should_stop=should_stop)]
    except Exception as exc:  # noqa: BLE001 - the job failed as a whole: counted, alerted, never a crash
        failure = t("the job failed: {error}", error=exc)
        report.status, report.message = "failed", f"{said}; {failure}"
        outcomes, settled = [], []
    report.outcomes = outcomes
    failed = report.status == "failed" or any(o["status"] not in ("done", "reused") for o in outcomes)
    failures = int(state.get("failures") or 0) + 1 if failed else 0
    previous = dict(state.get("ratings") or {})
    ratings = {**previous, **{o["ticker"]: o["rating"] for o in outcomes if o.get("rating")}}
    if outcomes:
        orders, breaches = _orders_and_breaches(config, outcomes, report.session or "")
        digest = digests.build_digest(job.name, _shown(due, job), report.session or "", outcomes, previous=previous,
                                      orders=orders, breaches=breaches, settled=settled,
                                      notes=[said], created_at=now.isoformat(timespec="seconds"))
        subject, text = digests.digest_subject(digest, t), digests.digest_text(digest, t)
        html = digests.digest_html(digest, t)
        report.digest = f"digest.{job.name}.{due.astimezone(dt.UTC).strftime('%Y%m%dT%H%M')}".replace(" ", "_")
        _keep_digest(config, report.digest, {"digest": digest, "html": html, "text": text, "subject": subject,
                                             "deliveries": []})
        report.deliveries = _deliver(config, job, subject, text, html, digests.webhook_payload(digest, t))
        _keep_digest(config, report.digest, {"digest": digest, "html": html, "text": text, "subject": subject,
                                             "deliveries": report.deliveries})
    else:
        report.deliveries = _alert(config, job, report.message, t)
    if failures >= MAX_FAILURES:
        set_paused(config, job.name, True)
        message = t("{job} failed {n} times in a row and is paused; fix the cause, then resume it (python -m "
                    "tradingagents schedule resume {job}).", job=job.name, n=failures)
        report.deliveries += _alert(config, job, message, t)
        report.message += "; " + message

    def update(s: dict[str, Any]) -> dict[str, Any]:
        history = list(s.get("history") or [])
        history.append({"due": report.due, "session": report.session, "status": report.status,
                        "failed": failed, "at": now.isoformat(timespec="seconds"), "digest": report.digest,
                        "deliveries": [{k: d[k] for k in ("channel", "ok", "attempts", "error")}
                                       for d in report.deliveries]})
        return {**s, "last_due": report.due, "last_session": report.session, "ratings": ratings,
                "failures": failures, "history": history[-KEEP_HISTORY:]}

    _save_state(config, job.name, update)
    return report


def run_due(config: Mapping[str, Any] | None, now: dt.datetime, *, api_key: str | None = None,
            on_line: Callable[[str], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> list[JobReport]:
    """Run every job due at ``now`` (see the module docstring); one ``JobReport`` per job. ``should_stop``
    stops a running batch at its runs' next checkpoint (its tickers count as failed; running again resumes)."""
    cfg = resolve_config(config)
    t = ui_translator(cfg)
    say = on_line or (lambda line: log.info("%s", line))
    if now.tzinfo is None:
        raise ValidationError("The scheduler's time must carry its offset.")
    reports = []
    states = _state(cfg)
    jobs = list_schedules(cfg)
    if not jobs:
        say(t("No scheduled job: add one with 'python -m tradingagents schedule add'."))
    _redeliver(cfg, {j.name: j for j in jobs}, say, t)
    for job in jobs:
        if job.paused:
            report = JobReport(job.name, "paused", t("paused after {n} failures in a row; resume it with "
                                                    "'python -m tradingagents schedule resume {job}'",
                                                    n=MAX_FAILURES, job=job.name))
        else:
            due, said, kind = _due(job, now, states.get(job.name) or {}, t)
            holiday = None
            if due is not None:
                try:
                    holiday = closed_on(job.tickers(cfg), due.astimezone(job.zone).date())
                except Exception:  # noqa: BLE001 - a watchlist that cannot be read fails in the run, said there
                    holiday = None
            if due is None:
                report = JobReport(job.name, kind, said)
            elif holiday:  # a market holiday on one of the job's days: nothing new to analyse, said and recorded
                day = due.astimezone(job.zone).date()
                report = JobReport(job.name, "skipped", t(
                    "nothing runs: {exchange} has no session on {day} {date} (a market holiday)", exchange=holiday,
                    day=t(WEEKDAY_NAMES[day.weekday()]), date=day.isoformat()), due=_iso(due))
                _save_state(cfg, job.name, lambda s, due=report.due: {**s, "last_due": due})
            else:
                key = f"{job.name}@{_iso(due.astimezone(dt.UTC))}"
                mine = {"host": socket.gethostname(), "pid": os.getpid(),
                        "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")}
                docs = open_desk_docs(cfg)
                if docs.claim(key, mine):
                    report = _run_job(cfg, job, due, said, now, t, api_key, say, should_stop)
                else:
                    old = docs.claimed(key) or {}
                    if _abandoned(old) and docs.takeover(key, old, mine):
                        said += "; " + t("the run claimed by process {pid} on {host} at {at} did not finish: running it "
                                         "again (finished tickers are reused)", pid=old.get("pid"),
                                         host=old.get("host"), at=old.get("at"))
                        report = _run_job(cfg, job, due, said, now, t, api_key, say, should_stop)
                    else:
                        report = JobReport(job.name, "claimed", t("already run (or running) for {due} by another "
                                                                  "scheduler of this desk", due=_shown(due, job)),
                                           due=_iso(due))
        say(f"{job.name}: {report.message}" if report.status != "ran" else _ran_line(report, t))
        reports.append(report)
    return reports


def _abandoned(claim: Mapping[str, Any]) -> bool:
    """A claim whose process is gone (on this machine), or from another machine and older than STALE_CLAIM_S;
    only asked of a due time whose run did not finish (the job's state has not recorded it)."""
    if claim.get("host") == socket.gethostname():
        try:
            os.kill(int(claim.get("pid")), 0)
        except ProcessLookupError:
            return True
        except (PermissionError, TypeError, ValueError):
            return False
        return False
    try:
        at = dt.datetime.fromisoformat(str(claim.get("at")))
    except ValueError:
        return False
    return (dt.datetime.now(dt.UTC) - at).total_seconds() > STALE_CLAIM_S


def _ran_line(report: JobReport, t: Translator) -> str:
    from tradingagents.i18n import rating_label

    ratings = ", ".join(f"{o['ticker']} {rating_label(o['rating'], t.lang) if o.get('rating') else o['status']}"
                        for o in report.outcomes)
    said = []
    for d in report.deliveries:
        channel = t(senders.CHANNELS.get(d["channel"], ""))
        said.append(t("{channel} sent", channel=channel) if d["ok"] else t("{channel} failed", channel=channel))
    sent = ", ".join(said) or t("none")
    return t("{job}: ran on {session}: {ratings}; digest sent: {sent}", job=report.job, session=report.session,
             ratings=ratings, sent=sent)


def serve(config: Mapping[str, Any] | None, *, stop: threading.Event, api_key: str | None = None,
          on_line: Callable[[str], None] | None = None, poll_s: float = POLL_S) -> None:
    """The service: ``run_due`` now (a run missed while it was down runs once), then every ``poll_s``; a line
    said at the last look is not said again (a job waiting for its time is said once)."""
    say = on_line or (lambda line: log.info("%s", line))
    before: set[str] = set()
    while not stop.is_set():
        now_said: set[str] = set()

        def tell(line: str, _before: set[str] = before, _now: set[str] = now_said) -> None:
            _now.add(line)
            if line not in _before:
                say(line)

        try:
            run_due(config, dt.datetime.now(dt.UTC), api_key=api_key, on_line=tell, should_stop=stop.is_set)
        except Exception as exc:  # noqa: BLE001 - a failing tick (the database away) must not end the service
            tell(f"scheduler: {exc}")
        before = now_said
        stop.wait(poll_s)
