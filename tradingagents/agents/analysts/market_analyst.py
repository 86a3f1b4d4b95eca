"""Market Analyst: price action and technical indicators (node "Market Analyst")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_utils import create_analyst_node, header_lines, language_instruction

ROLE = team.ROLES["market"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

PROMPT = """You are the Market Analyst on a trading team. You study price action and technical indicators.
{header}

Tools you can call: {tools}.
First call get_stock_data for about the last three months up to the analysis date, then call
get_indicators once per indicator. Choose up to eight complementary indicators, without redundancy,
from: close_50_sma, close_200_sma (trend), close_10_ema (short-term momentum), macd, macds, macdh
(MACD line, signal and histogram), rsi (overbought above 70 / oversold below 30), boll, boll_ub,
boll_lb (Bollinger bands), atr (volatility), vwma (volume-weighted average), mfi (money flow).
Use the exact indicator names above.

Then write a detailed report: trend, momentum, volatility and what each indicator says, ending with a
markdown table of the key points. Quote only numbers the tools returned. If a tool answers
NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is missing and do not estimate it.
{language}"""


def market_system_prompt(state: Mapping[str, Any], tool_names: Sequence[str], config: Mapping[str, Any]) -> str:
    return PROMPT.format(
        header=header_lines(state),
        tools=", ".join(tool_names) or "none",
        language=language_instruction(config),
    ).strip()


def create_market_analyst(llm, tools, config=None):
    """Node "Market Analyst": loops with its tools, then writes ``market_report``."""
    return create_analyst_node(
        llm, tools, name=NAME, report_key=REPORT_KEY, system_prompt=market_system_prompt, config=config
    )
