"""Fundamentals Analyst: valuation, growth, profitability, balance sheet (node "Fundamentals Analyst").

It fetches its data itself before its one model call (``create_prefetch_analyst_node``): the company
fundamentals (get_fundamentals) and the latest ``FREQ`` income statement, balance sheet and cash flow
statement, all as of the analysis date, through the tools it is given with the node's RunnableConfig.
Their answers go into the prompt, one ``<tool name>`` block each, and the model writes the report
without tools: one model call instead of a tool round and a second call.
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

ROLE = team.ROLES["fundamentals"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

TOOLS: tuple[str, ...] = ("get_fundamentals", "get_balance_sheet", "get_cashflow", "get_income_statement")
"""The data tools this analyst is given (``dataflows.tools.make_tools`` names), in the order they are offered."""

FREQ = "quarterly"
FETCH_PLAN: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_fundamentals", {}),  # as of the analysis date
    ("get_income_statement", {"freq": FREQ}),  # the statements published by the analysis date
    ("get_balance_sheet", {"freq": FREQ}),
    ("get_cashflow", {"freq": FREQ}),
)
"""The node's own tool calls, in order (argument rules: ``agent_utils.fetch_args``)."""

PROMPT = """You are the Fundamentals Analyst on a trading team. You study the company's fundamentals:
valuation, growth, profitability, cash flow and balance sheet.
{header}

{intro}
get_fundamentals holds the company's key figures, get_income_statement, get_balance_sheet and
get_cashflow its latest {freq} statements, all as of the analysis date. Write a detailed report: valuation
(P/E, P/B), growth, margins, leverage and cash generation, and what they imply for the stock, ending
with a markdown table of the key points. Quote only figures your data gives. If an answer says
NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is missing and do not estimate it.
{language}"""


def fundamentals_system_prompt(state: Mapping[str, Any], data: str, config: Mapping[str, Any], shape: str = "prefetch") -> str:
    """The prompt with ``data`` at its end, after the instructions and the language sentence: the
    fetched blocks (``agent_utils.data_blocks``) in the prefetch shape, the data plan
    (``agent_utils.plan_block``) in the tools shape."""
    return with_data(PROMPT.format(intro=data_intro(shape), header=header_lines(state), freq=FREQ, language=language_instruction(config)), data)


def create_fundamentals_analyst(llm, tools, config=None):
    """Node "Fundamentals Analyst": fetches its fundamentals and statements, then one model call writes
    ``fundamentals_report``."""
    return create_data_analyst(
        llm, tools, name=NAME, report_key=REPORT_KEY, plan=FETCH_PLAN, system_prompt=fundamentals_system_prompt,
        config=config,
    )
