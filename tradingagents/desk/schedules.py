"""Scheduled jobs: a watchlist analysed at a time of day in a time zone, on the exchange's trading days.

A ``Schedule`` is a name, what to run (``@watchlist`` or tickers), ``at`` (HH:MM), ``tz`` (an IANA zone),
``days`` (weekdays by default), who is told (``emails``, ``webhook``), a budget (``max_cost_usd``) and
whether it is ``paused`` (three failures in a row pause a job). They are one desk document,
``schedules`` (``storage/desk.py``: ``<desk_dir>/schedules.json`` or ``ta_desk_docs``), checked on
every read and write. ``occurrences`` / ``latest_occurrence`` give the job's due times.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tradingagents.config import resolve_config
from tradingagents.errors import ValidationError
from tradingagents.storage.desk import open_desk_docs
from tradingagents.storage.watchlists import valid_name, valid_tickers

__all__ = ["DAY_NAMES", "Schedule", "add_schedule", "latest_occurrence", "list_schedules", "parse_days",
           "remove_schedule", "set_paused", "update_schedule"]

DOC = "schedules"
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAYS = (0, 1, 2, 3, 4)
_TIME = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]{1,255}$")
MAX_RECIPIENTS = 50


@dataclass(frozen=True)
class Schedule:
    name: str
    watchlist: str  # "@name" (a saved watchlist, read when the job runs) or "NVDA,AAPL"
    at: str  # HH:MM in tz
    tz: str
    days: tuple[int, ...] = WEEKDAYS
    emails: tuple[str, ...] = ()
    webhook: str | None = None
    max_cost_usd: float | None = None
    paused: bool = False
    created_at: str = ""  # ISO time, UTC
    created_by: str = ""

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.tz)

    @property
    def time(self) -> dt.time:
        hour, minute = self.at.split(":")
        return dt.time(int(hour), int(minute))

    def tickers(self, config: Mapping[str, Any] | None = None) -> list[str]:
        """The job's tickers now (a saved watchlist is read when the job runs)."""
        if self.watchlist.startswith("@"):
            from tradingagents.storage import list_watchlists

            lists = list_watchlists(config)
            name = self.watchlist[1:]
            if name not in lists:
                raise ValidationError(f"The job {self.name} runs the watchlist @{name}, which is not saved any more; "
                                      "save it on the Watchlist page or change the job.")
            return lists[name]
        return valid_tickers(self.watchlist)

    def days_text(self) -> str:
        if tuple(self.days) == WEEKDAYS:
            return "weekdays"
        return ",".join(DAY_NAMES[d] for d in self.days)

    def to_doc(self) -> dict[str, Any]:
        doc = asdict(self)
        doc["days"] = [DAY_NAMES[d] for d in self.days]
        doc["emails"] = list(self.emails)
        return doc


def parse_days(value: Any) -> tuple[int, ...]:
    """"weekdays", "mon-fri", "mon,wed,fri", "daily" or a list of day names → sorted day numbers."""
    if value is None or value == "":
        return WEEKDAYS
    parts: list[str] = value if isinstance(value, list | tuple) else re.split(r"[,\s]+", str(value).strip().lower())
    out: set[int] = set()
    for part in parts:
        part = str(part).strip().lower()[:3] if "-" not in str(part) else str(part).strip().lower()
        if not part:
            continue
        if part in ("wee", "weekdays"):
            out.update(WEEKDAYS)
        elif part in ("dai", "all", "every"):
            out.update(range(7))
        elif "-" in part:
            a, _, b = part.partition("-")
            if a[:3] not in DAY_NAMES or b[:3] not in DAY_NAMES:
                raise ValidationError(f"{part!r} is not a range of days such as mon-fri.")
            i, j = DAY_NAMES.index(a[:3]), DAY_NAMES.index(b[:3])
            out.update(range(i, j + 1) if i <= j else [*range(i, 7), *range(0, j + 1)])
        elif part in DAY_NAMES:
            out.add(DAY_NAMES.index(part))
        else:
            raise ValidationError(f"{part!r} is not a day: use mon … sun, a range such as mon-fri, or weekdays.")
    if not out:
        raise ValidationError("A job runs on at least one day of the week.")
    return tuple(sorted(out))


def _check_webhook(url: Any) -> str | None:
    if url is None or str(url).strip() == "":
        return None
    text = str(url).strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018
    except ValueError:
        raise ValidationError("The webhook is not a valid URL; use https://hooks.example.com/….") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or len(text) > 2000:
        raise ValidationError("The webhook must be an http(s) URL such as https://hooks.slack.com/services/….")
    return text


def schedule_from_doc(doc: Any) -> Schedule:
    if not isinstance(doc, Mapping):
        raise ValidationError("A job is an object with name, watchlist, at and tz.")
    name = valid_name(doc.get("name"))
    watchlist = str(doc.get("watchlist") or "").strip()
    if watchlist.startswith("@"):
        watchlist = "@" + valid_name(watchlist[1:])
    else:
        watchlist = ",".join(valid_tickers(watchlist))
    at = str(doc.get("at") or "").strip()
    m = _TIME.match(at)
    if not m:
        raise ValidationError(f"The time {at[:20]!r} is not HH:MM (24 hours), for example 07:30.")
    at = f"{int(m.group(1)):02d}:{m.group(2)}"
    tz = str(doc.get("tz") or "").strip()
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"{tz[:60]!r} is not a time zone: use an IANA name such as Europe/London, "
                              "America/New_York or Asia/Tokyo.") from None
    emails = []
    for e in doc.get("emails") or []:
        text = str(e).strip()
        if not _EMAIL.match(text):
            raise ValidationError(f"{text[:80]!r} is not an e-mail address.")
        if text.lower() not in (x.lower() for x in emails):
            emails.append(text)
    if len(emails) > MAX_RECIPIENTS:
        raise ValidationError(f"A job tells at most {MAX_RECIPIENTS} addresses.")
    cost = doc.get("max_cost_usd")
    if cost is not None:
        try:
            cost = float(cost)
        except (TypeError, ValueError):
            raise ValidationError(f"The budget {cost!r} is not a number of dollars.") from None
        if not (cost > 0 and cost < 1e7):
            raise ValidationError("The budget must be more than 0 dollars.")
    return Schedule(name=name, watchlist=watchlist, at=at, tz=tz, days=parse_days(doc.get("days")),
                    emails=tuple(emails), webhook=_check_webhook(doc.get("webhook")), max_cost_usd=cost,
                    paused=bool(doc.get("paused", False)), created_at=str(doc.get("created_at") or ""),
                    created_by=str(doc.get("created_by") or ""))


def _stored(doc: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(doc, Mapping) or not isinstance(doc.get("schedules"), Mapping):
        return {}
    return dict(doc["schedules"])


def list_schedules(config: Mapping[str, Any] | None = None) -> list[Schedule]:
    """The desk's jobs by name (a stored job that does not validate is left out)."""
    out = []
    for _name, doc in sorted(_stored(open_desk_docs(config).get(DOC)).items()):
        try:
            out.append(schedule_from_doc(doc))
        except ValidationError:
            continue
    return out


def add_schedule(config: Mapping[str, Any] | None, doc: Mapping[str, Any], *, replace: bool = False,
                 by: str | None = None, now: dt.datetime | None = None) -> Schedule:
    """Store a new job (``replace``: or replace the one of that name); a saved watchlist must exist."""
    from tradingagents.storage.audit import default_user, record_audit

    cfg = resolve_config(config)
    created = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).isoformat(timespec="seconds")
    job = schedule_from_doc({**dict(doc), "created_at": created, "created_by": by or default_user(cfg)})
    if job.watchlist.startswith("@"):
        job.tickers(cfg)  # the watchlist is saved now (it is read again when the job runs)

    def put(old: Any) -> dict[str, Any]:
        jobs = _stored(old)
        if job.name in jobs and not replace:
            raise ValidationError(f"There is already a job named {job.name}: remove it first, or choose another name.")
        jobs[job.name] = job.to_doc()
        return {"version": 1, "schedules": jobs}

    open_desk_docs(cfg).update(DOC, put)
    record_audit(cfg, "schedule_add", by=job.created_by, target=job.name, at=job.at, tz=job.tz,
                 watchlist=job.watchlist)
    return job


def update_schedule(config: Mapping[str, Any] | None, name: str, **changes: Any) -> Schedule | None:
    """Change fields of a stored job (None: no such job)."""
    name = valid_name(name)
    found: list[Schedule] = []

    def put(old: Any) -> dict[str, Any]:
        jobs = _stored(old)
        if name in jobs:
            job = schedule_from_doc({**jobs[name], **changes})
            jobs[name] = job.to_doc()
            found.append(job)
        return {"version": 1, "schedules": jobs}

    open_desk_docs(config).update(DOC, put)
    return found[0] if found else None


def set_paused(config: Mapping[str, Any] | None, name: str, paused: bool) -> Schedule | None:
    return update_schedule(config, name, paused=bool(paused))


def remove_schedule(config: Mapping[str, Any] | None, name: str, *, by: str | None = None) -> bool:
    from tradingagents.storage.audit import record_audit

    name = valid_name(name)
    removed: list[bool] = []

    def put(old: Any) -> dict[str, Any]:
        jobs = _stored(old)
        removed.append(jobs.pop(name, None) is not None)
        return {"version": 1, "schedules": jobs}

    open_desk_docs(config).update(DOC, put)
    if removed[0]:
        record_audit(config, "schedule_remove", by=by, target=name)
    return removed[0]


def occurrences(job: Schedule, start: dt.datetime, end: dt.datetime) -> Iterable[dt.datetime]:
    """The job's due times in [start, end], oldest first (aware datetimes in the job's zone)."""
    zone = job.zone
    day = start.astimezone(zone).date()
    last = end.astimezone(zone).date()
    while day <= last:
        if day.weekday() in job.days:
            when = dt.datetime.combine(day, job.time, tzinfo=zone)
            if start <= when <= end:
                yield when
        day += dt.timedelta(days=1)


def latest_occurrence(job: Schedule, now: dt.datetime) -> dt.datetime | None:
    """The job's last due time at or before ``now`` (within the last eight days), or None."""
    found = list(occurrences(job, now - dt.timedelta(days=8), now))
    return found[-1] if found else None

