"""Market Analyst: price action and technical indicators (node "Market Analyst").

It fetches its data itself before its one model call (``create_prefetch_analyst_node``): the prices
of the last ``PRICE_DAYS`` days (get_stock_data) and the ``INDICATORS`` over the last
``LOOK_BACK_DAYS`` days (get_indicators), all to the analysis date, through the tools it is given with
the node's RunnableConfig. A get_indicators that takes several indicators at once (its ``indicator``
argument says "comma") is called once for all of them (``fetch_plan_for``), as the offline engine
calls it. The answers go into the prompt, one ``<tool name>`` block per call, and the model writes the
report without tools: one model call instead of a tool round and a second call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents import team
from tradingagents.agents.utils.agent_utils import (
    FetchPlan,
    create_data_analyst,
    data_intro,
    header_lines,
    language_instruction,
    with_data,
)

ROLE = team.ROLES["market"]
NAME = ROLE.node
REPORT_KEY = ROLE.output_key

TOOLS: tuple[str, ...] = ("get_stock_data", "get_indicators")
"""The data tools this analyst is given (``dataflows.tools.make_tools`` names), in the order they are offered."""

PRICE_DAYS = 91
LOOK_BACK_DAYS = 30
INDICATORS = ("close_50_sma", "close_200_sma", "macd", "macds", "rsi", "boll_ub", "boll_lb", "atr")
FETCH_PLAN: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_stock_data", {"window_days": PRICE_DAYS}),  # start_date = analysis date − 91 days, end_date = it
    *(("get_indicators", {"indicator": name, "look_back_days": LOOK_BACK_DAYS}) for name in INDICATORS),
)
"""The node's own tool calls, in order (argument rules: ``agent_utils.fetch_args``)."""


def fetch_plan_for(tools: Sequence[Any]) -> FetchPlan:
    """``FETCH_PLAN`` for these tools: its get_indicators calls merged into one (the indicators joined
    by commas, at the first one's place) when the get_indicators given takes several at once, as the
    offline engine's ``plan_tool_calls`` merges them."""
    tool = next((t for t in tools if getattr(t, "name", None) == "get_indicators"), None)
    spec = ((getattr(tool, "args", None) or {}).get("indicator") or {}) if tool is not None else {}
    if "comma" not in str(spec.get("description", "")).lower():
        return FETCH_PLAN
    first = next(i for i, (name, _) in enumerate(FETCH_PLAN) if name == "get_indicators")
    merged = {**FETCH_PLAN[first][1], "indicator": ",".join(INDICATORS)}
    rest = [item for item in FETCH_PLAN if item[0] != "get_indicators"]
    return (*rest[:first], ("get_indicators", merged), *rest[first:])


PROMPT = """You are the Market Analyst on a trading team. You study price action and technical indicators.
{header}

{intro}
get_stock_data holds the daily prices of the last {price_days} days, get_indicators (its tag names the
indicators asked for) the last {look_back} days of {indicators}, all up to the analysis date.
Write a detailed report: trend, momentum, volatility and what each indicator says, ending with a
markdown table of the key points. Quote only numbers your data gives. If an answer says
NO_DATA_AVAILABLE or DATA_UNAVAILABLE, say which data is missing and do not estimate it.
{language}"""


def market_system_prompt(state: Mapping[str, Any], data: str, config: Mapping[str, Any], shape: str = "prefetch") -> str:
    """The prompt with ``data`` at its end, after the instructions and the language sentence: the
    fetched blocks (``agent_utils.data_blocks``) in the prefetch shape, the data plan
    (``agent_utils.plan_block``) in the tools shape."""
    instructions = PROMPT.format(intro=data_intro(shape), header=header_lines(state), price_days=PRICE_DAYS, look_back=LOOK_BACK_DAYS,
                                 indicators=", ".join(INDICATORS), language=language_instruction(config))
    return with_data(instructions, data)


def create_market_analyst(llm, tools, config=None):
    """Node "Market Analyst": fetches its prices and indicators, then one model call writes ``market_report``."""
    tool_list = list(tools or [])
    return create_data_analyst(
        llm, tool_list, name=NAME, report_key=REPORT_KEY, plan=fetch_plan_for(tool_list),
        system_prompt=market_system_prompt, config=config,
    )
