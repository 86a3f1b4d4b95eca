"""The decision card: what a committee reads first, from the Portfolio Manager's decision and the Trader's proposal.

``decision_card(state, holding_days)`` reads the final state as saved (so a run saved before the
card existed gets one too): the Portfolio Manager's rendered decision (``**Rating**``,
``**Action**``, ``**Conviction**``, ``**Entry**``, ``**Price target**``, ``**Stop-loss**``,
``**Position size**``, ``**Time horizon**`` lines, written by ``render_decision`` from the structured
``PortfolioDecision``), and, for what the decision leaves out, the Trader's proposal (its
``FINAL TRANSACTION PROPOSAL``, ``Entry: near …``, ``Stop-loss: …``, ``Action: X — size``). Each
field is None when neither says it: the card never invents a level.

``scored_horizon`` is the horizon the settlement actually measures (``holding_days`` trading days
from the decision date), shown beside the stated one, because a "3-6 months" view is scored over
five trading days. ``reward_risk`` is the plan's reward over its risk from the entry (None for a
Hold, or when a level is missing or on the wrong side). The engine stores the card in the run's meta (``meta["decision"]``), so the
``run_finished`` event's record carries it to the app.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from tradingagents.i18n import N_, Translator, pgettext, rating_label
from tradingagents.rating import RATINGS_5_TIER, normalize_rating, parse_rating

FIELDS = ("rating", "action", "conviction", "entry_price", "price_target", "stop_loss", "reward_risk",
          "position_size", "time_horizon", "scored_horizon")
LABELS = {"rating": N_("Rating"), "action": N_("Action"), "conviction": N_("Conviction"), "entry_price": N_("Entry"),
          "price_target": N_("Price target"), "stop_loss": pgettext("card", "Stop"), "reward_risk": N_("Reward:risk"), "position_size": N_("Position size"),
          "time_horizon": N_("Stated horizon"), "scored_horizon": N_("Scored over")}
LABEL_CONTEXTS = {"stop_loss": "card"}
"""The card's labels in English (marked for the catalogue: show one with ``t(LABELS[key])``, or
``t.p(LABEL_CONTEXTS[key], …)`` where the word means something else elsewhere: "Stop" is the stop-loss
here, a button that stops a run in the app)."""
REFERENCE_LABEL = N_("Reference price")
"""The ``entry_price`` field's label for a call that makes no trade (a Hold, or no action): the price the
call is measured from, not an entry (the memory log's 参考价)."""

_NUM = r"(-?\d[\d,]*(?:\.\d+)?)"


def _line(text: str, label: str) -> str | None:
    match = re.search(rf"^\s*\*\*{re.escape(label)}\*\*\s*:\s*(.+?)\s*$", text, re.M)
    return match.group(1).strip() if match else None


def _number(text: str | None) -> float | None:
    if not text:
        return None
    match = re.search(_NUM, text)
    if not match:
        return None
    try:
        value = float(match.group(1).replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _trader(plan: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    proposal = re.findall(r"FINAL TRANSACTION PROPOSAL\s*:\s*\**\s*(BUY|HOLD|SELL)\b", plan, re.I)
    if proposal:
        out["action"] = proposal[-1].upper()
    entry = re.search(r"^\s*[-*]?\s*Entry:\s*(?:near\s*)?" + _NUM, plan, re.M | re.I)
    if entry:
        out["entry_price"] = _number(entry.group(1))
    stop = re.search(r"(?:Stop-loss|Stop loss|Stop):\s*" + _NUM, plan, re.I)
    if stop:
        out["stop_loss"] = _number(stop.group(1))
    size = re.search(r"^\s*[-*]?\s*Action:\s*(?:BUY|HOLD|SELL)\s*[—–-]\s*(.+?)\.?\s*$", plan, re.M | re.I)
    if size:
        out["position_size"] = size.group(1).strip()
    return out


def label_of(key: str, action: Any = None, rating: Any = None) -> str:
    """The English label (a catalogue id) of card field ``key`` for a call with ``action`` (else, when the
    run states none, its ``rating``): the price of a call that trades nothing (a Hold) is its reference
    price, not an entry."""
    side = str(action or "").upper()
    if key == "entry_price" and (side == "HOLD" or (not side and normalize_rating(str(rating or "")) == "Hold")):
        return REFERENCE_LABEL
    return LABELS[key]


def with_reference_price(card: Mapping[str, Any], close: float | None) -> dict[str, Any]:
    """``card`` with its price filled, for a call that trades nothing and names no price, by ``close``: the
    instrument's last close on or before the decision date, the price the call is measured from (the memory
    log's reference price). A trade's entry is never filled: only the run can say where it would enter."""
    out = dict(card)
    if wants_reference_price(out) and close is not None and math.isfinite(close) and close > 0:
        out["entry_price"] = round(float(close), 4)
    return out


def wants_reference_price(card: Mapping[str, Any]) -> bool:
    """Whether ``card`` is a call that trades nothing and names no price (``with_reference_price`` fills it)."""
    return (card.get("entry_price") is None
            and label_of("entry_price", card.get("action"), card.get("rating")) == REFERENCE_LABEL)


def reward_risk(action: Any, entry: Any, target: Any, stop: Any) -> float | None:
    """The plan's reward:risk (distance to the target over distance to the stop, from the entry) for a
    BUY or a SELL whose target and stop lie on the right sides of the entry; None otherwise."""
    side = {"BUY": 1, "SELL": -1}.get(str(action or "").upper())
    try:
        entry, target, stop = float(entry), float(target), float(stop)
    except (TypeError, ValueError):
        return None
    if not side or not all(math.isfinite(v) for v in (entry, target, stop)):
        return None
    reward, risk = (target - entry) * side, (entry - stop) * side
    return round(reward / risk, 2) if reward > 0 and risk > 0 else None


def scored_horizon(holding_days: Any) -> str | None:
    try:
        days = int(holding_days)
    except (TypeError, ValueError):
        return None
    return f"{days} trading day{'s' if days != 1 else ''}" if days > 0 else None


def decision_card(state: Mapping[str, Any], holding_days: Any = None) -> dict[str, Any]:
    """The card's fields (see ``FIELDS``) from a final state; None where the run does not say."""
    decision = str(state.get("final_trade_decision") or "")
    plan = str(state.get("trader_investment_plan") or "")
    trader = _trader(plan)
    action = (_line(decision, "Action") or "").upper() or None
    if action not in ("BUY", "HOLD", "SELL"):
        action = trader.get("action")
    conviction = (_line(decision, "Conviction") or "").lower() or None
    card: dict[str, Any] = {
        "rating": state.get("final_rating") or parse_rating(decision) or None,
        "action": action,
        "conviction": conviction if conviction in ("low", "medium", "high") else None,
        "entry_price": _number(_line(decision, "Entry")),
        "price_target": _number(_line(decision, "Price target")),
        "stop_loss": _number(_line(decision, "Stop-loss")),
        "position_size": _line(decision, "Position size"),
        "time_horizon": _line(decision, "Time horizon"),
        "scored_horizon": scored_horizon(holding_days),
    }
    # the Trader's levels fill what the decision leaves out, when the decision keeps the Trader's action
    if card["action"] == trader.get("action"):
        for key in ("entry_price", "stop_loss", "position_size"):
            if card[key] is None:
                card[key] = trader.get(key)
    card["reward_risk"] = reward_risk(card["action"], card["entry_price"], card["price_target"], card["stop_loss"])
    return {key: card[key] for key in FIELDS}



# ---------------------------------------------------------------------------- the grammar, shown
GRAMMAR_LABELS = {
    "Rating": N_("Rating"), "Recommendation": N_("Recommendation"), "Action": N_("Action"),
    "Conviction": N_("Conviction"), "Entry": N_("Entry"), "Price target": N_("Price target"),
    "Stop-loss": N_("Stop-loss"), "Position size": N_("Position size"), "Time horizon": N_("Time horizon"),
    "FINAL TRANSACTION PROPOSAL": N_("FINAL TRANSACTION PROPOSAL"),
}
"""The labels of the grammar lines a stored text keeps in English (the specification's format, read by
``decision_card`` and ``rating.parse_rating``), marked for the catalogue so that ``display_text`` shows them."""
DISPLAY_ACTIONS = {"BUY": N_("BUY"), "HOLD": N_("HOLD"), "SELL": N_("SELL")}
DISPLAY_CONVICTIONS = {"low": N_("Low"), "medium": N_("Medium"), "high": N_("High")}

_GRAMMAR_LINE_RE = re.compile(
    r"^(?P<lead>[ \t]*)\*\*(?P<label>" + "|".join(re.escape(k) for k in GRAMMAR_LABELS if k != "FINAL TRANSACTION PROPOSAL")
    + r")\*\*(?P<colon>[ \t]*:[ \t]*)(?P<value>[^\n]*?)(?P<tail>[ \t]*)$", re.M)
_PROPOSAL_LINE_RE = re.compile(
    r"^(?P<lead>[ \t]*)FINAL TRANSACTION PROPOSAL(?P<colon>[ \t]*:[ \t]*)(?P<stars>\**)[ \t]*(?P<value>BUY|HOLD|SELL)"
    r"(?P<tail>\**[ \t]*)$", re.M | re.I)


_TIER_LEAD_RE = re.compile(r"^(\W*)(" + "|".join(RATINGS_5_TIER) + r")\b", re.I)


def _shown_value(label: str, value: str, t: Translator) -> str:
    """A grammar line's value in ``t``'s language: a rating, an action or a conviction translated; any
    other value (a price, a size or horizon already written in the text's language) as it is."""
    word = value.strip().strip("*").strip()
    if label in ("Rating", "Recommendation"):
        lead = _TIER_LEAD_RE.match(value)  # "Hold", "**Buy**", "Overweight (high conviction)"
        if lead:
            tier = normalize_rating(lead.group(2)) or lead.group(2)
            return value[:lead.start(2)] + rating_label(tier, t.lang) + value[lead.end(2):]
        return value
    if label == "Action" and word.upper() in DISPLAY_ACTIONS:
        return value.replace(word, t(DISPLAY_ACTIONS[word.upper()]), 1)
    if label == "Conviction" and word.lower() in DISPLAY_CONVICTIONS:
        return value.replace(word, t(DISPLAY_CONVICTIONS[word.lower()]), 1)
    return shown_plan_value(word, t) if label in ("Position size", "Time horizon") and word else value


_TRADING_DAYS_RE = re.compile(r"^(\d+) trading days?$")


def shown_plan_value(value: str, t: Translator) -> str:
    """A position size or horizon in ``t``'s language when the engine wrote it from its fixed phrases (the
    offline engine's sizes, "5 trading days"); a model's own words stay as written."""
    text = value.strip()
    days = _TRADING_DAYS_RE.match(text)
    if days:
        return t.n("{n} trading day", "{n} trading days", int(days.group(1)))
    return t(text) if t.has(text) else value


def display_text(text: str, t: Translator | None = None) -> str:
    """``text`` (a stored report, plan, proposal or decision) for showing in ``t``'s language: only its
    grammar lines (``**Rating**: Hold``, ``**Recommendation**``, ``**Action**``, ``**Conviction**``,
    ``**Entry**``/``**Price target**``/``**Stop-loss**``/``**Position size**``/``**Time horizon**``,
    ``FINAL TRANSACTION PROPOSAL: **HOLD**``) are rewritten, their labels translated and their canonical
    values shown translated (评级：持有); every other line is untouched. The stored text keeps the English
    grammar. English (or no translator): ``text`` itself."""
    if t is None or t.lang == "en" or not text:
        return text

    def line(match: re.Match[str]) -> str:
        label = match.group("label")
        return (match.group("lead") + "**" + t(GRAMMAR_LABELS[label]) + "**" + t(": ")
                + _shown_value(label, match.group("value"), t) + match.group("tail"))

    def proposal(match: re.Match[str]) -> str:
        stars = match.group("stars")
        return (match.group("lead") + t(GRAMMAR_LABELS["FINAL TRANSACTION PROPOSAL"]) + t(": ") + stars
                + t(DISPLAY_ACTIONS[match.group("value").upper()]) + match.group("tail"))

    return _PROPOSAL_LINE_RE.sub(proposal, _GRAMMAR_LINE_RE.sub(line, text))


__all__ = ["DISPLAY_ACTIONS", "DISPLAY_CONVICTIONS", "FIELDS", "GRAMMAR_LABELS", "LABELS", "LABEL_CONTEXTS",
           "REFERENCE_LABEL", "decision_card", "label_of", "shown_plan_value", "display_text", "reward_risk", "scored_horizon"]
