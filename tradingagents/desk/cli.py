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

from tradingagents.config import resolve_config, ui_translator
from tradingagents.errors import EXIT_BAD_INPUT, EXIT_OK, exit_code_for
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
    p.add_argument("--home", default=None, help="the home folder (default: TRADINGAGENTS_HOME or ~/.tradingagents)")


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


def schedule_command(argv: list[str]) -> int:  # filled in by the schedules
    raise NotImplementedError


def scheduler_command(argv: list[str]) -> int:
    raise NotImplementedError
