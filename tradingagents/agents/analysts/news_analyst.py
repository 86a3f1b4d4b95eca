"""News Analyst: company news and the macro backdrop (node "News Analyst").

It fetches its data itself before its one model call (``create_prefetch_analyst_node``): the company
news of the last ``WINDOW_DAYS`` days (get_news) and the ``GLOBAL_LIMIT`` global macro headlines of the
last ``WINDOW_DAYS`` days (get_global_news), both to the analysis date, through the tools it is given
with the node's RunnableConfig. Their answers go into the prompt, one ``<tool name>`` block each, and
the model writes the report without tools: one model call instead of a tool round and a second call.
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

ROLE = team.ROLES["news"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

TOOLS: tuple[str, ...] = ("get_news", "get_global_news")
"""The data tools this analyst is given (``dataflows.tools.make_tools`` names), in the order they are offered."""

WINDOW_DAYS = 7
GLOBAL_LIMIT = 10
FETCH_PLAN: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_news", {"window_days": WINDOW_DAYS}),  # start_date = analysis date − 7 days, end_date = it
    ("get_global_news", {"look_back_days": WINDOW_DAYS, "limit": GLOBAL_LIMIT}),  # the 7 days to it
)
"""The node's own tool calls, in order (argument rules: ``agent_utils.fetch_args``)."""

PROMPT = """You are the News Analyst on a trading team. You study the news of the past week that matters
for trading the instrument: company news and global macroeconomic headlines.
{header}

{intro}
get_news holds the company's news of the last {days} days, get_global_news up to {limit} global
macroeconomic headlines of the last {days} days, both up to the analysis date. Write a detailed
report: the events, how markets may read them, the risks and catalysts they create, ending with a
markdown table of the key points. Cite headlines as your data gives them. If an answer says
NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is missing and do not invent news.
{language}"""


def news_system_prompt(state: Mapping[str, Any], data: str, config: Mapping[str, Any], shape: str = "prefetch") -> str:
    """The prompt with ``data`` at its end, after the instructions and the language sentence: the
    fetched blocks (``agent_utils.data_blocks``) in the prefetch shape, the data plan
    (``agent_utils.plan_block``) in the tools shape."""
    instructions = PROMPT.format(intro=data_intro(shape), header=header_lines(state), days=WINDOW_DAYS, limit=GLOBAL_LIMIT,
                                 language=language_instruction(config))
    return with_data(instructions, data)


def create_news_analyst(llm, tools, config=None):
    """Node "News Analyst": fetches the company and global news, then one model call writes ``news_report``."""
    return create_data_analyst(
        llm, tools, name=NAME, report_key=REPORT_KEY, plan=FETCH_PLAN, system_prompt=news_system_prompt,
        config=config,
    )
