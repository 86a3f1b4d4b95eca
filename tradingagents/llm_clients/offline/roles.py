"""The offline engine's debaters, managers, trader and reflection writer.

They read the analyst reports' signal lines (``common``) and the debate turns from their
prompts and answer with text grounded in them:

- **Bull / Bear**: lead with one of their side's signals — a different one each round — answer the
  opponent's last point (the first of the opponent's signals their turn names in bold), weigh the
  tally and apply the first past lesson.
- **Research Manager**: the documented score → tier (``common``), the strongest point of
  each side, a plan for the Trader.
- **Trader**: the plan's tier → BUY/HOLD/SELL, the last close from the recent prices, and for a
  BUY or SELL a target and a stop from the ATR and the month's support and resistance
  (``plan_levels``: reward:risk ≥ 1.5 by construction) over the horizon the call is scored on.
- **Risk analysts**: aggressive presses the trader's direction, conservative raises the risk flags
  (RSI extremes, elevated volatility, opposing signals), neutral proposes staging; each answers the
  others' last points and rotates its lead point by round.
- **Portfolio Manager**: starts from the Research Manager's tier and moves it one notch toward Hold
  when (a) a Buy/Sell faces an RSI extreme against it or elevated volatility, or (b) the newest
  settled decision on this ticker in ``past_decisions`` took the same side and lost (negative alpha
  for a bullish call, positive for a bearish one). Target and stop: the Trader's when the action is
  the Trader's, else ``plan_levels`` from the ATR; none for Hold. Horizon: the scoring window.
- **Reflection**: was the call right — the prompt's ``Verdict: right|wrong`` line (``rating.was_right``
  on the exact alpha), else the same rule on the alpha as quoted — citing the realised return and
  alpha as ``+x.x%`` against the benchmark the prompt names.

Each writer answers in its prompt's language (``common.translator_of``); the lines later roles parse
(the main point of a turn, the last close, the stop, the ATR) are read with a regex made from the
same catalogue message in every language (``common.template_res``), never from a second copy.
"""

from __future__ import annotations

import re
from typing import Any

from tradingagents.i18n import N_, Translator
from tradingagents.llm_clients.offline.common import (
    BEARISH_TIERS,
    BULLISH_TIERS,
    BUY_AT,
    ENGLISH,
    OVERWEIGHT_AT,
    TIER_ACTION,
    TIER_ALT,
    Signal,
    action_name,
    article,
    clip,
    date_of,
    direction_of_tier,
    engine_label,
    footer,
    instrument_of,
    join_names,
    languages,
    proposal_in,
    recommendation_in,
    score_of,
    signals_from_prompt,
    tag,
    template_res,
    tier_name,
    toward_hold,
    translator_of,
)
from tradingagents.rating import parse_settled_headers, was_right
from tradingagents.team import ROSTER, Role, judge, speakers

_PRICE_LINE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}):\s*(-?\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_BOLD_RE = re.compile(r"\*\*([^*\n]+)\*\*")
_NUMBER = r"-?\d+(?:\.\d+)?"

# how a debater's lesson ends after a settled win / loss of its side: written by role_lessons, read by
# debate_turn (one phrase for both, never two patterns; in every language the engine writes)
PRESS_ON = N_("press them when they recur.")
EASE_OFF = N_("ask for confirmation before leaning on them.")

PLAN_TAG = judge("invest").output_key  # the Research Manager's plan, as the later prompts tag it


def _sep(t: Translator) -> str:
    """What joins two sentences: a space in English, nothing in Chinese."""
    return "" if t.lang == "zh" else " "


def _lessons(text: str) -> list[str]:
    """The past lessons of a prompt in its order, without their numbering and similarity ([]: none)."""
    block = tag(text, "past_lessons")
    if not block or block.startswith("No past lessons"):
        return []
    out = []
    for line in block.splitlines():
        line = re.sub(r"^\d+\.\s*", "", line.strip())
        line = re.sub(r"\s*\(similarity [^)]*\)\s*$", "", line)
        if line:
            out.append(clip(line, 200))
    return out


def _first_lesson(text: str) -> str | None:
    lessons = _lessons(text)
    return lessons[0] if lessons else None


def _cited(turn: str, candidates: list[Signal]) -> Signal | None:
    """The first of ``candidates`` that ``turn`` names in bold (the point the speaker pressed)."""
    names = {s.name: s for s in candidates}
    for match in _BOLD_RE.finditer(turn or ""):
        if match.group(1).strip() in names:
            return names[match.group(1).strip()]
    return None


_CLAIM = N_("{name}: {detail}")


def _pick(items: list[Signal], index: int) -> Signal | None:
    return items[index % len(items)] if items else None


def _last_close(text: str) -> tuple[str, float] | None:
    rows = _PRICE_LINE_RE.findall(tag(text, "recent_prices"))
    if not rows:
        return None
    day, close = rows[-1]
    return day, float(close)


_ATR_RES = (re.compile(r"\bATR\)? (?:is |of )?(?P<atr>-?\d[\d,]*(?:\.\d+)?)", re.I),
            *template_res("the average daily range (ATR) is {atr} against a close of {close}",
                          atr=r"-?\d[\d,]*(?:\.\d+)?"))


def _atr(signals: list[Signal]) -> float | None:
    for s in signals:
        if s.key == "Volatility":
            for regex in _ATR_RES:
                match = regex.search(s.detail)
                if match:
                    return float(match.group("atr").replace(",", ""))
    return None


def _signed(n: int) -> str:
    return f"{n:+d}" if n else "0"


def _point(s: Signal, t: Translator) -> str:
    """A signal as a turn cites it: its name and reading."""
    return t("{name} ({detail})", name=s.name, detail=s.detail)


def risk_flags(signals: list[Signal], tier: str, t: Translator = ENGLISH) -> list[str]:
    """Market readings that argue against acting at full size in ``tier``'s direction."""
    flags = []
    side = direction_of_tier(tier)
    for s in signals:
        if s.key == "RSI" and s.flag == "overbought" and side > 0:
            flags.append(t("RSI overbought ({detail})", detail=s.detail))
        if s.key == "RSI" and s.flag == "oversold" and side < 0:
            flags.append(t("RSI oversold ({detail})", detail=s.detail))
        if s.key == "Volatility" and s.flag == "volatility elevated" and side != 0:
            flags.append(t("elevated volatility ({detail})", detail=s.detail))
    return flags


# ---------------------------------------------------------------------------------------------
# bull / bear


# each list is one sentence said a different way in each round (round 1, 2, 3, then again): a debate of three
# rounds never repeats itself, and a reader sees turns, not a template
_OPEN = {
    "bull": (N_("The case for owning {ticker} starts with **{name}** in the {source}: {detail}."),
             N_("Look next at **{name}** in the {source}: {detail}."),
             N_("Add **{name}** from the {source} to that: {detail}.")),
    "bear": (N_("The case against owning {ticker} starts with **{name}** in the {source}: {detail}."),
             N_("Now weigh **{name}** in the {source}: {detail}."),
             N_("Then there is **{name}** in the {source}: {detail}.")),
}
_SUPPORT = (N_("It is backed by **{name}**: {detail}."), N_("**{name}** agrees: {detail}."),
            N_("And **{name}** confirms it: {detail}."))
_REBUT = (N_("The {opponent}'s strongest point is \u201c{claim}\u201d."),
          N_("The {opponent} now leans on \u201c{claim}\u201d."),
          N_("This time the {opponent} presses \u201c{claim}\u201d."))


def _their_count(t: Translator, round_no: int, theirs: int, direction: str, mine: int) -> str:
    """The opponent's readings counted right (their side's number, then mine), one wording per round."""
    fields = {"direction": direction, "mine": mine}
    which = (round_no - 1) % 3
    if which == 0:
        return t.n("That is the only {direction} reading in the reports; my side has {mine}.",
                   "It is one of {n} {direction} readings in the reports; my side has {mine}.", theirs, **fields)
    if which == 1:
        return t.n("It is still the only {direction} reading, against {mine} on my side.",
                   "It is still one of {n} {direction} readings, against {mine} on my side.", theirs, **fields)
    return t.n("One {direction} reading in all, against {mine} of mine.",
               "{n} {direction} readings in all, against {mine} of mine.", theirs, **fields)


_COUNTER = (N_("The same {source} answers it with {name}: {detail}."),
            N_("Yet the same {source} also shows {name}: {detail}."),
            N_("But read the rest of the {source}, {name}: {detail}."))
_NO_TARGET = (N_("The {opponent}'s last argument names no {direction} reading I can check in the reports, so it "
                 "does not change the evidence."),
              N_("Again the {opponent} names no {direction} reading that the reports bear out."),
              N_("The {opponent} still has no {direction} reading to point to."))
_NO_LEAD = (N_("No report gives a clearly {direction} reading, so my case rests on the {neutral} neutral readings, "
               "which leave the {opponent} case unproven."),
            N_("Still no {direction} reading in any report: the {neutral} neutral ones are my case, and they do not "
               "prove the {opponent} case either."),
            N_("The reports have yet to show a single {direction} reading; my case remains the {neutral} neutral "
               "readings, which the {opponent} case has not overcome."))
_LESSON = (N_("A past lesson applies here: {lesson}"), N_("Another lesson from a similar setup: {lesson}"),
           N_("One more lesson bears on this: {lesson}"))
# the balance of the readings, from the speaker's side: it leads, it trails, or the count is level
_BALANCE = {
    ("bull", "leads"): (
        N_("Across the four reports I count {bullish} bullish against {bearish} bearish signals ({neutral} neutral), "
           "so the balance favours owning {ticker}."),
        N_("The balance has not moved: {bullish} bullish readings to {bearish} bearish, and it still favours owning "
           "{ticker}."),
        N_("Taken together, {bullish} readings for and {bearish} against make owning {ticker} the better side of the "
           "trade.")),
    ("bear", "leads"): (
        N_("Across the four reports I count {bullish} bullish against {bearish} bearish signals ({neutral} neutral), "
           "so the balance favours avoiding {ticker}."),
        N_("The balance has not moved: {bearish} bearish readings to {bullish} bullish, and it still favours "
           "avoiding {ticker}."),
        N_("Taken together, {bearish} readings against and {bullish} for make avoiding {ticker} the safer side of "
           "the trade.")),
    ("bull", "trails"): (
        N_("The bearish readings outnumber mine, {bearish} to {bullish}, but a count does not weigh them: the points "
           "above are the ones that move the price, and they argue for owning {ticker}."),
        N_("The count still runs against me, {bearish} to {bullish}, yet the readings I named are the ones that lead "
           "the price, and they favour owning {ticker}."),
        N_("I grant the tally, {bearish} to {bullish}; but the strongest single readings argue for owning {ticker}.")),
    ("bear", "trails"): (
        N_("The bullish readings outnumber mine, {bullish} to {bearish}, but a count does not weigh them: the points "
           "above are where the risk sits, and buying {ticker} here pays for good news that is already in the "
           "price."),
        N_("The count still runs against me, {bullish} to {bearish}, yet the readings I named are where the losses "
           "would come from, and they argue for avoiding {ticker}."),
        N_("The bullish tally, {bullish} to {bearish}, prices in good news; the risks above are what is left to pay "
           "for, so I would avoid {ticker}.")),
    ("bull", "level"): (
        N_("The readings are level, {bullish} each way, so the points above decide it, and they argue for owning "
           "{ticker}."),
        N_("With the count level at {bullish} apiece, the quality of the readings decides, and mine argue for "
           "owning {ticker}."),
        N_("A level count, {bullish} to {bearish}, leaves the argument to the readings themselves: mine favour "
           "owning {ticker}.")),
    ("bear", "level"): (
        N_("The readings are level, {bearish} each way, so the points above decide it, and they argue for avoiding "
           "{ticker}."),
        N_("With the count level at {bearish} apiece, the quality of the readings decides, and mine argue for "
           "avoiding {ticker}."),
        N_("A level count, {bearish} to {bullish}, leaves the argument to the readings themselves: mine favour "
           "avoiding {ticker}.")),
}


def _variant(messages: tuple[str, ...], round_no: int) -> str:
    """The round's way of saying one thing (``messages`` in round order, cycling)."""
    return messages[(round_no - 1) % len(messages)]


def debate_turn(role: Role, text: str) -> str:
    """One bull or bear turn: it answers the opponent's strongest point of their last turn by name (quoted,
    with the opponent's count of readings, and the reading of the same report that cuts the other way),
    leads with a point of its own side not made yet, weighs the count from its side, and applies the past
    lesson of its round (the first lesson in round one, the second in round two…, each once)."""
    t = translator_of(text)
    bull = role.key == "bull"
    side = "bull" if bull else "bear"
    ticker = instrument_of(text)
    signals = signals_from_prompt(text, t)
    score = score_of(signals)
    mine_dir, their_dir = ("bullish", "bearish") if bull else ("bearish", "bullish")
    opponent_role = next(r for r in speakers("invest") if r != role)
    me = role.turn_label
    opponent_name = (str(opponent_role.speaker).lower() if t.lang == "en"
                     else t.p("speaker", str(opponent_role.speaker)))
    mine = [s for s in signals if s.direction == mine_dir]
    theirs = [s for s in signals if s.direction == their_dir]
    round_no = tag(text, "debate_history").count(f"{me}:") + 1
    lead = _pick(mine, round_no - 1)
    support = _pick([s for s in mine if s != lead], round_no - 1)
    parts: list[str] = []
    mine_word, their_word = t.p("direction", mine_dir), t.p("direction", their_dir)

    opponent = tag(text, "opponent_last_argument")
    target = _cited(opponent, theirs) if opponent else None
    if opponent and target:
        parts.append(t(_variant(_REBUT, round_no), opponent=opponent_name,
                       claim=t(_CLAIM, name=target.name, detail=target.detail)))
        parts.append(_their_count(t, round_no, len(theirs), their_word, len(mine)))
        counter = next((s for s in mine if s.source == target.source and s not in (lead, support)), None)
        if counter:
            parts.append(t(_variant(_COUNTER, round_no), source=counter.source, name=counter.name,
                           detail=counter.detail))
    elif opponent:
        parts.append(t(_variant(_NO_TARGET, round_no), opponent=opponent_name, direction=their_word))

    if lead:
        parts.append(t(_variant(_OPEN[side], round_no), ticker=ticker, name=lead.name, source=lead.source,
                       detail=lead.detail))
        if support:
            parts.append(t(_variant(_SUPPORT, round_no), name=support.name, detail=support.detail))
    else:
        parts.append(t(_variant(_NO_LEAD, round_no), direction=mine_word, neutral=score.neutral,
                       opponent=opponent_name))
    ahead = score.net if bull else -score.net
    standing = "leads" if ahead > 0 else "trails" if ahead < 0 else "level"
    parts.append(t(_variant(_BALANCE[(side, standing)], round_no), bullish=score.bullish, bearish=score.bearish,
                   neutral=score.neutral, ticker=ticker))
    lessons = _lessons(text)
    lesson = lessons[round_no - 1] if round_no <= len(lessons) else None
    if lesson:
        parts.append(t(_variant(_LESSON, round_no), lesson=lesson))
        # a settled win of this side in a similar setup: press the readings; a loss: lean on more than one
        if lesson.endswith(tuple(x(PRESS_ON) for x in languages())):
            parts.append(t("Readings like these paid before, and **{name}** is one of them, so I press it.",
                           name=lead.name) if lead else t("Readings like these paid before, so I press them."))
        elif lesson.endswith(tuple(x(EASE_OFF) for x in languages())):
            parts.append(t("So I do not rest on one reading: {first} and {second} point the same way.",
                           first=lead.name, second=support.name) if lead and support else
                         t("So I rest the case on the whole count, not on a single reading."))
    return _sep(t).join(parts)


# ---------------------------------------------------------------------------------------------
# research manager

_PLAN_ACTIONS = {
    "Buy": N_("Build a full position now; add on pullbacks toward the 50-day average while the trend holds."),
    "Overweight": N_("Build half of the target position now and the rest once the leading signals confirm."),
    "Hold": N_("Keep the current exposure; no new position until the signals lean clearly one way."),
    "Underweight": N_("Trim the position by about half and avoid adding until the weak signals improve."),
    "Sell": N_("Exit the position and stay out until the bearish signals reverse."),
}


def _verdict(tier: str, score: Any, bull_best: Signal | None, bear_best: Signal | None, ticker: str,
             t: Translator) -> str:
    """Which argument decided the recommendation, in prose: the winning side's strongest point against the
    losing side's, or why neither carried a Hold."""
    side = direction_of_tier(tier)
    if side:
        winner, loser = (bull_best, bear_best) if side > 0 else (bear_best, bull_best)
        won, lost = (score.bullish, score.bearish) if side > 0 else (score.bearish, score.bullish)
        who = "bull" if side > 0 else "bear"
        if winner is None:  # cannot happen with a side, kept for safety
            return t("Neither case carried on the readings.")
        first = (t.n("The bull's **{name}** decided it, the only reading for owning {ticker}.",
                     "The bull's **{name}** decided it, the strongest of {n} readings for owning {ticker}.", won,
                     name=winner.name, ticker=ticker) if who == "bull" else
                 t.n("The bear's **{name}** decided it, the only reading against owning {ticker}.",
                     "The bear's **{name}** decided it, the strongest of {n} readings against owning {ticker}.", won,
                     name=winner.name, ticker=ticker))
        if loser is None:
            second = (t("The bear had no reading to set against it.") if who == "bull" else
                      t("The bull had no reading to set against it."))
        else:
            second = (t.n("The bear's **{name}** stood alone and could not outweigh it.",
                          "The bear's **{name}** led only {n} readings the other way and could not outweigh it.",
                          lost, name=loser.name) if who == "bull" else
                      t.n("The bull's **{name}** stood alone and could not outweigh it.",
                          "The bull's **{name}** led only {n} readings the other way and could not outweigh it.",
                          lost, name=loser.name))
        return first + _sep(t) + second
    if score.net > 0:
        return t("Neither case carried: the bull leads {bullish} readings to {bearish}, but with {neutral} neutral "
                 "readings that lead is too thin to act on.", bullish=score.bullish, bearish=score.bearish,
                 neutral=score.neutral)
    if score.net < 0:
        return t("Neither case carried: the bear leads {bearish} readings to {bullish}, but with {neutral} neutral "
                 "readings that lead is too thin to act on.", bullish=score.bullish, bearish=score.bearish,
                 neutral=score.neutral)
    return t("Neither case carried: the readings are level, {bullish} each way, so there is nothing to act on yet.",
             bullish=score.bullish)


def research_plan(text: str) -> str:
    t = translator_of(text)
    ticker = instrument_of(text)
    signals = signals_from_prompt(text, t)
    score = score_of(signals)
    tier = score.tier
    history = tag(text, "debate_history")
    rounds = history.count(f"{speakers('invest')[0].turn_label}:")
    bulls = [s for s in signals if s.direction == "bullish"]
    bears = [s for s in signals if s.direction == "bearish"]
    bull_best = _cited(history, bulls) or (bulls[0] if bulls else None)
    bear_best = _cited(history, bears) or (bears[0] if bears else None)
    lines = [
        f"**Recommendation**: {tier}",
        "",
        t("### The evidence"),
        "",
        t("The four reports carry {bullish} bullish, {bearish} bearish and {neutral} neutral readings.",
          bullish=score.bullish, bearish=score.bearish, neutral=score.neutral),
        "",
        t("### The debate"),
        "",
    ]
    n = rounds
    if bull_best and bear_best:
        debate = t.n("After {n} round of debate, the bull's strongest point was **{bull}** ({bull_detail}); the "
                     "bear's strongest was **{bear}** ({bear_detail}).",
                     "After {n} rounds of debate, the bull's strongest point was **{bull}** ({bull_detail}); the "
                     "bear's strongest was **{bear}** ({bear_detail}).", n, bull=bull_best.name,
                     bull_detail=bull_best.detail, bear=bear_best.name, bear_detail=bear_best.detail)
    elif bull_best:
        debate = t.n("After {n} round of debate, the bull's strongest point was **{bull}** ({bull_detail}); the "
                     "bear had no clearly bearish reading to stand on.",
                     "After {n} rounds of debate, the bull's strongest point was **{bull}** ({bull_detail}); the "
                     "bear had no clearly bearish reading to stand on.", n, bull=bull_best.name,
                     bull_detail=bull_best.detail)
    elif bear_best:
        debate = t.n("After {n} round of debate, the bull had no clearly bullish reading to stand on; the bear's "
                     "strongest was **{bear}** ({bear_detail}).",
                     "After {n} rounds of debate, the bull had no clearly bullish reading to stand on; the bear's "
                     "strongest was **{bear}** ({bear_detail}).", n, bear=bear_best.name,
                     bear_detail=bear_best.detail)
    else:
        debate = t.n("After {n} round of debate, the bull had no clearly bullish reading to stand on; the bear had "
                     "no clearly bearish reading to stand on.",
                     "After {n} rounds of debate, the bull had no clearly bullish reading to stand on; the bear had "
                     "no clearly bearish reading to stand on.", n)
    verdict = _verdict(tier, score, bull_best, bear_best, ticker, t)
    lines += [debate + _sep(t) + verdict, "", t("### Plan for the Trader"), "", f"- {t(_PLAN_ACTIONS[tier])}"]
    if bear_best and tier in BULLISH_TIERS:
        lines.append(t("- Watch **{name}**: if it worsens, cut the position back.", name=bear_best.name))
    if bull_best and tier in BEARISH_TIERS:
        lines.append(t("- Watch **{name}**: if it strengthens, stop reducing.", name=bull_best.name))
    lesson = next((x for x in _lessons(text) if lesson_agrees(x, tier)), None)
    if lesson:
        lines += ["", t("### Lessons applied"), "", f"- {lesson}"]
    lines += ["", t("Instrument: {ticker}.", ticker=ticker), "", footer(t)]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# trader

_SIZES = {
    "Buy": N_("a full position at the target weight"),
    "Overweight": N_("half of the target weight now, the rest on confirmation"),
    "Hold": N_("no change to the current exposure"),
    "Underweight": N_("trim the position by about half"),
    "Sell": N_("exit the whole position"),
}

_LAST_CLOSE = N_("The last close was {close} on {date}.")
_TARGET = N_("- Target: {target}, {why}.")
_STOP_LOSS = N_("- Stop-loss: {stop}, {why}.")
_REWARD_RISK = N_("- Reward:risk {rr} : 1 over {horizon}.")
_AT_RESISTANCE = N_("the resistance of the last month's closes")
_AT_SUPPORT = N_("the support of the last month's closes")
_BEYOND = N_("twice the risk, beyond the month's range")
_BELOW_SUPPORT = N_("a quarter ATR ({atr}) below the support at {level}")
_ABOVE_RESISTANCE = N_("a quarter ATR ({atr}) above the resistance at {level}")
_ATR_BELOW = N_("one and a half ATRs ({atr}) below the entry")
_ATR_ABOVE = N_("one and a half ATRs ({atr}) above the entry")
_SCORING_RE = re.compile(r"scored over (\d+) trading day")
MIN_REWARD_RISK = 1.5


def plan_levels(side: int, close: float, atr: float | None, closes: list[float] | tuple[float, ...] = ()
                ) -> dict[str, Any] | None:
    """The trade plan's levels for a long (``side`` 1) or short (-1) call entered at ``close``, from the
    instrument's volatility (``atr``; without one, the mean daily move of ``closes``) and the support
    and resistance of ``closes`` (the recent closes, the last one being ``close``).

    The stop sits a quarter ATR beyond the nearer level when that level is 1 to 2.5 ATRs away, else
    1.5 ATRs from the entry; the target is the level on the other side when it pays at least
    ``MIN_REWARD_RISK`` times the risk (and at most three times), else twice the risk. So every plan's
    reward:risk is at least 1.5 by construction. Returns {target, stop, reward_risk, target_why,
    stop_why} (the whys as (message, fields)), None without a price or any measure of volatility."""
    if not close or close <= 0 or side not in (1, -1):
        return None
    history = [float(c) for c in closes if c and c > 0]
    if not atr or atr <= 0:
        moves = [abs(b - a) for a, b in zip(history, history[1:], strict=False)]
        atr = sum(moves) / len(moves) if moves else 0.0
    if atr <= 0:
        return None
    digits = 2 if close >= 1 else 4
    low, high = (min(history), max(history)) if history else (close, close)
    near, far = (low, high) if side == 1 else (high, low)  # the level the stop guards; the one the target aims at
    gap = (close - near) * side
    if atr <= gap <= 2.5 * atr:
        stop = near - side * 0.25 * atr
        stop_why = (_BELOW_SUPPORT if side == 1 else _ABOVE_RESISTANCE, {"atr": f"{atr:.{digits}f}",
                                                                       "level": f"{near:.{digits}f}"})
    else:
        stop = close - side * 1.5 * atr
        stop_why = (_ATR_BELOW if side == 1 else _ATR_ABOVE, {"atr": f"{atr:.{digits}f}"})
    stop = round(stop, digits)
    risk = (close - stop) * side
    room = (far - close) * side
    if 1.55 * risk <= room <= 3 * risk:
        target, target_why = far, (_AT_RESISTANCE if side == 1 else _AT_SUPPORT, {})
    else:
        target, target_why = close + side * 2 * risk, (_BEYOND, {})
    target = round(target, digits)
    if side == -1 and target <= 0:
        return None
    return {"target": target, "stop": stop, "reward_risk": round((target - close) * side / risk, 2),
            "target_why": target_why, "stop_why": stop_why}


def _closes(text: str) -> list[float]:
    return [float(close) for _day, close in _PRICE_LINE_RE.findall(tag(text, "recent_prices"))]


def _scored_days(text: str) -> int | None:
    match = _SCORING_RE.search(tag(text, "scoring"))
    return int(match.group(1)) if match else None


def _horizon(text: str, t: Translator) -> str:
    """The stated horizon: the window the call is scored over (the prompt's <scoring>)."""
    days = _scored_days(text)
    return t.n("{n} trading day", "{n} trading days", days) if days else t("the scoring window")


def trader_plan(text: str) -> str:
    t = translator_of(text)
    ticker = instrument_of(text)
    signals = signals_from_prompt(text, t)
    plan = tag(text, PLAN_TAG)
    tier = recommendation_in(plan) or score_of(signals).tier
    action = TIER_ACTION[tier]
    last = _last_close(text)
    atr = _atr(signals)
    lines = [t("### Transaction proposal for {ticker}", ticker=ticker), ""]
    intro = t("The Research Manager recommends **{tier}**.", tier=tier_name(tier, t))
    if last:
        intro += _sep(t) + t(_LAST_CLOSE, close=f"{last[1]:.2f}", date=last[0])
    else:
        intro += _sep(t) + t("Recent prices were not available, so levels are left to the execution desk.")
    lines += [intro, "", t("- Action: {action} — {size}.", action=action_name(action, t), size=t(_SIZES[tier]))]
    if last and action != "HOLD":
        lines.append(t("- Entry: near {price}.", price=f"{last[1]:.2f}"))
        levels = plan_levels(1 if action == "BUY" else -1, last[1], atr, _closes(text))
        if levels:
            why, fields = levels["target_why"]
            lines.append(t(_TARGET, target=f"{levels['target']:.2f}", why=t(why, **fields)))
            why, fields = levels["stop_why"]
            lines.append(t(_STOP_LOSS, stop=f"{levels['stop']:.2f}", why=t(why, **fields)))
            lines.append(t(_REWARD_RISK, rr=f"{levels['reward_risk']:.1f}", horizon=_horizon(text, t)))
    elif action == "HOLD":
        lines.append(t("- Levels: none, a Hold changes no position; horizon {horizon}.", horizon=_horizon(text, t)))
    opposing = [s for s in signals if s.direction == ("bearish" if action == "BUY" else "bullish")]
    if opposing and action == "BUY":
        lines.append(t("- What would change my mind: **{name}** ({detail}) worsening.", name=opposing[0].name,
                       detail=opposing[0].detail))
    elif opposing and action == "SELL":
        lines.append(t("- What would change my mind: **{name}** ({detail}) strengthening.", name=opposing[0].name,
                       detail=opposing[0].detail))
    elif action == "HOLD":
        lines.append(t("- What would change my mind: the signals leaning clearly one way in the next reports."))
    lesson = next((x for x in _lessons(text) if lesson_agrees(x, tier)), None)
    if lesson:
        lines.append(t("- Lesson applied: {lesson}", lesson=lesson))
    lines += ["", footer(t), "", f"FINAL TRANSACTION PROPOSAL: **{action}**"]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# risk analysts

def risk_turn(role: Role, text: str) -> str:
    """One risk-committee turn. The 'direction' is the trader's BUY/SELL, or for a HOLD the side
    the signals lean to (bullish when tied): the aggressive analyst presses it, the conservative
    one raises what argues against it, the neutral one proposes how to stage or trigger it."""
    t = translator_of(text)
    speaker, key = role.turn_label, role.key
    ticker = instrument_of(text)
    signals = signals_from_prompt(text, t)
    score = score_of(signals)
    action = proposal_in(tag(text, "trader_plan")) or "HOLD"
    tier = recommendation_in(tag(text, PLAN_TAG)) or score.tier
    round_no = tag(text, "debate_history").count(f"{speaker}:") + 1
    lean = action if action != "HOLD" else ("BUY" if score.bullish >= score.bearish else "SELL")
    with_dir = "bearish" if lean == "SELL" else "bullish"
    against_dir = "bullish" if lean == "SELL" else "bearish"
    supporting = [s for s in signals if s.direction == with_dir]
    opposing = [s for s in signals if s.direction == against_dir]
    flags = risk_flags(signals, tier if action != "HOLD" else ("Buy" if lean == "BUY" else "Sell"), t)
    parts: list[str] = []
    with_word, against_word = t.p("direction", with_dir), t.p("direction", against_dir)

    answered: set[str] = set()
    for other_role in (r for r in speakers("risk") if r != role):
        other = other_role.key
        cited = _cited(tag(text, f"{other}_last_argument"), signals)
        if cited is None or cited.name in answered:
            continue
        answered.add(cited.name)
        helps = cited.direction == with_dir
        fields = {"other": other if t.lang == "en" else t.p("speaker", str(other_role.speaker)),
                  "point": _point(cited, t)}
        if key == "aggressive":
            parts.append(t("The {other} analyst is right that {point} matters, and it argues for more size, not less.",
                           **fields) if helps else
                         t("The {other} analyst worries about {point}; that risk is sized for by a stop, while "
                           "waiting costs the move.", **fields))
        elif key == "conservative":
            parts.append(t("The {other} analyst points to {point}; one reading does not pay for the drawdown if "
                           "it is wrong.", **fields) if helps else
                         t("The {other} analyst also sees {point}, which is exactly the risk I am pricing.", **fields))
        else:
            parts.append(t("The {other} analyst's {point} is real but only part of the picture.", **fields)
                         if len(answered) == 1 else
                         t("The {other} analyst's {point} matters as well, and it too is one reading among several.",
                           **fields))

    if key == "aggressive":
        lead = _pick(supporting, round_no - 1)
        if action == "HOLD":
            parts.append(t("A HOLD on {ticker} leaves {n} {direction} readings unused; I would turn it into a "
                           "starter {lean}.", ticker=ticker, n=len(supporting), direction=with_word, lean=action_name(lean, t)))
        else:
            parts.append(t("Act on the {action} with conviction.", action=action_name(action, t)))
        if lead:
            parts.append(t("**{name}** says {detail}.", name=lead.name, detail=lead.detail))
        fields = {"n": len(supporting), "direction": with_word, "m": len(opposing), "against": against_word}
        parts.append(t("The reports hold {n} {direction} readings against {m} {against}; full size captures the "
                       "move.", **fields) if action != "HOLD" else
                     t("The reports hold {n} {direction} readings against {m} {against}; sitting still is a choice "
                       "too.", **fields))
    elif key == "conservative":
        lead_flag = flags[(round_no - 1) % len(flags)] if flags else None
        lead = _pick(opposing, round_no - 1)
        if action == "HOLD":
            parts.append(t("Holding {ticker} is the prudent call; any move toward a {lean} needs more than this.",
                           ticker=ticker, lean=action_name(lean, t)))
        if lead_flag:
            parts.append(t("Mind the {flag}.", flag=lead_flag))
        if lead:
            parts.append(t("**{name}** cuts against a {lean}: {detail}.", name=lead.name, lean=action_name(lean, t),
                           detail=lead.detail))
        if not lead_flag and not lead:
            parts.append(t("I see no flag against the {action} in the reports, but a stop and a moderate size "
                           "still cost little.", action=action_name(action, t)))
        parts.append(t("I would halve the size and keep a tight stop.") if action != "HOLD" else
                     t("Keep the exposure small and the stops tight until the evidence settles."))
    else:
        lead = _pick(supporting, round_no) or _pick(opposing, round_no)
        fields = {"ticker": ticker, "bullish": score.bullish, "bearish": score.bearish, "neutral": score.neutral,
                  "tier": tier_name(tier, t)}
        parts.append(t("The evidence on {ticker} is {bullish} bullish, {bearish} bearish and {neutral} neutral "
                       "readings, an {tier} case rather than an all-in one.", **fields) if article(tier) == "an" else
                     t("The evidence on {ticker} is {bullish} bullish, {bearish} bearish and {neutral} neutral "
                       "readings, a {tier} case rather than an all-in one.", **fields))
        if lead:
            parts.append(t("**{name}** ({detail}) matters most to me this round.", name=lead.name,
                           detail=lead.detail))
        if action == "HOLD":
            trigger = _pick(supporting, round_no - 1)
            risk = _pick(opposing, round_no - 1)
            if trigger and risk:
                parts.append(t("Keep the HOLD but set triggers: add if {trigger} persists, cut if {risk} worsens.",
                               trigger=trigger.name, risk=risk.name))
            elif trigger:
                parts.append(t("Keep the HOLD but set triggers: add if {trigger} persists, cut if the tape turns.",
                               trigger=trigger.name))
            elif risk:
                parts.append(t("Keep the HOLD but set triggers: add if a clear signal appears, cut if {risk} "
                               "worsens.", risk=risk.name))
            else:
                parts.append(t("Keep the HOLD but set triggers: add if a clear signal appears, cut if the tape "
                               "turns."))
        elif flags:
            parts.append(t("With {flags}, stage the {action}: half now, half on confirmation.",
                           flags=join_names(flags[:2], t), action=action_name(action, t)))
        else:
            parts.append(t("Stage the {action}: start at half size and add as the signals confirm.", action=action_name(action, t)))
    return _sep(t).join(parts)


# ---------------------------------------------------------------------------------------------
# portfolio manager

_LAST_CLOSE_RES = (re.compile(rf"last close was (?P<close>{_NUMBER})"), *template_res(_LAST_CLOSE, close=_NUMBER))
_STOP_RES = (re.compile(rf"Stop-loss: (?P<stop>{_NUMBER})"), *template_res(_STOP_LOSS, stop=_NUMBER))
_TARGET_RES = (re.compile(rf"Target: (?P<target>{_NUMBER})"), *template_res(_TARGET, target=_NUMBER))


def _last_close_in_plan(text: str) -> float | None:
    plan = tag(text, "trader_plan")
    for regex in _LAST_CLOSE_RES:
        match = regex.search(plan)
        if match:
            return float(match.group("close"))
    return None


def _past_same_ticker(text: str, ticker: str) -> tuple[str, str, str, str] | None:
    """(date, rating, raw, alpha) of the newest settled decision on ``ticker`` in past_decisions,
    read with the format the past context is written in (``rating.parse_settled_headers``)."""
    found = [d for d in parse_settled_headers(tag(text, "past_decisions")) if d["ticker"] == ticker]
    if not found:
        return None
    newest = max(found, key=lambda d: d["date"])
    return newest["date"], newest["rating"], f"{newest['raw']:+.1%}", f"{newest['alpha']:+.1%}"


MEMORY_RULES = ("moderate", "follow")
"""The Portfolio Manager's two uses of a settled decision on the same ticker: **moderate** (the last call
took today's side and lost: one notch toward Hold) and **follow** (the last Hold missed a move and today's
signals lean the same way: take that side, one tier)."""
APPLY_FROM = 1
"""A rule is applied on a ticker only while its track record there (helped − hurt, ``rule_record`` over the
settled decisions the prompt shows) is at least this: a rule that hurt as often as it helped is retired, and
one without a record waits for one. Measured over a year of weekly decisions on five demo tickers
(``bench/bench_memory_effect.py``): applied unconditionally, the two rules changed 65 of 265 decisions and
cost 27 points of alpha on them; gated by their record they change a few and do not make the team worse."""


def _same_ticker_history(text: str, ticker: str) -> list[dict[str, Any]]:
    """The settled decisions on ``ticker`` in past_decisions, oldest first (point in time: the log gives
    only what had settled by the analysis date)."""
    found = [d for d in parse_settled_headers(tag(text, "past_decisions")) if d["ticker"] == ticker]
    return sorted(found, key=lambda d: d["date"])


def rule_record(history: list[dict[str, Any]], rule: str) -> tuple[int, int]:
    """(helped, hurt): how the memory rule ``rule`` would have done on each pair of consecutive settled
    decisions of ``history`` (oldest first) where it applies, judged on the later decision's alpha.

    - moderate: the earlier call lost and the later took the same side (not Hold): cutting it toward
      Hold helped when the later call lost too, hurt when it was right;
    - follow: the earlier Hold lost on a move of alpha a and the later call was a Hold too: taking the
      side of a helped when the later alpha went the same way (``was_right`` of that tier), else hurt."""
    helped = hurt = 0
    for before, after in zip(history, history[1:], strict=False):
        lost = was_right(before["rating"], before["alpha"]) is False
        if not lost:
            continue
        if rule == "moderate":
            side = direction_of_tier(before["rating"])
            if side and direction_of_tier(after["rating"]) == side:
                if was_right(after["rating"], after["alpha"]):
                    hurt += 1
                else:
                    helped += 1
        elif rule == "follow" and before["rating"] == "Hold" and after["rating"] == "Hold":
            tier = "Overweight" if before["alpha"] > 0 else "Underweight"
            if was_right(tier, after["alpha"]):
                helped += 1
            else:
                hurt += 1
    return helped, hurt


def _settled_citations(text: str, t: Translator = ENGLISH) -> str | None:
    """Every settled decision the prompt's past_decisions holds, cited with its alpha (None: none)."""
    found = parse_settled_headers(tag(text, "past_decisions"))
    if not found:
        return None
    cited = [t("{rating} on {ticker} of {date} ({alpha} alpha, right)", rating=tier_name(d["rating"], t), ticker=d["ticker"],
               date=d["date"], alpha=f"{d['alpha']:+.1%}") if was_right(d["rating"], d["alpha"]) else
             t("{rating} on {ticker} of {date} ({alpha} alpha, wrong)", rating=tier_name(d["rating"], t), ticker=d["ticker"],
               date=d["date"], alpha=f"{d['alpha']:+.1%}") for d in found]
    return t("Settled decisions considered ({n}): {items}.", n=len(found), items=t("; ").join(cited))


def _decided(tier: str, plan_tier: str, reasons: list[str], bulls: list[Signal], bears: list[Signal],
             t: Translator) -> str:
    """The argument that decided the final rating, in one sentence."""
    if reasons:
        return t("What decided it: the rating was {reason}.", reason=reasons[-1])
    side = direction_of_tier(tier)
    lead = (bulls[0] if bulls else None) if side > 0 else (bears[0] if bears else None) if side < 0 else None
    if lead and side > 0:
        return t("What decided it: the bullish case, led by {point}, outweighed the risks raised against it.",
                 point=_point(lead, t))
    if lead:
        return t("What decided it: the bearish case, led by {point}, outweighed the readings for owning.",
                 point=_point(lead, t))
    return t("What decided it: neither side's readings were strong enough to act on, so the position stays as it "
             "is.")


_PM_RIGHT = N_("The final {rating} on {ticker} was right ({alpha} alpha); similar evidence deserves similar "
               "conviction.")
_PM_HOLD_WRONG = N_("The final Hold on {ticker} was wrong ({alpha} alpha); a move of this size deserved taking a "
                    "side: lean {tier} when the signals tilt this way.")
_PM_WRONG = N_("The final {rating} on {ticker} was wrong ({alpha} alpha); moderate toward Hold when the evidence is "
               "this mixed.")
_TRADER_RIGHT = N_("The {action} on {ticker} was right ({raw} return, {alpha} alpha); keep the sizing.")
_TRADER_HOLD_BUY = N_("Holding {ticker} was wrong ({raw} return, {alpha} alpha): staying flat missed the move; buy a "
                      "starter position in a similar setup.")
_TRADER_HOLD_SELL = N_("Holding {ticker} was wrong ({raw} return, {alpha} alpha): staying flat missed the move; sell a "
                       "starter position in a similar setup.")
_RM_RIGHT = N_("Recommending {rating} on this evidence was right ({alpha} alpha).")
_RM_HOLD_BULL = N_("Recommending Hold on this evidence was wrong ({alpha} alpha); side with the bullish case when its "
                   "signals lead.")
_RM_HOLD_BEAR = N_("Recommending Hold on this evidence was wrong ({alpha} alpha); side with the bearish case when its "
                   "signals lead.")
_TIER_WORD = r"[^\s;,.()；。，（）、]+"
_PM_RIGHT_RES = template_res(_PM_RIGHT, rating=_TIER_WORD)
_PM_HOLD_WRONG_RES = template_res(_PM_HOLD_WRONG, tier=_TIER_WORD)
_PM_WRONG_RES = template_res(_PM_WRONG, rating=_TIER_WORD)
_NAMED_SIDE = (template_res(_TRADER_RIGHT, action=_TIER_WORD), template_res(_RM_RIGHT, rating=_TIER_WORD))
"""Lessons that name a past call that was right: they agree with a call on the same side."""
_FIXED_SIDE = ((template_res(_TRADER_HOLD_BUY), 1), (template_res(_TRADER_HOLD_SELL), -1),
               (template_res(_RM_HOLD_BULL), 1), (template_res(_RM_HOLD_BEAR), -1))
"""Lessons that ask for one side: they agree with a call on that side."""


def _tier_of(word: str) -> str | None:
    """The canonical tier a lesson names (English, or its name in another language the engine writes); an
    action (BUY/HOLD/SELL, or its name) as the tier of its side (Buy, Hold, Sell)."""
    for t in languages():
        for tier in BULLISH_TIERS + BEARISH_TIERS + ("Hold",):
            if tier_name(tier, t) == word:
                return tier
        for action, tier in (("BUY", "Buy"), ("HOLD", "Hold"), ("SELL", "Sell")):
            if word in (action, action_name(action, t)):
                return tier
    return None


def lesson_agrees(lesson: str, tier: str) -> bool:
    """Whether a lesson the engine wrote agrees with a call of ``tier``: "lean X" only with a call on X's
    side, "similar conviction" or "keep the sizing" after a right X only with a call on X's side, "moderate
    toward Hold" after a wrong X with anything but a full-size call on X's side, "buy (sell) a starter
    position" or "side with the bullish (bearish) case" only with a call on that side. A lesson of another
    shape (a model's, or advice on sizing) agrees."""
    side = direction_of_tier(tier)
    for regexes, group in ((_PM_HOLD_WRONG_RES, "tier"), (_PM_RIGHT_RES, "rating"), (_PM_WRONG_RES, "rating")):
        for regex in regexes:
            match = regex.search(lesson)
            if not match:
                continue
            named = _tier_of(match.group(group))
            if named is None:
                return True
            if regexes is _PM_WRONG_RES:
                return not (tier in ("Buy", "Sell") and direction_of_tier(named) == side)
            return direction_of_tier(named) == side
    for regexes in _NAMED_SIDE:
        for regex in regexes:
            match = regex.search(lesson)
            if match:
                named = _tier_of(match.group("action" if "action" in regex.groupindex else "rating"))
                return named is None or direction_of_tier(named) == side
    for regexes, wanted in _FIXED_SIDE:
        if any(regex.search(lesson) for regex in regexes):
            return side == wanted
    return True


def _retired(rule: str, history: list[dict[str, Any]], out: list[str], t: Translator, ticker: str) -> bool:
    """Whether ``rule``'s track record on this ticker retires it (then ``out`` gets the sentence that says so)."""
    helped, hurt = rule_record(history, rule)
    if helped - hurt >= APPLY_FROM:
        return False
    if not helped and not hurt:
        out.append(t("The lesson to moderate after a losing call has no record on {ticker} yet, so it waits for "
                     "one.", ticker=ticker) if rule == "moderate" else
                   t("The lesson to follow a move a Hold missed has no record on {ticker} yet, so it waits for "
                     "one.", ticker=ticker))
        return True
    out.append(t("The lesson to moderate after a losing call is retired on {ticker}: on its past decisions it "
                 "helped {helped} time(s) and hurt {hurt}.", ticker=ticker, helped=helped, hurt=hurt)
               if rule == "moderate" else
               t("The lesson to follow a move a Hold missed is retired on {ticker}: on its past decisions it "
                 "helped {helped} time(s) and hurt {hurt}.", ticker=ticker, helped=helped, hurt=hurt))
    return True


def portfolio_decision(text: str) -> dict[str, Any]:
    t = translator_of(text)
    ticker = instrument_of(text)
    signals = signals_from_prompt(text, t)
    score = score_of(signals)
    plan_tier = recommendation_in(tag(text, PLAN_TAG)) or score.tier
    action = proposal_in(tag(text, "trader_plan")) or TIER_ACTION[plan_tier]
    tier = plan_tier
    reasons: list[str] = []
    flags = risk_flags(signals, tier, t)
    if tier in ("Buy", "Sell") and flags:
        tier = toward_hold(tier)
        reasons.append(t("moderated from {before} to {after} because of {flags}", before=tier_name(plan_tier, t), after=tier_name(tier, t),
                         flags=join_names(flags, t)))
    past = _past_same_ticker(text, ticker)
    retired: list[str] = []  # the sentence saying which rule its record retired, when one did
    lesson = _first_lesson(text)
    past_sentence = (t("No earlier decision on {ticker} has settled yet; the lesson below comes from similar "
                       "situations elsewhere.", ticker=ticker) if lesson else
                     t("No earlier decision on {ticker} has settled yet.", ticker=ticker))
    if past:
        p_date, p_rating, p_raw, p_alpha = past
        lost = was_right(p_rating, _pct_value(p_alpha)) is False
        fields = {"ticker": ticker, "rating": tier_name(p_rating, t), "date": p_date, "raw": p_raw, "alpha": p_alpha}
        past_sentence = (t("The last settled call on {ticker}, {rating} on {date}, returned {raw} with alpha "
                           "{alpha}, so it was wrong.", **fields) if lost else
                         t("The last settled call on {ticker}, {rating} on {date}, returned {raw} with alpha "
                           "{alpha}, so it was right.", **fields))
        history = _same_ticker_history(text, ticker)
        if lost and direction_of_tier(p_rating) == direction_of_tier(tier) and tier != "Hold" and \
                _retired("moderate", history, retired, t, ticker):
            pass
        elif lost and direction_of_tier(p_rating) == direction_of_tier(tier) and tier != "Hold":
            before = tier
            tier = toward_hold(tier)
            reasons.append(t("moderated from {before} to {after} because the last {rating} call on {ticker} lost "
                             "({alpha} alpha)", before=tier_name(before, t), after=tier_name(tier, t),
                             rating=tier_name(p_rating, t), ticker=ticker,
                             alpha=p_alpha))
        elif lost and p_rating == "Hold" and tier == "Hold" and score.net * _pct_value(p_alpha) > 0 and \
                _retired("follow", history, retired, t, ticker):
            pass
        elif lost and p_rating == "Hold" and tier == "Hold" and score.net * _pct_value(p_alpha) > 0:
            # the last Hold missed a move and today's signals lean the same way: take that side, one tier
            before = tier
            tier = "Overweight" if _pct_value(p_alpha) > 0 else "Underweight"
            reasons.append(t("moved from {before} to {after} because the last Hold on {ticker} missed a {alpha} "
                             "alpha move and the signals lean the same way", before=tier_name(before, t),
                             after=tier_name(tier, t),
                             ticker=ticker, alpha=p_alpha))
    bulls = [s for s in signals if s.direction == "bullish"]
    bears = [s for s in signals if s.direction == "bearish"]
    fields = {"tier": tier_name(tier, t), "ticker": ticker, "net": _signed(score.net), "bullish": score.bullish,
              "bearish": score.bearish, "neutral": score.neutral, "plan_tier": tier_name(plan_tier, t),
              "action": action_name(action, t)}
    if reasons:
        summary = t("{tier} on {ticker}: on {bullish} bullish, {bearish} bearish and {neutral} neutral readings "
                    "the Research Manager recommended {plan_tier} and the Trader proposed {action}; the rating was "
                    "{reasons}.", reasons=t("; ").join(reasons), **fields)
    else:
        summary = t("{tier} on {ticker}: on {bullish} bullish, {bearish} bearish and {neutral} neutral readings "
                    "the Research Manager recommended {plan_tier} and the Trader proposed {action}; the risk debate "
                    "raised no reason to change it.", **fields)
    summary += _sep(t) + t("Decided by the {engine}.", engine=engine_label(t))
    thesis_parts = [
        _decided(tier, plan_tier, reasons, bulls, bears, t),
        t("For: {items}.", items=join_names([_point(s, t) for s in bulls[:3]], t) if bulls
          else t("no bullish reading")),
        t("Against: {items}.", items=join_names([_point(s, t) for s in bears[:3]], t) if bears
          else t("no bearish reading")),
    ]
    conservative = tag(text, "risk_debate_history")
    if "Conservative Analyst:" in conservative:
        thesis_parts.append(t("The risk committee's conservative voice asked for a smaller size and a tight stop; "
                              "the rating reflects it.") if reasons else
                            t("The risk committee's conservative voice asked for a smaller size and a tight stop; "
                              "the evidence outweighs it."))
    thesis_parts.append(past_sentence)
    thesis_parts.extend(retired)
    book = _book_sentence(text, t)
    if book:
        thesis_parts.append(book)
    citations = _settled_citations(text, t)
    if citations:
        thesis_parts.append(citations)
    if lesson:
        applies = next((x for x in _lessons(text) if lesson_agrees(x, tier)), None)
        thesis_parts.append(t("Lesson applied: {lesson}", lesson=applies) if applies else
                            t("A past lesson pointed the other way ({lesson}); today's evidence outweighs it.",
                              lesson=lesson.rstrip(".")))
    close = _last_close_in_plan(text)
    final_action = TIER_ACTION[tier]
    target = stop = None
    if close and final_action != "HOLD":
        side = 1 if final_action == "BUY" else -1
        if final_action == proposal_in(tag(text, "trader_plan")):
            target, stop = _level_in_plan(text, _TARGET_RES, "target"), _level_in_plan(text, _STOP_RES, "stop")
            if target is None and stop is not None and (close - stop) * side > 0:  # a stop without a target
                target = round(close + 2 * (close - stop), 2)
        if target is None or stop is None:  # the PM changed the side: its own levels, from the volatility
            levels = plan_levels(side, close, _atr(signals))
            target, stop = (levels["target"], levels["stop"]) if levels else (None, None)
    strength = abs(score.ratio)
    return {
        "rating": tier,
        "executive_summary": summary,
        "investment_thesis": _sep(t).join(thesis_parts),
        "price_target": target,
        "time_horizon": _horizon(text, t),
        "action": final_action,
        "conviction": "high" if strength >= BUY_AT else "medium" if strength >= OVERWEIGHT_AT else "low",
        "entry_price": close if final_action != "HOLD" else None,
        "stop_loss": stop,
        "position_size": t(_SIZES[tier]),
    }


_HELD_RE = re.compile(r"^Held: (?P<shares>[\d.]+) shares of (?P<ticker>\S+) .*?; weight (?P<weight>[\d.]+%) of the "
                      r"book;.*?; limit (?P<limit>[\d.]+%)", re.M)
_NOT_HELD_RE = re.compile(r"^Not held: the book holds no (?P<ticker>\S+); limit (?P<limit>[\d.]+%)", re.M)


def _book_sentence(text: str, t: Translator = ENGLISH) -> str | None:
    """What the prompt's <portfolio> block says of the holding, in the engine's words (None: no book)."""
    block = tag(text, "portfolio")
    held = _HELD_RE.search(block)
    if held:
        fields = {k: held.group(k) for k in ("shares", "ticker", "weight", "limit")}
        if float(fields["weight"].rstrip("%")) >= float(fields["limit"].rstrip("%")):
            return t("The book holds {shares} {ticker}, {weight} of it, at its limit of {limit}: a Buy adds nothing, "
                     "so the order is capped.", **fields)
        return t("The book holds {shares} {ticker}, {weight} of it (limit {limit}); the order is sized from this "
                 "rating and capped by the limit.", **fields)
    missing = _NOT_HELD_RE.search(block)
    if missing:
        return t("The book holds no {ticker}; the limit per position is {limit}.", ticker=missing.group("ticker"),
                 limit=missing.group("limit"))
    return None


def _level_in_plan(text: str, regexes: tuple[re.Pattern[str], ...], group: str) -> float | None:
    """A level of the Trader's plan (its target or its stop), when the plan names one."""
    plan = tag(text, "trader_plan")
    for regex in regexes:
        match = regex.search(plan)
        if match:
            return float(match.group(group))
    return None


def portfolio_text(text: str) -> str:
    """The decision as text (the graph asks for the structured one); labels in the card's grammar."""
    t = translator_of(text)
    d = portfolio_decision(text)
    parts = [f"**Rating**: {d['rating']}", t("### Executive Summary") + "\n\n" + d["executive_summary"],
             t("### Investment Thesis") + "\n\n" + d["investment_thesis"]]
    extras = [f"**Action**: {d['action']}", f"**Conviction**: {d['conviction']}"]
    for label, key in (("Entry", "entry_price"), ("Price target", "price_target"), ("Stop-loss", "stop_loss")):
        if d[key] is not None:
            extras.append(f"**{label}**: {d[key]:.2f}")
    extras.append(f"**Position size**: {d['position_size']}")
    extras.append(f"**Time horizon**: {d['time_horizon']}")
    return "\n\n".join(parts + ["\n".join(extras)])


# ---------------------------------------------------------------------------------------------
# reflection

_OUTCOME_RE = {
    "rating": re.compile(r"^Rating:\s*(" + TIER_ALT + r")\b", re.M),
    "raw": re.compile(r"^Realised return:\s*([+-]\d+(?:\.\d+)?%)", re.M),
    "holding": re.compile(r"^Realised return:[^\n]*?over (\d+) trading day", re.M),
    # "Alpha vs ^N225: +1.1%" (the benchmark named), or "Alpha vs benchmark: …"
    "alpha": re.compile(r"^Alpha vs [^:\n]+:\s*([+-]\d+(?:\.\d+)?%)", re.M),
    "benchmark": re.compile(r"^Alpha vs ([^:\n]+):", re.M),
    # the reflector's verdict, computed by rating.was_right on the exact alpha
    "verdict": re.compile(r"^Verdict:\s*(right|wrong)\b", re.M | re.I),
}


def outcome_of(text: str) -> dict[str, str]:
    out = {}
    for key, regex in _OUTCOME_RE.items():
        match = regex.search(text)
        out[key] = match.group(1) if match else ""
    return out


def _pct_value(text: str) -> float:
    try:
        return float(text.rstrip("%")) / 100
    except ValueError:
        return 0.0


def call_was_right(outcome: dict[str, str]) -> bool:
    """The prompt's ``Verdict:`` line (the rule applied to the exact alpha); without one,
    ``rating.was_right`` on the alpha as quoted."""
    if outcome.get("verdict"):
        return outcome["verdict"].lower() == "right"
    return bool(was_right(outcome.get("rating") or "Hold", _pct_value(outcome.get("alpha") or "")))


def alpha_of(outcome: dict[str, str]) -> float:
    return _pct_value(outcome.get("alpha") or "")


def _benchmark_name(outcome: dict[str, str], t: Translator = ENGLISH) -> str:
    name = (outcome.get("benchmark") or "").strip()
    return name if name and name.lower() != "benchmark" else t("its benchmark")


def reflection(text: str) -> str:
    t = translator_of(text)
    ticker, date = instrument_of(text), date_of(text)
    o = outcome_of(text)
    rating = o["rating"] or "Hold"
    right = call_was_right(o)
    signals = signals_from_prompt(text, t)
    side = "bullish" if rating in BULLISH_TIERS else "bearish" if rating in BEARISH_TIERS else None
    leaned = [s.name for s in signals if side and s.direction == side][:2]
    against = [s.name for s in signals if side and s.direction not in (side, "neutral")][:2]
    fields = {"rating": tier_name(rating, t), "ticker": ticker, "date": date, "holding": o["holding"] or t.p("holding", "the"),
              "raw": o["raw"] or t("an unknown amount"), "alpha": o["alpha"] or t("unknown"),
              "benchmark": _benchmark_name(o, t)}
    first = (t("The {rating} call on {ticker} of {date} was right: over {holding} trading days the stock returned "
               "{raw} with an alpha of {alpha} against {benchmark}.", **fields) if right else
             t("The {rating} call on {ticker} of {date} was wrong: over {holding} trading days the stock returned "
               "{raw} with an alpha of {alpha} against {benchmark}.", **fields))
    if leaned:
        second = t("The decision leaned on {names}.", names=join_names(leaned, t))
    else:
        second = t("The decision rested on a balanced set of signals.")
    if right:
        third = t("Keep weighting these signals the same way in comparable setups.")
    elif against:
        fields = {"names": join_names(against, t), "rating": tier_name(rating, t)}
        third = (t("Next time, give more weight to {names} before taking an {rating} stance.", **fields)
                 if article(rating) == "an" else
                 t("Next time, give more weight to {names} before taking a {rating} stance.", **fields))
    elif rating == "Hold":
        third = (t("Next time, take the bullish side when the signals lean that way instead of staying at Hold.")
                 if alpha_of(o) > 0 else
                 t("Next time, take the bearish side when the signals lean that way instead of staying at Hold."))
    else:
        third = (t("Next time, demand a second confirming signal before taking an {rating} stance.",
                   rating=tier_name(rating, t)) if article(rating) == "an" else
                 t("Next time, demand a second confirming signal before taking a {rating} stance.",
                   rating=tier_name(rating, t)))
    return _sep(t).join([first, second, third])


def role_lessons(text: str) -> str:
    t = translator_of(text)
    ticker = instrument_of(text)
    o = outcome_of(text)
    rating = o["rating"] or "Hold"
    alpha_text = o["alpha"] or "+0.0%"
    alpha = _pct_value(alpha_text)
    right = call_was_right(o)
    signals = signals_from_prompt(text, t)
    bulls_found = [s.name for s in signals if s.direction == "bullish"][:2]
    bears_found = [s.name for s in signals if s.direction == "bearish"][:2]
    bulls, bears = join_names(bulls_found, t), join_names(bears_found, t)
    up = alpha > 0
    action = TIER_ACTION[rating]
    f = {"ticker": ticker, "alpha": alpha_text, "raw": o["raw"] or t("n/a"), "rating": tier_name(rating, t),
         "action": action_name(action, t)}
    lessons = {
        "bull": (t("Bullish readings such as {names} paid off on {ticker} ({alpha} alpha); {advice}", names=bulls,
                   advice=t(PRESS_ON), **f) if up else
                 t("Bullish readings such as {names} did not pay off on {ticker} ({alpha} alpha); {advice}",
                   names=bulls, advice=t(EASE_OFF), **f)),
        "bear": (t("Bearish readings such as {names} were borne out on {ticker} ({alpha} alpha); {advice}",
                   names=bears, advice=t(PRESS_ON), **f) if not up else
                 t("Bearish readings such as {names} did not play out on {ticker} ({alpha} alpha); {advice}",
                   names=bears, advice=t(EASE_OFF), **f)),
        "trader": (t(_TRADER_RIGHT, **f)
                   if right else
                   t("The {action} on {ticker} was wrong ({raw} return, {alpha} alpha); size smaller and use tighter "
                     "stops in a similar setup.", **f)),
        "research_manager": (t(_RM_RIGHT, **f) if right else
                             t("Recommending {rating} on this evidence was wrong ({alpha} alpha); weigh the losing "
                               "side's strongest point more.", **f)),
        "portfolio_manager": (t(_PM_RIGHT, **f) if right else
                              t(_PM_HOLD_WRONG, tier=tier_name("Overweight" if up else "Underweight", t), **f)
                              if rating == "Hold" else t(_PM_WRONG, **f)),
    }
    if rating == "Hold" and not right:
        lessons["trader"] = t(_TRADER_HOLD_BUY, **f) if up else t(_TRADER_HOLD_SELL, **f)
        lessons["research_manager"] = t(_RM_HOLD_BULL, **f) if up else t(_RM_HOLD_BEAR, **f)
    # one line per role that learns (the roster's roles with a memory), named as the roster names it (the
    # reflector's parse_lessons reads the English name in every language)
    # a side with no reading of its own learns a sentence, never "readings such as none"
    if not bulls_found:
        lessons["bull"] = (t("No bullish reading stood out on {ticker}, yet it beat its benchmark ({alpha} alpha); "
                             "look harder for the bullish case in a similar setup.", **f) if up else
                           t("No bullish reading stood out on {ticker}, and it lagged its benchmark ({alpha} alpha), "
                             "as the missing case suggested.", **f))
    if not bears_found:
        lessons["bear"] = (t("No bearish reading stood out on {ticker}, yet it lagged its benchmark ({alpha} alpha); "
                             "look harder for the risks in a similar setup.", **f) if not up else
                           t("No bearish reading stood out on {ticker}, and it beat its benchmark ({alpha} alpha), "
                             "as the missing case suggested.", **f))
    lines = [f"{r.node}: {lessons[r.key]}" for r in ROSTER if r.memory]
    return "\n".join(lines)
