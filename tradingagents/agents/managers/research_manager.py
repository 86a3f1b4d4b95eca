"""Research Manager: judges the bull/bear debate and writes the investment plan (deep model)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tradingagents.agents.utils.agent_states import empty_invest_debate_state
from tradingagents.agents.utils.agent_utils import (
    agent_config,
    format_memories,
    lessons_used,
    pm_notes_block,
    recall,
    tagged,
    team_messages,
)
from tradingagents.llm_clients.structured import message_text
from tradingagents.rating import RATINGS_5_TIER, parse_rating

PROMPT = """You are the Research Manager of a trading team: you judge the debate between the Bull and Bear
Researchers and turn it into an investment plan for the Trader.

Weigh the strongest points of each side against the analyst reports; do not default to Hold just
because both sides have points: commit when the evidence leans one way. Use the lessons from similar
past situations (in <past_lessons>). Write: your recommendation on the five-tier scale (Buy,
Overweight, Hold, Underweight, Sell) on its own line as `**Recommendation**: <tier>`, the rationale
(which arguments won and why), and the strategic actions for the Trader (position, entry, risk
controls).
{language}"""

_RECOMMENDATION_RE = re.compile(r"\*\*Recommendation\*\*\s*:\s*\**\s*(" + "|".join(RATINGS_5_TIER) + r")\b")


def ensure_recommendation(text: str) -> tuple[str, str]:
    """(plan, tier): the plan always carries a `**Recommendation**: <tier>` line on the 5-tier scale."""
    body = text.strip()
    match = _RECOMMENDATION_RE.search(body)
    if match:
        return body, match.group(1)
    tier = parse_rating(body) or "Hold"
    return f"**Recommendation**: {tier}\n\n{body}", tier


def create_research_manager(llm, memory, config=None):
    """Node "Research Manager": writes ``investment_plan`` and the debate's ``judge_decision``."""
    cfg = agent_config(config)

    def research_manager_node(state: Mapping[str, Any]) -> dict[str, Any]:
        debate = {**empty_invest_debate_state(), **dict(state.get("investment_debate_state") or {})}
        memories = recall(memory, state)
        instructions = PROMPT.format(header="", language="")
        messages = team_messages(
            state,
            [tagged("debate_history", debate.get("history"))],
            instructions,
            [
                tagged("past_lessons", format_memories(memories)),
                *pm_notes_block(state, "research_manager"),
                "Judge the debate and write the investment plan.",
            ],
            config=cfg,
        )
        result = llm.invoke(messages)
        plan, _tier = ensure_recommendation(message_text(result))
        new_debate = dict(debate)
        new_debate["judge_decision"] = plan
        return {"investment_plan": plan, "investment_debate_state": new_debate, **lessons_used(memory, memories)}

    return research_manager_node
