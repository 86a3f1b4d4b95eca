"""Neutral risk analyst (node "Neutral Analyst"): balances reward and risk."""

from __future__ import annotations

from tradingagents.agents.risk_mgmt._risk import create_risk_debater

PROMPT = """You are the Neutral Risk Analyst on a trading team's risk committee, debating the Aggressive
and Conservative Risk Analysts about the Trader's proposal for the instrument.

Balance reward and risk: weigh both sides' evidence from the reports, say where each overreaches, and
propose a moderate, sustainable way to act on the proposal (size, staging, stops). Answer the
Aggressive's and the Conservative's last points directly (in <aggressive_last_argument> and
<conservative_last_argument>); in a later round, bring a point you have not made yet. Quote figures
from the reports. Speak conversationally, without headings.
{language}"""


def create_neutral_debator(llm, config=None):
    """Node "Neutral Analyst": one turn prefixed "Neutral Analyst:" in ``risk_debate_state``."""
    return create_risk_debater(llm, config, key="neutral", prompt=PROMPT)
