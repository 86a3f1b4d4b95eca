"""The book: what the desk holds, and the order a rating makes of it. Pure: no file, no network.

A ``Book`` is positions (ticker, shares, cost basis per share), cash, a base currency and limits
(``max_weight``: the largest weight of one position; ``target_weight``: where a Buy aims, by
default three quarters of the limit; ``max_sector_weight``: optional, the largest weight of one
sector). ``storage/book.py`` keeps it (a file under the home or a row of the desk database); this
module reads and checks it (``book_from_doc``, ``parse_csv``), values it at given prices
(``valuation``), writes the Portfolio Manager's view of a holding (``holding_context``) and sizes an
order from a rating (``size_order``):

* Buy: towards the target weight (a position already at or past it: towards the limit);
* Overweight: half way from the weight now to the target;
* Hold: nothing;
* Underweight: sell half of the shares held;
* Sell: sell every share held (long only: nothing held, nothing to sell).

A buy is capped by the limit per position, the sector limit and the cash; ``capped_by`` names the cap
that bound it ("max_weight", "max_sector_weight", "cash") or None. Shares are whole. The order is
``{"side", "shares", "notional", "weight_before", "weight_after", "capped_by"}`` plus its ticker,
price, currency and limit; ``order_text`` writes it for people ("Buy 350 NVDA ≈ $61,000, 4.1% → 6.0%
of the book; limit 8.0%").

Imports only the ground floor (ratings, figures, validation, i18n).
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tradingagents import figures
from tradingagents.i18n import N_, Translator, translator
from tradingagents.rating import normalize_rating
from tradingagents.validation import ValidationError, validate_ticker

__all__ = ["DEFAULT_MAX_WEIGHT", "MAX_POSITIONS", "SIDES", "Book", "Position", "book_from_doc", "holding_context",
           "order_text", "parse_csv", "size_order", "valuation"]

DEFAULT_MAX_WEIGHT = 0.10
TARGET_OF_LIMIT = 0.75  # a Buy aims at three quarters of the limit unless target_weight says otherwise
MAX_POSITIONS = 2000
MAX_CSV_BYTES = 5_000_000
SIDES = ("buy", "sell", "none")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True)
class Position:
    ticker: str
    shares: float
    cost_basis: float  # per share, in the book's currency

    def to_doc(self) -> dict[str, Any]:
        return {"ticker": self.ticker, "shares": _whole(self.shares), "cost_basis": self.cost_basis}


@dataclass(frozen=True)
class Book:
    positions: tuple[Position, ...] = ()
    cash: float = 0.0
    currency: str = "USD"
    max_weight: float = DEFAULT_MAX_WEIGHT
    target_weight: float | None = None
    max_sector_weight: float | None = None
    sectors: Mapping[str, str] = field(default_factory=dict)  # ticker → sector, when known

    @property
    def target(self) -> float:
        return self.target_weight if self.target_weight is not None else self.max_weight * TARGET_OF_LIMIT

    def position(self, ticker: str) -> Position | None:
        return next((p for p in self.positions if p.ticker == ticker), None)

    def tickers(self) -> list[str]:
        return [p.ticker for p in self.positions]

    def to_doc(self) -> dict[str, Any]:
        """The book as ``book show --json`` prints it and the storage keeps it."""
        limits: dict[str, Any] = {"max_weight": self.max_weight}
        if self.target_weight is not None:
            limits["target_weight"] = self.target_weight
        if self.max_sector_weight is not None:
            limits["max_sector_weight"] = self.max_sector_weight
        doc: dict[str, Any] = {"positions": [p.to_doc() for p in self.positions], "cash": self.cash,
                               "currency": self.currency, "limits": limits}
        if self.sectors:
            doc["sectors"] = dict(sorted(self.sectors.items()))
        return doc

    def replace(self, **changes: Any) -> Book:
        doc = self.to_doc()
        limits = dict(doc["limits"])
        for key in ("max_weight", "target_weight", "max_sector_weight"):
            if key in changes:
                limits[key] = changes.pop(key)
        doc["limits"] = limits
        if "positions" in changes:
            changes["positions"] = [p.to_doc() if isinstance(p, Position) else p for p in changes["positions"]]
        doc.update(changes)
        return book_from_doc(doc)


def _whole(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x


def _finite(value: Any, what: str, *, lo: float | None = None, lo_open: bool = False,
            hi: float | None = None) -> float:
    if isinstance(value, bool):
        raise ValidationError(f"{what} must be a number, not {value!r}.")
    try:
        x = float(str(value).replace(",", "").strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise ValidationError(f"{what} must be a number, not {str(value)[:40]!r}.") from None
    if not math.isfinite(x):
        raise ValidationError(f"{what} must be a finite number, not {value!r}.")
    if lo is not None and (x < lo or (lo_open and x == lo)):
        raise ValidationError(f"{what} must be {'more than' if lo_open else 'at least'} {lo:g}, not {x:g}.")
    if hi is not None and x > hi:
        raise ValidationError(f"{what} must be at most {hi:g}, not {x:g}.")
    return x


def _weight(value: Any, what: str) -> float:
    return _finite(value, what, lo=0.0, lo_open=True, hi=1.0)


def currency_code(value: Any) -> str:
    text = str(value or "").strip().upper()
    if not _CURRENCY.match(text):
        raise ValidationError(f"The currency must be a three-letter code such as USD, EUR or JPY, not {str(value)[:20]!r}.")
    return text


def book_from_doc(doc: Any) -> Book:
    """A ``Book`` from its stored or posted form, every field checked (``ValidationError`` says which)."""
    if not isinstance(doc, Mapping):
        raise ValidationError("A book is a JSON object with positions, cash, currency and limits.")
    rows = doc.get("positions") or []
    if not isinstance(rows, list):
        raise ValidationError("The book's positions must be a list.")
    if len(rows) > MAX_POSITIONS:
        raise ValidationError(f"A book holds at most {MAX_POSITIONS} positions, not {len(rows)}.")
    positions: dict[str, Position] = {}
    for i, row in enumerate(rows, 1):
        if not isinstance(row, Mapping):
            raise ValidationError(f"Position {i} of the book is not an object with ticker, shares and cost_basis.")
        ticker = validate_ticker(row.get("ticker"))
        if ticker in positions:
            raise ValidationError(f"{ticker} appears twice in the book; keep one position per ticker.")
        shares = _finite(row.get("shares"), f"The shares of {ticker}", lo=0.0, lo_open=True)
        cost = _finite(row.get("cost_basis"), f"The cost basis of {ticker}", lo=0.0)
        positions[ticker] = Position(ticker, shares, cost)
    limits = doc.get("limits") or {}
    if not isinstance(limits, Mapping):
        raise ValidationError("The book's limits must be an object such as {\"max_weight\": 0.1}.")
    max_weight = _weight(limits.get("max_weight", DEFAULT_MAX_WEIGHT), "The limit per position (max_weight)")
    target = limits.get("target_weight")
    target_weight = None if target is None else _weight(target, "The target weight (target_weight)")
    if target_weight is not None and target_weight > max_weight:
        raise ValidationError(f"The target weight {target_weight:.1%} is above the limit {max_weight:.1%}; lower it.")
    sector = limits.get("max_sector_weight")
    sectors = doc.get("sectors") or {}
    if not isinstance(sectors, Mapping):
        raise ValidationError("The book's sectors must be an object: ticker → sector.")
    return Book(
        positions=tuple(positions.values()),
        cash=_finite(doc.get("cash", 0.0), "The cash", lo=0.0),
        currency=currency_code(doc.get("currency") or "USD"),
        max_weight=max_weight,
        target_weight=target_weight,
        max_sector_weight=None if sector is None else _weight(sector, "The sector limit (max_sector_weight)"),
        sectors={validate_ticker(k): str(v)[:80] for k, v in sectors.items() if str(v).strip()},
    )


def parse_csv(text: str, source: str = "the CSV file") -> list[Position]:
    """Positions from a broker's CSV: a header with ``ticker,shares,cost_basis`` (any case, any order,
    other columns ignored), one position a row (a ticker twice: the shares add up, the cost basis is
    their weighted average). Rows that do not parse are refused with their line numbers: nothing is
    imported from a file with one bad row."""
    if len(text) > MAX_CSV_BYTES:
        raise ValidationError(f"{source} is larger than {MAX_CSV_BYTES // 1_000_000} MB; a book is smaller.")
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        header = next(reader)
    except StopIteration:
        raise ValidationError(f"{source} is empty: write a header line ticker,shares,cost_basis and one row a position.") from None
    names = [h.strip().lower().replace(" ", "_") for h in header]
    missing = [c for c in ("ticker", "shares", "cost_basis") if c not in names]
    if missing:
        raise ValidationError(f"{source} has no column {', '.join(missing)}: its header must name ticker, shares and "
                              f"cost_basis (other columns are ignored).")
    at = {c: names.index(c) for c in ("ticker", "shares", "cost_basis")}
    merged: dict[str, tuple[float, float]] = {}
    bad: list[tuple[int, str]] = []
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        try:
            cells = {c: row[i] if i < len(row) else "" for c, i in at.items()}
            ticker = validate_ticker(cells["ticker"])
            shares = _finite(cells["shares"], "shares", lo=0.0, lo_open=True)
            cost = _finite(cells["cost_basis"], "cost_basis", lo=0.0)
        except ValidationError as exc:
            bad.append((line, str(exc).split(". ")[0]))
            continue
        held, basis = merged.get(ticker, (0.0, 0.0))
        merged[ticker] = (held + shares, (held * basis + shares * cost) / (held + shares))
        if len(merged) > MAX_POSITIONS:
            raise ValidationError(f"{source} has more than {MAX_POSITIONS} positions; a book holds at most that many.")
    if bad:
        shown = "; ".join(f"line {n}: {why}" for n, why in bad[:10]) + ("; …" if len(bad) > 10 else "")
        raise ValidationError(f"{source} has {len(bad)} row(s) that do not parse, so nothing was imported ({shown}). "
                              "Fix those rows and import again.")
    if not merged:
        raise ValidationError(f"{source} has a header but no position.")
    return [Position(t, shares, round(cost, 6)) for t, (shares, cost) in merged.items()]


# ---------------------------------------------------------------------------- valuation
def valuation(book: Book, prices: Mapping[str, float | None]) -> dict[str, Any]:
    """The book at ``prices`` (ticker → close; a position without a price is valued at its cost basis and
    named in ``unpriced``): ``{"value", "cash", "positions": {ticker: {shares, price, value, weight,
    unrealised}}, "sectors": {sector: weight}, "unpriced": [...]}``."""
    rows: dict[str, dict[str, Any]] = {}
    unpriced = []
    for p in book.positions:
        price = figures.number(prices.get(p.ticker))
        if price is None or price <= 0:
            unpriced.append(p.ticker)
            price = p.cost_basis
        rows[p.ticker] = {"shares": p.shares, "price": price, "value": p.shares * price,
                          "cost_basis": p.cost_basis,
                          "unrealised": (price / p.cost_basis - 1) if p.cost_basis > 0 else None}
    total = book.cash + sum(r["value"] for r in rows.values())
    sectors: dict[str, float] = {}
    for ticker, r in rows.items():
        r["weight"] = r["value"] / total if total > 0 else 0.0
        sector = book.sectors.get(ticker)
        if sector:
            sectors[sector] = sectors.get(sector, 0.0) + r["weight"]
    return {"value": total, "cash": book.cash, "positions": rows, "sectors": sectors, "unpriced": unpriced}


def holding_context(book: Book, ticker: str, prices: Mapping[str, float | None]) -> str:
    """What the Portfolio Manager reads about the book (English, for the model; the offline engine reads
    its ``Held:`` / ``Not held:`` line)."""
    v = valuation(book, prices)
    total, cur = v["value"], book.currency
    row = v["positions"].get(ticker)
    limit = f"the limit per position is {book.max_weight:.1%}, the target weight {book.target:.1%}"
    if book.max_sector_weight is not None:
        limit += f", the limit per sector {book.max_sector_weight:.1%}"
    lines = [f"Book: {figures.money(total, cur)} in {cur} ({len(book.positions)} positions, cash "
             f"{figures.money(book.cash, cur)}, {v['cash'] / total:.1%} of the book)" if total > 0 else
             f"Book: empty ({cur})"]
    if row is not None:
        unreal = "unknown" if row["unrealised"] is None else f"{row['unrealised']:+.1%}"
        state = ("at or over the limit: a Buy adds nothing" if row["weight"] >= book.max_weight - 1e-9 else
                 f"room to add {book.max_weight - row['weight']:.1%} of the book before the limit")
        lines.append(f"Held: {_whole(row['shares'])} shares of {ticker} at a cost basis of "
                     f"{figures.price(row['cost_basis'], cur)}, now {figures.price(row['price'], cur)}; weight "
                     f"{row['weight']:.1%} of the book; unrealised return {unreal}; limit {book.max_weight:.1%} "
                     f"({state}).")
    else:
        lines.append(f"Not held: the book holds no {ticker}; limit {book.max_weight:.1%} per position.")
    lines.append(f"Limits: {limit}. An order is sized from your rating: Buy towards the target weight, "
                 "Overweight half way, Hold nothing, Underweight sells half, Sell exits.")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- orders
def _none(ticker: str, price: float, currency: str, weight: float, limit: float,
          capped_by: str | None = None, reason: str | None = None) -> dict[str, Any]:
    return {"side": "none", "shares": 0, "notional": 0.0, "weight_before": weight, "weight_after": weight,
            "capped_by": capped_by, "ticker": ticker, "price": price, "currency": currency, "limit": limit,
            "reason": reason}


def size_order(rating: str, book: Book, ticker: str, price: float,
               prices: Mapping[str, float | None] | None = None, sector: str | None = None) -> dict[str, Any]:
    """The order ``rating`` makes of ``ticker`` at ``price`` against ``book`` (see the module docstring).

    ``prices`` values the rest of the book (a position without one at its cost basis); ``sector`` is the
    ticker's sector for the sector limit (else the book's own ``sectors``)."""
    tier = normalize_rating(rating)
    if tier is None:
        raise ValidationError(f"No rating to size an order from: {str(rating)[:40]!r}.")
    ticker = validate_ticker(ticker)
    price = _finite(price, f"The price of {ticker}", lo=0.0, lo_open=True)
    v = valuation(book, {**(prices or {}), ticker: price})
    total = v["value"]
    held = book.position(ticker)
    shares_held = held.shares if held else 0.0
    weight = (shares_held * price / total) if total > 0 else 0.0
    limit, cur = book.max_weight, book.currency
    if tier == "Hold":
        return _none(ticker, price, cur, weight, limit, reason="hold")
    if tier in ("Underweight", "Sell"):
        if shares_held <= 0:
            return _none(ticker, price, cur, weight, limit, reason="not_held")
        shares = math.floor(shares_held / 2) if tier == "Underweight" else shares_held
        if shares <= 0:
            return _none(ticker, price, cur, weight, limit, reason="too_small")
        after = (shares_held - shares) * price / total
        return {"side": "sell", "shares": _whole(shares), "notional": round(shares * price, 2), "weight_before": weight,
                "weight_after": after, "capped_by": None, "ticker": ticker, "price": price, "currency": cur,
                "limit": limit, "reason": None}
    if total <= 0:
        return _none(ticker, price, cur, weight, limit, capped_by="cash", reason="empty_book")
    target = book.target
    capped_by = None
    if tier == "Buy":  # past the target, a Buy adds up to the limit, which then binds
        aim, capped_by = (target, None) if weight < target - 1e-9 else (limit, "max_weight")
    else:  # Overweight: half way to the target
        aim = weight + (target - weight) / 2 if weight < target else weight
    if aim > limit:
        aim, capped_by = limit, "max_weight"
    if weight >= limit - 1e-9:
        return _none(ticker, price, cur, weight, limit, capped_by="max_weight", reason="at_limit")
    if aim <= weight + 1e-9:
        return _none(ticker, price, cur, weight, limit, reason="at_target")
    want = (aim - weight) * total
    sector = sector or book.sectors.get(ticker)
    if book.max_sector_weight is not None and sector:
        others = v["sectors"].get(sector, 0.0) - (weight if ticker in book.sectors else 0.0)
        room = (book.max_sector_weight - others - weight) * total
        if room < want:
            want, capped_by = max(room, 0.0), "max_sector_weight"
    if book.cash < want:
        want, capped_by = book.cash, "cash"
    shares = math.floor(want / price + 1e-9)
    if shares <= 0:
        return _none(ticker, price, cur, weight, limit, capped_by=capped_by or "cash", reason="too_small")
    notional = shares * price
    return {"side": "buy", "shares": shares, "notional": round(notional, 2), "weight_before": weight,
            "weight_after": weight + notional / total, "capped_by": capped_by, "ticker": ticker, "price": price,
            "currency": cur, "limit": limit, "reason": None}


CAPS = {"max_weight": N_("capped by the limit per position"), "max_sector_weight": N_("capped by the sector limit"),
        "cash": N_("capped by the cash")}
REASONS = {"hold": N_("Hold: no order"), "not_held": N_("nothing held, nothing to sell"),
           "at_limit": N_("already at the limit per position"), "at_target": N_("already at the target weight"),
           "too_small": N_("less than one share"), "empty_book": N_("the book is empty")}


def order_text(order: Mapping[str, Any] | None, t: Translator | None = None) -> str:
    """The order for people: "Buy 350 NVDA ≈ $61,000, 4.1% → 6.0% of the book; limit 8.0%" (and, when
    nothing is ordered, why: "No order for NVDA: already at the limit per position (8.0%); capped")."""
    t = t or translator(None)
    if not order:
        return figures.DASH
    cur = order.get("currency") or "USD"
    fields = {"ticker": order.get("ticker") or "", "before": figures.pct(order.get("weight_before"), signed=False),
              "after": figures.pct(order.get("weight_after"), signed=False),
              "limit": figures.pct(order.get("limit"), signed=False)}
    cap = order.get("capped_by")
    if order.get("side") in ("buy", "sell") and order.get("shares"):
        amount = f"{figures.compact(order['shares'])}"
        notional = figures.price(order.get("notional"), cur)
        text = (t("Buy {shares} {ticker} ≈ {notional}, {before} → {after} of the book; limit {limit}", shares=amount,
                  notional=notional, **fields) if order["side"] == "buy" else
                t("Sell {shares} {ticker} ≈ {notional}, {before} → {after} of the book; limit {limit}", shares=amount,
                  notional=notional, **fields))
    else:
        why = REASONS.get(str(order.get("reason") or ""))
        text = t("No order for {ticker} ({before} of the book; limit {limit})", **fields)
        if why:
            text += t("; ") + t(why)
    if cap in CAPS:
        text += t("; ") + t(CAPS[cap])
    return text
