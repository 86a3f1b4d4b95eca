"""Structured output with a plain-text fallback for servers that lack json_schema.

``invoke_structured(llm, Schema, messages)`` returns ``(obj, raw_ai_message)`` when the model
answered with JSON that validates against ``Schema``, else ``(None, text)`` from a plain call so
the caller can parse the rating with ``parse_rating``. A server that rejects ``response_format``
(HTTP 400/422, "unsupported"), or a model that has no structured-output support, is remembered per
(base_url, model) for the life of the process, so later calls go straight to the plain call.

Failures that are not about the format (rate limits after retries, server errors, timeouts,
authentication) are raised, never replaced by a made-up answer.
"""

from __future__ import annotations

import copy
import json
import sys
import threading
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

_REJECT_WORDS = ("response_format", "json_schema", "structured output", "not supported", "unsupported")


class StructuredAnswer(BaseModel):
    """The base of a structured answer's schema: its JSON schema is built once a process.

    A structured call builds the schema twice (langchain-openai for its tracing metadata, the OpenAI
    SDK for the strict ``response_format``), ~2 ms each for the Portfolio Manager's decision, on
    every call. A model class does not change once defined, so the schema of each (class, arguments)
    is kept, and every caller gets its own deep copy to change as it likes.
    """

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        key = (cls, args, tuple(sorted(kwargs.items())))
        try:
            schema = _SCHEMAS.get(key)
        except TypeError:  # an unhashable argument: build it, as pydantic would
            return super().model_json_schema(*args, **kwargs)
        if schema is None:
            schema = super().model_json_schema(*args, **kwargs)
            _SCHEMAS[key] = schema
        return copy.deepcopy(schema)


_SCHEMAS: dict[tuple, dict[str, Any]] = {}  # a dict's single get/set is atomic: no lock needed


class _SchemaSupport:
    """Thread-safe memory of (base_url, model) pairs whose server lacks json_schema output.

    A process-wide cache of a server capability (like a connection cache): it only ever skips a
    request that would fail, and ``forget()`` empties it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._unsupported: set[tuple[str, str]] = set()

    def is_unsupported(self, key: tuple[str, str]) -> bool:
        with self._lock:
            return key in self._unsupported

    def mark_unsupported(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._unsupported.add(key)

    def forget(self, base_url: str | None = None) -> None:
        """Forget every entry, or only those of one server URL."""
        with self._lock:
            if base_url is None:
                self._unsupported.clear()
            else:
                url = str(base_url).rstrip("/")
                self._unsupported = {k for k in self._unsupported if k[0].rstrip("/") != url}

    def snapshot(self) -> frozenset[tuple[str, str]]:
        with self._lock:
            return frozenset(self._unsupported)


JSON_SCHEMA_SUPPORT = _SchemaSupport()


def support_key(llm: Any) -> tuple[str, str]:
    """(base_url, model) of a chat model; offline/other models use their class name as the URL."""
    base = getattr(llm, "openai_api_base", None) or f"<{type(llm).__name__}>"
    model = getattr(llm, "model_name", None) or getattr(llm, "model", None) or ""
    return str(base), str(model)


def forget_json_schema_support(base_url: str | None = None) -> None:
    """Forget remembered 'json_schema unsupported' servers (all, or one URL): tests, server upgrades."""
    JSON_SCHEMA_SUPPORT.forget(base_url)


def _status_of(exc: BaseException) -> int | None:
    for obj in (exc, getattr(exc, "__cause__", None)):
        if obj is None:
            continue
        for attr in ("status_code", "status"):
            value = getattr(obj, attr, None)
            if isinstance(value, int):
                return value
    return None


def _is_format_rejection(exc: BaseException) -> bool:
    """True when the server refused the request because of response_format/json_schema."""
    if isinstance(exc, NotImplementedError):
        return True
    status = _status_of(exc)
    if status in (400, 422):
        return True
    if status is None:
        text = str(exc).lower()
        return any(word in text for word in _REJECT_WORDS) and "timeout" not in text
    return False


def _is_parse_failure(exc: BaseException) -> bool:
    from langchain_core.exceptions import OutputParserException

    if isinstance(exc, ValidationError | json.JSONDecodeError | OutputParserException):
        return True
    try:  # the SDK's own parse of a pydantic response_format
        import openai

        if isinstance(exc, openai.LengthFinishReasonError | openai.ContentFilterFinishReasonError):
            return True
    except (ImportError, AttributeError):
        pass
    return False


def message_text(message: Any) -> str:
    """The text of an AIMessage (string content or text blocks), or str() of anything else."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") in (None, "text"):
                parts.append(str(block.get("text") or ""))
        return "".join(parts)
    return "" if content is None else str(content)


def _plain(llm: Any, messages: Sequence[Any]) -> tuple[None, str]:
    answer = llm.invoke(list(messages))
    return None, message_text(answer)


def _is_openai_chat(llm: Any) -> bool:
    # a ChatOpenAI exists only once langchain-openai is imported: asking about another model (the offline
    # engine) must not import it and the OpenAI SDK (~0.8 s in a new process) just to answer no
    module = sys.modules.get("langchain_openai")
    return module is not None and isinstance(llm, module.ChatOpenAI) and not getattr(llm, "use_responses_api", None)


class _OpenAIStructured:
    """What ``ChatOpenAI.with_structured_output(schema, method="json_schema", include_raw=True)`` does,
    without its runnables: the model called with ``response_format=schema`` (the same request, parsed
    by the SDK), ``{"raw", "parsed"}`` back: the SDK's parse (an instance, a dict ``invoke_structured``
    validates, or None for a refusal or a content filter). langchain-openai's version runs the parse
    beside the call in a new thread pool on every call: ~12 ms a call, three times the call itself at a
    fast server."""

    __slots__ = ("llm", "schema")

    def __init__(self, llm: Any, schema: type[BaseModel]) -> None:
        self.llm, self.schema = llm, schema

    def invoke(self, messages: list) -> dict[str, Any]:
        raw = self.llm.invoke(messages, response_format=self.schema)
        return {"raw": raw, "parsed": getattr(raw, "additional_kwargs", {}).get("parsed")}


def invoke_structured(
    llm: Any, schema: type[BaseModel], messages: Sequence[Any]
) -> tuple[BaseModel | None, Any]:
    """``(schema instance, raw AIMessage)``, or ``(None, text)`` after the plain-text fallback.

    The fallback happens when the server rejects json_schema (400/422/unsupported), when the model
    has no structured-output support, or when its answer does not validate; every other failure is
    raised.
    """
    key = support_key(llm)
    if JSON_SCHEMA_SUPPORT.is_unsupported(key):
        return _plain(llm, messages)
    try:
        if _is_openai_chat(llm):
            runnable = _OpenAIStructured(llm, schema)
        else:
            runnable = llm.with_structured_output(schema, method="json_schema", include_raw=True)
    except (NotImplementedError, TypeError, ValueError):
        JSON_SCHEMA_SUPPORT.mark_unsupported(key)
        return _plain(llm, messages)
    try:
        out = runnable.invoke(list(messages))
    except Exception as exc:  # noqa: BLE001 - classified below, re-raised unless it is about the format
        if _is_parse_failure(exc):
            return _plain(llm, messages)
        if _is_format_rejection(exc):
            JSON_SCHEMA_SUPPORT.mark_unsupported(key)
            return _plain(llm, messages)
        raise
    if isinstance(out, dict):
        parsed = out.get("parsed")
        raw = out.get("raw")
    else:  # a model whose with_structured_output ignores include_raw
        parsed, raw = out, None
    if isinstance(parsed, schema):
        return parsed, raw
    if isinstance(parsed, dict):
        try:
            return schema.model_validate(parsed), raw
        except ValidationError:
            pass
    # unparseable or refused: the caller gets plain text it can parse_rating
    return _plain(llm, messages)
