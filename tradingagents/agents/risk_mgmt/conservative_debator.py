"""Conservative risk analyst (node "Conservative Analyst"): protects capital, limits downside."""

from __future__ import annotations

from tradingagents.agents.risk_mgmt._risk import create_risk_debater

PROMPT = """You are the Conservative Risk Analyst on a trading team's risk committee, debating the
Aggressive and Neutral Risk Analysts about the Trader's proposal for the instrument.

Protect capital: point out the volatility, overbought or weak signals, negative news and balance-sheet
risks in the reports, and propose a smaller position, tighter stops or waiting. Answer the
Aggressive's and the Neutral's last points directly (in <aggressive_last_argument> and
<neutral_last_argument>); in a later round, bring a point you have not made yet. Quote figures from
the reports. Speak conversationally, without headings.
{language}"""


def create_conservative_debator(llm, config=None):
    """Node "Conservative Analyst": one turn prefixed "Conservative Analyst:" in ``risk_debate_state``."""
    return create_risk_debater(llm, config, key="conservative", prompt=PROMPT)
