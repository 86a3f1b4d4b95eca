"""The bull/bear debate turn both researchers share (their prompts live in their own files)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage

from tradingagents.agents.utils.agent_states import empty_invest_debate_state
from tradingagents.agents.utils.agent_utils import (
    agent_config,
    format_memories,
    header_lines,
    language_instruction,
    message_text,
    recall,
    reports_block,
    situation_from_reports,
    strip_speaker,
    tagged,
)


def create_debater(llm, memory, config, *, speaker: str, own_key: str, opponent: str, prompt: str):
    """A node that adds one turn prefixed ``"<speaker>:"`` to ``investment_debate_state``."""
    cfg = agent_config(config)

    def debater_node(state: Mapping[str, Any]) -> dict[str, Any]:
        debate = {**empty_invest_debate_state(), **dict(state.get("investment_debate_state") or {})}
        situation = situation_from_reports(state)
        memories = recall(memory, state, situation)
        last = str(debate.get("current_response") or "")
        opponent_last = last if last.startswith(opponent) else ""
        system = prompt.format(header=header_lines(state), language=language_instruction(cfg)).strip()
        human = "\n\n".join(
            [
                header_lines(state),
                reports_block(state),
                tagged("debate_history", debate.get("history")),
                tagged("opponent_last_argument", opponent_last),
                tagged("past_lessons", format_memories(memories)),
                f"Write your next turn as the {speaker}.",
            ]
        )
        result = llm.invoke([SystemMessage(content=system), HumanMessage(content=human)])
        argument = f"{speaker}: {strip_speaker(message_text(result), speaker)}"
        history = (debate.get("history") or "") + ("\n" if debate.get("history") else "") + argument
        own = (debate.get(own_key) or "") + ("\n" if debate.get(own_key) else "") + argument
        new_state = {
            "history": history,
            "bull_history": debate.get("bull_history") or "",
            "bear_history": debate.get("bear_history") or "",
            "current_response": argument,
            "judge_decision": debate.get("judge_decision") or "",
            "count": int(debate.get("count") or 0) + 1,
        }
        new_state[own_key] = own
        return {"investment_debate_state": new_state}

    return debater_node
