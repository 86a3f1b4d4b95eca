"""The paper book: orders applied at the decision's close, and its value over time against the benchmark.

The paper book starts as a copy of the desk's book (positions, cash, currency) the first time an order
is applied, and then lives on its own as the desk document ``paper`` (``storage/desk.py``):
``{"start": date, "cash", "currency", "positions": {ticker: shares}, "fills": [...]}``. ``apply_order``
fills a run's ``meta.order`` at its price (the close of the decision's session), once per (ticker,
date); a buy never spends more cash than there is, a sell never more shares than held.
``paper_history`` replays the fills on daily closes from the start and gives, per trading day, the
paper book's value and the benchmark's, rebased to the same start value (no data after ``end``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import pandas as pd

from tradingagents.config import benchmark_for, resolve_config
from tradingagents.dataflows.provider import clip_frame
from tradingagents.errors import ValidationError
from tradingagents.storage.audit import default_user, record_audit
from tradingagents.storage.book import load_book
from tradingagents.storage.desk import open_desk_docs
from tradingagents.validation import validate_date, validate_ticker

__all__ = ["apply_order", "load_paper", "paper_history", "reset_paper"]

DOC = "paper"


def load_paper(config: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    doc = open_desk_docs(config).get(DOC)
    return doc if isinstance(doc, Mapping) and doc.get("fills") is not None else None


def reset_paper(config: Mapping[str, Any] | None = None, *, by: str | None = None) -> None:
    open_desk_docs(config).update(DOC, lambda _old: None)
    record_audit(config, "paper_reset", by=by, target="paper")


def apply_order(config: Mapping[str, Any] | None, order: Mapping[str, Any], *, by: str | None = None) -> dict[str, Any]:
    """Fill ``order`` (a run's ``meta.order``: side, shares, price, ticker, date) in the paper book; returns
    the fill. Raises ``ValidationError`` for an order with nothing to fill or one already applied."""
    cfg = resolve_config(config)
    side = order.get("side")
    shares = float(order.get("shares") or 0)
    if side not in ("buy", "sell") or shares <= 0:
        raise ValidationError("This order fills nothing (no shares to buy or sell).")
    ticker = validate_ticker(order.get("ticker"))
    date = validate_date(order.get("date"))
    price = float(order.get("price") or 0)
    if not price > 0:
        raise ValidationError(f"The order of {ticker} has no price to fill at.")
    fill: dict[str, Any] = {}

    def put(old: Any) -> dict[str, Any]:
        doc = dict(old) if isinstance(old, Mapping) and old.get("fills") is not None else None
        if doc is None:
            book = load_book(cfg)
            doc = {"start": date, "currency": book.currency if book else "USD", "cash": book.cash if book else 0.0,
                   "positions": {p.ticker: p.shares for p in book.positions} if book else {}, "fills": []}
        if any(f["ticker"] == ticker and f["date"] == date for f in doc["fills"]):
            raise ValidationError(f"The order of {ticker} on {date} is already in the paper book.")
        if date < doc["start"]:
            raise ValidationError(f"The paper book starts on {doc['start']}; an order of {date} comes before it.")
        held = float(doc["positions"].get(ticker, 0.0))
        qty = shares if side == "buy" else min(shares, held)
        if side == "buy":
            qty = min(qty, int(doc["cash"] // price))
        if qty <= 0:
            raise ValidationError(f"The paper book has no {'cash' if side == 'buy' else 'shares of ' + ticker} for "
                                  "this order.")
        signed = qty if side == "buy" else -qty
        doc["positions"] = {**doc["positions"], ticker: held + signed}
        if doc["positions"][ticker] <= 0:
            del doc["positions"][ticker]
        doc["cash"] = round(float(doc["cash"]) - signed * price, 6)
        fill.update({"ticker": ticker, "date": date, "side": side, "shares": qty, "price": price,
                     "by": by or default_user(cfg), "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
        doc["fills"] = [*doc["fills"], dict(fill)]
        return doc

    open_desk_docs(cfg).update(DOC, put)
    record_audit(cfg, "paper_fill", by=fill["by"], target=f"{ticker} {date}", side=side, shares=fill["shares"],
                 price=price)
    return fill


def paper_history(config: Mapping[str, Any] | None, provider: Any, end: str) -> pd.DataFrame:
    """Columns ``value`` and ``benchmark`` (the benchmark's closes scaled to the start value), one row per
    session from the paper book's start to ``end``; empty without a paper book."""
    cfg = resolve_config(config)
    paper = load_paper(cfg)
    if paper is None:
        return pd.DataFrame(columns=["value", "benchmark"])
    start, end = paper["start"], validate_date(end)
    fills = sorted(paper["fills"], key=lambda f: f["date"])
    # the holdings at the start: today's positions with every fill undone
    positions = {t: float(s) for t, s in paper["positions"].items()}
    cash = float(paper["cash"])
    for f in fills:
        signed = f["shares"] if f["side"] == "buy" else -f["shares"]
        positions[f["ticker"]] = positions.get(f["ticker"], 0.0) - signed
        cash += signed * f["price"]
    tickers = sorted(set(positions) | {f["ticker"] for f in fills})
    def close(ticker: str) -> pd.Series:
        try:
            df = clip_frame(provider.ohlcv(ticker, start, end), start, end)
        except Exception:  # noqa: BLE001 - a position the source cannot price counts as nothing
            return pd.Series(dtype=float)
        return pd.to_numeric(df["Close"], errors="coerce") if df is not None and len(df) else pd.Series(dtype=float)

    closes = {t: close(t) for t in tickers}
    bench_ticker = benchmark_for(tickers[0] if tickers else "SPY", cfg)
    bench = close(bench_ticker).dropna()
    if bench.empty:
        return pd.DataFrame(columns=["value", "benchmark"])
    frame = pd.DataFrame(closes).reindex(bench.index).ffill()
    rows = []
    pending = list(fills)
    for day in frame.index:
        stamp = day.date().isoformat()
        while pending and pending[0]["date"] <= stamp:
            f = pending.pop(0)
            signed = f["shares"] if f["side"] == "buy" else -f["shares"]
            positions[f["ticker"]] = positions.get(f["ticker"], 0.0) + signed
            cash -= signed * f["price"]
        value = cash + sum(q * float(frame.at[day, t]) for t, q in positions.items()
                           if q and t in frame.columns and pd.notna(frame.at[day, t]))
        rows.append((day, value))
    out = pd.DataFrame(rows, columns=["date", "value"]).set_index("date")
    if len(out):
        out["benchmark"] = bench.reindex(out.index) / float(bench.iloc[0]) * float(out["value"].iloc[0])
    out.attrs["benchmark"] = bench_ticker
    return out
