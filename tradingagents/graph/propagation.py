"""Initial state and graph invocation arguments (docs/ARCHITECTURE.md, "State")."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage

from tradingagents import team
from tradingagents.agents.utils.agent_states import empty_invest_debate_state, empty_risk_debate_state


class Propagator:
    def __init__(self, max_recur_limit: int = 100, stream_mode: str | list[str] = "values"):
        self.max_recur_limit = max_recur_limit
        self.stream_mode = stream_mode

    def create_initial_state(
        self,
        company_name: str,
        trade_date: str,
        asset_type: str = "stock",
        past_context: str = "",
        instrument_context: str = "",
        past_decisions: list[dict[str, Any]] | None = None,
        pm_notes: list[dict[str, Any]] | None = None,
        portfolio_context: str = "",
    ) -> dict[str, Any]:
        """Every key of AgentState and of both debate states, so nothing downstream KeyErrors."""
        return {
            "messages": [HumanMessage(content=f"Analyse {company_name} as of {trade_date}.")],
            "company_of_interest": company_name,
            "trade_date": str(trade_date),
            "asset_type": asset_type,
            "sender": "",
            "instrument_context": instrument_context,
            "past_context": past_context,
            "portfolio_context": portfolio_context,  # the desk's book as the Portfolio Manager reads it ("" : none)
            "memory_used": {"past_decisions": list(past_decisions or []), "lessons": {}},
            **dict.fromkeys(team.REPORT_KEYS, ""),  # the roster's analysts' reports
            "investment_debate_state": empty_invest_debate_state(),
            "investment_plan": "",
            "trader_investment_plan": "",
            "risk_debate_state": empty_risk_debate_state(),
            "final_trade_decision": "",
            "final_rating": "",
            "debate_turns": [],
            "pm_notes": [dict(n) for n in pm_notes or []],
            "analyst_data_notes": [],
            "tool_answers": [],
        }

    def get_graph_args(self, callbacks: list | None = None, **configurable: Any) -> dict[str, Any]:
        config: dict[str, Any] = {"recursion_limit": self.max_recur_limit}
        if callbacks:
            config["callbacks"] = callbacks
        if configurable:
            config["configurable"] = dict(configurable)
        return {"stream_mode": self.stream_mode, "config": config}
