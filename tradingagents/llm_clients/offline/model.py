"""The offline engine: a deterministic LangChain chat model that needs no LLM and no network.

``OfflineChatModel`` plugs in wherever a chat model goes, so the same graph, nodes and ToolNodes
run. It works only from the messages it is given, exactly like an LLM:

- it recognises its role from the system prompt ("You are the Market Analyst …");
- bound to tools (``bind_tools``), an analyst first answers with real tool calls whose arguments
  come from each tool's JSON schema and the ``Instrument:`` / ``Analysis date:`` prompt lines;
  once the ToolMessages are back it writes its report from their text, quoting the tools' numbers
  verbatim (a test checks every figure of the market report against the tool messages);
- the researchers, managers, trader, risk analysts and the Reflector read the reports and debate
  turns from their prompts and answer with text grounded in them;
- ``with_structured_output(schema)`` (LangChain's default implementation, through a forced tool
  call: ``include_raw=True`` and ``method=`` work as they do for other models) yields a schema
  instance, e.g. the Portfolio Manager's ``PortfolioDecision``.

Which signals each analyst reads is documented in :mod:`~tradingagents.llm_clients.offline.analysts`,
how signals become a 5-tier rating in :mod:`~tradingagents.llm_clients.offline.common`, and how the
other roles use them in :mod:`~tradingagents.llm_clients.offline.roles`.
Same messages in → same answer out, on every machine: no clock, no randomness, no ``hash()``.
Every report it writes says "offline engine (no LLM)".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from tradingagents.llm_clients.offline.engine import OFFLINE_LABEL, respond

__all__ = ["OFFLINE_LABEL", "OfflineChatModel"]


class OfflineChatModel(BaseChatModel):
    """A chat model that answers every agent role deterministically from its prompt and tool data."""

    model_name: str = "offline"

    model_config = ConfigDict(protected_namespaces=(), arbitrary_types_allowed=True)

    def __init__(self, model_name: str = "offline", config: Any = None, **kwargs: Any):
        # ``config`` is accepted like every component's, but the engine needs none: it answers
        # from the messages alone (so the same prompt gives the same answer under any settings)
        super().__init__(model_name=model_name, **kwargs)

    @property
    def _llm_type(self) -> str:
        return "offline-engine"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any):
        """Bind tools (BaseTool, functions, pydantic models or OpenAI dicts) as OpenAI tool schemas."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = respond(
            messages,
            tools=kwargs.get("tools") or [],
            tool_choice=kwargs.get("tool_choice"),
            model_name=self.model_name,
        )
        return ChatResult(generations=[ChatGeneration(message=message)])
