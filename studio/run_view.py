"""The Run page's decisions, without Streamlit: what the form starts from, what a link may fill in, the board
and flow as HTML, which message an ended run gets, the labels of its progress and its costs.

``studio/ui/run_*.py`` draws what these decide; every function here is pure and tested in
``tests/test_run_view.py``. Texts are in the caller's language (a ``Translator``).
"""

from __future__ import annotations

import datetime as dt
import html
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from studio import runs
from tradingagents import pricing, team
from tradingagents.config import ROUND_LIMITS
from tradingagents.errors import UnknownInstrumentError
from tradingagents.i18n import Translator, translator
from tradingagents.validation import DATE_FLOOR as DATE_MIN

EN = translator("en")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")
"""A backtest's id and a variant's name as a link may give them (``&backtest=&variant=``)."""
PRESENTER_PACE_S = 0.04
"""The offline engine's pause between words at presenter pace: about 25 words a second, readable aloud."""
FORM_KEYS = ("form_debate", "form_risk", "form_parallel", "form_analysts")
"""The form fields a run's settings are read from (the estimate uses them once they exist)."""


def last_business_day(today: dt.date | None = None) -> dt.date:
    """The most recent completed weekday before today."""
    day = (today or dt.date.today()) - dt.timedelta(days=1)
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    return day


def clock(ts: float | None) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%H:%M:%S") if ts else ""


def clamp_rounds(value: Any) -> int:
    """A configured number of rounds as the form's field can show it (within ``ROUND_LIMITS``)."""
    return min(max(int(value), ROUND_LIMITS[0]), ROUND_LIMITS[1])


def form_defaults(config: Mapping[str, Any], today: dt.date | None = None) -> dict[str, Any]:
    """The form's first values: from the resolved settings (``TRADINGAGENTS_*`` included), for every user."""
    return {"form_ticker": "NVDA", "form_date": last_business_day(today),
            "form_analysts": list(config["selected_analysts"]),
            "form_debate": clamp_rounds(config["max_debate_rounds"]),
            "form_risk": clamp_rounds(config["max_risk_discuss_rounds"]),
            "form_parallel": config.get("analyst_execution") == "parallel"}


def form_config(config: Mapping[str, Any], form: Mapping[str, Any]) -> dict[str, Any]:
    """The config of a run started from the form's values (``form_*``) over the sidebar's ``config``."""
    out = {**config, "max_debate_rounds": int(form["form_debate"]), "max_risk_discuss_rounds": int(form["form_risk"]),
           "analyst_execution": "parallel" if form["form_parallel"] else "sequential",
           "allow_synthetic": bool(form.get("form_allow_synthetic")),
           "pause_before": bool(form.get("form_pause"))}
    if pricing.is_offline(config) and form.get("form_presenter"):
        out["offline_stream_delay_s"] = PRESENTER_PACE_S
    return out


def example_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The onboarding's "Run an example": the shortest whole run the team can make, at presenter pace (the
    words stream at a speed a room can read, whatever the form's toggle says)."""
    out = {**config, "max_debate_rounds": 1, "max_risk_discuss_rounds": 1, "analyst_execution": "sequential"}
    if pricing.is_offline(config):
        out["offline_stream_delay_s"] = PRESENTER_PACE_S
    return out


def prefill_values(data: Mapping[str, Any], today: dt.date | None = None,
                   t: Translator = EN) -> tuple[dict[str, Any], list[str]]:
    """``?prefill=`` values as the form's fields, and the problems to say: bad values are ignored, and a date
    the form cannot show is named (it would break the date field for the whole session)."""
    today = today or dt.date.today()
    values: dict[str, Any] = {}
    problems = []
    if isinstance(data.get("ticker"), str):
        values["form_ticker"] = data["ticker"][:64]
    if "date" in data:
        try:
            day = dt.date.fromisoformat(str(data["date"]))
        except ValueError:
            problems.append(t("The link's date {date} is not a date (YYYY-MM-DD): the form keeps its date.",
                              date=repr(str(data["date"])[:40])))
        else:
            if DATE_MIN <= day <= today:
                values["form_date"] = day
            else:
                problems.append(t("The link's date {date} is outside the dates an analysis can use "
                                  "({first} to today): the form keeps its date.", date=day.isoformat(),
                                  first=DATE_MIN.isoformat()))
    listed = data.get("analysts") if isinstance(data.get("analysts"), list) else []
    analysts = [a for a in listed if isinstance(a, str) and a in team.ANALYST_KEYS]
    if analysts:
        values["form_analysts"] = analysts
    for field, name in (("form_debate", "debate_rounds"), ("form_risk", "risk_rounds")):
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and ROUND_LIMITS[0] <= value <= ROUND_LIMITS[1]:
            values[field] = value
    return values, problems


def saved_run_link(query: Mapping[str, Any], config: Mapping[str, Any],
                   t: Translator = EN) -> tuple[tuple[str, str, dict] | None, str | None]:
    """``?ticker=&date=`` (and ``&backtest=&variant=``) as ((ticker, date, config whose results_dir holds it), None),
    (None, the problem) for a bad backtest or variant, or (None, None) when the link names no saved run (a blind
    run is saved where every run is)."""
    ticker, date = query.get("ticker"), query.get("date")
    if not ticker or not date:
        return None, None
    cfg = dict(config)
    backtest, variant = query.get("backtest"), query.get("variant")
    if backtest or variant:
        if not (backtest and variant and SAFE_NAME.match(backtest) and SAFE_NAME.match(variant)):
            return None, t("The link names a backtest run with a bad id or variant: use letters, digits, '.', '_' "
                           "or '-' for both &backtest= and &variant=.")
        cfg["results_dir"] = str(Path(config["backtests_dir"]) / backtest / variant / "results")
    return (ticker, date, cfg), None


def unknown_instrument_text(exc: UnknownInstrumentError, t: Translator = EN) -> str:
    """The demo market's refusal in this page's words (the engine's name the CLI's flag; this page has a box)."""
    close = " / ".join(exc.suggestions)
    return (t("The demo market does not list {ticker}: did you mean {close}?", ticker=exc.ticker, close=close)
            if close else t("The demo market does not list {ticker}.", ticker=exc.ticker)) + " " + t(
        "It lists the S&P 100, the big ETFs, major listings in Hong Kong, Tokyo, London, India, China, Toronto "
        "and Sydney, and the benchmark indices. To analyse an invented instrument anyway, tick \"Allow an "
        "invented instrument\" under the form.")


def busy_text(running: list[Any], ticker: Any, date: Any, t: Translator = EN) -> str | None:
    """Why a start is refused because the same ticker and date is already running (``running``: the server's
    run handles), or None."""
    norm = str(ticker or "").strip().upper()
    day = date.isoformat() if isinstance(date, dt.date) else str(date)
    if any(h.status == "running" and h.ticker == norm and h.date == day for h in running):
        return t("An analysis of {ticker} on {date} is already running; wait for it or stop it. "
                 "Another date of the same ticker can run at the same time.", ticker=norm, date=day)
    return None


def finishes_attr(progress: Any) -> str:
    """Every node-finish time of the run, so a page (and the app bench) can tell what it shows."""
    return ",".join(f"{iv['end']:.3f}" for iv in progress.intervals if iv.get("end") is not None)


def _settle_row(settle: Mapping[str, Any], t: Translator) -> str:
    if settle["status"] == "running":
        name = html.escape(t("Settling past decisions"))
        return ('<div class="ta-agent running" data-step="settle" data-status="running">'
                f'<span><i class="dot"></i>{name}</span><span class="t">…</span></div>')
    what = t("{settled} settled · {pending} pending", settled=settle["settled"], pending=settle["pending"])
    name = html.escape(t("Settled past decisions"))
    return (f'<div class="ta-agent done" data-step="settle" data-status="done">'
            f'<span><i class="dot"></i>{name}</span>'
            f'<span class="t">{html.escape(what)}</span></div>')


def agent_board_html(progress: Any, t: Translator = EN) -> str:
    """The live board: the settlement step, then each team's agents with their status and times."""
    rows = [_settle_row(progress.settle, t)] if progress.settle else []
    for team_name, agents in progress.teams.items():
        rows.append(f'<div class="ta-team">{html.escape(t.p("team", team_name))}</div>')
        for a in agents:
            if a.status == "done":
                times = f"{clock(a.started)} → {clock(a.finished)} · {a.duration_s:.1f}s"
            elif a.status == "running":
                times = t("since {clock} · {seconds}s", clock=clock(a.started), seconds=f"{a.duration_s:.1f}")
            else:
                times = t("pending")
            finished = f"{a.finished:.3f}" if (a.status == "done" and a.finished) else ""
            rows.append(
                f'<div class="ta-agent {a.status}" data-agent="{html.escape(a.agent)}" '
                f'data-status="{a.status}" data-finished="{finished}">'
                f'<span><i class="dot"></i>{html.escape(t.p("role", a.agent))}</span>'
                f'<span class="t">{html.escape(times)}</span></div>'
            )
    return f'<div class="ta-board" data-finishes="{finishes_attr(progress)}">' + "".join(rows) + "</div>"


def flow_html(t: Translator = EN) -> str:
    """The team as a compact flow, from the roster's plan: teams in order, then the memory log."""

    def short(agent: str, suffix: str) -> str:  # "Market" for "Market Analyst" in English; the role's name otherwise
        return agent.removesuffix(suffix) if t.lang == "en" else t.p("role", agent)

    boxes = []
    for group in team.plan(list(team.ANALYST_KEYS)):
        agents = group["agents"]
        joiner = " ⇄ " if group["team"] == "Research Team" and len(agents) > 2 else " · "
        if group["team"] == "Research Team" and len(agents) > 2:
            names = (joiner.join(short(a, " Researcher") for a in agents[:-1])
                     + f" → {t.p('role', agents[-1])}")
        else:
            names = joiner.join(short(a, " Analyst") if group["team"] == "Analyst Team" else t.p("role", a)
                                for a in agents)
        boxes.append(f'<div class="ta-flow-box"><b>{html.escape(t.p("team", group["team"]))}</b>'
                     f'<span>{html.escape(names)}</span></div>')
    log, what = t("Memory log"), t("each decision is settled later against the market and becomes a lesson")
    boxes.append(f'<div class="ta-flow-box"><b>{html.escape(log)}</b><span>{html.escape(what)}</span></div>')
    return '<div class="ta-flow">' + '<div class="ta-flow-arrow">→</div>'.join(boxes) + "</div>"


def progress_label(progress: Any, *, live: bool, stopping: bool, t: Translator = EN) -> str:
    """The progress bar's text: stopping, settling, who is working, or the share of agents done."""
    if live and stopping:
        return t("Stopping after the current step…")
    if live and progress.settle and progress.settle["status"] == "running":
        return t("Settling past decisions of this ticker before the analysis…")
    if live and runs.running_agents(progress):
        return runs.working_label(runs.running_agents(progress), t=t)
    return t("{share} of agents done", share=f"{progress.fraction:.0%}")


def timeline_rows(progress: Any, t: Translator = EN) -> tuple[list[str], list[dict]]:
    """The timeline's order of roles and its bars, by the roles' shared names (no engine identifiers on screen)."""
    order = [t.p("role", a.agent) for a in progress.agents if a.started is not None]
    bars = []
    for iv in progress.intervals:
        role = t.p("role", iv.get("agent"))
        bars.append({**iv, "agent": role, "node": role})
    return order, bars


def tool_call_lines(progress: Any, t: Translator = EN, last: int = 15) -> list[str]:
    """The newest tool calls first, as Markdown: the call, then who made it and how long its answer was."""
    lines = []
    for call in progress.tool_calls[-last:][::-1]:
        args = ", ".join(f"{k}={v!r}" for k, v in (call.get("args") or {}).items())
        who = t.p("role", call.get("agent")) if call.get("agent") else ""
        lines.append(f"`{call.get('tool')}({args})` — " + t("{agent} · {n} chars", agent=who,
                                                             n=call.get("result_chars", 0)))
    return lines


def changes_text(changes: list[tuple[str, Any, Any]], t: Translator = EN) -> str | None:
    """A resume's changed settings, or None when it kept the run's own."""
    if not changes:
        return None
    diff = t("; ").join(f"{t(label)}: {a or '—'} → {b or '—'}" for label, a, b in changes)
    return t("Resumed with the settings on screen now, which differ from the run's original: {diff}.", diff=diff)


def ended_kind(handle: Any) -> str:
    """Which message an ended, unfinished run gets: ``config`` (a setting named by its error), ``failed``,
    ``crashed``, ``paused`` (before a verdict: the note box) or ``stopped``."""
    if handle.status == "failed" and (handle.error_key or handle.error_key_env):
        return "config"
    if handle.status in ("failed", "crashed"):
        return handle.status
    return "paused" if handle.paused_before else "stopped"


def agent_costs(meta: Mapping[str, Any] | None, t: Translator = EN) -> list[dict]:
    """The per-agent rows of a saved run's cost (meta.usage.by_agent), most expensive first."""
    by_agent = ((meta or {}).get("usage") or {}).get("by_agent") or {}
    offline = pricing.is_offline(meta) or pricing.is_offline((meta or {}).get("config"))
    rows = [{t("Agent"): t.p("role", name), t("Cost"): t(pricing.cost_text(cost, offline=offline)),
             "_sort": cost if isinstance(cost, (int, float)) else -1.0}
            for name, cost in by_agent.items() if isinstance(name, str)]
    rows.sort(key=lambda r: r["_sort"], reverse=True)
    return [{k: v for k, v in r.items() if k != "_sort"} for r in rows]


def cost_caption(est: Mapping[str, Any], t: Translator = EN) -> str:
    """A what-if's or an attribution's estimated cost (``tradingagents.estimates``)."""
    if est.get("source") == "offline engine":
        return t("Estimated cost: {cost}", cost=t(pricing.cost_text(0.0, offline=True)))
    if est.get("cost_usd") is None:
        return t("Estimated cost: — (a model has no price; set it under Model prices in the sidebar)")
    if est.get("source") == "this run":
        return t("Estimated cost: about {cost} (what these agents cost in this run)",
                 cost=pricing.cost_text(est["cost_usd"]))
    return t("Estimated cost: about {cost} (a typical run's token counts at the prices in force)",
             cost=pricing.cost_text(est["cost_usd"]))


def run_cost_caption(est: Mapping[str, Any], t: Translator = EN) -> str:
    """A new run's estimated cost, beside Start (``estimates.estimate_run_cost``)."""
    if est["cost_usd"] is None:
        return t("Estimated cost: — (a model has no price; set it under Model prices in the sidebar)")
    cost = pricing.cost_text(est["cost_usd"])
    if est["source"] == "past runs":
        return t.n("Estimated cost: about {cost} (the mean of {n} past run with these settings)",
                   "Estimated cost: about {cost} (the mean of {n} past runs with these settings)",
                   est["runs"], cost=cost)
    return t("Estimated cost: about {cost} (a typical run's token counts at the prices in force)", cost=cost)
