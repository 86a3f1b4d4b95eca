"""The evidence ledger: every figure a run's texts state, traced to the data it came from.

``ledger(state, turns, decision)`` gives the saved run's ``meta["evidence"]``, one record per text (the
four reports, each debate turn, the investment plan, the trader's plan, the final decision)::

    {"<text key>": {"figures": n, "found": k,
                    "not_found": [{"figure": "<as written>", "sentence": "<its sentence>"}],
                    "sources": [{"figure", "tool", "args", "excerpt"}]}}

**A figure** is a number that states data: a price, an indicator value, a percentage, an amount with
K/M/B/T or a currency, a count, a ratio (``figures_in``). Not figures: dates (2024-05-10, a year, Q3),
list and heading numbers, numbers inside a name (close_50_sma, the ticker), periods (50-day, 7 days,
3-month: the run's windows), debate rounds, and in the texts from the trader on the decision's own
proposals (entry, target, stop, size of the structured decision).

**Found** when a tool answer of this run (the state's ``tool_answers``), the past context the run was
given, or an earlier text of the run whose figure was itself found holds the same value at the
figure's printed precision, units normalised ($188.9B = 188,900,000,000; 69.5 = 69.49; 16.0% =
0.160); the sign may be said in words ("down 3.2%" for -3.2%). A figure the text derives from two
quoted values of its sentence (their difference, change in percent, ratio or share) is found when
both are found and the arithmetic holds at the printed precision. Nothing else is.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tradingagents import team

SCALES = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9,
          "t": 1e12, "trillion": 1e12}
_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
FIGURE_RE = re.compile(
    rf"(?P<sign>[-+−])?(?P<cur>[$€£¥])?\s?(?P<num>{_NUM})"
    r"(?:\s?(?P<pct>%)|\s?(?P<scale>thousand|million|billion|trillion|bn|mn|[KMBT])(?![A-Za-z]))?",
)
_DATE_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}\b")
_QUARTER_RE = re.compile(r"\b(?:Q[1-4]|H[12]|FY)\s?'?\d{0,4}\b")
_PERIOD_AFTER = re.compile(
    r"^(?:\s?[-–~至到]\s?\d+)?(?:-|\s)?(?:trading\s|calendar\s)?(?:day|days|week|weeks|month|months|year|years|session|sessions|"
    r"period|periods|bar|bars|日|天|周|个月|年|个交易日|交易日)\b", re.IGNORECASE)
_LIST_RE = re.compile(r"^\s*(?:[-*]\s+)?(?:#+\s*)?\d+[.)]\s")
_RATIO_BEFORE = re.compile(r"\d\s?[:：]\s?$")
_ROUND_BEFORE = re.compile(r"(?:round|rounds|turn|第)\s*$", re.IGNORECASE)
_ROUND_AFTER = re.compile(r"^\s?(?:round|rounds|turn|turns|轮|回合)(?![A-Za-z])", re.IGNORECASE)
_NEWLINE = re.compile("\n")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
TEXT_KEYS_AFTER_TURNS = ("investment_plan", "trader_investment_plan", "final_trade_decision")
PROPOSAL_FIELDS = ("entry_price", "price_target", "stop_loss", "position_size", "entry", "target", "stop", "size")
EXCERPT_CHARS = 160


@dataclass(frozen=True)
class Figure:
    """One number of a text: as written, its value in base units, the half-unit of its printed precision;
    ``count``: a plain whole number (no decimals, unit or currency), found only as that whole number."""

    written: str
    value: float
    tolerance: float
    percent: bool
    start: int
    end: int
    count: bool = False


def _word(char: str) -> bool:
    """A character of a Latin name or word (a Chinese character beside a number is text, not a name)."""
    return char.isascii() and char.isalnum()


def _clean(number: str) -> tuple[float, int]:
    text = number.replace(",", "")
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return float(text), decimals


_DIGIT = re.compile(r"\d")
_LEAD = 4
"""The most characters a ``FIGURE_RE`` match holds before its first digit: a sign, a currency, a space and the
point of ``.5``."""


def _figure_matches(text: str) -> Iterator[re.Match[str]]:
    """``FIGURE_RE.finditer(text)``: the same matches, found without trying the pattern at every position. A
    match needs a digit within ``_LEAD`` characters of its start, so the search for the next one starts that far
    before the next digit; the rest of a text (words, mostly) is skipped at the speed of a digit search, where
    the pattern's optional sign, currency and space made the engine try it at every character."""
    pos = 0
    digit, figure = _DIGIT.search, FIGURE_RE.search
    while (d := digit(text, pos)) is not None:
        match = figure(text, max(pos, d.start() - _LEAD))
        if match is None:  # not reached: the digit itself starts a match
            return
        yield match
        pos = match.end()


def _blank(text: str, pattern: re.Pattern[str]) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def figures_in(text: str, *, ticker: str = "") -> list[Figure]:
    """The figures of ``text`` (see the module docstring), in order."""
    masked = _blank(_blank(text or "", _DATE_RE), _QUARTER_RE)
    if ticker:
        masked = re.sub(re.escape(ticker), lambda m: " " * len(m.group(0)), masked, flags=re.IGNORECASE)
    out = []
    for match in _figure_matches(masked):
        start, end = match.start("num"), match.end()
        before = masked[max(0, start - 1):start]
        after = masked[match.end("num"):match.end("num") + 1]
        if before and (_word(before) or before in "_.") and not match.group("cur") and not match.group("sign"):
            continue  # inside a name or a longer token (close_50_sma, v2, 7203.T)
        if after and (_word(after) and not after.isdigit() or after == "_") and not (match.group("pct") or match.group("scale")):
            continue  # 3x, 10th, 50sma
        if _PERIOD_AFTER.match(masked[match.end("num"):match.end("num") + 20]):
            continue  # a window: 50-day, 7 days, 3-month
        line_start = masked.rfind("\n", 0, start) + 1
        if _LIST_RE.match(masked[line_start:end + 2]) and masked[line_start:start].strip(" -*#") == "":
            continue  # a list or heading number
        if _ROUND_BEFORE.search(masked[max(0, start - 8):start]) or _ROUND_AFTER.match(masked[end:end + 8]):
            continue  # round 1, turn 2, after 1 round of debate, 经过 2 轮辩论
        if match.group("num") == "1" and _RATIO_BEFORE.search(masked[max(0, start - 12):start]):
            continue  # the "1" of a ratio written "2.0 : 1" (reward:risk): notation, not a figure
        value, decimals = _clean(match.group("num"))
        scale = SCALES.get((match.group("scale") or "").lower(), 1.0)
        pct = bool(match.group("pct"))
        if not (pct or scale != 1.0 or match.group("cur") or decimals) and 1900 <= value <= 2100:
            continue  # a year
        sign = -1.0 if match.group("sign") in ("-", "−") and (not before or not _word(before)) else 1.0
        half = 0.5 * 10 ** (-decimals) * scale
        written = text[match.start():end].strip()
        count = not (pct or scale != 1.0 or match.group("cur") or decimals)
        out.append(Figure(written, sign * value * scale, half, pct, match.start(), end, count))
    return out


class Source:
    """A value some data holds, with where it came from: ``value``, ``tool``, ``args``, ``excerpt`` (the line it
    stands on), ``percent`` (written with a % sign, else a 16.0% figure reads it as a fraction, 0.160), ``whole``
    (written as a whole number). Read-only by convention.

    A run's data holds ~1,000 values and its texts use ~150 of them: ``Source.in_text`` keeps where a value
    stands and cuts its excerpt the first time it is read (a source a figure was found in), not for every value.
    """

    __slots__ = ("value", "tool", "args", "percent", "whole", "_excerpt", "_at")

    def __init__(self, value: float, tool: str, args: Mapping[str, Any], excerpt: str, percent: bool = False,
                 whole: bool = False) -> None:
        self.value, self.tool, self.args, self.percent, self.whole = value, tool, args, percent, whole
        self._excerpt: str | None = excerpt
        self._at: tuple[str, int, Sequence[int]] | None = None

    @classmethod
    def in_text(cls, value: float, tool: str, args: Mapping[str, Any], text: str, start: int,
                breaks: Sequence[int], percent: bool, whole: bool) -> Source:
        """The value at ``start`` of ``text`` (``breaks``: the text's newline positions, for ``_line_at``)."""
        source = cls(value, tool, args, "", percent, whole)
        source._excerpt, source._at = None, (text, start, breaks)
        return source

    @property
    def excerpt(self) -> str:
        if self._excerpt is None:
            assert self._at is not None
            self._excerpt = _line_at(*self._at)
            self._at = None
        return self._excerpt

    def __repr__(self) -> str:
        return (f"Source(value={self.value!r}, tool={self.tool!r}, args={self.args!r}, excerpt={self.excerpt!r}, "
                f"percent={self.percent!r}, whole={self.whole!r})")


def _line_at(text: str, start: int, breaks: Sequence[int] | None = None) -> str:
    """The line of ``text`` around ``start``, cut to an excerpt. ``breaks``: the text's newline positions, when
    the caller looks up many (a search from each figure to its line's ends cost a long line's length per figure)."""
    if breaks is None:
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
    else:
        i = bisect.bisect_left(breaks, start)
        line_start = breaks[i - 1] + 1 if i else 0
        line_end = breaks[i] if i < len(breaks) else -1
    a, b = line_start, line_end if line_end >= 0 else len(text)
    if b - a > 4 * EXCERPT_CHARS:  # a long line: strip its ends in place rather than copy all of it
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        return text[a:b] if b - a <= EXCERPT_CHARS else text[a:a + EXCERPT_CHARS - 1] + "…"
    line = text[a:b].strip()
    return line if len(line) <= EXCERPT_CHARS else line[:EXCERPT_CHARS - 1] + "…"


def data_values(text: str, tool: str, args: Mapping[str, Any]) -> list[Source]:
    """Every number a piece of data holds (dates and names excepted, as in a text), unit-normalised."""
    out: list[Source] = []
    if not text:
        return out
    breaks = [m.start() for m in _NEWLINE.finditer(text)]
    shared = dict(args)  # one copy for the text's values: a source's args are only read
    for match in _figure_matches(_blank(text, _DATE_RE)):
        num = match.start("num")
        before = text[num - 1] if num else ""
        if before and (_word(before) and not before.isdigit() or before == "_"):
            continue
        value, decimals = _clean(match.group("num"))
        scale = SCALES.get((match.group("scale") or "").lower(), 1.0)
        value *= scale
        if match.group("sign") in ("-", "−"):
            value = -value
        out.append(Source.in_text(value, tool, shared, text, match.start(), breaks, bool(match.group("pct")),
                                  decimals == 0 or value == int(value)))
    return out


def _matches(figure: Figure, value: float, percent: bool = False, whole: bool = False) -> bool:
    """Whether data ``value`` is ``figure`` at its printed precision (the sign may be said in words). A
    percent figure reads a value written with % as it is and any other as a fraction (0.160 = 16.0%); a
    count needs the same whole number."""
    if figure.count:
        return whole and abs(abs(value) - abs(figure.value)) < 1e-9
    candidate = value if (percent or not figure.percent) else value * 100
    want = abs(figure.value)
    return abs(abs(candidate) - want) <= figure.tolerance + 1e-9 * max(1.0, want)


def _matching(figure: Figure, values: Any, percent: Any, whole: Any) -> Any:
    """``_matches`` of each value of an array at once (the same float operations, so the same answers)."""
    if figure.count:
        return whole & (np.abs(np.abs(values) - abs(figure.value)) < 1e-9)
    candidate = np.where(percent, values, values * 100) if figure.percent else values
    want = abs(figure.value)
    return np.abs(np.abs(candidate) - want) <= figure.tolerance + 1e-9 * max(1.0, want)


class Pool:
    """The values a text's figures may be found in: the run's data, then the found figures of earlier texts.
    Values are bucketed by magnitude so a lookup scans only nearby values; a crowded bucket, and the scan of
    every value that a large amount's tolerance needs, are checked as arrays (a run's ~150 figures against
    its ~1,000 values took ~30,000 calls one value at a time), in the same order, so the same source wins."""

    _ARRAY_MIN = 16  # a bucket of at least this many values is checked as an array

    def __init__(self, sources: Iterable[Source] = ()):
        self._by_bucket: dict[int, list[Source]] = {}
        self._arrays: dict[int | None, tuple[list[Source], Any, Any, Any]] = {}  # None: every bucket in turn
        by_bucket = self._by_bucket
        for source in sources:  # as ``add`` does, with no arrays built yet to drop
            for bucket in self._buckets(source.value):
                by_bucket.setdefault(bucket, []).append(source)

    @staticmethod
    def _bucket(value: float) -> int:
        return int(abs(value))

    @staticmethod
    def _buckets(value: float) -> tuple[int, ...]:
        """The buckets a value is found from: its own, and its hundredfold's (16.0% read as 0.160)."""
        size = abs(value)
        low, high = int(size), int(size * 100)
        return (low,) if high == low else (low, high)

    def add(self, source: Source) -> None:
        for bucket in self._buckets(source.value):
            self._by_bucket.setdefault(bucket, []).append(source)
            self._arrays.pop(bucket, None)
        self._arrays.pop(None, None)

    def _as_arrays(self, key: int | None) -> tuple[list[Source], Any, Any, Any]:
        got = self._arrays.get(key)
        if got is None:
            sources = ([s for group in self._by_bucket.values() for s in group] if key is None
                       else self._by_bucket[key])
            got = (sources, np.array([s.value for s in sources], dtype=np.float64),
                   np.array([s.percent for s in sources], dtype=bool), np.array([s.whole for s in sources], dtype=bool))
            self._arrays[key] = got
        return got

    def _first(self, figure: Figure, key: int | None) -> Source | None:
        sources, values, percent, whole = self._as_arrays(key)
        hits = np.flatnonzero(_matching(figure, values, percent, whole))
        return sources[int(hits[0])] if len(hits) else None

    def find(self, figure: Figure) -> Source | None:
        want = abs(figure.value)
        lo, hi = int(max(0.0, want - figure.tolerance)) - 1, int(want + figure.tolerance) + 1
        for bucket in range(lo, hi + 1) if hi - lo < 64 else (self._bucket(want),):
            group = self._by_bucket.get(bucket, ())
            if len(group) >= self._ARRAY_MIN:
                found = self._first(figure, bucket)
                if found is not None:
                    return found
                continue
            for source in group:
                if _matches(figure, source.value, source.percent, source.whole):
                    return source
        if hi - lo >= 64 and self._by_bucket:  # a large amount's tolerance spans many buckets: scan all
            return self._first(figure, None)
        return None


_SIGNAL_LINE_RE = re.compile(r"^\s*[-*]\s*\*\*[^*\n]+\*\*\s*[:：].*?→\s*(bullish|bearish|neutral|看涨|看跌|中性)",
                             re.MULTILINE | re.IGNORECASE)
_DIRECTIONS = {"bullish": "bullish", "看涨": "bullish", "bearish": "bearish", "看跌": "bearish", "neutral": "neutral",
               "中性": "neutral"}


def tally_sources(reports: Mapping[str, str]) -> list[Source]:
    """The counts the analyst reports' signal lines hold (``- **Trend**: … → bullish``): per direction,
    all signals, and bullish minus bearish (the net), over all the reports, each report's own too."""
    out: list[Source] = []
    per: dict[str, dict[str, int]] = {}
    for key, text in reports.items():
        counts = {"bullish": 0, "bearish": 0, "neutral": 0}
        for match in _SIGNAL_LINE_RE.finditer(text or ""):
            counts[_DIRECTIONS[match.group(1).lower()]] += 1
        per[key] = counts
    per["all reports"] = {d: sum(c[d] for c in per.values()) for d in ("bullish", "bearish", "neutral")}
    for key, c in per.items():
        if not any(c.values()):
            continue
        excerpt = f"{key}: {c['bullish']} bullish, {c['bearish']} bearish, {c['neutral']} neutral signal lines"
        for value in {*c.values(), sum(c.values()), c["bullish"] - c["bearish"]}:
            out.append(Source(float(value), "signal tally", {"texts": key}, excerpt, whole=True))
    return out


def _derived(figure: Figure, found: Sequence[Figure]) -> bool:
    """True when ``figure`` is the difference, change in percent, ratio or share of two found figures
    (or of a found figure and the sum of the sentence's found counts: 3 of 3 + 7 + 4)."""
    counts = [f for f in found if f.count]
    if len(counts) > 2:
        total = sum(abs(f.value) for f in counts)
        found = [*found, Figure(str(total), total, 0.0, False, -1, -1, True)]
    for a in found:
        for b in found:
            if a is b:
                continue
            x, y = abs(a.value), abs(b.value)
            results = [x - y, y - x]
            if x and not figure.count:  # a count is a sum or a difference of counts, never a ratio
                results += [(y / x - 1) * 100, y / x, y / x * 100, (y - x) / x]
            for r in results:
                if _matches(figure, r, percent=True, whole=r == int(r)):
                    return True
    return False


class _Sentences:
    """A text's sentence bounds, found once: the sentence around a figure is then two bisections, not a scan of
    the whole text per figure (a model's answer quoting a hundred figures took over a minute that way)."""

    def __init__(self, text: str) -> None:
        self.text = text
        breaks = list(_SENTENCE_END.finditer(text))
        self._lefts = [0, *(m.end() for m in breaks)]
        self._rights = [m.start() for m in breaks]

    def span(self, start: int, end: int) -> tuple[int, int]:
        left = self._lefts[bisect.bisect_right(self._lefts, start) - 1]
        i = bisect.bisect_left(self._rights, end)
        return left, self._rights[i] if i < len(self._rights) else len(self.text)

    def of(self, start: int, end: int) -> str:
        left, right = self.span(start, end)
        sentence = " ".join(self.text[left:right].split())
        return sentence if len(sentence) <= 300 else sentence[:299] + "…"


def check_text(text: str, pool: Pool, *, ticker: str = "", exclude: Iterable[float] = ()) -> tuple[dict[str, Any], list[Source]]:
    """One text's record, and the sources its found figures add for later texts."""
    excluded = [abs(v) for v in exclude]
    figures = [f for f in figures_in(text, ticker=ticker)
               if not any(abs(abs(f.value) - v) <= f.tolerance + 1e-9 for v in excluded)]
    record: dict[str, Any] = {"figures": len(figures), "found": 0, "not_found": [], "sources": []}
    found: list[Figure] = []
    later: list[Source] = []
    pending: list[Figure] = []
    for figure in figures:
        source = pool.find(figure)
        if source is None:
            pending.append(figure)
            continue
        found.append(figure)
        record["sources"].append({"figure": figure.written, "tool": source.tool, "args": dict(source.args),
                                  "excerpt": source.excerpt})
        later.append(Source(figure.value, source.tool, source.args, source.excerpt, figure.percent,
                            figure.count))
    sentences = _Sentences(text)
    by_span: dict[tuple[int, int], list[Figure]] = {}
    for f in found:
        by_span.setdefault(sentences.span(f.start, f.end), []).append(f)
    for figure in pending:
        where = sentences.span(figure.start, figure.end)
        sentence = sentences.of(figure.start, figure.end)
        peers = list(by_span.get(where, ()))
        if _derived(figure, peers):
            found.append(figure)
            by_span.setdefault(where, []).append(figure)  # a derived figure is a peer of the sentence's next ones
            record["sources"].append({"figure": figure.written, "tool": "derived", "args": {},
                                      "excerpt": sentence[:EXCERPT_CHARS]})
            continue
        record["not_found"].append({"figure": figure.written, "sentence": sentence})
    record["found"] = len(found)
    return record, later


def _proposals(decision: Mapping[str, Any] | None) -> list[float]:
    out = []
    for key in PROPOSAL_FIELDS:
        value = (decision or {}).get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            out.append(float(value))
        elif isinstance(value, str):  # a size as written ("2% of the portfolio")
            out += [f.value for f in figures_in(value)]
    return out


def turn_key(turn: Mapping[str, Any]) -> str:
    """The ledger's key of a debate turn: ``<debate>:<speaker>:<round>`` (``invest:Bull:1``)."""
    return f"{turn.get('debate')}:{turn.get('speaker')}:{turn.get('round')}"


def ledger(state: Mapping[str, Any], turns: Sequence[Mapping[str, Any]] = (),
           decision: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """``meta["evidence"]`` of a run (see the module docstring), from its final state (its ``tool_answers``
    and texts), its debate turns and its decision card (whose proposals are not figures)."""
    ticker = str(state.get("company_of_interest") or "")
    sources: list[Source] = []
    for answer in state.get("tool_answers") or []:
        sources += data_values(str(answer.get("text") or ""), str(answer.get("tool") or ""), answer.get("args") or {})
    for key in ("past_context", "instrument_context"):
        sources += data_values(str(state.get(key) or ""), key, {})
    pool = Pool(sources)
    texts: list[tuple[str, str, bool]] = [(key, str(state.get(key) or ""), False) for key in team.REPORT_KEYS]
    invest = [t for t in turns if t.get("debate") == "invest"]
    risk = [t for t in turns if t.get("debate") == "risk"]
    texts += [(turn_key(t), str(t.get("text") or ""), False) for t in invest]
    texts += [("investment_plan", str(state.get("investment_plan") or ""), False),
              ("trader_investment_plan", str(state.get("trader_investment_plan") or ""), True)]
    texts += [(turn_key(t), str(t.get("text") or ""), True) for t in risk]
    texts += [("final_trade_decision", str(state.get("final_trade_decision") or ""), True)]
    proposals = _proposals(decision)
    out: dict[str, dict[str, Any]] = {}
    texts = [item for item in texts if item[1].strip()]
    for i, (key, text, after_trader) in enumerate(texts):
        record, later = check_text(text, pool, ticker=ticker, exclude=proposals if after_trader else ())
        out[key] = record
        for source in later:
            pool.add(source)
        if key in team.REPORT_KEYS and not any(k in team.REPORT_KEYS for k, _, _ in texts[i + 1:]):
            # the reports are written: their signal tallies are what the debate counts
            for source in tally_sources({k: str(state.get(k) or "") for k in team.REPORT_KEYS}):
                pool.add(source)
    return out


def totals(evidence: Mapping[str, Mapping[str, Any]] | None) -> tuple[int, int]:
    """``(found, figures)`` over every text of a ledger."""
    records = list((evidence or {}).values())
    return sum(int(r.get("found") or 0) for r in records), sum(int(r.get("figures") or 0) for r in records)
