"""Sentiment Analyst: social media posts and public mood (node "Sentiment Analyst", key "social")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_utils import create_analyst_node, header_lines, language_instruction

ROLE = team.ROLES["social"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

PROMPT = """You are the Sentiment Analyst on a trading team. You gauge public mood about the company from
social media posts and recent company news.
{header}

Tools you can call: {tools}.
Call get_social_posts for the posts up to the analysis date and get_news for the company news of the
last week. Then write a detailed report: the overall tone of the posts and how it changed day by day,
the themes people discuss, and what the mood implies for traders, ending with a markdown table of the
key points. Quote posts and figures only as the tools returned them. If a tool answers
NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is missing and do not invent it.
{language}"""


def sentiment_system_prompt(state: Mapping[str, Any], tool_names: Sequence[str], config: Mapping[str, Any]) -> str:
    return PROMPT.format(
        header=header_lines(state),
        tools=", ".join(tool_names) or "none",
        language=language_instruction(config),
    ).strip()


def create_social_media_analyst(llm, tools, config=None):
    """Node "Sentiment Analyst": loops with its tools, then writes ``sentiment_report``."""
    return create_analyst_node(
        llm, tools, name=NAME, report_key=REPORT_KEY, system_prompt=sentiment_system_prompt, config=config
    )
