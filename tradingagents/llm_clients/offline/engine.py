"""The offline engine's dispatcher: messages (+ bound tools) in, one AIMessage out.

The role comes from the system prompt's "You are the <Role>" sentence; the instrument and date
from its ``Instrument:`` / ``Analysis date:`` lines. Analysts bound to tools call them first and
write their report once the ToolMessages are back (``analysts``); every other role answers
from the reports and debate in its prompt (``roles``). The roles are the roster's
(``tradingagents.team``) plus the reflector's two writers. A forced tool call (``tool_choice="any"``
or a named tool — what ``with_structured_output`` sends) is answered with that tool's arguments,
filled from the role's structured answer.

Deterministic: the answer and its id depend only on the messages and tools.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from tradingagents.llm_clients.offline import analysts, roles
from tradingagents.llm_clients.offline.common import FOOTER, OFFLINE_LABEL, date_of, instrument_of, stable_id
from tradingagents.team import ROSTER, Role

__all__ = ["OFFLINE_LABEL", "ROLES", "detect_role", "respond", "stable_id"]

# The reflector's two writers are not agents of the graph (not in the roster): their prompts open
# with "You are the Reflection Analyst" / "You are the Lessons Analyst" (graph/reflection.py).
REFLECTION = Role(key="reflection", node="Reflection Analyst", team="Reflection")
LESSONS = Role(key="lessons", node="Lessons Analyst", team="Reflection")
ROLES: tuple[Role, ...] = (*ROSTER, REFLECTION, LESSONS)
"""Every role the engine answers: the roster's agents, then the reflector's two writers."""


def _role_pattern(role: Role) -> re.Pattern[str]:
    # "You are the <node>", allowing one qualifying word inside the name, as the risk analysts'
    # prompts say "You are the Aggressive Risk Analyst" for the node "Aggressive Analyst"
    words = [re.escape(w) for w in role.node.split()]
    return re.compile(r"You are the " + r"(?:\s+\w+)?\s+".join(words) + r"\b")


_PATTERNS = tuple((role, _role_pattern(role)) for role in ROLES)


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text") or "") for b in content if isinstance(b, str | dict))
    return str(content or "")


def detect_role(text: str) -> Role | None:
    """The first role named as "You are the <Role>" in the text (system prompt first)."""
    best: tuple[int, Role] | None = None
    for role, pattern in _PATTERNS:
        match = pattern.search(text)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), role)
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


def _text_answer(role: Role | None, prompt: str, messages: Sequence[BaseMessage]) -> str:
    ticker, date = instrument_of(prompt), date_of(prompt)
    if role is None:
        return (
            f"The {OFFLINE_LABEL} has no role for this request about {ticker} as of {date}; it answers only the "
            "agent roles of the trading graph.\n\n" + FOOTER
        )
    if role.is_analyst:
        return analysts.write_report(role, ticker, date, messages)
    if role.debate == "invest":
        return roles.debate_turn(role, prompt)
    if role.debate == "risk":
        return roles.risk_turn(role, prompt)
    writers = {
        "invest": roles.research_plan,  # the judge of the investment debate
        "risk": roles.portfolio_text,  # the judge of the risk debate
    }
    if role.judges in writers:
        return writers[role.judges](prompt)
    if role.key == "trader":
        return roles.trader_plan(prompt)
    if role is REFLECTION:
        return roles.reflection(prompt)
    return roles.role_lessons(prompt)


def _structured_answer(role: Role | None, prompt: str, messages: Sequence[BaseMessage]) -> dict[str, Any]:
    if role is not None and role.judges == "risk":  # the Portfolio Manager's PortfolioDecision
        return roles.portfolio_decision(prompt)
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

    if tools and role is not None and role.is_analyst and not _has_tool_results(messages):
        calls = analysts.plan_tool_calls(role, tools, ticker, date)
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
