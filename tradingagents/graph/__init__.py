"""The agent graph: wiring, propagation, checkpoints, events and saved results.

Classes are imported lazily so that light modules (``events``, ``results``) can be used without
loading the models and data layers.
"""

import importlib

_EXPORTS = {
    "TradingAgentsGraph": "trading_graph",
    "ConditionalLogic": "conditional_logic",
    "GraphSetup": "setup",
    "SignalProcessor": "signal_processing",
    "Propagator": "propagation",
    "Settler": "settlement",
    "SettleResult": "settlement",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
