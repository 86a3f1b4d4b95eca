"""The one signal a streaming chat model sends besides its text: "the attempt so far is void".

A networked model streams each attempt's text to its callbacks as it arrives (LangGraph's
``messages`` mode turns them into ``token`` events). When an attempt turns out unusable (empty,
cut mid-way, garbled) and is retried, the model first sends ``restart_chunk()``: an empty chunk
marked in its ``response_metadata``. ``graph/run_support`` turns it into a ``token`` event with
``restart: true``, and the live panel drops the text it has for that call. The final message never
holds a failed attempt's text (each attempt is assembled on its own).

Imports nothing heavier than langchain-core's message classes.
"""

from __future__ import annotations

from typing import Any

RESTART_KEY = "tradingagents_stream_restart"


def restart_chunk(message_id: str | None = None):
    """An empty ``ChatGenerationChunk`` that says: the text streamed so far for this call is void."""
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGenerationChunk

    return ChatGenerationChunk(message=AIMessageChunk(content="", id=message_id,
                                                      response_metadata={RESTART_KEY: True}))


def is_restart(message: Any) -> bool:
    """Whether a streamed message (chunk) is the restart signal."""
    metadata = getattr(message, "response_metadata", None)
    return isinstance(metadata, dict) and metadata.get(RESTART_KEY) is True
