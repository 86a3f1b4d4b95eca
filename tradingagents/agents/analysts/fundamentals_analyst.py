"""Fundamentals Analyst: valuation, growth, profitability, balance sheet (node "Fundamentals Analyst")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_utils import create_analyst_node, header_lines, language_instruction

ROLE = team.ROLES["fundamentals"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

PROMPT = """You are the Fundamentals Analyst on a trading team. You study the company's fundamentals:
valuation, growth, profitability, cash flow and balance sheet.
{header}

Tools you can call: {tools}.
Call get_fundamentals, then the latest quarterly get_income_statement, get_balance_sheet and
get_cashflow, all as of the analysis date. Then write a detailed report: valuation (P/E, P/B),
growth, margins, leverage and cash generation, and what they imply for the stock, ending with a
markdown table of the key points. Quote only figures the tools returned. If a tool answers
NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is missing and do not estimate it.
{language}"""


def fundamentals_system_prompt(
    state: Mapping[str, Any], tool_names: Sequence[str], config: Mapping[str, Any]
) -> str:
    return PROMPT.format(
        header=header_lines(state),
        tools=", ".join(tool_names) or "none",
        language=language_instruction(config),
    ).strip()


def create_fundamentals_analyst(llm, tools, config=None):
    """Node "Fundamentals Analyst": loops with its tools, then writes ``fundamentals_report``."""
    return create_analyst_node(
        llm, tools, name=NAME, report_key=REPORT_KEY, system_prompt=fundamentals_system_prompt, config=config
    )
