"""The offline engine's analysts: which tools to call, and reports written from the tool results.

**Data.** A report reads the tool results of its scratchpad (ToolMessages after the last human turn);
an analyst node that fetched its data itself (the graph's four analysts: no tools bound, one call) has
them in its prompt instead, one ``<tool name>…</tool name>`` block per tool (``prompt_results``). Both
give the same ``ToolResult``s, so the report is the same for the same data.

**Tool calls.** Bound to tools, an analyst makes the calls of the data plan its prompt ends with
(``<data_plan>``: its role file's ``FETCH_PLAN``, written by ``agent_utils.plan_block``; the engine
keeps no plan of its own), then calls any other bound tool once, with arguments built from the tool's
JSON schema: symbol/ticker → the ``Instrument:`` line, ``start_date`` → a window before the
``Analysis date:`` line, other dates → the analysis date, ``freq`` → quarterly.

**Signals** (each → bullish / bearish / neutral; see ``common`` for the scoring):

Market: Trend (close vs close_50_sma), Long-term trend (close_50_sma vs close_200_sma), MACD
(macd vs its signal macds), RSI (≥ 70 overbought → bearish, ≤ 30 oversold → bullish), Bollinger
bands (close above boll_ub → bearish, below boll_lb → bullish), Momentum (close over the ~3-month
window: up more than 5 % bullish, down more than 5 % bearish), Volatility (atr against close,
always neutral, flagged "elevated" above 3 % of the price — the risk analysts use the flag).
Sentiment: Social tone — share of positive minus negative posts (a post's own [bullish]/[bearish]
tag, else a word lexicon), above +0.15 bullish, below −0.15 bearish; company news is described
but scored only once, in the news report. News: Company news and Macro backdrop, same rule.
Fundamentals: Valuation (P/E < 15 bullish, > 35 or negative bearish), Growth (revenue growth
> 10 % bullish, < 0 bearish), Profitability (margin > 15 % bullish, < 0 bearish), Leverage
(debt/equity < 0.5 bullish, > 2 bearish).

Every number a market report quotes is a string copied from a tool message (the thresholds are
written in words), so a reader can find each figure in the tool output.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from tradingagents import figures
from tradingagents.i18n import N_, Translator
from tradingagents.ids import stable_id
from tradingagents.lexicon import tone
from tradingagents.llm_clients.offline.common import (
    ENGLISH,
    Signal,
    clip,
    flag_text,
    footer,
    join_names,
)
from tradingagents.team import Role

NO_DATA = "NO_DATA_AVAILABLE:"
DATA_UNAVAILABLE = "DATA_UNAVAILABLE:"


TOOL_NAMES = {
    "get_stock_data": N_("price history"), "get_indicators": N_("technical indicators"),
    "get_social_posts": N_("social posts"), "get_news": N_("company news feed"),
    "get_global_news": N_("global news feed"), "get_fundamentals": N_("company fundamentals"),
    "get_income_statement": N_("income statement"), "get_balance_sheet": N_("balance sheet"),
    "get_cashflow": N_("cash flow statement"),
}
"""How a report names each tool's data (a reader sees the data, never the tool's code name)."""

INDICATOR_NAMES = {
    "close_50_sma": N_("50-day average"), "close_200_sma": N_("200-day average"),
    "close_10_ema": N_("10-day exponential average"), "macd": N_("MACD line"), "macds": N_("MACD signal line"),
    "macdh": N_("MACD histogram"), "rsi": N_("relative strength index"), "boll": N_("Bollinger middle band"),
    "boll_ub": N_("upper Bollinger band"), "boll_lb": N_("lower Bollinger band"), "atr": N_("average true range"),
    "vwma": N_("volume-weighted average"), "mfi": N_("money flow index"),
}
"""Each indicator id of ``dataflows.indicators`` as a reader names it (never the raw id on screen)."""


def tool_name(label: str, t: Translator = ENGLISH) -> str:
    """A tool's label (``get_indicators(rsi)``, ``get_news``) as a report in ``t``'s language names it: the
    data it gives, an indicator by its plain name ("technical indicators (relative strength index)")."""
    name, _, arg = label.partition("(")
    if name not in TOOL_NAMES:
        return label
    shown = t(TOOL_NAMES[name])
    arg = arg.rstrip(")")
    if not arg:
        return shown
    plain = ", ".join(t(INDICATOR_NAMES[a.strip()]) if a.strip() in INDICATOR_NAMES else a.strip()
                      for a in arg.split(","))
    return t("{name} ({detail})", name=shown, detail=plain)

_DATE_LINE_RE = re.compile(r"^\s*[-*]?\s*(\d{4}-\d{2}-\d{2})[T \d:]*\s*[:|,]\s*(-?\d[\d,]*(?:\.\d+)?)\s*%?\s*$")
_ISO_START_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_NUMBER_RE = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


# ---------------------------------------------------------------------------------------------
# tool calls


def _tool_schema(tool: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    function = tool.get("function", tool)
    return str(function.get("name", "")), dict(function.get("parameters") or {})


def _shift(date: str, days: int) -> str:
    try:
        return (_dt.date.fromisoformat(date) - _dt.timedelta(days=days)).isoformat()
    except ValueError:
        return date


def build_args(schema: dict[str, Any], ticker: str, date: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """Arguments for one tool call, from its JSON schema, the instrument lines and the plan."""
    props: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args: dict[str, Any] = {}
    for name, spec in props.items():
        spec = spec or {}
        low = name.lower()
        if name in overrides:
            value: Any = overrides[name]
        elif low in ("symbol", "ticker", "company", "instrument", "company_name", "ticker_symbol"):
            value = ticker
        elif low == "start_date":
            value = _shift(date, int(overrides.get("window_days", 30)))
        elif low.endswith("date") or low in ("as_of", "asof"):
            value = date
        elif low in ("look_back_days", "lookback_days", "days"):
            value = int(overrides.get("look_back_days", 30))
        elif low == "limit":
            value = 10
        elif low == "freq":
            value = "quarterly"
        elif name in required:
            if "default" in spec:
                value = spec["default"]
            elif spec.get("enum"):
                value = spec["enum"][0]
            else:
                value = {"integer": 0, "number": 0, "boolean": False, "array": [], "object": {}}.get(
                    spec.get("type"), ""
                )
        else:
            continue
        enum = spec.get("enum")
        if enum and value not in enum:
            value = enum[0]
        if spec.get("type") == "integer" and not isinstance(value, bool):
            try:
                value = int(value)
            except (TypeError, ValueError):
                pass
        args[name] = value
    return args


_PLAN_RE = re.compile(r"^<data_plan>\n(?P<body>.*?)\n</data_plan>[ \t]*$", re.DOTALL | re.MULTILINE)
_PLAN_LINE_RE = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s+(?P<args>\{.*\})\s*$")


def prompt_plan(prompt: str) -> list[tuple[str, dict[str, Any]]]:
    """The data plan an analyst's prompt ends with (``agent_utils.plan_block``: ``<data_plan>``, one call a
    line, the tool's name and its arguments as JSON), as ``(tool name, arguments)``; [] without one. The
    plan's one home is the analyst's own file (its ``FETCH_PLAN``); the engine reads it as a model would."""
    blocks = list(_PLAN_RE.finditer(prompt or ""))
    if not blocks:
        return []
    match = blocks[-1]  # the last plan block: the analyst's own, after anything quoted earlier
    plan = []
    for line in match.group("body").splitlines():
        found = _PLAN_LINE_RE.match(line.strip())
        if not found:
            continue
        try:
            args = json.loads(found.group("args"))
        except ValueError:
            continue
        if isinstance(args, dict):
            plan.append((found.group("name"), args))
    return plan


def plan_tool_calls(role: Role, tools: Sequence[dict[str, Any]], ticker: str, date: str,
                    prompt: str = "") -> list[dict[str, Any]]:
    """The tool calls an analyst makes on its first turn (deterministic ids): the calls of its prompt's
    data plan (``prompt_plan``) whose tools are bound, with the plan's arguments (checked against the
    tool's schema by ``build_args``), then every other bound tool once, its arguments from its schema."""
    by_name = dict(_tool_schema(t) for t in tools)
    plan = [(name, dict(args)) for name, args in prompt_plan(prompt) if name in by_name]
    planned = {name for name, _ in plan}
    plan += [(name, {}) for name in by_name if name not in planned]
    calls = []
    for name, overrides in plan:
        args = build_args(by_name[name], ticker, date, overrides)
        payload = json.dumps(args, sort_keys=True)
        calls.append(
            {"name": name, "args": args, "id": "call_" + stable_id(role.node, ticker, date, name, payload, length=20),
             "type": "tool_call"}
        )
    return calls


@dataclass
class ToolResult:
    name: str
    args: dict[str, Any]
    text: str

    @property
    def missing(self) -> str | None:
        """The sentinel line when the tool had no data, else None."""
        body = [line.strip() for line in self.text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        if len(self.indicators) > 1 and indicator_values(self):
            return None  # several sections, some with values: the gaps are named per indicator
        first = body[0] if body else ""
        if not first or first.startswith((NO_DATA, DATA_UNAVAILABLE)) or first.lower().startswith(
            ("error", "unknown indicator", "invalid")
        ):
            return clip(" ".join(body) or "the tool returned nothing.", 200)
        return None

    @property
    def indicators(self) -> list[str]:
        """The indicator names a get_indicators call asked for (comma-separated allowed)."""
        if self.name != "get_indicators":
            return []
        return [n.strip() for n in str(self.args.get("indicator") or "").split(",") if n.strip()]

    @property
    def label(self) -> str:
        if self.name == "get_indicators" and self.args.get("indicator"):
            return f"get_indicators({self.args['indicator']})"
        return self.name


def tool_results(messages: Sequence[BaseMessage]) -> list[ToolResult]:
    """The tool results of the current scratchpad (after the last human turn), in call order."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    results: list[ToolResult] = []
    start = 0
    for i, message in enumerate(messages):
        if isinstance(message, HumanMessage):
            start = i
    for message in messages[start:]:
        if isinstance(message, AIMessage):
            for call in message.tool_calls or []:
                calls[call.get("id") or ""] = (call.get("name") or "", dict(call.get("args") or {}))
        elif isinstance(message, ToolMessage):
            name, args = calls.get(message.tool_call_id, (getattr(message, "name", "") or "", {}))
            content = message.content if isinstance(message.content, str) else json.dumps(message.content)
            results.append(ToolResult(name or "", args, content))
    return results


_BLOCK_RE = re.compile(r'^<(?P<name>[a-z][a-z0-9_]*)(?P<attrs>(?: [a-z_]+="[^"\n]*")*)>\n(?P<body>.*?)\n</(?P=name)>[ \t]*$',
                       re.DOTALL | re.MULTILINE)
_ATTR_RE = re.compile(r' (?P<key>[a-z_]+)="(?P<value>[^"\n]*)"')


def prompt_results(prompt: str) -> list[ToolResult]:
    """The tool results an analyst node fetched itself and put into its prompt, in the prompt's order:
    each ``<tool name>…</tool name>`` block (``agent_utils.data_blocks``) of a data tool the engine
    knows (``TOOL_NAMES``), with the arguments its opening tag names (``agent_utils.block_tag``:
    ``<get_indicators indicator="rsi,atr">``); a block of ``(none)`` is an empty answer."""
    results = []
    for match in _BLOCK_RE.finditer(prompt or ""):
        name = match.group("name")
        if name in TOOL_NAMES:
            body = match.group("body").strip()
            args = {m.group("key"): m.group("value") for m in _ATTR_RE.finditer(match.group("attrs"))}
            results.append(ToolResult(name, args, "" if body == "(none)" else body))
    return results


# ---------------------------------------------------------------------------------------------
# parsing the data tools' text


def _num(text: str) -> float | None:
    try:
        return float(text.replace(",", "").rstrip("%"))
    except (TypeError, ValueError):
        return None


def last_indicator_value(text: str) -> tuple[str, str] | None:
    """(date, value as written) of the last ``YYYY-MM-DD: value`` line with a number."""
    found = None
    for line in text.splitlines():
        match = _DATE_LINE_RE.match(line)
        if match:
            found = (match.group(1), match.group(2))
    return found


def indicator_values(result: ToolResult) -> dict[str, tuple[str, str]]:
    """indicator → (date, value as written) from a get_indicators answer (one or several sections)."""
    names = result.indicators
    if len(names) == 1:
        found = last_indicator_value(result.text)
        return {names[0]: found} if found else {}
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in result.text.splitlines():
        header = re.match(r"^#\s*(\S+) for ", line)
        if header and header.group(1) in names:
            current = header.group(1)
            sections.setdefault(current, [])
        elif current is not None:
            sections[current].append(line)
    out = {}
    for name, lines in sections.items():
        found = last_indicator_value("\n".join(lines))
        if found:
            out[name] = found
    return out


def price_rows(text: str) -> list[tuple[str, str]]:
    """(date, close as written) rows of a CSV-like or whitespace price table, oldest first."""
    header: list[str] | None = None
    rows: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        cells = [c.strip() for c in (line.split(",") if "," in line else line.split())]
        lowered = [c.lower() for c in cells]
        if header is None:
            if "close" in lowered:
                header = lowered
            continue
        if len(cells) != len(header) or not _ISO_START_RE.match(cells[0]):
            continue
        close = cells[header.index("close")]
        if _num(close) is not None:
            rows.append((cells[0][:10], close))
    rows.sort(key=lambda row: row[0])
    return rows


def text_items(text: str) -> list[str]:
    """The items (posts, headlines) of a news/social tool answer.

    An item starts at a ``##``/``###`` heading (a headline; the dated line under it belongs to it),
    a bullet, a numbered line or a dated line; following lines belong to it. Single-``#`` lines
    are the tool's header comments and are skipped.
    """
    items: list[str] = []
    current: list[str] = []
    heading_only = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            if line.startswith("##") and heading:
                if current:
                    items.append(" ".join(current))
                current, heading_only = [heading], True
            continue
        starts_item = bool(re.match(r"^([-*•]|\d+[.)]\s|\[?\d{4}-\d{2}-\d{2})", line))
        if starts_item and not heading_only:
            if current:
                items.append(" ".join(current))
            current = [re.sub(r"^[-*•]\s*", "", line).strip()]
        elif current:
            current.append(line)
        heading_only = False
    if current:
        items.append(" ".join(current))
    return [item for item in items if re.search(r"[A-Za-z]{3}", item)]


_TAGGED_TONE_RE = re.compile(r"\[(bullish|bearish|neutral)\]", re.IGNORECASE)
_TALLY_RE = re.compile(r"^#?\s*(Tone tally:[^\n]+)$", re.MULTILINE)
_TALLY_PART_RE = re.compile(r"\b(bullish|bearish|neutral)\s+(\d+)\b", re.IGNORECASE)


def tally_text(line: str, t: Translator = ENGLISH) -> str:
    """The post feed's ``Tone tally: bearish 7, bullish 5, neutral 4`` as a report in ``t``'s language
    writes it (English: the line as the feed wrote it; Chinese: 看跌 7、看涨 5、中性 4); a line of
    another shape stays as written."""
    parts = _TALLY_PART_RE.findall(line)
    if t.lang == ENGLISH.lang or not parts:
        return line
    return t(", ").join(f"{t.p('direction', word.lower())} {n}" for word, n in parts)


def item_tone(item: str) -> int:
    """+1/−1/0 for an item: its own [bullish]/[bearish]/[neutral] tag when it has one, else the lexicon."""
    tagged = _TAGGED_TONE_RE.search(item)
    if tagged:
        return {"bullish": 1, "bearish": -1}.get(tagged.group(1).lower(), 0)
    t = tone(item)
    return (t > 0) - (t < 0)


# ---------------------------------------------------------------------------------------------
# reports


def _missing_reason(why: str, t: Translator = ENGLISH) -> str:
    """Why a tool's data is missing, in ``t``'s language: English quotes the tool's own answer; another
    language says it in its words when the answer is the data layer's "no data" sentinel, with its dates
    (a failure's own text, ``DATA_UNAVAILABLE: …``, is quoted as the tool wrote it)."""
    if why == "the tool returned nothing.":
        return t("the tool returned nothing.")
    if why.startswith(NO_DATA):
        dates = re.findall(r"\d{4}-\d{2}-\d{2}", why)
        if len(dates) >= 2:
            return t("the data source has no data between {start} and {end}.", start=dates[0], end=dates[-1])
        return t("the data source has no data for this period.")
    return why


def _missing_section(results: Sequence[ToolResult], t: Translator = ENGLISH) -> list[str]:
    missing: list[tuple[str, str]] = []
    for r in results:
        if r.missing and len(r.indicators) > 1:
            missing += [(tool_name(f"get_indicators({name})", t), r.missing) for name in r.indicators]
        elif r.missing:
            missing.append((tool_name(r.label, t), r.missing))
        elif r.indicators:
            found = indicator_values(r)
            missing += [(tool_name(f"get_indicators({name})", t), t("the answer held no value for it."))
                        for name in r.indicators if name not in found]
    if not missing:
        return []
    lines = [t("### Missing data"), ""]
    lines += [t("- {tool}: {reason} Not estimated.", tool=label, reason=_missing_reason(why, t)) for label, why in missing]
    return lines + [""]


def _tally(signals: Sequence[Signal], t: Translator = ENGLISH) -> str:
    groups = []
    for direction in ("bullish", "bearish", "neutral"):
        names = [s.name for s in signals if s.direction == direction]
        if names:
            groups.append(t("{direction} on {names}", direction=t.p("direction", direction),
                            names=join_names(names, t)))
    return t("; ").join(groups) if groups else t("no signal could be read from the data")


def _table(signals: Sequence[Signal], t: Translator = ENGLISH) -> list[str]:
    if not signals:
        return []
    lines = [t("| Signal | Reading | Direction |"), "|---|---|---|"]
    lines += [f"| {s.name} | {s.detail.replace('|', '/')} | {t.p('direction', s.direction)} |" for s in signals]
    return lines + [""]


def _compare(a: float, b: float, t: Translator = ENGLISH) -> str:
    return t.p("relation", "above") if a > b else t.p("relation", "below") if a < b else t.p("relation", "level with")


def market_signals(results: Sequence[ToolResult], t: Translator = ENGLISH) -> tuple[list[Signal], list[str]]:
    """Signals and fact lines from get_stock_data + get_indicators results."""
    values: dict[str, tuple[str, str]] = {}
    rows: list[tuple[str, str]] = []
    for r in results:
        if r.missing:
            continue
        if r.name == "get_indicators":
            values.update(indicator_values(r))
        elif r.name == "get_stock_data":
            rows = price_rows(r.text) or rows
    facts: list[str] = []
    signals: list[Signal] = []
    close_s = rows[-1][1] if rows else None
    close = _num(close_s) if close_s else None
    if rows:
        facts.append(t("Latest session in the data: {date}, close {close}.", date=rows[-1][0], close=close_s))

    def val(name: str) -> tuple[str, float] | None:
        if name not in values:
            return None
        number = _num(values[name][1])
        return None if number is None else (values[name][1], number)

    sma50, sma200, macd, macds = val("close_50_sma"), val("close_200_sma"), val("macd"), val("macds")
    rsi, ub, lb, atr = val("rsi"), val("boll_ub"), val("boll_lb"), val("atr")
    if close is not None and sma50:
        direction = "bullish" if close > sma50[1] else "bearish" if close < sma50[1] else "neutral"
        signals.append(Signal(t.p("signal", "Trend"),
                              t("the close of {close} is {relation} the 50-day average of {average}", close=close_s,
                                relation=_compare(close, sma50[1], t), average=sma50[0]), direction))
    if sma50 and sma200:
        direction = "bullish" if sma50[1] > sma200[1] else "bearish" if sma50[1] < sma200[1] else "neutral"
        signals.append(Signal(t.p("signal", "Long-term trend"),
                              t("the 50-day average of {average} is {relation} the 200-day average of {long_average}",
                                average=sma50[0], relation=_compare(sma50[1], sma200[1], t), long_average=sma200[0]),
                              direction))
    if macd and macds:
        direction = "bullish" if macd[1] > macds[1] else "bearish" if macd[1] < macds[1] else "neutral"
        pace = (t.p("pace", "gaining") if direction == "bullish" else t.p("pace", "losing") if direction == "bearish"
                else t.p("pace", "holding"))
        signals.append(Signal(t.p("signal", "MACD"),
                              t("momentum is {pace} pace (the MACD line at {macd} is {relation} its signal line at "
                                "{signal})", pace=pace, macd=macd[0], relation=_compare(macd[1], macds[1], t),
                                signal=macds[0]), direction))
    if rsi:
        if rsi[1] >= 70:
            signals.append(Signal(t.p("signal", "RSI"),
                                  t("the relative strength index of {rsi} is overbought (seventy or more)", rsi=rsi[0]),
                                  "bearish", flag_text("overbought", t)))
        elif rsi[1] <= 30:
            signals.append(Signal(t.p("signal", "RSI"),
                                  t("the relative strength index of {rsi} is oversold (thirty or less)", rsi=rsi[0]),
                                  "bullish", flag_text("oversold", t)))
        else:
            signals.append(Signal(t.p("signal", "RSI"),
                                  t("the relative strength index of {rsi} is between oversold and overbought",
                                    rsi=rsi[0]), "neutral"))
    if close is not None and ub and lb:
        if close > ub[1]:
            detail, direction = (t("the close of {close} is above the upper Bollinger band of {upper} (stretched)",
                                   close=close_s, upper=ub[0]), "bearish")
        elif close < lb[1]:
            detail, direction = (t("the close of {close} is below the lower Bollinger band of {lower} (washed out)",
                                   close=close_s, lower=lb[0]), "bullish")
        else:
            detail, direction = (t("the close of {close} is inside the Bollinger bands, {lower} to {upper}",
                                   close=close_s, lower=lb[0], upper=ub[0]), "neutral")
        signals.append(Signal(t.p("signal", "Bollinger bands"), detail, direction))
    if len(rows) >= 2 and close is not None:
        first = _num(rows[0][1])
        if first:
            change = close / first - 1
            direction = "bullish" if change > 0.05 else "bearish" if change < -0.05 else "neutral"
            fields = {"start": rows[0][1], "start_date": rows[0][0], "close": close_s, "date": rows[-1][0]}
            if close > first:
                detail = (t("the price rose from {start} on {start_date} to {close} on {date} by more than five "
                            "percent", **fields) if direction == "bullish" else
                          t("the price rose from {start} on {start_date} to {close} on {date}, within five percent",
                            **fields))
            elif close < first:
                detail = (t("the price fell from {start} on {start_date} to {close} on {date} by more than five "
                            "percent", **fields) if direction == "bearish" else
                          t("the price fell from {start} on {start_date} to {close} on {date}, within five percent",
                            **fields))
            else:
                detail = t("the price was unchanged from {start} on {start_date} to {close} on {date}, within five "
                           "percent", **fields)
            signals.append(Signal(t.p("signal", "Momentum"), detail, direction))
    if close and atr:
        elevated = atr[1] / close > 0.03
        signals.append(Signal(t.p("signal", "Volatility"),
                              t("the average daily range (ATR) is {atr} against a close of {close}", atr=atr[0],
                                close=close_s),
                              "neutral", flag_text("volatility elevated" if elevated else "volatility moderate", t)))
    return signals, facts


def _tone_signal(name: str, items: Sequence[str], noun: str, t: Translator = ENGLISH) -> Signal | None:
    """``name`` and ``noun`` are already in ``t``'s language."""
    if not items:
        return None
    tones = [item_tone(item) for item in items]
    pos = sum(1 for x in tones if x > 0)
    neg = sum(1 for x in tones if x < 0)
    balance = (pos - neg) / len(items)
    direction = "bullish" if balance > 0.15 else "bearish" if balance < -0.15 else "neutral"
    return Signal(name, t("{positive} of {total} {items} read positive and {negative} negative", positive=pos,
                          total=len(items), items=noun, negative=neg), direction)


def _headline(item: str) -> str:
    """A headline item as 'title (YYYY-MM-DD)' when it has a dated line under its title."""
    match = re.match(r"^(.*?)\s+(\d{4}-\d{2}-\d{2})T[\d:]+\s*\|", item)
    if match and match.group(1).strip():
        return f"{match.group(1).strip()} ({match.group(2)})"
    return item


_POST_RE = re.compile(r"^(?P<date>\d{4}-\d{2}-\d{2})T(?P<time>[\d:]+)\s+@(?P<author>\S+)\s*(?:\[(?P<tone>bullish|bearish|neutral)\])?"
                      r"\s*\((?P<likes>\d+) likes\):\s*(?P<text>.+)$")


def _post(item: str, t: Translator) -> str:
    """A post item quoted in ``t``'s language: its text, then date, tone and likes in that language, without
    the poster's handle (English: the feed's line as it is)."""
    match = _POST_RE.match(item)
    if t.lang == ENGLISH.lang or not match:
        return item
    fields = {"text": match.group("text"), "date": f"{match.group('date')} {match.group('time')}",
              "likes": match.group("likes")}
    if match.group("tone"):
        return t("{text} ({date}, {direction}, {likes} likes)",
                 direction=t.p("direction", match.group("tone")), **fields)
    return t("{text} ({date}, {likes} likes)", **fields)


def _quotes(items: Sequence[str], limit: int = 3, t: Translator = ENGLISH) -> list[str]:
    """The most strongly toned items (ties: the earliest listed), in their listed order (a post's line in
    ``t``'s language)."""
    ranked = sorted(range(len(items)), key=lambda i: (-abs(tone(items[i])) - abs(item_tone(items[i])), i))[:limit]
    lines: list[str] = []
    for i in sorted(ranked):  # one paragraph each (">" between them): Markdown joins adjacent quoted lines
        lines += [">"] if lines else []
        lines.append(f"> {clip(_post(_headline(items[i]), t), 200)}")
    return lines


def _find(results: Sequence[ToolResult], name: str) -> ToolResult | None:
    for r in results:
        if r.name == name:
            return r
    return None


def _items(results: Sequence[ToolResult], name: str) -> list[str]:
    r = _find(results, name)
    return text_items(r.text) if r and not r.missing else []


_FUNDAMENTAL_KEYS = {
    "pe": re.compile(r"(trailing\s*)?(\bp/?e\b|pe ratio|price[\s/-]*to[\s/-]*earnings)", re.I),
    "growth": re.compile(r"revenue\s*growth|sales\s*growth", re.I),
    "margin": re.compile(r"(net|profit)\s*margin", re.I),
    "leverage": re.compile(r"debt[\s/-]*(to[\s/-]*)?equity", re.I),
    "eps": re.compile(r"^(last|latest|reported)\s*eps$", re.I),
    "eps_estimate": re.compile(r"^(last|latest)?\s*eps\s*(estimate|consensus)$", re.I),
}


def fundamental_values(text: str) -> dict[str, tuple[str, float, bool]]:
    """key → (value as written, number, written as a percent) from ``Label: value`` lines."""
    found: dict[str, tuple[str, float, bool]] = {}
    for raw in text.splitlines():
        if ":" not in raw:
            continue
        label, _, rest = raw.partition(":")
        label = label.strip(" -*|").replace("_", " ")
        match = _NUMBER_RE.search(rest)
        if not match:
            continue
        written = match.group(0)
        number = _num(written)
        if number is None:
            continue
        is_pct = rest[match.end():match.end() + 1] == "%"
        for key, regex in _FUNDAMENTAL_KEYS.items():
            if key not in found and regex.search(label) and "forward" not in label.lower():
                if key in ("growth", "margin") and "_" in raw.partition(":")[0] and not is_pct:
                    # a data tool's field (revenue_growth_yoy: 2.6938) is a fraction, even above 1.5
                    found[key] = (written, number * 100, True)
                    continue
                found[key] = (written + ("%" if is_pct else ""), number, is_pct)
    return found


def _as_pct(number: float, is_pct: bool) -> float:
    return number if is_pct or abs(number) > 1.5 else number * 100


def fundamentals_signals(text: str, t: Translator = ENGLISH) -> list[Signal]:
    values = fundamental_values(text)
    signals: list[Signal] = []
    if "pe" in values:
        written, pe, _ = values["pe"]
        name = t.p("signal", "Valuation")
        if pe <= 0:
            signals.append(Signal(name, t("a price/earnings ratio of {pe}: the company has no earnings to value",
                                          pe=written), "bearish"))
        elif pe < 15:
            signals.append(Signal(name, t("a price/earnings ratio of {pe} is inexpensive (under fifteen)", pe=written),
                                  "bullish"))
        elif pe > 35:
            signals.append(Signal(name, t("a price/earnings ratio of {pe} is rich (over thirty-five)", pe=written),
                                  "bearish"))
        else:
            signals.append(Signal(name, t("a price/earnings ratio of {pe} is in a middle range", pe=written),
                                  "neutral"))
    if "growth" in values:
        written, number, is_pct = values["growth"]
        growth = _as_pct(number, is_pct)
        direction = "bullish" if growth > 10 else "bearish" if growth < 0 else "neutral"
        signals.append(Signal(t.p("signal", "Growth"),
                              t("revenue grew {growth} year on year", growth=figures.pct_points(growth, signed=True))
                              if growth >= 0 else
                              t("revenue shrank {growth} year on year", growth=figures.pct_points(-growth)),
                              direction))
    if "margin" in values:
        written, number, is_pct = values["margin"]
        margin = _as_pct(number, is_pct)
        direction = "bullish" if margin > 15 else "bearish" if margin < 0 else "neutral"
        signals.append(Signal(t.p("signal", "Profitability"),
                              t("a net margin of {margin}", margin=figures.pct_points(margin)), direction))
    if "leverage" in values:
        written, number, is_pct = values["leverage"]
        ratio = number / 100 if (is_pct or number > 10) else number
        direction = "bullish" if ratio < 0.5 else "bearish" if ratio > 2 else "neutral"
        signals.append(Signal(t.p("signal", "Leverage"),
                              t("debt is {ratio} times equity", ratio=figures.ratio(ratio, 2)), direction))
    if "eps" in values and "eps_estimate" in values:
        (eps_w, eps, _), (est_w, est, _) = values["eps"], values["eps_estimate"]
        direction = "bullish" if eps > est else "bearish" if eps < est else "neutral"
        fields = {"eps": eps_w, "estimate": est_w}
        detail = (t("last EPS {eps} beat the estimate {estimate}", **fields) if eps > est else
                  t("last EPS {eps} missed the estimate {estimate}", **fields) if eps < est else
                  t("last EPS {eps} matched the estimate {estimate}", **fields))
        signals.append(Signal(t.p("signal", "Earnings surprise"), detail, direction))
    return signals


STATEMENT_ROWS = {
    "get_income_statement": ("Total Revenue", "Net Income"),
    "get_balance_sheet": ("Cash And Cash Equivalents", "Total Debt", "Stockholders Equity"),
    "get_cashflow": ("Operating Cash Flow", "Free Cash Flow"),
}
_STATEMENT_NAMES = (
    ENGLISH.p("statement", "Total Revenue"), ENGLISH.p("statement", "Net Income"),
    ENGLISH.p("statement", "Cash And Cash Equivalents"), ENGLISH.p("statement", "Total Debt"),
    ENGLISH.p("statement", "Stockholders Equity"), ENGLISH.p("statement", "Operating Cash Flow"),
    ENGLISH.p("statement", "Free Cash Flow"),
)
"""``STATEMENT_ROWS``' names, marked for the catalogue (a report writes ``t.p("statement", name)``)."""


def currency_of(text: str) -> str | None:
    """The accounts' currency of a get_fundamentals answer (``financial_currency:``, else ``currency:``)."""
    for key in ("financial_currency", "currency"):
        match = re.search(rf"^{key}:\s*([A-Za-z]{{3}})\s*$", text, re.M)
        if match:
            return match.group(1)
    return None


def statement_facts(result: ToolResult, currency: str | None = None, t: Translator = ENGLISH) -> list[str]:
    """'Row: latest (period) against previous (period)' lines, amounts written for people ($790.48B)."""
    header: list[str] | None = None
    rows: dict[str, list[str]] = {}
    for raw in result.text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "," not in line:
            continue
        cells = [c.strip() for c in line.split(",")]
        if header is None:
            header = cells
            continue
        rows.setdefault(cells[0], cells)
    if not header:
        return []
    facts = []
    for name in STATEMENT_ROWS.get(result.name, ()):
        cells = rows.get(name)
        if not cells or len(cells) < 2 or _num(cells[1]) is None:
            continue
        fields = {"name": t.p("statement", name), "amount": figures.money(_num(cells[1]), currency),
                  "period": header[1]}
        if len(cells) > 2 and len(header) > 2 and _num(cells[2]) is not None:
            facts.append(t("- {name}: {amount} for the period ending {period}, against {previous} for the period "
                           "ending {previous_period}.", previous=figures.money(_num(cells[2]), currency),
                           previous_period=header[2], **fields))
        else:
            facts.append(t("- {name}: {amount} for the period ending {period}.", **fields))
    return facts


def _report(title: str, intro: list[str], signals: Sequence[Signal], results: Sequence[ToolResult],
            extra: list[str] | None = None, t: Translator = ENGLISH) -> str:
    lines = [f"## {title}", ""] + intro + [""]
    lines += [t("### Signals"), ""]
    lines += [s.line(t) for s in signals] if signals else [t("- No signal could be read from the tool data.")]
    lines += [""]
    if extra:
        lines += extra + [""]
    lines += _missing_section(results, t)
    lines += [t("### Summary"), "", t("Signal tally: {tally}.", tally=_tally(signals, t)), ""]
    lines += _table(signals, t)
    lines += [footer(t)]
    return "\n".join(lines)


def write_report(role: Role, ticker: str, date: str, messages: Sequence[BaseMessage],
                 t: Translator = ENGLISH, prompt: str = "") -> str:
    """The report of an analyst role from the tool results in its scratchpad, else from the data blocks
    of its ``prompt`` (a node that fetched its data itself), in ``t``'s language."""
    results = tool_results(messages) or prompt_results(prompt)
    if role.key == "market":
        signals, facts = market_signals(results, t)
        intro = facts or [t("No price data could be read from the tools.")]
        intro = [t("Technical reading of {ticker} from its price history and technical indicators.", ticker=ticker)] + intro
        return _report(t("Market analysis of {ticker}", ticker=ticker), intro, signals, results, t=t)
    if role.key == "social":
        posts = _items(results, "get_social_posts")
        news = _items(results, "get_news")
        signals = [s for s in (_tone_signal(t.p("signal", "Social tone"), posts, t("posts"), t),) if s]
        intro = [t("Mood around {ticker} in the week to {date}, from social posts and company news.", ticker=ticker,
                   date=date)]
        news_tone = _tone_signal(t.p("signal", "Company news"), news, t("company headlines"), t)
        if news_tone:
            intro.append(t("Company news in the same week: {detail} ({direction}; scored in the news report, not "
                           "here).", detail=news_tone.detail, direction=t.p("direction", news_tone.direction)))
        social = _find(results, "get_social_posts")
        tally = _TALLY_RE.search(social.text) if social and not social.missing else None
        if tally:
            intro.append(t("The post feed reports: {tally}.", tally=tally_text(tally.group(1).strip(), t)))
        extra = ([t("### Voices"), ""] + _quotes(posts, t=t)) if posts else []
        return _report(t("Sentiment analysis of {ticker}", ticker=ticker), intro, signals, results, extra, t)
    if role.key == "news":
        company = _items(results, "get_news")
        macro = _items(results, "get_global_news")
        signals = [s for s in (_tone_signal(t.p("signal", "Company news"), company, t("company headlines"), t),
                               _tone_signal(t.p("signal", "Macro backdrop"), macro, t("global headlines"), t)) if s]
        intro = [t("News for {ticker} in the week to {date}, from company and global news feeds.", ticker=ticker,
                   date=date)]
        extra: list[str] = []
        if company:
            extra += [t("### Company headlines"), ""] + _quotes(company) + [""]
        if macro:
            extra += [t("### Macro headlines"), ""] + _quotes(macro)
        return _report(t("News analysis of {ticker}", ticker=ticker), intro, signals, results, extra, t)
    if role.key == "fundamentals":
        fundamentals = _find(results, "get_fundamentals")
        text = fundamentals.text if fundamentals and not fundamentals.missing else ""
        signals = fundamentals_signals(text, t)
        received = [tool_name(r.label, t) for r in results if not r.missing]
        intro = [t("Fundamentals of {ticker} as of {date}. Data received from: {sources}.", ticker=ticker, date=date,
                   sources=join_names(received, t))]
        if any("synthetic demo data" in r.text for r in results if not r.missing):  # the demo market's figures
            intro.append(t("**Synthetic demo data**: these figures are sized like the real company's, not its "
                           "reported accounts."))
        currency = currency_of(text)
        facts = [fact for r in results if r.name in STATEMENT_ROWS and not r.missing
                 for fact in statement_facts(r, currency, t)]
        extra = [t("### Statements"), ""] + facts if facts else None
        return _report(t("Fundamentals analysis of {ticker}", ticker=ticker), intro, signals, results, extra, t)
    # any other analyst-like role: list what the tools said
    lines = [t("## Analysis of {ticker}", ticker=ticker), ""] + [f"- {r.label}: {clip(r.text, 300)}" for r in results]
    return "\n".join(lines + ["", footer(t)])
