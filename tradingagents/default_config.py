"""The specification's name of the configuration: ``tradingagents.default_config.DEFAULT_CONFIG``.

Code written against the documents does ``config = DEFAULT_CONFIG.copy(); config["max_debate_rounds"] = 2;
TradingAgentsGraph(config=config)``; that keeps working. The configuration itself lives in the
``tradingagents.config`` package (defaults, frozen settings, environment, one check per key,
resolution); nothing inside the project imports this module.
"""

from __future__ import annotations

from tradingagents.config import *  # noqa: F403  (the same objects under the specification's name)
from tradingagents.config import __all__  # noqa: F401
