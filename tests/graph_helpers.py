"""Shared helpers for the graph tests: call counting per node, fault triggers, state comparison."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable

from langchain_core.callbacks import BaseCallbackHandler

COMPARED_KEYS = (
    "company_of_interest",
    "trade_date",
    "asset_type",
    "instrument_context",
    "past_context",
    "market_report",
    "sentiment_report",
    "news_report",
    "fundamentals_report",
    "investment_debate_state",
    "investment_plan",
    "trader_investment_plan",
    "risk_debate_state",
    "final_trade_decision",
)


def comparable(state: dict) -> dict:
    """The parts of a final state that must match between two runs (messages are scratch)."""
    return {k: state.get(k) for k in COMPARED_KEYS}


class CallCounter(BaseCallbackHandler):
    """Counts model calls per graph node; optionally runs ``on_call(node, n)`` first.

    ``raise_error = True`` so that an exception raised by ``on_call`` fails the model call (a
    deterministic fault at a chosen node with any model, the offline engine included).
    """

    raise_error = True

    def __init__(self, on_call: Callable[[str, int], None] | None = None):
        self.calls: Counter[str] = Counter()
        self.on_call = on_call
        self._lock = threading.Lock()

    def on_chat_model_start(self, serialized, messages, *, run_id, metadata=None, **kwargs):
        node = (metadata or {}).get("langgraph_node", "?")
        with self._lock:
            self.calls[node] += 1
            n = self.calls[node]
        if self.on_call is not None:
            self.on_call(node, n)

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()


class InjectedFault(RuntimeError):
    pass


def fail_once_at(node: str) -> CallCounter:
    """A counter whose first model call at ``node`` raises InjectedFault."""
    fired = threading.Event()

    def on_call(at: str, n: int) -> None:
        if at == node and not fired.is_set():
            fired.set()
            raise InjectedFault(f"injected failure at {node}")

    return CallCounter(on_call)


def server_fault_at(server, node: str, times: int = 2) -> CallCounter:
    """A callback that makes the fake OpenAI server answer ``node``'s first model call (and its
    retries: ``times`` requests in all) with HTTP 500, once; the run then fails there for good."""
    from tests.fake_openai import Fault

    fired = {"done": False}

    def on_call(at: str, _n: int) -> None:
        if at == node and not fired["done"]:
            fired["done"] = True
            server.inject(Fault.status(500, times=times))

    return CallCounter(on_call)


def in_node(name: str, node: Callable[[dict], dict]) -> Callable[[dict], dict]:
    """``node`` called the way the graph calls it: its model calls run inside the node ``name``.

    LangGraph puts ``langgraph_node`` into the run metadata of every call a node makes (the offline
    engine answers as that node's role); this gives a node factory called outside a graph the same.
    """
    from langchain_core.runnables import RunnableLambda

    runnable = RunnableLambda(node, name=name)

    def call(state: dict) -> dict:
        return runnable.invoke(state, {"metadata": {"langgraph_node": name}})

    return call


def as_role(key: str) -> dict:
    """The run config naming the role of a model call made outside a graph node."""
    from tradingagents.team import ROLE_METADATA

    return {"metadata": {ROLE_METADATA: key}}
