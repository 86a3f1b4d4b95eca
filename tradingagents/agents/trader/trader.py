"""Trader: turns the investment plan, the reports and recent prices into a transaction proposal."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_utils import (
    agent_config,
    format_memories,
    lessons_used,
    recall,
    scoring_block,
    tagged,
    team_messages,
)
from tradingagents.llm_clients.structured import message_text
from tradingagents.rating import direction, parse_rating

NAME = team.ROLES["trader"].node
RECENT_SESSIONS = 20  # a month of closes: the support and resistance the plan's levels stand on

PROMPT = """You are the Trader of a trading team. You turn the Research Manager's investment plan into a
concrete transaction proposal for the instrument.

Read the investment plan, the analyst reports and the recent closing prices. Decide whether to BUY,
HOLD or SELL, and give the position size, entry, target, stop-loss (from the instrument's volatility and
its support and resistance, with a reward:risk of at least 1.5) and what would change your mind, over
the horizon the call is scored on (in <scoring>). Use the
lessons from similar past situations (in <past_lessons>). End your answer with the line
`FINAL TRANSACTION PROPOSAL: **BUY**`, `FINAL TRANSACTION PROPOSAL: **HOLD**` or
`FINAL TRANSACTION PROPOSAL: **SELL**`.
{language}"""

_PROPOSAL_RE = re.compile(r"FINAL TRANSACTION PROPOSAL\s*:\s*\**\s*(BUY|HOLD|SELL)\b\**", re.IGNORECASE)
_ACTION_BY_DIRECTION = {1: "BUY", 0: "HOLD", -1: "SELL"}  # a tier's direction (rating.direction) → action


def recent_prices(config: Mapping[str, Any], ticker: str, trade_date: str, sessions: int = RECENT_SESSIONS) -> str:
    """The last ``sessions`` closes up to the analysis date, one ``YYYY-MM-DD: close`` per line.

    Never reads past ``trade_date``; a provider that fails gives a line saying so (the Trader then
    works from the reports).
    """
    try:
        from tradingagents.dataflows.interface import get_provider

        end = _dt.date.fromisoformat(trade_date)
        start = end - _dt.timedelta(days=max(14, sessions * 3))
        frame = get_provider(config).ohlcv(ticker, start.isoformat(), end.isoformat())
        if frame is None or len(frame) == 0:
            return f"NO_DATA_AVAILABLE: no closing prices for {ticker} up to {trade_date}."
        if "Date" in getattr(frame, "columns", ()):
            frame = frame.set_index("Date")
        closes = frame["Close"].tail(sessions)
        lines = []
        for when, close in closes.items():
            day = str(when)[:10]
            if day > trade_date:
                continue
            lines.append(f"{day}: {float(close):.2f}")
        if not lines:
            return f"NO_DATA_AVAILABLE: no closing prices for {ticker} up to {trade_date}."
        return "\n".join(lines)
    except Exception as exc:  # noqa: BLE001 - any provider failure becomes a visible note, not a crash
        return f"DATA_UNAVAILABLE: recent prices could not be read ({type(exc).__name__}: {exc})."


def ensure_proposal(text: str) -> tuple[str, str]:
    """(plan, action): the plan always ends with ``FINAL TRANSACTION PROPOSAL: **BUY|HOLD|SELL**``."""
    body = text.strip()
    matches = _PROPOSAL_RE.findall(body)
    if matches:
        action = matches[-1].upper()
    else:
        action = _ACTION_BY_DIRECTION[direction(parse_rating(body))]
    final_line = f"FINAL TRANSACTION PROPOSAL: **{action}**"
    if not body.rstrip("*. \n").upper().endswith(f"FINAL TRANSACTION PROPOSAL: **{action}".upper()):
        body = f"{body}\n\n{final_line}" if body else final_line
    return body, action


def create_trader(llm, memory, config=None):
    """Node "Trader": writes ``trader_investment_plan`` ending with the transaction proposal."""
    cfg = agent_config(config)

    def trader_node(state: Mapping[str, Any]) -> dict[str, Any]:
        ticker = str(state.get("company_of_interest") or "")
        date = str(state.get("trade_date") or "")
        memories = recall(memory, state)
        instructions = PROMPT.format(header="", language="")
        messages = team_messages(
            state,
            [tagged("investment_plan", state.get("investment_plan"))],
            instructions,
            [
                tagged("recent_prices", recent_prices(cfg, ticker, date)),
                tagged("past_lessons", format_memories(memories)),
                scoring_block(cfg),
                "Write your transaction proposal.",
            ],
            config=cfg,
        )
        result = llm.invoke(messages)
        plan, _action = ensure_proposal(message_text(result))
        return {"trader_investment_plan": plan, "sender": NAME, **lessons_used(memory, memories)}

    return trader_node
