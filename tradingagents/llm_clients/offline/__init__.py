"""The offline engine: a deterministic chat model that needs no LLM and no network.

``llm_provider: offline`` (the default) gives ``OfflineChatModel`` (see ``model``). The package's
modules depend one way only, so nothing imports in a cycle::

    common  (prompt parsing, signals, the scoring; the scale from rating.py, reports from team.py)
      ↑
    analysts (tool calls and reports)      roles (debaters, managers, trader, reflection)
      ↑                                      ↑
    engine  (the role from the call's node via the roster, dispatch: messages in, one AIMessage out)
      ↑
    model   (the LangChain chat model)
"""

from tradingagents.llm_clients.offline.model import OFFLINE_LABEL, OfflineChatModel

__all__ = ["OFFLINE_LABEL", "OfflineChatModel"]
