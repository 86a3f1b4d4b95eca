"""``python -m tradingagents mcp``: the engine as a Model Context Protocol server (the ``mcp`` SDK's
``MCPServer``), over stdio by default or streamable HTTP with ``--http 127.0.0.1:PORT``.

A thin adapter beside ``cli.py``: each tool calls the functions the CLI's commands call, with the same
validation (``cli.settings_for``: the settings, the home, the LLM key and URL; the ticker and date
checks; the instrument and the desk database), the same budget (``max_cost_usd``) and the same errors: a
failure is a tool error (``is_error``) whose text is the line the CLI prints for it, with the CLI's exit
code ("Bad input (exit 2): …").

Tools: ``analyze(ticker, date, analysts?, max_cost_usd?)`` → rating, decision card, report path;
``get_run(ticker, date)`` → a saved run's rating, card and report; ``memory_log(ticker?, limit?)`` → the
newest log entries; ``settle(ticker?)`` → what was settled and what still waits; ``ask(ticker, date, agent,
question)`` → an agent of a saved run answers (``tradingagents.ask``, the CLI's ``ask``);
``backtest_summary(id)`` → a backtest's status, metrics and summary table. The server's own flags (``--provider``, ``--data``,
``--home``, …) set what every tool runs with, like the CLI's.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import Context  # evaluated in the tools' annotations (the SDK reads them)

from tradingagents import cli

__all__ = ["TOOL_NAMES", "ToolFailed", "Tools", "build_server", "main"]

TOOL_NAMES = ("analyze", "get_run", "memory_log", "settle", "ask", "backtest_summary")
_ASK_OVERRIDES = ("llm_provider", "backend_url", "quick_think_llm", "deep_think_llm", "max_cost_usd")
MEMORY_LOG_MAX = 200
_BACKTEST_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class ToolFailed(Exception):
    """A tool's failure as the CLI reports it: ``code`` (the exit code) and the CLI's line."""

    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _failure(exc: BaseException) -> ToolFailed:
    code, line = cli.failure_message(exc)
    head, sep, rest = line.partition(": ")
    return ToolFailed(code, f"{head} (exit {code}): {rest}" if sep else f"{line} (exit {code})")


class Tools:
    """The tools' work, plain functions over the server's base config (tested without a transport)."""

    def __init__(self, base: dict[str, Any] | None = None):
        self.base = dict(base or {})

    def _settings(self, check_llm: bool = True, **overrides: Any):
        given = {**self.base, **{k: v for k, v in overrides.items() if v is not None}}
        return cli.settings_for(given, check_llm=check_llm)

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ToolFailed:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure becomes the CLI's message
            raise _failure(exc) from exc

    def analyze(self, ticker: str, date: str, analysts: list[str] | None = None,
                max_cost_usd: float | None = None, on_event: Callable[[Any], None] | None = None) -> dict[str, Any]:
        from tradingagents import storage
        from tradingagents.dataflows.interface import check_instrument
        from tradingagents.graph.trading_graph import TradingAgentsGraph
        from tradingagents.validation import validate_date, validate_ticker

        ticker, date = validate_ticker(ticker), validate_date(date)
        settings = self._settings(selected_analysts=analysts, max_cost_usd=max_cost_usd)
        check_instrument(settings, ticker)
        storage.check_storage(settings)
        graph = TradingAgentsGraph(settings["selected_analysts"], config=settings)
        _, rating = graph.propagate(ticker, date, on_event=on_event)
        record = graph.last_run["record"]
        meta = record.get("meta") or {}
        return {
            "ticker": graph.last_run["ticker"], "date": graph.last_run["date"], "rating": rating,
            "decision": meta.get("decision"), "report_path": record.get("report_path"),
            "results_path": record.get("results_path"),
            "notes": cli._result_lines(meta),
            "usage": {k: (meta.get("usage") or {}).get(k)
                      for k in ("llm_calls", "tool_calls", "input_tokens", "output_tokens", "cost_usd")},
        }

    def get_run(self, ticker: str, date: str) -> dict[str, Any]:
        from tradingagents import storage
        from tradingagents.storage.files_runs import render_report_markdown
        from tradingagents.validation import ValidationError, validate_date, validate_ticker

        ticker, date = validate_ticker(ticker), validate_date(date)
        settings = self._settings(check_llm=False)
        try:
            data = storage.load_run(settings, ticker, date)
        except FileNotFoundError:
            raise ValidationError(f"No saved run of {ticker} on {date}: analyse it first (the analyze tool, or "
                                  f"'python -m tradingagents {ticker} {date}').") from None
        meta = data.get("meta") or {}
        return {"ticker": ticker, "date": date, "rating": data.get("rating"), "decision": meta.get("decision"),
                "saved_at": data.get("saved_at"),
                "report": render_report_markdown(data.get("state") or {}, data.get("rating"), meta)}

    def memory_log(self, ticker: str | None = None, limit: int | None = 20) -> dict[str, Any]:
        from tradingagents import storage
        from tradingagents.validation import ValidationError, validate_ticker

        if ticker is not None:
            ticker = validate_ticker(ticker)
        limit = 20 if limit is None else limit
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MEMORY_LOG_MAX:
            raise ValidationError(f"limit must be a whole number from 1 to {MEMORY_LOG_MAX}; got {limit!r}.")
        settings = self._settings(check_llm=False)
        storage.check_storage(settings)
        entries = storage.open_memory_log(settings).load_entries()
        if ticker is not None:
            entries = [e for e in entries if e.get("ticker") == ticker]
        entries = sorted(entries, key=lambda e: (str(e.get("date")), str(e.get("ticker"))), reverse=True)
        keys = ("date", "ticker", "rating", "pending", "raw", "alpha", "holding", "decision", "reflection")
        return {"total": len(entries), "entries": [{k: e.get(k) for k in keys} for e in entries[:limit]]}

    def settle(self, ticker: str | None = None) -> dict[str, Any]:
        from tradingagents import storage
        from tradingagents.validation import validate_ticker

        if ticker is not None:
            ticker = validate_ticker(ticker)
        settings = self._settings()
        storage.check_storage(settings)
        settled, pending = cli.settle_pending(settings, ticker)
        keys = ("ticker", "date", "rating", "raw", "alpha", "holding", "benchmark", "reflection")
        return {"settled": [{k: s.get(k) for k in keys} for s in settled], "pending": list(pending)}

    def ask(self, ticker: str, date: str, agent: str, question: str) -> dict[str, Any]:
        from tradingagents import storage
        from tradingagents.ask import ask

        settings = self._settings(check_llm=False)
        storage.check_storage(settings)
        # the run's own provider and models, unless the server's flags name others (the CLI's ask flags)
        overrides = {k: v for k, v in self.base.items() if k in _ASK_OVERRIDES}
        item = ask(settings, ticker, date, agent, question, overrides=overrides)
        return {"ticker": ticker, "date": date, **item}

    def backtest_summary(self, id: str) -> dict[str, Any]:  # noqa: A002 - the tool's argument name
        import json

        from tradingagents.backtest.cli import summary_table
        from tradingagents.backtest.engine import backtests_root, load_manifest
        from tradingagents.validation import ValidationError

        if not isinstance(id, str) or not _BACKTEST_ID.match(id):
            raise ValidationError(f"Unknown backtest id {id!r}: use an id from the Backtest page or "
                                  "'python -m tradingagents backtest' (letters, digits, '.', '_', '-').")
        settings = self._settings(check_llm=False)
        folder = backtests_root(settings) / id
        try:
            manifest = load_manifest(folder)
        except FileNotFoundError:
            raise ValidationError(f"No backtest {id!r} under {backtests_root(settings)}.") from None
        out: dict[str, Any] = {"id": id, "path": str(folder), "status": manifest.get("status"),
                               "args": manifest.get("args") or {}, "metrics": None, "summary": None}
        metrics_path = folder / "metrics.json"
        if metrics_path.is_file():
            metrics = json.loads(metrics_path.read_text(encoding="utf-8"))
            out["metrics"] = metrics
            out["summary"] = summary_table(metrics, (manifest.get("args") or {}).get("cost_bps"))
        return out


class _Progress:
    """A run's events as MCP progress notifications: one per agent that finishes (of the run's plan), sent from
    the run's worker thread to the server's event loop. A client that asked for no progress gets none."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.total: int | None = None
        self.finished: set[str] = set()

    def __call__(self, event: Any) -> None:
        import anyio.from_thread

        if event.kind == "run_started":
            self.total = sum(len(team["agents"]) for team in event.data.get("plan") or [])
        elif event.kind == "node_finished" and event.agent and event.agent not in self.finished:
            self.finished.add(event.agent)
            try:
                anyio.from_thread.run(self.ctx.report_progress, float(len(self.finished)),
                                      float(self.total) if self.total else None, f"{event.agent} finished")
            except Exception:  # noqa: BLE001 - a client gone or a progress it did not ask for never stops the run
                pass


def build_server(base: dict[str, Any] | None = None):
    """The ``MCPServer`` with the five tools over ``Tools(base)``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    tools = Tools(base)
    server = MCPServer("tradingagents", instructions=(
        "TradingAgents: a team of LLM agents analyses a ticker on a date and gives a 5-tier rating (Buy, "
        "Overweight, Hold, Underweight, Sell). analyze runs it; get_run reads a saved run; memory_log lists past "
        "decisions; settle scores the due ones against the market; ask puts a question to an agent of a saved run; "
        "backtest_summary reads a backtest."))

    def run(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return tools.call(fn, *args, **kwargs)
        except ToolFailed as exc:
            raise ToolError(str(exc)) from exc

    @server.tool()
    async def analyze(ticker: str, date: str, ctx: Context, analysts: list[str] | None = None,
                      max_cost_usd: float | None = None) -> dict[str, Any]:
        """Analyse TICKER as of DATE (YYYY-MM-DD) with the team; returns the rating, the decision card and the
        report's path. analysts: a subset of market, social, news, fundamentals (default all); max_cost_usd: a
        hard budget for the models (the run stops at a checkpoint and can be resumed). Progress is reported as
        each agent finishes."""
        progress = _Progress(ctx)
        return await anyio.to_thread.run_sync(lambda: run(tools.analyze, ticker, date, analysts, max_cost_usd,
                                                          progress))

    @server.tool()
    def get_run(ticker: str, date: str) -> dict[str, Any]:
        """A saved run of TICKER on DATE: rating, decision card and the report (Markdown)."""
        return run(tools.get_run, ticker, date)

    @server.tool()
    def memory_log(ticker: str | None = None, limit: int | None = 20) -> dict[str, Any]:
        """The memory log's newest entries (pending and settled decisions with return, alpha and reflection),
        of one ticker or all; limit 1-200 (default 20)."""
        return run(tools.memory_log, ticker, limit)

    @server.tool()
    def settle(ticker: str | None = None) -> dict[str, Any]:
        """Settle every pending decision whose holding window has closed (of one ticker or all): return,
        alpha against the benchmark, a reflection; says why the others still wait."""
        return run(tools.settle, ticker)

    from tradingagents.team import ROSTER

    @server.tool(description=(
        "Ask an agent of the saved run of TICKER on DATE a question (agent: " + ", ".join(r.key for r in ROSTER)
        + ", or the name shown, e.g. 'Bear Researcher'); it answers in its role from that run's material only. "
        "The question and answer are kept with the run."))
    def ask(ticker: str, date: str, agent: str, question: str) -> dict[str, Any]:
        return run(tools.ask, ticker, date, agent, question)

    @server.tool()
    def backtest_summary(id: str) -> dict[str, Any]:  # noqa: A002
        """A backtest's status, its metrics (the team and the baselines) and its summary table, by id."""
        return run(tools.backtest_summary, id)

    return server


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m tradingagents mcp",
        description="Serve the TradingAgents tools (analyze, get_run, memory_log, settle, ask, backtest_summary) to "
        "an MCP client: over stdio by default, or streamable HTTP at --http 127.0.0.1:PORT (path /mcp).",
        epilog=cli.EXIT_CODES_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP here (e.g. 127.0.0.1:8765)")
    p.add_argument("--provider", help="LLM provider (default offline)")
    p.add_argument("--backend-url")
    p.add_argument("--quick-model")
    p.add_argument("--deep-model")
    p.add_argument("--data", help="market data: demo (default), yfinance or csv")
    p.add_argument("--home")
    return p


def _host_port(text: str) -> tuple[str, int]:
    from tradingagents.validation import ValidationError

    host, sep, port = str(text).rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValidationError(f"--http takes HOST:PORT, for example 127.0.0.1:8765; got {text!r}.")
    return host.strip("[]"), int(port)


def main(argv: list[str] | None = None) -> int:
    import sys

    args = _parser().parse_args(argv)
    base = {key: getattr(args, attr) for attr, (key, _flag) in cli.FLAGS.items()
            if getattr(args, attr, None) is not None}
    try:
        cli.settings_for(base, check_llm=False)  # a bad flag or variable: exit 2 now, not at the first call
        address = _host_port(args.http) if args.http else None
        server = build_server(base)
        if address:
            host, port = address
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("stdio")
        return 0
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # noqa: BLE001
        print(cli.failure_message(exc)[1], file=sys.stderr)
        return cli.exit_code_for(exc)
