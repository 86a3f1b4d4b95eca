"""Agent node factories, one file per role (docs/ARCHITECTURE.md, "The engine contract"; contracts in each module's docstring).

Imported lazily: ``tradingagents.agents.utils.memory`` and ``rating`` are used by light callers
(the Memory pages, the CLI's settle) that should not pay for loading every agent and LangGraph.
"""

import importlib

_EXPORTS = {
    "create_fundamentals_analyst": "analysts.fundamentals_analyst",
    "create_market_analyst": "analysts.market_analyst",
    "create_news_analyst": "analysts.news_analyst",
    "create_social_media_analyst": "analysts.social_media_analyst",
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

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
