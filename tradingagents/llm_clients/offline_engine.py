"""The offline engine's dispatcher: messages (+ bound tools) in, one AIMessage out.

The role comes from the system prompt's "You are the <Role>" sentence; the instrument and date
from its ``Instrument:`` / ``Analysis date:`` lines. Analysts bound to tools call them first and
write their report once the ToolMessages are back (``offline_analysts``); every other role answers
from the reports and debate in its prompt (``offline_roles``). A forced tool call
(``tool_choice="any"`` or a named tool — what ``with_structured_output`` sends) is answered with
that tool's arguments, filled from the role's structured answer.

Deterministic: the answer and its id depend only on the messages and tools.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from tradingagents.llm_clients import offline_analysts, offline_roles
from tradingagents.llm_clients.offline_common import FOOTER, OFFLINE_LABEL, date_of, instrument_of

__all__ = ["OFFLINE_LABEL", "ROLES", "detect_role", "respond", "stable_id"]

ANALYST_ROLES = ("Market Analyst", "Sentiment Analyst", "News Analyst", "Fundamentals Analyst")
ROLES = (
    *ANALYST_ROLES,
    "Bull Researcher",
    "Bear Researcher",
    "Research Manager",
    "Trader",
    "Aggressive Risk Analyst",
    "Conservative Risk Analyst",
    "Neutral Risk Analyst",
    "Portfolio Manager",
    "Reflection Analyst",
    "Lessons Analyst",
)


def stable_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text") or "") for b in content if isinstance(b, str | dict))
    return str(content or "")


def detect_role(text: str) -> str | None:
    """The first role named as "You are the <Role>" in the text (system prompt first)."""
    best: tuple[int, str] | None = None
    for role in ROLES:
        at = text.find(f"You are the {role}")
        if at >= 0 and (best is None or at < best[0]):
            best = (at, role)
    return best[1] if best else None


def _prompt_text(messages: Sequence[BaseMessage]) -> str:
    system = [_text(m) for m in messages if isinstance(m, SystemMessage)]
    others = [_text(m) for m in messages if not isinstance(m, SystemMessage | ToolMessage)]
    return "\n\n".join(system + others)


def _forced_tool(tools: Sequence[dict[str, Any]], tool_choice: Any) -> dict[str, Any] | None:
    if not tools or tool_choice in (None, "auto", "none"):
        return None
    if isinstance(tool_choice, dict):
        name = (tool_choice.get("function") or {}).get("name") or tool_choice.get("name")
    elif isinstance(tool_choice, str) and tool_choice not in ("any", "required"):
        name = tool_choice
    else:
        name = None
    for tool in tools:
        function = tool.get("function", tool)
        if name is None or function.get("name") == name:
            return function
    return None


def _fill_schema(parameters: dict[str, Any], answer: dict[str, Any], fallback_text: str) -> dict[str, Any]:
    """Arguments valid for ``parameters`` (a JSON schema) taken from ``answer`` where it has them."""
    out: dict[str, Any] = {}
    props = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    for name, spec in props.items():
        spec = spec or {}
        if name in answer:
            value = answer[name]
        elif name not in required:
            continue
        else:
            types = {spec.get("type")} | {a.get("type") for a in spec.get("anyOf", []) if isinstance(a, dict)}
            enum = spec.get("enum") or next((a.get("enum") for a in spec.get("anyOf", []) if isinstance(a, dict)
                                             and a.get("enum")), None)
            if enum:
                value = "Hold" if "Hold" in enum else enum[0]
            elif "string" in types:
                value = fallback_text
            elif "number" in types or "integer" in types:
                value = 0
            elif "boolean" in types:
                value = False
            elif "array" in types:
                value = []
            elif "null" in types:
                value = None
            else:
                value = fallback_text
        out[name] = value
    return out


def _text_answer(role: str | None, prompt: str, messages: Sequence[BaseMessage]) -> str:
    ticker, date = instrument_of(prompt), date_of(prompt)
    if role in ANALYST_ROLES:
        return offline_analysts.write_report(role, ticker, date, messages)
    if role in ("Bull Researcher", "Bear Researcher"):
        return offline_roles.debate_turn(role, prompt)
    if role == "Research Manager":
        return offline_roles.research_plan(prompt)
    if role == "Trader":
        return offline_roles.trader_plan(prompt)
    if role in ("Aggressive Risk Analyst", "Conservative Risk Analyst", "Neutral Risk Analyst"):
        return offline_roles.risk_turn(role, prompt)
    if role == "Portfolio Manager":
        return offline_roles.portfolio_text(prompt)
    if role == "Reflection Analyst":
        return offline_roles.reflection(prompt)
    if role == "Lessons Analyst":
        return offline_roles.role_lessons(prompt)
    return (
        f"The {OFFLINE_LABEL} has no role for this request about {ticker} as of {date}; it answers only the "
        "agent roles of the trading graph.\n\n" + FOOTER
    )


def _structured_answer(role: str | None, prompt: str, messages: Sequence[BaseMessage]) -> dict[str, Any]:
    if role == "Portfolio Manager":
        return offline_roles.portfolio_decision(prompt)
    return {}


def _usage(messages: Sequence[BaseMessage], output: str) -> dict[str, int]:
    input_tokens = sum(len(_text(m)) for m in messages) // 4
    output_tokens = len(output) // 4
    return {"input_tokens": input_tokens, "output_tokens": output_tokens, "total_tokens": input_tokens + output_tokens}


def _has_tool_results(messages: Sequence[BaseMessage]) -> bool:
    """True when ToolMessages follow the last human turn (the tools have answered)."""
    seen_tool = False
    for message in messages:
        if isinstance(message, ToolMessage):
            seen_tool = True
        elif message.type == "human":
            seen_tool = False
    return seen_tool


def respond(
    messages: Sequence[BaseMessage],
    *,
    tools: Sequence[dict[str, Any]] = (),
    tool_choice: Any = None,
    model_name: str = "offline",
) -> AIMessage:
    """The offline engine's answer to ``messages`` (an AIMessage with text or tool calls)."""
    prompt = _prompt_text(messages)
    role = detect_role(prompt)
    ticker, date = instrument_of(prompt), date_of(prompt)
    digest = stable_id(model_name, json.dumps([[m.type, _text(m)] for m in messages]),
                       json.dumps(list(tools), sort_keys=True, default=str), str(tool_choice))
    metadata = {"model_name": model_name, "engine": OFFLINE_LABEL}

    forced = _forced_tool(tools, tool_choice)
    if forced is not None:
        answer = _structured_answer(role, prompt, messages)
        args = _fill_schema(dict(forced.get("parameters") or {}), answer, _text_answer(role, prompt, messages))
        name = str(forced.get("name"))
        call = {"name": name, "args": args, "id": "call_" + digest[:20], "type": "tool_call"}
        return AIMessage(
            content="",
            tool_calls=[call],
            id=f"offline-{digest[:24]}",
            usage_metadata=_usage(messages, json.dumps(args, sort_keys=True)),
            response_metadata={**metadata, "finish_reason": "tool_calls"},
        )

    if tools and role in ANALYST_ROLES and not _has_tool_results(messages):
        calls = offline_analysts.plan_tool_calls(role, tools, ticker, date)
        if calls:
            return AIMessage(
                content="",
                tool_calls=calls,
                id=f"offline-{digest[:24]}",
                usage_metadata=_usage(messages, json.dumps([c["args"] for c in calls], sort_keys=True)),
                response_metadata={**metadata, "finish_reason": "tool_calls"},
            )

    text = _text_answer(role, prompt, messages)
    return AIMessage(
        content=text,
        id=f"offline-{digest[:24]}",
        usage_metadata=_usage(messages, text),
        response_metadata={**metadata, "finish_reason": "stop"},
    )
