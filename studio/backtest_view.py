"""Figures and tables of the Backtest page (UI-neutral: no streamlit).

Everything is rendered from what the engine computed (``Backtest.compute``, ``live_equity``, the
manifest): no page re-derives a metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tradingagents import figures
from tradingagents.backtest.engine import TEAM, TEAM_NO_MEMORY, calls_per_step
from tradingagents.backtest.metrics import by_ticker
from tradingagents.backtest.report import COLUMNS, EXTRA, INTERVALS, control_lines, drawdown, fmt_ci
from tradingagents.figures import DASH
from tradingagents.rating import RATING_COLORS

LINE_STYLE = {TEAM: {"width": 3, "color": "#1f6feb"}, TEAM_NO_MEMORY: {"width": 2, "color": "#8250df", "dash": "dot"}}


def _go():
    import plotly.graph_objects as go

    return go


def estimate_steps(tickers: Sequence[str], start: str, end: str, every: int, compare_memory: bool,
                   control: int = 0) -> int:
    """Steps before planning (weekdays as trading days): for the cost estimate on the form
    (each no-edge world runs every step again)."""
    days = len(pd.bdate_range(start, end)) if start <= end else 0
    per_ticker = (days + every - 1) // every if days else 0
    return per_ticker * len(tickers) * ((2 if compare_memory else 1) + int(control or 0))


def cost_estimate_text(steps: int, config: Mapping[str, Any]) -> str:
    per = calls_per_step(config)
    return (f"About **{steps * per:,} model calls** ({steps} steps × ~{per} calls per analysis) with "
            f"{config.get('quick_think_llm')} / {config.get('deep_think_llm')}; no price is known for them here, "
            "so check your provider's pricing before starting.")


def paper_table(metrics: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Rows (ticker, strategy); columns CR %, ARR %, SR, MDD %, hit rate %, avg alpha %, turnover,
    then the 95% intervals of CR, SR and alpha, the alpha, the team's p vs Buy & Hold and the costs."""
    rows = []
    for ticker, by_strategy in by_ticker(dict(metrics)).items():
        for strategy, m in by_strategy.items():
            row: dict[str, Any] = {"Ticker": ticker, "Strategy": strategy}
            for key, label, pct in COLUMNS + EXTRA:
                v = m.get(key)
                row[label] = None if v is None else round(v * 100 if pct else v, 2)
            for key, label, pct in INTERVALS:
                v = m.get(key)
                if key.endswith("_ci"):
                    row[label] = fmt_ci(v, pct)
                else:
                    row[label] = None if v is None else round(v * 100 if pct else v, 3)
            row["Cost bps"] = m.get("cost_bps")
            rows.append(row)
    # an absent figure (no decision to score, too few days for an interval) reads as a dash, never "None"
    return pd.DataFrame(rows).map(lambda v: DASH if v is None or (isinstance(v, float) and v != v) else v)


def control_text(metrics: Mapping[str, Any]) -> list[str]:
    """The no-edge control's sentences (empty without ``--control``)."""
    return control_lines({"control": metrics.get("control")})


def equity_figure(days: Sequence[str], curves: Mapping[str, Sequence[float]], title: str = ""):
    go = _go()
    fig = go.Figure()
    for name, values in curves.items():
        style = LINE_STYLE.get(name, {"width": 1.4, "dash": "dash" if name.startswith("Benchmark") else None})
        fig.add_trace(go.Scatter(x=list(days[: len(values)]), y=list(values), mode="lines", name=name,
                                 line={k: v for k, v in style.items() if v is not None}))
    fig.update_layout(title=title or None, height=360, margin=dict(l=10, r=10, t=40 if title else 10, b=10),
                      yaxis_title="equity (1.0 = start)", legend=dict(orientation="h", y=-0.15))
    return fig


def drawdown_figure(days: Sequence[str], curves: Mapping[str, Sequence[float]]):
    go = _go()
    fig = go.Figure()
    for name, values in curves.items():
        if not (name.startswith("TradingAgents") or name == "Buy & Hold"):
            continue
        fig.add_trace(go.Scatter(x=list(days), y=[100 * x for x in drawdown(values)], mode="lines", name=name,
                                 fill="tozeroy" if name == TEAM else None))
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=10, b=10), yaxis_title="drawdown %",
                      legend=dict(orientation="h", y=-0.2))
    return fig


def ratings_figure(days: Sequence[str], closes: Sequence[float], decisions: Sequence[Mapping[str, Any]], ticker: str):
    """The close with each decision as a marker coloured by its rating."""
    go = _go()
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(days), y=list(closes), mode="lines", name=f"{ticker} close",
                             line=dict(color="#6e7781", width=1.4)))
    index = {d: i for i, d in enumerate(days)}
    by_rating: dict[str, list[Mapping[str, Any]]] = {}
    for d in decisions:
        if d["date"] in index:
            by_rating.setdefault(d["rating"], []).append(d)
    for rating, items in by_rating.items():
        fig.add_trace(go.Scatter(
            x=[d["date"] for d in items], y=[closes[index[d["date"]]] for d in items], mode="markers", name=rating,
            marker=dict(color=RATING_COLORS.get(rating, "#888"), size=9, line=dict(width=1, color="#fff")),
            hovertemplate="%{x}: " + rating + "<extra></extra>"))
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.2))
    return fig


def steps_frame(manifest: Mapping[str, Any], variant: str = TEAM) -> pd.DataFrame:
    """One row per finished step: ticker, date, rating, seconds, saved (reused), run folder."""
    rows = []
    for ticker, steps in (manifest.get("steps") or {}).get(variant, {}).items():
        for date, s in sorted(steps.items()):
            rows.append({"ticker": ticker, "date": date, "rating": s.get("rating") or DASH,
                         "seconds": DASH if s.get("elapsed_s") is None else round(float(s["elapsed_s"]), 1),
                         "reused": bool(s.get("reused")),
                         "resumed": bool(s.get("resumed")), "run folder": s.get("results_path")})
    return pd.DataFrame(rows, columns=["ticker", "date", "rating", "seconds", "reused", "resumed", "run folder"])


def steps_note(progress: Mapping[str, Any], shown: int) -> str | None:
    """The caption of the steps table, consistent with the progress bar: None when the table shows them all."""
    done = int(progress.get("done") or 0)
    if done == 0 and shown == 0:
        return "No step has finished yet."
    if shown < done:
        return f"{done} of {progress.get('total') or done} steps have finished; the table shows the {shown} saved so far."
    return None


def past_label(row: Mapping[str, Any], live: Mapping[str, Any] | None = None) -> str:
    """A past backtest in the picker: tickers, dates, and its state, from the running job when there is one
    (the folder's manifest lags behind it) so a finished backtest never reads "running (0/26)"."""
    spec = (row.get("args") or {}).get("spec", {})
    status, done, total = row.get("status"), row.get("done"), row.get("total")
    if live is not None:
        status, done, total = live.get("status") or status, live.get("done", done), live.get("total", total)
    if status == "finished" and total:
        done = total
    tickers = ", ".join(spec.get("tickers", [])) or DASH
    return (f"{tickers} · {figures.text(spec.get('start'))} → {figures.text(spec.get('end'))} · "
            f"{figures.text(status)} ({figures.text(done)}/{figures.text(total)} steps)")


def eta_text(progress: Mapping[str, Any]) -> str:
    from tradingagents.backtest.cli import format_duration

    done, total = progress.get("done", 0), progress.get("total", 0)
    parts = [f"Step {min(done + 1, total) if progress.get('status') == 'running' and done < total else done} of {total}"]
    if progress.get("current"):
        parts.append("now " + ", ".join(f"{t} {d}" for t, d in progress["current"]))
    if progress.get("eta_s") is not None and done < total:
        parts.append(f"ETA {format_duration(progress['eta_s'])}")
    if progress.get("step_s") is not None:
        parts.append(f"{progress['step_s']:.2f} s per step")
    return " · ".join(parts)
