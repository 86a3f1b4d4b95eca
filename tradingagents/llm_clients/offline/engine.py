"""The offline engine's dispatcher: messages (+ bound tools) and a role in, one AIMessage out.

The role is the node's, never read from the prompt: inside the graph LangGraph names the node in
each model call's run metadata (``langgraph_node``), and a caller outside the graph (the reflector)
names its role explicitly (``team.ROLE_METADATA``); ``team.role_of`` reads both. Editing a prompt's
"You are the …" sentence therefore never changes which role answers. The instrument and date come
from the prompt's ``Instrument:`` / ``Analysis date:`` lines. Analysts bound to tools call them first
and write their report once the ToolMessages are back (``analysts``); an analyst called without tools
(an analyst node that fetched its data itself) writes it from the data blocks in its prompt; every
other role answers from the reports and debate in its prompt (``roles``). A forced tool call (``tool_choice="any"`` or a
named tool — what ``with_structured_output`` sends) is answered with that tool's arguments, filled
from the role's structured answer.

The answer is written in the language the prompt asks for ("Write your entire answer in Chinese.",
``common.translator_of``), as a model would; every other role reads it from its prompt too.

Deterministic: the answer and its id depend only on the role, the messages and the tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage

from tradingagents.errors import LLMConfigError
from tradingagents.ids import stable_id
from tradingagents.llm_clients.offline import analysts, roles
from tradingagents.llm_clients.offline.common import OFFLINE_LABEL, date_of, instrument_of, translator_of
from tradingagents.team import LESSONS, REFLECTION, ROLE_METADATA, WRITERS, Role, role_of

__all__ = ["OFFLINE_LABEL", "ROLES", "respond", "role_for"]

ROLES: tuple[Role, ...] = tuple(WRITERS.values())
"""Every role the engine answers: the roster's agents, then the reflector's two writers."""


def role_for(metadata: Mapping[str, Any] | None) -> Role:
    """The role of a model call from its run metadata; a clear error when it names none."""
    try:
        role = role_of(dict(metadata or {}))
    except KeyError as exc:
        raise LLMConfigError(f"The {OFFLINE_LABEL} was called for an unknown role: {exc.args[0]}.") from None
    if role is None:
        node = (metadata or {}).get("langgraph_node")
        where = f"in the graph node {node!r}, which is no agent of the roster" if node else "outside a graph node"
        raise LLMConfigError(
            f"The {OFFLINE_LABEL} cannot tell which role this call is for: it was made {where}. Call it from an "
            f"agent's node, or name the role in the run metadata: "
            f"config={{'metadata': {{{ROLE_METADATA!r}: <one of {', '.join(WRITERS)}>}}}}."
        )
    return role


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text") or "") for b in content if isinstance(b, str | dict))
    return str(content or "")


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


def _text_answer(role: Role, prompt: str, messages: Sequence[BaseMessage]) -> str:
    ticker, date = instrument_of(prompt), date_of(prompt)
    if role.is_analyst:
        return analysts.write_report(role, ticker, date, messages, translator_of(prompt), prompt)
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
    if role is LESSONS:
        return roles.role_lessons(prompt)
    raise LLMConfigError(f"The {OFFLINE_LABEL} has no answer for the role {role.key!r}.")


def _structured_answer(role: Role, prompt: str, messages: Sequence[BaseMessage]) -> dict[str, Any]:
    if role.judges == "risk":  # the Portfolio Manager's PortfolioDecision
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
    role: Role,
    *,
    tools: Sequence[dict[str, Any]] = (),
    tool_choice: Any = None,
    model_name: str = "offline",
) -> AIMessage:
    """The offline engine's answer to ``messages`` as ``role`` (an AIMessage with text or tool calls)."""
    prompt = _prompt_text(messages)
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

    if tools and role.is_analyst and not _has_tool_results(messages):
        calls = analysts.plan_tool_calls(role, tools, ticker, date, prompt)
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
