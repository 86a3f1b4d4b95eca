"""The backtest report: the paper-style table and the charts, as Markdown and as one HTML file.

The HTML page is self-contained (inline CSS and inline SVG charts: no script, no network), so it
can be mailed or archived as it is. Nothing here reads data: it renders what ``Backtest.compute``
returned.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents.backtest.metrics import by_ticker
from tradingagents.rating import RATING_COLORS_ON_WHITE as RATING_COLOURS
from tradingagents.rating import RATING_SCORE

PORTFOLIO = "PORTFOLIO"

COLUMNS = (("cr", "CR %", True), ("arr", "ARR %", True), ("sharpe", "SR", False), ("mdd", "MDD %", True))
EXTRA = (("hit_rate", "Hit rate %", True), ("avg_alpha", "Avg alpha %", True), ("turnover", "Turnover", False))
INTERVALS = (("cr_ci", "CR 95% CI", True), ("sharpe_ci", "SR 95% CI", False), ("alpha", "Alpha %/yr", True),
             ("alpha_ci", "Alpha 95% CI", True), ("p_value_vs_buy_hold", "p vs B&H", False))
PALETTE = ("#1f6feb", "#8250df", "#bf8700", "#1a7f37", "#cf222e", "#6e7781", "#0a3069", "#953800")


def fmt(value: Any, pct: bool) -> str:
    if value is None:
        return "–"
    return f"{value * 100:+.2f}" if pct and not isinstance(value, str) else f"{value:.2f}"


def fmt_ci(value: Any, pct: bool) -> str:
    """``[-3.10, +12.40]`` (percent when ``pct``), ``–`` when unknown."""
    if not value:
        return "–"
    lo, hi = value
    return f"[{fmt(lo, pct)}, {fmt(hi, pct)}]"


def table_rows(metrics: Mapping[str, Any]) -> list[list[str]]:
    """One row per strategy: name, CR %, ARR %, SR, MDD %, hit rate %, avg alpha %, turnover, then
    the 95% intervals of CR and SR, Jensen's alpha and its interval, and the team's p vs Buy & Hold."""
    rows = []
    for strategy, m in metrics.items():
        row = [strategy]
        for key, _label, pct in COLUMNS + EXTRA:
            v = m.get(key)
            unsigned = key in ("mdd", "hit_rate")  # a size, not a gain or a loss
            row.append("–" if v is None else (f"{v * 100:.2f}" if unsigned else fmt(v, pct)))
        for key, _label, pct in INTERVALS:
            v = m.get(key)
            if key.endswith("_ci"):
                row.append(fmt_ci(v, pct))
            elif key == "p_value_vs_buy_hold":
                row.append("–" if v is None else f"{v:.3f}")
            else:
                row.append(fmt(v, pct))
        rows.append(row)
    return rows


def _header() -> list[str]:
    return ["Strategy", *(label for _, label, _ in COLUMNS + EXTRA + INTERVALS)]


def _day_count(data: Mapping[str, Any], plans: Mapping[str, Any], key: str) -> tuple[int, int | None]:
    if key in plans:
        return len(plans[key].days), len(plans[key].steps)
    return len((data.get("days") or {}).get(key, ())), None


def control_lines(data: Mapping[str, Any]) -> list[str]:
    """One sentence per ticker (and the book) on the no-edge worlds, with the distribution."""
    control = data.get("control")
    if not control:
        return []
    out = []
    for key, c in control["by_ticker"].items():
        e = c["excess_cr"]
        out.append(f"{key}: {c['text']} Excess CR over Buy & Hold in the worlds: mean {fmt(e['mean'], True)}%, "
                   f"5–95% [{fmt(e['p05'], True)}, {fmt(e['p95'], True)}]%; the real result is above "
                   f"{c['real_beats_share_of_worlds'] * 100:.0f}% of them.")
    return out


def cost_text(spec: Mapping[str, Any]) -> str:
    bps = float(spec.get("cost_bps") or 0.0)
    return (f"Costs: {bps:g} bps per unit of turnover, on every strategy (the benchmark index is not traded)"
            + (" — the paper's setting (no costs)" if bps == 0 else ""))


def markdown(info: Mapping[str, Any], plans: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    spec = info["spec"]
    lines = [f"# Backtest {', '.join(spec['tickers'])}: {spec['start']} → {spec['end']}", ""]
    lines += [f"- Decisions every {spec['every']} trading day(s); positions: "
              + ", ".join(f"{k} {v}" for k, v in info["positions"].items())
              + ("; short selling allowed" if spec["allow_short"] else "; long-only"),
              f"- {cost_text(spec)}",
              f"- Intervals: 95%, stationary block bootstrap of daily returns (seed {spec['seed']})"
              + (f"; the watchlist as one book ({spec['portfolio']} weights): {PORTFOLIO}" if spec.get("portfolio")
                 else ""),
              f"- Model: {info['llm']}; data: {info['data']}"
              + ("; **blind run** (the models saw aliases, dates shifted by whole years and rebased prices)"
                 if spec.get("blind") else ""),
              f"- Folder: `{info['folder']}`", ""]
    lines.append("CR = cumulative return, ARR = annualised return, SR = Sharpe ratio (daily, risk-free 0, ×√252), "
                 "MDD = maximum drawdown; hit rate and alpha over the holding window of each decision.")
    lines.append("")
    for ticker, metrics in by_ticker(data["metrics"]).items():
        n_days, n_steps = _day_count(data, plans, ticker)
        what = f"{n_steps} decisions" if n_steps is not None else "the book of every ticker"
        lines.append(f"## {ticker} ({n_days} trading days, {what})")
        lines.append("")
        head = _header()
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for row in table_rows(metrics):
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    for note in data.get("notes") or []:
        lines.append(f"> {note}")
    lines.append("")
    if data.get("control"):
        lines.append(f"## No-edge control ({data['control']['worlds']} random-walk worlds)")
        lines.append("")
        lines += [f"- {line}" for line in control_lines(data)]
        lines.append("")
    lines.append("## Decisions")
    lines.append("")
    lines.append("| date | ticker | rating | position | alpha % |")
    lines.append("|---|---|---|---:|---:|")
    for row in data["decisions"].get("TradingAgents", []):
        lines.append(f"| {row['date']} | {row['ticker']} | {row['rating']} | {row['position']:g} | "
                     f"{fmt(row['alpha'], True)} |")
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------------------- SVG
COLOURS = {"TradingAgents": "#1f6feb", "TradingAgents (no memory)": "#8250df", "Buy & Hold": "#bf8700",
           "MACD": "#1a7f37", "KDJ & RSI": "#cf222e", "ZMR": "#6e7781", "SMA": "#0a3069"}


def colour_of(name: str, i: int) -> str:
    """A strategy keeps its colour on every chart; benchmarks and others take the palette."""
    return COLOURS.get(name) or ("#953800" if name.startswith("Benchmark") else PALETTE[i % len(PALETTE)])


def line_chart_svg(series: Mapping[str, Sequence[float]], days: Sequence[str], *, title: str,
                   width: int = 760, height: int = 260, pct: bool = False,
                   markers: Sequence[tuple[int, float, str, str]] = ()) -> str:
    """An inline SVG of several lines on one axis; markers are (x index, y, colour, tooltip)."""
    all_values = [v for s in series.values() for v in s] + [m[1] for m in markers]
    if not all_values or not days:
        return ""
    lo, hi = min(all_values), max(all_values)
    span = (hi - lo) or 1.0
    left, right, top, bottom = 40, 12, 40, 24
    n = max(1, len(days) - 1)

    def x_at(i: float) -> float:
        return left + i / n * (width - left - right)

    def y_at(v: float) -> float:
        return top + (1 - (v - lo) / span) * (height - top - bottom)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
             f'aria-label="{html.escape(title)}" class="chart">',
             f'<text x="{left}" y="14" class="t">{html.escape(title)}</text>']
    for frac in (0.0, 0.5, 1.0):
        v = lo + frac * (hi - lo)
        y = y_at(v)
        label = f"{v * 100:.0f}%" if pct else f"{v:.2f}"
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{y:.1f}" y2="{y:.1f}" class="g"/>'
                     f'<text x="2" y="{y + 4:.1f}" class="a">{label}</text>')
    parts.append(f'<text x="{left}" y="{height - 6}" class="a">{html.escape(days[0])}</text>'
                 f'<text x="{width - right}" y="{height - 6}" class="a" text-anchor="end">{html.escape(days[-1])}</text>')
    legend_x = left
    for i, (name, values) in enumerate(series.items()):
        colour = colour_of(name, i)
        points = " ".join(f"{x_at(j):.1f},{y_at(v):.1f}" for j, v in enumerate(values))
        bold = ' stroke-width="2.4"' if name == "TradingAgents" else ""
        dash = ' stroke-dasharray="5 3"' if name.startswith("Benchmark") or "no memory" in name else ""
        parts.append(f'<polyline fill="none" stroke="{colour}"{bold}{dash} points="{points}">'
                     f'<title>{html.escape(name)}</title></polyline>')
        parts.append(f'<text x="{legend_x}" y="30" fill="{colour}" class="l">■ {html.escape(name)}</text>')
        legend_x += 24 + 7 * len(name)
    for idx, value, colour, tip in markers:
        parts.append(f'<circle cx="{x_at(idx):.1f}" cy="{y_at(value):.1f}" r="3.5" fill="{colour}">'
                     f'<title>{html.escape(tip)}</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def drawdown(equity: Sequence[float]) -> list[float]:
    peak, out = float("-inf"), []
    for x in equity:
        peak = max(peak, x)
        out.append(x / peak - 1.0)
    return out


CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#1f2328}
table{border-collapse:collapse;margin:8px 0 18px}td,th{border-bottom:1px solid #d0d7de;padding:4px 10px}
td:not(:first-child),th:not(:first-child){text-align:right}th{background:#f6f8fa}
tr.team td{font-weight:600}.chart{width:100%;height:auto;margin:6px 0 14px}.chart .t{font-weight:600;font-size:13px}
.chart .a{font-size:10px;fill:#57606a}.chart .l{font-size:10px}.chart .g{stroke:#eaeef2}
.chart polyline{stroke-width:1.3}.note{color:#57606a}code{background:#f6f8fa;padding:1px 4px}"""


def html_page(info: Mapping[str, Any], plans: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    spec = info["spec"]
    title = f"Backtest {', '.join(spec['tickers'])}: {spec['start']} → {spec['end']}"
    body = [f"<h1>{html.escape(title)}</h1>",
            f"<p class='note'>Decisions every {spec['every']} trading day(s); positions "
            + html.escape(", ".join(f"{k} {v}" for k, v in info["positions"].items()))
            + f". {html.escape(cost_text(spec))}. 95% intervals from a stationary block bootstrap. Model: {html.escape(str(info['llm']))}; data: "
            f"{html.escape(str(info['data']))}. Folder <code>{html.escape(info['folder'])}</code>.</p>",
            "<p class='note'>CR cumulative return, ARR annualised return, SR Sharpe ratio, MDD maximum drawdown.</p>"]
    for ticker, metrics in by_ticker(data["metrics"]).items():
        plan = plans.get(ticker)
        curves = data["equity"][ticker]
        body.append(f"<h2>{html.escape(ticker)}</h2>")
        body.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in _header()) + "</tr>")
        for row in table_rows(metrics):
            cls = ' class="team"' if row[0].startswith("TradingAgents") else ""
            body.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
        body.append("</table>")
        days = plan.days if plan is not None else data["days"][ticker]
        body.append(line_chart_svg(curves, days, title=f"{ticker}: equity (1.0 = start)"))
        dd = {k: drawdown(v) for k, v in curves.items() if k.startswith("TradingAgents") or k == "Buy & Hold"}
        body.append(line_chart_svg(dd, days, title=f"{ticker}: drawdown", pct=True, height=200))
        if plan is None:
            continue
        index = {d: i for i, d in enumerate(plan.days)}
        marks = [(index[r["date"]], plan.closes[index[r["date"]]], RATING_COLOURS.get(r["rating"], "#6e7781"),
                  f"{r['date']}: {r['rating']} (position {r['position']:g})")
                 for r in data["decisions"].get("TradingAgents", []) if r["ticker"] == ticker and r["date"] in index]
        body.append(line_chart_svg({f"{ticker} close": plan.closes}, plan.days,
                                   title=f"{ticker}: the team's ratings over the price", markers=marks))
    for note in data.get("notes") or []:
        body.append(f"<p class='note'>{html.escape(note)}</p>")
    if data.get("control"):
        body.append(f"<h2>No-edge control ({data['control']['worlds']} random-walk worlds)</h2><ul>")
        body += [f"<li>{html.escape(line)}</li>" for line in control_lines(data)]
        body.append("</ul>")
    body.append("<h2>Decisions</h2><table><tr><th>date</th><th>ticker</th><th>rating</th><th>position</th>"
                "<th>alpha %</th></tr>")
    for r in data["decisions"].get("TradingAgents", []):
        score = RATING_SCORE.get(r["rating"], 0)
        body.append(f"<tr data-score='{score}'><td>{r['date']}</td><td>{html.escape(r['ticker'])}</td>"
                    f"<td>{html.escape(str(r['rating']))}</td><td>{r['position']:g}</td>"
                    f"<td>{fmt(r['alpha'], True)}</td></tr>")
    body.append("</table>")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
