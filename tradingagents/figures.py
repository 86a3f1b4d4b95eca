"""Figures for people: the one place that writes a number for a reader.

Money with its currency and a B/M/K unit (``$105.74B``), prices with thousands separators
(``$1,234.50``), percentages with a sign where a change is meant (``+3.2%``), plain counts with
units (``2.5M``). The app's tables, the exports, the offline engine's reports and the data tools'
statements all call these, so the same figure reads the same everywhere. An absent value (None,
NaN, infinity, text that is no number) is written as ``DASH``, never ``None`` or ``nan``.

Ground floor: imports only the standard library.
"""

from __future__ import annotations

import math
from typing import Any

DASH = "—"

# currency code → the symbol written before the amount; others are written after it ("1.2B CHF")
_SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "CNY": "¥", "INR": "₹", "KRW": "₩",
            "HKD": "HK$", "CAD": "C$", "AUD": "A$"}
_UNITS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))


def number(value: Any) -> float | None:
    """``value`` as a finite float, or None (None, bools, NaN, infinities and non-numbers)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def compact(value: Any, digits: int = 2) -> str:
    """A large count with a unit: 105743196183 → ``105.74B``, 2500000 → ``2.5M``, 950 → ``950``."""
    x = number(value)
    if x is None:
        return DASH
    for size, unit in _UNITS:
        if abs(x) >= size:
            text = f"{x / size:.{digits}f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.{digits}f}".rstrip("0").rstrip(".")


def _with_currency(text: str, currency: str | None) -> str:
    code = (currency or "").upper()
    if not code:
        return text
    if code == "GBP" and currency == "GBp":  # London quotes in pence
        return f"{text}p"
    symbol = _SYMBOLS.get(code)
    if symbol:
        return f"-{symbol}{text[1:]}" if text.startswith("-") else f"{symbol}{text}"
    return f"{text} {code}"


def money(value: Any, currency: str | None = "USD") -> str:
    """An amount of money with a B/M/K unit: ``$105.74B``, ``-$2.1M``, ``€950``."""
    x = number(value)
    if x is None:
        return DASH
    return _with_currency(compact(x), currency)


def price(value: Any, currency: str | None = "USD") -> str:
    """A price, two decimals and thousands separators: ``$1,234.50`` (no unit: a price is read whole)."""
    x = number(value)
    if x is None:
        return DASH
    return _with_currency(f"{x:,.2f}", currency)


def plain_price(value: Any) -> str:
    """A price without a currency: ``1,234.50``."""
    return price(value, None)


def pct(value: Any, digits: int = 1, signed: bool = True) -> str:
    """A fraction as a percentage: 0.0321 → ``+3.2%`` (``3.2%`` with ``signed=False``)."""
    x = number(value)
    if x is None:
        return DASH
    return f"{x:+.{digits}%}" if signed else f"{x:.{digits}%}"


def pct_points(value: Any, digits: int = 1, signed: bool = False) -> str:
    """A number that already is a percentage: 21.5 → ``21.5%``."""
    x = number(value)
    if x is None:
        return DASH
    return f"{x:+.{digits}f}%" if signed else f"{x:.{digits}f}%"


def signed(value: Any, digits: int = 2) -> str:
    """A change with its sign: ``+1.25``, ``-0.40``."""
    x = number(value)
    return DASH if x is None else f"{x:+,.{digits}f}"


def ratio(value: Any, digits: int = 1) -> str:
    """A multiple such as a P/E: ``28.4``."""
    x = number(value)
    return DASH if x is None else f"{x:,.{digits}f}"


def text(value: Any) -> str:
    """A value for a table cell: the dash for None/NaN/empty, the text otherwise (never ``None``)."""
    if value is None:
        return DASH
    if isinstance(value, float) and not math.isfinite(value):
        return DASH
    out = str(value).strip()
    return DASH if out in ("", "None", "nan", "NaN", "<NA>", "NaT") else out


__all__ = ["DASH", "compact", "money", "number", "pct", "pct_points", "plain_price", "price", "ratio", "signed",
           "text"]
