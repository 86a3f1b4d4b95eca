"""Reflection on settled decisions: a short reflection for the memory log and one lesson per role.

``Reflector(quick_llm, config)`` asks the quick model (or the offline engine) to look back at a
decision once its holding window has closed:

- ``reflect_on_decision(...)`` → 2–4 plain sentences that cite the realised return and alpha
  (``+x.x%``) and say whether the call was right; this goes into the memory log's REFLECTION.
  ``reflect_on_final_decision(final_decision, raw_return, alpha_return, benchmark_name="SPY")`` is
  the same with the seed documents' signature.
- ``role_lessons(...)`` → ``{memory_name: (situation, lesson)}`` for every role memory of the
  roster (``team.MEMORY_NAMES``). The situation is built from the run's reports exactly as the
  agents build their memory queries, so a similar future situation finds it.

Every prompt carries the outcome in fixed lines (the offline engine reads them)::

    Rating: Overweight
    Realised return: +2.40% over 5 trading days
    Alpha vs ^N225: +1.10%
    Rule: bullish tiers need a positive alpha, bearish tiers a negative alpha, Hold an alpha within ±2%.
    Verdict: right

``Verdict:`` is ``right`` or ``wrong``, computed with ``rating.was_right`` on the exact alpha
(never the rounded figure shown above it).

Whatever the model writes is sanitised before it leaves this module (``sanitize_reflection``):
markdown, HTML comments, tags and control characters removed, whitespace collapsed, at most four
sentences and ``MAX_REFLECTION_CHARS`` characters, so it can never forge a log separator or tag.
A reflection that does not cite the realised figures gets a factual first sentence that does.

The reflection and the lessons are written in the config's ``output_language`` (the prompts carry
``language_instruction``; the sentences this module adds itself come from the catalogue,
``tradingagents/locales/zh/LC_MESSAGES/engine.po``); a Chinese sentence ends at 。！？ with or without
a space after it, and a lesson line may name its role in Chinese (交易员：…).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from tradingagents import team
from tradingagents.agents.utils.agent_utils import (
    header_lines,
    language_instruction,
    reports_block,
    situation_from_reports,
    tagged,
)
from tradingagents.config import DEFAULT_BENCHMARK, resolve_config
from tradingagents.errors import ValidationError
from tradingagents.i18n import Translator, language_of_output, rating_label, translator
from tradingagents.llm_clients.structured import message_text
from tradingagents.rating import HOLD_BAND, normalize_rating, parse_rating, was_right

MAX_REFLECTION_CHARS = 700
MAX_LESSON_CHARS = 400
MAX_SENTENCES = 4

# memory name → the role (node name) whose lesson it stores, from the roster
ROLE_MEMORIES: dict[str, str] = {name: team.MEMORY_ROLE[name].node for name in team.MEMORY_NAMES}

REFLECTION_PROMPT = """You are the Reflection Analyst of a trading team. A past decision's holding window has
closed; look back at it.
{header}

In two to four plain sentences (no headings, no lists, no markdown): say whether the call was right
(the Verdict line gives the answer by the team's rule), quoting the realised return and the alpha
against the named benchmark; name the signals the decision leaned on and which ones mattered; and
state one lesson for similar situations.
{language}"""

LESSONS_PROMPT = """You are the Lessons Analyst of a trading team. A past decision's holding window has closed;
write one lesson for each role that took part.
{header}

Answer with exactly {n_roles} lines, one per role, each starting with the role's name and a colon:
{role_lines}
Each lesson is one or two plain sentences, cites the realised alpha, and says what to repeat or avoid
in a similar situation.
{language}"""

_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[^\s])|(?<=[。！？])\s*(?=[^\s])")
_CJK_END = ("。", "！", "？")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def _pct2(x: float | None) -> str:
    """The prompt's precision (+1.10%): a small alpha does not round to a misleading zero."""
    return "n/a" if x is None else f"{x:+.2%}"


def _cites(text: str, x: float | None) -> bool:
    return _pct(x) in text or _pct2(x) in text


def verdict_line(rating: object, alpha: float | None) -> str:
    """``Verdict: right`` or ``Verdict: wrong`` by ``rating.was_right`` on the exact alpha."""
    return f"Verdict: {'right' if was_right(_tier(rating), alpha) else 'wrong'}"


def _clean(text: str) -> str:
    """Plain one-line text: no markdown, HTML, comments, brackets-as-tags or control characters.

    Applied until nothing changes, so removing one construct can never assemble another.
    """
    out = text or ""
    for _ in range(10):
        cleaned = _clean_once(out)
        if cleaned == out:
            break
        out = cleaned
    return out


def _clean_once(text: str) -> str:
    out = re.sub(r"<!--.*?(-->|$)", " ", text, flags=re.DOTALL)
    out = out.replace("<!--", " ").replace("-->", " ")
    out = re.sub(r"```.*?(```|$)", " ", out, flags=re.DOTALL)
    out = re.sub(r"</?[A-Za-z][^>]*>", " ", out)
    out = _CONTROL_RE.sub(" ", out)
    out = re.sub(r"^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+", "", out, flags=re.MULTILINE)
    out = out.replace("**", "").replace("__", "").replace("`", "")
    out = re.sub(r"(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)", "", out)
    out = out.replace("[", "(").replace("]", ")").replace("|", "/")
    return " ".join(out.split())


def sanitize_reflection(text: str, *, max_sentences: int = MAX_SENTENCES, max_chars: int = MAX_REFLECTION_CHARS) -> str:
    """Plain text, at most ``max_sentences`` sentences and ``max_chars`` characters."""
    flat = _clean(text)
    if not flat:
        return ""
    sentences = [s.strip() for s in _SENTENCE_SPLIT_RE.split(flat) if s.strip()]
    kept = _join(sentences[:max_sentences])
    if len(kept) > max_chars:
        cut = kept[:max_chars].rsplit(" ", 1)[0].rstrip(",;:")
        kept = cut if cut.endswith((".", "!", "?")) else cut + "…"
    return kept


def _join(sentences: list[str]) -> str:
    """Sentences as one text: a space after an English one, none after a Chinese one (。)."""
    out = ""
    for sentence in sentences:
        out += sentence if not out or out.endswith(_CJK_END) else " " + sentence
    return out


def _tier(rating: object) -> str:
    """A rating on the 5-tier scale ('Hold' when missing or unknown)."""
    return normalize_rating(str(rating or "")) or "Hold"


class Reflector:
    """Writes reflections and per-role lessons for settled decisions with the quick model."""

    def __init__(self, quick_llm: Any, config: Mapping[str, Any] | None = None):
        self.llm = quick_llm
        self.config = resolve_config(config)
        # the callbacks of the command these reflections are part of (a run's budget guard and usage
        # counter, while its settlement runs): every call they cause is budgeted and counted with it
        self.callbacks: list = []
        # the sentences this module writes itself, in the language the models are told to write in
        self.t: Translator = translator(language_of_output(self.config.get("output_language")))

    # -- prompts ---------------------------------------------------------------------------------

    def _context(self, *, ticker, date, rating, decision, raw, alpha, holding, reports, benchmark) -> str:
        if raw is None or alpha is None:
            raise ValidationError("A reflection needs the realised return and the alpha; this decision has no outcome yet.")
        rating = _tier(rating)
        state = {"company_of_interest": ticker, "trade_date": date}
        parts = [
            header_lines(state),
            "\n".join([
                f"Rating: {rating}",
                f"Realised return: {_pct2(raw)} over {int(holding or 0)} trading days",
                f"Alpha vs {benchmark or DEFAULT_BENCHMARK}: {_pct2(alpha)}",
                f"Rule: bullish tiers need a positive alpha, bearish tiers a negative alpha, Hold an alpha "
                f"within ±{HOLD_BAND:.0%}.",
                verdict_line(rating, alpha),
            ]),
            tagged("decision", decision),
        ]
        if reports:
            parts.append(reports_block({k: reports.get(k) for k in team.REPORT_KEYS}))
        return "\n\n".join(parts)

    def _ask(self, role: team.Role, prompt: str, context: str, ticker: str, date: str) -> str:
        state = {"company_of_interest": ticker, "trade_date": date}
        roles = list(ROLE_MEMORIES.values())
        system = prompt.format(header=header_lines(state), language=language_instruction(self.config),
                               n_roles=len(roles), role_lines="\n".join(f"{r}: …" for r in roles)).strip()
        # outside the graph no node names the role: the call says which writer it is (team.ROLE_METADATA)
        call: dict[str, Any] = {"metadata": {team.ROLE_METADATA: role.key}}
        if self.callbacks:
            call["callbacks"] = list(self.callbacks)
        result = self.llm.invoke([SystemMessage(content=system), HumanMessage(content=context)], config=call)
        return message_text(result)

    # -- public API ------------------------------------------------------------------------------

    def fact_sentence(self, *, ticker, date, rating, raw, alpha, holding, benchmark=None) -> str:
        t = self.t
        rating = _tier(rating)
        verdict = was_right(rating, alpha)
        fields = {"rating": rating_label(rating, t.lang), "ticker": ticker, "date": date, "raw": _pct(raw),
                  "days": int(holding or 0),
                  "alpha": _pct(alpha), "benchmark": benchmark}
        if benchmark and verdict is not None:
            return (t("The {rating} call on {ticker} of {date} returned {raw} over {days} trading days with an alpha "
                      "of {alpha} against {benchmark}, so the call was right.", **fields) if verdict else
                    t("The {rating} call on {ticker} of {date} returned {raw} over {days} trading days with an alpha "
                      "of {alpha} against {benchmark}, so the call was wrong.", **fields))
        if benchmark:
            return t("The {rating} call on {ticker} of {date} returned {raw} over {days} trading days with an alpha "
                     "of {alpha} against {benchmark}.", **fields)
        if verdict is not None:
            return (t("The {rating} call on {ticker} of {date} returned {raw} over {days} trading days with an alpha "
                      "of {alpha}, so the call was right.", **fields) if verdict else
                    t("The {rating} call on {ticker} of {date} returned {raw} over {days} trading days with an alpha "
                      "of {alpha}, so the call was wrong.", **fields))
        return t("The {rating} call on {ticker} of {date} returned {raw} over {days} trading days with an alpha of "
                 "{alpha}.", **fields)

    def reflect_on_final_decision(
        self, final_decision: str, raw_return: float, alpha_return: float, benchmark_name: str = DEFAULT_BENCHMARK,
        **context: Any,
    ) -> str:
        """The seed documents' signature: a reflection on ``final_decision`` given its outcome.

        ``context`` may carry ``ticker``, ``date``, ``rating`` (else parsed from the decision),
        ``holding`` (trading days, else the config's ``holding_days``) and ``reports``.
        """
        from tradingagents.dataflows.returns import parse_return

        unknown = set(context) - {"ticker", "date", "rating", "holding", "reports"}
        if unknown:
            raise TypeError(f"reflect_on_final_decision() got unexpected keyword(s): {', '.join(sorted(unknown))}")
        rating = context.get("rating") or parse_rating(final_decision)
        return self.reflect_on_decision(
            ticker=context.get("ticker") or "", date=context.get("date") or "", rating=rating,
            decision=final_decision or "", raw=parse_return(raw_return, "raw_return"),
            alpha=parse_return(alpha_return, "alpha_return"),
            holding=int(context.get("holding") or self.config["holding_days"]), reports=context.get("reports"),
            benchmark=str(benchmark_name or DEFAULT_BENCHMARK),
        )

    def reflect_on_decision(
        self, *, ticker, date, rating, decision, raw, alpha, holding, reports: dict | None = None,
        benchmark: str = DEFAULT_BENCHMARK,
    ) -> str:
        """2–4 sanitised sentences that cite the realised return and alpha (against ``benchmark``)."""
        context = self._context(ticker=ticker, date=date, rating=rating, decision=decision, raw=raw,
                                alpha=alpha, holding=holding, reports=reports, benchmark=benchmark)
        text = sanitize_reflection(self._ask(team.REFLECTION, REFLECTION_PROMPT, context, ticker, date))
        fact = self.fact_sentence(ticker=ticker, date=date, rating=rating, raw=raw, alpha=alpha, holding=holding,
                                  benchmark=benchmark)
        if not _cites(text, alpha) or not _cites(text, raw):
            text = sanitize_reflection(_join([fact, text]).strip())
        if len(_SENTENCE_SPLIT_RE.split(text)) < 2:
            lesson = (self.t("Lesson: weigh the same signals the same way in similar situations.")
                      if was_right(rating, alpha) else
                      self.t("Lesson: weigh the same signals more carefully in similar situations."))
            text = sanitize_reflection(_join([text, lesson]))
        return text

    def with_override(self, reflection: str, *, rating: str | None, pm_rating: str | None, alpha: float) -> str:
        """The reflection, led by a sentence saying that the portfolio manager overrode the team's rating and who
        was right (on the same alpha), when their own call differed; else the reflection as it was."""
        if not pm_rating or _tier(pm_rating) == _tier(rating):
            return reflection
        t = self.t
        verdict = {True: t("right"), False: t("wrong")}
        sentence = t("The portfolio manager overrode the team's {team} with {pm}: the team was {team_verdict}, the "
                     "portfolio manager {pm_verdict}.", team=rating_label(_tier(rating), t.lang),
                     pm=rating_label(_tier(pm_rating), t.lang),
                     team_verdict=verdict[bool(was_right(_tier(rating), alpha))],
                     pm_verdict=verdict[bool(was_right(_tier(pm_rating), alpha))])
        return sanitize_reflection(_join([sentence, reflection]))

    def role_lessons(
        self, *, ticker, date, rating, decision, raw, alpha, holding, reports: dict | None = None,
        benchmark: str = DEFAULT_BENCHMARK,
    ) -> dict[str, tuple[str, str]]:
        """``{memory_name: (situation, lesson)}`` for every role memory of the roster."""
        context = self._context(ticker=ticker, date=date, rating=rating, decision=decision, raw=raw,
                                alpha=alpha, holding=holding, reports=reports, benchmark=benchmark)
        answer = self._ask(team.LESSONS, LESSONS_PROMPT, context, ticker, date)
        by_role = parse_lessons(answer)
        situation = situation_from_reports(reports or {})
        if not situation.strip():
            situation = sanitize_reflection(self.t("{ticker} {rating} decision of {date}: {decision}", ticker=ticker,
                                                   rating=rating, date=date, decision=decision or ""),
                                            max_sentences=6, max_chars=1500)
        fact = self.fact_sentence(ticker=ticker, date=date, rating=rating, raw=raw, alpha=alpha, holding=holding,
                                  benchmark=benchmark)
        out: dict[str, tuple[str, str]] = {}
        for memory_name, role in ROLE_MEMORIES.items():
            lesson = sanitize_reflection(by_role.get(role, ""), max_sentences=2, max_chars=MAX_LESSON_CHARS)
            if not lesson:
                lesson = fact
            elif not _cites(lesson, alpha):
                cited = self.t("({alpha} alpha.)", alpha=_pct(alpha))
                lesson = sanitize_reflection(lesson + " " + cited, max_sentences=3, max_chars=MAX_LESSON_CHARS)
            out[memory_name] = (situation, lesson)
        return out


def parse_lessons(text: str) -> dict[str, str]:
    """Role name → lesson from lines such as ``Trader: …`` or ``交易员：…`` (the roster's name in English or
    Chinese, a half- or full-width colon; markdown around the name tolerated)."""
    out: dict[str, str] = {}
    canonical = {r.lower(): r for r in ROLE_MEMORIES.values()}
    zh = translator("zh")
    canonical.update({zh.p("role", r).lower(): r for r in ROLE_MEMORIES.values()})
    roles = "|".join(re.escape(name) for name in sorted(canonical, key=len, reverse=True))
    pattern = re.compile(rf"^[\s>*#\-\d.)]*\**\s*({roles})\s*\**\s*[:：]\s*\**\s*(.+)$", re.MULTILINE | re.IGNORECASE)
    for match in pattern.finditer(text or ""):
        role = canonical[match.group(1).lower()]
        out.setdefault(role, match.group(2).strip())
    return out
