"""Token and call accounting per graph node, through LangChain callbacks.

``UsageTracker`` is a ``BaseCallbackHandler``: pass it in ``callbacks=`` to ``create_llm`` (and/or
in the graph's run config) and it counts, per LangGraph node (``metadata["langgraph_node"]``):
llm_calls (one per model request started), tool_calls (one per tool started), input_tokens and
output_tokens (from ``generation.message.usage_metadata``, else ``llm_output["token_usage"]``), and
cached_input_tokens: how many of the input tokens the provider read from its prompt cache
(``usage_metadata["input_token_details"]["cache_read"]``, else OpenAI's
``prompt_tokens_details.cached_tokens``), which ``pricing.cost_usd`` bills at the cached price.
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
_FIELDS = ("llm_calls", "tool_calls", "input_tokens", "output_tokens", "cached_input_tokens")


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
    inp, out, _cached = usage_from_result(response)
    return inp, out


def usage_from_result(response: Any) -> tuple[int, int, int]:
    """(input, output, cached input) tokens of an ``LLMResult``: message usage_metadata first, else
    llm_output. Cached input is part of the input, never more than it."""
    inp = out = cached = 0
    found = False
    for gen_list in getattr(response, "generations", None) or []:
        for gen in gen_list or []:
            usage = getattr(getattr(gen, "message", None), "usage_metadata", None)
            if usage:
                found = True
                inp += _int(usage.get("input_tokens"))
                out += _int(usage.get("output_tokens"))
                details = usage.get("input_token_details") or {}
                if isinstance(details, dict):
                    cached += _int(details.get("cache_read"))
    if found:
        return inp, out, min(cached, inp)
    llm_output = getattr(response, "llm_output", None) or {}
    usage = llm_output.get("token_usage") or llm_output.get("usage") or {}
    if isinstance(usage, dict):
        inp = _int(usage.get("prompt_tokens", usage.get("input_tokens")))
        out = _int(usage.get("completion_tokens", usage.get("output_tokens")))
        details = usage.get("prompt_tokens_details") or {}
        cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else 0
    return inp, out, min(cached, inp)


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
                counts[k] = counts.get(k, 0) + v

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
        inp, out, cached = usage_from_result(response)
        self._add(node, input_tokens=inp, output_tokens=out, cached_input_tokens=cached)
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


class RunGuard(BaseCallbackHandler):
    """What a run checks before (and during) every model call: its budgets and its stop signal.

    Budgets (``pricing.CostLedger``: the run's ``max_cost_usd``, a batch's): before every call the
    guard reserves the call's worst case in each ledger, the prompt's token bound
    (``pricing.prompt_token_bound`` of the messages, tools and schema) plus the answer's limit
    (``max_tokens`` as sent, ``llm_max_output_tokens``), priced for the model the call names. The
    networked chat model calls ``admit`` before each request it sends (every attempt); when a ledger
    cannot take it the request is refused with ``BudgetExceeded`` (resumable: the run stops at its
    last checkpoint). At the call's end the reservation is replaced by its reported cost (the worst
    case when the server reports no usage, or the call failed); a void attempt the model retries is
    booked at its worst case.
    A model without a price cannot be budgeted: said once in the log, its calls are not refused.

    ``stop_requested()`` is the run's stop signal, which a streaming model checks between events.
    """

    raise_error = False  # refusals are raised by the chat model (``admit``), never from a callback
    run_inline = True

    def __init__(self, ledgers=(), *, table=None, max_output_tokens: int = 8192, where: str = "",
                 should_stop: Callable[[], bool] | None = None) -> None:
        super().__init__()
        self.ledgers = [ledger for ledger in ledgers if ledger is not None]
        self.table = table
        self.max_output_tokens = int(max_output_tokens)
        self.where = where
        self.should_stop = should_stop
        self._lock = threading.Lock()
        self._open: dict[UUID, tuple[str, str, float]] = {}  # run id → (node, model, reserved USD)
        self._nodes: dict[UUID, str] = {}  # run id → its graph node (for the refusal's message)
        self._warned = False

    def stop_requested(self) -> bool:
        try:
            return bool(self.should_stop is not None and self.should_stop())
        except Exception:  # noqa: BLE001 - a broken stop callback must not break the call
            return False

    # ---- the budget
    def _take(self, node: str, model: str, usd: float) -> None:
        taken = []
        for ledger in self.ledgers:
            if not ledger.reserve(usd):
                for done in taken:
                    done.settle(usd, 0.0)
                raise self._refusal(ledger, node, model, usd)
            taken.append(ledger)

    def _refusal(self, ledger, node: str, model: str, usd: float):
        from tradingagents.errors import BudgetExceeded

        spent, reserved = ledger.snapshot()
        call = f"{node}'s next model call ({model})" if node != UNKNOWN_NODE else f"the next model call ({model})"
        open_ = f", ${reserved:.4f} held by calls under way" if reserved > 0 else ""
        if ledger.label == "the backtest's":
            return BudgetExceeded(
                f"The backtest's budget is reached{self.where}: spent ${spent:.4f} of ${ledger.limit:.4f}{open_}, "
                f"and {call} could cost up to ${usd:.4f} (its prompt and an answer of llm_max_output_tokens). "
                "Finished steps are kept: run the same backtest again with a larger budget (--max-cost) to "
                "continue.")
        if ledger.label == "the batch's":
            return BudgetExceeded(
                f"The batch's budget is reached{self.where}: spent ${spent:.4f} of ${ledger.limit:.4f}{open_}, and "
                f"{call} could cost up to ${usd:.4f} (its prompt and an answer of llm_max_output_tokens). It is "
                "saved at a checkpoint: run the batch again with a larger budget (--max-cost) to continue; "
                "finished tickers are reused.")
        return BudgetExceeded(
            f"Budget reached{self.where}: spent ${spent:.4f} of the ${ledger.limit:.4f} budget (max_cost_usd)"
            f"{open_}, and {call} could cost up to ${usd:.4f} (its prompt and an answer of "
            "llm_max_output_tokens). The run is saved at a checkpoint: run it again with a larger budget "
            "(--max-cost) to continue where it stopped.")

    def _settle(self, run_id: UUID, actual: float | None) -> None:
        with self._lock:
            entry = self._open.pop(run_id, None)
        if entry is None:
            return
        reserved = entry[2]
        for ledger in self.ledgers:
            ledger.settle(reserved, reserved if actual is None else actual)

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, tags=None, metadata=None,
                            **kwargs):
        if self.ledgers:
            with self._lock:
                self._nodes[run_id] = _node_of(metadata)

    def admit(self, run_id: UUID, model: str, prompt_parts, max_tokens: int | None) -> None:
        """Before each request of call ``run_id`` (the chat model calls it): book a void earlier attempt
        at its worst case, then reserve this one's, or refuse it with ``BudgetExceeded``."""
        if not self.ledgers:
            return
        from tradingagents import pricing

        prompt = pricing.prompt_token_bound(*prompt_parts)
        worst = pricing.cost_usd(model, prompt, _int(max_tokens or self.max_output_tokens), self.table)
        if worst is None:
            if not self._warned:
                self._warned = True
                import logging

                logging.getLogger(__name__).warning(
                    "max_cost_usd is set but the model %r has no price; its calls are not budgeted "
                    "(add its price to llm_pricing)", model)
            return
        self._settle(run_id, None)  # an earlier attempt of this call was void: it cost its worst case
        with self._lock:
            node = self._nodes.get(run_id, UNKNOWN_NODE)
        self._take(node, model, worst)
        with self._lock:
            self._open[run_id] = (node, model, worst)

    def on_llm_end(self, response, *, run_id, parent_run_id=None, tags=None, **kwargs):
        if not self.ledgers:
            return
        with self._lock:
            entry = self._open.get(run_id)
        if entry is None:
            return
        inp, out, cached = usage_from_result(response)
        from tradingagents import pricing

        actual = pricing.cost_usd(entry[1], inp, out, self.table, cached_tokens=cached) if (inp or out) else None
        self._settle(run_id, actual)
        with self._lock:
            self._nodes.pop(run_id, None)

    def on_llm_error(self, error, *, run_id, parent_run_id=None, tags=None, **kwargs):
        self._settle(run_id, None)  # what a failed call used is unknown: its worst case
        with self._lock:
            self._nodes.pop(run_id, None)
