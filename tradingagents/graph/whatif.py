"""What if: fork a saved run at one agent, change that agent's output, and replay the rest of the team.

A fork starts from a saved run's final state (``state.json``, or the desk's row). The changed agent's
output is replaced (an analyst's report edited or dropped: "this report is not available"; a debate
turn rewritten; the Research Manager's plan or the Trader's proposal edited), every key produced
after it is reset to its initial value, and the team re-enters the compiled graph at the node that
follows (``TradingAgentsGraph.run_from``: the same run path as a fresh run, with a graph that starts
there, so the nodes before the fork point make no model call). The other analysts' reports are kept
as they were: an analyst reads its own data, not its colleagues' reports.

The fork is saved as a variant of the run (``whatif/<n>/``; ``meta.whatif = {at, role, changed,
kind, turn, base_rating, rating, by}``); it is never logged in the memory log and never taught to
the role memories, and the base run is left as it was.

``attribute`` asks which analyst the decision rested on: one fork per analyst with that analyst
dropped, run side by side under the run's concurrency bound (one graph: one model limiter) and one
shared budget; ``meta.attribution = {analyst key: rating}`` is added to the base run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from tradingagents import storage, team
from tradingagents.agents.utils.agent_states import (
    empty_invest_debate_state,
    empty_risk_debate_state,
    turn_record,
)
from tradingagents.config import normalize_analysts, resolve_config
from tradingagents.graph.conditional_logic import ConditionalLogic
from tradingagents.i18n import N_, language_of_output, translator
from tradingagents.rating import RATINGS_5_TIER
from tradingagents.validation import ValidationError, validate_date, validate_ticker

__all__ = ["FORK_ROLES", "ForkSpec", "attribute", "fork_inputs", "fork_run", "resolve_role", "tier_shift"]

UNAVAILABLE = N_("This report is not available.")
"""The text a dropped analyst's report is replaced with (in the models' output language)."""

FORK_ROLES: tuple[str, ...] = tuple(r.key for r in team.ROSTER if r.key != "portfolio_manager")
"""The roles a fork can start at: every agent with someone after it (not the Portfolio Manager)."""

_DEBATE_KEY = {"invest": "investment_debate_state", "risk": "risk_debate_state"}
# the stages in the order they run; a fork at a stage resets every later one
_STAGES = ("analysts", "invest", "research_manager", "trader", "risk", "portfolio_manager")


def _stage(role: team.Role) -> str:
    if role.is_analyst:
        return "analysts"
    return role.debate or role.key


@dataclass(frozen=True)
class ForkSpec:
    """Where a fork starts and what changes: ``at`` a role key; ``text`` its new output, or ``drop``
    (analysts only); ``turn`` the debate turn (1-based over the whole debate) of a debate speaker,
    by default that speaker's first turn."""

    at: str
    text: str | None = None
    drop: bool = False
    turn: int | None = None


def resolve_role(at: object) -> team.Role:
    """The role a fork starts at, from its key, its node name or an analyst alias ("sentiment")."""
    text = str(at or "").strip()
    if text in team.ROLES:
        role = team.ROLES[text]
    elif text in team.ROLE_BY_NODE:
        role = team.ROLE_BY_NODE[text]
    else:
        try:
            keys = normalize_analysts([text])
        except Exception:
            keys = []
        if len(keys) != 1:
            raise ValidationError(f"Unknown agent {text!r} to fork at. Use one of: {', '.join(FORK_ROLES)}.")
        role = team.ROLES[keys[0]]
    if role.key not in FORK_ROLES:
        raise ValidationError(f"Nothing runs after the {role.node}: fork at an earlier agent "
                              f"({', '.join(FORK_ROLES)}).")
    return role


def _rebuild_debate(debate: str, turns: list[dict[str, Any]]) -> dict[str, Any]:
    """A debate's state after ``turns`` (the records of ``meta.debate_turns``), built the way the
    debaters build it (``researchers/_debate.py``, ``risk_mgmt/_risk.py``)."""
    state: dict[str, Any] = dict(empty_invest_debate_state() if debate == "invest" else empty_risk_debate_state())
    for count, turn in enumerate(turns, 1):
        role = team.ROLES[turn["role"]]
        argument = f"{role.turn_label}: {turn['text']}"
        own = f"{role.key}_history"
        state["history"] = (state["history"] + "\n" if state["history"] else "") + argument
        state[own] = (state.get(own) or "") + ("\n" if state.get(own) else "") + argument
        state["count"] = count
        if debate == "invest":
            state["current_response"] = argument
        else:
            state[f"current_{role.key}_response"] = argument
            state["latest_speaker"] = role.speaker
    return state


def _turns_of(meta: Mapping[str, Any], debate: str) -> list[dict[str, Any]]:
    turns = [dict(t) for t in meta.get("debate_turns") or [] if isinstance(t, Mapping) and t.get("debate") == debate]
    return sorted(turns, key=lambda t: int(t.get("turn") or 0))


def fork_inputs(saved: Mapping[str, Any], spec: ForkSpec, *, logic: ConditionalLogic,
                output_language: Any = None) -> tuple[dict[str, Any], str, str, team.Role]:
    """The fork's input state, its entry node, the state key it changed and its role.

    ``saved`` is ``{"state", "meta", ...}`` as ``storage.load_run`` returns it. Every key produced at
    or after the fork point is reset (the debates, the plans, the decision, their turns and lessons
    used), the changed one replaced; what came before is kept as it was saved."""
    from langchain_core.messages import HumanMessage

    role = resolve_role(spec.at)
    stage = _stage(role)
    base = dict(saved.get("state") or {})
    meta = dict(saved.get("meta") or {})
    ticker, date = base.get("company_of_interest"), base.get("trade_date")
    if not ticker or not date:
        raise ValidationError("The saved run has no ticker or date in its state; it cannot be forked.")
    if spec.drop and not role.is_analyst:
        raise ValidationError(f"Only an analyst can be dropped; give the {role.node} a new text instead.")
    if not spec.drop and not str(spec.text or "").strip():
        raise ValidationError(f"Give the {role.node}'s new text (or drop an analyst).")
    text = str(spec.text or "").strip()
    later = set(_STAGES[_STAGES.index(stage):])
    state: dict[str, Any] = {k: v for k, v in base.items() if k not in ("messages", "final_rating")}
    state["messages"] = [HumanMessage(content=f"Analyse {ticker} as of {date}.")]
    state["debate_turns"] = []
    if "invest" in later:
        state["investment_debate_state"] = dict(empty_invest_debate_state())
    if "research_manager" in later:
        state["investment_plan"] = ""
        state["investment_debate_state"] = {**dict(state.get("investment_debate_state") or {}), "judge_decision": ""}
    if "trader" in later:
        state["trader_investment_plan"] = ""
    if "risk" in later:
        state["risk_debate_state"] = dict(empty_risk_debate_state())
    state["final_trade_decision"] = ""
    state["final_rating"] = ""
    kept_memories = {r.memory for r in team.ROSTER if r.memory and _STAGES.index(_stage(r)) < _STAGES.index(stage)}
    if stage == "invest":
        kept_memories |= {r.memory for r in team.speakers("invest") if r.memory}  # the kept turns recalled them
    used = dict(base.get("memory_used") or {})
    state["memory_used"] = {"past_decisions": list(used.get("past_decisions") or []),
                            "lessons": {k: v for k, v in (used.get("lessons") or {}).items() if k in kept_memories}}
    if _STAGES.index(stage) > _STAGES.index("invest"):
        state["debate_turns"] = _turns_of(meta, "invest")

    if role.is_analyst:
        analysts = list(meta.get("analysts") or [])
        if analysts and role.key not in analysts:
            raise ValidationError(f"The {role.node} did not take part in this run (analysts: {', '.join(analysts)}).")
        if spec.drop:
            text = translator(language_of_output(output_language))(UNAVAILABLE)
        key = team.present(role.output_key)
        state[key] = text
        return state, team.ROLES["bull"].node, key, role
    if role.debate:
        turns = _turns_of(meta, role.debate)
        mine = [t for t in turns if t.get("role") == role.key]
        turn_no = int(spec.turn) if spec.turn is not None else (int(mine[0]["turn"]) if mine else 0)
        target = next((t for t in mine if int(t.get("turn") or 0) == turn_no), None)
        if target is None:
            said = ", ".join(str(t.get("turn")) for t in mine) or "none"
            raise ValidationError(f"The {role.node} has no turn {turn_no} in this run (its turns: {said}).")
        from tradingagents.agents.utils.agent_utils import strip_speaker

        new = turn_record(role, turn_no, strip_speaker(text, role.turn_label))
        kept = [t for t in turns if int(t.get("turn") or 0) < turn_no] + [new]
        state[_DEBATE_KEY[role.debate]] = _rebuild_debate(role.debate, kept)
        state["debate_turns"] = (state["debate_turns"] if role.debate == "risk" else []) + kept
        router = logic.should_continue_debate if role.debate == "invest" else logic.should_continue_risk_analysis
        return state, router(state), _DEBATE_KEY[role.debate], role
    if role.key == "research_manager":
        state["investment_plan"] = text
        state["investment_debate_state"] = {**dict(state.get("investment_debate_state") or {}), "judge_decision": text}
        return state, team.ROLES["trader"].node, "investment_plan", role
    # the trader
    state["trader_investment_plan"] = text
    return state, team.ROLES["aggressive"].node, "trader_investment_plan", role


def tier_shift(base: str | None, rating: str | None) -> int | None:
    """How many tiers ``rating`` moved from ``base`` on the 5-tier scale (+ toward Buy, − toward Sell)."""
    if base not in RATINGS_5_TIER or rating not in RATINGS_5_TIER:
        return None
    return RATINGS_5_TIER.index(base) - RATINGS_5_TIER.index(rating)


def _fork_settings(settings, meta: Mapping[str, Any]):
    """The fork's settings: the base run's shape (analysts, rounds, execution), the caller's models."""
    changes: dict[str, Any] = {}
    for key in ("max_debate_rounds", "max_risk_discuss_rounds", "analyst_execution"):
        if meta.get(key) is not None:
            changes[key] = meta[key]
    if meta.get("analysts"):
        changes["selected_analysts"] = list(meta["analysts"])
    return settings.replace(**changes) if changes else settings


def _load_base(settings, ticker: str, date: str, version: int | None) -> dict[str, Any]:
    try:
        return storage.load_run(settings, ticker, date, version)
    except FileNotFoundError:
        raise ValidationError(f"No saved run of {ticker} on {date} to fork: run 'python -m tradingagents "
                              f"{ticker} {date}' first.") from None


def fork_run(config: Mapping[str, Any] | None, ticker: str, date: str, spec: ForkSpec, *,
             version: int | None = None, api_key: str | None = None, graph=None,
             on_event: Callable[[Any], None] | None = None, should_stop: Callable[[], bool] | None = None,
             saved: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Fork the saved run of ``ticker`` on ``date`` (``version``: one of its earlier runs) as ``spec``
    says, replay the rest of the team and save the fork; returns ``{"rating", "base_rating", "state",
    "record", "n", "whatif"}`` (``n``: the fork's number among the session's forks). ``graph``: a ``TradingAgentsGraph`` of the base run's shape to run it on
    (``attribute`` shares one), else one is built from ``config`` and the base run's meta."""
    settings = resolve_config(config)
    ticker, date = validate_ticker(ticker), validate_date(date)
    if saved is None:
        saved = _load_base(settings, ticker, date, version)
    meta = dict(saved.get("meta") or {})
    if graph is None:
        from tradingagents.graph.trading_graph import TradingAgentsGraph

        fork_cfg = _fork_settings(settings, meta)
        graph = TradingAgentsGraph(fork_cfg["selected_analysts"], config=fork_cfg, api_key=api_key)
    cfg = graph.config
    inputs, entry, changed, role = fork_inputs(saved, spec, logic=graph.conditional_logic,
                                               output_language=cfg.get("output_language"))
    analysts = list(meta.get("analysts") or graph.selected_analysts)
    asset_type = str(meta.get("asset_type") or "stock")
    base_rating = saved.get("rating")
    whatif = {"at": role.node, "role": role.key, "changed": changed, "kind": "drop" if spec.drop else "edit",
              "turn": spec.turn if role.debate else None, "base_rating": base_rating, "rating": None,
              "by": storage.default_user(cfg), "base_version": version}
    digest = hashlib.sha256(repr((entry, changed, inputs.get(changed) if changed in inputs else None,
                                  spec.drop)).encode("utf-8")).hexdigest()[:16]
    tid = hashlib.sha256(f"{ticker}:{date}:{graph.run_signature(asset_type)}:whatif:{digest}".encode()).hexdigest()[:16]

    def save(final_state: dict[str, Any], rating: str, fork_meta: dict[str, Any]):
        fork_meta["whatif"] = {**whatif, "rating": rating}
        return storage.save_fork(cfg, final_state, rating, fork_meta)

    final_state, rating, record = graph.run_from(
        ticker, date, inputs, entry, tid=tid, analysts=analysts, save=save, asset_type=asset_type,
        on_event=on_event, should_stop=should_stop)
    where = str(record["results_path"]).rstrip("/")
    n = int(where.rsplit("/", 1)[-1]) if where.rsplit("/", 1)[-1].isdigit() else None
    return {"rating": rating, "base_rating": base_rating, "state": final_state, "record": record, "n": n,
            "whatif": record["meta"].get("whatif") or {**whatif, "rating": rating}}


def attribute(config: Mapping[str, Any] | None, ticker: str, date: str, *, analysts: list[str] | None = None,
              api_key: str | None = None, on_fork: Callable[[str, dict[str, Any]], None] | None = None,
              should_stop: Callable[[], bool] | None = None, parallel: bool = True) -> dict[str, Any]:
    """What moved the decision: one fork per analyst (of ``analysts``, default every analyst of the
    run) with that analyst dropped, side by side on one graph (the run's concurrency bound shared) under
    one budget (``max_cost_usd`` for all of them). Adds ``meta.attribution = {analyst: rating}`` to the
    base run; returns ``{"base_rating", "attribution", "shift": {analyst: tiers}, "forks": {analyst: where saved}}``."""
    from tradingagents import pricing
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    settings = resolve_config(config)
    ticker, date = validate_ticker(ticker), validate_date(date)
    saved = _load_base(settings, ticker, date, None)
    meta = dict(saved.get("meta") or {})
    in_run = list(meta.get("analysts") or [])
    chosen = normalize_analysts(analysts) if analysts else in_run
    missing = [a for a in chosen if in_run and a not in in_run]
    if missing:
        raise ValidationError(f"Not in this run: {', '.join(missing)} (its analysts: {', '.join(in_run)}).")
    fork_cfg = _fork_settings(settings, meta)
    graph = TradingAgentsGraph(fork_cfg["selected_analysts"], config=fork_cfg, api_key=api_key)
    if settings.get("max_cost_usd") is not None:  # one ceiling for every fork together
        graph.budget_guard = pricing.CostLedger(float(settings["max_cost_usd"]))

    def one(key: str) -> tuple[str, dict[str, Any]]:
        out = fork_run(settings, ticker, date, ForkSpec(at=key, drop=True), graph=graph, saved=saved,
                       should_stop=should_stop)
        if on_fork is not None:
            on_fork(key, out)
        return key, out

    if parallel and len(chosen) > 1:
        with ThreadPoolExecutor(max_workers=len(chosen), thread_name_prefix="whatif") as pool:
            results = dict(pool.map(one, chosen))
    else:
        results = dict(one(k) for k in chosen)
    base_rating = saved.get("rating")
    attribution = {k: results[k]["rating"] for k in chosen}
    storage.update_run_meta(settings, ticker, date, {"attribution": attribution})
    return {"base_rating": base_rating, "attribution": attribution,
            "shift": {k: tier_shift(base_rating, r) for k, r in attribution.items()},
            "forks": {k: results[k]["record"]["results_path"] for k in chosen}}
