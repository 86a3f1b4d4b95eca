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
from tradingagents.backtest.report import (
    COLUMNS,
    EXTRA,
    INTERVALS,
    control_lines,
    drawdown,
    fmt_ci,
)
from tradingagents.backtest.report import (
    SIGNIFICANCE as SIGNIFICANCE,  # the page's caption and the tests read them here (re-exported)
)
from tradingagents.backtest.report import (
    YEAR_DAYS as YEAR_DAYS,
)
from tradingagents.backtest.report import edge_verdict as report_verdict
from tradingagents.backtest.report import (
    short_period as short_period,
)
from tradingagents.figures import DASH
from tradingagents.i18n import N_, Translator, rating_label, translator
from tradingagents.rating import RATING_COLORS

LINE_STYLE = {TEAM: {"width": 3, "color": "#1f6feb"}, TEAM_NO_MEMORY: {"width": 2, "color": "#8250df", "dash": "dot"}}


STRATEGY_NAMES = {
    TEAM: N_("TradingAgents"), TEAM_NO_MEMORY: N_("TradingAgents (no memory)"), "Buy & Hold": N_("Buy & Hold"),
    "PORTFOLIO": N_("PORTFOLIO"),
}
"""Strategies and books whose names are words (MACD, KDJ & RSI, ZMR, SMA are indicator names, shown as they are)."""

COLUMN_NAMES = {
    "Ticker": N_("Ticker"), "Strategy": N_("Strategy"), "CR %": N_("CR %"), "ARR %": N_("ARR %"), "SR": N_("SR"),
    "MDD %": N_("MDD %"), "Hit rate %": N_("Hit rate %"), "Avg alpha %": N_("Avg alpha %"),
    "Turnover": N_("Turnover"), "CR 95% CI": N_("CR 95% CI"), "SR 95% CI": N_("SR 95% CI"),
    "Alpha %/yr": N_("Alpha %/yr"), "Alpha 95% CI": N_("Alpha 95% CI"), "p vs B&H": N_("p vs B&H"),
    "Cost bps": N_("Cost bps"),
}
"""The paper table's headers (the engine's report labels) as the page shows them."""


def _t(t: Translator | None) -> Translator:
    return t if t is not None else translator("en")


def strategy_name(name: str, t: Translator | None = None) -> str:
    """A strategy's name in ``t``'s language ("Benchmark (SPY)" keeps its ticker)."""
    t = _t(t)
    if name in STRATEGY_NAMES:
        return t(STRATEGY_NAMES[name])
    if name.startswith("Benchmark"):
        return t("Benchmark{rest}", rest=name[len("Benchmark"):])
    return name


_DATE_AXIS = dict(type="date", tickformat="%Y-%m-%d", hoverformat="%Y-%m-%d")
"""Days as numbers (2024-06-03), in every language: no month names on the axis."""


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


def cost_estimate_text(steps: int, config: Mapping[str, Any], *, t: Translator | None = None) -> str:
    per = calls_per_step(config)
    t = _t(t)
    return t("About **{calls} model calls** ({steps} steps × ~{per} calls per analysis) with {quick} / {deep}; "
                 "no price is known for them here, so check your provider's pricing before starting.",
                 calls=f"{steps * per:,}", steps=steps, per=per, quick=config.get("quick_think_llm"),
                 deep=config.get("deep_think_llm"))


SHOWN_ORDER = ("Ticker", "Strategy", "CR %", "CR 95% CI", "p vs B&H", "SR", "SR 95% CI", "MDD %", "Hit rate %",
               "Avg alpha %", "Alpha %/yr", "Alpha 95% CI", "ARR %", "Turnover", "Cost bps")
"""The page's column order: the cumulative return, its interval and the p-value first (a wide table
scrolls sideways; what decides the verdict is never off screen)."""
ANNUALISED = ("ARR %", "Alpha %/yr")


def paper_table(metrics: Mapping[str, Mapping[str, Any]], *, t: Translator | None = None,
                days: int | None = None) -> pd.DataFrame:
    """Rows (ticker, strategy); columns CR %, its 95% interval, the team's p vs Buy & Hold, SR and its
    interval, MDD %, hit rate %, avg alpha %, alpha and its interval, ARR %, turnover and the costs
    (``SHOWN_ORDER``; headers and strategy names in ``t``'s language, English by default). ``days``: the
    period's trading days when under a year (``short_period``): the annualised figures are then dashes."""
    t = _t(t)
    rows = []
    for ticker, by_strategy in by_ticker(dict(metrics)).items():
        for strategy, m in by_strategy.items():
            row: dict[str, Any] = {"Ticker": strategy_name(ticker, t), "Strategy": strategy_name(strategy, t)}
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
    table = pd.DataFrame(rows)
    if days is not None and not table.empty:
        for column in ANNUALISED:
            table[column] = None
    table = table.map(lambda v: DASH if v is None or (isinstance(v, float) and v != v) else v)
    table = table[[c for c in SHOWN_ORDER if c in table.columns] + [c for c in table.columns if c not in SHOWN_ORDER]]
    return table.rename(columns={c: t(COLUMN_NAMES[c]) for c in table.columns if c in COLUMN_NAMES})


def control_text(metrics: Mapping[str, Any], *, t: Translator | None = None) -> list[str]:
    """The no-edge control's sentences in ``t``'s language (empty without ``--control``)."""
    return control_lines({"control": metrics.get("control")}, t=_t(t))


def equity_figure(days: Sequence[str], curves: Mapping[str, Sequence[float]], title: str = "", *,
                  t: Translator | None = None):
    t = _t(t)
    go = _go()
    fig = go.Figure()
    for name, values in curves.items():
        style = LINE_STYLE.get(name, {"width": 1.4, "dash": "dash" if name.startswith("Benchmark") else None})
        fig.add_trace(go.Scatter(x=list(days[: len(values)]), y=list(values), mode="lines", name=strategy_name(name, t),
                                 line={k: v for k, v in style.items() if v is not None}))
    fig.update_layout(title=title or None, height=360, margin=dict(l=10, r=10, t=40 if title else 10, b=10),
                      xaxis=_DATE_AXIS,
                      yaxis_title=t("equity (1.0 = start)"), legend=dict(orientation="h", y=-0.15))
    return fig


def drawdown_figure(days: Sequence[str], curves: Mapping[str, Sequence[float]], *, t: Translator | None = None):
    t = _t(t)
    go = _go()
    fig = go.Figure()
    for name, values in curves.items():
        if not (name.startswith("TradingAgents") or name == "Buy & Hold"):
            continue
        fig.add_trace(go.Scatter(x=list(days), y=[100 * x for x in drawdown(values)], mode="lines",
                                 name=strategy_name(name, t),
                                 fill="tozeroy" if name == TEAM else None))
    fig.update_layout(height=260, margin=dict(l=10, r=10, t=10, b=10), yaxis_title=t("drawdown %"), xaxis=_DATE_AXIS,
                      legend=dict(orientation="h", y=-0.2))
    return fig


def ratings_figure(days: Sequence[str], closes: Sequence[float], decisions: Sequence[Mapping[str, Any]], ticker: str,
                   *, t: Translator | None = None):
    """The close with each decision as a marker coloured by its rating."""
    t = _t(t)
    go = _go()
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=list(days), y=list(closes), mode="lines", name=t("{ticker} close", ticker=ticker),
                             line=dict(color="#6e7781", width=1.4)))
    index = {d: i for i, d in enumerate(days)}
    by_rating: dict[str, list[Mapping[str, Any]]] = {}
    for d in decisions:
        if d["date"] in index:
            by_rating.setdefault(d["rating"], []).append(d)
    for rating, items in by_rating.items():
        fig.add_trace(go.Scatter(
            x=[d["date"] for d in items], y=[closes[index[d["date"]]] for d in items], mode="markers",
            name=rating_label(rating, t.lang),
            marker=dict(color=RATING_COLORS.get(rating, "#888"), size=9, line=dict(width=1, color="#fff")),
            hovertemplate="%{x}: " + rating_label(rating, t.lang) + "<extra></extra>"))
    fig.update_layout(height=320, margin=dict(l=10, r=10, t=10, b=10), legend=dict(orientation="h", y=-0.2),
                      xaxis=_DATE_AXIS)
    return fig


STEP_COLUMNS = {"ticker": N_("ticker"), "date": N_("date"), "rating": N_("rating"), "seconds": N_("seconds"),
                "reused": N_("reused"), "resumed": N_("resumed")}
"""The steps table's headers as shown (``steps_frame`` keeps the English keys the page reads)."""


def steps_display(frame: pd.DataFrame, *, t: Translator | None = None) -> pd.DataFrame:
    """``steps_frame`` without its folder column, ratings and headers in ``t``'s language."""
    t = _t(t)
    out = frame.drop(columns=["run folder"]).copy()
    out["rating"] = [rating_label(r, t.lang) for r in out["rating"]]
    return out.rename(columns={c: t(STEP_COLUMNS[c]) for c in out.columns if c in STEP_COLUMNS})


EFFECT_COLUMNS = {"ticker": N_("ticker"), "date": N_("date"), "with_memory": N_("with memory"),
                  "without_memory": N_("without memory"), "alpha": N_("alpha"),
                  "alpha_difference": N_("alpha difference")}


def effect_table(decisions: Sequence[Mapping[str, Any]], *, t: Translator | None = None) -> pd.DataFrame:
    """The memory ablation's differing decisions: ratings shown in ``t``'s language, headers too."""
    t = _t(t)
    frame = pd.DataFrame(list(decisions))
    for col in frame.columns:
        if frame[col].dtype == object and frame[col].isin(list(RATING_COLORS)).any():
            frame[col] = [rating_label(v, t.lang) if isinstance(v, str) else v for v in frame[col]]
    return frame.rename(columns={c: t(EFFECT_COLUMNS[c]) for c in frame.columns if c in EFFECT_COLUMNS})


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


def steps_note(progress: Mapping[str, Any], shown: int, *, t: Translator | None = None) -> str | None:
    """The caption of the steps table, consistent with the progress bar: None when the table shows them all."""
    t = _t(t)
    done = int(progress.get("done") or 0)
    if done == 0 and shown == 0:
        return t("No step has finished yet.")
    if shown < done:
        return t("{done} of {total} steps have finished; the table shows the {shown} saved so far.", done=done,
                 total=progress.get("total") or done, shown=shown)
    return None


STATUS_NAMES = {"planned": N_("planned"), "running": N_("running"), "stopping": N_("stopping"),
                "stopped": N_("stopped"), "failed": N_("failed"), "finished": N_("finished"), "queued": N_("queued"),
                "crashed": N_("crashed")}
"""A backtest's state as shown (the manifest keeps the English word)."""


def status_name(status: Any, t: Translator | None = None) -> str:
    text = figures.text(status)
    t = _t(t)
    return t(STATUS_NAMES[text]) if text in STATUS_NAMES else text


def past_label(row: Mapping[str, Any], live: Mapping[str, Any] | None = None, *, t: Translator | None = None) -> str:
    """A past backtest in the picker: tickers, dates, and its state, from the running job when there is one
    (the folder's manifest lags behind it) so a finished backtest never reads "running (0/26)"."""
    spec = (row.get("args") or {}).get("spec", {})
    status, done, total = row.get("status"), row.get("done"), row.get("total")
    if live is not None:
        status, done, total = live.get("status") or status, live.get("done", done), live.get("total", total)
    if status == "finished" and total:
        done = total
    tickers = ", ".join(spec.get("tickers", [])) or DASH
    t = _t(t)
    label = t("{tickers} · {start} → {end} · {status} ({done}/{total} steps)", tickers=tickers,
              start=figures.text(spec.get("start")), end=figures.text(spec.get("end")), status=status_name(status, t),
              done=figures.text(done), total=figures.text(total))
    return label + " · " + t("Blind") if spec.get("blind") else label  # a blind backtest is said so in the picker


def eta_text(progress: Mapping[str, Any], *, t: Translator | None = None) -> str:
    from tradingagents.backtest.cli import format_duration

    t = _t(t)
    done, total = progress.get("done", 0), progress.get("total", 0)
    step = min(done + 1, total) if progress.get("status") == "running" and done < total else done
    parts = [t("Step {step} of {total}", step=step, total=total)]
    if progress.get("current"):
        parts.append(t("now {what}", what=", ".join(f"{tk} {d}" for tk, d in progress["current"])))
    if progress.get("eta_s") is not None and done < total:
        parts.append(t("ETA {duration}", duration=format_duration(progress["eta_s"])))
    if progress.get("step_s") is not None:
        parts.append(t("{seconds} s per step", seconds=f"{progress['step_s']:.2f}"))
    return " · ".join(parts)


def home_path(path: Any, home: Any) -> str:
    """A folder as the page shows it: relative to the home folder (``backtests/ab12…``, ``results/NVDA/…``),
    so a shared desk's page never shows the server's file system; a path outside the home keeps its name only."""
    from pathlib import Path

    if not path:
        return DASH
    p = Path(str(path))
    try:
        return str(p.resolve().relative_to(Path(str(home)).resolve()))
    except (ValueError, OSError):
        return p.name or str(path)


# --------------------------------------------------------------------------------------------- the verdict
def edge_verdict(metrics: Mapping[str, Any], *, t: Translator | None = None) -> dict[str, Any]:
    """The engine's verdict on the edge (``backtest.report.edge_verdict``), names in ``t``'s language."""
    t = _t(t)
    return report_verdict(metrics, t=t, name=lambda key: strategy_name(key, t))


def forest_figure(metrics: Mapping[str, Any], *, t: Translator | None = None):
    """A forest plot: each strategy's cumulative return with its 95% interval, one row per ticker and
    strategy, Buy & Hold's result as a dashed line per ticker (the team's row in the team's colour)."""
    t = _t(t)
    go = _go()
    fig = go.Figure()
    names, xs, lows, highs, colours = [], [], [], [], []
    for key, by_strategy in by_ticker(dict(metrics)).items():
        for strategy, m in by_strategy.items():
            if m.get("cr") is None:
                continue
            ci = m.get("cr_ci") or (m["cr"], m["cr"])
            names.append(f"{strategy_name(key, t)} · {strategy_name(strategy, t)}")
            xs.append(100 * m["cr"])
            lows.append(100 * (m["cr"] - ci[0]))
            highs.append(100 * (ci[1] - m["cr"]))
            colours.append(LINE_STYLE.get(strategy, {}).get("color", "#6e7781"))
    fig.add_trace(go.Scatter(x=xs, y=names, mode="markers", marker=dict(color=colours, size=9),
                             error_x=dict(type="data", symmetric=False, array=highs, arrayminus=lows, thickness=1.6),
                             hovertemplate="%{y}: %{x:.1f}%<extra></extra>", showlegend=False))
    fig.add_vline(x=0, line=dict(color="#888", width=1))
    fig.update_layout(height=max(220, 28 * len(names) + 80), margin=dict(l=10, r=10, t=10, b=10),
                      xaxis_title=t("cumulative return % (95% interval)"),
                      yaxis=dict(autorange="reversed", automargin=True))
    return fig
