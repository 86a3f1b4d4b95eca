"""The offline engine: a deterministic LangChain chat model that needs no LLM and no network.

``OfflineChatModel`` plugs in wherever a chat model goes, so the same graph, nodes and ToolNodes
run. It works only from the messages it is given, exactly like an LLM:

- it answers as the role of the graph node it is called from (LangGraph's ``langgraph_node`` run
  metadata, mapped by the roster); a call outside the graph names its role in the run metadata
  (``config={"metadata": {team.ROLE_METADATA: "reflection"}}``), and a call that names none is an
  error: the prompt's prose never decides the role;
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

While it answers (``streaming``, default true; ``llm_streaming: false`` turns it off), a text answer goes
to the callbacks word by word (a Chinese answer clause by clause; ``on_llm_new_token``: LangGraph's ``messages`` mode;
without a pause between words, in runs of words, ``RUN_CHARS``), so the Run page's live
text works offline too; the message returned is the same either way. The words are sent from ``_generate``,
where the run manager (and with it the calling node) is known, as ``BoundedChatOpenAI`` does; ``.stream()``
therefore yields the whole answer as one chunk while its callbacks see the words.
The config's ``offline_stream_delay_s`` (``TRADINGAGENTS_OFFLINE_STREAM_DELAY_S``, default 0, at most 1;
the Run page's "Presenter pace" sets 0.04) pauses between the words, for a demo or a browser test that
wants to watch the text grow; it changes timing only, never the text.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from tradingagents.llm_clients.offline.engine import OFFLINE_LABEL, respond, role_for

__all__ = ["OFFLINE_LABEL", "OfflineChatModel", "stream_delay_from_env"]

STREAM_DELAY_ENV = "TRADINGAGENTS_OFFLINE_STREAM_DELAY_S"
# a word and the space after it; Chinese, written without spaces, streams by clause (up to its ，。；：！？、)
_CLAUSE_MARKS = "，。；：！？、"
_WORDS = re.compile(rf"\s*(?:[^\s{_CLAUSE_MARKS}]+[{_CLAUSE_MARKS}]*|[{_CLAUSE_MARKS}]+)\s*")
RUN_CHARS = 240
"""Without a pause between words, they go out in runs of whole words up to this many characters (the first
word alone, so the page has it at once): nothing could watch them arrive one at a time, and every chunk costs
the callbacks (a run at full speed spent about a third of its time on ~1,900 one-word chunks)."""


def _runs_of(words: list[str], limit: int) -> list[str]:
    """``words`` joined into runs of at most ``limit`` characters (a longer word is a run of its own), the
    first word alone; the runs join back to the same text."""
    runs = [words[0]]
    current = ""
    for word in words[1:]:
        if current and len(current) + len(word) > limit:
            runs.append(current)
            current = ""
        current += word
    if current:
        runs.append(current)
    return runs


def stream_delay_from_env() -> float:
    """The pause between streamed words from ``TRADINGAGENTS_OFFLINE_STREAM_DELAY_S`` (0 when unset)."""
    raw = (os.environ.get(STREAM_DELAY_ENV) or "").strip()
    if not raw:
        return 0.0
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{STREAM_DELAY_ENV}={raw!r} is not a pause in seconds: set a number from 0 to 1 "
                         "(0 or unset: no pause).")
    return value


class OfflineChatModel(BaseChatModel):
    """A chat model that answers every agent role deterministically from its prompt and tool data."""

    model_name: str = "offline"
    streaming: bool = True  # send a text answer's words to the callbacks while answering
    stream_delay_s: float = 0.0  # pause between streamed words (timing only; see the module docstring)

    model_config = ConfigDict(protected_namespaces=(), arbitrary_types_allowed=True)

    def __init__(self, model_name: str = "offline", config: Any = None, **kwargs: Any):
        # ``config`` is accepted like every component's, but the engine needs none: it answers
        # from the messages alone (so the same prompt gives the same answer under any settings)
        kwargs.setdefault("stream_delay_s", stream_delay_from_env())
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
        # the run metadata holds the calling node (or the caller's explicit role) and the model's own
        message = respond(
            messages,
            role_for(run_manager.metadata if run_manager is not None else {}),
            tools=kwargs.get("tools") or [],
            tool_choice=kwargs.get("tool_choice"),
            model_name=self.model_name,
        )
        if run_manager is not None and self.streaming:
            for chunk in self._chunks(message):
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _chunks(self, message: AIMessage) -> Iterator[ChatGenerationChunk]:
        """The answer as it streams: a text word by word, tool calls in one chunk.

        Id on every chunk, usage and response metadata on the last only (chunks add them up), so the
        message assembled from the chunks equals the one returned.
        """
        text = message.content if isinstance(message.content, str) else ""
        pieces = _WORDS.findall(text) if text and not message.tool_calls else []
        if "".join(pieces) != text or not pieces:
            pieces = [message.content]
        elif not self.stream_delay_s:
            pieces = _runs_of(pieces, RUN_CHARS)
        calls = [tool_call_chunk(name=c["name"], args=json.dumps(c["args"]), id=c.get("id"), index=i)
                 for i, c in enumerate(message.tool_calls)]
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            if i and self.stream_delay_s:
                time.sleep(self.stream_delay_s)
            yield ChatGenerationChunk(message=AIMessageChunk(
                content=piece, id=message.id,
                tool_call_chunks=calls if last else [],
                usage_metadata=message.usage_metadata if last else None,
                response_metadata=dict(message.response_metadata) if last else {},
                chunk_position="last" if last else None,
            ))
