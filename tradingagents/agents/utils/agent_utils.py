"""Helpers every agent node shares: prompt header lines, language, reports, memories, Msg Clear.

Each role's prompt lives next to its node (``analysts/market_analyst.py`` …); this module holds
only what they have in common, so the prompts stay readable and the state contract is kept in
one place:

- every prompt carries the two lines ``Instrument: <TICKER>`` and ``Analysis date: <YYYY-MM-DD>``
  plus the instrument context (``header_lines``);
- reports and debate material are passed inside ``<tag>…</tag>`` blocks (``tagged``), a layout
  real LLMs read well and the offline engine parses;
- every role after the analysts lays its prompt out stable first (``team_messages``): one system
  message with what every role reads (``TEAM_PREAMBLE``, the header, the four reports in the roster's
  order, then the run's material so far in the run's order: debate history, investment plan, trader
  plan, risk debate), then one human message with the role's own instructions and its variable parts
  (its memories, the last arguments it answers, its task). A provider's prompt cache (OpenAI's
  automatic prefix cache, Anthropic's ``cache_control`` on the system block) then bills the shared
  start of every later role's prompt at the cached price;
- ``language_instruction`` asks for ``config["output_language"]`` when it is not English, while
  keeping the rating words and the labels the prompts ask for (``**Rating**:``, ``**Recommendation**:``,
  ``FINAL TRANSACTION PROPOSAL:``) in English so ``parse_rating`` and the decision card always work.
  The offline engine reads the same sentence to choose its language (``offline.common.translator_of``).

Two analyst node shapes share it (``create_data_analyst`` picks one by the config's ``analyst_data``):
``create_analyst_node`` (the default, the specification's loop: the model asks for tools, a ToolNode
round runs them, the model writes the report) and ``create_prefetch_analyst_node`` (the node calls its
tools itself, puts their answers into the prompt, and makes one model call without tools).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from langchain_core.runnables.config import ContextThreadPoolExecutor, RunnableConfig, ensure_config
from langgraph.errors import GraphBubbleUp

from tradingagents import team
from tradingagents.config import resolve_config
from tradingagents.ids import stable_id
from tradingagents.llm_clients.structured import message_text

# An analyst that keeps calling tools is asked to write its report after this many tool rounds.
MAX_TOOL_ROUNDS = 6


def agent_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """The resolved config of a node (a partial or missing config takes the defaults)."""
    return resolve_config(config)


def language_instruction(config: Mapping[str, Any] | None) -> str:
    """A sentence asking for the configured output language; empty for English."""
    language = str((config or {}).get("output_language") or "English").strip()
    if not language or language.lower() in ("english", "en", "en-us", "en-gb"):
        return ""
    return (
        f"Write your entire answer in {language}. Keep tickers, numbers, dates and the rating "
        "words (Buy, Overweight, Hold, Underweight, Sell, BUY, HOLD, SELL) exactly as written in English, "
        "and write the labels this prompt asks for (such as **Rating**:, **Recommendation**: and "
        "FINAL TRANSACTION PROPOSAL:) in English too: the team's software reads them."
    )


def header_lines(state: Mapping[str, Any]) -> str:
    """The instrument lines every prompt starts with (the fake OpenAI server regexes them)."""
    ticker = str(state.get("company_of_interest") or "")
    date = str(state.get("trade_date") or "")
    context = str(state.get("instrument_context") or "").strip()
    lines = [f"Instrument: {ticker}", f"Analysis date: {date}"]
    if context:
        lines.append(f"Instrument context: {context}")
    lines.append(
        f"Analyse only {ticker}; use no information dated after {date}."
        if ticker and date
        else "Use no information dated after the analysis date."
    )
    return "\n".join(lines)


def tagged(tag: str, text: str | None) -> str:
    """``<tag>\\ntext\\n</tag>``; an empty text becomes an explicit '(none)'."""
    body = (text or "").strip() or "(none)"
    return f"<{tag}>\n{body}\n</{tag}>"


def scoring_block(config: Mapping[str, Any]) -> str:
    """How the call will be scored, tagged (``<scoring>``): the trader and the portfolio manager state
    their horizon and size their levels to it (``holding_days`` trading days from the analysis date)."""
    days = int(config.get("holding_days") or 0)
    body = (f"The call is scored over {days} trading day{'s' if days != 1 else ''} from the analysis date."
            if days > 0 else "")
    return tagged("scoring", body)


def pm_notes_block(state: Mapping[str, Any], judge_key: str) -> list[str]:
    """The portfolio manager's notes to this judge as one tagged block (``[]`` when there are none, so a
    prompt without notes is exactly what it was)."""
    notes = [str(n.get("note") or "").strip() for n in state.get("pm_notes") or []
             if isinstance(n, Mapping) and n.get("before") == judge_key]
    notes = [n for n in notes if n]
    if not notes:
        return []
    return [tagged("portfolio_manager_note",
                   "The portfolio manager's note to you (what the committee already knows; weigh it in your "
                   "judgement, it is not market data):\n" + "\n".join(f"- {n}" for n in notes))]


TEAM_PREAMBLE = (
    "You are one member of a trading team that analyses one instrument on one date. Four analysts wrote "
    "the reports below; researchers debate them, a research manager and a trader plan, a risk committee "
    "debates the plan and a portfolio manager decides. What the whole team reads comes first, always in "
    "the same order; your own role, its instructions and your task come after it."
)


def team_context(state: Mapping[str, Any], stages: Sequence[str] = (), language: str = "") -> str:
    """The role-independent start of a role's prompt: ``TEAM_PREAMBLE`` (with the run's
    ``language_instruction``), the header, the four reports in the roster's order, then ``stages`` (tagged
    blocks, in the run's order). Nothing role-specific: so every role's prompt starts with the same text
    as the roles before it (a provider's cached prefix)."""
    preamble = f"{TEAM_PREAMBLE} {language}".strip()
    return "\n\n".join([preamble, header_lines(state), reports_block(state), *stages])


def team_messages(state: Mapping[str, Any], stages: Sequence[str], instructions: str,
                  own: Sequence[str], *, config: Mapping[str, Any] | None = None) -> list[SystemMessage | HumanMessage]:
    """A role's prompt, stable first: the system message is ``team_context`` (what every role reads, in
    ``config``'s output language), the human message the role's ``instructions`` then its own, variable
    parts ``own`` (memories, the arguments it answers, its task) last."""
    return [SystemMessage(content=team_context(state, stages, language_instruction(config))),
            HumanMessage(content="\n\n".join([instructions.strip(), *own]))]


def reports_block(state: Mapping[str, Any]) -> str:
    """The four analyst reports, each in its own tag (missing ones say so)."""
    return "\n\n".join(tagged(key, state.get(key) or "") for key in team.REPORT_KEYS)


def situation_from_reports(reports: Mapping[str, Any]) -> str:
    """The text a role's memory is queried with (and lessons are stored under).

    The four reports, each cut to its first 1,500 characters, so BM25 sees the salient facts of
    every report without a very long report drowning the others.
    """
    parts = []
    for key in team.REPORT_KEYS:
        text = str(reports.get(key) or "").strip()
        if text:
            parts.append(text[:1500])
    return "\n\n".join(parts)


def recall(memory: Any, state: Mapping[str, Any], situation: str | None = None, n_matches: int = 2) -> list[dict[str, Any]]:
    """Top matches from a role memory for this state ([] without a memory or a situation).

    ``situation`` defaults to the state's reports. Only lessons knowable on the state's analysis
    date are recalled, so a back-dated analysis never learns from what happened after it; a
    zero-score match (no term in common) is dropped.
    """
    situation = situation_from_reports(state) if situation is None else situation
    if memory is None or not situation.strip():
        return []
    as_of = state.get("trade_date") or None
    # with each lesson's id and date when the memory has them (both role-memory backends do)
    get = getattr(memory, "recall_lessons", None) or memory.get_memories
    matches = get(situation, n_matches=n_matches, as_of=as_of) or []
    # a match sharing no term with the situation (score 0) is no match: never shown to an agent
    return [m for m in matches if not isinstance(m.get("similarity_score"), int | float) or m["similarity_score"] > 0]


def format_memories(memories: Sequence[Mapping[str, Any]]) -> str:
    """Lessons from similar past situations, for a prompt."""
    if not memories:
        return "No past lessons match this situation."
    lines = []
    for i, match in enumerate(memories, 1):
        lesson = str(match.get("recommendation") or "").strip()
        score = match.get("similarity_score")
        shown = f" (similarity {float(score):.2f})" if isinstance(score, int | float) else ""
        lines.append(f"{i}. {lesson}{shown}")
    return "\n".join(lines)


def strip_speaker(text: str, speaker: str) -> str:
    """Drop a leading '<speaker>:' the model may have written itself (the node adds it)."""
    body = text.strip()
    pattern = re.compile(r"^\**\s*" + re.escape(speaker) + r"\s*\**\s*:\s*\**\s*", re.IGNORECASE)
    return pattern.sub("", body, count=1).strip()


def create_msg_delete():
    """The ``Msg Clear <Analyst>`` node.

    Removes every message and leaves one HumanMessage placeholder naming the instrument and date,
    so the next analyst starts from a clean scratchpad (some providers reject a conversation that
    does not start with a user turn). The placeholder's id is deterministic.
    """

    def delete_messages(state: Mapping[str, Any]) -> dict[str, Any]:
        ticker = str(state.get("company_of_interest") or "")
        date = str(state.get("trade_date") or "")
        messages = list(state.get("messages") or [])
        removals = [RemoveMessage(id=m.id) for m in messages if getattr(m, "id", None)]
        used = {m.id for m in messages if getattr(m, "id", None)}
        base = stable_id("placeholder", ticker, date, str(state.get("sender") or ""), length=24)
        placeholder_id = f"placeholder-{base}"
        n = 1
        while placeholder_id in used:  # never re-use an id that is being removed in this update
            placeholder_id = f"placeholder-{base}-{n}"
            n += 1
        placeholder = HumanMessage(
            content=f"Continue the analysis of {ticker} as of {date}.", id=placeholder_id
        )
        return {"messages": [*removals, placeholder]}

    return delete_messages


def tool_rounds(messages: Sequence[Any]) -> int:
    """How many times the model has already asked for tools in this scratchpad."""
    return sum(1 for m in messages if isinstance(m, AIMessage) and getattr(m, "tool_calls", None))


def create_analyst_node(
    llm: Any,
    tools: Sequence[Any],
    *,
    name: str,
    report_key: str,
    system_prompt,
    config: Mapping[str, Any] | None = None,
    fallback: Callable[..., dict[str, Any]] | None = None,
):
    """The specification's analyst loop body: one model call per visit, tool calls or the final report.

    The model is offered the tools (``bind_tools``); while its answer has tool calls the analyst's
    router (``should_continue_<key>``) sends them to its ToolNode (``tools_<key>``), whose answers come
    back in the next visit. ``system_prompt(state, tool_names, config) -> str`` comes from the role's
    own file. When the model has no tool calls the answer is the report. After ``MAX_TOOL_ROUNDS``
    tool rounds the model is asked, without tools, to write the report from what it has.

    ``fallback`` (the same analyst's prefetch node, ``create_prefetch_analyst_node``): a server that
    refuses tools (``refuses_tools``: an HTTP 400 naming tools or function calling) makes this visit
    run it instead, for the rest of the run's analysis; its update then carries a note
    (``analyst_data_notes``) and the report says so.
    """
    cfg = agent_config(config)
    tool_list = list(tools or [])
    tool_names = [getattr(t, "name", str(t)) for t in tool_list]
    bound = llm.bind_tools(tool_list) if tool_list else llm

    def analyst_node(state: Mapping[str, Any], config=None) -> dict[str, Any]:
        messages = list(state.get("messages") or [])
        if not messages or not isinstance(messages[0], HumanMessage):
            # an empty scratchpad (a parallel branch): start with a user turn, as providers expect
            ticker, date = state.get("company_of_interest") or "", state.get("trade_date") or ""
            messages = [HumanMessage(content=f"Analyse {ticker} as of {date}."), *messages]
        prompt = system_prompt(state, tool_names, cfg)
        try:
            if tool_rounds(messages) >= MAX_TOOL_ROUNDS:
                final = (
                    "You have used your tool budget. Write the final report now from the tool "
                    "results above; do not call any tool."
                )
                result = llm.invoke([SystemMessage(content=prompt), *messages, HumanMessage(content=final)])
            else:
                result = bound.invoke([SystemMessage(content=prompt), *messages])
        except Exception as exc:
            if fallback is None or not tool_list or not refuses_tools(exc):
                raise
            return _fell_back(fallback, state, config, name, report_key, exc)
        update: dict[str, Any] = {"messages": [result], "sender": name}
        if not getattr(result, "tool_calls", None):
            update[report_key] = message_text(result)
            update["tool_answers"] = tool_answers(messages, name)
        return update

    analyst_node.__name__ = name.lower().replace(" ", "_")
    return analyst_node


def tool_answers(messages: Sequence[Any], node: str) -> list[dict[str, Any]]:
    """The tool answers of a scratchpad, each with the call that asked for it: ``{role, tool, args, text}``
    in answer order (the state's ``tool_answers``, which the evidence ledger checks figures against)."""
    calls: dict[str, Mapping[str, Any]] = {}
    out = []
    for message in messages:
        for call in getattr(message, "tool_calls", None) or []:
            calls[str(call.get("id"))] = call
        if isinstance(message, ToolMessage):
            call = calls.get(str(message.tool_call_id)) or {}
            out.append({"role": node, "tool": message.name or call.get("name") or "",
                        "args": dict(call.get("args") or {}), "text": tool_text(message)})
    return out


_TOOL_WORDS = ("tool", "function")


def refuses_tools(error: BaseException) -> bool:
    """True when a model call failed because the server does not take tools: an HTTP 400 whose message
    names tools or function calling (as some local servers answer for a model without tool support)."""
    status = None
    for obj in (error, getattr(error, "__cause__", None)):
        for attr in ("status", "status_code"):
            value = getattr(obj, attr, None) if obj is not None else None
            if isinstance(value, int):
                status = status or value
    return status == 400 and any(word in str(error).lower() for word in _TOOL_WORDS)


FALLBACK_NOTE = ("{analyst}: the model server refused tool calls ({error}); this analyst's data was fetched "
                 "for it instead (analyst_data prefetch) for this run.")
"""The note a run, its meta (``analyst_data_notes``) and the report carry when an analyst fell back."""


def _fell_back(fallback: Callable[..., dict[str, Any]], state: Mapping[str, Any], config: Any, name: str,
               report_key: str, error: BaseException) -> dict[str, Any]:
    update = dict(fallback(state, config))
    note = FALLBACK_NOTE.format(analyst=name, error=" ".join(str(error).split())[:200])
    update["analyst_data_notes"] = [note]
    update[report_key] = str(update.get(report_key) or "").rstrip() + "\n\n_Note: " + note + "_"
    return update


def tool_error_message(error) -> str:  # no annotation: ToolNode then handles every Exception
    """What a tool that raised tells the model (the run goes on; the report says data was missing).

    The graph's ToolNodes (``handle_tool_errors``) and a node's own tool calls (``run_tool_call``) both
    answer with it."""
    return f"DATA_UNAVAILABLE: the tool failed ({type(error).__name__}: {error}). Treat this data as missing."


FetchPlan = Sequence[tuple[str, Mapping[str, Any]]]
"""A node's own tool calls: ``(tool name, overrides)`` in order. Overrides by argument name, plus
``window_days`` (``start_date`` = analysis date − that many days) and ``look_back_days``."""

_TICKER_ARGS = ("symbol", "ticker", "company", "instrument", "company_name", "ticker_symbol")


def _days_before(date: str, days: int) -> str:
    try:
        return (_dt.date.fromisoformat(date) - _dt.timedelta(days=days)).isoformat()
    except ValueError:
        return date


def fetch_args(tool: Any, ticker: str, date: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a node's own call of ``tool``, by the names its schema gives them (``tool.args``):
    symbol/ticker → the instrument, ``start_date`` → the analysis date − ``window_days`` (30 unless
    given), any other ``…date`` → the analysis date, ``look_back_days`` → the plan's (30 unless given);
    an argument named in ``overrides`` takes that value. Arguments it does not know keep their defaults
    (a required one left out is the tool's validation answer, which reaches the prompt like any answer).
    The same rules as the offline engine's tool calls, so both read the same window."""
    props = getattr(tool, "args", None) or {}
    args: dict[str, Any] = {}
    for name in props:
        low = name.lower()
        if name in overrides:
            args[name] = overrides[name]
        elif low in _TICKER_ARGS:
            args[name] = ticker
        elif low == "start_date":
            args[name] = _days_before(date, int(overrides.get("window_days", 30)))
        elif low.endswith("date") or low in ("as_of", "asof"):
            args[name] = date
        elif low in ("look_back_days", "lookback_days", "days"):
            args[name] = int(overrides.get("look_back_days", 30))
    return args


def run_tool_call(tool: Any, call: Mapping[str, Any], config: RunnableConfig | None) -> ToolMessage:
    """One tool call, run as the graph's ToolNode runs it: ``tool.invoke(ToolCall, config)`` (so the run's
    callbacks see it), and a tool that raises answers ``tool_error_message`` (status "error") instead of
    failing the node; only LangGraph's own control flow (an interrupt) goes through."""
    try:
        out = tool.invoke({**call, "type": "tool_call"}, config)
    except GraphBubbleUp:
        raise
    except Exception as exc:  # noqa: BLE001 - as ToolNode(handle_tool_errors=tool_error_message)
        return ToolMessage(content=tool_error_message(exc), name=call["name"], tool_call_id=call["id"],
                           status="error", id=f"{call['id']}-result")
    if not isinstance(out, ToolMessage):
        out = ToolMessage(content=_as_text(out), name=call["name"], tool_call_id=call["id"])
    return out.model_copy(update={"id": f"{call['id']}-result", "name": out.name or call["name"]})


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def tool_text(message: ToolMessage) -> str:
    return _as_text(message.content)


def fetch_tool_data(
    tools: Sequence[Any], plan: FetchPlan, state: Mapping[str, Any], config: RunnableConfig | None, *, node: str
) -> tuple[AIMessage | None, list[ToolMessage], list[tuple[str, str]]]:
    """A node's own tool calls: the plan's tools first (in its order), then any other tool it was given
    (once, arguments from its schema).

    Returns ``(request, results, blocks)``: ``request`` is an AIMessage naming the calls (no model wrote
    it: it is the record of the node's calls, so the scratchpad pairs every ToolMessage with its call
    and the run's reporter shows them as tool calls, as it does a ToolNode's; None when nothing was
    called), ``results`` the ToolMessages in call order, and ``blocks`` ``(tool name, text)`` for the
    prompt (the name is ``block_tag``'s: with the call's ``BLOCK_ARGS``), a planned tool the node was not
    given included (as DATA_UNAVAILABLE). The calls run side by
    side, as a ToolNode runs them, with ``config`` (the node's RunnableConfig); their ids are stable.
    """
    ticker = str(state.get("company_of_interest") or "")
    date = str(state.get("trade_date") or "")
    by_name = {getattr(t, "name", str(t)): t for t in tools}
    planned = [(name, dict(over)) for name, over in plan]
    wanted = planned + [(name, {}) for name in by_name if name not in {n for n, _ in planned}]
    calls, order = [], []
    for name, overrides in wanted:
        tool = by_name.get(name)
        if tool is None:
            order.append((name, None))
            continue
        args = fetch_args(tool, ticker, date, overrides)
        payload = json.dumps(args, sort_keys=True, default=str)
        call = {"name": name, "args": args, "id": "fetch_" + stable_id(node, ticker, date, name, payload, length=20),
                "type": "tool_call"}
        calls.append(call)
        order.append((name, call))
    results = _run_side_by_side(by_name, calls, config)
    by_id = {c["id"]: r for c, r in zip(calls, results, strict=True)}
    blocks = [
        (block_tag(name, call["args"]), tool_text(by_id[call["id"]])) if call else
        (name, f"DATA_UNAVAILABLE: this analyst was given no {name} tool. Treat this data as missing.")
        for name, call in order
    ]
    if not calls:
        return None, [], blocks
    request_id = "fetch-" + stable_id(node, ticker, date, *[c["id"] for c in calls], length=24)
    request = AIMessage(content="", tool_calls=calls, id=request_id, response_metadata={"fetched_by": node})
    return request, results, blocks


def _run_side_by_side(by_name: Mapping[str, Any], calls: Sequence[Mapping[str, Any]],
                      config: RunnableConfig | None) -> list[ToolMessage]:
    """``run_tool_call`` for every call, side by side, results in call order. The first runs on this
    thread while the pool runs the others (its workers at most ``max_concurrency`` - 1, so no more than
    ``max_concurrency`` run at once): a single call starts no thread at all, and n calls start n - 1.
    Calls whose tools all read a local source (``MarketDataProvider.local``: the demo market, CSV
    files) run one after another on this thread: they wait for nothing, so threads would only take
    turns at the interpreter lock (at a fast model server, 8 ms of a run's 70)."""
    if not calls:
        return []
    from tradingagents.dataflows.provider import LOCAL_DATA

    def one(call: Mapping[str, Any]) -> ToolMessage:
        return run_tool_call(by_name[call["name"]], call, config)

    limit = (config or {}).get("max_concurrency")
    if len(calls) == 1 or limit == 1 or all(
            (getattr(by_name[c["name"]], "metadata", None) or {}).get(LOCAL_DATA) for c in calls):
        return [one(c) for c in calls]
    with ContextThreadPoolExecutor(max_workers=limit - 1 if limit else None) as executor:
        rest = executor.map(one, calls[1:])  # every call is submitted here, before the first runs
        first = one(calls[0])
        return [first, *rest]


BLOCK_ARGS = ("indicator",)
"""Arguments a data block's opening tag names (``<get_indicators indicator="rsi,atr">``): what the call
asked for, which its answer may not say (a NO_DATA answer); the offline engine reads them back."""


def block_tag(name: str, args: Mapping[str, Any]) -> str:
    """The opening tag's text of a call's data block: the tool name, then its ``BLOCK_ARGS``."""
    attrs = "".join(f' {key}="{str(args[key]).replace(chr(34), "")}"' for key in BLOCK_ARGS if key in args)
    return name + attrs


def data_blocks(blocks: Sequence[tuple[str, str]]) -> str:
    """The fetched data for a prompt: one ``<tag>…</tool name>`` block per call (its tag is ``block_tag``:
    the tool name, with the ``BLOCK_ARGS`` of the call when it has any)."""
    out = []
    for tag, text in blocks:
        body = (text or "").strip() or "(none)"
        out.append(f"<{tag}>\n{body}\n</{tag.split(' ', 1)[0]}>")
    return "\n\n".join(out)


def with_data(instructions: str, data: str) -> str:
    """An analyst's prompt: its ``instructions`` (ending with the language sentence), then the fetched
    ``data`` (``data_blocks``)."""
    return instructions.strip() + "\n\n" + (data.strip() or "(no data was fetched)")


def create_prefetch_analyst_node(
    llm: Any,
    tools: Sequence[Any],
    *,
    name: str,
    report_key: str,
    plan: FetchPlan,
    system_prompt: Callable[[Mapping[str, Any], str, Mapping[str, Any]], str],
    config: Mapping[str, Any] | None = None,
):
    """An analyst that fetches its data itself and makes ONE model call, without tools.

    The node calls its tools (``fetch_tool_data``: the plan's, with the node's RunnableConfig, so the
    run's callbacks, its usage counters and checkpoint fence among them, see each call as they see a
    ToolNode's; a tool that raises answers ``tool_error_message``),
    writes their answers into the prompt (``system_prompt(state, data, config)``, ``data`` from
    ``data_blocks``; NO_DATA_AVAILABLE and DATA_UNAVAILABLE answers included, so the model can say what
    is missing), and the model's answer is the report. The state update holds the calls' record, the
    ToolMessages and the answer, in that order: the run's reporter shows the tool calls, and the last
    message has no tool calls, so the analyst's router goes straight to its Msg Clear node (its
    ToolNode stays in the graph, unused). One model round-trip fewer than the tool loop.
    """
    cfg = agent_config(config)
    tool_list = list(tools or [])

    # ``config`` unannotated: LangGraph passes the RunnableConfig to a parameter of that name only when
    # it is unannotated or annotated with the class itself (a string annotation, as here, is neither)
    def analyst_node(state: Mapping[str, Any], config=None) -> dict[str, Any]:
        run_config: RunnableConfig = config if config is not None else ensure_config()  # a wrapper may not pass it
        messages = list(state.get("messages") or [])
        # the model sees the user turns only: no tools are bound, so no tool-call pairs from elsewhere
        turns = [m for m in messages if not isinstance(m, ToolMessage) and not getattr(m, "tool_calls", None)]
        if not turns or not isinstance(turns[0], HumanMessage):
            ticker, date = state.get("company_of_interest") or "", state.get("trade_date") or ""
            turns = [HumanMessage(content=f"Analyse {ticker} as of {date}."), *turns]
        request, results, blocks = fetch_tool_data(tool_list, plan, state, run_config, node=name)
        prompt = system_prompt(state, data_blocks(blocks), cfg)
        result = llm.invoke([SystemMessage(content=prompt), *turns])
        if getattr(result, "tool_calls", None) or getattr(result, "invalid_tool_calls", None):
            # no tool was offered: a call the model made up anyway is dropped, never routed to a ToolNode
            result = result.model_copy(update={"tool_calls": [], "invalid_tool_calls": []})
        fetched = [request, *results] if request is not None else []
        return {"messages": [*fetched, result], "sender": name, report_key: message_text(result),
                "tool_answers": tool_answers(fetched, name)}

    analyst_node.__name__ = name.lower().replace(" ", "_")
    return analyst_node


DATA_PLAN_TAG = "data_plan"
"""The tag of the data plan in a tools-shape analyst's prompt: one planned call a line, the tool's name,
then its arguments as JSON (``plan_block``). A model may follow it or not; the offline engine makes
exactly these calls (``offline.analysts.plan_tool_calls``)."""


def planned_calls(tools: Sequence[Any], plan: FetchPlan, state: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The plan's calls of the tools given, with their arguments (``fetch_args``), in the plan's order;
    then every other tool given, once (the calls ``fetch_tool_data`` makes in the prefetch shape)."""
    ticker = str(state.get("company_of_interest") or "")
    date = str(state.get("trade_date") or "")
    by_name = {getattr(t, "name", str(t)): t for t in tools}
    wanted = [(n, dict(o)) for n, o in plan] + [(n, {}) for n in by_name if n not in {p for p, _ in plan}]
    return [(n, fetch_args(by_name[n], ticker, date, o)) for n, o in wanted if n in by_name]


def plan_block(tools: Sequence[Any], plan: FetchPlan, state: Mapping[str, Any]) -> str:
    """The ``<data_plan>`` block of a tools-shape analyst's prompt (``DATA_PLAN_TAG``)."""
    lines = [f"{n} {json.dumps(a, sort_keys=True, default=str)}" for n, a in planned_calls(tools, plan, state)]
    return f"<{DATA_PLAN_TAG}>\n" + ("\n".join(lines) or "(none)") + f"\n</{DATA_PLAN_TAG}>"


PREFETCH_INTRO = "The data was fetched for you, one block per source, named after the tool that returned it:"
TOOLS_INTRO = (
    "Call your tools for the data you need; each answer comes back named after its tool. The data plan at "
    "the end lists the usual calls, one a line (the tool, then its arguments as JSON): make them, and "
    "other calls or other arguments when the situation needs them. The tools give:"
)


def data_intro(shape: str) -> str:
    """The sentence that introduces an analyst's data in its prompt, for the shape it runs in."""
    return TOOLS_INTRO if shape == "tools" else PREFETCH_INTRO


def create_data_analyst(
    llm: Any,
    tools: Sequence[Any],
    *,
    name: str,
    report_key: str,
    plan: FetchPlan,
    system_prompt: Callable[..., str],
    config: Mapping[str, Any] | None = None,
):
    """An analyst node in the config's ``analyst_data`` shape.

    ``tools`` (the default, the specification's loop): ``create_analyst_node``, the model offered its
    tools and its prompt ending with the plan (``plan_block``), the prefetch node its fallback for a
    server that refuses tools. ``prefetch``: ``create_prefetch_analyst_node``, one model call without
    tools. ``system_prompt(state, data, config, shape=...)`` is the role's own; ``plan`` its
    ``FETCH_PLAN`` (one home: the role's file; the offline engine reads it from the prompt).
    """
    cfg = agent_config(config)
    tool_list = list(tools or [])
    prefetch = create_prefetch_analyst_node(llm, tool_list, name=name, report_key=report_key, plan=plan,
                                            system_prompt=system_prompt, config=cfg)
    if cfg.get("analyst_data") == "prefetch" or not tool_list:
        return prefetch

    def prompt(state: Mapping[str, Any], _tool_names: Sequence[str], conf: Mapping[str, Any]) -> str:
        return system_prompt(state, plan_block(tool_list, plan, state), conf, shape="tools")

    return create_analyst_node(llm, tool_list, name=name, report_key=report_key, system_prompt=prompt,
                               config=cfg, fallback=prefetch)


def lessons_used(memory: Any, memories: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The state update recording the lessons a role was given: ``{"memory_used": {"lessons": {name: [...]}}}``.

    Each lesson as the prompt showed it: its stable id, its similarity score, the date it became
    known (``situation_date``) and its text. {} without a memory.
    """
    name = getattr(memory, "name", None)
    if memory is None or not name:
        return {}
    items = [
        {"id": m.get("id"), "score": m.get("similarity_score"), "situation_date": m.get("known_from"),
         "lesson": str(m.get("recommendation") or "").strip()}
        for m in memories
    ]
    return {"memory_used": {"lessons": {str(name): items}}}


def memory_used_of(state: Mapping[str, Any]) -> dict[str, Any]:
    """A run's ``memory_used`` for its meta: the past decisions and lessons the roles were given."""
    used = dict(state.get("memory_used") or {})
    return {"past_decisions": list(used.get("past_decisions") or []),
            "lessons": {k: list(v) for k, v in (used.get("lessons") or {}).items()}}
