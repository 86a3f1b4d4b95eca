"""``python -m tradingagents backtest NVDA,AAPL --start 2024-06-03 --end 2024-11-29 [options]``.

``add_parser(subparsers)`` registers the ``backtest`` sub-command on the main CLI's parser and
``run(args) -> int`` runs it; ``main(argv)`` is the standalone entry (``python -m
tradingagents.backtest``). A progress bar with the ETA goes to stderr; stdout gets the paper-style
table and, last, the line ``Backtest: <folder>``. Exit codes as for a run (``errors.exit_code_for``):
0 ok, 2 bad input, 3 data unavailable, 4 model failure (resumable), 5 stopped (resumable), 6 busy.
Run the same command again to continue a stopped, failed or killed backtest.

Its messages, the summary table's labels and the report it writes are in the config's
``ui_language`` (``TRADINGAGENTS_UI_LANGUAGE``; English by default); argparse's help stays English,
and so do the sentences of errors raised inside the engine (after a translated headline).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
from typing import Any

from tradingagents.config import add_flags, config_from_args, ui_translator
from tradingagents.i18n import N_, Translator, rating_label, translator
from tradingagents.terminal import reader_gone, safe_stdio, terminal_safe, unfiltered
from tradingagents.vendors import engine_notice

EXAMPLES = """examples:
  python -m tradingagents backtest NVDA --start 2024-06-03 --end 2024-11-29
  python -m tradingagents backtest NVDA,AAPL --start 2024-06-03 --end 2024-11-29 --every 5 --compare-memory
  python -m tradingagents backtest AAPL --start 2024-06-03 --end 2024-11-29 --provider openai --data yfinance
  python -m tradingagents backtest NVDA,AAPL,MSFT --start 2024-01-02 --end 2024-12-31 --every 5 \
      --portfolio equal --control 20 --seed 7 --cost-bps 5

Offline engine and demo market by default. Run the same command again to resume a stopped or
killed backtest: finished steps are not redone.

exit codes: 0 ok, 1 unexpected error, 2 bad input (a missing API key, a ticker the demo market does
  not list: refused before any step, nothing left behind), 3 market data unavailable (or a CSV file
  refused), 4 LLM failure (run again to resume), 5 stopped (run again to resume), 6 already running,
  7 desk database unavailable (run again to resume once it is back)
"""


# the settings a backtest takes a flag for (their flags, help and checks: tradingagents/config/table.py)
SETTING_KEYS = ("llm_provider", "backend_url", "quick_think_llm", "deep_think_llm", "data_vendor", "selected_analysts",
                "allow_synthetic", "csv_skip_bad_rows", "max_debate_rounds", "max_risk_discuss_rounds",
                "max_concurrent_llm_calls", "executor", "max_cost_usd", "home")
CHECKED_NOW = ("max_debate_rounds", "max_risk_discuss_rounds", "max_concurrent_llm_calls")


def _configure(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("tickers", help="comma-separated tickers, e.g. NVDA or NVDA,AAPL")
    p.add_argument("--start", required=True, help="first date YYYY-MM-DD")
    p.add_argument("--end", required=True, help="last date YYYY-MM-DD (clamped to today)")
    p.add_argument("--every", type=int, default=1, help="one decision every N trading days (default 1)")
    p.add_argument("--compare-memory", action="store_true",
                   help='also run the same dates without past context and role memories ("TradingAgents (no memory)")')
    p.add_argument("--allow-short", action="store_true", help="Underweight -0.5 and Sell -1.0 (default long-only)")
    p.add_argument("--cost-bps", type=float, default=None,
                   help="cost in basis points per unit of turnover, on every strategy (default 5; 0 = the paper's)")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the bootstrap intervals and of the control worlds (default 7: same backtest, same bytes)")
    p.add_argument("--control", type=int, default=0, metavar="N",
                   help="also run the same configuration on N no-edge random-walk worlds (the no-edge distribution)")
    p.add_argument("--portfolio", choices=("equal", "conviction"),
                   help="also score the tickers as one book (PORTFOLIO): equal weights or weights from the ratings")
    p.add_argument("--blind", action="store_true",
                   help="blind run: the models see an alias, dates shifted by 28 years and rebased prices, never "
                        "the real ticker, name or calendar; everything stored is mapped back")
    add_flags(p, SETTING_KEYS, help={
        "data_vendor": "market data: demo (default), yfinance or csv",
        "allow_synthetic": "demo market: backtest a ticker it does not list as an invented instrument (default: "
                           "refused)",
        "csv_skip_bad_rows": "CSV data: drop the rows that do not parse instead of refusing the file (exit 3)",
        "max_concurrent_llm_calls": "tickers (and model calls) at once (max_concurrent_llm_calls)",
        "executor": "threads (default) or ray (each ticker, and the ablation's, a Ray task; ray_address / "
                    "TRADINGAGENTS_RAY_ADDRESS for a cluster)",
        "max_cost_usd": "USD budget of the whole backtest: every model call of every step (and the reflections "
                        "settling due decisions) reserves its worst case first; when the next one does not fit it "
                        "stops (exit 5), finished steps kept; a larger budget continues it"})
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    return p


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``backtest`` on the main CLI's sub-parsers (``parser.add_subparsers()``)."""
    p = subparsers.add_parser(
        "backtest", help="run the team over a date range and score it like the paper",
        description="Run the team over a date range (one decision every N trading days per ticker), "
        "learning as it goes, and score it against Buy & Hold, MACD, KDJ & RSI, ZMR and SMA.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return _configure(p)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tradingagents backtest", epilog=EXAMPLES,
                                description="Run the team over a date range and score it like the paper.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    return _configure(p)


def config_from(args: argparse.Namespace) -> dict[str, Any]:
    """The partial config the flags set (the settings table's flags); a round count or a concurrency that
    breaks its key's one check (the config's) is a ConfigError naming the flag at once."""
    cfg = config_from_args(args, SETTING_KEYS, checked=CHECKED_NOW)
    # --max-cost is the whole backtest's one budget (``Backtest(max_cost_usd=)``), not each step's as well:
    # as a step's own budget too, a step's parallel analysts' reservations stopped it far below the budget
    cfg.pop("max_cost_usd", None)
    analysts = cfg.pop("selected_analysts", None)
    if analysts:  # "market,news": the analysts named, blanks dropped ("" leaves the setting alone)
        cfg["selected_analysts"] = [a.strip() for a in analysts.split(",") if a.strip()]
    return cfg


class ProgressBar:
    """``[######----]  12/120  NVDA 2024-06-20 Buy  ETA 0:43`` on stderr (one line per step when not a tty)."""

    def __init__(self, stream=None, quiet: bool = False, width: int = 28, t: Translator | None = None):
        self.stream = stream
        self.quiet = quiet
        self.t = t or translator("en")
        self.width = width
        self.last_len = 0

    def __call__(self, event: dict[str, Any]) -> None:
        if self.quiet or event.get("kind") not in ("started", "step_finished", "finished", "stopped", "failed"):
            return
        out = self.stream or sys.stderr
        done, total = int(event.get("done") or 0), int(event.get("total") or 0)
        filled = int(self.width * done / total) if total else self.width
        bar = "#" * filled + "-" * (self.width - filled)
        what = ""
        if event.get("kind") == "step_finished":
            tag = " " + self.t("(saved)") if event.get("reused") else ""
            variant = " " + self.t("no-memory") if "no memory" in str(event.get("variant")) else ""
            rating = rating_label(event.get("rating"), self.t.lang) if event.get("rating") else event.get("rating")
            what = f"  {event.get('ticker')}{variant} {event.get('date')} {rating}{tag}"
        eta = event.get("eta_s")
        eta_txt = "  " + self.t("ETA {time}", time=format_duration(eta)) if eta is not None and done < total else ""
        line = f"[{bar}] {done:>4}/{total}{what}{eta_txt}"
        tty = hasattr(out, "isatty") and out.isatty()
        line = terminal_safe(line)  # a ticker's or a server's text never drives the terminal
        if tty:
            unfiltered(out).write("\r" + line.ljust(self.last_len))  # the bar's own carriage return
            self.last_len = len(line)
            if event.get("kind") in ("finished", "stopped", "failed"):
                out.write("\n")
        else:
            out.write(line + "\n")
        out.flush()


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


SUMMARY_COLUMNS = ("Strategy", "CR %", "CR 95% CI", "SR", "SR 95% CI", "MDD %", "p vs B&H")


def _cells(text: str) -> int:
    """The terminal columns a text takes (a CJK character takes two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _pad(text: str, width: int, left: bool) -> str:
    gap = " " * max(0, width - _cells(text))
    return text + gap if left else gap + text


def summary_table(metrics: dict[str, Any], cost_bps: float | None = None, *, t: Translator | None = None) -> str:
    """The paper's columns with the 95% intervals, per ticker (and ``PORTFOLIO``); then the costs
    and, with a control, one line per ticker on the no-edge worlds (``t``: the language; None: English)."""
    from tradingagents.backtest.metrics import by_ticker
    from tradingagents.backtest.report import _header, control_lines, table_rows

    t = t or translator("en")
    english, head = _header(), _header(t)
    pick = [english.index(c) for c in SUMMARY_COLUMNS]
    lines = []
    for ticker, by_strategy in by_ticker(metrics).items():
        rows = [[head[i] for i in pick], *[[r[i] for i in pick] for r in table_rows(by_strategy, t=t)]]
        widths = [max(_cells(r[i]) for r in rows) for i in range(len(pick))]
        lines.append(ticker)
        for r in rows:
            lines.append("  " + "  ".join(_pad(c, widths[0], True) if i == 0 else _pad(c, widths[i], False)
                                          for i, c in enumerate(r)))
    if cost_bps is not None:
        lines.append(t("costs {bps} bps per unit of turnover on every strategy (the paper's setting); 95% "
                       "stationary-bootstrap intervals", bps=f"{cost_bps:g}") if cost_bps == 0 else
                     t("costs {bps} bps per unit of turnover on every strategy; 95% stationary-bootstrap intervals",
                       bps=f"{cost_bps:g}"))
    if metrics.get("control"):
        lines += control_lines({"control": metrics["control"]}, t=t)
    return "\n".join(lines)


def run(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    """Run the backtest the parsed ``args`` describe; returns the exit code."""
    from tradingagents.errors import (
        EXIT_BAD_INPUT,
        EXIT_OK,
        EXIT_STOPPED,
        RunStopped,
        exit_code_for,
        is_resumable,
    )

    stop = stop or threading.Event()
    from tradingagents.stop_signals import install_stop_handlers

    t = ui_translator(home=getattr(args, "home", None))
    previous = install_stop_handlers(stop, "agent step")
    started = time.time()
    try:
        from tradingagents.backtest.engine import Backtest, BacktestSpec

        cfg = config_from(args)
        from tradingagents import storage
        from tradingagents.config import check_home, check_setting, resolve_config
        from tradingagents.dataflows.interface import check_instrument
        from tradingagents.llm_clients.factory import check_llm_config
        from tradingagents.storage.watchlists import valid_tickers

        settings = resolve_config(cfg)
        t = ui_translator(settings)
        check_home(settings)
        check_llm_config(settings)  # a missing key or URL: exit 2 before any progress bar or folder
        from tradingagents.llm_clients.factory import check_local_server

        check_local_server(settings)  # a local model server that is not up: exit 4 within 5 s
        notice = engine_notice(settings, t)
        if notice:
            print(notice, file=sys.stderr, flush=True)
        for ticker in valid_tickers(args.tickers):
            check_instrument(settings, ticker)  # an unlisted demo ticker: exit 2 before any folder
        storage.check_storage(settings)
        spec = BacktestSpec.make(args.tickers, args.start, args.end, args.every, args.compare_memory,
                                 args.allow_short, args.cost_bps, seed=getattr(args, "seed", None),
                                 control=getattr(args, "control", 0) or 0,
                                 portfolio=getattr(args, "portfolio", None),
                                 blind=bool(getattr(args, "blind", False)))
        budget = (check_setting("max_cost_usd", args.max_cost, "--max-cost")
                  if getattr(args, "max_cost", None) is not None else None)
        bt = Backtest(spec, cfg, max_cost_usd=budget)
        from tradingagents.storage.audit import record_command

        record_command(settings, "job_start", f"backtest {bt.id}", kind="backtest", tickers=list(spec.tickers),
                  start=spec.start, end=spec.end, max_cost_usd=budget)
        done = bt.done_steps()
        if not args.quiet:
            how = (t("resuming ({done} of {total} steps done)", done=done, total=bt.total_steps) if done
                   else t("{total} steps", total=bt.total_steps))
            print(t("Backtest {id}: {tickers} {start} → {end}, every {every} trading day(s), {how}", id=bt.id,
                    tickers=", ".join(spec.tickers), start=spec.start, end=spec.end, every=spec.every, how=how),
                  file=sys.stderr, flush=True)
        result = bt.run(on_progress=ProgressBar(quiet=args.quiet, t=t), should_stop=stop.is_set)
        print(summary_table(result.metrics, spec.cost_bps, t=t))
        if getattr(bt, "memory_effect", None) is not None:
            from tradingagents.backtest.memory_effect import describe

            print(describe(bt.memory_effect, t=t))
        _print_spent(bt, t)
        if not args.quiet:
            print(t("done in {time}", time=format_duration(time.time() - started)), file=sys.stderr)
        print(t("Backtest: {folder}", folder=result.folder))
        return EXIT_OK
    except RunStopped as exc:
        print(t("Stopped: {reason}", reason=exc), file=sys.stderr)
        _print_spent(locals().get("bt"), t)
        print(t("Run the same command again to continue where it stopped."), file=sys.stderr)
        return EXIT_STOPPED
    except KeyboardInterrupt:
        print(t("Aborted. Run the same command again to continue."), file=sys.stderr)
        return EXIT_STOPPED
    except Exception as exc:  # noqa: BLE001 - every failure becomes a message and an exit code
        if isinstance(exc, BrokenPipeError):
            raise  # stdout's reader is gone: the command line's main ends quietly
        code = exit_code_for(exc)
        what = {EXIT_BAD_INPUT: N_("Bad input"), 3: N_("Market data unavailable"), 4: N_("LLM failure"),
                7: N_("Desk database unavailable")}.get(code, N_("Error"))
        print(t("{headline}: {message}", headline=t(what), message=" ".join(str(exc).split()) if code == 7 else exc),
              file=sys.stderr)
        if code not in (EXIT_BAD_INPUT, 3, 7) and is_resumable(exc):
            print(t("Finished steps are kept: run the same command again to continue."), file=sys.stderr)
        if code == 1:
            import traceback

            traceback.print_exc()
        return code
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _print_spent(bt: Any, t: Translator) -> None:
    """Under ``--max-cost``: what this command's model calls cost, against the budget."""
    spent = getattr(bt, "spent_usd", None)
    if spent is not None:
        print(t("Spent ${spent} of the ${budget} budget (--max-cost).", spent=f"{spent:.4f}",
                budget=f"{bt.max_cost_usd:.4f}"), file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """The backtest command; what it prints goes through ``terminal.safe_stdio`` (no control or bidi
    character of a model, a server or a file reaches the terminal)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "backtest":
        argv = argv[1:]
    try:
        with safe_stdio():
            try:
                args = build_parser().parse_args(argv)
            except SystemExit as exc:  # --help → 0, usage error → 2
                return int(exc.code or 0) if isinstance(exc.code, int) else 2
            code = run(args)
            sys.stdout.flush()
            return code
    except BrokenPipeError:
        return reader_gone()
