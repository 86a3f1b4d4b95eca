"""Blind runs: an identity map between the data source and everything a model can read.

A language model has read about the period it is tested on; on real tickers and dates it can
"predict" what it remembers. In a blind run the models never see the real instrument or calendar:

* **Ticker → alias.** Each real ticker gets a stable alias (``X`` + three letters from a hash of the
  ticker and the map's salt, keeping an exchange suffix such as ``.HK`` so the benchmark rule still
  applies); the run itself is made on the alias.
* **Identity removed.** ``identity`` is only the alias; fundamentals lose name, sector, industry and
  every other text field but the currency; company names and tickers are scrubbed (whole words, any
  case, ``$NVDA`` too) from news, global news, posts and messages.
* **Dates shifted by whole years.** By ``YEAR_SHIFT = −28`` years: the Gregorian calendar repeats
  every 28 years between 1901 and 2099, so days of the week (and leap days) are kept. Every date a
  tool returns (index, fields, ISO dates and four-digit years 1990–2040 in text) is shifted; every
  date a tool is asked for is shifted back before the data source sees it.
* **Prices rebased.** Each ticker's prices are multiplied by ``100 / close`` on the map's anchor
  day (the first day of the backtest or the run's date: known at every step), so returns are
  unchanged; money amounts of fundamentals and statements are multiplied by a second factor from
  the alias's hash (10^−1 … 10^1), per-share amounts by the price factor, and share counts by their
  ratio, so P/E, P/B, margins and growth are unchanged.

The map is plain data (``BlindMap.to_dict``), carried in a run's config as ``blind``;
``get_provider`` then wraps the data source in ``BlindProvider`` and the engine runs on the alias
and the shifted date, unaware of the mode. ``BlindMap.unblind_text`` undoes the ticker and date map on
everything stored or shown, and ``BlindProvider.real_prices_text`` the rebasing of the prices and money
amounts quoted in a stored text (the run's own ticker's factors, to the precision the text quotes):
a number with decimals after a price word (``close``, ``closed at``, ``close_50_sma``, ``boll_ub``,
``macd``, ``atr``, ``EPS``, ``estimate``, ``$``, …, and the ``to`` of "from 82.41 on <date> to 100.00"),
a money amount ("54.1 million"), and a statement line's figures ("Total Revenue: … for the period
ending …, against …"; not a share count). Ratios, percentages, RSI and P/E are left alone (they are
the same in both scales).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from tradingagents import figures
from tradingagents.dataflows.provider import MarketData, MarketDataProvider, check_ticker

YEAR_SHIFT = -28
_YEAR_LO, _YEAR_HI = 1990, 2040  # four-digit years in text that are shifted
_LETTERS = "BCDFGHJKLMNPQRSTVWZ"
_NAME_SUFFIXES = re.compile(
    r"[\s,]+(incorporated|inc\.?|corporation|corp\.?|company|co\.?|ltd\.?|limited|plc|ag|sa|se|nv|n\.v\.|"
    r"holdings?|group|class [a-c]|& co\.?|the)$", re.I)
_DATE_OR_YEAR = re.compile(r"(?<![\d.])(\d{4})-(\d{2})-(\d{2})(?!\d)|(?<![\d.$])(\d{4})(?![\d]|\.\d)")
PRICE_COLUMNS = ("Open", "High", "Low", "Close", "Adj Close")
_PRICE_KEYS = ("price", "fifty_two_week_high", "fifty_two_week_low", "eps_ttm", "last_eps", "last_eps_estimate",
               "book_value_per_share", "dividend_per_share", "target_price")
_MONEY_KEYS = ("market_cap", "revenue_ttm", "net_income_ttm", "free_cash_flow_ttm", "enterprise_value",
               "total_cash", "total_debt", "ebitda", "gross_profit_ttm", "operating_cash_flow_ttm")
_SHARE_KEYS = ("shares_outstanding", "float_shares")
_KEEP_TEXT = ("currency", "financial_currency")


def alias_for(ticker: str, salt: str = "") -> str:
    """A stable alias of ``ticker``: ``X`` + three consonants, the exchange suffix kept."""
    t = ticker.upper()
    base, dot, suffix = t.partition(".")
    digest = hashlib.sha256(f"{salt}|{t}".encode()).digest()
    code = "X" + "".join(_LETTERS[b % len(_LETTERS)] for b in digest[:3])
    return code + (dot + suffix if dot and suffix else "")


def shift_date(value: str, years: int) -> str:
    """``YYYY-MM-DD`` moved by whole ``years`` (a 29 February to 28 February off a leap year)."""
    ts = pd.Timestamp(value[:10])
    return (ts + pd.DateOffset(years=years)).date().isoformat() + value[10:]


def name_variants(name: str | None) -> list[str]:
    """The ways a company's name appears in text: as given, without its legal suffix, its first word."""
    if not name:
        return []
    out = {name.strip()}
    short = name.strip()
    for _ in range(3):
        short = _NAME_SUFFIXES.sub("", short).strip(" ,.")
    if short:
        out.add(short)
        first = short.split()[0].strip(",.")
        if len(first) >= 4:
            out.add(first)
    return sorted(out, key=len, reverse=True)


class BlindMap:
    """Real tickers ↔ aliases, real dates ↔ shifted dates, and the rebasing anchor."""

    def __init__(self, tickers: Iterable[str], anchor: str, *, salt: str = "", years: int = YEAR_SHIFT,
                 names: Mapping[str, Iterable[str]] | None = None) -> None:
        self.tickers = [t.upper() for t in tickers]
        self.anchor = str(anchor)[:10]
        self.salt = salt
        self.years = int(years)
        self.aliases = {t: alias_for(t, salt) for t in self.tickers}
        self.real = {a: t for t, a in self.aliases.items()}
        self.names = {t: list(v) for t, v in (names or {}).items()}
        self._patterns: tuple[re.Pattern[str], re.Pattern[str] | None] | None = None

    # ---- plain data (in a config)
    def to_dict(self) -> dict[str, Any]:
        return {"tickers": list(self.tickers), "anchor": self.anchor, "salt": self.salt, "years": self.years,
                "names": {t: list(v) for t, v in self.names.items()}}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> BlindMap:
        return cls(doc["tickers"], doc["anchor"], salt=str(doc.get("salt") or ""), years=int(doc["years"]),
                   names={str(k): list(v) for k, v in (doc.get("names") or {}).items()})

    @classmethod
    def make(cls, tickers: Iterable[str], anchor: str, provider: MarketData | None = None,
             salt: str = "") -> BlindMap:
        """A map whose names to scrub are read from ``provider``'s identity of each ticker."""
        tickers = [t.upper() for t in tickers]
        names: dict[str, list[str]] = {}
        for t in tickers:
            try:
                ident = provider.identity(t) if provider is not None else {}
            except Exception:  # noqa: BLE001 - no identity: nothing more to scrub than the ticker
                ident = {}
            names[t] = name_variants(ident.get("name") if ident.get("name") != t else None)
        return cls(tickers, anchor, salt=salt, names=names)

    # ---- tickers and dates
    def alias(self, ticker: str) -> str:
        return self.aliases.get(ticker.upper(), ticker.upper())

    def unalias(self, ticker: str) -> str:
        return self.real.get(ticker.upper(), ticker.upper())

    def blind_date(self, value: str) -> str:
        return shift_date(value, self.years)

    def real_date(self, value: str) -> str:
        return shift_date(value, -self.years)

    # ---- text
    def _scrub_patterns(self) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
        """Tickers as written (a ticker may be a common word in lower case); names in any case."""
        if self._patterns is None:
            exact = {t for t in self.tickers} | {t.partition(".")[0] for t in self.tickers if "." in t}
            # names in any case (over-scrubbing a common word is safe; a leak is not)
            loose = {n for t in self.tickers for n in self.names.get(t, ())}

            def alternation(words: set[str]) -> str:
                return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))

            edge_l, edge_r = r"(?<![A-Za-z0-9])(", r")(?![A-Za-z0-9])"
            self._patterns = (re.compile(edge_l + alternation(exact) + edge_r),
                              re.compile(edge_l + alternation(loose) + edge_r, re.I) if loose else None)
        return self._patterns

    def _owner(self, word: str) -> str:
        low = word.lower()
        for t in self.tickers:
            if low in (t.lower(), t.partition(".")[0].lower()) or low in (n.lower() for n in self.names.get(t, ())):
                return t
        return self.tickers[0]

    def _dates(self, text: str, years: int, lo: int, hi: int) -> str:
        def repl(m: re.Match[str]) -> str:
            if m.group(1):
                try:
                    return shift_date(m.group(0), years)
                except ValueError:
                    return m.group(0)
            y = int(m.group(4))
            return str(y + years) if lo <= y <= hi else m.group(0)

        return _DATE_OR_YEAR.sub(repl, text)

    def blind_text(self, text: str) -> str:
        """``text`` as a model may read it: names and tickers → alias, dates and years shifted."""
        if not isinstance(text, str) or not text:
            return text
        if self.tickers:
            exact, loose = self._scrub_patterns()
            if loose is not None:
                text = loose.sub(lambda m: self.aliases[self._owner(m.group(0))], text)
            text = exact.sub(lambda m: self.aliases[self._owner(m.group(0))], text)
        return self._dates(text, self.years, _YEAR_LO, _YEAR_HI)

    def unblind_text(self, text: str) -> str:
        """``text`` of a blind run as stored or shown: aliases → real tickers, dates shifted back."""
        if not isinstance(text, str) or not text:
            return text
        for alias in sorted(self.real, key=len, reverse=True):
            text = re.sub(r"(?<![A-Za-z0-9])" + re.escape(alias) + r"(?![A-Za-z0-9])", self.real[alias], text)
        return self._dates(text, -self.years, _YEAR_LO + self.years, _YEAR_HI + self.years)

    def blind_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.blind_text(value)
        if isinstance(value, pd.Timestamp):
            return value + pd.DateOffset(years=self.years)
        if isinstance(value, Mapping):
            return {k: self.blind_value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.blind_value(v) for v in value)
        return value

    def unblind_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.unblind_text(value)
        if isinstance(value, Mapping):
            return {k: self.unblind_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.unblind_value(v) for v in value]
        return value

    def money_factor(self, ticker: str) -> float:
        digest = hashlib.sha256(f"{self.salt}|money|{ticker.upper()}".encode()).digest()
        return 10.0 ** (-1.0 + 2.0 * digest[0] / 255.0)


def _scrubbed(blind: BlindMap, exc: Exception) -> Exception:
    """The same error with its message blinded (an error text is read by the models too)."""
    try:
        new = type(exc)(blind.blind_text(str(exc)))
    except Exception:  # noqa: BLE001 - an exception type with another signature
        return exc
    return new


class BlindProvider(MarketDataProvider):
    """The data source seen through a ``BlindMap``: asked in blind terms, answering in blind terms."""

    def __init__(self, base: MarketData, blind: BlindMap) -> None:
        self.base = base
        self.blind = blind
        self.vendor = base.vendor
        self.supports_social = base.supports_social
        self.local = bool(getattr(base, "local", False))
        self.label = "blind run data"
        self._factors: dict[str, float] = {}
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        if name in ("base", "blind"):
            raise AttributeError(name)
        return getattr(self.base, name)

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - re-raised with its message blinded
            raise _scrubbed(self.blind, exc) from None

    def price_factor(self, real: str) -> float:
        """``100 / close`` of ``real`` on (or the last before, else the first after) the anchor day."""
        with self._lock:
            if real in self._factors:
                return self._factors[real]
        anchor = pd.Timestamp(self.blind.anchor)
        frame = self.base.ohlcv(real, (anchor - pd.Timedelta(days=14)).date().isoformat(), self.blind.anchor)
        if frame is None or frame.empty:
            frame = self.base.ohlcv(real, self.blind.anchor, (anchor + pd.Timedelta(days=14)).date().isoformat())
            close = float(frame["Close"].iloc[0]) if frame is not None and not frame.empty else 100.0
        else:
            close = float(frame["Close"].iloc[-1])
        factor = 100.0 / close if close > 0 else 1.0
        with self._lock:
            self._factors[real] = factor
        return factor

    def _shift_index(self, frame: pd.DataFrame, years: int) -> pd.DataFrame:
        out = frame.copy()
        out.index = pd.DatetimeIndex([d + pd.DateOffset(years=years) for d in out.index], name=frame.index.name)
        return out

    # -- prices
    def ohlcv(self, ticker: str, start: str, end: str) -> pd.DataFrame:
        real = self.blind.unalias(check_ticker(ticker))
        frame = self._call(self.base.ohlcv, real, self.blind.real_date(start), self.blind.real_date(end))
        out = self._shift_index(frame, self.blind.years)
        f = self.price_factor(real)
        for col in PRICE_COLUMNS:
            if col in out.columns:
                out[col] = out[col].astype(float) * f
        out.attrs = {k: self.blind.blind_value(v) for k, v in frame.attrs.items()}
        out.attrs["data_source"] = self.label
        return out

    # -- company
    def identity(self, ticker: str) -> dict[str, Any]:
        return {"name": check_ticker(ticker), "data_source": self.label}

    def fundamentals(self, ticker: str, as_of: str) -> dict[str, Any]:
        alias = check_ticker(ticker)
        real = self.blind.unalias(alias)
        data = self._call(self.base.fundamentals, real, self.blind.real_date(as_of)) or {}
        fp, fm = self.price_factor(real), self.blind.money_factor(real)
        out: dict[str, Any] = {}
        for key, value in data.items():
            if key == "ticker":
                out[key] = alias
            elif key == "data_source":
                out[key] = self.label
            elif isinstance(value, str):
                if key in _KEEP_TEXT or _looks_like_date(value):
                    out[key] = self.blind.blind_text(value)
                # every other text (name, sector, industry, exchange, website, summary…) is left out
            elif isinstance(value, int | float) and not isinstance(value, bool) and value is not None:
                if key in _PRICE_KEYS:
                    out[key] = round(value * fp, 4)
                elif key in _MONEY_KEYS:
                    out[key] = round(value * fm, 0)
                elif key in _SHARE_KEYS:
                    out[key] = round(value * fm / fp, 0)
                else:
                    out[key] = value
            else:
                out[key] = self.blind.blind_value(value)
        return out

    def statements(self, ticker: str, kind: str, freq: str, as_of: str) -> pd.DataFrame:
        real = self.blind.unalias(check_ticker(ticker))
        df = self._call(self.base.statements, real, kind, freq, self.blind.real_date(as_of))
        out = df.copy()
        fm = self.blind.money_factor(real)
        out = out.apply(lambda col: pd.to_numeric(col, errors="coerce") * fm if col.dtype != object else col)
        cols = []
        for c in out.columns:
            try:
                cols.append(pd.Timestamp(c) + pd.DateOffset(years=self.blind.years))
            except (TypeError, ValueError):
                cols.append(self.blind.blind_text(str(c)))
        out.columns = cols
        out.index = [self.blind.blind_text(str(i)) for i in out.index]
        return out

    def missing_prices_hint(self, ticker: str, as_of: str) -> str:
        real = self.blind.unalias(check_ticker(ticker))
        return self.blind.blind_text(self.base.missing_prices_hint(real, self.blind.real_date(as_of)))

    # -- text
    def news(self, ticker: str, start: str, end: str) -> list[dict[str, Any]]:
        real = self.blind.unalias(check_ticker(ticker))
        items = self._call(self.base.news, real, self.blind.real_date(start), self.blind.real_date(end))
        return [self._item(it, real) for it in items]

    def global_news(self, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        items = self._call(self.base.global_news, self.blind.real_date(as_of), look_back_days)
        return [self._item(it) for it in items]

    def social(self, ticker: str, as_of: str, look_back_days: int = 7) -> list[dict[str, Any]]:
        real = self.blind.unalias(check_ticker(ticker))
        items = self._call(self.base.social, real, self.blind.real_date(as_of), look_back_days)
        return [self._item(it, real) for it in items]

    def _item(self, item: Mapping[str, Any], real: str | None = None) -> dict[str, Any]:
        out = dict(self.blind.blind_value(dict(item)))
        if "source" in out:
            out["source"] = self.label
        fp = self.price_factor(real) if real else None
        fm = self.blind.money_factor(real) if real else None
        for key, value in out.items():
            if isinstance(value, str):
                out[key] = self._rebase_text(value, fp, fm)
        return out

    def real_prices_text(self, text: str, real: str) -> str:
        """``text`` stored by a blind run with the prices and money amounts it quotes put back on the
        real scale of ``real`` (the run's ticker); see the module docstring for what is recognised."""
        if not isinstance(text, str) or not text:
            return text
        try:
            fp, fm = 1.0 / self.price_factor(real.upper()), 1.0 / self.blind.money_factor(real)
        except Exception:  # noqa: BLE001 - no prices for it: the text stays as it was
            return text

        def number(m_value: str, factor: float) -> str:
            raw = m_value.replace(",", "")
            decimals = len(raw.split(".")[1]) if "." in raw else 0
            value = float(raw) * factor
            return f"{value:,.{decimals}f}" if "," in m_value else f"{value:.{decimals}f}"

        def statement(m: re.Match[str]) -> str:
            if "share" in m.group("label").lower():
                return m.group(0)  # a share count has its own factor, not money's
            return m.group("label") + ": " + number(m.group("a"), fm) + m.group("mid") + number(m.group("b"), fm)

        def compact_money(m: re.Match[str]) -> str:
            value = float(m.group(3)) * _UNITS[m.group(4)] * fm
            return m.group(1) + m.group(2) + figures.money(value, None)  # to the display's precision

        text = _STATEMENT.sub(statement, text)
        text = _COMPACT_MONEY.sub(compact_money, text)
        text = _MONEY.sub(lambda m: number(m.group(1), fm) + m.group(2), text)
        text = _EPS.sub(lambda m: m.group(1) + number(m.group(2), fp) + (m.group(3) or "")
                        + (number(m.group(4), fp) if m.group(4) else ""), text)
        text = _BAND_TOP.sub(lambda m: m.group(1) + number(m.group(2), fp), text)
        text = _REAL_PRICE_ZH.sub(lambda m: m.group("pre") + number(m.group("num"), fp), text)
        return _REAL_PRICE.sub(lambda m: m.group("pre") + number(m.group("num"), fp), text)

    def _rebase_text(self, text: str, fp: float | None, fm: float | None) -> str:
        """Prices and money amounts quoted in a text, rebased like the data (a heuristic on the
        phrases news and posts use: "closed at 59.55", "54.08 USD", "105,743 million USD"; an index's
        level "SPY settled at 505.81" with that index's factor)."""
        def number(m_value: str, factor: float) -> str:
            raw = m_value.replace(",", "")
            decimals = len(raw.split(".")[1]) if "." in raw else 0
            value = float(raw) * factor
            return f"{value:,.{max(decimals, 2) if decimals else 0}f}" if "," in m_value else f"{value:.{decimals or 2}f}"

        if fm is not None:
            text = _MONEY.sub(lambda m: number(m.group(1), fm) + m.group(2), text)
        if fp is not None:
            text = _PRICE.sub(lambda m: m.group(1) + number(m.group(2), fp), text)
            text = _PRICE_CCY.sub(lambda m: number(m.group(1), fp) + m.group(2), text)
            text = _EPS.sub(lambda m: m.group(1) + number(m.group(2), fp) + (m.group(3) or "")
                            + (number(m.group(4), fp) if m.group(4) else ""), text)
        for sym in set(_INDEX_LEVEL.findall(text)):
            try:
                f = self.price_factor(self.blind.unalias(sym))
            except Exception:  # noqa: BLE001 - no price for it: its level stays out of the text
                f = None
            text = re.sub(r"(\b" + re.escape(sym) + r"\b[^.;]*?\b(?:settled|ended the week) at )(\d[\d,]*(?:\.\d+)?)",
                          lambda m, f=f: m.group(1) + (number(m.group(2), f) if f else "its level"), text)
        return text


_REAL_PRICE = re.compile(
    r"(?P<pre>(?:(?<![A-Za-z0-9_])(?:close|open|high|low|closed at|close was|close of|price target|target of|"
    r"trading at|traded at|opened at|high of|low of|close_\d+_(?:sma|ema|wma)|boll_lb|boll_ub|boll|vwma|atr|"
    r"macds|macdh|macd|estimate|rose from|fell from|up from|down from|\d+-day average of|Bollinger bands,|"
    r"\(ATR\) is|MACD line at|signal line at|ATRs \(|ATR \(|support at|resistance at|Re-entry only above)\s*\$?|\$|\bon \d{4}-\d{2}-\d{2} to\s+|"
    # the decision card's canonical lines (graph/decision_card: "**Entry**: 54.69", also in a Chinese run)
    # and the trader's ("- Entry: near 54.69.", "- Stop-loss: 47.97, two ATRs (3.36) below …")
    r"(?<![A-Za-z0-9_])(?:\*\*)?(?:Entry|Price target|Stop-loss)(?:\*\*)?:\s*(?:near\s+)?\$?))"
    r"(?P<num>-?\d[\d,]*\.\d+)(?!\.?\d)(?!\s*(?:%|thousand|million|billion|trillion))(?![KMBT]\b)")
# the same prices in the offline engine's Chinese (tradingagents/locales/zh/.../engine.po): "收盘价 54.75",
# "50 日均线 57.66", "布林带 95.24 至 110.56", "（ATR）为 3.29", "MACD 线 1.20", "从 2024-05-01 的 55.10 上涨至",
# "止损价：48.17", "高于 61.33 时重新入场", "入场：54.75 附近"
_REAL_PRICE_ZH = re.compile(
    r"(?P<pre>(?:收盘价为|收盘价|每股收益|不及预期|超出预期|符合预期|预期|支撑位|阻力位|日均线|布林带上轨|布林带下轨|布林带|（ATR）为|ATR（|MACD 线|信号线|\d{4}-\d{2}-\d{2} 的|"
    r"止损价：|高于|入场：|(?<=\d) 至)\s*)"
    r"(?P<num>-?\d[\d,]*\.\d+)(?!\.?\d)(?!\s*(?:%|千|万|亿))")
# money written for people (tradingagents.figures.money): "$105.74B", "-€2.1M"
_COMPACT_MONEY = re.compile(r"(?<![\w.])(-?)([$€£¥])(\d+(?:\.\d+)?)([KMBT])\b")
_UNITS = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
# the upper band of "the Bollinger bands, 95.24 to 110.56" (the lower one is a _REAL_PRICE)
_BAND_TOP = re.compile(r"(Bollinger bands, -?\d[\d,]*\.\d+ to )(-?\d[\d,]*\.\d+)(?!\.?\d)")
_STATEMENT = re.compile(r"(?m)^(?P<label>[-*\s]*[A-Z][A-Za-z &/()]+): (?P<a>-?\d+(?:\.\d+)?)"
                        r"(?P<mid> for the period ending [\d-]+, against )(?P<b>-?\d+(?:\.\d+)?)")
_MONEY = re.compile(r"(?<![\d.,])(\d[\d,]*(?:\.\d+)?)(\s(?:thousand|million|billion|trillion)\b)")
_PRICE = re.compile(r"(\b(?:closed at|close was|close of|price target|target of|trading at|traded at|"
                    r"opened at|high of|low of)\s+\$?)(\d[\d,]*(?:\.\d+)?)(?![\d:])")
_PRICE_CCY = re.compile(r"(?<![\d.,])(\d[\d,]*\.\d+)(\s(?:USD|EUR|GBP|JPY|HKD|CNY|INR|CAD|AUD|CHF)\b)")
_EPS = re.compile(r"(\bEPS\s+)(\d+\.\d+)(?:(\s+vs\.?\s+)(\d+\.\d+))?")
_INDEX_LEVEL = re.compile(r"\b([A-Z^][A-Z0-9.^=]{1,9})\b(?=[^.;]*?\b(?:settled|ended the week) at \d)")


def _looks_like_date(value: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}([T ][\d:.+Z-]*)?", value.strip()))
