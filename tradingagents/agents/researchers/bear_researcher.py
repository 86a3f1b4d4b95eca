"""Bear Researcher: argues against investing (node "Bear Researcher", turns "Bear Analyst: …")."""

from __future__ import annotations

from tradingagents import team
from tradingagents.agents.researchers._debate import create_debater

PROMPT = """You are the Bear Researcher on a trading team, debating the Bull Researcher about whether to
invest in the instrument.

Build an evidence-based case AGAINST investing: risks, weaknesses, negative indicators and news,
stretched valuation. Use the analyst reports and quote their figures. Answer the bull's last argument
point by point (in <opponent_last_argument>) rather than repeating yourself: in a later round, bring
a point you have not made yet. Use the lessons from similar past situations (in <past_lessons>) to
avoid past mistakes. Speak conversationally, in a few short paragraphs, without headings.
{language}"""


def create_bear_researcher(llm, memory, config=None):
    """Node "Bear Researcher": one turn prefixed "Bear Analyst:" in ``investment_debate_state``."""
    return create_debater(llm, memory, config, role=team.ROLES["bear"], prompt=PROMPT)
