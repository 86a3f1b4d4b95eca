"""The memory log's text format: entry grammar, escaping of model text, tag rendering and parsing.

An entry (a *block*) is a tag line, ``DECISION:`` and the decision text; a settled one adds
``REFLECTION:``, the reflection and a hidden line with the exact returns. Blocks are followed by
``SEPARATOR``. A block may end with one hidden line ``<!-- meta {json} -->`` (after everything else):
the decision's provenance (``data_vendor``, ``llm_provider``, ``models``, ``by``: who ran it) and,
once settled, the prices it was settled on (``entry_price``, ``exit_price``, ``bench_raw``,
``benchmark``, ``end_date``) and ``settled_by`` (who settled it), and the portfolio manager's own call (``pm_decision``: rating, reason,
who, when; shown to a reader as a ``PM DECISION:`` section after the decision text, the hidden line being
what is read back); a block without it (an old entry) reads with those keys None. In model text every line starting with ``\\``, ``[``, ``<``, ``DECISION:`` or
``REFLECTION:`` or ``PM DECISION:`` gets one extra leading backslash (removed on reading), so no text can forge a
separator, a tag or a section header.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import json
import math
import re
import sys
from bisect import bisect_right
from collections.abc import Mapping
from itertools import accumulate
from typing import Any

from tradingagents.rating import RATINGS_5_TIER, normalize_rating, parse_rating, settled_header
from tradingagents.validation import ValidationError, validate_date, validate_ticker

__all__ = ["META_KEYS", "SEPARATOR", "Block", "check_pm_decision", "check_provenance", "pm_outcome", "render_pm_section", "check_settle_meta", "escape_text", "parse_block", "pct", "render_block", "render_meta",
           "scan_blocks", "scan_keys", "unescape_text"]

SEPARATOR = "\n\n<!-- ENTRY_END -->\n\n"
_SEP_LEN = len(SEPARATOR)
_DECISION_HEAD = "\n\nDECISION:\n"
_REFLECTION_HEAD = "\n\nREFLECTION:\n"
_PM_HEAD = "\n\nPM DECISION:\n"
_TAG_RE = re.compile(r"\[([^\[\]\n]*)\]")
_PCT_RE = re.compile(r"^([+-]?\d+(?:\.\d+)?)%$")
_HOLD_RE = re.compile(r"^(\d+)d$")
_EXACT_RE = re.compile(r"\n\n<!-- exact raw=(\S+) alpha=(\S+) -->\Z")
_EXACT_HEAD = "\n\n<!-- exact raw="
_META_HEAD = "\n\n<!-- meta "
_META_TAIL = " -->"
# what the hidden meta line may hold (anything else in it is ignored on reading)
META_KEYS = ("data_vendor", "llm_provider", "models", "entry_price", "exit_price", "bench_raw", "benchmark",
             "end_date", "by", "settled_by", "invented", "pm_decision", "ran_on", "blind")
# lessons derived at settlement and not yet written to every role memory (cleared once they are)
_LESSON_KEYS = ("lessons_due", "lessons_known_from")
_DATE_SHAPE = re.compile(r"\d{4}-\d{2}-\d{2}\Z")


def _find_exact(text: str) -> re.Match | None:
    """The hidden exact-values line at the very end of ``text`` (rfind first: no regex scan)."""
    pos = text.rfind(_EXACT_HEAD)
    return _EXACT_RE.match(text, pos) if pos >= 0 else None


def _read_date(text: str) -> str:
    if _DATE_SHAPE.match(text):  # fast path for the 10,000-entry log; validate_date explains failures
        with contextlib.suppress(ValueError):
            if _dt.date.fromisoformat(text).year >= 1900:
                return text
    return validate_date(text, allow_future=True)


@functools.lru_cache(maxsize=4096)
def _read_ticker(text: str) -> str:  # pure: cached because tickers repeat through a log
    return validate_ticker(text)


@functools.lru_cache(maxsize=64)
def _read_rating(text: str) -> str:
    rating = normalize_rating(text)
    if rating is None:
        raise ValueError(f"unknown rating {text!r}")
    return rating
_ESCAPE_RE = re.compile(r"^(?=\\|\[|<|DECISION:|REFLECTION:|PM DECISION:)", re.MULTILINE)
_UNESCAPE_RE = re.compile(r"^\\", re.MULTILINE)


def escape_text(text: str) -> str:
    """Prefix a backslash to every line that could read as structure (reversible)."""
    return _ESCAPE_RE.sub("\\\\", text)


def unescape_text(text: str) -> str:
    return _UNESCAPE_RE.sub("", text) if "\\" in text else text


def pct(x: float) -> str:
    return f"{x:+.1%}"


_new_block = object.__new__


class Block:
    """One block of the log file: its verbatim text and, when it parses, the entry it holds."""

    __slots__ = ("raw", "_core", "_meta", "date", "ticker", "rating", "pending", "_returns", "_tag_pcts", "holding",
                 "problem", "_body")

    def __init__(self, raw: str, core: str | None = None, meta: dict | None = None) -> None:
        self.raw = raw
        self._core = raw if core is None else core  # the block without its hidden meta line
        self._meta = meta or {}
        self.problem: str | None = None
        self._body: tuple[str, str] | None = None
        self.date = self.ticker = self.rating = None
        self.pending = True
        self._returns: tuple[float, float] | None = None
        self._tag_pcts: tuple[str, str] | None = None  # the tag's "+3.2%", "+1.1%": exact values read lazily
        self.holding = None

    @classmethod
    def _from_tag(cls, raw: str, date: str, ticker: str, rating: str, tag_pcts: tuple[str, str] | None,
                  holding: int | None) -> Block:
        """A block whose tag was read (``scan_blocks``); its hidden meta line is read on first use."""
        block = _new_block(cls)
        block.raw = raw
        block._core = block._meta = None
        block.problem = block._body = block._returns = None
        block.date, block.ticker, block.rating = date, ticker, rating
        block.pending = tag_pcts is None
        block._tag_pcts, block.holding = tag_pcts, holding
        return block

    @property
    def core(self) -> str:
        """The block without its hidden meta line."""
        if self._core is None:
            self._core, self._meta = _split_meta(self.raw)
        return self._core

    @property
    def meta(self) -> dict:
        if self._meta is None:
            self._core, self._meta = _split_meta(self.raw)
        return self._meta

    @property
    def raw_ret(self) -> float | None:
        return self.returns()[0]

    @property
    def alpha(self) -> float | None:
        return self.returns()[1]

    def returns(self) -> tuple[float | None, float | None]:
        """(raw, alpha): the hidden exact values when they agree with the tag, else the tag's."""
        if self._returns is None:
            if self._tag_pcts is None:
                return (None, None)
            raw_pct, alpha_pct = self._tag_pcts
            raw_ret, alpha = float(raw_pct[:-1]) / 100, float(alpha_pct[:-1]) / 100
            exact = _find_exact(self.core)
            if exact:
                with contextlib.suppress(ValueError):
                    ex_raw, ex_alpha = float(exact.group(1)), float(exact.group(2))
                    if pct(ex_raw) == raw_pct and pct(ex_alpha) == alpha_pct:
                        raw_ret, alpha = ex_raw, ex_alpha
            self._returns = (raw_ret, alpha)
        return self._returns

    @property
    def ok(self) -> bool:
        return self.problem is None

    @property
    def key(self) -> tuple[str, str]:
        return (self.date, self.ticker)

    def body(self) -> tuple[str, str]:
        """(decision, reflection), unescaped; parsed on first use."""
        if self._body is None:
            raw = self.core
            start = raw.index(_DECISION_HEAD) + len(_DECISION_HEAD)
            if self.pending:
                decision, refl = raw[start:], ""
            else:
                cut = raw.index(_REFLECTION_HEAD, start)
                refl = raw[cut + len(_REFLECTION_HEAD) :]
                m = _find_exact(refl)
                if m:
                    refl = refl[: m.start()]
                decision = raw[start:cut]
            if self.meta.get("pm_decision"):  # the PM's section follows the decision text (shown, not read)
                pm_at = decision.find(_PM_HEAD)
                if pm_at >= 0:
                    decision = decision[:pm_at]
            self._body = (unescape_text(decision), unescape_text(refl))
        return self._body

    def to_entry(self, *, texts: bool = True) -> dict[str, Any]:
        """The entry as ``load_entries`` gives it (``texts=False``: without decision and reflection)."""
        entry = {
            "date": self.date,
            "ticker": self.ticker,
            "rating": self.rating,
            "pending": self.pending,
            "raw": self.raw_ret,
            "alpha": self.alpha,
            "holding": self.holding,
        }
        if texts:
            entry["decision"], entry["reflection"] = self.body()
        entry.update({k: self.meta.get(k) for k in META_KEYS})
        return entry


# The tag exactly as ``render_block`` writes it: one regex instead of splitting and checking fields.
_OWN_TAG_RE = re.compile(
    r"\[(\d{4}-\d{2}-\d{2}) \| ([A-Z0-9.^=_+\-]{1,32}) \| (Buy|Overweight|Hold|Underweight|Sell) \| "
    r"(?:pending|([+-]\d+\.\d)% \| ([+-]\d+\.\d)% \| (\d+)d)\]\n\nDECISION:\n"
)


def _split_meta(raw: str) -> tuple[str, dict]:
    """(the block without its hidden meta line, the meta dict); ({} when absent or unreadable)."""
    if not raw.endswith(_META_TAIL):
        return raw, {}
    pos = raw.rfind(_META_HEAD)
    if pos < 0:
        return raw, {}
    try:
        meta = json.loads(raw[pos + len(_META_HEAD) : -len(_META_TAIL)])
    except ValueError:
        return raw, {}
    if not isinstance(meta, dict):
        return raw, {}
    kept = {k: meta[k] for k in (*META_KEYS, *_LESSON_KEYS) if k in meta}
    if "pm_decision" in kept:  # a hand-edited call that does not validate is not read as one
        try:
            kept["pm_decision"] = check_pm_decision(kept["pm_decision"])
        except ValueError:
            del kept["pm_decision"]
    return raw[:pos], kept


# an unescaped tag line inside a block: two entries merged by a damaged separator (we escape every
# such line of model text, so only damage produces one)
_INNER_TAG_RE = re.compile(r"\n\[\d{4}-\d{2}-\d{2} \|[^\n]*\]\n")


def parse_block(raw: str) -> Block:
    core, meta = _split_meta(raw)
    m = _OWN_TAG_RE.match(core)
    block = None
    if m is not None:
        block = _parse_own(raw, m, core, meta)
    if block is None:
        block = _parse_general(raw, core, meta)
    if block.problem is None and _INNER_TAG_RE.search(core, 1):
        inner = _INNER_TAG_RE.search(core, 1).group(0).strip()
        block.problem = (f"another entry's tag {inner[:60]!r} inside it: a damaged separator merged two entries "
                         "(restore the line <!-- ENTRY_END --> before that tag)")
    return block


def scan_blocks(text: str) -> list[Block]:
    """``[parse_block(p) for p in <the non-blank pieces between separators>]``, reading most blocks
    by their tag alone (see ``_scan``)."""
    return _scan(text, False)


def scan_keys(text: str) -> list[str | None]:
    """For each block ``scan_blocks`` gives, its key line ``"+ <date> <ticker>\\n"`` (``log_index``'s
    form) when it reads as an entry, else None (a duplicate key is the caller's to find): the same
    pass without making a ``Block`` of a block it reads by its tag (no object per entry to collect)."""
    return _scan(text, True)


def _scan(text: str, keys: bool) -> list:
    """The blocks of a log's text: ``parse_block`` of every non-blank piece between separators, but
    reading only the tag of a block that ``parse_block`` would read through its fast path.

    ``parse_block`` also searches each block's body for another entry's tag and parses the hidden
    meta line's JSON. Here a block none of whose lines but the first starts with ``[`` cannot hold
    a tag (we escape every such line of model text); the REFLECTION header is looked for as
    ``parse_block`` does (a block where the meta line's JSON would decide it, or whose meta line
    would start inside the tag, goes to ``parse_block``); the meta line is split off and read when
    the block's ``meta`` or ``core`` is first used. Any other block (another tag form, a bad date
    or ticker, damage) goes to ``parse_block``. The result equals ``[parse_block(p) for p in pieces]``.
    """
    pieces = text.split(SEPARATOR)
    # a "[" starting a line anywhere but at a block's first character: a block holding a tag-like
    # line (damage, a hand edit: we escape every such line of model text); found with one-character
    # searches (memchr), far faster than searching for "\n[" or any regex
    starts = list(accumulate([len(p) + _SEP_LEN for p in pieces], initial=0))
    firsts = set(starts)
    suspect: set[int] = set()
    find = text.find
    at = find("[")
    while at >= 0:
        if at not in firsts and text[at - 1] == "\n":
            suspect.add(bisect_right(starts, at) - 1)
        at = find("[", at + 1)
    tail = pieces.pop()  # "" when the text ends with a separator, as it always does when we write it
    if tail.strip():
        pieces.append(tail)
    out: list[Block] = []
    append = out.append
    match = _OWN_TAG_RE.match
    fromisoformat = _dt.date.fromisoformat
    refl, refl_len = _REFLECTION_HEAD, len(_REFLECTION_HEAD)
    from_tag = Block._from_tag

    def full(p: str):
        block = parse_block(p)
        if not keys:
            return block
        return f"+ {block.date} {block.ticker}\n" if block.problem is None else None

    for k, p in enumerate(pieces):
        m = match(p) if p[:1] == "[" else None
        if m is None or k in suspect:
            if m is not None or p.strip():
                append(full(p))
            continue
        end = m.end()
        meta_at = p.rfind(_META_HEAD) if p.endswith(_META_TAIL) else -1
        r = p.rfind(refl, end)  # the last: settled blocks end with their reflection (see below)
        date, ticker, rating, raw_pct, alpha_pct, holding = m.groups()
        # parse_block looks for the first REFLECTION header in the block without its meta line: when
        # the last one reaches into the meta line, the meta's JSON could decide; parse_block decides
        if (0 <= meta_at < end or (r >= 0 <= meta_at < r + refl_len) or (r < 0) != (raw_pct is None)
                or date < "1900"):
            append(full(p))
            continue
        try:
            fromisoformat(date)
            ticker = _read_ticker(ticker)
        except ValueError:
            append(full(p))
            continue
        if keys:
            append(f"+ {date} {ticker}\n")
        elif raw_pct is None:
            append(from_tag(p, date, ticker, rating, None, None))
        else:
            append(from_tag(p, date, ticker, rating, (raw_pct + "%", alpha_pct + "%"), int(holding)))
    return out


def _parse_own(raw: str, m: re.Match, core: str, meta: dict) -> Block | None:
    """The fast path for a block we wrote; None sends anything unusual to the general parser."""
    date, ticker, rating, raw_pct, alpha_pct, holding = m.groups()
    try:  # the regex checked the shapes; a real calendar date (from 1900) and a valid ticker remain
        if date < "1900":
            return None
        _dt.date.fromisoformat(date)
        ticker = _read_ticker(ticker)
    except ValueError:
        return None
    block = Block(raw, core, meta)
    block.date, block.ticker, block.rating = date, ticker, rating
    has_reflection = core.find(_REFLECTION_HEAD, m.end()) >= 0
    if raw_pct is None:
        if has_reflection:
            return None
        return block
    if not has_reflection:
        return None
    block.pending = False
    block._tag_pcts = (raw_pct + "%", alpha_pct + "%")
    block.holding = int(holding)
    return block


def _parse_general(raw: str, core: str | None = None, meta: dict | None = None) -> Block:
    block = Block(raw, core, meta)
    raw = block.core
    m = _TAG_RE.match(raw)
    if not m or not raw.startswith(_DECISION_HEAD, m.end()):
        block.problem = "does not start with a [date | ticker | rating | …] tag, a blank line and DECISION:"
        return block
    fields = [f.strip() for f in m.group(1).split("|")]
    try:
        if len(fields) not in (4, 6):
            raise ValueError(f"the tag has {len(fields)} fields; expected 4 (pending) or 6 (settled)")
        block.date = _read_date(fields[0])
        block.ticker = _read_ticker(fields[1])
        block.rating = _read_rating(fields[2])
        rest_start = m.end() + len(_DECISION_HEAD)
        if len(fields) == 4:
            if fields[3].lower() != "pending":
                raise ValueError(f"the 4th tag field is {fields[3]!r}; expected 'pending'")
            if raw.find(_REFLECTION_HEAD, rest_start) >= 0:
                raise ValueError("a pending entry has a REFLECTION section")
            block.pending = True
        else:
            mr, ma, mh = _PCT_RE.match(fields[3]), _PCT_RE.match(fields[4]), _HOLD_RE.match(fields[5])
            if not (mr and ma and mh):
                raise ValueError("settled tag fields must look like +3.2% | +1.1% | 5d")
            if raw.find(_REFLECTION_HEAD, rest_start) < 0:
                raise ValueError("a settled entry has no REFLECTION section")
            block.pending = False
            block._tag_pcts = (fields[3], fields[4])
            block.holding = int(mh.group(1))
            block.returns()
    except ValueError as exc:  # ValidationError included
        block.problem = str(exc)
    return block


def _short_text(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 200:
        raise ValueError(f"the {what} must be text of at most 200 characters, not {value!r:.60}")
    return value.strip() or None


def check_provenance(provenance: Any) -> dict | None:
    """``{data_vendor, llm_provider, models: {quick, deep}}`` validated (None: nothing given)."""
    if provenance is None:
        return None
    if not isinstance(provenance, dict):
        raise ValueError(f"provenance must be a dict with data_vendor, llm_provider, models; not {provenance!r:.60}")
    out: dict[str, Any] = {}
    for key in ("data_vendor", "llm_provider", "by"):
        out[key] = _short_text(provenance.get(key), key)
    models = provenance.get("models")
    if models is not None:
        if not isinstance(models, dict):
            raise ValueError(f"models must be a dict {{quick, deep}}, not {models!r:.60}")
        out["models"] = {k: _short_text(models.get(k), f"{k} model") for k in ("quick", "deep")}
    if provenance.get("invented") is True:  # an invented instrument (the demo market's --allow-synthetic)
        out["invented"] = True
    if provenance.get("blind") is True:  # a blind run's decision (the models saw an alias and shifted dates)
        out["blind"] = True
    ran_on = provenance.get("ran_on")  # a decision made by more than one engine: which nodes ran on which
    if ran_on is not None:
        if not isinstance(ran_on, list) or len(ran_on) > 8 or not all(isinstance(g, dict) for g in ran_on):
            raise ValueError(f"ran_on must be a list of at most 8 {{llm_provider, models, nodes}}, not {ran_on!r:.60}")
        groups = []
        for group in ran_on:
            nodes = group.get("nodes") or []
            if not isinstance(nodes, list) or len(nodes) > 64:
                raise ValueError(f"ran_on's nodes must be a list of at most 64 names, not {nodes!r:.60}")
            models = group.get("models") or {}
            if not isinstance(models, dict):
                raise ValueError(f"ran_on's models must be a dict {{quick, deep}}, not {models!r:.60}")
            groups.append({"llm_provider": _short_text(group.get("llm_provider"), "llm_provider"),
                           "models": {k: _short_text(models.get(k), f"{k} model") for k in ("quick", "deep")},
                           "nodes": [_short_text(n, "node") for n in nodes]})
        out["ran_on"] = groups or None
    return {k: v for k, v in out.items() if v is not None} or None


def check_settle_meta(update: Any) -> dict:
    """The optional settlement prices of an update (finite numbers, a benchmark symbol, an ISO date)."""
    out: dict[str, Any] = {}
    for key in ("entry_price", "exit_price", "bench_raw"):
        value = update.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(float(value)):
            raise ValueError(f"{key} must be a finite number, not {value!r:.60}")
        out[key] = float(value)
    bench = _short_text(update.get("benchmark"), "benchmark")
    if bench:
        out["benchmark"] = bench
    who = _short_text(update.get("settled_by"), "settled_by")
    if who:
        out["settled_by"] = who
    if update.get("end_date") is not None:
        out["end_date"] = validate_date(update["end_date"], allow_future=True)
    due = update.get("lessons_due")
    if due:
        if not isinstance(due, dict) or not all(
            isinstance(k, str) and isinstance(v, list | tuple) and len(v) == 2 and all(isinstance(x, str) for x in v)
            for k, v in due.items()
        ):
            raise ValueError("lessons_due must map a role memory's name to a [situation, lesson] pair")
        out["lessons_due"] = {k: [v[0], v[1]] for k, v in due.items()}
        if update.get("lessons_known_from") is not None:
            out["lessons_known_from"] = validate_date(update["lessons_known_from"], allow_future=True)
    return out


_AT_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?\Z")
PM_REASON_MAX = 4000
"""The longest reason a portfolio manager's call keeps (characters)."""


def check_pm_decision(value: Any) -> dict:
    """The portfolio manager's own call ``{rating, reason, by, at}`` checked (ValueError says what is
    wrong): a tier of the five, a reason of at most ``PM_REASON_MAX`` characters, who (one line) and when
    (ISO time, seconds)."""
    if not isinstance(value, Mapping):
        raise ValidationError(f"a PM decision is a dict with rating, reason, by, at; not {value!r:.60}")
    tier = normalize_rating(value.get("rating")) if isinstance(value.get("rating"), str) else None
    if tier is None:
        raise ValidationError(f"unknown rating {value.get('rating')!r}; use one of: {', '.join(RATINGS_5_TIER)}")
    reason = value.get("reason") or ""
    if not isinstance(reason, str) or len(reason) > PM_REASON_MAX:
        raise ValidationError(f"the reason must be text of at most {PM_REASON_MAX} characters")
    try:
        by = _short_text(value.get("by"), "by") or "unknown"
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    if "\n" in by or "\r" in by:
        raise ValidationError("'by' must be one line")
    at = value.get("at")
    if not isinstance(at, str) or not _AT_RE.match(at):
        raise ValidationError(f"'at' must be an ISO time such as 2024-05-10T14:30:00Z, not {at!r:.40}")
    return {"rating": tier, "reason": reason.strip(), "by": by, "at": at}


def render_pm_section(pm: Mapping[str, Any]) -> str:
    """The ``PM DECISION:`` section a reader of the log file sees (the reason escaped like model text)."""
    return (f"{_PM_HEAD}Rating: {pm['rating']}\nBy: {pm['by']}\nAt: {pm['at']}\nReason:\n"
            f"{escape_text(pm.get('reason') or '')}")


def pm_outcome(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The team's and the portfolio manager's calls scored on the entry's one alpha: ``was_right`` and
    ``call_alpha`` (the team's), ``pm_rating``, ``pm_reason``, ``pm_by``, ``pm_at``, ``pm_was_right``,
    ``pm_alpha`` (None where there is no call of the PM's or the entry is pending)."""
    from tradingagents.rating import call_alpha, was_right

    pm = entry.get("pm_decision") or {}
    alpha = None if entry.get("pending") else entry.get("alpha")
    pm_rating = pm.get("rating")
    return {
        "was_right": was_right(entry.get("rating"), alpha),
        "call_alpha": call_alpha(entry.get("rating"), alpha),
        "pm_rating": pm_rating, "pm_reason": pm.get("reason"), "pm_by": pm.get("by"), "pm_at": pm.get("at"),
        "pm_was_right": was_right(pm_rating, alpha) if pm_rating else None,
        "pm_alpha": call_alpha(pm_rating, alpha) if pm_rating else None,
    }


def render_meta(meta: dict | None) -> str:
    """The hidden meta line (with its leading blank line), or "" when there is nothing to keep."""
    kept = {k: meta[k] for k in (*META_KEYS, *_LESSON_KEYS) if meta and meta.get(k) is not None}
    if not kept:
        return ""
    # ensure_ascii: no model or vendor text can break the line; "-->" cannot survive json escaping of ">"
    body = json.dumps(kept, ensure_ascii=True, sort_keys=True, allow_nan=False).replace(">", "\\u003e")
    return f"{_META_HEAD}{body}{_META_TAIL}"


def render_block(date, ticker, rating, decision, *, raw=None, alpha=None, holding=None, reflection=None,
                 meta=None) -> Block:
    pm = (meta or {}).get("pm_decision")
    shown = escape_text(decision) + (render_pm_section(pm) if pm else "")
    if raw is None:
        text = f"[{date} | {ticker} | {rating} | pending]{_DECISION_HEAD}{shown}"
    else:
        text = (
            f"[{date} | {ticker} | {rating} | {pct(raw)} | {pct(alpha)} | {holding}d]"
            f"{_DECISION_HEAD}{shown}"
            f"{_REFLECTION_HEAD}{escape_text(reflection)}"
            f"\n\n<!-- exact raw={raw!r} alpha={alpha!r} -->"
        )
    block = parse_block(text + render_meta(meta))
    assert block.ok, block.problem  # our own rendering always parses
    return block


# ---------------------------------------------------------------------------- values of an entry
# (one set of checks for every log backend: the file log and the desk's database)
def check_text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ValidationError(f"The {what} must be text, not {type(value).__name__}.")
    return value


def check_rating(rating: object) -> str:
    tier = normalize_rating(rating) if isinstance(rating, str) else None
    if tier is None:
        raise ValidationError(f"Unknown rating {rating!r}. Use one of: {', '.join(RATINGS_5_TIER)}.")
    return tier


def _numpy_types(*names: str) -> tuple[type, ...]:
    """numpy's scalar types of these names, when numpy is imported (a numpy value cannot exist before:
    the log's readers, the Memory log page among them, never import it just to be told no)."""
    np = sys.modules.get("numpy")
    return tuple(getattr(np, n) for n in names) if np is not None else ()


def check_return(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, *_numpy_types("floating", "integer"))):
        raise ValidationError(f"The {what} must be a number (0.032 for +3.2%), not {value!r}.")
    value = float(value)
    if not math.isfinite(value):
        raise ValidationError(f"The {what} must be a finite number, not {value!r}.")
    return value


def check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, *_numpy_types("integer"))) or value < 0:
        raise ValueError(f"{what} must be a whole number, 0 or more; got {value!r}.")
    return int(value)


def check_decision(ticker: object, trade_date: object, final_trade_decision: object, rating: object,
                   provenance: Any) -> tuple[str, str, str, str, dict | None]:
    """A decision to store, checked once for every backend: (ticker, date, decision, rating, meta).

    The rating is parsed from the decision text unless given.
    """
    ticker = validate_ticker(ticker)
    date = validate_date(trade_date, allow_future=True)
    decision = check_text(final_trade_decision, "decision")
    tier = check_rating(parse_rating(decision) if rating is None else rating)
    return ticker, date, decision, tier, check_provenance(provenance)


UPDATE_KEYS: tuple[tuple[str, str], ...] = (
    ("ticker", "ticker"),
    ("trade_date", "date"),
    ("raw_return", "raw"),
    ("alpha_return", "alpha"),
    ("holding_days", "holding"),
    ("reflection", "reflection"),
)
"""An update's keys as the specification's documents name them, each beside our shorter name (both accepted)."""


def _update_value(upd: Mapping[str, Any], i: int, spec: str, ours: str) -> Any:
    """The value of one field given under the documents' name or ours; both given must agree."""
    has_spec, has_ours = spec in upd, ours in upd
    if has_spec and has_ours and spec != ours and upd[spec] != upd[ours]:
        raise ValidationError(f"Update {i} gives {spec}={upd[spec]!r} and {ours}={upd[ours]!r}: give one of them.")
    return upd[spec] if has_spec else upd[ours]


def check_updates(updates: Any) -> tuple[dict[tuple[str, str], tuple[float, float, int, str]],
                                         dict[tuple[str, str], dict[str, Any]]]:
    """A settlement batch, every update checked before anything is written (the first per key wins):
    ``({(date, ticker): (raw, alpha, holding, reflection)}, {(date, ticker): settle meta})``.

    Each update names its fields as the documents do (``ticker, trade_date, raw_return, alpha_return,
    holding_days, reflection``) or by our shorter names (``date, raw, alpha, holding``), see ``UPDATE_KEYS``."""
    wanted: dict[tuple[str, str], tuple[float, float, int, str]] = {}
    extras: dict[tuple[str, str], dict[str, Any]] = {}
    names = ", ".join(spec for spec, _ in UPDATE_KEYS)
    for i, upd in enumerate(updates):
        if not isinstance(upd, Mapping):
            raise ValidationError(f"Update {i} must be a dict with {names}.")
        missing = [spec for spec, ours in UPDATE_KEYS if spec not in upd and ours not in upd]
        if missing:
            raise ValidationError(f"Update {i} lacks {', '.join(missing)} (an update has {names}).")
        ticker, date, raw, alpha, holding, reflection = (_update_value(upd, i, s, o) for s, o in UPDATE_KEYS)
        key = (validate_date(date, allow_future=True), validate_ticker(ticker))
        values = (
            check_return(raw, "raw return"),
            check_return(alpha, "alpha"),
            check_count(holding, "holding"),
            check_text(reflection, "reflection"),
        )
        wanted.setdefault(key, values)
        extras.setdefault(key, check_settle_meta(upd))
    return wanted, extras


# ---------------------------------------------------------------------------- past context (both backends)
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def known_by(date: str, holding: int, cutoff: str | None, end_date: Any = None) -> bool:
    """Whether a settled decision's outcome was knowable on ``cutoff``: made before it and its holding
    window closed by then. The window closes on ``end_date``, the session its exit price is from (what
    settlement records); an entry without one (settled before it was recorded) falls back to ``holding``
    weekdays, which ignores holidays. No cutoff: always."""
    if cutoff is None:
        return True
    if date >= cutoff:
        return False
    closed = end_date if isinstance(end_date, str) and _ISO_DAY.fullmatch(end_date) and end_date > date else None
    if closed is None:
        import numpy as np  # only for entries settled before the window's close was recorded

        closed = str(np.busday_offset(date, holding, roll="forward"))
    return closed <= cutoff


def render_past_context(ticker: str, same: list[tuple], cross: list[tuple]) -> str:
    """The text agents read: ``same`` entries of ``ticker`` in full, then ``cross`` lessons of others.

    Each entry is ``(date, ticker, rating, raw, alpha, holding, decision, reflection)``, newest first.
    """
    parts: list[str] = []
    if same:
        lines = [f"Past decisions on {ticker} and what followed (newest first):"]
        for date, tick, rating, raw, alpha, holding, decision, reflection in same:
            lines.append(
                f"{settled_header(date, tick, rating, raw, alpha, holding)}\n"
                f"DECISION:\n{decision.strip()}\nREFLECTION:\n{reflection.strip()}"
            )
        parts.append("\n\n".join(lines))
    if cross:
        lines = ["Lessons from other instruments (newest first):"]
        for date, tick, rating, raw, alpha, holding, _decision, reflection in cross:
            lines.append(
                f"- {settled_header(date, tick, rating, raw, alpha, holding)} "
                f"{' '.join(reflection.split())}"
            )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def past_decisions_of(same: list[tuple], cross: list[tuple]) -> list[dict]:
    """The entries ``render_past_context`` shows, as data (a run's ``memory_used["past_decisions"]``)."""
    return [
        {"ticker": tick, "date": date, "rating": rating, "raw": raw, "alpha": alpha, "holding": holding,
         "same_ticker": kind == "same"}
        for kind, rows in (("same", same), ("cross", cross))
        for date, tick, rating, raw, alpha, holding, *_rest in rows
    ]
