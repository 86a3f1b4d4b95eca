"""The desk's book in storage: ``load_book``, ``save_book``, ``import_book_csv`` (files or the database).

The book is one document, ``book`` (``<desk_dir>/book.json``, or a row of ``ta_desk_docs``), in the
form ``tradingagents.book.Book.to_doc`` writes and ``book_from_doc`` checks on every read, so a
hand-edited file that does not validate is refused with what to fix. Every change is recorded in the
audit trail (``book_import``, ``book_edit``) with who made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tradingagents.book import Book, book_from_doc, currency_code, parse_csv
from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.storage.audit import default_user, record_audit
from tradingagents.storage.desk import open_desk_docs

__all__ = ["import_book_csv", "load_book", "save_book"]

DOC = "book"


def load_book(config: Mapping[str, Any] | None = None) -> Book | None:
    """The desk's book, or None when none was imported. A stored book that does not validate raises
    ``ConfigError`` naming where it lives."""
    docs = open_desk_docs(config)
    doc = docs.get(DOC)
    if doc is None:
        return None
    try:
        return book_from_doc(doc)
    except ValidationError as exc:
        raise ConfigError(f"The stored book ({docs!r}) does not validate: {exc} Import it again "
                          "(python -m tradingagents book import FILE) or fix it.") from None


def save_book(config: Mapping[str, Any] | None, book: Book, *, action: str = "book_edit",
              by: str | None = None) -> Book:
    """Store ``book`` (checked again), record it in the audit trail, return it."""
    cfg = resolve_config(config)
    checked = book_from_doc(book.to_doc())
    open_desk_docs(cfg).update(DOC, lambda _old: checked.to_doc())
    record_audit(cfg, action, by=by or default_user(cfg), target="book",
                 positions=len(checked.positions), cash=checked.cash, currency=checked.currency,
                 max_weight=checked.max_weight)
    return checked


def import_book_csv(config: Mapping[str, Any] | None, source: str | Path, *, text: str | None = None,
                    cash: float | None = None, currency: str | None = None, max_weight: float | None = None,
                    by: str | None = None) -> Book:
    """Replace the book's positions with a broker's CSV (``ticker,shares,cost_basis``; ``text`` given, or
    read from the file ``source``). Cash, currency and limits keep their stored values unless given."""
    if text is None:
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise ValidationError(f"No file {path}: give the path of a CSV with the header ticker,shares,cost_basis.") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidationError(f"{path} cannot be read as UTF-8 text ({exc}).") from None
    positions = parse_csv(text, str(source))
    old = load_book(config) or Book()
    book = old.replace(positions=positions,
                       **({"cash": cash} if cash is not None else {}),
                       **({"currency": currency_code(currency)} if currency is not None else {}),
                       **({"max_weight": max_weight} if max_weight is not None else {}))
    return save_book(config, book, action="book_import", by=by)
