"""Sentiment Analyst: social media posts and public mood (node "Sentiment Analyst", key "social").

It fetches its data itself before its one model call (``create_prefetch_analyst_node``): the posts of
the ``WINDOW_DAYS`` days to the analysis date (get_social_posts) and the company news of the last
``WINDOW_DAYS`` days (get_news), through the tools it is given (clamped to the analysis date), with
the node's RunnableConfig. Their answers go into the prompt, one ``<tool name>`` block each, and the
model writes the report without tools: one model call instead of a tool round and a second call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_utils import (
    create_data_analyst,
    data_intro,
    header_lines,
    language_instruction,
    with_data,
)

ROLE = team.ROLES["social"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

TOOLS: tuple[str, ...] = ("get_social_posts", "get_news")
"""The data tools this analyst is given (``dataflows.tools.make_tools`` names), in the order they are offered."""

WINDOW_DAYS = 7
FETCH_PLAN: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_social_posts", {"look_back_days": WINDOW_DAYS}),  # the 7 days ending on the analysis date
    ("get_news", {"window_days": WINDOW_DAYS}),  # start_date = analysis date − 7 days, end_date = it
)
"""The node's own tool calls, in order (argument rules: ``agent_utils.fetch_args``)."""

PROMPT = """You are the Sentiment Analyst on a trading team. You gauge public mood about the company from
social media posts and recent company news.
{header}

{intro}
get_social_posts holds the posts of the {days} days to the analysis date, get_news the company news of
the last {days} days. Write a detailed report: the overall tone of the posts and how it changed day by
day, the themes people discuss, and what the mood implies for traders, ending with a markdown table of
the key points. Quote posts and figures only as your data gives them. If an answer says NO_DATA_AVAILABLE
or DATA_UNAVAILABLE, say which data is missing and do not invent it.
{language}"""


def sentiment_system_prompt(state: Mapping[str, Any], data: str, config: Mapping[str, Any], shape: str = "prefetch") -> str:
    """The prompt with ``data`` at its end, after the instructions and the language sentence: the
    fetched blocks (``agent_utils.data_blocks``) in the prefetch shape, the data plan
    (``agent_utils.plan_block``) in the tools shape."""
    return with_data(PROMPT.format(intro=data_intro(shape), header=header_lines(state), days=WINDOW_DAYS, language=language_instruction(config)), data)


def create_social_media_analyst(llm, tools, config=None):
    """Node "Sentiment Analyst": fetches its posts and news, then one model call writes ``sentiment_report``."""
    return create_data_analyst(
        llm, tools, name=NAME, report_key=REPORT_KEY, plan=FETCH_PLAN, system_prompt=sentiment_system_prompt,
        config=config,
    )
