"""The agent graph: wiring, propagation, checkpoints, events and saved results.

``TradingAgentsGraph`` is imported lazily so that light modules (``events``, ``results``) can be
used without loading the models and data layers.
"""

__all__ = ["TradingAgentsGraph", "ConditionalLogic", "GraphSetup", "SignalProcessor", "Propagator"]


def __getattr__(name):
    if name == "TradingAgentsGraph":
        from tradingagents.graph.trading_graph import TradingAgentsGraph

        return TradingAgentsGraph
    if name == "ConditionalLogic":
        from tradingagents.graph.conditional_logic import ConditionalLogic

        return ConditionalLogic
    if name == "GraphSetup":
        from tradingagents.graph.setup import GraphSetup

        return GraphSetup
    if name == "SignalProcessor":
        from tradingagents.graph.signal_processing import SignalProcessor

        return SignalProcessor
    if name == "Propagator":
        from tradingagents.graph.propagation import Propagator

        return Propagator
    raise AttributeError(f"module 'tradingagents.graph' has no attribute {name!r}")
