"""Shared pieces of the offline engine (the scale comes from ``rating.py``, the reports from ``team.py``): prompt parsing, signals and the scoring scale (the tone lexicon: ``lexicon.py``).

**Signals.** Every offline analyst report lists its readings as lines of the form::

    - **Trend**: close 110.50 is above close_50_sma 105.20 → bullish

Downstream roles (researchers, managers, trader, risk analysts) read those lines back from the
reports in their prompts — they never see anything else, like an LLM.

**Scoring** (used by the Research Manager, shown in its plan, and re-used by the Portfolio
Manager): each signal counts +1 when bullish, −1 when bearish, 0 when neutral. With ``n`` signals
and net score ``s`` the ratio ``s / n`` maps to the five tiers:

==================  ===========
ratio               tier
==================  ===========
≥ +0.40             Buy
+0.15 … +0.40       Overweight
−0.15 … +0.15       Hold (both ends excluded)
−0.40 … −0.15       Underweight
≤ −0.40             Sell
==================  ===========

No signal at all (every tool failed) gives Hold.

**Language.** Like a model, the engine writes in the language its prompt asks for: the system
prompt's "Write your entire answer in Chinese." (``agents.utils.agent_utils.language_instruction``)
gives Chinese, no such sentence English (``translator_of``). Every sentence is one message of the
catalogue (``tradingagents/locales/zh/LC_MESSAGES/engine.po``), English being its message id, so the
English output is the template itself. What later roles read back stays canonical inside the
localised text: a signal's direction is written in the report's language and read back as
``bullish``/``bearish``/``neutral``, a signal's name and flag are mapped back to their English key
(``Signal.key``, ``Signal.flag``); the rating words, BUY/HOLD/SELL and the graph's labels
(``**Recommendation**``, ``**Rating**``, ``FINAL TRANSACTION PROPOSAL``) stay English, as the
instruction asks of every model; numbers, tickers and dates are copied unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tradingagents.i18n import N_, Translator, language_of_output, rating_label, translator
from tradingagents.llm_presets import OFFLINE_LABEL
from tradingagents.rating import RATINGS_5_TIER, direction
from tradingagents.team import ANALYSTS

ENGLISH = translator("en")
_LANGUAGE_RE = re.compile(r"Write your entire answer in ([^.\n]+?)\.")


def translator_of(text: str) -> Translator:
    """The language the prompt asks the answer in (its "Write your entire answer in X." sentence), as a
    ``Translator``; English without one, or for a language the engine has no catalogue of."""
    match = _LANGUAGE_RE.search(text or "")
    return translator(language_of_output(match.group(1).strip())) if match else ENGLISH


_FOOTER = N_("_Written by the offline engine (no LLM) from the data in this run; no language model was used._")
FOOTER = _FOOTER.replace("offline engine (no LLM)", OFFLINE_LABEL)


def footer(t: Translator = ENGLISH) -> str:
    """The line every offline answer ends with, in ``t``'s language."""
    return FOOTER if t.lang == "en" else t(_FOOTER)


def engine_label(t: Translator = ENGLISH) -> str:
    """``OFFLINE_LABEL`` in ``t``'s language."""
    return OFFLINE_LABEL if t.lang == "en" else t("offline engine (no LLM)")

# The scale is rating.py's; these are views of it, not copies.
TIERS = RATINGS_5_TIER
BULLISH_TIERS = tuple(t for t in TIERS if direction(t) > 0)
BEARISH_TIERS = tuple(t for t in TIERS if direction(t) < 0)
TIER_ACTION = {t: ("BUY" if direction(t) > 0 else "SELL" if direction(t) < 0 else "HOLD") for t in TIERS}
BUY_AT, OVERWEIGHT_AT = 0.40, 0.15  # ratio thresholds (mirrored for the bearish tiers)
TIER_ALT = "|".join(TIERS)
"""A regex alternation of the five tiers (for the grammar of the engine's own lines)."""

ACTION_NAMES = {"BUY": N_("BUY"), "HOLD": N_("HOLD"), "SELL": N_("SELL")}
"""The Trader's actions (canonical → the English text, the message id)."""


def tier_name(tier: str, t: Translator = ENGLISH) -> str:
    """A tier as the prose of ``t``'s language names it (English: the tier itself; Chinese: 买入 … 卖出).
    The grammar lines (``**Recommendation**``, ``**Rating**``) keep the canonical name."""
    return tier if t.lang == ENGLISH.lang else rating_label(tier, t.lang)


def action_name(action: str, t: Translator = ENGLISH) -> str:
    """BUY/HOLD/SELL as the prose of ``t``'s language names it (English: itself; Chinese: 买入/持有/卖出);
    ``FINAL TRANSACTION PROPOSAL`` and ``**Action**`` keep the canonical word."""
    return action if t.lang == ENGLISH.lang or action not in ACTION_NAMES else t(ACTION_NAMES[action])

_INSTRUMENT_RE = re.compile(r"^Instrument:\s*(\S+)", re.MULTILINE)
_DATE_RE = re.compile(r"^Analysis date:\s*(\d{4}-\d{2}-\d{2})", re.MULTILINE)
DIRECTIONS = (ENGLISH.p("direction", "bullish"), ENGLISH.p("direction", "bearish"), ENGLISH.p("direction", "neutral"))
"""A signal's direction, canonical; written in the report's language (``t.p("direction", d)``)."""


def _languages() -> tuple[Translator, ...]:
    return (ENGLISH, translator("zh"))


def languages() -> tuple[Translator, ...]:
    """The translators of every language the engine writes (English first)."""
    return _languages()


_TEMPLATE_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def template_res(msgid: str, end: str | Mapping[str, str] = "", flags: int = 0,
                 **groups: str) -> tuple[re.Pattern[str], ...]:
    """Regexes reading back a sentence the engine wrote from the catalogue message ``msgid``, one per
    language: each ``{field}`` named in ``groups`` becomes the named group ``(?P<field>pattern)``, any
    other field a lazy ``.*?``; ``end`` is appended (a mapping: language → its end, '' when absent).
    So a line is parsed by the same message it was written from, whatever the language."""
    out: list[re.Pattern[str]] = []
    seen: set[str] = set()
    for t in _languages():
        text = t(msgid)
        if text in seen:
            continue
        seen.add(text)
        pattern, last, used = "", 0, set()
        for match in _TEMPLATE_FIELD.finditer(text):
            pattern += re.escape(text[last:match.start()])
            name = match.group(1)
            if name in groups and name not in used:
                pattern += f"(?P<{name}>{groups[name]})"
                used.add(name)
            else:
                pattern += ".*?"
            last = match.end()
        tail = end if isinstance(end, str) else end.get(t.lang, "")
        out.append(re.compile(pattern + re.escape(text[last:]) + tail, flags))
    return tuple(out)


def _reverse(context: str, names: Iterable[str]) -> dict[str, str]:
    """Every language's word for each of ``names`` → the canonical (English) name."""
    out: dict[str, str] = {}
    for t in _languages():
        for name in names:
            out.setdefault(t.p(context, name), name)
    return out


_DIRECTION_OF = _reverse("direction", DIRECTIONS)

SIGNAL_NAMES = (
    ENGLISH.p("signal", "Trend"),
    ENGLISH.p("signal", "Long-term trend"),
    ENGLISH.p("signal", "MACD"),
    ENGLISH.p("signal", "RSI"),
    ENGLISH.p("signal", "Bollinger bands"),
    ENGLISH.p("signal", "Momentum"),
    ENGLISH.p("signal", "Volatility"),
    ENGLISH.p("signal", "Social tone"),
    ENGLISH.p("signal", "Company news"),
    ENGLISH.p("signal", "Macro backdrop"),
    ENGLISH.p("signal", "Valuation"),
    ENGLISH.p("signal", "Growth"),
    ENGLISH.p("signal", "Profitability"),
    ENGLISH.p("signal", "Leverage"),
    ENGLISH.p("signal", "Earnings surprise"),
)
"""The signals the analysts write (canonical names; each report writes ``t.p("signal", name)``)."""
_SIGNAL_KEY = _reverse("signal", SIGNAL_NAMES)

FLAGS = {"overbought": N_("; overbought"), "oversold": N_("; oversold"),
         "volatility elevated": N_("; volatility elevated"), "volatility moderate": N_("; volatility moderate")}
"""The flags a signal line may end with (key → the English text, the message id)."""
_FLAG_OF = {t(text): key for t in _languages() for key, text in FLAGS.items()}


def flag_text(key: str, t: Translator = ENGLISH) -> str:
    """The ending of a signal line that carries the flag ``key`` (``FLAGS``), in ``t``'s language."""
    return t(FLAGS[key])

_SIGNAL_RE = re.compile(
    r"^- \*\*(?P<name>[^*\n]+)\*\*: (?P<detail>[^\n]+?) → (?P<dir>"
    + "|".join(re.escape(w) for w in sorted(_DIRECTION_OF, key=len, reverse=True))
    + r")(?P<rest>[^\n]*)$",
    re.MULTILINE,
)
_RECOMMENDATION_RE = re.compile(r"\*\*Recommendation\*\*\s*:\s*\**\s*(" + TIER_ALT + r")\b")
_PROPOSAL_RE = re.compile(r"FINAL TRANSACTION PROPOSAL\s*:\s*\**\s*(BUY|HOLD|SELL)\b", re.IGNORECASE)

SOURCES = {r.output_key: r.output_key.replace("_", " ") for r in ANALYSTS}  # type: ignore[union-attr]
"""Each analyst report's prompt tag → how a turn names it ("market report", …), from the roster."""

@dataclass(frozen=True)
class Signal:
    name: str
    detail: str
    direction: str  # bullish | bearish | neutral
    rest: str = ""
    source: str = ""

    def line(self, t: Translator = ENGLISH) -> str:
        """The report's line of this signal (its direction in ``t``'s language)."""
        return f"- **{self.name}**: {self.detail} → {t.p('direction', self.direction)}{self.rest}"

    @property
    def key(self) -> str:
        """The canonical (English) name of the signal, whatever language its report is in."""
        return _SIGNAL_KEY.get(self.name, self.name)

    @property
    def flag(self) -> str:
        """The canonical flag the line ends with (``FLAGS``' key: "overbought", …), else ''."""
        return _FLAG_OF.get(self.rest, "")

    @property
    def value(self) -> int:
        return {"bullish": 1, "bearish": -1}.get(self.direction, 0)


def instrument_of(text: str) -> str:
    match = _INSTRUMENT_RE.search(text)
    return match.group(1) if match else "the instrument"


def date_of(text: str) -> str:
    match = _DATE_RE.search(text)
    return match.group(1) if match else "the analysis date"


def tag(text: str, name: str) -> str:
    """The content of ``<name>…</name>`` in a prompt ('' when absent or '(none)')."""
    match = re.search(rf"^<{re.escape(name)}>\n(.*?)\n</{re.escape(name)}>\s*$", text, re.DOTALL | re.MULTILINE)
    if not match:
        return ""
    body = match.group(1).strip()
    return "" if body == "(none)" else body


def signals_in(text: str, source: str = "") -> list[Signal]:
    """The signal lines of a report, in any of the engine's languages (directions read back canonical)."""
    return [
        Signal(m.group("name").strip(), m.group("detail").strip(), _DIRECTION_OF[m.group("dir")], m.group("rest"),
               source)
        for m in _SIGNAL_RE.finditer(text or "")
    ]


_SOURCE_NAMES = (N_("market report"), N_("sentiment report"), N_("news report"), N_("fundamentals report"))
"""How a turn names each report (``SOURCES``' values), marked for the catalogue."""


def signals_from_prompt(text: str, t: Translator = ENGLISH) -> list[Signal]:
    """Every signal line of the four reports in a prompt, in report order; ``source`` names the report
    in ``t``'s language."""
    out: list[Signal] = []
    for key, label in SOURCES.items():
        out.extend(signals_in(tag(text, key), t(label)))
    return out


@dataclass(frozen=True)
class Score:
    bullish: int
    bearish: int
    neutral: int

    @property
    def n(self) -> int:
        return self.bullish + self.bearish + self.neutral

    @property
    def net(self) -> int:
        return self.bullish - self.bearish

    @property
    def ratio(self) -> float:
        return self.net / self.n if self.n else 0.0

    @property
    def tier(self) -> str:
        return tier_for_ratio(self.ratio)


def score_of(signals: Iterable[Signal]) -> Score:
    items = list(signals)
    return Score(
        bullish=sum(1 for s in items if s.direction == "bullish"),
        bearish=sum(1 for s in items if s.direction == "bearish"),
        neutral=sum(1 for s in items if s.direction == "neutral"),
    )


def tier_for_ratio(ratio: float) -> str:
    if ratio >= BUY_AT:
        return "Buy"
    if ratio >= OVERWEIGHT_AT:
        return "Overweight"
    if ratio <= -BUY_AT:
        return "Sell"
    if ratio <= -OVERWEIGHT_AT:
        return "Underweight"
    return "Hold"


def toward_hold(tier: str) -> str:
    """One notch toward Hold (Buy→Overweight, Sell→Underweight, the rest → Hold)."""
    return {"Buy": "Overweight", "Sell": "Underweight"}.get(tier, "Hold")


direction_of_tier = direction


SCALE_TEXT = N_(
    "Each analyst signal counts plus one when bullish, minus one when bearish and zero when neutral; the net "
    "score divided by the number of signals maps to the scale: at least forty percent Buy, at least fifteen "
    "percent Overweight, between minus and plus fifteen percent Hold, at most minus fifteen percent "
    "Underweight, at most minus forty percent Sell."
)
"""The scoring method as the plans print it: its thresholds in words, as every rule the engine states (a
numeral in a text is a figure the evidence ledger looks for in the data, and a rule is not data)."""


def recommendation_in(text: str) -> str | None:
    match = _RECOMMENDATION_RE.search(text or "")
    return match.group(1) if match else None


def proposal_in(text: str) -> str | None:
    matches = _PROPOSAL_RE.findall(text or "")
    return matches[-1].upper() if matches else None




def clip(text: str, limit: int = 180) -> str:
    """``text`` on one line, cut at a word boundary (never mid-number) with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + " …"


def article(word: str) -> str:
    """'a' or 'an' before ``word`` (by its first letter)."""
    return "an" if word[:1].lower() in "aeiou" else "a"


def join_names(names: list[str], t: Translator = ENGLISH) -> str:
    """``a, b and c`` in ``t``'s language ("none" for no name)."""
    if not names:
        return t("none")
    if len(names) == 1:
        return names[0]
    if t.lang == "en":
        return ", ".join(names[:-1]) + " and " + names[-1]
    return t("{items} and {last}", items=t(", ").join(names[:-1]), last=names[-1])


def pct(x: float) -> str:
    """The memory log's return format: ``+3.2%``."""
    return f"{x:+.1%}"
