"""Plotly figures and the small tables behind them (UI-neutral: no streamlit).

- ``price_history`` / ``price_figure``: candlestick with moving averages, volume and the decision marked;
  prices come from the configured provider up to the analysis date, never after.
- ``timeline_figure``: per-agent Gantt-like timeline from node_started/node_finished intervals.
- ``log_frame``, ``rating_stats``, ``equity_curve`` and the memory-log figures.
"""

from __future__ import annotations

import datetime as _dt
import functools
import html
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tradingagents import figures, team
from tradingagents.i18n import N_, Translator, rating_label, translator
from tradingagents.rating import RATING_COLORS, was_right
from tradingagents.rating import RATINGS_5_TIER as RATINGS

if TYPE_CHECKING:  # pandas and plotly are imported lazily: the first render stays light
    import pandas as pd
    import plotly.graph_objects as go


def _t(t: Translator | None) -> Translator:
    """The caller's translator, English by default (pages that do not pass one keep their English)."""
    return t if t is not None else translator("en")


def _go():
    # plotly peeks at sys.modules for pandas: while the app's warm-up thread is still importing it,
    # plotly would see a half-initialised module. A real import waits for the other thread to finish.
    import pandas  # noqa: F401
    import plotly.graph_objects as go

    return go


def _subplots(**kwargs):
    _go()
    from plotly.subplots import make_subplots

    return make_subplots(**kwargs)


PLOTLY_TEXTS = (
    N_("Autoscale"), N_("Box Select"), N_("Lasso Select"), N_("Pan"), N_("Reset axes"), N_("Zoom"), N_("Zoom in"),
    N_("Zoom out"), N_("Download plot as a png"), N_("Download plot as a PNG"), N_("Download plot"), N_("Produced with Plotly.js"),
    N_("Toggle Spike Lines"), N_("Show closest data on hover"), N_("Compare data on hover"),
    N_("Double-click to zoom back out"), N_("Snapshot succeeded"), N_("Taking snapshot - this may take a few seconds"),
    N_("Sorry, there was a problem downloading your snapshot!"), N_("open:"), N_("high:"), N_("low:"), N_("close:"),
)
"""Plotly's own words (its mode bar's buttons, the candlestick's hover), translated through its locale option."""


def plotly_config(t: Translator | None = None) -> dict[str, Any]:
    """``st.plotly_chart(config=…)`` in ``t``'s language: Plotly's mode bar and month names come from a
    locale given inline (Plotly's ``locales`` option; nothing is fetched). Empty for English."""
    t = _t(t)
    if t.lang == "en":
        return {}
    months = [t("{n} month", n=i) for i in range(1, 13)]
    return {"locale": t.lang, "locales": {t.lang: {
        "dictionary": {msg: t(msg) for msg in PLOTLY_TEXTS},
        "format": {"months": months, "shortMonths": months,
                   "days": [t("Sunday"), t("Monday"), t("Tuesday"), t("Wednesday"), t("Thursday"), t("Friday"),
                            t("Saturday")],
                   "shortDays": [t("Sun"), t("Mon"), t("Tue"), t("Wed"), t("Thu"), t("Fri"), t("Sat")],
                   "date": "%Y-%m-%d"}}}}


TEAM_COLORS = dict(zip(team.TEAMS, ("#2E9BFF", "#9B51E0", "#F2C94C", "#F2994A", "#1DB954"), strict=True))
# no template of our own: st.plotly_chart's default theme="streamlit" follows the page's light or dark theme
_LAYOUT = dict(
    paper_bgcolor="rgba(0,0,0,0)",
    plot_bgcolor="rgba(0,0,0,0)",
    margin=dict(l=10, r=10, t=40, b=10),
    font=dict(size=12),
)


# ---------------------------------------------------------------------------------------------
# price chart
# ---------------------------------------------------------------------------------------------
def price_history(config: Mapping[str, Any], ticker: str, date: str, lookback_days: int = 180) -> pd.DataFrame:
    """Daily OHLCV of ``ticker`` for ~``lookback_days`` calendar days up to ``date`` (inclusive).

    Rows dated after ``date`` are dropped even if a provider returned them.
    """
    import pandas as pd

    from tradingagents.dataflows import get_provider

    end = _dt.date.fromisoformat(date)
    start = (end - _dt.timedelta(days=lookback_days)).isoformat()
    df = get_provider(dict(config)).ohlcv(ticker, start, end.isoformat())
    if df is None or len(df) == 0:
        return pd.DataFrame(columns=["Open", "High", "Low", "Close", "Volume"])
    df = df.copy()
    idx = pd.DatetimeIndex(pd.to_datetime(df.index))
    if idx.tz is not None:
        idx = idx.tz_localize(None)
    df.index = idx.normalize()
    return df.loc[df.index <= pd.Timestamp(end)].sort_index()


def decision_marker(rating: str | None, high: float, low: float) -> tuple[str, float, str]:
    """(symbol, y, text position) of the decision on the price chart: a bullish tier points up from
    under the day's low, a bearish one down from above its high, Hold (or none) is a diamond above."""
    from tradingagents.rating import direction

    side = direction(rating) if rating in RATINGS else 0
    if side > 0:
        return "triangle-up", low * 0.98, "bottom center"
    if side < 0:
        return "triangle-down", high * 1.02, "top center"
    return "diamond", high * 1.02, "top center"


def price_figure(df: pd.DataFrame, ticker: str, date: str, rating: str | None = None, *,
                 t: Translator | None = None) -> go.Figure:
    """Candlestick + SMA 20/50 + volume, with the decision day marked by the rating; rising days in the
    listing's colour (``theme.price_colors``: red up for China and Hong Kong listings)."""
    import pandas as pd

    from studio.theme import price_colors

    t = _t(t)
    go = _go()
    rise, fall = price_colors(ticker)  # red up on Shanghai, Shenzhen and Hong Kong
    fig = _subplots(rows=2, cols=1, shared_xaxes=True, row_heights=[0.75, 0.25], vertical_spacing=0.03)
    if len(df):
        fig.add_trace(
            go.Candlestick(x=df.index, open=df["Open"], high=df["High"], low=df["Low"], close=df["Close"],
                           name=ticker, increasing_line_color=rise, decreasing_line_color=fall),
            row=1, col=1,
        )
        for window, color in ((20, "#2E9BFF"), (50, "#F2C94C")):
            if len(df) >= 2:
                fig.add_trace(
                    go.Scatter(x=df.index, y=df["Close"].rolling(window, min_periods=min(window, 5)).mean(),
                               name=f"SMA {window}", line=dict(width=1.5, color=color)),
                    row=1, col=1,
                )
        colors = [rise if c >= o else fall for o, c in zip(df["Open"], df["Close"], strict=False)]
        fig.add_trace(go.Bar(x=df.index, y=df["Volume"], name=t("Volume"), marker_color=colors, opacity=0.6),
                      row=2, col=1)
        day = pd.Timestamp(date)
        on_or_before = df.loc[df.index <= day]
        if len(on_or_before):
            mark_x = on_or_before.index[-1]
            label = rating_label(rating, t.lang) if rating else t("Decision")
            symbol, mark_y, where = decision_marker(rating, float(on_or_before["High"].iloc[-1]),
                                                    float(on_or_before["Low"].iloc[-1]))
            fig.add_trace(
                go.Scatter(x=[mark_x], y=[mark_y], mode="markers+text", text=[label],
                           textposition=where, name=t("Decision: {rating}", rating=label),
                           marker=dict(symbol=symbol, size=16,
                                       color=RATING_COLORS.get(rating or "", "#FFFFFF"))),
                row=1, col=1,
            )
            fig.add_vline(x=mark_x, line_dash="dot", line_color="#8A93A6")
    if df.attrs.get("data_source") == "synthetic demo data":  # the demo market's prices say so on the chart
        fig.add_annotation(text=t("synthetic demo data"), xref="paper", yref="paper", x=0.5, y=0.62,
                           showarrow=False, textangle=-12, font=dict(size=30, color="rgba(138,147,166,0.28)"))
    fig.update_layout(**_LAYOUT, height=520, xaxis_rangeslider_visible=False,
                      legend=dict(orientation="h", y=1.02, x=0, yanchor="bottom"))
    fig.update_yaxes(title_text=t("Price"), row=1, col=1)
    fig.update_yaxes(title_text=t("Volume"), row=2, col=1)
    return fig


# ---------------------------------------------------------------------------------------------
# run timeline
# ---------------------------------------------------------------------------------------------
def timeline_figure(intervals: list[dict[str, Any]], *, now: float | None = None,
                    order: list[str] | None = None, t: Translator | None = None) -> go.Figure:
    """Horizontal bars per agent (seconds since the first node started), coloured by team."""
    import time

    t = _t(t)
    go = _go()
    now = time.time() if now is None else now
    fig = go.Figure()
    if intervals:
        t0 = min(iv["start"] for iv in intervals)
        agents = order or list(dict.fromkeys(iv["agent"] for iv in intervals))
        seen_teams: set[str] = set()
        for iv in intervals:
            end = iv["end"] if iv.get("end") is not None else now
            team = iv.get("team") or ""
            fig.add_trace(go.Bar(
                y=[iv["agent"]], x=[max(end - iv["start"], 0.001)], base=[iv["start"] - t0],
                orientation="h", marker_color=TEAM_COLORS.get(team, "#8A93A6"),
                name=t.p("team", team) if team else team, legendgroup=team, showlegend=team not in seen_teams,
                hovertemplate=f"{iv['node']}<br>%{{base:.2f}}s → {end - t0:.2f}s<extra></extra>",
            ))
            seen_teams.add(team)
        fig.update_yaxes(categoryorder="array", categoryarray=list(reversed(agents)))
    fig.update_layout(**_LAYOUT, barmode="overlay", height=max(260, 28 * len({i["agent"] for i in intervals}) + 80),
                      title=t("Agent timeline"), xaxis_title=t("seconds since start"),
                      legend=dict(orientation="h", y=1.08, x=0))
    return fig


def timeline_html(intervals: list[dict[str, Any]], *, now: float | None = None,
                  order: list[str] | None = None, t: Translator | None = None) -> str:
    """A light HTML Gantt of the same intervals, for the live view (no plotly on every poll)."""
    import time

    now = time.time() if now is None else now
    if not intervals:
        t = _t(t)
        return f'<div class="ta-gantt empty">{html.escape(t("The timeline starts with the first agent."))}</div>'
    t0 = min(iv["start"] for iv in intervals)
    t1 = max((iv["end"] if iv.get("end") is not None else now) for iv in intervals)
    span = max(t1 - t0, 1e-3)
    agents = order or list(dict.fromkeys(iv["agent"] for iv in intervals))
    rows = []
    for agent in agents:
        bars = []
        for iv in intervals:
            if iv["agent"] != agent:
                continue
            end = iv["end"] if iv.get("end") is not None else now
            left = (iv["start"] - t0) / span * 100
            width = max((end - iv["start"]) / span * 100, 0.6)
            color = TEAM_COLORS.get(iv.get("team") or "", "#8A93A6")
            live = " live" if iv.get("end") is None else ""
            bars.append(f'<i class="bar{live}" style="left:{left:.2f}%;width:{width:.2f}%;background:{color}" '
                        f'title="{html.escape(iv["node"])}: {end - iv["start"]:.2f}s"></i>')
        rows.append(f'<div class="row"><span class="name">{html.escape(agent)}</span>'
                    f'<span class="track">{"".join(bars)}</span></div>')
    return (f'<div class="ta-gantt">{"".join(rows)}<div class="axis">0s'
            f'<span>{span:.1f}s</span></div></div>')


# ---------------------------------------------------------------------------------------------
# memory log analytics
# ---------------------------------------------------------------------------------------------
LOG_COLUMNS = ["date", "ticker", "rating", "status", "raw", "alpha", "holding",
               "entry_price", "exit_price", "bench_raw", "benchmark", "end_date"]
_NUMERIC = ("raw", "alpha", "entry_price", "exit_price", "bench_raw")
DASH = figures.DASH
"""What a value that does not exist (yet) shows as: never "None" or "nan"."""
MAX_TICKER_LINES = 12
# A line of a log chart draws at most this many points: 20,000 entries as 15,000 markers took
# Chromium seconds to draw (the Memory log page stopped changing after ~15 s); the first and the
# last point and evenly spaced ones between them keep the line's course.
MAX_LINE_POINTS = 400


def thin_index(n: int, max_points: int = MAX_LINE_POINTS):
    """Positions to draw of a line of ``n`` points: all of them up to ``max_points``, else evenly
    spaced ones including the first and the last."""
    import numpy as np

    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max_points).round().astype(np.int64))


def _text_or_none(value: Any) -> str | None:
    return None if value is None or (isinstance(value, float) and value != value) else str(value)


def log_frame(entries: list[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per log entry: date, ticker, rating, status (pending/settled), raw, alpha, holding,
    and, when the log carries them, entry/exit price, the benchmark's return, benchmark and end date."""
    import pandas as pd

    rows = [
        (str(e.get("date", "")), str(e.get("ticker", "")), str(e.get("rating", "")),
         "pending" if e.get("pending") else "settled", e.get("raw"), e.get("alpha"), e.get("holding"),
         e.get("entry_price"), e.get("exit_price"), e.get("bench_raw"),
         _text_or_none(e.get("benchmark")), _text_or_none(e.get("end_date")))
        for e in entries
    ]
    df = pd.DataFrame(rows, columns=LOG_COLUMNS)
    for col in _NUMERIC:
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    df["holding"] = pd.to_numeric(df["holding"], errors="coerce").astype("Int64")
    return df.sort_values(["date", "ticker"], kind="stable").reset_index(drop=True)


def settled_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df[(df["status"] == "settled") & df["alpha"].notna()]


def fmt_pct(value: Any) -> str:
    return figures.pct(value, digits=2)


def fmt_price(value: Any) -> str:
    return figures.plain_price(value)


def fmt_text(value: Any) -> str:
    return figures.text(_text_or_none(value))


def bench_returns(df: pd.DataFrame) -> pd.Series:
    """The benchmark's return over each decision's window: the logged one, else raw − alpha (alpha is
    defined as raw minus the benchmark's return, so this is the same number)."""
    return df["bench_raw"].where(df["bench_raw"].notna(), df["raw"] - df["alpha"])


def status_label(status: str, t: Translator | None = None) -> str:
    """A log entry's status as shown ("pending" / "settled"; the log keeps the English word)."""
    t = _t(t)
    if status == "pending":
        return t.p("settlement", "pending")
    if status == "settled":
        return t.p("settlement", "settled")
    return status


def rating_stats(df: pd.DataFrame) -> pd.DataFrame:
    """Per rating (settled entries only): count, hits, hit rate and average alpha, in tier order.

    A hit is ``rating.was_right(rating, alpha)`` on the log's exact alpha: the rule reflections use.
    """
    import pandas as pd

    settled = settled_rows(df)
    rows = []
    for rating in RATINGS:
        part = settled[settled["rating"] == rating]
        if not len(part):
            continue
        hits = sum(bool(was_right(rating, float(a))) for a in part["alpha"])
        rows.append({"rating": rating, "count": len(part), "hits": hits, "hit_rate": hits / len(part),
                     "avg_alpha": float(part["alpha"].mean())})
    return pd.DataFrame(rows, columns=["rating", "count", "hits", "hit_rate", "avg_alpha"])


def _exit_day(date: Any, end_date: Any, holding: Any) -> str:
    """The day a decision's window closed: the logged exit date, else the decision date plus its
    holding days in business days (an older entry without the exit date)."""
    if isinstance(end_date, str) and end_date:
        return end_date
    try:
        days = int(holding)
    except (TypeError, ValueError):
        days = 0
    return _business_days_after(str(date), days)


@functools.lru_cache(maxsize=65536)
def _business_days_after(date: str, days: int) -> str:
    """``date`` plus ``days`` business days (ISO text); a log repeats the same (date, holding) pairs,
    and one pandas offset costs ~50 µs: 15,000 settled entries re-did the same few hundred sums."""
    import pandas as pd

    start = pd.Timestamp(date)
    return (start + pd.offsets.BDay(days)).date().isoformat() if days > 0 else start.date().isoformat()


def cumulative_alpha_by_ticker(df: pd.DataFrame) -> pd.DataFrame:
    """Per ticker, in date order: its alphas compounded over decisions whose windows do not overlap.

    A decision made while the ticker's previous counted decision is still open (its window has not
    closed) is skipped, so no day is counted twice (five daily decisions with 5-day windows are one
    window, not five); ``cum_alpha`` is the product of (1 + alpha) so far, minus 1. Never across tickers.
    """
    import pandas as pd

    settled = settled_rows(df).sort_values(["ticker", "date"], kind="stable")
    rows = []
    last_exit: dict[str, str] = {}
    growth: dict[str, float] = {}
    for rec in settled.itertuples(index=False):
        ticker = str(rec.ticker)
        if ticker in last_exit and str(rec.date) < last_exit[ticker]:
            continue  # inside the previous counted window: overlapping
        last_exit[ticker] = _exit_day(rec.date, rec.end_date, rec.holding)
        growth[ticker] = growth.get(ticker, 1.0) * (1.0 + float(rec.alpha))
        rows.append({"date": rec.date, "ticker": ticker, "alpha": float(rec.alpha), "cum_alpha": growth[ticker] - 1.0})
    return pd.DataFrame(rows, columns=["date", "ticker", "alpha", "cum_alpha"])


CUMULATIVE_ALPHA_CAPTION = N_(
    "Each ticker's alpha compounded over its decisions whose holding windows do not overlap: a decision "
    "made while the previous counted one was still open is left out, so no day counts twice."
)


def cumulative_alpha_figure(df: pd.DataFrame, max_tickers: int = MAX_TICKER_LINES, *,
                            t: Translator | None = None) -> go.Figure:
    """One line per ticker (the ``max_tickers`` with the most settled decisions)."""
    import pandas as pd

    t = _t(t)
    go = _go()
    hover = t("compounded alpha")
    cum = cumulative_alpha_by_ticker(df)
    top = cum["ticker"].value_counts(sort=True).index[:max_tickers]
    fig = go.Figure()
    for ticker in sorted(top):
        part = cum[cum["ticker"] == ticker]
        thinned = len(part) > MAX_LINE_POINTS
        part = part.iloc[thin_index(len(part))]
        fig.add_trace(go.Scatter(
            x=pd.to_datetime(part["date"]), y=part["cum_alpha"] * 100, mode="lines" if thinned else "lines+markers",
            name=ticker,
            marker=dict(size=5), hovertemplate=f"{ticker} %{{x|%Y-%m-%d}}<br>{hover} %{{y:+.2f}}%"
                                               "<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=t("Compounded alpha per ticker (non-overlapping windows)"),
                      yaxis_title=t("compounded alpha (%)"),
                      height=360, xaxis=dict(type="date", tickformat="%Y-%m-%d"),
                      yaxis=dict(ticksuffix="%", zeroline=True), legend=dict(orientation="h", y=-0.2, x=0))
    return fig


def equity_curve(df: pd.DataFrame, positions: Callable[[pd.DataFrame], Sequence[float]] | None = None) -> pd.DataFrame:
    """Growth of 1 from following the settled decisions, against holding the benchmark instead.

    Each decision takes a position on its ticker over its holding window: ``rating.direction`` (+1 long,
    −1 short, 0 flat for Hold) unless ``positions`` gives them (called with the settled rows, in the order
    below, it returns one size per row: the Memory log's long-only rules). A window's return is position ×
    raw return, floored at −100 %; the windows are compounded in the order they closed (overlapping windows
    are not netted). The benchmark line compounds the benchmark's return over the same windows.
    """
    import numpy as np

    from tradingagents.rating import direction

    settled = settled_rows(df)
    settled = settled[settled["raw"].notna()].copy()
    # each point sits on the day its window closed (the last priced day of the decision), in that order:
    # the line never steps back to a decision date, so it ends at the last priced day, not in a cliff
    settled["when"] = [_exit_day(d, e, h) for d, e, h in zip(settled["date"], settled["end_date"],
                                                            settled["holding"], strict=True)]
    settled = settled.sort_values(["when", "date", "ticker"], kind="stable")
    sizes = positions(settled) if positions is not None else [direction(r) for r in settled["rating"]]
    pos = np.array(sizes, dtype="float64")
    strat = np.maximum(1.0 + pos * settled["raw"].to_numpy(), 0.0)
    bench = np.maximum(1.0 + bench_returns(settled).to_numpy(), 0.0)
    out = settled[["date", "ticker", "rating", "when"]].copy()
    with np.errstate(divide="ignore"):
        out["strategy"] = np.exp(np.cumsum(np.log(strat))) if len(strat) else []
        out["benchmark"] = np.exp(np.cumsum(np.log(bench))) if len(bench) else []
    return out.reset_index(drop=True)


def equity_figure(curve: pd.DataFrame, *, t: Translator | None = None) -> go.Figure:
    import pandas as pd

    t = _t(t)
    go = _go()
    decisions, benchmark, extra = t("following the decisions"), t("benchmark"), t("decisions")
    curve = curve.iloc[thin_index(len(curve))]
    x = pd.to_datetime(curve["when"])
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=curve["strategy"], name=decisions, mode="lines",
                             line=dict(color="#2E9BFF", width=2),
                             hovertemplate=f"%{{x|%Y-%m-%d}}<br>%{{y:.3f}}<extra>{html.escape(extra)}</extra>"))
    fig.add_trace(go.Scatter(x=x, y=curve["benchmark"], name=benchmark, mode="lines",
                             line=dict(color="#8A93A6", width=2, dash="dot"),
                             hovertemplate=f"%{{x|%Y-%m-%d}}<br>%{{y:.3f}}<extra>{html.escape(benchmark)}</extra>"))
    fig.update_layout(**_LAYOUT, title=t("Equity: following the decisions vs the benchmark"), height=360,
                      yaxis_title=t("growth of 1"), xaxis=dict(type="date", tickformat="%Y-%m-%d"),
                      legend=dict(orientation="h", y=-0.2, x=0))
    return fig


def hit_rate_figure(stats: pd.DataFrame, *, t: Translator | None = None) -> go.Figure:
    """One bar per rating (tier order): the hit rate, labelled with hits and count. Nothing else."""
    t = _t(t)
    go = _go()
    fig = go.Figure(go.Bar(
        x=[rating_label(r, t.lang) for r in stats["rating"]], y=stats["hit_rate"] * 100,
        marker_color=[RATING_COLORS.get(r, "#8A93A6") for r in stats["rating"]],
        text=[t("{rate} · {hits} of {n}", rate=f"{h:.0%}", hits=k, n=n)
              for h, k, n in zip(stats["hit_rate"], stats["hits"], stats["count"], strict=True)],
        textposition="outside", cliponaxis=False,
        hovertemplate="%{x}: %{text}<extra></extra>",
    ))
    fig.update_traces(width=min(0.6, 0.15 * max(len(stats), 1)))
    fig.update_layout(**_LAYOUT, title=t("Hit rate by rating"), height=340, showlegend=False,
                      xaxis=dict(type="category", categoryorder="array",
                                 categoryarray=[rating_label(r, t.lang) for r in RATINGS]),
                      yaxis=dict(title=t("hit rate"), range=[0, 110], tickvals=[0, 25, 50, 75, 100],
                                 ticksuffix="%"))
    return fig


def score_bars_figure(matches: list[Mapping[str, Any]], *, t: Translator | None = None) -> go.Figure:
    """Normalised BM25 score of each memory match as a horizontal bar."""
    t = _t(t)
    go = _go()
    labels = [f"#{i + 1}" for i in range(len(matches))]
    scores = [float(m.get("similarity_score", 0.0)) for m in matches]
    fig = go.Figure(go.Bar(x=scores, y=labels, orientation="h", marker_color="#2E9BFF",
                           text=[f"{s:.2f}" for s in scores], textposition="auto"))
    fig.update_layout(**_LAYOUT, height=60 + 36 * max(1, len(matches)), xaxis=dict(range=[0, 1.05]),
                      yaxis=dict(autorange="reversed"), title=t("Normalised score"))
    return fig


def attribution_rows(base_rating: str | None, attribution: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``meta.attribution`` as rows: each analyst, the rating without it and the shift in tiers
    (+ toward Buy, − toward Sell; None for a rating off the scale), in the order the run had them."""
    rows = []
    for key, rating in (attribution or {}).items():
        shift = None
        if base_rating in RATINGS and rating in RATINGS:
            shift = RATINGS.index(base_rating) - RATINGS.index(rating)
        rows.append({"analyst": key, "rating": rating, "shift": shift})
    return rows


def attribution_figure(base_rating: str | None, attribution: Mapping[str, Any], *,
                       t: Translator | None = None) -> go.Figure:
    """"What moved the decision": one bar per analyst, how many tiers the rating moves when that
    analyst is dropped (right: toward Buy, left: toward Sell), labelled with the rating without it."""
    t = _t(t)
    go = _go()
    rows = attribution_rows(base_rating, attribution)
    nodes = [team.ROLES[r["analyst"]].node if r["analyst"] in team.ROLES else None for r in rows]
    names = [t.p("role", node) if node else str(r["analyst"]) for node, r in zip(nodes, rows, strict=True)]
    shifts = [r["shift"] or 0 for r in rows]
    labels = [t("without it: {rating}", rating=rating_label(r["rating"], t.lang)) for r in rows]
    fig = go.Figure(go.Bar(
        x=shifts, y=names, orientation="h", text=labels, textposition="outside", cliponaxis=False,
        marker_color=[RATING_COLORS.get(r["rating"], "#8A93A6") for r in rows],
        hovertemplate="%{y}: %{text} (%{x:+d})<extra></extra>",
    ))
    reach = max([abs(s) for s in shifts] + [1]) + 1.5
    fig.update_layout(**_LAYOUT, title=t("What moved the decision"), height=80 + 44 * max(1, len(rows)),
                      showlegend=False, yaxis=dict(autorange="reversed"),
                      xaxis=dict(title=t("tiers moved when the analyst is dropped (base: {rating})",
                                         rating=rating_label(base_rating, t.lang)),
                                 range=[-reach, reach], dtick=1, zeroline=True))
    return fig
