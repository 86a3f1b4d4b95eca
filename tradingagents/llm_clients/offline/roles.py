"""The offline engine's debaters, managers, trader and reflection writer.

They read the analyst reports' signal lines (``common``) and the debate turns from their
prompts and answer with text grounded in them:

- **Bull / Bear**: lead with one of their side's signals — a different one each round — answer the
  opponent's last point (the first of the opponent's signals their turn names in bold), weigh the
  tally and apply the first past lesson.
- **Research Manager**: the documented score → tier (``common``), the strongest point of
  each side, a plan for the Trader.
- **Trader**: the plan's tier → BUY/HOLD/SELL, the last close from the recent prices, a stop two
  ATRs away when the market report has the ATR.
- **Risk analysts**: aggressive presses the trader's direction, conservative raises the risk flags
  (RSI extremes, elevated volatility, opposing signals), neutral proposes staging; each answers the
  others' last points and rotates its lead point by round.
- **Portfolio Manager**: starts from the Research Manager's tier and moves it one notch toward Hold
  when (a) a Buy/Sell faces an RSI extreme against it or elevated volatility, or (b) the newest
  settled decision on this ticker in ``past_decisions`` took the same side and lost (negative alpha
  for a bullish call, positive for a bearish one). Price target: last close ±10 % (Buy/Sell) or
  ±5 % (Overweight/Underweight); none for Hold.
- **Reflection**: was the call right — the prompt's ``Verdict: right|wrong`` line (``rating.was_right``
  on the exact alpha), else the same rule on the alpha as quoted — citing the realised return and
  alpha as ``+x.x%`` against the benchmark the prompt names.
"""

from __future__ import annotations

import re
from typing import Any

from tradingagents.llm_clients.offline.common import (
    BEARISH_TIERS,
    BULLISH_TIERS,
    BUY_AT,
    FOOTER,
    OFFLINE_LABEL,
    OVERWEIGHT_AT,
    SCALE_TEXT,
    TIER_ACTION,
    TIER_ALT,
    Signal,
    article,
    clip,
    date_of,
    direction_of_tier,
    instrument_of,
    join_names,
    proposal_in,
    recommendation_in,
    score_of,
    signals_from_prompt,
    tag,
    toward_hold,
)
from tradingagents.rating import parse_settled_headers, was_right
from tradingagents.team import ROSTER, Role, judge, speakers

_PRICE_LINE_RE = re.compile(r"^(\d{4}-\d{2}-\d{2}):\s*(-?\d+(?:\.\d+)?)\s*$", re.MULTILINE)
_BOLD_RE = re.compile(r"\*\*([^*\n]+)\*\*")

# how a debater's lesson ends after a settled win / loss of its side: written by role_lessons, read by
# debate_turn (one phrase for both, never two patterns)
PRESS_ON = "press them when they recur."
EASE_OFF = "ask for confirmation before leaning on them."

PLAN_TAG = judge("invest").output_key  # the Research Manager's plan, as the later prompts tag it


def _first_lesson(text: str) -> str | None:
    lessons = tag(text, "past_lessons")
    if not lessons or lessons.startswith("No past lessons"):
        return None
    first = lessons.splitlines()[0]
    first = re.sub(r"^\d+\.\s*", "", first)
    first = re.sub(r"\s*\(similarity [^)]*\)\s*$", "", first)
    return clip(first, 200) or None


def _cited(turn: str, candidates: list[Signal]) -> Signal | None:
    """The first of ``candidates`` that ``turn`` names in bold (the point the speaker pressed)."""
    names = {s.name: s for s in candidates}
    for match in _BOLD_RE.finditer(turn or ""):
        if match.group(1).strip() in names:
            return names[match.group(1).strip()]
    return None


_CLAIM_RE = re.compile(r"My main point this round is \*\*([^*\n]+)\*\* from the [^:\n]+: (.+?)\.(?:\s|$)")


def _main_claim(turn: str) -> str | None:
    """The opponent's own main point, as they wrote it ("Trend: the close of 54.69 is below …"), else None."""
    match = _CLAIM_RE.search(turn or "")
    if match:
        return f"{match.group(1).strip()}: {match.group(2).strip()}"
    return None


def _pick(items: list[Signal], index: int) -> Signal | None:
    return items[index % len(items)] if items else None


def _last_close(text: str) -> tuple[str, float] | None:
    rows = _PRICE_LINE_RE.findall(tag(text, "recent_prices"))
    if not rows:
        return None
    day, close = rows[-1]
    return day, float(close)


def _atr(signals: list[Signal]) -> float | None:
    for s in signals:
        if s.name == "Volatility":
            match = re.search(r"\bATR\)? (?:is |of )?(-?\d[\d,]*(?:\.\d+)?)", s.detail, re.I)
            if match:
                return float(match.group(1).replace(",", ""))
    return None


def _signed(n: int) -> str:
    return f"{n:+d}" if n else "0"


def risk_flags(signals: list[Signal], tier: str) -> list[str]:
    """Market readings that argue against acting at full size in ``tier``'s direction."""
    flags = []
    side = direction_of_tier(tier)
    for s in signals:
        if s.name == "RSI" and "overbought" in s.rest and side > 0:
            flags.append(f"RSI overbought ({s.detail})")
        if s.name == "RSI" and "oversold" in s.rest and side < 0:
            flags.append(f"RSI oversold ({s.detail})")
        if s.name == "Volatility" and "elevated" in s.rest and side != 0:
            flags.append(f"elevated volatility ({s.detail})")
    return flags


# ---------------------------------------------------------------------------------------------
# bull / bear


def debate_turn(role: Role, text: str) -> str:
    bull = role.key == "bull"
    ticker = instrument_of(text)
    signals = signals_from_prompt(text)
    score = score_of(signals)
    mine_dir, their_dir = ("bullish", "bearish") if bull else ("bearish", "bullish")
    opponent = next(r for r in speakers("invest") if r != role)
    me, opponent_name = role.turn_label, str(opponent.speaker).lower()
    mine = [s for s in signals if s.direction == mine_dir]
    theirs = [s for s in signals if s.direction == their_dir]
    round_no = tag(text, "debate_history").count(f"{me}:") + 1
    lead = _pick(mine, round_no - 1)
    support = _pick([s for s in mine if s != lead], round_no - 1)
    parts: list[str] = [f"Round {round_no}."]

    opponent = tag(text, "opponent_last_argument")
    target = _cited(opponent, theirs) if opponent else None
    claim = _main_claim(opponent) if opponent else None
    if opponent and target:
        counter = next((s for s in mine if s.source == target.source and s not in (lead, support)), None)
        said = claim or f"{target.name}: {target.detail}"
        rebuttal = (f"The {opponent_name} argues that \u201c{said}\u201d. That is one reading against "
                    f"{len(mine)} {mine_dir} {'one' if len(mine) == 1 else 'ones'}")
        if counter:
            rebuttal += f", and the same {counter.source} says otherwise: {counter.detail}"
        parts.append(rebuttal + ".")
    elif opponent and claim:
        parts.append(f"The {opponent_name} argues that \u201c{claim}\u201d, but names no {their_dir} reading "
                     "I can check in the reports, so it does not change the evidence.")
    elif opponent:
        parts.append(f"The {opponent_name}'s last argument names no {their_dir} reading I can check in the reports, "
                     "so it does not change the evidence.")

    if lead:
        parts.append(f"My main point this round is **{lead.name}** from the {lead.source}: {lead.detail}.")
        if support:
            parts.append(f"It is backed by **{support.name}**: {support.detail}.")
    else:
        parts.append(
            f"No report gives a clearly {mine_dir} reading, so my case rests on the {score.neutral} neutral "
            f"readings, which leave the {opponent_name} case unproven."
        )
    favours = score.net > 0 if bull else score.net < 0
    stance = "owning" if bull else "avoiding"
    if favours:
        parts.append(
            f"Across the four reports I count {score.bullish} bullish against {score.bearish} bearish signals "
            f"({score.neutral} neutral), so the balance favours {stance} {ticker}."
        )
    elif bull:
        parts.append(
            f"The bearish readings outnumber mine, {score.bearish} to {score.bullish}, but a count does not weigh "
            f"them: the points above are the ones that move the price, and they argue for owning {ticker}."
        )
    else:
        parts.append(
            f"The bullish readings outnumber mine, {score.bullish} to {score.bearish}, but a count does not weigh "
            f"them: the points above are where the risk sits, and buying {ticker} here pays for good news that "
            "is already in the price."
        )
    lesson = _first_lesson(text)
    if lesson:
        parts.append(f"A past lesson applies here: {lesson}")
        # a settled win of my side in a similar situation: more conviction; a loss: less
        if lesson.endswith(PRESS_ON):
            parts.append("My side was right the last time this setup settled, so I argue it with more conviction.")
        elif lesson.endswith(EASE_OFF):
            parts.append("My side was wrong the last time this setup settled, so I argue it with less conviction.")
    return " ".join(parts)


# ---------------------------------------------------------------------------------------------
# research manager

_PLAN_ACTIONS = {
    "Buy": "Build a full position now; add on pullbacks toward the 50-day average while the trend holds.",
    "Overweight": "Build half of the target position now and the rest once the leading signals confirm.",
    "Hold": "Keep the current exposure; no new position until the signals lean clearly one way.",
    "Underweight": "Trim the position by about half and avoid adding until the weak signals improve.",
    "Sell": "Exit the position and stay out until the bearish signals reverse.",
}


def research_plan(text: str) -> str:
    ticker = instrument_of(text)
    signals = signals_from_prompt(text)
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
        "### Scoring",
        "",
        f"{SCALE_TEXT} The reports carry {score.n} signals: {score.bullish} bullish, {score.bearish} bearish and "
        f"{score.neutral} neutral, a net score of {_signed(score.net)} or {score.ratio:+.2f} per signal, hence "
        f"{tier}.",
        "",
        "### The debate",
        "",
    ]
    debate = f"After {rounds} round{'s' if rounds != 1 else ''} of debate, "
    debate += (f"the bull's strongest point was **{bull_best.name}** ({bull_best.detail})"
               if bull_best else "the bull had no clearly bullish reading to stand on")
    debate += "; " + (f"the bear's strongest was **{bear_best.name}** ({bear_best.detail})."
                      if bear_best else "the bear had no clearly bearish reading to stand on.")
    if score.net > 0:
        debate += f" The bull wins on the count of evidence, {score.bullish} readings to {score.bearish}."
    elif score.net < 0:
        debate += f" The bear wins on the count of evidence, {score.bearish} readings to {score.bullish}."
    else:
        debate += " Neither side wins on the count of evidence."
    lines += [debate, "", "### Plan for the Trader", "", f"- {_PLAN_ACTIONS[tier]}"]
    if bear_best and tier in BULLISH_TIERS:
        lines.append(f"- Watch **{bear_best.name}**: if it worsens, cut the position back.")
    if bull_best and tier in BEARISH_TIERS:
        lines.append(f"- Watch **{bull_best.name}**: if it strengthens, stop reducing.")
    lesson = _first_lesson(text)
    if lesson:
        lines += ["", "### Lessons applied", "", f"- {lesson}"]
    lines += ["", f"Instrument: {ticker}.", "", FOOTER]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# trader

_SIZES = {
    "Buy": "a full position at the target weight",
    "Overweight": "half of the target weight now, the rest on confirmation",
    "Hold": "no change to the current exposure",
    "Underweight": "trim the position by about half",
    "Sell": "exit the whole position",
}


def trader_plan(text: str) -> str:
    ticker = instrument_of(text)
    signals = signals_from_prompt(text)
    plan = tag(text, PLAN_TAG)
    tier = recommendation_in(plan) or score_of(signals).tier
    action = TIER_ACTION[tier]
    last = _last_close(text)
    atr = _atr(signals)
    lines = [f"### Transaction proposal for {ticker}", ""]
    intro = f"The Research Manager recommends **{tier}**."
    if last:
        intro += f" The last close was {last[1]:.2f} on {last[0]}."
    else:
        intro += " Recent prices were not available, so levels are left to the execution desk."
    lines += [intro, "", f"- Action: {action} — {_SIZES[tier]}."]
    if last and action != "HOLD":
        lines.append(f"- Entry: near {last[1]:.2f}.")
    if last and atr and action == "BUY":
        lines.append(f"- Stop-loss: {last[1] - 2 * atr:.2f}, two ATRs ({atr:.2f}) below the last close.")
    elif last and atr and action == "SELL":
        lines.append(f"- Re-entry only above {last[1] + 2 * atr:.2f}, two ATRs ({atr:.2f}) above the last close.")
    opposing = [s for s in signals if s.direction == ("bearish" if action == "BUY" else "bullish")]
    if opposing and action != "HOLD":
        change = "worsening" if action == "BUY" else "strengthening"
        lines.append(f"- What would change my mind: **{opposing[0].name}** ({opposing[0].detail}) {change}.")
    elif action == "HOLD":
        lines.append("- What would change my mind: the signals leaning clearly one way in the next reports.")
    lesson = _first_lesson(text)
    if lesson:
        lines.append(f"- Lesson applied: {lesson}")
    lines += ["", FOOTER, "", f"FINAL TRANSACTION PROPOSAL: **{action}**"]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# risk analysts

def risk_turn(role: Role, text: str) -> str:
    """One risk-committee turn. The 'direction' is the trader's BUY/SELL, or for a HOLD the side
    the signals lean to (bullish when tied): the aggressive analyst presses it, the conservative
    one raises what argues against it, the neutral one proposes how to stage or trigger it."""
    speaker, key = role.turn_label, role.key
    ticker = instrument_of(text)
    signals = signals_from_prompt(text)
    score = score_of(signals)
    action = proposal_in(tag(text, "trader_plan")) or "HOLD"
    tier = recommendation_in(tag(text, PLAN_TAG)) or score.tier
    round_no = tag(text, "debate_history").count(f"{speaker}:") + 1
    lean = action if action != "HOLD" else ("BUY" if score.bullish >= score.bearish else "SELL")
    with_dir = "bearish" if lean == "SELL" else "bullish"
    against_dir = "bullish" if lean == "SELL" else "bearish"
    supporting = [s for s in signals if s.direction == with_dir]
    opposing = [s for s in signals if s.direction == against_dir]
    flags = risk_flags(signals, tier if action != "HOLD" else ("Buy" if lean == "BUY" else "Sell"))
    parts = [f"Round {round_no}."]

    answered: set[str] = set()
    for other in (r.key for r in speakers("risk") if r != role):
        cited = _cited(tag(text, f"{other}_last_argument"), signals)
        if cited is None or cited.name in answered:
            continue
        answered.add(cited.name)
        helps = cited.direction == with_dir
        point = f"{cited.name} ({cited.detail})"
        if key == "aggressive":
            parts.append(f"The {other} analyst is right that {point} matters, and it argues for more size, not less."
                         if helps else
                         f"The {other} analyst worries about {point}; that risk is sized for by a stop, while "
                         "waiting costs the move.")
        elif key == "conservative":
            parts.append(f"The {other} analyst points to {point}; one reading does not pay for the drawdown if "
                         "it is wrong." if helps else
                         f"The {other} analyst also sees {point}, which is exactly the risk I am pricing.")
        else:
            parts.append(f"The {other} analyst's {point} is real but only part of the picture.")

    if key == "aggressive":
        lead = _pick(supporting, round_no - 1)
        if action == "HOLD":
            parts.append(f"A HOLD on {ticker} leaves {len(supporting)} {with_dir} readings unused; I would turn it "
                         f"into a starter {lean}.")
        else:
            parts.append(f"Act on the {action} with conviction.")
        if lead:
            parts.append(f"**{lead.name}** says {lead.detail}.")
        parts.append(f"The reports hold {len(supporting)} {with_dir} readings against {len(opposing)} {against_dir}; "
                     + ("full size captures the move." if action != "HOLD" else "sitting still is a choice too."))
    elif key == "conservative":
        lead_flag = flags[(round_no - 1) % len(flags)] if flags else None
        lead = _pick(opposing, round_no - 1)
        if action == "HOLD":
            parts.append(f"Holding {ticker} is the prudent call; any move toward a {lean} needs more than this.")
        if lead_flag:
            parts.append(f"Mind the {lead_flag}.")
        if lead:
            parts.append(f"**{lead.name}** cuts against a {lean}: {lead.detail}.")
        if not lead_flag and not lead:
            parts.append(f"I see no flag against the {action} in the reports, but a stop and a moderate size "
                         "still cost little.")
        parts.append("I would halve the size and keep a tight stop." if action != "HOLD" else
                     "Keep the exposure small and the stops tight until the evidence settles.")
    else:
        lead = _pick(supporting, round_no) or _pick(opposing, round_no)
        parts.append(f"The evidence on {ticker} is {score.bullish} bullish, {score.bearish} bearish and "
                     f"{score.neutral} neutral readings, {article(tier)} {tier} case rather than an all-in one.")
        if lead:
            parts.append(f"**{lead.name}** ({lead.detail}) matters most to me this round.")
        if action == "HOLD":
            trigger = _pick(supporting, round_no - 1)
            risk = _pick(opposing, round_no - 1)
            parts.append("Keep the HOLD but set triggers: "
                         + (f"add if {trigger.name} persists" if trigger else "add if a clear signal appears")
                         + ", " + (f"cut if {risk.name} worsens." if risk else "cut if the tape turns."))
        elif flags:
            parts.append(f"With {join_names(flags[:2])}, stage the {action}: half now, half on confirmation.")
        else:
            parts.append(f"Stage the {action}: start at half size and add as the signals confirm.")
    return " ".join(parts)


# ---------------------------------------------------------------------------------------------
# portfolio manager

_TARGET_MOVE = {"Buy": 0.10, "Overweight": 0.05, "Underweight": -0.05, "Sell": -0.10}
_HORIZON = {"Buy": "3-6 months", "Overweight": "3-6 months", "Hold": "1-3 months",
            "Underweight": "1-3 months", "Sell": "1-3 months"}


def _last_close_in_plan(text: str) -> float | None:
    match = re.search(r"last close was (-?\d+(?:\.\d+)?)", tag(text, "trader_plan"))
    return float(match.group(1)) if match else None


def _past_same_ticker(text: str, ticker: str) -> tuple[str, str, str, str] | None:
    """(date, rating, raw, alpha) of the newest settled decision on ``ticker`` in past_decisions,
    read with the format the past context is written in (``rating.parse_settled_headers``)."""
    found = [d for d in parse_settled_headers(tag(text, "past_decisions")) if d["ticker"] == ticker]
    if not found:
        return None
    newest = max(found, key=lambda d: d["date"])
    return newest["date"], newest["rating"], f"{newest['raw']:+.1%}", f"{newest['alpha']:+.1%}"


def _settled_citations(text: str) -> str | None:
    """Every settled decision the prompt's past_decisions holds, cited with its alpha (None: none)."""
    found = parse_settled_headers(tag(text, "past_decisions"))
    if not found:
        return None
    cited = [f"{d['rating']} on {d['ticker']} of {d['date']} ({d['alpha']:+.1%} alpha, "
             f"{'right' if was_right(d['rating'], d['alpha']) else 'wrong'})" for d in found]
    return f"Settled decisions considered ({len(found)}): " + "; ".join(cited) + "."


def portfolio_decision(text: str) -> dict[str, Any]:
    ticker = instrument_of(text)
    signals = signals_from_prompt(text)
    score = score_of(signals)
    plan_tier = recommendation_in(tag(text, PLAN_TAG)) or score.tier
    action = proposal_in(tag(text, "trader_plan")) or TIER_ACTION[plan_tier]
    tier = plan_tier
    reasons: list[str] = []
    flags = risk_flags(signals, tier)
    if tier in ("Buy", "Sell") and flags:
        tier = toward_hold(tier)
        reasons.append(f"moderated from {plan_tier} to {tier} because of {join_names(flags)}")
    past = _past_same_ticker(text, ticker)
    lesson = _first_lesson(text)
    past_sentence = (f"No earlier decision on {ticker} has settled yet" +
                     ("; the lesson below comes from similar situations elsewhere." if lesson else "."))
    if past:
        p_date, p_rating, p_raw, p_alpha = past
        lost = was_right(p_rating, _pct_value(p_alpha)) is False
        past_sentence = (f"The last settled call on {ticker}, {p_rating} on {p_date}, returned {p_raw} with alpha "
                         f"{p_alpha}, so it was {'wrong' if lost else 'right'}.")
        if lost and direction_of_tier(p_rating) == direction_of_tier(tier) and tier != "Hold":
            before = tier
            tier = toward_hold(tier)
            reasons.append(f"moderated from {before} to {tier} because the last {p_rating} call on {ticker} lost "
                           f"({p_alpha} alpha)")
        elif lost and p_rating == "Hold" and tier == "Hold" and score.net * _pct_value(p_alpha) > 0:
            # the last Hold missed a move and today's signals lean the same way: take that side, one tier
            before = tier
            tier = "Overweight" if _pct_value(p_alpha) > 0 else "Underweight"
            reasons.append(f"moved from {before} to {tier} because the last Hold on {ticker} missed a "
                           f"{p_alpha} alpha move and the signals lean the same way")
    bulls = [s for s in signals if s.direction == "bullish"]
    bears = [s for s in signals if s.direction == "bearish"]
    summary = (
        f"{tier} on {ticker}: the analyst signals net {_signed(score.net)} ({score.bullish} bullish, {score.bearish} "
        f"bearish, {score.neutral} neutral), the Research Manager recommended {plan_tier} and the Trader "
        f"proposed {action}"
    )
    summary += f", {'; '.join(reasons)}." if reasons else "; the risk debate raised no reason to change it."
    summary += f" Decided by the {OFFLINE_LABEL}."
    thesis_parts = [
        "For: " + (join_names([f"{s.name} ({s.detail})" for s in bulls[:3]]) if bulls else "no bullish reading") + ".",
        "Against: " + (join_names([f"{s.name} ({s.detail})" for s in bears[:3]]) if bears else "no bearish reading")
        + ".",
    ]
    conservative = tag(text, "risk_debate_history")
    if "Conservative Analyst:" in conservative:
        thesis_parts.append("The risk committee's conservative voice asked for a smaller size and a tight stop; "
                            + ("the rating reflects it." if reasons else "the evidence outweighs it."))
    thesis_parts.append(past_sentence)
    citations = _settled_citations(text)
    if citations:
        thesis_parts.append(citations)
    if lesson:
        thesis_parts.append(f"Lesson applied: {lesson}")
    thesis_parts.append(f"Scoring: {SCALE_TEXT}")
    close = _last_close_in_plan(text)
    target = round(close * (1 + _TARGET_MOVE[tier]), 2) if close and tier in _TARGET_MOVE else None
    final_action = TIER_ACTION[tier]
    strength = abs(score.ratio)
    return {
        "rating": tier,
        "executive_summary": summary,
        "investment_thesis": " ".join(thesis_parts),
        "price_target": target,
        "time_horizon": _HORIZON[tier],
        "action": final_action,
        "conviction": "high" if strength >= BUY_AT else "medium" if strength >= OVERWEIGHT_AT else "low",
        "entry_price": close if final_action != "HOLD" else None,
        "stop_loss": _stop_in_plan(text) if final_action == proposal_in(tag(text, "trader_plan")) else None,
        "position_size": _SIZES[tier],
    }


def _stop_in_plan(text: str) -> float | None:
    """The Trader's stop (a BUY's stop-loss, a SELL's re-entry level), when the plan names one."""
    match = re.search(r"(?:Stop-loss:|Re-entry only above) (-?\d+(?:\.\d+)?)", tag(text, "trader_plan"))
    return float(match.group(1)) if match else None


def portfolio_text(text: str) -> str:
    d = portfolio_decision(text)
    parts = [f"**Rating**: {d['rating']}", "### Executive Summary\n\n" + d["executive_summary"],
             "### Investment Thesis\n\n" + d["investment_thesis"]]
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


def _benchmark_name(outcome: dict[str, str]) -> str:
    name = (outcome.get("benchmark") or "").strip()
    return name if name and name.lower() != "benchmark" else "its benchmark"


def reflection(text: str) -> str:
    ticker, date = instrument_of(text), date_of(text)
    o = outcome_of(text)
    rating = o["rating"] or "Hold"
    right = call_was_right(o)
    holding = o["holding"] or "the"
    signals = signals_from_prompt(text)
    side = "bullish" if rating in BULLISH_TIERS else "bearish" if rating in BEARISH_TIERS else None
    leaned = [s.name for s in signals if side and s.direction == side][:2]
    against = [s.name for s in signals if side and s.direction not in (side, "neutral")][:2]
    first = (f"The {rating} call on {ticker} of {date} was {'right' if right else 'wrong'}: over {holding} trading "
             f"days the stock returned {o['raw'] or 'an unknown amount'} with an alpha of {o['alpha'] or 'unknown'} "
             f"against {_benchmark_name(o)}.")
    if leaned:
        second = f"The decision leaned on {join_names(leaned)}."
    else:
        second = "The decision rested on a balanced set of signals."
    if right:
        third = "Keep weighting these signals the same way in comparable setups."
    elif against:
        third = f"Next time, give more weight to {join_names(against)} before taking a {rating} stance."
    elif rating == "Hold":
        third = (f"Next time, take the {'bullish' if alpha_of(o) > 0 else 'bearish'} side when the signals lean "
                 "that way instead of staying at Hold.")
    else:
        third = f"Next time, demand a second confirming signal before taking a {rating} stance."
    return " ".join([first, second, third])


def role_lessons(text: str) -> str:
    ticker = instrument_of(text)
    o = outcome_of(text)
    rating = o["rating"] or "Hold"
    alpha_text = o["alpha"] or "+0.0%"
    alpha = _pct_value(alpha_text)
    right = call_was_right(o)
    signals = signals_from_prompt(text)
    bulls = join_names([s.name for s in signals if s.direction == "bullish"][:2]) or "the bullish readings"
    bears = join_names([s.name for s in signals if s.direction == "bearish"][:2]) or "the bearish readings"
    up = alpha > 0
    action = TIER_ACTION[rating]
    lessons = {
        "bull": (f"Bullish readings such as {bulls} paid off on {ticker} ({alpha_text} alpha); press them "
                 "when they recur." if up else
                 f"Bullish readings such as {bulls} did not pay off on {ticker} ({alpha_text} alpha); "
                 "ask for confirmation before leaning on them."),
        "bear": (f"Bearish readings such as {bears} were borne out on {ticker} ({alpha_text} alpha); {PRESS_ON}"
                 if not up else
                 f"Bearish readings such as {bears} did not play out on {ticker} ({alpha_text} alpha); "
                 f"{EASE_OFF}"),
        "trader": (f"The {action} on {ticker} was right ({o['raw'] or 'n/a'} return, {alpha_text} alpha); keep the "
                   "sizing." if right else
                   f"The {action} on {ticker} was wrong ({o['raw'] or 'n/a'} return, {alpha_text} alpha); size "
                   "smaller and use tighter stops in a similar setup."),
        "research_manager": (f"Recommending {rating} on this evidence was right ({alpha_text} alpha)."
                             if right else
                             f"Recommending {rating} on this evidence was wrong ({alpha_text} alpha); weigh the "
                             "losing side's strongest point more."),
        "portfolio_manager": (f"The final {rating} on {ticker} was right ({alpha_text} alpha); similar evidence "
                              "deserves similar conviction." if right else
                              f"The final Hold on {ticker} was wrong ({alpha_text} alpha); a move of this size "
                              f"deserved taking a side: lean {'Overweight' if up else 'Underweight'} when the "
                              "signals tilt this way." if rating == "Hold" else
                              f"The final {rating} on {ticker} was wrong ({alpha_text} alpha); moderate toward "
                              "Hold when the evidence is this mixed."),
    }
    if rating == "Hold" and not right:
        lessons["trader"] = (f"Holding {ticker} was wrong ({o['raw'] or 'n/a'} return, {alpha_text} alpha): staying "
                             f"flat missed the move; {'buy' if up else 'sell'} a starter position in a similar setup.")
        lessons["research_manager"] = (f"Recommending Hold on this evidence was wrong ({alpha_text} alpha); side with "
                                       f"the {'bullish' if up else 'bearish'} case when its signals lead.")
    # one line per role that learns (the roster's roles with a memory), named as the roster names it
    lines = [f"{r.node}: {lessons[r.key]}" for r in ROSTER if r.memory]
    return "\n".join(lines)
