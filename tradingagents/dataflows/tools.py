"""LangChain tools for the analysts, bound to one run's provider and analysis date.

``make_tools(config, as_of=trade_date)`` builds every tool as a closure over the provider of that
config. ``shared_tools(config)`` is the same set built once per provider for many runs: each call
reads its run's analysis date from the RunnableConfig (``configurable["as_of"]``). Each tool:

* clamps to the analysis date ``as_of`` (and to today): whatever range the model asks for, nothing
  dated after it comes back;
* returns text an LLM reads well, with the numbers verbatim (market tools: a CSV table, or lines
  ``YYYY-MM-DD: value`` rounded to two decimals) and the data source's label (for the demo market:
  "synthetic demo data");
* for a source that gives a ``cache_token`` (the demo market), keeps its result in-process under
  (token, tool, arguments, analysis date, today), so a repeated run gets the same bytes without
  redoing the work (``clear_result_cache()`` drops them);
* never raises: no data → ``NO_DATA_AVAILABLE: …`` (do not estimate), a provider failure →
  ``DATA_UNAVAILABLE: <reason>``, a bad argument → ``INVALID_ARGUMENT: …`` listing what is accepted.

No ``from __future__ import annotations`` here: LangChain reads a tool function's type hints on every
call, and string annotations are compiled each time (0.9 → 0.6 ms a call).
"""

import functools
import inspect
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any

import pandas as pd
from langchain_core.callbacks import CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool

from tradingagents.dataflows.indicators import SUPPORTED_INDICATORS, WARMUP_ROWS, compute_indicator
from tradingagents.dataflows.interface import get_provider
from tradingagents.dataflows.provider import (
    DATA_UNAVAILABLE,
    LOCAL_DATA,
    NO_DATA,
    STATEMENT_FREQS,
    DataNotFound,
    MarketData,
    ProviderUnavailable,
    clip_frame,
    today,
)
from tradingagents.validation import ValidationError, validate_date, validate_ticker

INVALID = "INVALID_ARGUMENT:"
AS_OF_KEY = "as_of"  # the run config's configurable entry that carries the analysis date (per_run tools)
TOOL_NAMES = [
    "get_stock_data", "get_indicators", "get_fundamentals", "get_balance_sheet", "get_cashflow",
    "get_income_statement", "get_news", "get_global_news", "get_social_posts",
]
NO_INVENT = "Do not estimate or invent values for it; say that the data is unavailable."
STALE_DAYS = 14  # a price series whose last row is older than this before the requested end is stale
MAX_PRICE_ROWS = 260
MAX_NEWS_ITEMS = 30
MAX_POSTS = 40
WARMUP_DAYS = 500  # calendar days of history before an indicator window (EMA start no longer matters)


# ----------------------------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------------------------
def _source(provider: MarketData) -> str:
    return f"(source: {provider.label})"


def _no_data(provider: MarketData, what: str) -> str:
    return f"{NO_DATA} {what} {NO_INVENT} {_source(provider)}"


def _clamp(date_value: object, as_of: str | None, what: str = "date") -> str:
    """A validated date, never after the analysis date nor today."""
    try:
        day = validate_date(date_value, allow_future=True)
    except ValidationError as exc:
        raise ValidationError(f"{what}: {exc}") from None
    limit = today().isoformat()
    if as_of:
        limit = min(limit, as_of)
    return min(day, limit)


def _int_arg(value: object, name: str, lo: int, hi: int, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValidationError(f"{name} must be a whole number between {lo} and {hi}, not {value!r}.") from None
    return max(lo, min(hi, number))


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "n/a"
        if abs(value) >= 1000 and float(value).is_integer():
            return str(int(value))
        return f"{value:.4f}".rstrip("0").rstrip(".") if abs(value) < 1 else f"{value:.2f}"
    try:
        number = float(value)  # numpy scalars
        return _fmt(int(number) if float(number).is_integer() and abs(number) >= 1000 else number)
    except (TypeError, ValueError):
        return str(value).replace("\n", " ")


def _short(exc: BaseException, limit: int = 600) -> str:
    """An error message, cut so that a huge argument echoed in it never floods the model's context."""
    text = str(exc).replace("\x00", "\\x00")
    return text if len(text) <= limit else text[: limit - 40] + " … (message cut) " + text[-20:]


_SUBJECTS = {
    "get_stock_data": "prices", "get_indicators": "indicators", "get_fundamentals": "fundamentals",
    "get_balance_sheet": "balance sheet", "get_cashflow": "cash-flow statement",
    "get_income_statement": "income statement", "get_news": "company news", "get_global_news": "global news",
    "get_social_posts": "social posts",
}


def _subject(name: str, kwargs: Mapping[str, Any]) -> str:
    """What a tool call was for, e.g. "fundamentals of NVDA" (named in its DATA_UNAVAILABLE result)."""
    what = _SUBJECTS.get(name, name)
    symbol = kwargs.get("symbol") or kwargs.get("ticker")
    if isinstance(symbol, str) and symbol.strip():
        return f"{what} of {symbol.strip().upper()[:24]}"
    return what


# Tool results of a source that gives a ``cache_token`` (the demo market: a pure function of its
# arguments), kept in-process so that repeated runs do not redo the same pandas work. Key: the
# token (today and the source's data methods), the tool, its arguments, the calling run's analysis
# date (the cut-off) and today; a result is the string the tool returned (no exception), so a hit
# gives the very bytes the tool would compute. Bounded, least recently used dropped.
_TONE_TAG = re.compile(r"\[(bullish|bearish|neutral)\]\s*$")
RESULT_CACHE_MAX = 256
_RESULTS: OrderedDict[tuple, str] = OrderedDict()
_RESULTS_LOCK = threading.Lock()


def clear_result_cache() -> None:
    """Drop the kept tool results (tests, and the bench when it times a cold run)."""
    with _RESULTS_LOCK:
        _RESULTS.clear()


def _result_key(provider: MarketData, name: str, cut: Callable[[], str | None],
                args: tuple, kwargs: Mapping[str, Any]) -> tuple | None:
    """The cache key of one tool call, or None when it must not be cached (no token, no date,
    an argument that cannot be hashed)."""
    try:
        token = provider.cache_token()
        if token is None:
            return None
        # each argument with its type: 1, 1.0 and True are equal keys but not the same argument
        key = (token, name, cut(), today().isoformat(), tuple((type(a), a) for a in args),
               tuple((k, type(v), v) for k, v in sorted(kwargs.items())))
        hash(key)
    except Exception:  # noqa: BLE001 - no date (ValidationError), an unhashable argument: just compute
        return None
    return key


def _safe(provider: MarketData, fn: Callable[..., str],
          cut: Callable[[], str | None] | None = None) -> Callable[..., str]:
    """Wrap a tool body so it never raises: errors become the sentinels, naming what is missing.

    With ``cut`` (the tools' cut-off date), results of a cacheable source are kept (``_RESULTS``).
    """

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        key = _result_key(provider, fn.__name__, cut, args, kwargs) if cut is not None else None
        if key is not None:
            with _RESULTS_LOCK:
                hit = _RESULTS.get(key)
                if hit is not None:
                    _RESULTS.move_to_end(key)
                    return hit
        try:
            out = fn(*args, **kwargs)
            if key is not None and isinstance(out, str):
                with _RESULTS_LOCK:
                    _RESULTS[key] = out
                    while len(_RESULTS) > RESULT_CACHE_MAX:
                        _RESULTS.popitem(last=False)
            return out
        except ValidationError as exc:
            return f"{INVALID} {_short(exc)} {_source(provider)}"
        except DataNotFound as exc:
            return f"{NO_DATA} {_subject(fn.__name__, kwargs)}: {_short(exc)} {NO_INVENT} {_source(provider)}"
        except ProviderUnavailable as exc:
            return (f"{DATA_UNAVAILABLE} {_subject(fn.__name__, kwargs)}: {_short(exc)} {NO_INVENT} "
                    f"{_source(provider)}")
        except Exception as exc:  # a tool never crashes the graph
            reason = f"{type(exc).__name__}: {_short(exc, 300)}"
            return (f"{DATA_UNAVAILABLE} {_subject(fn.__name__, kwargs)}: the data source failed ({reason}). "
                    f"{NO_INVENT} {_source(provider)}")

    wrapper.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]  (functools.wraps': fn's)
    return wrapper


def missing_data(text: object) -> str | None:
    """For a tool result without data, what was missing and why ("fundamentals of NVDA: Yahoo Finance
    could not be reached…"), without the do-not-invent advice; None for a result with data."""
    body = str(text).lstrip()
    for prefix in (DATA_UNAVAILABLE, NO_DATA):
        if body.startswith(prefix):
            body = body[len(prefix):].strip()
            return body.split(" " + NO_INVENT)[0].split(" (source: ")[0].strip()
    return None


def missing_from(texts: Iterable[object]) -> list[str]:
    """Every distinct ``missing_data`` line of a run's tool results, in order (for the report header)."""
    out: list[str] = []
    for text in texts:
        line = missing_data(text)
        if line and line not in out:
            out.append(line)
    return out


def _session_line(end: str, last: pd.Timestamp) -> str | None:
    """ "# Note: no session on 2024-05-11 (Saturday); using 2024-05-10" when the last row is not ``end``."""
    from tradingagents.dataflows.session import note_for

    note = note_for(end, last.date().isoformat())
    return f"# Note: {note}." if note else None


def _problem_lines(df: pd.DataFrame) -> list[str]:
    return [f"# Data problem: {p}" for p in df.attrs.get("problems", [])[:5]]


def _clean_prices(df: pd.DataFrame, start: str | None, end: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ProviderUnavailable("the data source returned something that is not a price table")
    missing = [c for c in ("Open", "High", "Low", "Close", "Volume") if c not in df.columns]
    if missing and len(df):
        raise ProviderUnavailable(f"the price table lacks the column(s) {', '.join(missing)}")
    out = clip_frame(df, start, end)
    if len(out):
        out = out.dropna(subset=["Close"])
    return out


def _stale(provider: MarketData, symbol: str, df: pd.DataFrame, start: str, end: str) -> str | None:
    last = df.index[-1]
    gap = (pd.Timestamp(end) - last).days
    if gap > STALE_DAYS and (pd.Timestamp(end) - pd.Timestamp(start)).days > STALE_DAYS:
        return (f"{DATA_UNAVAILABLE} the latest price of {symbol} is from {last.date()}, {gap} days before "
                f"{end}; the data looks stale. {NO_INVENT} {_source(provider)}")
    return None


class _Tool(StructuredTool):
    """``StructuredTool`` with its ``_run`` declared here, with evaluated annotations: LangChain reads the
    type hints of a tool's ``_run`` on every call (``BaseTool.run`` looks for its RunnableConfig
    parameter), and StructuredTool's own are strings (its module has ``from __future__ import
    annotations``), compiled anew each time. The same parameters, the same call."""

    def _run(
        self,
        *args: Any,
        config: RunnableConfig,
        run_manager: CallbackManagerForToolRun | None = None,
        **kwargs: Any,
    ) -> Any:
        return super()._run(*args, config=config, run_manager=run_manager, **kwargs)


# LangChain also reads the signatures of ``_run`` and of the tool's function on every call; they never
# change, so each is worked out once (``inspect.signature`` returns a callable's ``__signature__``)
_Tool._run.__signature__ = inspect.signature(_Tool._run)  # type: ignore[attr-defined]


def _validation_handler(provider: MarketData) -> Callable[[Exception], str]:
    def handle(exc: Exception) -> str:
        text = str(exc).replace("\n", " ")[:400]
        return (f"{INVALID} the tool arguments are not valid ({text}). Check the argument names and types. "
                f"{_source(provider)}")

    return handle


# ----------------------------------------------------------------------------------------------
# the tools
# ----------------------------------------------------------------------------------------------
def run_as_of() -> str:
    """The analysis date of the run calling a tool: ``configurable[AS_OF_KEY]`` of its RunnableConfig.

    LangChain puts the calling run's config in a context variable while a tool runs (and LangGraph
    hands every node the run config), so tools shared by many runs read each run's own date here.
    No date → ValidationError (a shared tool never guesses a cut-off). The variable is read as it is:
    ``ensure_config()`` would copy the whole config (LangGraph's configurable, the callbacks) to
    read one key, 2% of a run's CPU at a fast server.
    """
    from langchain_core.runnables.config import var_child_runnable_config

    value = ((var_child_runnable_config.get() or {}).get("configurable") or {}).get(AS_OF_KEY)
    if not value:
        raise ValidationError(
            f"No analysis date for this tool call: run it with configurable[{AS_OF_KEY!r}] = 'YYYY-MM-DD' "
            "(TradingAgentsGraph does), or build the tools with make_tools(config, as_of=date).")
    return validate_date(value)


def make_tools(config: Mapping[str, Any] | None = None, *, as_of: str | None = None,
               provider: MarketData | None = None, per_run: bool = False) -> dict[str, BaseTool]:
    """Every analyst tool by name, bound to the provider of ``config`` and clamped to ``as_of``.

    ``provider`` overrides the config's provider (tests inject failing ones). ``per_run=True`` builds
    tools for many runs: each call clamps to its run's date (``run_as_of()``) instead of ``as_of``.
    """
    provider = provider if provider is not None else get_provider(config)
    if per_run and as_of is not None:
        raise ValueError("make_tools: give either as_of (one date) or per_run=True (each run's date), not both")
    if as_of is not None:
        as_of = validate_date(as_of)
    fixed = as_of
    cut: Callable[[], str | None] = run_as_of if per_run else (lambda: fixed)
    src = _source(provider)

    def get_stock_data(
        symbol: Annotated[str, "Ticker symbol exactly as the Instrument line gives it (a suffix such as .T, an index ^)"],
        start_date: Annotated[str, "First date, YYYY-MM-DD"],
        end_date: Annotated[str, "Last date, YYYY-MM-DD (inclusive; clamped to the analysis date)"],
    ) -> str:
        """Daily OHLCV prices of a ticker between two dates, as a CSV table (Date,Open,High,Low,Close,Volume)."""
        t = validate_ticker(symbol)
        start = validate_date(start_date, allow_future=True)
        end = _clamp(end_date, cut(), "end_date")
        if start > end:
            return _no_data(provider, f"No prices for {t}: the range starts {start}, after the analysis date {end}.")
        df = _clean_prices(provider.ohlcv(t, start, end), start, end)
        if df.empty:
            return _no_data(provider, f"No prices for {t} between {start} and {end}.")
        stale = _stale(provider, t, df, start, end)
        if stale:
            return stale
        total = len(df)
        shown = df.tail(MAX_PRICE_ROWS)
        lines = [
            f"# Stock data for {t} from {start} to {end} {src}",
            f"# {total} trading days; nothing after {end}."
            + (f" Showing the last {len(shown)} rows." if total > len(shown) else ""),
            *[x for x in (_session_line(end, df.index[-1]),) if x],
            *_problem_lines(df),
            "Date,Open,High,Low,Close,Volume",
        ]
        cols = [shown[c].to_numpy() for c in ("Open", "High", "Low", "Close", "Volume")]
        for day, o, h, lo, c, v in zip(shown.index.strftime("%Y-%m-%d"), *cols, strict=True):
            volume = int(v) if v == v else 0  # NaN volume → 0
            lines.append(f"{day},{o:.2f},{h:.2f},{lo:.2f},{c:.2f},{volume}")
        return "\n".join(lines)

    def get_indicators(
        symbol: Annotated[str, "Ticker symbol"],
        indicator: Annotated[str, "One indicator name (or several separated by commas): " + ", ".join(SUPPORTED_INDICATORS)],
        curr_date: Annotated[str, "The current trading date, YYYY-MM-DD"],
        look_back_days: Annotated[int | str | None, "How many calendar days back to report (1-365)"] = 30,
    ) -> str:
        """A technical indicator of a ticker for each trading day of the look-back window, one `YYYY-MM-DD: value` line per day."""
        t = validate_ticker(symbol)
        end = _clamp(curr_date, cut(), "curr_date")
        look = _int_arg(look_back_days, "look_back_days", 1, 365, 30)
        names = [part.strip().lower() for part in str(indicator).split(",") if part.strip()]
        if not names:
            raise ValidationError(f"No indicator given. Accepted indicators: {', '.join(SUPPORTED_INDICATORS)}.")
        bad = [n for n in names if n not in SUPPORTED_INDICATORS]
        if bad:
            raise ValidationError(
                f"Unknown indicator {bad[0]!r}. Accepted indicators: {', '.join(SUPPORTED_INDICATORS)}.")
        window_start = (pd.Timestamp(end) - pd.Timedelta(days=look)).date().isoformat()
        fetch_start = (pd.Timestamp(end) - pd.Timedelta(days=look + WARMUP_DAYS)).date().isoformat()
        df = _clean_prices(provider.ohlcv(t, fetch_start, end), fetch_start, end)
        if df.empty:
            return _no_data(provider, f"No prices for {t} up to {end}, so no indicator can be computed.")
        stale = _stale(provider, t, df, window_start, end)
        if stale:
            return stale
        blocks = []
        for name in dict.fromkeys(names):
            series = compute_indicator(df, name)
            window = series.loc[series.index >= pd.Timestamp(window_start)]
            lines = [f"# {name} for {t} from {window_start} to {end} {src}",
                     f"# {SUPPORTED_INDICATORS[name]}",
                     *[x for x in (_session_line(end, df.index[-1]),) if x]]
            if len(df) < WARMUP_ROWS.get(name, 30):
                lines.append(f"# Only {len(df)} trading days of history; values need more are n/a.")
            if window.empty:
                lines.append(f"{NO_DATA} no trading day of {t} between {window_start} and {end}. {NO_INVENT}")
            for day, value in window.items():
                lines.append(f"{day.date()}: {'n/a' if pd.isna(value) else f'{value:.2f}'}")
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)

    def get_fundamentals(
        ticker: Annotated[str, "Ticker symbol"],
        curr_date: Annotated[str, "The current trading date, YYYY-MM-DD"],
    ) -> str:
        """Company fundamentals as of a date: valuation (market cap, P/E, P/B), margins, growth, leverage, dividends."""
        t = validate_ticker(ticker)
        day = _clamp(curr_date, cut(), "curr_date")
        data = provider.fundamentals(t, day)
        if not data:
            return _no_data(provider, f"No fundamentals for {t} as of {day}.")
        ident = {}
        try:
            ident = provider.identity(t)
        except Exception:  # identity is a nicety here
            ident = {}
        lines = [f"# Fundamentals of {t}" + (f" ({ident.get('name')})" if ident.get("name") else "")
                 + f" as of {day} {src}"]
        if isinstance(data.get("price_date"), str) and data["price_date"] < day:
            lines.extend(x for x in (_session_line(day, pd.Timestamp(data["price_date"])),) if x)
        for key, value in data.items():
            lines.append(f"{key}: {_fmt(value)}")
        return "\n".join(lines)

    def _statement(kind: str, ticker: str, freq: str, curr_date: str | None) -> str:
        t = validate_ticker(ticker)
        day = _clamp(curr_date if curr_date else (cut() or today().isoformat()), cut(), "curr_date")
        f = (freq or "quarterly").strip().lower() if isinstance(freq, str) else "quarterly"
        f = {"q": "quarterly", "quarter": "quarterly", "a": "annual", "yearly": "annual", "annually": "annual"}.get(f, f)
        if f not in STATEMENT_FREQS:
            raise ValidationError(f"Unknown freq {freq!r}. Accepted: {', '.join(STATEMENT_FREQS)}.")
        table = provider.statements(t, kind, f, day)
        if table is None or len(table) == 0 or len(table.columns) == 0:
            return _no_data(provider, f"No {f} {kind.replace('_', ' ')} of {t} reported by {day}.")
        cols = [c for c in table.columns if pd.Timestamp(c) <= pd.Timestamp(day)]
        if not cols:
            return _no_data(provider, f"No {f} {kind.replace('_', ' ')} period of {t} ended by {day}.")
        cols = sorted(cols, key=pd.Timestamp, reverse=True)
        title = kind.replace("_", " ").title()
        lines = [f"# {title} of {t}, {f}, periods reported by {day} {src}",
                 "Item," + ",".join(str(pd.Timestamp(c).date()) for c in cols)]
        for item, row in table[cols].iterrows():
            lines.append(f"{item}," + ",".join(_fmt(row[c]) for c in cols))
        return "\n".join(lines)

    def get_balance_sheet(
        ticker: Annotated[str, "Ticker symbol"],
        freq: Annotated[str, "quarterly or annual"] = "quarterly",
        curr_date: Annotated[str | None, "The current trading date, YYYY-MM-DD"] = None,
    ) -> str:
        """The balance sheet (assets, liabilities, debt, equity) for the periods reported by the date."""
        return _statement("balance_sheet", ticker, freq, curr_date)

    def get_cashflow(
        ticker: Annotated[str, "Ticker symbol"],
        freq: Annotated[str, "quarterly or annual"] = "quarterly",
        curr_date: Annotated[str | None, "The current trading date, YYYY-MM-DD"] = None,
    ) -> str:
        """The cash-flow statement (operating cash flow, capex, free cash flow, dividends, buybacks)."""
        return _statement("cashflow", ticker, freq, curr_date)

    def get_income_statement(
        ticker: Annotated[str, "Ticker symbol"],
        freq: Annotated[str, "quarterly or annual"] = "quarterly",
        curr_date: Annotated[str | None, "The current trading date, YYYY-MM-DD"] = None,
    ) -> str:
        """The income statement (revenue, margins, operating income, net income, EPS)."""
        return _statement("income_statement", ticker, freq, curr_date)

    def _tone_line(lines: list[str]) -> list[str]:
        """The headlines' tone tally by the word lexicon (``lexicon.tone``: distinct positive minus
        negative words of each headline with its lines; a headline tagged with its tone, ``[bullish]``, by
        that tag), so a count of positive headlines a report states is a count the data holds; [] without
        headlines."""
        from tradingagents.lexicon import tone

        tally = {"bullish": 0, "bearish": 0, "neutral": 0}
        for block in lines:
            tagged = _TONE_TAG.search(block.split("\n", 2)[1] if block.count("\n") >= 1 else "")
            if tagged:
                tally[tagged.group(1)] += 1
                continue
            parts = [p.strip().lstrip("#").strip() for p in block.splitlines() if p.strip()]
            score = tone(" ".join(parts))
            tally["bullish" if score > 0 else "bearish" if score < 0 else "neutral"] += 1
        if not lines:
            return []
        return ["# Headline tone (word lexicon): " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items()))]

    def _news_lines(items: list[dict[str, Any]], end: str, limit: int) -> list[str]:
        kept = [it for it in items if str(it.get("published", ""))[:10] <= end]
        kept.sort(key=lambda it: str(it.get("published", "")), reverse=True)
        lines = []
        for it in kept[:limit]:
            title = str(it.get("title", "")).replace("\n", " ").strip()
            summary = str(it.get("summary", "") or "").replace("\n", " ").strip()
            # a translated headline carries the tone its English twin reads as (the demo market's): tagged
            tag = f" [{it['tone']}]" if it.get("tone") in ("bullish", "bearish", "neutral") else ""
            lines.append(f"### {title}\n{it.get('published', '')} | {it.get('source', '')}{tag}\n{summary}".rstrip())
        return lines

    def get_news(
        ticker: Annotated[str, "Ticker symbol"],
        start_date: Annotated[str, "First date, YYYY-MM-DD"],
        end_date: Annotated[str, "Last date, YYYY-MM-DD (clamped to the analysis date)"],
    ) -> str:
        """Company news published between two dates, newest first (title, time, source, summary)."""
        t = validate_ticker(ticker)
        start = validate_date(start_date, allow_future=True)
        end = _clamp(end_date, cut(), "end_date")
        if start > end:
            return _no_data(provider, f"No news for {t}: the range starts {start}, after the analysis date {end}.")
        items = [it for it in provider.news(t, start, end) if start <= str(it.get("published", ""))[:10] <= end]
        if not items:
            return _no_data(provider, f"No news about {t} was published between {start} and {end}.")
        lines = _news_lines(items, end, MAX_NEWS_ITEMS)
        head = f"# News about {t} from {start} to {end}: {len(lines)} of {len(items)} items {src}"
        return "\n\n".join(["\n".join([head, *_tone_line(lines)]), *lines])

    def get_global_news(
        curr_date: Annotated[str, "The current trading date, YYYY-MM-DD"],
        look_back_days: Annotated[int | str | None, "How many calendar days back (1-90)"] = 7,
        limit: Annotated[int | str | None, "Maximum number of items (1-50)"] = 10,
    ) -> str:
        """Macro-economic and market-wide news of the days up to the date, newest first."""
        end = _clamp(curr_date, cut(), "curr_date")
        look = _int_arg(look_back_days, "look_back_days", 1, 90, 7)
        lim = _int_arg(limit, "limit", 1, 50, 10)
        start = (pd.Timestamp(end) - pd.Timedelta(days=look - 1)).date().isoformat()
        items = [it for it in provider.global_news(end, look) if start <= str(it.get("published", ""))[:10] <= end]
        if not items:
            return _no_data(provider, f"No global news was published between {start} and {end}.")
        lines = _news_lines(items, end, lim)
        head = f"# Global and macro news from {start} to {end}: {len(lines)} of {len(items)} items {src}"
        return "\n\n".join(["\n".join([head, *_tone_line(lines)]), *lines])

    def get_social_posts(
        ticker: Annotated[str, "Ticker symbol"],
        curr_date: Annotated[str, "The current trading date, YYYY-MM-DD"],
        look_back_days: Annotated[int | str | None, "How many calendar days back (1-30)"] = 7,
    ) -> str:
        """Recent social-media posts about a ticker (retail sentiment), newest first, with a tone tally."""
        t = validate_ticker(ticker)
        end = _clamp(curr_date, cut(), "curr_date")
        look = _int_arg(look_back_days, "look_back_days", 1, 30, 7)
        start = (pd.Timestamp(end) - pd.Timedelta(days=look - 1)).date().isoformat()
        posts = [p for p in provider.social(t, end, look) if start <= str(p.get("published", ""))[:10] <= end]
        if not posts:
            return _no_data(provider, f"No social posts about {t} between {start} and {end}.")
        posts.sort(key=lambda p: str(p.get("published", "")), reverse=True)
        tones: dict[str, int] = {}
        for p in posts:
            if p.get("tone"):
                tones[p["tone"]] = tones.get(p["tone"], 0) + 1
        lines = [f"# Social posts about {t} from {start} to {end}: {len(posts)} posts {src}"]
        if tones:
            lines.append("# Tone tally: " + ", ".join(f"{k} {v}" for k, v in sorted(tones.items())))
        for p in posts[:MAX_POSTS]:
            text = str(p.get("text", "")).replace("\n", " ").strip()
            extra = f" [{p['tone']}]" if p.get("tone") else ""
            lines.append(f"- {p.get('published', '')} @{p.get('author', 'unknown')}{extra} "
                         f"({p.get('likes', 0)} likes): {text}")
        return "\n".join(lines)

    funcs = [get_stock_data, get_indicators, get_fundamentals, get_balance_sheet, get_cashflow,
             get_income_statement, get_news, get_global_news, get_social_posts]
    tools: dict[str, BaseTool] = {}
    for fn in funcs:
        tool = _Tool.from_function(
            func=_safe(provider, fn, cut), name=fn.__name__, description=(fn.__doc__ or "").strip(),
            metadata={LOCAL_DATA: bool(getattr(provider, "local", False))},  # a stand-in without it: remote
        )
        tool.handle_validation_error = _validation_handler(provider)
        tool.handle_tool_error = True
        tools[fn.__name__] = tool
    return tools


_SHARED: OrderedDict[int, tuple[MarketData, dict[str, BaseTool]]] = OrderedDict()
_SHARED_LOCK = threading.Lock()
SHARED_TOOLS_MAX = 8


def shared_tools(config: Mapping[str, Any] | None = None) -> dict[str, BaseTool]:
    """``make_tools(config, per_run=True)``, built once per provider (building the schemas is the cost).

    Each call clamps to the calling run's ``configurable[AS_OF_KEY]``. At most ``SHARED_TOOLS_MAX``
    providers' tool sets are kept (least recently used dropped).
    """
    provider = get_provider(config)
    key = id(provider)
    with _SHARED_LOCK:
        hit = _SHARED.get(key)
        if hit is not None and hit[0] is provider:
            _SHARED.move_to_end(key)
            return hit[1]
    tools = make_tools(config, provider=provider, per_run=True)
    with _SHARED_LOCK:
        _SHARED[key] = (provider, tools)  # the provider is kept alive with it, so its id stays unique
        _SHARED.move_to_end(key)
        while len(_SHARED) > SHARED_TOOLS_MAX:
            _SHARED.popitem(last=False)
    return tools
