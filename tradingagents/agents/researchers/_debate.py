"""The bull/bear debate turn both researchers share (their prompts live in their own files).

Each turn is written into ``investment_debate_state`` (history prefixed ``"Bull Analyst: "``) and
appended, as a record {debate, role, speaker, round, turn, text}, to the state's ``debate_turns``
(checkpointed with the state, so a resumed run still has every turn; the run events and the saved
meta are read from it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_states import empty_invest_debate_state, turn_record
from tradingagents.agents.utils.agent_utils import (
    agent_config,
    format_memories,
    lessons_used,
    recall,
    situation_from_reports,
    strip_speaker,
    tagged,
    team_messages,
)
from tradingagents.llm_clients.structured import message_text


def create_debater(llm, memory, config, *, role: team.Role, prompt: str):
    """A node for ``role`` (bull or bear) that adds one turn prefixed ``"<label>:"`` to the debate."""
    cfg = agent_config(config)
    speaker = role.turn_label
    own_key = f"{role.key}_history"
    opponent = next(r for r in team.speakers(role.debate) if r is not role).turn_label

    def debater_node(state: Mapping[str, Any]) -> dict[str, Any]:
        debate = {**empty_invest_debate_state(), **dict(state.get("investment_debate_state") or {})}
        situation = situation_from_reports(state)
        memories = recall(memory, state, situation)
        last = str(debate.get("current_response") or "")
        opponent_last = last if last.startswith(opponent) else ""
        instructions = prompt.format(header="", language="")
        messages = team_messages(
            state,
            [tagged("debate_history", debate.get("history"))],
            instructions,
            [
                tagged("opponent_last_argument", opponent_last),
                tagged("past_lessons", format_memories(memories)),
                f"Write your next turn as the {speaker}.",
            ],
            config=cfg,
        )
        result = llm.invoke(messages)
        text = strip_speaker(message_text(result), speaker)
        argument = f"{speaker}: {text}"
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
        return {"investment_debate_state": new_state,
                "debate_turns": [turn_record(role, new_state["count"], text)], **lessons_used(memory, memories)}

    return debater_node
