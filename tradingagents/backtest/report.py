"""The backtest report: the paper-style table and the charts, as Markdown and as one HTML file.

The HTML page is self-contained (inline CSS and inline SVG charts: no script, no network), so it
can be mailed or archived as it is. Nothing here reads data: it renders what ``Backtest.compute``
returned.

Both are written in a language (``lang``: "en", "zh"; None: the run's ``info["ui_language"]``, else
the config's ``ui_language`` / ``TRADINGAGENTS_UI_LANGUAGE``, else English). Strategy names, tickers,
dates, figures and the canonical rating names in the decisions' data stay as they are; what is shown
of them (a rating, "Buy & Hold") is translated.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents.backtest.metrics import by_ticker
from tradingagents.i18n import N_, Translator, rating_label, translator
from tradingagents.rating import RATING_COLORS_ON_WHITE as RATING_COLOURS
from tradingagents.rating import RATING_SCORE
from tradingagents.vendors import product_label

PORTFOLIO = "PORTFOLIO"

COLUMNS = (("cr", "CR %", True), ("arr", "ARR %", True), ("sharpe", "SR", False), ("mdd", "MDD %", True))
EXTRA = (("hit_rate", N_("Hit rate %"), True), ("avg_alpha", N_("Avg alpha %"), True),
         ("turnover", N_("Turnover"), False))
INTERVALS = (("cr_ci", N_("CR 95% CI"), True), ("sharpe_ci", N_("SR 95% CI"), False),
             ("alpha", N_("Alpha %/yr"), True), ("alpha_ci", N_("Alpha 95% CI"), True),
             ("p_value_vs_buy_hold", N_("p vs B&H"), False))
"""The table's columns: (metric key, English label, percent?). The paper's abbreviations CR, ARR, SR and
MDD are kept in every language (the legend says what they are); the other labels are marked for the
catalogue (show one with ``t(label)``)."""


STRATEGY_NAMES = {"Buy & Hold": N_("Buy & Hold"), "TradingAgents (no memory)": N_("TradingAgents (no memory)")}


def report_translator(info: Mapping[str, Any] | None = None, lang: str | None = None) -> Translator:
    """The report's language: ``lang``, else ``info["ui_language"]``, else the config's ``ui_language``
    (``TRADINGAGENTS_UI_LANGUAGE``), else English."""
    if lang is None and info:
        lang = info.get("ui_language")
    if lang is None:
        try:
            from tradingagents.config import resolve_config

            lang = resolve_config({}).get("ui_language")
        except Exception:  # noqa: BLE001 - a broken setting was refused where the run began; English here
            lang = None
    return translator(lang)


def strategy_label(name: str, t: Translator | None = None) -> str:
    """A strategy's name as shown ("Buy & Hold" → 买入持有); MACD, SMA, … are names in every language."""
    t = t or translator("en")
    if name in STRATEGY_NAMES:
        return t(STRATEGY_NAMES[name])
    if name.startswith("Benchmark (") and name.endswith(")"):
        return t("Benchmark ({symbol})", symbol=name[len("Benchmark ("):-1])
    return name
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


ANNUALISED_KEYS = ("arr", "alpha")
"""The annualised figures, withheld (a dash) over less than a year (``short_period``)."""


def table_rows(metrics: Mapping[str, Any], *, t: Translator | None = None,
               annualised: bool = True) -> list[list[str]]:
    """One row per strategy: name, CR %, ARR %, SR, MDD %, hit rate %, avg alpha %, turnover, then
    the 95% intervals of CR and SR, Jensen's alpha and its interval, and the team's p vs Buy & Hold
    (the name as ``t`` shows it; None: the name itself). ``annualised`` False: ARR and alpha per year
    are dashes (the period is under a year)."""
    rows = []
    for strategy, m in metrics.items():
        row = [strategy_label(strategy, t) if t is not None else strategy]
        if not annualised:
            m = {k: v for k, v in m.items() if k not in ANNUALISED_KEYS}
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


def _header(t: Translator | None = None) -> list[str]:
    t = t or translator("en")
    return [t("Strategy"), *(t(label) for _, label, _ in COLUMNS + EXTRA + INTERVALS)]


def _day_count(data: Mapping[str, Any], plans: Mapping[str, Any], key: str) -> tuple[int, int | None]:
    if key in plans:
        return len(plans[key].days), len(plans[key].steps)
    return len((data.get("days") or {}).get(key, ())), None


def control_lines(data: Mapping[str, Any], *, t: Translator | None = None) -> list[str]:
    """One sentence per ticker (and the book) on the no-edge worlds, with the distribution (``t``: the
    language; the engine's own sentence about the worlds, ``text``, stays as the engine wrote it)."""
    t = t or translator("en")
    control = data.get("control")
    if not control:
        return []
    out = []
    for key, c in control["by_ticker"].items():
        e = c["excess_cr"]
        text = c["text"]
        if c.get("beat_buy_hold") is not None and c.get("worlds") and c.get("real_excess_cr") is not None:
            # the engine's sentence said again in the report's language (its own text is English)
            text = t("The team beat Buy & Hold in {beat} of {worlds} worlds with no edge; on the real prices its "
                     "cumulative return over Buy & Hold's was {excess}%.", beat=c["beat_buy_hold"],
                     worlds=c["worlds"], excess=f"{c['real_excess_cr'] * 100:+.2f}")
        out.append(t("{key}: {text} Excess CR over Buy & Hold in the worlds: mean {mean}%, 5–95% [{p05}, {p95}]%; "
                     "the real result is above {share}% of them.", key=key, text=text,
                     mean=fmt(e["mean"], True), p05=fmt(e["p05"], True), p95=fmt(e["p95"], True),
                     share=f"{c['real_beats_share_of_worlds'] * 100:.0f}"))
    return out


SIGNIFICANCE = 0.05
"""The one-sided p vs Buy & Hold under which the team's excess return counts as evidence (with the no-edge
control, its real result must also lie above the worlds' 95th percentile)."""
YEAR_DAYS = 252
"""Trading days in a year: an annualised figure over fewer days is not shown (four months of +20% would
read as ARR +70%)."""


def _pts(value: float) -> str:
    """Percentage points, signed: whole points from 10 up, one decimal under (+1.1, −61)."""
    pts = value * 100
    return (f"{pts:+.1f}" if abs(pts) < 9.95 else f"{pts:+.0f}").replace("-", "−")


def edge_verdict(metrics: Mapping[str, Any], *, t: Translator | None = None,
                 name: Any = None) -> dict[str, Any]:
    """The verdict on the team's edge from the backtest's own statistics: per ticker (and the book) the
    team's cumulative return against Buy & Hold in points, its one-sided p vs Buy & Hold, and where the
    real result falls in the no-edge worlds (with ``--control``). ``evidence`` is True when the team is
    ahead with p < ``SIGNIFICANCE`` and, with a control, above the worlds' 95th percentile.

    Returns {evidence, headline, lines}: the headline is the book's verdict (or the one ticker's, or a
    count over the tickers); ``lines`` one sentence per ticker and the book (when there are several).
    ``name``: how a ticker or the book is named (default ``strategy_label``)."""
    t = t or translator("en")
    name = name or (lambda key: strategy_label(key, t))
    control = (metrics.get("control") or {}).get("by_ticker") or {}
    rows = []
    for key, by_strategy in by_ticker(dict(metrics)).items():
        team, bh = by_strategy.get("TradingAgents") or {}, by_strategy.get("Buy & Hold") or {}
        if team.get("cr") is None or bh.get("cr") is None:
            continue
        excess = team["cr"] - bh["cr"]
        p = team.get("p_value_vs_buy_hold")
        c = control.get(key)
        place = None
        if c and c.get("excess_cr", {}).get("p05") is not None:
            lo, hi = c["excess_cr"]["p05"], c["excess_cr"]["p95"]
            place = "above" if excess > hi else "below" if excess < lo else "inside"
        evidence = excess > 0 and p is not None and p < SIGNIFICANCE and place in (None, "above")
        fields = {"pts": _pts(excess), "p": "–" if p is None else f"{p:.3f}", "key": name(key)}
        where = {"above": t(", above the no-skill range"), "below": t(", below the no-skill range"),
                 "inside": t(", inside the no-skill range"), None: ""}[place]
        text = (t("Evidence of edge: {pts} pts against Buy & Hold, p = {p}{where}", where=where, **fields) if evidence
                else t("No evidence of edge: {pts} pts against Buy & Hold, p = {p}{where}", where=where, **fields))
        rows.append({"key": key, "evidence": evidence, "text": text,
                     "line": t("{key}: {verdict}", key=fields["key"], verdict=text)})
    if not rows:
        return {"evidence": False, "headline": t("No verdict: the team or Buy & Hold has no result to compare."),
                "lines": []}
    main = next((r for r in rows if r["key"] == PORTFOLIO), rows[0] if len(rows) == 1 else None)
    if main is not None:
        headline, evidence = main["text"], main["evidence"]
    else:
        won = sum(1 for r in rows if r["evidence"])
        evidence = won == len(rows)
        headline = (t("Evidence of edge on {n} of {total} tickers", n=won, total=len(rows)) if won else
                    t("No evidence of edge on any of the {total} tickers", total=len(rows)))
    return {"evidence": evidence, "headline": headline, "lines": [r["line"] for r in rows] if len(rows) > 1 else []}


def short_period(days: Mapping[str, int]) -> int | None:
    """The fewest trading days of any ticker when under a year (annualised figures are then withheld), else None."""
    counts = [int(n) for n in days.values() if n]
    return min(counts) if counts and min(counts) < YEAR_DAYS else None


def _folder(info: Mapping[str, Any]) -> str:
    """The backtest's folder by its name (the id), never the machine's absolute path: a report is mailed."""
    from pathlib import Path

    return Path(str(info.get("folder") or "")).name or "–"


def _short(data: Mapping[str, Any], plans: Mapping[str, Any]) -> int | None:
    return short_period({key: _day_count(data, plans, key)[0] for key in by_ticker(data["metrics"])})


def cost_text(spec: Mapping[str, Any], *, t: Translator | None = None) -> str:
    t = t or translator("en")
    bps = f"{float(spec.get('cost_bps') or 0.0):g}"
    if float(spec.get("cost_bps") or 0.0) == 0:
        return t("Costs: {bps} bps per unit of turnover, on every strategy (the benchmark index is not traded) — "
                 "the paper's setting (no costs)", bps=bps)
    return t("Costs: {bps} bps per unit of turnover, on every strategy (the benchmark index is not traded)", bps=bps)


def _positions(info: Mapping[str, Any], t: Translator) -> str:
    return ", ".join(f"{rating_label(k, t.lang)} {t('keep') if v == 'keep' else v}" for k, v in info["positions"].items())


def note_parts(note: Any, t: Translator | None = None) -> tuple[str, str | None]:
    """A run note in ``t``'s language: (sentence, the data source's own words or None). A note saved as text
    (an older result) is its own sentence; a missing benchmark (``{"kind": "no_benchmark", …}``) is said in
    the reader's language, with the provider's error kept apart (in English, as one line as before)."""
    t = t or translator(None)
    if not isinstance(note, Mapping):
        return str(note), None
    if note.get("kind") == "no_benchmark":
        ticker, error = str(note.get("ticker") or ""), str(note.get("error") or "")
        if t.lang == "en":
            return f"No benchmark curve for {ticker}: {error}", None
        return (t("No benchmark curve for {ticker}: the data source gave no prices of its benchmark {benchmark} for "
                  "this period.", ticker=ticker, benchmark=str(note.get("benchmark") or "")), error or None)
    return str(note.get("text") or note), None


def markdown(info: Mapping[str, Any], plans: Mapping[str, Any], data: Mapping[str, Any], *,
             lang: str | None = None) -> str:
    """The report as Markdown in ``lang`` (None: ``report_translator``'s choice)."""
    t = report_translator(info, lang)
    spec = info["spec"]
    lines = ["# " + t("Backtest {tickers}: {start} → {end}", tickers=", ".join(spec["tickers"]),
                      start=spec["start"], end=spec["end"]), ""]
    side = t("short selling allowed") if spec["allow_short"] else t("long-only")
    lines += ["- " + t("Decisions every {every} trading day(s); positions: {positions}; {side}",
                       every=spec["every"], positions=_positions(info, t), side=side),
              f"- {cost_text(spec, t=t)}",
              "- " + (t("Intervals: 95%, stationary block bootstrap of daily returns (seed {seed}); the watchlist as "
                        "one book ({weights} weights): {book}", seed=spec["seed"], weights=spec["portfolio"],
                        book=PORTFOLIO) if spec.get("portfolio")
                      else t("Intervals: 95%, stationary block bootstrap of daily returns (seed {seed})",
                             seed=spec["seed"])),
              "- " + (t("Model: {llm}; data: {data}; **blind run** (the models saw aliases, dates shifted by whole "
                        "years and rebased prices)", llm=product_label(info["llm"], t), data=product_label(info["data"], t)) if spec.get("blind")
                      else t("Model: {llm}; data: {data}", llm=product_label(info["llm"], t), data=product_label(info["data"], t))),
              "- " + t("Folder: `{folder}`", folder=_folder(info)), ""]
    verdict = edge_verdict(data["metrics"], t=t)
    lines += ["**" + verdict["headline"] + "**", ""] + [f"- {line}" for line in verdict["lines"]]
    lines += [""] if verdict["lines"] else []
    lines.append(t("CR = cumulative return, ARR = annualised return, SR = Sharpe ratio (daily, risk-free 0, ×√252), "
                   "MDD = maximum drawdown; hit rate and alpha over the holding window of each decision."))
    short = _short(data, plans)
    if short is not None:
        lines.append(t("ARR and alpha per year are not shown: {days} trading days are under a year, and an "
                       "annualised figure would overstate them.", days=short))
    lines.append("")
    for ticker, metrics in by_ticker(data["metrics"]).items():
        n_days, n_steps = _day_count(data, plans, ticker)
        if n_steps is not None:
            lines.append("## " + t("{ticker} ({days} trading days, {steps} decisions)", ticker=ticker, days=n_days,
                                   steps=n_steps))
        else:
            lines.append("## " + t("{ticker} ({days} trading days, the book of every ticker)", ticker=ticker,
                                   days=n_days))
        lines.append("")
        head = _header(t)
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for row in table_rows(metrics, t=t, annualised=short is None):
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    for note in data.get("notes") or []:
        text, detail = note_parts(note, t)
        lines.append(f"> {text}")
        if detail:
            lines += [">", "> " + t("The data source's message: {message}", message=f"`{detail.replace('`', chr(39))}`")]
    lines.append("")
    if data.get("control"):
        lines.append("## " + t("No-edge control ({worlds} random-walk worlds)", worlds=data["control"]["worlds"]))
        lines.append("")
        lines += [f"- {line}" for line in control_lines(data, t=t)]
        lines.append("")
    lines.append("## " + t("Decisions"))
    lines.append("")
    lines.append("| " + " | ".join(t(c) for c in DECISION_COLUMNS) + " |")
    lines.append("|---|---|---|---:|---:|")
    for row in data["decisions"].get("TradingAgents", []):
        lines.append(f"| {row['date']} | {row['ticker']} | {rating_label(row['rating'], t.lang)} | {row['position']:g} | "
                     f"{fmt(row['alpha'], True)} |")
    return "\n".join(lines).rstrip() + "\n"


DECISION_COLUMNS = (N_("date"), N_("ticker"), N_("rating"), N_("position"), N_("alpha %"))


# ---------------------------------------------------------------------------------------- SVG
COLOURS = {"TradingAgents": "#1f6feb", "TradingAgents (no memory)": "#8250df", "Buy & Hold": "#bf8700",
           "MACD": "#1a7f37", "KDJ & RSI": "#cf222e", "ZMR": "#6e7781", "SMA": "#0a3069"}


def colour_of(name: str, i: int) -> str:
    """A strategy keeps its colour on every chart; benchmarks and others take the palette."""
    return COLOURS.get(name) or ("#953800" if name.startswith("Benchmark") else PALETTE[i % len(PALETTE)])


def line_chart_svg(series: Mapping[str, Sequence[float]], days: Sequence[str], *, title: str,
                   width: int = 760, height: int = 260, pct: bool = False,
                   markers: Sequence[tuple[int, float, str, str]] = (), names: Mapping[str, str] | None = None) -> str:
    """An inline SVG of several lines on one axis; markers are (x index, y, colour, tooltip). ``names``
    maps a series' shown name to its strategy's (its colour and line style follow the strategy)."""
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
        strategy = (names or {}).get(name, name)
        colour = colour_of(strategy, i)
        points = " ".join(f"{x_at(j):.1f},{y_at(v):.1f}" for j, v in enumerate(values))
        bold = ' stroke-width="2.4"' if strategy == "TradingAgents" else ""
        dash = ' stroke-dasharray="5 3"' if strategy.startswith("Benchmark") or "no memory" in strategy else ""
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


def html_page(info: Mapping[str, Any], plans: Mapping[str, Any], data: Mapping[str, Any], *,
              lang: str | None = None) -> str:
    """The report as one self-contained HTML page in ``lang`` (None: ``report_translator``'s choice)."""
    t = report_translator(info, lang)
    spec = info["spec"]
    title = t("Backtest {tickers}: {start} → {end}", tickers=", ".join(spec["tickers"]), start=spec["start"],
              end=spec["end"])
    esc = html.escape
    body = [f"<h1>{esc(title)}</h1>",
            "<p class='note'>" + esc(t(
                "Decisions every {every} trading day(s); positions {positions}. {costs}. 95% intervals from a "
                "stationary block bootstrap. Model: {llm}; data: {data}. Folder {folder}.", every="\x00E",
                positions="\x00P", costs="\x00C", llm="\x00L", data="\x00D", folder="\x00F"))
            .replace("\x00E", str(spec["every"])).replace("\x00P", esc(_positions(info, t)))
            .replace("\x00C", esc(cost_text(spec, t=t))).replace("\x00L", esc(str(product_label(info["llm"], t))))
            .replace("\x00D", esc(str(product_label(info["data"], t)))).replace("\x00F", f"<code>{esc(_folder(info))}</code>")
            + "</p>",
            "<p class='note'>" + esc(t("CR cumulative return, ARR annualised return, SR Sharpe ratio, MDD maximum "
                                       "drawdown.")) + "</p>"]
    verdict = edge_verdict(data["metrics"], t=t)
    body.insert(1, f"<p class='verdict'><strong>{esc(verdict['headline'])}</strong></p>"
                + ("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in verdict["lines"]) + "</ul>"
                   if verdict["lines"] else ""))
    short = _short(data, plans)
    if short is not None:
        body.append("<p class='note'>" + esc(t("ARR and alpha per year are not shown: {days} trading days are under "
                                               "a year, and an annualised figure would overstate them.", days=short))
                    + "</p>")
    for ticker, metrics in by_ticker(data["metrics"]).items():
        plan = plans.get(ticker)
        curves = data["equity"][ticker]
        shown = {strategy_label(k, t): v for k, v in curves.items()}
        body.append(f"<h2>{esc(ticker)}</h2>")
        body.append("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in _header(t)) + "</tr>")
        for strategy, row in zip(metrics, table_rows(metrics, t=t, annualised=short is None), strict=True):
            cls = ' class="team"' if strategy.startswith("TradingAgents") else ""
            body.append(f"<tr{cls}>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>")
        body.append("</table>")
        days = plan.days if plan is not None else data["days"][ticker]
        body.append(line_chart_svg(shown, days, title=t("{ticker}: equity (1.0 = start)", ticker=ticker),
                                   names=dict(zip(shown, curves, strict=True))))
        dd = {strategy_label(k, t): drawdown(v) for k, v in curves.items()
              if k.startswith("TradingAgents") or k == "Buy & Hold"}
        body.append(line_chart_svg(dd, days, title=t("{ticker}: drawdown", ticker=ticker), pct=True, height=200,
                                   names={strategy_label(k, t): k for k in curves}))
        if plan is None:
            continue
        index = {d: i for i, d in enumerate(plan.days)}
        marks = [(index[r["date"]], plan.closes[index[r["date"]]], RATING_COLOURS.get(r["rating"], "#6e7781"),
                  t("{date}: {rating} (position {position})", date=r["date"], rating=rating_label(r["rating"], t.lang),
                    position=f"{r['position']:g}"))
                 for r in data["decisions"].get("TradingAgents", []) if r["ticker"] == ticker and r["date"] in index]
        body.append(line_chart_svg({t("{ticker} close", ticker=ticker): plan.closes}, plan.days,
                                   title=t("{ticker}: the team's ratings over the price", ticker=ticker), markers=marks))
    for note in data.get("notes") or []:
        text, detail = note_parts(note, t)
        body.append(f"<p class='note'>{esc(text)}</p>")
        if detail:  # the provider's own words, for who wants them: folded away under the note
            label = t("The data source's message")
            body.append(f"<details class='note'><summary>{esc(label)}</summary><code>{esc(detail)}</code></details>")
    if data.get("control"):
        body.append("<h2>" + esc(t("No-edge control ({worlds} random-walk worlds)", worlds=data["control"]["worlds"]))
                    + "</h2><ul>")
        body += [f"<li>{esc(line)}</li>" for line in control_lines(data, t=t)]
        body.append("</ul>")
    body.append("<h2>" + esc(t("Decisions")) + "</h2><table><tr>"
                + "".join(f"<th>{esc(t(c))}</th>" for c in DECISION_COLUMNS) + "</tr>")
    for r in data["decisions"].get("TradingAgents", []):
        score = RATING_SCORE.get(r["rating"], 0)
        body.append(f"<tr data-score='{score}'><td>{r['date']}</td><td>{esc(r['ticker'])}</td>"
                    f"<td>{esc(rating_label(str(r['rating']), t.lang))}</td><td>{r['position']:g}</td>"
                    f"<td>{fmt(r['alpha'], True)}</td></tr>")
    body.append("</table>")
    return (f"<!DOCTYPE html><html lang='{_HTML_LANG.get(t.lang, t.lang)}'><head><meta charset='utf-8'>"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")


_HTML_LANG = {"en": "en", "zh": "zh-Hans"}
