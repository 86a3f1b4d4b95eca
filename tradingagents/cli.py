"""Command line: ``python -m tradingagents TICKER DATE [options]`` and ``python -m tradingagents settle``.

Runs for scheduled jobs: a live progress display on stderr, the rating and the report path on
stdout, and an exit code that says what failed.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from typing import Any

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_BAD_INPUT = 2
EXIT_DATA_UNAVAILABLE = 3
EXIT_LLM_FAILURE = 4
EXIT_STOPPED = 5
EXIT_BUSY = 6

EXIT_CODES_HELP = """exit codes:
  0  ok
  1  unexpected error (a bug: the message says where)
  2  bad input (ticker, date, analysts, options or configuration) — nothing was run
  3  market data provider unavailable
  4  LLM failure (missing key, server error after retries); the run is checkpointed:
     run the same command again to resume where it failed
  5  stopped (Ctrl-C / SIGTERM); run the same command again to resume
  6  the same ticker and date is already being analysed (another process or the app)
"""

EXAMPLES = """examples:
  python -m tradingagents NVDA 2024-05-10
  python -m tradingagents NVDA 2024-05-10 --analysts market,news --parallel
  python -m tradingagents 7203.T 2024-05-10 --provider openai --quick-model gpt-4o-mini
  python -m tradingagents settle            settle every pending decision that is due
  python -m tradingagents settle --ticker NVDA
"""


def _run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tradingagents",
        description="Analyse TICKER as of DATE with the TradingAgents team and print the rating "
        "and the report path. Use 'python -m tradingagents settle' to settle past decisions.",
        epilog=EXAMPLES + "\n" + EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("ticker", help="ticker symbol, e.g. NVDA, BRK-B, 7203.T")
    p.add_argument("date", help="analysis date YYYY-MM-DD (today or earlier)")
    p.add_argument("--analysts", help="comma-separated subset of market,social,news,fundamentals (default: all)")
    p.add_argument("--provider", help="LLM provider: offline (default), openai, openai_compatible, ollama, …")
    p.add_argument("--backend-url", help="base URL of an OpenAI-compatible server")
    p.add_argument("--quick-model", help="quick-thinking model name")
    p.add_argument("--deep-model", help="deep-thinking model name")
    p.add_argument("--data", help="market data: demo (default), yfinance or csv")
    p.add_argument("--asset-type", default="stock", help="stock (default), etf, index, fx or crypto")
    p.add_argument("--debate-rounds", type=int, help="bull/bear debate rounds (default 1)")
    p.add_argument("--risk-rounds", type=int, help="risk discussion rounds (default 1)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--parallel", action="store_true", help="run the analysts as parallel branches")
    mode.add_argument("--sequential", action="store_true", help="run the analysts one after another")
    p.add_argument("--no-checkpoint", action="store_true", help="do not checkpoint (no resume after a failure)")
    p.add_argument("--home", help="TradingAgents home folder (default $TRADINGAGENTS_HOME or ~/.tradingagents)")
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
    p.add_argument("--provider", help="LLM provider for the reflections (default offline)")
    p.add_argument("--backend-url")
    p.add_argument("--quick-model")
    p.add_argument("--data", help="market data: demo (default), yfinance or csv")
    p.add_argument("--home")
    return p


def _config_from(args: argparse.Namespace) -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    pairs = {
        "provider": "llm_provider",
        "backend_url": "backend_url",
        "quick_model": "quick_think_llm",
        "deep_model": "deep_think_llm",
        "data": "data_vendor",
        "debate_rounds": "max_debate_rounds",
        "risk_rounds": "max_risk_discuss_rounds",
        "home": "home",
    }
    for attr, key in pairs.items():
        value = getattr(args, attr, None)
        if value is not None:
            cfg[key] = value
    if getattr(args, "analysts", None):
        cfg["selected_analysts"] = [a.strip() for a in args.analysts.split(",") if a.strip()]
    if getattr(args, "parallel", False):
        cfg["analyst_execution"] = "parallel"
    elif getattr(args, "sequential", False):
        cfg["analyst_execution"] = "sequential"
    if getattr(args, "no_checkpoint", False):
        cfg["checkpoint_enabled"] = False
    for key in ("max_debate_rounds", "max_risk_discuss_rounds"):
        if key in cfg and cfg[key] < 1:
            from tradingagents.validation import ValidationError

            raise ValidationError(f"--{'debate' if 'debate' in key else 'risk'}-rounds must be 1 or more.")
    return cfg


class _Progress:
    """A terse live display of the run events on stderr."""

    def __init__(self, stream=None, quiet: bool = False):
        self.stream = stream  # None: whatever sys.stderr is when an event arrives
        self.quiet = quiet
        self.t0 = time.time()

    def __call__(self, event) -> None:
        if self.quiet:
            return
        t = time.time() - self.t0
        d = event.data
        line = None
        if event.kind == "run_started":
            how = "resuming" if d.get("resumed") else "starting"
            line = f"{how} {d.get('ticker')} {d.get('date')}: {', '.join(d.get('analysts', []))} ({d.get('analyst_execution')})"
        elif event.kind == "node_started" and not (event.node or "").startswith(("tools_", "Msg Clear")):
            line = f"… {event.agent} ({event.team})"
        elif event.kind == "node_finished" and not (event.node or "").startswith(("tools_", "Msg Clear")):
            line = f"✓ {event.agent} {d.get('duration_s', 0):.2f}s"
        elif event.kind == "tool_call":
            line = f"  tool {d.get('tool')}({_short_args(d.get('args'))}) → {d.get('result_chars')} chars"
        elif event.kind == "report":
            line = f"  wrote {d.get('key')}"
        elif event.kind == "debate_turn":
            line = f"  {d.get('debate')} debate round {d.get('round')}: {d.get('speaker')}"
        elif event.kind == "run_finished":
            line = f"done: {d.get('rating')} in {d.get('elapsed_s')}s"
        elif event.kind == "run_failed":
            line = f"failed: {d.get('error')}" + (" (resumable)" if d.get("resumable") else "")
        elif event.kind == "run_stopped":
            line = "stopped" + (" (resumable)" if d.get("resumable") else "")
        if line:
            print(f"[{t:6.1f}s] {line}", file=self.stream or sys.stderr, flush=True)


def _short_args(args) -> str:
    if not isinstance(args, dict):
        return ""
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= 80 else text[:77] + "…"


def _classify(exc: BaseException) -> int:
    from tradingagents.default_config import ConfigError
    from tradingagents.llm_clients.factory import LLMCallError, LLMConfigError
    from tradingagents.validation import ValidationError

    try:
        from tradingagents.dataflows.interface import ProviderUnavailable
    except ImportError:  # pragma: no cover - data layer always present in a full install
        ProviderUnavailable = ()  # type: ignore[assignment]  # noqa: N806
    if isinstance(exc, LLMConfigError):
        return EXIT_LLM_FAILURE if "key" in str(exc).lower() else EXIT_BAD_INPUT
    if isinstance(exc, (ValidationError, ConfigError)):
        return EXIT_BAD_INPUT
    from tradingagents.graph.trading_graph import RunAlreadyActive

    if isinstance(exc, RunAlreadyActive):
        return EXIT_BUSY
    if ProviderUnavailable and isinstance(exc, ProviderUnavailable):
        return EXIT_DATA_UNAVAILABLE
    if isinstance(exc, LLMCallError):
        return EXIT_LLM_FAILURE
    # an error raised inside a node may be wrapped; look at the chain
    cause = exc.__cause__ or exc.__context__
    if cause is not None and cause is not exc:
        code = _classify(cause)
        if code != EXIT_ERROR:
            return code
    name = type(exc).__name__.lower()
    if any(w in name for w in ("ratelimit", "apiconnection", "apitimeout", "apistatus", "internalserver",
                               "authentication", "badrequest")):
        return EXIT_LLM_FAILURE
    return EXIT_ERROR


def _install_stop_handlers(stop: threading.Event):
    def handler(signum, frame):
        if stop.is_set():  # second Ctrl-C: leave now
            raise KeyboardInterrupt
        stop.set()
        print("\nstopping after the current step… (Ctrl-C again to abort)", file=sys.stderr, flush=True)

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread
            pass
    return previous


def run_command(argv: list[str]) -> int:
    from tradingagents.graph.events import RunStopped

    parser = _run_parser()
    args = parser.parse_args(argv)
    stop = threading.Event()
    previous = _install_stop_handlers(stop)
    try:
        from tradingagents.validation import validate_date, validate_ticker

        ticker = validate_ticker(args.ticker)
        date = validate_date(args.date)
        cfg = _config_from(args)
        from tradingagents.default_config import resolve_config
        from tradingagents.graph.trading_graph import TradingAgentsGraph

        graph = TradingAgentsGraph(cfg.get("selected_analysts"), debug=args.debug, config=resolve_config(cfg))
        state, rating = graph.propagate(
            ticker, date, args.asset_type, on_event=_Progress(quiet=args.quiet), should_stop=stop.is_set
        )
        print(f"Rating: {rating}")
        print(f"Report: {os.path.join(graph.last_run['results_path'], 'report.md')}")
        return EXIT_OK
    except RunStopped as exc:
        print(f"Stopped: {exc}", file=sys.stderr)
        return EXIT_STOPPED
    except KeyboardInterrupt:
        print("Aborted.", file=sys.stderr)
        return EXIT_STOPPED
    except Exception as exc:
        code = _classify(exc)
        what = {EXIT_BAD_INPUT: "Bad input", EXIT_DATA_UNAVAILABLE: "Market data unavailable",
                EXIT_LLM_FAILURE: "LLM failure"}.get(code, "Error")
        print(f"{what}: {exc}", file=sys.stderr)
        if code == EXIT_LLM_FAILURE:
            print("The run is checkpointed: run the same command again to resume.", file=sys.stderr)
        if code == EXIT_ERROR:
            import traceback

            traceback.print_exc()
        return code
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def settle_command(argv: list[str]) -> int:
    args = _settle_parser().parse_args(argv)
    try:
        from tradingagents.default_config import resolve_config
        from tradingagents.graph.trading_graph import TradingAgentsGraph

        cfg = _config_from(args)
        graph = TradingAgentsGraph(config=resolve_config(cfg))
        settled = graph.settle_pending(args.ticker)
        if not settled:
            print("Nothing to settle: no pending decision has a closed holding window.")
        for s in settled:
            print(f"{s['date']} {s['ticker']} {s['rating']}: return {s['raw']:+.1%}, alpha {s['alpha']:+.1%} "
                  f"over {s['holding']}d")
        return EXIT_OK
    except Exception as exc:
        code = _classify(exc)
        print(f"{'Bad input' if code == EXIT_BAD_INPUT else 'Error'}: {exc}", file=sys.stderr)
        return code


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "settle":
            return settle_command(argv[1:])
        if argv and argv[0] == "backtest":
            from tradingagents.backtest.cli import main as backtest_main

            return backtest_main(argv[1:])
        return run_command(argv)
    except SystemExit as exc:  # argparse: --help → 0, usage error → 2
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_BAD_INPUT
