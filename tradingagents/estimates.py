"""Cost estimates before a run or a batch starts: from past runs of the same settings, else a typical run.

Above the pricing table (``tradingagents.pricing``, which only prices tokens): an estimate reads the
saved runs (storage), the resolved settings and the backtest's count of calls per step.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from tradingagents.pricing import OFFLINE_MODEL, OFFLINE_PROVIDER, cost_usd, pricing_table
from tradingagents.team import ROLE_BY_NODE

TYPICAL_CALL_TOKENS = (4000, 600)
_SAME_CONFIG_KEYS = ("llm_provider", "quick_think_llm", "deep_think_llm", "max_debate_rounds",
                     "max_risk_discuss_rounds", "analysts")
_MAX_PAST_RUNS = 50


def _past_costs(config: Mapping[str, Any]) -> list[float]:
    from tradingagents import storage
    from tradingagents.config import normalize_analysts

    want = {"llm_provider": config.get("llm_provider"), "quick_think_llm": config.get("quick_think_llm"),
            "deep_think_llm": config.get("deep_think_llm"), "max_debate_rounds": config.get("max_debate_rounds"),
            "max_risk_discuss_rounds": config.get("max_risk_discuss_rounds"),
            "analysts": normalize_analysts(config.get("selected_analysts"))}
    costs: list[float] = []
    try:
        runs = storage.list_runs(config)[:_MAX_PAST_RUNS * 4]
    except Exception:  # no history (or the database is away): fall back to the typical run
        return costs
    for run in runs:
        if run.get("llm_provider") not in (None, want["llm_provider"]):
            continue
        try:
            meta = storage.load_run(config, run["ticker"], run["date"]).get("meta") or {}
        except Exception:
            continue
        if any(meta.get(k) != want[k] for k in _SAME_CONFIG_KEYS) or meta.get("resumed"):
            continue  # a resumed run's meta counts only its second part
        cost = (meta.get("usage") or {}).get("cost_usd")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost) and cost >= 0:
            costs.append(float(cost))
        if len(costs) >= _MAX_PAST_RUNS:
            break
    return costs


def estimate_run_cost(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What one run of this configuration will cost, before starting it.

    ``{"cost_usd", "source", "runs"}``: the mean saved ``meta.usage.cost_usd`` of past runs with the
    same provider, models, analysts and rounds (``source`` "past runs", ``runs`` how many), else a
    typical run's calls (``backtest.engine.calls_per_step``) × ``TYPICAL_CALL_TOKENS`` at the prices
    in force (``source`` "typical run"; the judges' calls at the deep model's price). ``cost_usd``
    is None when a model has no price.
    """
    from tradingagents.config import resolve_config

    cfg = resolve_config(config)
    past = _past_costs(cfg)
    if past:
        return {"cost_usd": sum(past) / len(past), "source": "past runs", "runs": len(past)}
    from tradingagents.backtest.engine import calls_per_step

    calls = calls_per_step(cfg)
    deep_calls = sum(1 for role in ROLE_BY_NODE.values() if role.model == "deep")
    table = pricing_table(cfg)
    inp, out = TYPICAL_CALL_TOKENS
    offline = str(cfg.get("llm_provider") or "").lower() == OFFLINE_PROVIDER
    quick_model = OFFLINE_MODEL if offline else cfg.get("quick_think_llm")
    deep_model = OFFLINE_MODEL if offline else cfg.get("deep_think_llm")
    quick = cost_usd(quick_model, inp * (calls - deep_calls), out * (calls - deep_calls), table)
    deep = cost_usd(deep_model, inp * deep_calls, out * deep_calls, table)
    total = None if quick is None or deep is None else quick + deep
    return {"cost_usd": total, "source": "typical run", "runs": 0}


def estimate_batch_cost(config: Mapping[str, Any] | None, n_tickers: int) -> dict[str, Any]:
    """``estimate_run_cost`` × the tickers still to run (``per_run`` keeps the one-run figure)."""
    one = estimate_run_cost(config)
    total = None if one["cost_usd"] is None else one["cost_usd"] * max(0, int(n_tickers))
    return {**one, "per_run": one["cost_usd"], "cost_usd": total}


def _replayed_agents(role_key: str) -> list[str]:
    """The agents (node names) a fork at ``role_key`` runs again: every non-analyst after it (a debate
    speaker's fork replays its debate, so the whole debate counts)."""
    from tradingagents.team import ROLES, ROSTER

    role = ROLES[role_key]
    order = [r for r in ROSTER if not r.is_analyst]
    if role.is_analyst:
        return [r.node for r in order]
    first = next(i for i, r in enumerate(order) if (r.debate and r.debate == role.debate) or r is role)
    start = first if role.debate else first + 1
    return [r.node for r in order[start:]]


def estimate_fork_cost(config: Mapping[str, Any] | None, base_meta: Mapping[str, Any], role_key: str) -> dict[str, Any]:
    """What a what-if fork at ``role_key`` of a saved run will cost: ``{"cost_usd", "source"}``.

    The base run's own cost of the agents the fork runs again (``meta.usage.by_agent``) when it ran with
    the same provider and models ("this run"), else that share of a typical run ("typical run").
    """
    from tradingagents.config import resolve_config
    from tradingagents.team import ROSTER

    cfg = resolve_config(config)
    agents = _replayed_agents(role_key)
    if str(cfg.get("llm_provider") or "").lower() == OFFLINE_PROVIDER:
        return {"cost_usd": 0.0, "source": "offline engine"}
    same = all(base_meta.get(k) == cfg.get(k) for k in ("llm_provider", "quick_think_llm", "deep_think_llm"))
    by_agent = (base_meta.get("usage") or {}).get("by_agent") or {}
    if same and by_agent:
        costs = [by_agent.get(a) for a in agents if a in by_agent]
        if costs and all(isinstance(c, (int, float)) for c in costs):
            return {"cost_usd": float(sum(costs)), "source": "this run"}
    typical = estimate_run_cost(cfg)["cost_usd"]
    share = len(agents) / len([r for r in ROSTER if not r.is_analyst] + ["analysts"] * 4)
    return {"cost_usd": None if typical is None else typical * share, "source": "typical run"}


def estimate_attribution_cost(config: Mapping[str, Any] | None, ticker: str, date: str,
                              analysts: Any = None) -> dict[str, Any]:
    """``estimate_fork_cost`` of one analyst dropped × the forks ``attribute`` will run."""
    from tradingagents import storage
    from tradingagents.config import normalize_analysts

    try:
        meta = storage.load_run(config, ticker, date).get("meta") or {}
    except FileNotFoundError:
        meta = {}
    keys = normalize_analysts(analysts) if analysts else list(meta.get("analysts") or normalize_analysts(None))
    one = estimate_fork_cost(config, meta, keys[0])
    return {**one, "forks": len(keys), "per_fork": one["cost_usd"],
            "cost_usd": None if one["cost_usd"] is None else one["cost_usd"] * len(keys)}
