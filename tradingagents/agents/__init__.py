"""Agent node factories, one file per role (docs/ARCHITECTURE.md, "The engine contract"; contracts in each module's docstring).

An analyst's file is the one home of its data: its ``TOOLS`` (the data tools it is given), its
``FETCH_PLAN`` (the calls it makes, or that its prompt's data plan proposes to its model) and its
factory ``create_<module>``, found by that name (``analyst_module``): adding an analyst needs no line here.

Imported lazily: ``tradingagents.agents.utils.memory`` and ``rating`` are used by light callers
(the Memory pages, the CLI's settle) that should not pay for loading every agent and LangGraph.
"""

import importlib

_EXPORTS = {
    "PortfolioDecision": "managers.portfolio_manager",
    "create_portfolio_manager": "managers.portfolio_manager",
    "create_research_manager": "managers.research_manager",
    "create_bear_researcher": "researchers.bear_researcher",
    "create_bull_researcher": "researchers.bull_researcher",
    "create_aggressive_debator": "risk_mgmt.aggressive_debator",
    "create_conservative_debator": "risk_mgmt.conservative_debator",
    "create_neutral_debator": "risk_mgmt.neutral_debator",
    "create_trader": "trader.trader",
    "create_msg_delete": "utils.agent_utils",
}

__all__ = sorted([*_EXPORTS, "analyst_module", "analyst_tool_names", "get_analyst_tools"])


def analyst_module(key: str):
    """The module of an analyst of the roster (``team.ANALYSTS``): ``analysts/<factory name without
    create_>.py``, which holds its prompt, ``TOOLS``, ``FETCH_PLAN`` and factory."""
    from tradingagents import team
    from tradingagents.validation import ValidationError

    role = team.ROLES.get(key)
    if role is None or not role.is_analyst or not role.factory:
        accepted = ", ".join(r.key for r in team.ANALYSTS)
        raise ValidationError(f"Unknown analyst {key!r}. Accepted: {accepted}.")
    return importlib.import_module(f"{__name__}.analysts.{role.factory.removeprefix('create_')}")


def analyst_tool_names(key: str) -> list[str]:
    """The names of the data tools the analyst ``key`` is given (its file's ``TOOLS``)."""
    return list(analyst_module(key).TOOLS)


def get_analyst_tools(analyst: str, config=None, *, as_of: str | None = None, provider=None) -> list:
    """The tools of one analyst (its ``TOOLS``), bound to ``config``'s provider (``dataflows.tools.make_tools``)."""
    from tradingagents.dataflows.tools import make_tools

    names = analyst_tool_names(analyst)
    tools = make_tools(config, as_of=as_of, provider=provider)
    return [tools[name] for name in names]


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    if name.startswith("create_") and name.endswith("_analyst"):  # an analyst's factory, by its module's name
        try:
            module = importlib.import_module(f"{__name__}.analysts.{name.removeprefix('create_')}")
        except ImportError:
            module = None
        if module is not None and hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
