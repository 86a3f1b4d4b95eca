"""Token and call accounting per graph node, through LangChain callbacks.

``UsageTracker`` is a ``BaseCallbackHandler``: pass it in ``callbacks=`` to ``create_llm`` (and/or
in the graph's run config) and it counts, per LangGraph node (``metadata["langgraph_node"]``):
llm_calls (one per model request started), tool_calls (one per tool started), input_tokens and
output_tokens (from ``generation.message.usage_metadata``, else ``llm_output["token_usage"]``).
It records numbers and node names only, never prompts, answers or keys. Thread-safe: parallel
analyst branches report into one tracker. ``on_change(totals)`` is called after each update,
outside the lock (the graph turns it into ``llm_usage`` events).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

UNKNOWN_NODE = "(outside graph)"
_FIELDS = ("llm_calls", "tool_calls", "input_tokens", "output_tokens")


def _empty() -> dict[str, int]:
    return dict.fromkeys(_FIELDS, 0)


def _node_of(metadata: dict[str, Any] | None) -> str:
    if metadata:
        node = metadata.get("langgraph_node")
        if node:
            return str(node)
    return UNKNOWN_NODE


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def tokens_from_result(response: Any) -> tuple[int, int]:
    """(input, output) tokens of an ``LLMResult``: message usage_metadata first, else llm_output."""
    inp = out = 0
    found = False
    for gen_list in getattr(response, "generations", None) or []:
        for gen in gen_list or []:
            usage = getattr(getattr(gen, "message", None), "usage_metadata", None)
            if usage:
                found = True
                inp += _int(usage.get("input_tokens"))
                out += _int(usage.get("output_tokens"))
    if found:
        return inp, out
    llm_output = getattr(response, "llm_output", None) or {}
    usage = llm_output.get("token_usage") or llm_output.get("usage") or {}
    if isinstance(usage, dict):
        inp = _int(usage.get("prompt_tokens", usage.get("input_tokens")))
        out = _int(usage.get("completion_tokens", usage.get("output_tokens")))
    return inp, out


class UsageTracker(BaseCallbackHandler):
    """Counts model calls, tool calls and tokens per node; see the module docstring."""

    raise_error = False  # accounting must never break a run
    run_inline = True

    def __init__(self, on_change: Callable[[dict[str, int]], None] | None = None) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._by_node: dict[str, dict[str, int]] = {}
        self._llm_runs: dict[UUID, str] = {}
        self._tool_runs: dict[UUID, str] = {}
        self._seen_ends: set[UUID] = set()
        self.on_change = on_change

    # ---- reading
    def totals(self) -> dict[str, int]:
        with self._lock:
            total = _empty()
            for counts in self._by_node.values():
                for k in _FIELDS:
                    total[k] += counts[k]
            return total

    def by_node(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {node: dict(counts) for node, counts in self._by_node.items()}

    def reset(self) -> None:
        with self._lock:
            self._by_node.clear()
            self._llm_runs.clear()
            self._tool_runs.clear()
            self._seen_ends.clear()
        self._changed()

    # ---- internals
    def _add(self, node: str, **delta: int) -> None:
        with self._lock:
            counts = self._by_node.setdefault(node, _empty())
            for k, v in delta.items():
                counts[k] += v

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.totals())

    def _llm_started(self, run_id: UUID, metadata: dict[str, Any] | None) -> None:
        node = _node_of(metadata)
        with self._lock:
            if run_id in self._llm_runs:
                return
            self._llm_runs[run_id] = node
        self._add(node, llm_calls=1)
        self._changed()

    # ---- callbacks
    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs):
        self._llm_started(run_id, metadata)

    def on_llm_start(self, serialized, prompts, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs):
        self._llm_started(run_id, metadata)

    def on_llm_end(self, response, *, run_id, parent_run_id=None, tags=None, **kwargs):
        with self._lock:
            node = self._llm_runs.pop(run_id, None)
            # a handler attached both to the model and to the run config sees each end twice
            duplicate = node is None and run_id in self._seen_ends
            self._seen_ends.add(run_id)
        if duplicate:
            return
        if node is None:
            node = UNKNOWN_NODE
        inp, out = tokens_from_result(response)
        self._add(node, input_tokens=inp, output_tokens=out)
        self._changed()

    def on_llm_error(self, error, *, run_id, parent_run_id=None, tags=None, **kwargs):
        with self._lock:
            node = self._llm_runs.pop(run_id, None)
            self._seen_ends.add(run_id)
        if node is not None:  # never answered: llm_calls counts the model's answered calls
            self._add(node, llm_calls=-1)
            self._changed()

    def on_tool_start(self, serialized, input_str, *, run_id, parent_run_id=None, tags=None, metadata=None, inputs=None, **kwargs):
        node = _node_of(metadata)
        with self._lock:
            if run_id in self._tool_runs:
                return
            self._tool_runs[run_id] = node
        self._add(node, tool_calls=1)
        self._changed()

    def on_tool_end(self, output, *, run_id, parent_run_id=None, **kwargs):
        with self._lock:
            self._tool_runs.pop(run_id, None)

    def on_tool_error(self, error, *, run_id, parent_run_id=None, **kwargs):
        with self._lock:
            self._tool_runs.pop(run_id, None)
