"""The desk's pages' support (Book, Schedules; the order ticket of the Run and Watchlist pages), UI-neutral.

Rows for the tables (in a language: ``t``), the order ticket as CSV, the orders of a batch read from its
saved runs. Everything is computed by the engine (``tradingagents/book.py``, ``tradingagents/desk/``);
this only lays it out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents import figures
from tradingagents.book import Book, order_text, valuation
from tradingagents.i18n import Translator, rating_label, translator

TICKET_COLUMNS = ("date", "ticker", "side", "shares", "price", "notional", "currency", "weight_before",
                  "weight_after", "limit", "capped_by")


def _t(t: Translator | None) -> Translator:
    return t or translator(None)


def order_ticket_csv(orders: Iterable[Mapping[str, Any] | None]) -> str:
    """The orders as a CSV ticket (one row an order with shares; canonical values, for a broker's import)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TICKET_COLUMNS)
    for o in orders:
        if not o or o.get("side") not in ("buy", "sell") or not o.get("shares"):
            continue
        row = []
        for key in TICKET_COLUMNS:
            value = o.get(key)
            if key in ("weight_before", "weight_after", "limit") and value is not None:
                value = f"{float(value):.6f}"
            text = "" if value is None else str(value)
            if text[:1] in ("=", "+", "-", "@"):  # never a formula in a spreadsheet
                text = "'" + text
            row.append(text)
        writer.writerow(row)
    return out.getvalue()


def batch_orders(config: Mapping[str, Any], outcomes: Iterable[Any]) -> list[dict[str, Any]]:
    """The orders of a batch's finished tickers, from their saved runs' ``meta.order``."""
    from tradingagents import storage

    orders = []
    for o in outcomes:
        get = o.get if isinstance(o, Mapping) else lambda k, _o=o: getattr(_o, k, None)
        if not get("rating"):
            continue
        try:
            saved = storage.load_run(config, get("ticker"), get("session") or get("date"))
        except (FileNotFoundError, ValueError, OSError):
            continue
        order = (saved.get("meta") or {}).get("order")
        if isinstance(order, Mapping):
            orders.append(dict(order))
    return orders


def book_rows(book: Book, prices: Mapping[str, float | None], t: Translator | None = None) -> list[dict[str, Any]]:
    """One row a position: ticker, shares, cost basis, price, value, weight, unrealised, over the limit."""
    t = _t(t)
    v = valuation(book, prices)
    rows = []
    for ticker, r in v["positions"].items():
        rows.append({t("Ticker"): ticker, t("Shares"): figures.compact(r["shares"]),
                     t("Cost basis"): figures.price(r["cost_basis"], book.currency),
                     t("Price"): figures.price(r["price"], book.currency),
                     t("Value"): figures.money(r["value"], book.currency),
                     t("Weight"): figures.pct(r["weight"], signed=False),
                     t("Unrealised"): figures.pct(r["unrealised"]),
                     t("Over the limit"): t("yes") if r["weight"] > book.max_weight + 1e-9 else ""})
    return rows


def book_summary(book: Book, prices: Mapping[str, float | None], t: Translator | None = None) -> str:
    t = _t(t)
    v = valuation(book, prices)
    text = t("{value} in {currency}: {n} position(s), cash {cash}; limit per position {limit}, target weight {target}",
             value=figures.money(v["value"], book.currency), currency=book.currency, n=len(book.positions),
             cash=figures.money(book.cash, book.currency), limit=figures.pct(book.max_weight, signed=False),
             target=figures.pct(book.target, signed=False))
    if v["unpriced"]:
        text += t("; ") + t("no price for {tickers} (valued at cost)", tickers=", ".join(v["unpriced"]))
    return text


def order_line(order: Mapping[str, Any] | None, t: Translator | None = None) -> str:
    return order_text(order, _t(t))


def schedule_rows(jobs: Iterable[Any], states: Mapping[str, Any], t: Translator | None = None) -> list[dict[str, Any]]:
    t = _t(t)
    rows = []
    for job in jobs:
        state = states.get(job.name) or {}
        last = (state.get("history") or [{}])[-1]
        rows.append({t("Job"): job.name, t("Watchlist"): job.watchlist, t("At"): f"{job.at} {job.tz}",
                     t("Days"): t("weekdays") if job.days_text() == "weekdays" else job.days_text(),
                     t("Tells"): ", ".join([*job.emails, *([job.webhook] if job.webhook else [])]),
                     t("Budget"): figures.price(job.max_cost_usd, "USD") if job.max_cost_usd else "",
                     t("Last run"): f"{last.get('due') or ''} {last.get('session') or ''}".strip(),
                     t("Failures in a row"): int(state.get("failures") or 0),
                     t("Status"): t("paused") if job.paused else t("active")})
    return rows


def digest_label(item: Mapping[str, Any], t: Translator | None = None) -> str:
    t = _t(t)
    label = t("{job} · due {due} · session {session}", job=item.get("job"), due=item.get("due"),
              session=item.get("session"))
    if item.get("alerts"):
        label += " · " + t.n("{n} alert", "{n} alerts", int(item["alerts"]))
    return label


def rating_text(rating: Any, t: Translator | None = None) -> str:
    return rating_label(str(rating), _t(t).lang) if rating else figures.DASH
