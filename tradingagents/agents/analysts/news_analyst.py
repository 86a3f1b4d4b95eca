"""News Analyst: company news and the macro backdrop (node "News Analyst")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_utils import create_analyst_node, header_lines, language_instruction

ROLE = team.ROLES["news"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

PROMPT = """You are the News Analyst on a trading team. You study the news of the past week that matters
for trading the instrument: company news and global macroeconomic headlines.
{header}

Tools you can call: {tools}.
Call get_news for the company's news of the last week and get_global_news for the macro backdrop, both
up to the analysis date. Then write a detailed report: the events, how markets may read them, the
risks and catalysts they create, ending with a markdown table of the key points. Cite headlines as the
tools returned them. If a tool answers NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is
missing and do not invent news.
{language}"""


def news_system_prompt(state: Mapping[str, Any], tool_names: Sequence[str], config: Mapping[str, Any]) -> str:
    return PROMPT.format(
        header=header_lines(state),
        tools=", ".join(tool_names) or "none",
        language=language_instruction(config),
    ).strip()


def create_news_analyst(llm, tools, config=None):
    """Node "News Analyst": loops with its tools, then writes ``news_report``."""
    return create_analyst_node(
        llm, tools, name=NAME, report_key=REPORT_KEY, system_prompt=news_system_prompt, config=config
    )
