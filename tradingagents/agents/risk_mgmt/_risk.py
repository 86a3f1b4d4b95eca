"""The risk-debate turn the three risk analysts share (their prompts live in their own files).

Each turn is written into ``risk_debate_state`` (history prefixed ``"Aggressive Analyst: "``,
``latest_speaker`` = the roster's speaker label, which drives the rotation) and appended as a
record to the state's ``debate_turns`` (see ``researchers/_debate.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_states import empty_risk_debate_state, turn_record
from tradingagents.agents.utils.agent_utils import (
    agent_config,
    strip_speaker,
    tagged,
    team_messages,
)
from tradingagents.llm_clients.structured import message_text


def create_risk_debater(llm, config, *, key: str, prompt: str):
    """A node that adds one turn of ``key`` (aggressive|conservative|neutral) to ``risk_debate_state``."""
    cfg = agent_config(config)
    role = team.ROLES[key]
    speaker, latest = role.turn_label, role.speaker
    others = [r.key for r in team.speakers(role.debate) if r is not role]

    def risk_node(state: Mapping[str, Any]) -> dict[str, Any]:
        debate = {**empty_risk_debate_state(), **dict(state.get("risk_debate_state") or {})}
        instructions = prompt.format(header="", language="")
        stages = [
            tagged("investment_plan", state.get("investment_plan")),
            tagged("trader_plan", state.get("trader_investment_plan")),
            tagged("debate_history", debate.get("history")),
        ]
        own = [tagged(f"{other}_last_argument", debate.get(f"current_{other}_response")) for other in others]
        own.append(f"Write your next turn as the {speaker}.")
        result = llm.invoke(team_messages(state, stages, instructions, own, config=cfg))
        text = strip_speaker(message_text(result), speaker)
        argument = f"{speaker}: {text}"
        history = (debate.get("history") or "") + ("\n" if debate.get("history") else "") + argument
        own_key = f"{key}_history"
        new_state = dict(debate)
        new_state.update(
            {
                "history": history,
                own_key: (debate.get(own_key) or "") + ("\n" if debate.get(own_key) else "") + argument,
                f"current_{key}_response": argument,
                "latest_speaker": latest,
                "count": int(debate.get("count") or 0) + 1,
            }
        )
        return {"risk_debate_state": new_state, "debate_turns": [turn_record(role, new_state["count"], text)]}

    return risk_node
