"""The provider presets, re-exported from ``tradingagents.llm_presets`` (below the config, which checks
``llm_provider`` against them, so neither imports the other in a circle)."""

from tradingagents.llm_presets import *  # noqa: F401,F403
from tradingagents.llm_presets import OFFLINE_LABEL, PROVIDER_PRESETS, normalize_provider, public_url  # noqa: F401
