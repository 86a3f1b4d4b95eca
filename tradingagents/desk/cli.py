"""``python -m tradingagents book …``, ``schedule …`` and ``scheduler …``: the desk's command line.

``book import FILE [--cash N] [--currency USD] [--max-weight 0.10]`` replaces the book's positions with a
broker's CSV (``ticker,shares,cost_basis``; a file with a bad row is refused with its line numbers,
exit 2); ``book show [--json]`` prints it (``{"positions": [{"ticker", "shares", "cost_basis"}], "cash",
"currency", "limits": {"max_weight"}}``). Exit codes as everywhere (``errors.exit_code_for``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tradingagents.config import add_flags, resolve_config, ui_translator
from tradingagents.errors import EXIT_BAD_INPUT, EXIT_OK, ValidationError, exit_code_for
from tradingagents.i18n import N_, Translator

__all__ = ["book_command", "schedule_command", "scheduler_command"]


def _explain(exc: BaseException, t: Translator) -> int:
    if isinstance(exc, BrokenPipeError):
        raise exc
    code = exit_code_for(exc)
    what = {EXIT_BAD_INPUT: N_("Bad input"), 3: N_("Market data unavailable"), 4: N_("LLM failure"),
            7: N_("Desk database unavailable")}.get(code, N_("Error"))
    print(t("{headline}: {message}", headline=t(what), message=" ".join(str(exc).split())), file=sys.stderr)
    if code == 1:
        import traceback

        traceback.print_exc()
    return code


def _home_flag(p: argparse.ArgumentParser) -> None:
    add_flags(p, ("home",), help={"home": "the home folder (default: TRADINGAGENTS_HOME or ~/.tradingagents)"})


def _config(args: argparse.Namespace) -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    if getattr(args, "home", None):
        cfg["home"] = args.home
    return resolve_config(cfg)


# ---------------------------------------------------------------------------- book
def book_text(book, t: Translator) -> str:
    """The book as a table for a terminal: each position, then cash, currency and limits."""
    from tradingagents import figures

    lines = [t("Book ({currency}): {n} position(s), cash {cash}", currency=book.currency, n=len(book.positions),
               cash=figures.price(book.cash, book.currency))]
    lines.append(f"  {t('Ticker'):<12} {t('Shares'):>14} {t('Cost basis'):>14}")
    for p in book.positions:
        lines.append(f"  {p.ticker:<12} {figures.compact(p.shares):>14} {figures.plain_price(p.cost_basis):>14}")
    limits = t("Limit per position {limit}, target weight {target}", limit=figures.pct(book.max_weight, signed=False),
               target=figures.pct(book.target, signed=False))
    if book.max_sector_weight is not None:
        limits += t("; ") + t("limit per sector {limit}", limit=figures.pct(book.max_sector_weight, signed=False))
    lines.append(limits)
    return "\n".join(lines)


def book_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m tradingagents book",
                                description="The desk's book: positions, cash, currency and limits.")
    sub = p.add_subparsers(dest="action", required=True)
    imp = sub.add_parser("import", help="replace the positions with a broker's CSV (ticker,shares,cost_basis)")
    imp.add_argument("file", help="CSV with a header naming ticker, shares, cost_basis (per share); other columns "
                     "are ignored")
    imp.add_argument("--cash", type=float, default=None, help="cash in the book's currency (default: kept)")
    imp.add_argument("--currency", default=None, help="the book's base currency, e.g. USD (default: kept, else USD)")
    imp.add_argument("--max-weight", type=float, default=None,
                     help="the largest weight of one position, 0-1 (default: kept, else 0.10)")
    _home_flag(imp)
    show = sub.add_parser("show", help="print the book")
    show.add_argument("--json", action="store_true", help="print it as JSON")
    _home_flag(show)
    args = p.parse_args(argv)
    t = ui_translator()
    try:
        cfg = _config(args)
        t = ui_translator(cfg)
        from tradingagents.storage.book import import_book_csv, load_book

        if args.action == "import":
            book = import_book_csv(cfg, args.file, cash=args.cash, currency=args.currency, max_weight=args.max_weight)
            print(t("Imported {n} position(s) from {file}.", n=len(book.positions), file=args.file), file=sys.stderr)
            print(book_text(book, t))
            return EXIT_OK
        book = load_book(cfg)
        if args.json:
            print(json.dumps(book.to_doc() if book is not None else None, indent=1))
        elif book is None:
            print(t("No book yet: import one with 'python -m tradingagents book import FILE'."))
        else:
            print(book_text(book, t))
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message and an exit code
        return _explain(exc, t)


def _job_line(job, t: Translator) -> str:
    days = t("weekdays") if job.days_text() == "weekdays" else job.days_text()
    line = t("{name}: {watchlist} at {at} {tz} on {days}", name=job.name, watchlist=job.watchlist, at=job.at, tz=job.tz,
             days=days)
    extras = [*job.emails, *([job.webhook] if job.webhook else [])]
    if extras:
        line += t("; ") + t("tells {who}", who=", ".join(extras))
    if job.max_cost_usd is not None:
        line += t("; ") + t("budget ${cost}", cost=f"{job.max_cost_usd:g}")
    if job.paused:
        line += t("; ") + t("paused")
    return line


def schedule_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="python -m tradingagents schedule",
                                description="Scheduled jobs: a watchlist analysed at a time of day, on trading days.")
    sub = p.add_subparsers(dest="action", required=True)
    add = sub.add_parser("add", help="add a job")
    add.add_argument("name")
    add.add_argument("--watchlist", required=True, help="@name of a saved watchlist, or tickers: NVDA,AAPL")
    add.add_argument("--at", required=True, help="the time of day, HH:MM (24 hours), in --tz")
    add.add_argument("--tz", required=True, help="an IANA time zone: Europe/London, America/New_York, Asia/Tokyo")
    add.add_argument("--days", default=None, help="the days it runs: weekdays (default), mon-fri, mon,wed,fri, daily")
    add.add_argument("--email", action="append", default=[], help="send the digest to this address (repeatable; "
                     "the mail server is smtp_url / TRADINGAGENTS_SMTP_URL)")
    add.add_argument("--webhook", default=None, help="post the digest to this URL (Slack- or Teams-compatible JSON)")
    add.add_argument("--max-cost", type=float, default=None, help="the job's budget per run, in USD")
    add.add_argument("--replace", action="store_true", help="replace a job of the same name")
    _home_flag(add)
    lst = sub.add_parser("list", help="list the jobs")
    lst.add_argument("--json", action="store_true")
    _home_flag(lst)
    for action, what in (("remove", "remove a job"), ("pause", "pause a job"), ("resume", "resume a paused job")):
        one = sub.add_parser(action, help=what)
        one.add_argument("name")
        _home_flag(one)
    args = p.parse_args(argv)
    t = ui_translator()
    try:
        cfg = _config(args)
        t = ui_translator(cfg)
        from tradingagents.desk import schedules

        if args.action == "add":
            job = schedules.add_schedule(cfg, {"name": args.name, "watchlist": args.watchlist, "at": args.at,
                                               "tz": args.tz, "days": args.days, "emails": args.email,
                                               "webhook": args.webhook, "max_cost_usd": args.max_cost},
                                         replace=args.replace)
            print(t("Added: {line}", line=_job_line(job, t)))
            if job.emails and not cfg.get("smtp_url"):
                print(t("Note: smtp_url is not set, so the e-mails cannot be sent until it is "
                        "(TRADINGAGENTS_SMTP_URL=smtp://user@host:587)."), file=sys.stderr)
            return EXIT_OK
        if args.action == "list":
            jobs = schedules.list_schedules(cfg)
            if args.json:
                print(json.dumps([j.to_doc() for j in jobs], indent=1))
            elif not jobs:
                print(t("No scheduled job: add one with 'python -m tradingagents schedule add'."))
            for job in [] if args.json else jobs:
                print(_job_line(job, t))
            return EXIT_OK
        if args.action == "remove":
            if not schedules.remove_schedule(cfg, args.name):
                raise ValidationError(t("No job named {name} (python -m tradingagents schedule list).", name=args.name))
            print(t("Removed {name}.", name=args.name))
            return EXIT_OK
        job = schedules.set_paused(cfg, args.name, args.action == "pause")
        if job is None:
            raise ValidationError(t("No job named {name} (python -m tradingagents schedule list).", name=args.name))
        if args.action == "resume":
            from tradingagents.desk.scheduler import STATE_DOC
            from tradingagents.storage.desk import open_desk_docs

            def clear(old: Any) -> Any:  # a resumed job starts its count of failures again
                if isinstance(old, dict) and args.name in (old.get("jobs") or {}):
                    old["jobs"][args.name]["failures"] = 0
                return old

            open_desk_docs(cfg).update(STATE_DOC, clear)
        print(_job_line(job, t))
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message and an exit code
        return _explain(exc, t)


def scheduler_command(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="python -m tradingagents scheduler",
        description="The scheduler service: runs each job when it is due on the exchange's trading days (settle, "
        "then the watchlist on the last session), keeps and sends its digest. Run it beside the app (under "
        "systemd or the desk's process manager); two schedulers on one desk never run a job twice.")
    p.add_argument("--once", action="store_true", help="run what is due now (or at --now) and exit (tests, cron)")
    p.add_argument("--now", default=None, help="with --once: the time to act at, ISO with its offset "
                   "(2024-05-13T07:31+01:00)")
    p.add_argument("--poll", type=float, default=None, help="seconds between looks at the jobs (default 30)")
    p.add_argument("--json", action="store_true", help="with --once: print the reports as JSON")
    _home_flag(p)
    args = p.parse_args(argv)
    t = ui_translator()
    try:
        import datetime as dt

        from tradingagents.desk import scheduler

        cfg = _config(args)
        t = ui_translator(cfg)
        if args.now and not args.once:
            raise ValidationError(t("--now goes with --once (a service runs on the clock)."))
        from tradingagents.config import check_home

        check_home(cfg)
        from tradingagents.vendors import engine_notice

        notice = engine_notice(cfg, t)
        if notice:
            print(notice, file=sys.stderr, flush=True)

        def say(line: str) -> None:
            print(line, file=sys.stderr if args.json else sys.stdout, flush=True)

        if args.once:
            now = scheduler.parse_now(args.now) if args.now else dt.datetime.now(dt.UTC)
            reports = scheduler.run_due(cfg, now, on_line=say)
            if args.json:
                print(json.dumps([r.to_dict() for r in reports], indent=1, default=str))
            from tradingagents.batch import TickerOutcome, exit_code

            outcomes = [TickerOutcome(**o) for r in reports for o in r.outcomes]
            failed = any(r.status == "failed" for r in reports)
            return exit_code(outcomes) or (1 if failed else EXIT_OK)
        import threading

        from tradingagents.stop_signals import install_stop_handlers

        stop = threading.Event()
        install_stop_handlers(stop, "scheduler tick")
        say(t("The scheduler is running (Ctrl-C stops it)."))
        scheduler.serve(cfg, stop=stop, on_line=say, poll_s=args.poll or scheduler.POLL_S)
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message and an exit code
        return _explain(exc, t)
