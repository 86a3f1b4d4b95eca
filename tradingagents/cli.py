"""Command line: ``python -m tradingagents TICKER DATE [options]`` and ``python -m tradingagents settle``.

Runs for scheduled jobs: a live progress display on stderr, the rating and the report path on
stdout, and an exit code that says what failed.

The command's own messages (the first line about the offline engine and the demo market, progress,
results, summaries, hints, the headlines of failures) are in the config's ``ui_language``
(``TRADINGAGENTS_UI_LANGUAGE``; English by default; ``ui_translator``). The exit codes are the same
in every language. Not translated: argparse's help and usage text (``--help``, "error: the following
arguments are required"), and the sentences of errors raised inside the engine (a ``ConfigError``'s
or a data provider's text), which follow the headline in English; a saved report printed by ``show``
is the saved ``report.md``.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from tradingagents.config import EXECUTION_LABELS, ui_translator
from tradingagents.config.table import add_flags, config_from_args, flag_of, setting
from tradingagents.errors import (
    EXIT_BAD_INPUT,
    EXIT_BUSY,
    EXIT_DATA_UNAVAILABLE,
    EXIT_ERROR,
    EXIT_LLM_FAILURE,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_STORAGE,
    exit_code_for,
    is_resumable,
)
from tradingagents.i18n import N_, Translator, rating_label, translator
from tradingagents.stop_signals import install_stop_handlers
from tradingagents.terminal import reader_gone, safe_stdio, terminal_safe
from tradingagents.vendors import engine_notice

__all__ = ["EXIT_BAD_INPUT", "EXIT_BUSY", "EXIT_DATA_UNAVAILABLE", "EXIT_ERROR", "EXIT_LLM_FAILURE", "EXIT_OK",
           "EXIT_STOPPED", "EXIT_STORAGE", "SUBCOMMANDS", "engine_notice", "main", "notice_text", "terminal_safe",
           "ui_translator"]


notice_text = engine_notice
"""The offline-engine / demo-market line in a language (``vendors.engine_notice``)."""


EXIT_CODES_HELP = """exit codes:
  0  ok
  1  unexpected error (a bug: the message says where), or a disk that is full or refuses writes
  2  bad input or configuration (ticker, date, analysts, options, TRADINGAGENTS_* variables,
     unknown provider, missing API key, a ticker the demo market does not list) — nothing was run
  3  market data provider unavailable (the data source cannot serve the ticker), or a CSV file
     with unreadable rows, too little history or bars that are not daily — nothing was run
  4  LLM failure (a model call failed after retries: server error, timeout, refused connection);
     the run is checkpointed: run the same command again to resume where it failed
  5  stopped (Ctrl-C / SIGTERM) or the cost budget reached (--max-cost); run the same command
     again (with a larger --max-cost) to resume
  6  the same ticker and date is already being analysed (another process or the app)
  7  the desk database (storage_url / TRADINGAGENTS_STORAGE_URL) cannot be reached, refuses the
     login or was lost mid-run: one line names the host and what to check; what was checkpointed
     is kept: once it is back, run the same command again to resume
"""

EXAMPLES = """examples:
  python -m tradingagents NVDA 2024-05-10
  python -m tradingagents NVDA 2024-05-10 --analysts market,news --parallel
  python -m tradingagents 7203.T 2024-05-10 --provider openai --quick-model gpt-4o-mini
  python -m tradingagents settle            settle every pending decision that is due
  python -m tradingagents settle --ticker NVDA
  python -m tradingagents NVDA 2024-05-10 --provider openai --max-cost 0.50
  python -m tradingagents batch NVDA,AAPL,MSFT,0700.HK 2024-05-10 [--executor ray] [--max-cost 2]
  python -m tradingagents show NVDA 2024-05-10     print a saved run's report (files or the desk)
  python -m tradingagents ask NVDA 2024-05-10 --agent bear "Why margins?"   ask an agent of a saved run
  python -m tradingagents NVDA 2024-05-10 --note "Earnings next week; keep it small"   a note to both judges
  python -m tradingagents scores [--json]          who was right: per role, model, person; team vs you
  python -m tradingagents decide NVDA 2024-05-10 --rating Hold --reason "Earnings next week"   your own call
  python -m tradingagents book import positions.csv --cash 100000 --max-weight 0.08
  python -m tradingagents schedule add morning --watchlist @morning --at 07:30 --tz Europe/London
  python -m tradingagents scheduler                the scheduler service (runs due jobs, sends digests)
  python -m tradingagents ZZZQ 2024-05-10 --allow-synthetic   an invented instrument on the demo market

A date without a session (a weekend, a holiday) is analysed as the last session on or before it,
and saved, logged and settled under that session.
"""

# the settings' flags come from the config's settings table (tradingagents/config/table.py): one name per setting
SETTING_KEYS = ("selected_analysts", "llm_provider", "backend_url", "quick_think_llm", "deep_think_llm", "data_vendor",
                "allow_synthetic", "csv_skip_bad_rows", "max_debate_rounds", "max_risk_discuss_rounds",
                "analyst_execution", "analyst_data", "checkpoint_enabled", "llm_streaming", "max_cost_usd",
                "max_concurrent_llm_calls", "executor", "home")
"""Every setting a command of this CLI may take a flag for (a command's parser adds the ones it takes)."""
MODEL_KEYS = ("llm_provider", "backend_url", "quick_think_llm", "deep_think_llm")
DATA_KEYS = ("allow_synthetic", "csv_skip_bad_rows")  # the two input-honesty flags of every command reading data


def _providers_help() -> str:
    """The providers, each with its URL and default models (from the presets: one source)."""
    from tradingagents.llm_presets import PROVIDER_PRESETS

    lines = ["providers (--provider; default models unless --quick-model/--deep-model name others):"]
    for name, preset in PROVIDER_PRESETS.items():
        if name == "offline":
            models = "no model"
        elif preset["ask_server"]:
            models = "the model the server serves"
        else:
            models = f"{preset['quick_model']} / {preset['deep_model']}"
        key = f", key in {preset['key_env']}" if preset["needs_key"] else ""
        url = preset["base_url"] or ("--backend-url" if name != "offline" else "this machine")
        lines.append(f"  {name:<18} {models} ({url}{key})")
    return "\n".join(lines) + "\n"


def _data_flags(p: argparse.ArgumentParser) -> None:
    """The two input-honesty flags every command that reads market data takes."""
    add_flags(p, DATA_KEYS)


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tradingagents",
        description="Analyse TICKER as of DATE with the TradingAgents team and print the rating "
        "and the report path. Use 'python -m tradingagents settle' to settle past decisions.",
        epilog=EXAMPLES + "\n" + _providers_help() + "\n" + EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("ticker", help="ticker symbol, e.g. NVDA, BRK-B, 7203.T")
    p.add_argument("date", help="analysis date YYYY-MM-DD (today or earlier)")
    add_flags(p, ("selected_analysts", *MODEL_KEYS, "data_vendor", *DATA_KEYS), help={
        "llm_provider": "LLM provider: offline (default), openai, openai_compatible, ollama, … (see 'providers' below)",
        "quick_think_llm": "quick-thinking model name (default: the provider's, see below)",
        "deep_think_llm": "deep-thinking model name (default: the provider's, see below)"})
    p.add_argument("--asset-type", default="stock", help="stock (default), etf, index, fx or crypto")
    add_flags(p, ("max_debate_rounds", "max_risk_discuss_rounds", "analyst_execution", "analyst_data",
                  "checkpoint_enabled"))
    p.add_argument("--fresh", action="store_true", help="start afresh: discard a checkpoint of this run (kept by "
                   "a failure or a stop) instead of resuming it, e.g. after changing the provider or models")
    add_flags(p, ("llm_streaming", "max_cost_usd", "home"), help={
        "max_cost_usd": "USD budget of the run: stop at a checkpoint (exit 5) before a step would exceed it "
                        "(prices: llm_pricing / TRADINGAGENTS_LLM_PRICING)"})
    p.add_argument("--note", action="append", metavar="TEXT",
                   help="a note from the portfolio manager to both judges (the Research Manager and the Portfolio "
                   "Manager read it in their prompts; kept in the run's meta.pm_notes); repeatable")
    p.add_argument("--note-for", action="append", nargs=2, metavar=("JUDGE", "TEXT"),
                   help="a note to one judge: research_manager or portfolio_manager; repeatable")
    p.add_argument("--blind", action="store_true", help="blind run: the models see an alias, the date shifted by "
                   "28 years and rebased prices; what is shown and stored is mapped back (<home>/blind/)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display")
    p.add_argument("--debug", action="store_true", help="print every node's state update")
    return p


def _settle_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tradingagents settle",
        description="Settle every pending decision whose holding window has closed (return, alpha "
        "and a reflection written to the memory log; lessons into the role memories).",
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--ticker", help="only this ticker")
    add_flags(p, ("llm_provider", "backend_url", "quick_think_llm", "data_vendor", "csv_skip_bad_rows", "home"),
              help={"llm_provider": "LLM provider for the reflections (default offline)"})
    return p


# argparse attribute → (setting, flag) of the value flags (the MCP server reads its flags with it)
FLAGS = {row.dest: (row.key, row.flag) for row in map(setting, SETTING_KEYS)
         if row.dest and row.switch in (None, True) and not row.choices}
FLAG_NOTES = ("pm_notes", "--note/--note-for")
# setting → how the terminal names it (the resolver names the setting; the terminal speaks flags)
FLAG_OF_KEY = {key: flag_of(key) for key in SETTING_KEYS}
FLAG_OF_KEY.update({FLAG_NOTES[0]: FLAG_NOTES[1]})


def _config_from(args: argparse.Namespace) -> dict[str, Any]:
    """The partial config the flags set (validated by ``resolve_config``, which names the setting)."""
    cfg = config_from_args(args, SETTING_KEYS)
    notes = [{"before": judge, "note": text} for text in getattr(args, "note", None) or []
             for judge in ("research_manager", "portfolio_manager")]
    notes += [{"before": judge, "note": text} for judge, text in getattr(args, "note_for", None) or []]
    if notes:
        cfg["pm_notes"] = notes
    return cfg


def _notice(settings, t: Translator | None = None) -> None:
    """Print ``engine_notice`` on stderr, first, so the terminal says what it is running on."""
    line = notice_text(settings, t or ui_translator(settings))
    if line:
        _print(line, file=sys.stderr, flush=True)


def _settings_from(args: argparse.Namespace, *, check_llm: bool = True):
    """Resolved, validated settings and the LLM settings checked (key, URL): before anything runs."""
    return settings_for(_config_from(args), check_llm=check_llm)


def settings_for(config: dict[str, Any], *, check_llm: bool = True):
    """``config`` resolved and validated, the home writable and the LLM settings checked (key, URL, a local
    server that answers): what every command checks before any work (the MCP server's tools too)."""
    from tradingagents.config import check_home, resolve_config

    settings = resolve_config(config)
    check_home(settings)  # a home that cannot be written: exit 2 naming the folder, before any work
    if check_llm:
        from tradingagents.llm_clients.factory import check_llm_config, check_local_server

        check_llm_config(settings)
        check_local_server(settings)  # a local model server that is not up: said within 5 s, nothing ran
    return settings


def _print(*parts: object, **kwargs: Any) -> None:
    """``print`` with every part made ``terminal_safe``."""
    print(*(terminal_safe(p) for p in parts), **kwargs)


class _Progress:
    """A terse live display of the run events on stderr."""

    def __init__(self, stream=None, quiet: bool = False, t: Translator | None = None):
        self.stream = stream  # None: whatever sys.stderr is when an event arrives
        self.quiet = quiet
        self.t = t or translator("en")
        self.t0 = time.time()

    def __call__(self, event) -> None:
        if self.quiet:
            return
        t, tr = time.time() - self.t0, self.t
        d = event.data
        line = None
        if event.kind == "run_started":
            analysts = [str(a) for a in d.get("analysts", [])]
            if tr.lang != "en":  # the flag's keys in English (--analysts market,news), the roles' names otherwise
                from tradingagents import team

                analysts = [tr.p("role", team.ROLES[a].node) if a in team.ROLES else a for a in analysts]
            fields = {"ticker": d.get("ticker"), "date": d.get("date"), "analysts": ", ".join(analysts),
                      "execution": tr(EXECUTION_LABELS.get(str(d.get("analyst_execution")), str(d.get("analyst_execution"))))}
            line = (tr("resuming {ticker} {date}: {analysts} ({execution})", **fields) if d.get("resumed")
                    else tr("starting {ticker} {date}: {analysts} ({execution})", **fields))
            for warning in d.get("warnings") or []:
                line += "\n  " + tr("warning: {warning}", warning=warning)
            if d.get("earlier_engines"):  # a checkpoint begun under other models: say so, say how not to
                from tradingagents.storage import engine_label, engines_text

                line += "\n  " + tr("warning: this checkpoint was begun under other models ({earlier}); the rest "
                                    "runs on {current}, and the saved run records both. Run again with --fresh "
                                    "to start afresh on one.", earlier=engines_text(d["earlier_engines"], t=tr),
                                    current=engine_label(d.get("settings") or {}, t=tr))
        elif event.kind == "node_started" and not (event.node or "").startswith(("tools_", "Msg Clear")):
            line = f"… {tr.p('role', str(event.agent))} ({tr.p('team', str(event.team))})"
        elif event.kind == "node_finished" and not (event.node or "").startswith(("tools_", "Msg Clear")):
            line = f"✓ {tr.p('role', str(event.agent))} {d.get('duration_s', 0):.2f}s"
        elif event.kind == "tool_call":
            line = "  " + tr("tool {tool}({args}) → {chars} chars", tool=d.get("tool"),
                             args=_short_args(d.get("args")), chars=d.get("result_chars"))
        elif event.kind == "report":
            line = "  " + tr("wrote {key}", key=d.get("key"))
        elif event.kind == "debate_turn":
            debate = str(d.get("debate"))
            speaker = tr.p("speaker", str(d.get("speaker")))
            line = "  " + (tr("{debate} debate round {round}: {speaker}", debate=debate, round=d.get("round"),
                              speaker=speaker) if tr.lang == "en" or debate not in DEBATE_NAMES
                           else tr(DEBATE_NAMES[debate], round=d.get("round"), speaker=speaker))
        elif event.kind == "run_finished":
            line = tr("done: {rating} in {seconds}s", rating=rating_label(d.get("rating"), tr.lang),
                      seconds=d.get("elapsed_s"))
        elif event.kind == "run_failed":
            # what failed is said once, below the progress, with its headline and what to do
            line = tr("failed (resumable)") if d.get("resumable") else tr("failed")
        elif event.kind == "run_stopped":
            line = tr("stopped (resumable)") if d.get("resumable") else tr("stopped")
        if line:
            _print(f"[{t:6.1f}s] {line}", file=self.stream or sys.stderr, flush=True)


DEBATE_NAMES = {"invest": N_("research debate round {round}: {speaker}"),
                "risk": N_("risk debate round {round}: {speaker}")}
"""A debate turn's progress line outside English (English keeps ``invest debate round 1: Bull``)."""


def _short_args(args) -> str:
    if not isinstance(args, dict):
        return ""
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= 80 else text[:77] + "…"


_HEADLINES = {
    EXIT_BAD_INPUT: N_("Bad input"),
    EXIT_DATA_UNAVAILABLE: N_("Market data unavailable"),
    EXIT_LLM_FAILURE: N_("LLM failure"),
    EXIT_STOPPED: N_("Stopped"),
    EXIT_BUSY: N_("Busy"),
    EXIT_STORAGE: N_("Desk database unavailable"),
}
"""The headline of a failure by exit code (English; shown with ``t(headline)``)."""


def _explain(exc: BaseException, *, checkpointing: bool = True, resumes: bool = True,
             t: Translator | None = None) -> int:
    """Print what failed in the terminal's language (flags, variables) and return the exit code.

    The code comes from the error's class (``errors.exit_code_for``), never from its text.
    Only a resumable failure of a run (4, 5) says how to resume. The headline and the hints are in
    ``t``'s language (None: the config's ``ui_language``); the error's own sentence stays as raised.
    """
    if isinstance(exc, BrokenPipeError):
        raise exc  # stdout's reader is gone (``log | head``): main ends quietly
    t = t or ui_translator()
    code = exit_code_for(exc)
    headline = _headline(exc, code, t)
    disk = _disk_problem(exc, t)
    if disk is not None:
        _print(disk, file=sys.stderr)
        if resumes and checkpointing:
            print(t("The run is checkpointed: once there is room, run the same command again to resume."),
                  file=sys.stderr)
        return code
    if code == EXIT_STORAGE:  # not a bug: one plain line (host, what to check), no traceback
        _print(t("Desk database unavailable: {reason}", reason=" ".join(str(exc).split())), file=sys.stderr)
        return code
    _print(t("{headline}: {message}", headline=headline, message=exc), file=sys.stderr)
    if resumes and code in (EXIT_LLM_FAILURE, EXIT_STOPPED, EXIT_STORAGE) and is_resumable(exc):
        if checkpointing:
            print(t("The run is checkpointed: run the same command again to resume where it stopped."),
                  file=sys.stderr)
        else:
            print(t("Checkpointing is off (--no-checkpoint): running the same command again starts over."),
                  file=sys.stderr)
    if code == EXIT_ERROR:
        import traceback

        _print("".join(traceback.format_exception(exc)), end="", file=sys.stderr)
    return code


def _headline(exc: BaseException, code: int, t: Translator) -> str:
    from tradingagents.errors import ConfigError

    headline = t("Configuration error") if isinstance(exc, ConfigError) else t(_HEADLINES.get(code, N_("Error")))
    key = getattr(exc, "key", None)
    where = getattr(exc, "env_var", None) or FLAG_OF_KEY.get(key or "")
    if code == EXIT_BAD_INPUT and where and where not in str(exc):
        headline += f" ({where})"
    return headline


def failure_message(exc: BaseException, t: Translator | None = None) -> tuple[int, str]:
    """``(exit code, the line the CLI prints for exc)``, for a caller that reports failures another way
    (the MCP server's tool errors): the same headline and sentence as ``_explain``, without printing."""
    t = t or ui_translator()
    code = exit_code_for(exc)
    disk = _disk_problem(exc, t)
    if disk is not None:
        return code, disk
    if code == EXIT_STORAGE:
        return code, t("Desk database unavailable: {reason}", reason=" ".join(str(exc).split()))
    return code, t("{headline}: {message}", headline=_headline(exc, code, t), message=exc)


_DISK_ERRNOS = {"ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EIO"}


def _disk_problem(exc: BaseException, t: Translator | None = None) -> str | None:
    """A plain message for a write that the disk refused (full, read-only, no permission), or None."""
    import errno

    t = t or translator("en")
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and errno.errorcode.get(current.errno or -1) in _DISK_ERRNOS:
            full = current.errno in (errno.ENOSPC, errno.EDQUOT)
            if full:
                return (t("The disk is full writing {file}. Free some space on that disk, or use another home "
                          "folder (--home).", file=current.filename) if current.filename else
                        t("The disk is full. Free some space on that disk, or use another home folder (--home)."))
            return (t("A file could not be written ({reason}) writing {file}. Check the folder's permissions, or "
                      "use another home folder (--home).", reason=current.strerror, file=current.filename)
                    if current.filename else
                    t("A file could not be written ({reason}). Check the folder's permissions, or use another "
                      "home folder (--home).", reason=current.strerror))
        if "database or disk is full" in str(current):
            return t("The disk is full (the checkpoint database could not grow). Free some space, or use "
                     "another home folder (--home).")
        current = current.__cause__ or current.__context__
    return None


def cli_audit(settings, action: str, target: str, **detail: Any) -> None:
    """``storage.audit.record_command``: what this command does, in the desk's audit trail."""
    from tradingagents.storage.audit import record_command

    record_command(settings, action, target, **detail)


def run_command(argv: list[str]) -> int:
    parser = _run_parser()
    args = parser.parse_args(argv)
    stop = threading.Event()
    previous = install_stop_handlers(stop)
    checkpointing = not args.no_checkpoint
    t = ui_translator(home=args.home)
    try:
        from tradingagents.validation import validate_date, validate_ticker

        ticker = validate_ticker(args.ticker)
        date = validate_date(args.date)
        settings = _settings_from(args)  # every setting and the LLM key checked: exit 2 before any work
        t = ui_translator(settings)
        _notice(settings, t)
        checkpointing = bool(settings["checkpoint_enabled"])
        from tradingagents import storage
        from tradingagents.dataflows.interface import check_instrument

        check_instrument(settings, ticker)  # an unlisted demo ticker: exit 2 with suggestions, before any work
        storage.check_storage(settings)  # an unreachable desk database: exit 7, one line, before any work
        cli_audit(settings, "job_start", f"run {ticker} {date}", kind="run", blind=bool(args.blind))
        if args.blind:
            from tradingagents.graph.blind_run import run_blind

            out = run_blind(settings, ticker, date, asset_type=args.asset_type,
                            on_event=_Progress(quiet=args.quiet, t=t), should_stop=stop.is_set, debug=args.debug,
                            fresh=args.fresh)
            _print(t("Rating: {rating}", rating=_rating(out["rating"], t)))
            _print(t("Blind: the models saw {alias} on {date}", alias=out["alias"], date=out["blind_date"]))
            record = out.get("record") or {}
            meta = record.get("meta") or {}
            # the report file, as for any run (the desk's database: the command that prints it)
            _print(t("Report: {path}", path=record.get("report_path")
                     or f"python -m tradingagents show {ticker} {meta.get('date') or date}"))
            return EXIT_OK
        from tradingagents.graph.trading_graph import TradingAgentsGraph

        graph = TradingAgentsGraph(settings["selected_analysts"], debug=args.debug, config=settings)
        state, rating = graph.propagate(
            ticker, date, args.asset_type, on_event=_Progress(quiet=args.quiet, t=t), should_stop=stop.is_set,
            fresh=args.fresh,
        )
        _print(t("Rating: {rating}", rating=_rating(rating, t)))
        record = graph.last_run["record"]  # what the engine saved, as its terminal event carries it
        meta = record.get("meta") or {}
        for line in _result_lines(meta, t):
            _print(line)
        if record["report_path"]:
            _print(t("Report: {path}", path=record["report_path"]))
        else:  # the desk's database: a command that prints it, not a locator nobody can open
            _print(t("Report: {path}", path=f"python -m tradingagents show {graph.last_run['ticker']} "
                                            f"{graph.last_run['date']}"))
        return EXIT_OK
    except KeyboardInterrupt:
        print(t("Aborted."), file=sys.stderr)
        if checkpointing:
            print(t("The run is checkpointed: run the same command again to resume from the last finished step."),
                  file=sys.stderr)
        return EXIT_STOPPED
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message and an exit code
        return _explain(exc, checkpointing=checkpointing, t=t)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _rating(rating: Any, t: Translator) -> str:
    """A rating as the terminal shows it: the canonical name in English (scripts read ``Rating: Buy``),
    the translated one beside it otherwise (``评级：买入 (Buy)``)."""
    shown = rating_label(rating, t.lang)
    return str(rating) if t.lang == "en" or shown == str(rating) else f"{shown} ({rating})"


def _result_lines(meta, t: Translator | None = None) -> list[str]:
    """What a finished run's meta says beside the rating (``storage.run_notes``), the labels in ``t``'s
    language (the engine's sentences as it wrote them; the invented instrument's in ``t``'s)."""
    from tradingagents.storage import run_notes

    t = t or translator("en")
    return [t("{label}: {text}", label=label, text=text) for label, text in run_notes(meta, t=t)]


def settle_pending(settings, ticker: str | None = None, api_key: str | None = None):
    """Settle what is due: ``(settled, pending)``, pending as ``[{ticker, date, reason}]``.

    Uses ``tradingagents.graph.settlement.Settler`` (settling without building the agent graph);
    until that module exists, the graph's own ``settle_pending`` (whose still-pending entries carry
    the reason the graph recorded, or none known).
    """
    try:
        from tradingagents.graph.settlement import Settler
    except ModuleNotFoundError as exc:
        if exc.name != "tradingagents.graph.settlement":
            raise
        Settler = None  # noqa: N806
    if Settler is not None:
        result = Settler(settings, api_key=api_key).settle(ticker=ticker)
        return list(result.settled), list(result.pending)
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = TradingAgentsGraph(config=settings, api_key=api_key)
    settled = graph.settle_pending(ticker)
    done = {(s["ticker"], s["date"]) for s in settled}
    reasons = {}
    for problem in graph.settle_problems:
        head, _, reason = problem.partition(": ")
        reasons[tuple(head.split(" ", 1))] = reason
    log = graph.memory_log
    waiting = log.get_pending_entries(ticker) if ticker else log.get_pending_entries()
    pending = [
        {"ticker": e["ticker"], "date": e["date"],
         "reason": reasons.get((e["ticker"], e["date"]),
                               "not settled: its holding window is still open or its prices are missing")}
        for e in waiting
        if (e["ticker"], e["date"]) not in done
    ]
    return settled, pending


def _pct(value: Any) -> str:
    try:
        return f"{float(value):+.1%}"
    except (TypeError, ValueError):
        return "n/a"


def settle_command(argv: list[str]) -> int:
    args = _settle_parser().parse_args(argv)
    t = ui_translator(home=args.home)
    try:
        ticker = None
        if args.ticker is not None:
            from tradingagents.validation import validate_ticker

            ticker = validate_ticker(args.ticker)
        settings = _settings_from(args)
        t = ui_translator(settings)
        _notice(settings, t)
        from tradingagents import storage

        storage.check_storage(settings)
        settled, pending = settle_pending(settings, ticker)
        if settled:
            cli_audit(settings, "settle", f"{len(settled)} decision(s)", ticker=ticker,
                      decisions=[f"{x['ticker']} {x['date']}" for x in settled][:50])
        for s in settled:
            holding = s.get("holding", s.get("holding_days"))
            _print(t("{date} {ticker} {rating}: return {ret}, alpha {alpha} over {days}d", date=s["date"],
                     ticker=s["ticker"], rating=_rating(s.get("rating"), t), ret=_pct(s.get("raw")),
                     alpha=_pct(s.get("alpha")), days=holding)
                   + ("\n  " + t("note: {note}", note=s["note"]) if s.get("note") else ""))
        for p in pending:
            _print(t("pending {date} {ticker}: {reason}", date=p["date"], ticker=p["ticker"],
                     reason=p.get("reason") or t("reason unknown")))
        if not settled and not pending:
            print(t("Nothing to settle: the memory log has no pending decision for {ticker}.", ticker=ticker)
                  if ticker else t("Nothing to settle: the memory log has no pending decision."))
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=t)


def log_command(argv: list[str]) -> int:
    """``python -m tradingagents log [--json]``: the memory log from whichever storage (files or the desk)."""
    p = argparse.ArgumentParser(prog="python -m tradingagents log",
                                description="Print the memory log: files under the home, or the desk's "
                                "database when TRADINGAGENTS_STORAGE_URL / storage_url is set.",
                                epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="every entry as JSON")
    p.add_argument("--home")
    args = p.parse_args(argv)
    try:
        from tradingagents.config import resolve_config
        from tradingagents.storage import print_log

        settings = resolve_config({"home": args.home} if args.home else {})
        return print_log(settings, json=args.json)
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=ui_translator(home=args.home))


BATCH_EXIT_HELP = """exit codes (the worst ticker's, in this order):
  7  the desk database cannot be reached or refuses the connection: the batch stops at once
  1  a ticker hit an unexpected error (a bug)
  2  bad input or configuration (then nothing ran), or a ticker the data source rejects
  3  the market data provider could not serve a ticker
  4  a model call failed after retries for a ticker (it is checkpointed)
  6  a ticker is already being analysed elsewhere
  5  stopped (Ctrl-C / SIGTERM) or the budget (--max-cost) reached: run the same command again
     (with a larger --max-cost) to continue; finished tickers are reused, checkpointed ones resume
  0  every ticker finished
"""


def _batch_parser():
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m tradingagents batch",
        description="Analyse a watchlist on one date: every ticker concurrently (at most "
        "max_concurrent_llm_calls model calls at once in all), one line per ticker.",
        epilog="examples:\n  python -m tradingagents batch NVDA,AAPL,MSFT,0700.HK 2024-05-10\n"
        "  python -m tradingagents batch @morning 2024-05-10 --executor ray --max-cost 2\n\n" + BATCH_EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("tickers", help="comma-separated tickers, or @NAME for a saved watchlist")
    p.add_argument("date", help="analysis date YYYY-MM-DD")
    add_flags(p, ("executor", "max_cost_usd", "max_concurrent_llm_calls", "selected_analysts"), help={
        "executor": "threads (default) or ray (each ticker a Ray task; ray_address / TRADINGAGENTS_RAY_ADDRESS for "
                    "a cluster)",
        "max_cost_usd": "USD budget of the whole batch (and of each run)",
        "max_concurrent_llm_calls": "max_concurrent_llm_calls shared by the batch"})
    add_flags(p, (*MODEL_KEYS, "data_vendor", "home"), bare=True)
    _data_flags(p)
    add_flags(p, ("max_debate_rounds", "max_risk_discuss_rounds"), bare=True)
    p.add_argument("--json", action="store_true", help="the outcomes as JSON on stdout")
    p.add_argument("--blind", action="store_true", help="blind runs, one ticker after another: the models see "
                   "aliases, the date shifted by 28 years and rebased prices (stored in real names, <home>/blind/)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    return p


def _blind_batch(tickers: list[str], date: str, settings, args, stop: threading.Event,
                 t: Translator | None = None) -> int:
    """``batch --blind``: each ticker a blind run in turn (every watchlist ticker mapped in each)."""
    from tradingagents.graph.blind_run import run_blind
    from tradingagents.validation import ValidationError

    t = t or translator("en")
    if settings.get("max_cost_usd") is not None or settings.get("executor") == "ray":
        raise ValidationError(t("--blind runs the tickers one after another on this machine: leave out --max-cost "
                                "and --executor ray."))
    worst = EXIT_OK
    rows = []
    for ticker in tickers:
        try:
            out = run_blind(settings, ticker, date, should_stop=stop.is_set, watchlist=tickers)
            rows.append({"ticker": ticker, "status": "done", "rating": out["rating"], "alias": out["alias"],
                         "results_path": out["results_path"]})
        except Exception as exc:  # noqa: BLE001 - one ticker's failure is its line; the others go on
            code = _explain(exc, resumes=False, t=t)
            worst = max(worst, code)
            rows.append({"ticker": ticker, "status": "failed", "rating": None, "error": str(exc)})
            if code == EXIT_STOPPED:
                break
    if args.json:
        import json

        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            _print(f"{r['ticker']:<10} {_ljust(_status(r['status'], t), 8)} "
                   f"{_ljust(_rating(r['rating'], t) if r['rating'] else '-', 12)} "
                   + t("blind") + (f" ({r['alias']}) {r['results_path']}" if r.get("alias") else ""))
    return worst


def _usd(value: float | None, t: Translator | None = None) -> str:
    return (t or translator("en"))("price unknown") if value is None else f"${value:.4f}"


STATUSES = {"queued": N_("queued"), "running": N_("running"), "done": N_("done"), "failed": N_("failed"),
            "stopped": N_("stopped"), "budget": N_("budget"), "reused": N_("reused")}


def _ljust(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal columns (a CJK character takes two)."""
    import unicodedata

    cells = sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)
    return text + " " * max(0, width - cells)


def _status(status: Any, t: Translator) -> str:
    """A batch ticker's status as shown (the JSON keeps the English word)."""
    return t(STATUSES[status]) if status in STATUSES else str(status)


def batch_command(argv: list[str]) -> int:
    """``python -m tradingagents batch TICKERS|@LIST DATE``: one line per ticker, the worst exit code."""
    from tradingagents import storage
    from tradingagents.batch import TickerOutcome, exit_code, parse_tickers, run_batch
    from tradingagents.validation import ValidationError, validate_date

    args = _batch_parser().parse_args(argv)
    stop = threading.Event()
    previous = install_stop_handlers(stop)
    t = ui_translator(home=args.home)
    try:
        settings = _settings_from(args)
        t = ui_translator(settings)
        _notice(settings, t)
        storage.check_storage(settings)  # an unreachable desk: exit 7 at once, not one failure per ticker
        if args.tickers.startswith("@"):
            lists = storage.list_watchlists(settings)
            name = args.tickers[1:].strip()
            if name not in lists:
                known = ", ".join(sorted(lists)) or t("none saved yet")
                raise ValidationError(t("No watchlist named {name} (saved: {known}).", name=repr(name), known=known))
            tickers = lists[name]
        else:
            tickers = parse_tickers(args.tickers)
        date = validate_date(args.date)
        from tradingagents.dataflows.interface import check_instrument

        for ticker in tickers:  # an unlisted demo ticker refuses the batch before any run (exit 2)
            check_instrument(settings, ticker)
        if args.blind:
            return _blind_batch(list(tickers), date, settings, args, stop, t)
        from tradingagents.estimates import estimate_batch_cost

        estimate = estimate_batch_cost(settings, len(tickers))
        if not args.quiet:
            from tradingagents.executor import describe, get_executor

            print(t("{n} tickers on {date}, executor {executor}, at most {calls} model calls at once; estimated "
                    "cost {cost} ({source})", n=len(tickers), date=date,
                    executor=describe(get_executor(settings, len(tickers))),
                    calls=settings["max_concurrent_llm_calls"], cost=_usd(estimate["cost_usd"], t),
                    source=estimate["source"]), file=sys.stderr, flush=True)

        def progress(o: TickerOutcome) -> None:
            if not args.quiet and o.status not in ("queued", "running"):
                extra = f" {_rating(o.rating, t)}" if o.rating else ""
                _print(f"  {o.ticker:<10} {_status(o.status, t)}{extra} {_usd(o.cost_usd, t)}"
                       + (f" — {o.error}" if o.error else ""), file=sys.stderr, flush=True)
                if o.session_note:
                    _print(f"  {'':<10} " + t("session: {note}", note=o.session_note), file=sys.stderr, flush=True)

        cli_audit(settings, "job_start", f"batch {len(tickers)} tickers {date}", kind="batch",
                  tickers=list(tickers))
        outcomes = run_batch(tickers, date, settings, max_cost_usd=settings.get("max_cost_usd"),
                             on_update=progress, should_stop=stop.is_set)
    except Exception as exc:  # noqa: BLE001 - nothing ran: a message and an exit code
        return _explain(exc, resumes=False, t=t)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
    if args.json:
        import json

        print(json.dumps([o.to_dict() for o in outcomes], indent=1))
    else:
        for o in outcomes:
            session = "  " + t("session {session} ({note})", session=o.session, note=o.session_note) \
                if o.session_note else ""
            invented = "  " + t("invented instrument") if o.invented else ""
            rating = _rating(o.rating, t) if o.rating else "-"
            _print(f"{o.ticker:<10} {_ljust(_status(o.status, t), 8)} {_ljust(rating, 12)} {_usd(o.cost_usd, t)}"
                   f"{session}{invented}")
        known = [o.cost_usd for o in outcomes if o.cost_usd is not None]
        print(t("total {cost}", cost=_usd(sum(known), t) if len(known) == len(outcomes) else t("price unknown")))
    code = exit_code(outcomes)
    if code == EXIT_STORAGE:
        first = next(o for o in outcomes if o.exit_code == EXIT_STORAGE)
        _print(t("Desk database unavailable: {reason}", reason=" ".join(str(first.error).split())), file=sys.stderr)
        print(t("The batch stopped at once; run the same command again once the database answers."), file=sys.stderr)
    elif code == EXIT_STOPPED:
        print(t("Run the same command again (with a larger --max-cost if the budget stopped it) to continue."),
              file=sys.stderr)
    return code


def show_command(argv: list[str]) -> int:
    """``python -m tradingagents show TICKER DATE [--version N]``: a saved run's report (files or the desk)."""
    p = argparse.ArgumentParser(prog="python -m tradingagents show",
                                description="Print the report of a saved run (a non-trading date finds its "
                                "session's run), from the files under the home or the desk's database.",
                                epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ticker")
    p.add_argument("date")
    p.add_argument("--version", type=int, help="an earlier run of a re-analysed session (History lists them)")
    p.add_argument("--home")
    args = p.parse_args(argv)
    t = ui_translator(home=args.home)
    try:
        from tradingagents import storage
        from tradingagents.config import resolve_config
        from tradingagents.validation import ValidationError, validate_date, validate_ticker

        settings = resolve_config({"home": args.home} if args.home else {})
        ticker, date = validate_ticker(args.ticker), validate_date(args.date)
        try:
            data = storage.load_run(settings, ticker, date, args.version)
        except FileNotFoundError:
            session = _session_of(settings, ticker, date)  # a weekend or holiday: its session's run, if saved
            try:
                if session == date:
                    raise FileNotFoundError(date)
                data = storage.load_run(settings, ticker, session, args.version)
            except FileNotFoundError:
                if session == date:
                    raise ValidationError(t("No saved run of {ticker} on {date}: run 'python -m tradingagents "
                                            "{ticker} {date}' first.", ticker=ticker, date=date)) from None
                raise ValidationError(t("No saved run of {ticker} on {date} (analysed as its session {session}): "
                                        "run 'python -m tradingagents {ticker} {date}' first.", ticker=ticker,
                                        date=date, session=session)) from None
            from tradingagents.dataflows.session import note_for

            _print(t("{label}: {text}", label=t("Session"), text=note_for(date, session)), file=sys.stderr)
        from tradingagents.storage.files_runs import render_report_markdown

        _print(render_report_markdown(data.get("state") or {}, data.get("rating"), data.get("meta") or {}, t=t), end="")
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=t)


def _session_of(settings: dict[str, Any], ticker: str, date: str) -> str:
    """The trading session ``date`` is analysed as (a run is saved under it): the last session on or before
    it by the configured data source; without the source (offline, a missing file), a weekend's Friday and
    any other day itself, so a trading day without a saved run is never shown another day's run."""
    import datetime as _dt

    from tradingagents.dataflows.interface import get_provider
    from tradingagents.dataflows.session import session_for

    try:
        return session_for(get_provider(settings), ticker, date)[0]
    except Exception:  # noqa: BLE001 - the source cannot say: the calendar's weekends are certain
        day = _dt.date.fromisoformat(date)
        return (day - _dt.timedelta(days=max(0, day.weekday() - 4))).isoformat()


def _model_flags(p: argparse.ArgumentParser) -> None:
    add_flags(p, (*MODEL_KEYS, "data_vendor", "home"), bare=True)
    add_flags(p, ("max_cost_usd", "checkpoint_enabled"), help={
        "max_cost_usd": "USD budget (all the forks together)", "checkpoint_enabled": "do not checkpoint the fork"})
    p.add_argument("--quiet", "-q", action="store_true", help="no progress display")


def _shift_text(shift: int | None, t: Translator) -> str:
    if shift is None:
        return ""
    if shift == 0:
        return t("no change")
    return t.n("{n:+d} tier", "{n:+d} tiers", abs(shift), n=shift)


def whatif_command(argv: list[str]) -> int:
    """``python -m tradingagents whatif TICKER DATE --at ROLE --report-file F | --drop ANALYST``."""
    from tradingagents.graph.whatif import FORK_ROLES

    p = argparse.ArgumentParser(
        prog="python -m tradingagents whatif",
        description="Fork a saved run at one agent: replace its output (or drop an analyst: 'this report is not "
        "available') and replay the rest of the team. The fork is saved beside the run (whatif/<n>/); the run, "
        "the memory log and the role memories are left as they are. Prints both ratings.",
        epilog="examples:\n  python -m tradingagents whatif NVDA 2024-05-10 --at news --report-file news.md\n"
        "  python -m tradingagents whatif NVDA 2024-05-10 --drop news\n"
        "  python -m tradingagents whatif NVDA 2024-05-10 --at bear --turn 2 --text 'Bear Analyst: ...'\n\n"
        + EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ticker")
    p.add_argument("date")
    p.add_argument("--at", help=f"the agent whose output changes: {', '.join(FORK_ROLES)}")
    p.add_argument("--report-file", "--text-file", dest="text_file", help="a file with the agent's new text")
    p.add_argument("--text", help="the agent's new text")
    p.add_argument("--drop", metavar="ANALYST", help="drop this analyst's report ('this report is not available')")
    p.add_argument("--turn", type=int, help="a debate speaker's turn to replace (default: its first)")
    p.add_argument("--version", type=int, help="fork an earlier run of a re-analysed session")
    _model_flags(p)
    args = p.parse_args(argv)
    t = ui_translator(home=args.home)
    stop = threading.Event()
    previous = install_stop_handlers(stop)
    try:
        from pathlib import Path

        from tradingagents.graph.whatif import ForkSpec, fork_run
        from tradingagents.validation import ValidationError, validate_date, validate_ticker

        ticker, date = validate_ticker(args.ticker), validate_date(args.date)
        settings = _settings_from(args)
        t = ui_translator(settings)
        if args.drop:
            if args.at or args.text or args.text_file:
                raise ValidationError(t("--drop replaces the analyst's report: leave out --at, --text and --report-file."))
            spec = ForkSpec(at=args.drop, drop=True)
        else:
            if not args.at:
                raise ValidationError(t("Say which agent to change (--at ROLE) and its new text (--report-file or "
                                        "--text), or drop an analyst (--drop ANALYST)."))
            if bool(args.text) == bool(args.text_file):
                raise ValidationError(t("Give the new text with exactly one of --report-file and --text."))
            text = args.text
            if args.text_file:
                try:
                    text = Path(args.text_file).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    raise ValidationError(t("Cannot read {file}: {reason}", file=args.text_file,
                                            reason=getattr(exc, "strerror", None) or exc)) from None
            spec = ForkSpec(at=args.at, text=text, turn=args.turn)
        _notice(settings, t)
        from tradingagents import storage

        storage.check_storage(settings)
        out = fork_run(settings, ticker, date, spec, version=args.version,
                       on_event=_Progress(quiet=args.quiet, t=t), should_stop=stop.is_set)
        _print(t("Base rating: {rating}", rating=_rating(out["base_rating"], t)))
        _print(t("What-if rating: {rating}", rating=_rating(out["rating"], t)))
        from tradingagents.graph.whatif import tier_shift

        shift = tier_shift(out["base_rating"], out["rating"])
        if shift is not None:
            _print(t("Moved: {shift}", shift=_shift_text(shift, t)))
        record = out["record"]
        _print(t("Saved: {path}", path=record.get("report_path") or record.get("results_path")))
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=t)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def attribute_command(argv: list[str]) -> int:
    """``python -m tradingagents attribute TICKER DATE``: one fork per analyst dropped, the rating of each."""
    p = argparse.ArgumentParser(
        prog="python -m tradingagents attribute",
        description="What moved the decision: fork the saved run once per analyst with that analyst dropped, "
        "side by side under the run's concurrency bound (and --max-cost for all of them), and print the rating "
        "each fork gives. Saved as meta.attribution on the run; the forks are saved beside it.",
        epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ticker")
    p.add_argument("date")
    p.add_argument("--analysts", help="only these analysts (default: every analyst of the run)")
    p.add_argument("--json", action="store_true", help="the result as JSON on stdout")
    _model_flags(p)
    args = p.parse_args(argv)
    t = ui_translator(home=args.home)
    stop = threading.Event()
    previous = install_stop_handlers(stop)
    try:
        from tradingagents.graph.whatif import attribute
        from tradingagents.validation import validate_date, validate_ticker

        ticker, date = validate_ticker(args.ticker), validate_date(args.date)
        cfg_args = argparse.Namespace(**{k: v for k, v in vars(args).items() if k != "analysts"})
        settings = _settings_from(cfg_args)
        t = ui_translator(settings)
        _notice(settings, t)
        from tradingagents import storage

        storage.check_storage(settings)
        from tradingagents.estimates import estimate_attribution_cost

        estimate = estimate_attribution_cost(settings, ticker, date, args.analysts)
        if not args.quiet:
            print(t("{n} forks, estimated cost {cost} ({source})", n=estimate["forks"],
                    cost=_usd(estimate["cost_usd"], t), source=estimate["source"]), file=sys.stderr, flush=True)

        def progress(key: str, out: dict) -> None:
            if not args.quiet:
                _print("  " + t("without {analyst}: {rating}", analyst=_analyst_name(key, t),
                                rating=_rating(out["rating"], t)), file=sys.stderr, flush=True)

        result = attribute(settings, ticker, date, analysts=args.analysts, on_fork=progress, should_stop=stop.is_set)
        if args.json:
            import json

            print(json.dumps(result, indent=1))
            return EXIT_OK
        _print(t("Base rating: {rating}", rating=_rating(result["base_rating"], t)))
        for key, rating in result["attribution"].items():
            _print(f"  {_ljust(_analyst_name(key, t), 14)} {_ljust(_rating(rating, t), 12)} "
                   f"{_shift_text(result['shift'][key], t)}")
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=t)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _analyst_name(key: str, t: Translator) -> str:
    """An analyst's key as a line shows it (the key in English, the role's name otherwise)."""
    from tradingagents import team

    return key if t.lang == "en" or key not in team.ROLES else t.p("role", team.ROLES[key].node)


def decide_command(argv: list[str]) -> int:
    """``python -m tradingagents decide TICKER DATE --rating X [--reason …]``: the PM's own call on a logged decision."""
    from tradingagents.rating import RATINGS_5_TIER

    p = argparse.ArgumentParser(prog="python -m tradingagents decide",
                                description="Record your own call (one of the five tiers, with a reason) beside "
                                "the team's decision in the memory log. It can be changed until the entry settles; "
                                "settlement then scores both calls on the same return (log --json: pm_rating, "
                                "pm_was_right, pm_alpha).",
                                epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ticker")
    p.add_argument("date")
    p.add_argument("--rating", required=True, help=f"one of {', '.join(RATINGS_5_TIER)}")
    p.add_argument("--reason", default="", help="why (kept in the log's PM DECISION section)")
    p.add_argument("--by", help="who decides (default: the config's user, else the OS user)")
    p.add_argument("--home")
    args = p.parse_args(argv)
    t = ui_translator(home=args.home)
    try:
        from tradingagents import storage
        from tradingagents.config import resolve_config
        from tradingagents.memory.log_format import check_rating
        from tradingagents.validation import ValidationError, validate_date, validate_ticker

        settings = resolve_config({"home": args.home} if args.home else {})
        t = ui_translator(settings)
        ticker, date = validate_ticker(args.ticker), validate_date(args.date, allow_future=True)
        rating = check_rating(args.rating)
        storage.check_storage(settings)
        result = storage.record_pm_decision(settings, ticker, date, rating, args.reason, by=args.by)
        if result["status"] == "missing" and _session_of(settings, ticker, date) != date:
            # a weekend or holiday: the decision is logged under its session
            session = _session_of(settings, ticker, date)
            found = storage.record_pm_decision(settings, ticker, session, rating, args.reason, by=args.by)
            if found["status"] != "missing":
                result, date = found, session
        status = result["status"]
        if status == "missing":
            dates = result.get("dates") or []
            raise ValidationError(
                t("The memory log has no decision of {ticker} on {date}; it has {ticker} on: {dates}.",
                  ticker=ticker, date=date, dates=", ".join(dates)) if dates else
                t("The memory log has no decision of {ticker}: run 'python -m tradingagents {ticker} {date}' first.",
                  ticker=ticker, date=date))
        if status == "settled":
            raise ValidationError(t("The decision of {ticker} on {date} is settled: a call is scored on its outcome "
                                    "and can no longer change.", ticker=ticker, date=date))
        previous = (result.get("previous") or {}).get("rating")
        line = t("Your call on {ticker} {date}: {rating}", ticker=ticker, date=date, rating=_rating(rating, t))
        if previous:
            line += " " + t("(was {rating})", rating=_rating(previous, t))
        _print(line)
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=t)


def ask_command(argv: list[str]) -> int:
    """``python -m tradingagents ask TICKER DATE --agent bear "question"``: ask an agent of a saved run."""
    from tradingagents.team import ROSTER

    p = argparse.ArgumentParser(prog="python -m tradingagents ask",
                                description="Ask an agent that took part in a saved run a question; it answers in "
                                "its role from that run's material only (with the offline engine, by quoting it). "
                                "The question and answer are kept with the run (meta.questions).",
                                epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("ticker")
    p.add_argument("date")
    p.add_argument("question")
    p.add_argument("--agent", required=True,
                   help="who: " + ", ".join(r.key for r in ROSTER) + " (or the name shown: 'Bear Researcher')")
    add_flags(p, (*MODEL_KEYS, "max_cost_usd", "home"), bare=True)
    p.add_argument("--by", help="who asks (default: the config's user, else the OS user)")
    p.add_argument("--json", action="store_true", help="the saved thread item as JSON")
    args = p.parse_args(argv)
    t = ui_translator(home=args.home)
    try:
        import json as _json

        from tradingagents import storage
        from tradingagents.ask import ask
        from tradingagents.config import resolve_config

        settings = resolve_config({"home": args.home} if args.home else {})
        t = ui_translator(settings)
        storage.check_storage(settings)
        overrides = {key: getattr(args, attr) for attr, (key, _flag) in FLAGS.items()
                     if attr in ("provider", "backend_url", "quick_model", "deep_model", "max_cost")
                     and getattr(args, attr) is not None}
        if overrides:  # checked as a run's flags are, before anything is asked
            resolve_config({**settings, **overrides})
        streamed = not args.json and sys.stdout.isatty()
        item = ask(settings, args.ticker, args.date, args.agent, args.question, by=args.by, overrides=overrides,
                   on_token=(lambda s: _print(s, end="", flush=True)) if streamed else None)
        if args.json:
            _print(_json.dumps(item, ensure_ascii=False, indent=2))
        elif streamed:
            _print()
        else:
            _print(item["answer"])
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=t)


def _rate(stats: dict, t: Translator) -> str:
    if not stats.get("n"):
        return t("no settled calls")
    lo, hi = stats["interval"]
    line = t("{n} calls, hit rate {rate} (95%: {lo}–{hi})", n=stats["n"], rate=f"{stats['hit_rate']:.0%}",
             lo=f"{lo:.0%}", hi=f"{hi:.0%}")
    if stats.get("mean_alpha") is not None:
        line += ", " + t("mean alpha {alpha}", alpha=_pct(stats["mean_alpha"]))
        if stats.get("alpha_interval"):
            line += f" ({_pct(stats['alpha_interval'][0])}…{_pct(stats['alpha_interval'][1])})"
    return line


def scores_command(argv: list[str]) -> int:
    """``python -m tradingagents scores [--json]``: who was right, from the memory log and the saved runs."""
    p = argparse.ArgumentParser(prog="python -m tradingagents scores",
                                description="Who was right: hit rate and mean alpha with 95% intervals per role, "
                                "per model, per person (your own calls, from 'decide'), the team against your calls, "
                                "and the conviction stated against the hit rate; from the settled decisions.",
                                epilog=EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", action="store_true", help="the scoreboard as JSON")
    p.add_argument("--home")
    args = p.parse_args(argv)
    t = ui_translator(home=args.home)
    try:
        import json as _json

        from tradingagents import storage
        from tradingagents.config import resolve_config
        from tradingagents.scoreboard import gather
        from tradingagents.team import ROLES

        settings = resolve_config({"home": args.home} if args.home else {})
        t = ui_translator(settings)
        storage.check_storage(settings)
        board = gather(settings)
        if args.json:
            _print(_json.dumps(board, ensure_ascii=False, indent=2))
            return EXIT_OK
        _print(t("Scoreboard: {n} settled decisions", n=board["n_settled"]))
        _print("\n" + t("By role"))
        for key, stats in board["by_role"].items():
            _print(f"  {t.p('role', ROLES[key].node)}: {_rate(stats, t)}")
        _print("\n" + t("By model"))
        for name, stats in board["by_model"].items():
            _print(f"  {name}: {_rate(stats, t)}")
        _print("\n" + t("By person (your own calls)"))
        for name, stats in board["by_person"].items():
            _print(f"  {name}: {_rate(stats, t)}")
        if not board["by_person"]:
            _print("  " + t("none yet: record one with 'python -m tradingagents decide'"))
        vs = board["team_vs_pm"]
        _print("\n" + t("Team vs you ({n} decisions with both calls)", n=vs["n"]))
        _print("  " + t("Team: {line}", line=_rate(vs["team"], t)))
        _print("  " + t("You: {line}", line=_rate(vs["pm"], t)))
        if vs["agreement"]["n"]:
            _print("  " + t("Agreed on {rate} of them; when you disagreed ({n}): you were right {pm}, the team {team}",
                            rate=f"{vs['agreement']['rate']:.0%}", n=vs["disagreed"]["n"],
                            pm=vs["disagreed"]["pm_right"], team=vs["disagreed"]["team_right"]))
        if board["calibration"]:
            _print("\n" + t("Calibration (conviction stated → hit rate)"))
            for row in board["calibration"]:
                _print(f"  {row['conviction']}: {_rate(row, t)}")
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001
        return _explain(exc, resumes=False, t=t)


def _desk(name: str) -> Callable[[list[str]], int]:
    def command(argv: list[str]) -> int:
        from tradingagents.desk import cli as desk_cli

        return getattr(desk_cli, f"{name}_command")(argv)

    return command


def _backtest(argv: list[str]) -> int:
    from tradingagents.backtest.cli import main as backtest_main

    return backtest_main(argv)


COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "settle": settle_command, "log": log_command, "batch": batch_command, "backtest": _backtest,
    "show": show_command, "whatif": whatif_command, "attribute": attribute_command, "decide": decide_command,
    "ask": ask_command, "scores": scores_command, "book": _desk("book"), "schedule": _desk("schedule"),
    "scheduler": _desk("scheduler"),
}
"""The subcommands, one scheme: the word after ``python -m tradingagents`` → its command (each parses its own
arguments; the settings' flags come from the config's settings table). Anything else is a run."""
SUBCOMMANDS = tuple(COMMANDS)


def _subcommand_typo(word: str) -> str | None:
    """The subcommand ``word`` looks like a typo of ("stettle" → settle), or None.

    Only a lower-case word is taken for a mistyped command (tickers are written in capitals): a
    ticker BACH is analysed with ``BACH``, ``bach`` asks "did you mean batch?".
    """
    import difflib

    if not word.isalpha() or not word.islower() or word in SUBCOMMANDS:
        return None
    close = difflib.get_close_matches(word, SUBCOMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None


def main(argv: list[str] | None = None) -> int:
    """The one entry of every command; everything it prints goes through ``terminal.safe_stdio``
    (no control or bidi character of a model, server or file reaches the terminal), and a reader
    that stops reading (``log | head``) ends the command quietly."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        with safe_stdio():
            code = _dispatch(argv)
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
            return code
    except BrokenPipeError:
        return reader_gone()


def _dispatch(argv: list[str]) -> int:
    try:
        typo = _subcommand_typo(argv[0]) if argv else None
        if typo is not None:
            t = ui_translator()
            _print(t("Bad input: unknown command {word}: did you mean '{typo}'? (python -m tradingagents {typo} "
                     "--help). To analyse a ticker named {upper}, write it in capitals.", word=repr(argv[0]),
                     typo=typo, upper=argv[0].upper()), file=sys.stderr)
            return EXIT_BAD_INPUT
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:])
        return run_command(argv)
    except SystemExit as exc:  # argparse: --help → 0, usage error → 2
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_BAD_INPUT
