"""Who was right: hit rates and mean alphas, with 95% intervals, per role, per model, per person, and the
team against the portfolio manager's own calls; the conviction stated against the hit rate.

``score(entries, runs)`` is pure: ``entries`` are the memory log's (``load_entries(texts=False)``: the
settled ones count, with their ``pm_decision``), ``runs`` maps ``(ticker, date)`` to a saved run
(``{"state", "meta"}``) where there is one. ``gather(config)`` reads both from storage and scores them.
Every call is scored on the entry's one alpha with ``rating.was_right`` and ``rating.call_alpha``.

- ``by_role``: the Portfolio Manager (the logged rating), the Research Manager (its plan's
  recommendation), the Trader (its proposal: BUY, HOLD, SELL), and each debater's stance (``STANCES``:
  the side it argues; a debater's turn that states a rating of its own, "Rating: X", counts as that).
- ``by_model``: the team's calls per provider and deep model (the entry's provenance).
- ``by_person``: the portfolio managers' own calls, per person who recorded them.
- ``team_vs_pm``: on the entries where both exist: ``n``, the PM's ``hit_rate`` and ``interval``, the
  team's and the PM's stats, how often they agreed (same tier), and when they disagreed, who was right.
- ``calibration``: per conviction the decision card stated (low, medium, high), the team's hit rate.

Each stats dict: ``n``, ``hits``, ``hit_rate`` (None when n = 0), ``interval`` (Wilson's 95% score
interval of the hit rate), ``mean_alpha`` and ``alpha_interval`` (mean ± 1.96 standard errors; None
under two calls).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents import team
from tradingagents.rating import RATINGS_5_TIER, call_alpha, normalize_rating, parse_rating, was_right

__all__ = ["STANCES", "Z95", "gather", "mean_interval", "score", "stats", "wilson"]

Z95 = 1.959963984540054
STANCES = {"bull": "Buy", "bear": "Sell", "aggressive": "Overweight", "conservative": "Underweight",
           "neutral": "Hold"}
"""The side each debater argues, as a tier, when its turn states no rating of its own."""
_STATED_RE = re.compile(r"(?:\*\*)?(?:rating|recommendation)(?:\*\*)?\s*[:=]\s*\**\s*(" + "|".join(RATINGS_5_TIER)
                        + r")\b", re.IGNORECASE)


def wilson(hits: int, n: int, z: float = Z95) -> list[float] | None:
    """Wilson's score interval of a proportion ``hits / n`` (None when n = 0)."""
    if n <= 0:
        return None
    p = hits / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return [max(0.0, centre - half), min(1.0, centre + half)]


def mean_interval(values: list[float], z: float = Z95) -> list[float] | None:
    """mean ± z standard errors (None under two values)."""
    if len(values) < 2:
        return None
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = z * sd / math.sqrt(len(values))
    return [mean - half, mean + half]


def stats(calls: Iterable[tuple[bool | None, float | None]]) -> dict[str, Any]:
    """The stats of ``(was_right, alpha of following the call)`` pairs; unscored ones are left out."""
    scored = [(bool(r), float(a)) for r, a in calls if r is not None and a is not None]
    n, hits = len(scored), sum(r for r, _a in scored)
    alphas = [a for _r, a in scored]
    return {"n": n, "hits": hits, "hit_rate": hits / n if n else None, "interval": wilson(hits, n),
            "mean_alpha": sum(alphas) / n if n else None, "alpha_interval": mean_interval(alphas)}


def _call(rating: str | None, alpha: float) -> tuple[bool | None, float | None]:
    return was_right(rating, alpha), call_alpha(rating, alpha)


def _stated(text: str | None) -> str | None:
    found = _STATED_RE.findall(text or "")
    return normalize_rating(found[-1]) if found else None


def role_ratings(run: Mapping[str, Any] | None, logged: str) -> dict[str, str]:
    """Each role's call in one decision: the logged rating for the Portfolio Manager; the others from the
    saved run (a role whose text the run does not hold is left out)."""
    out = {"portfolio_manager": logged}
    state, meta = (run or {}).get("state") or {}, (run or {}).get("meta") or {}
    plan = parse_rating(state.get("investment_plan"), None)
    if plan:
        out["research_manager"] = plan
    proposal = parse_rating(state.get("trader_investment_plan"), None)
    if proposal:
        out["trader"] = proposal
    spoke: dict[str, str] = {}
    for turn in meta.get("debate_turns") or []:
        if isinstance(turn, Mapping) and turn.get("role") in STANCES:
            spoke[turn["role"]] = str(turn.get("text") or "")  # the last turn of each
    for role, text in spoke.items():
        out[role] = _stated(text) or STANCES[role]
    return out


def _model_of(entry: Mapping[str, Any]) -> str:
    models = entry.get("models") if isinstance(entry.get("models"), Mapping) else {}
    model = models.get("deep") or models.get("quick")
    provider = entry.get("llm_provider") or "unknown"
    if provider == "offline":
        return "offline"  # the offline engine is one model whatever names the config holds
    return f"{provider} · {model}" if model and model != provider else str(provider)


def score(entries: Iterable[Mapping[str, Any]], runs: Mapping[tuple[str, str], Mapping[str, Any]] | None = None
          ) -> dict[str, Any]:
    """The scoreboard of the settled ``entries`` (see the module docstring)."""
    runs = runs or {}
    settled = [e for e in entries if not e.get("pending") and e.get("alpha") is not None]
    roles: dict[str, list] = {r.key: [] for r in team.ROSTER if not r.is_analyst}
    models: dict[str, list] = {}
    people: dict[str, list] = {}
    convictions: dict[str, list] = {}
    both_team, both_pm, agreed, disagreed = [], [], [], []
    for e in settled:
        alpha = float(e["alpha"])
        run = runs.get((e["ticker"], e["date"]))
        for role, rating in role_ratings(run, e["rating"]).items():
            roles.setdefault(role, []).append(_call(rating, alpha))
        team_call = _call(e["rating"], alpha)
        models.setdefault(_model_of(e), []).append(team_call)
        conviction = (((run or {}).get("meta") or {}).get("decision") or {}).get("conviction")
        if isinstance(conviction, str) and conviction.strip():
            convictions.setdefault(conviction.strip().lower(), []).append(team_call)
        pm = e.get("pm_decision") or {}
        if pm.get("rating"):
            pm_call = _call(pm["rating"], alpha)
            people.setdefault(str(pm.get("by") or "unknown"), []).append(pm_call)
            both_team.append(team_call)
            both_pm.append(pm_call)
            same = normalize_rating(pm["rating"]) == normalize_rating(e["rating"])
            agreed.append(same)
            if not same:
                disagreed.append((team_call[0], pm_call[0]))
    pm_stats = stats(both_pm)
    n_dis = len(disagreed)
    pm_won = sum(1 for t, p in disagreed if p and not t)
    team_won = sum(1 for t, p in disagreed if t and not p)
    return {
        "n_settled": len(settled),
        "by_role": {k: stats(v) for k, v in roles.items()},
        "by_model": {k: stats(v) for k, v in sorted(models.items())},
        "by_person": {k: stats(v) for k, v in sorted(people.items())},
        "team_vs_pm": {
            "n": pm_stats["n"], "hit_rate": pm_stats["hit_rate"], "interval": pm_stats["interval"],
            "team": stats(both_team), "pm": pm_stats,
            "agreement": {"n": len(agreed), "rate": sum(agreed) / len(agreed) if agreed else None,
                          "interval": wilson(sum(agreed), len(agreed))},
            "disagreed": {"n": n_dis, "pm_right": pm_won, "team_right": team_won,
                          "both_right": sum(1 for t, p in disagreed if t and p),
                          "neither_right": sum(1 for t, p in disagreed if not t and not p),
                          "pm_win_rate": pm_won / n_dis if n_dis else None, "interval": wilson(pm_won, n_dis)},
        },
        "calibration": [{"conviction": k, **stats(v)} for k, v in sorted(convictions.items(), key=_conviction_order)],
    }


def _conviction_order(item: tuple[str, list]) -> tuple[int, str]:
    order = {"low": 0, "medium": 1, "high": 2}
    return (order.get(item[0], 3), item[0])


def gather(config: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``score`` of the memory log and the saved runs of whichever storage."""
    from tradingagents import storage

    entries = storage.open_memory_log(config).load_entries(texts=False)
    runs: dict[tuple[str, str], Mapping[str, Any]] = {}
    for e in entries:
        if e.get("pending"):
            continue
        try:
            runs[(e["ticker"], e["date"])] = storage.load_run(config, e["ticker"], e["date"])
        except (FileNotFoundError, ValueError, OSError):
            continue  # a decision without its saved run: scored on the logged rating alone
    return score(entries, runs)
