"""TradingAgents: a LangGraph team of LLM agents that analyses a ticker on a date."""

__version__ = "0.1.0"
