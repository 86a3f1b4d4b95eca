"""What memory changed in a ``--compare-memory`` backtest: the decisions that differ between the team
with memory and the same team without it, on the same days (``metrics.json``'s ``memory_effect``).

The alpha difference of a day is what the rating's direction earned on that day's alpha with memory
minus without it (``rating.direction(r) * alpha``: +1 for Buy/Overweight, -1 for Underweight/Sell,
0 for Hold); days without a known alpha count as 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tradingagents.rating import direction


def memory_effect(with_memory: Sequence[Mapping[str, Any]], without_memory: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``{compared, differing, alpha_difference, decisions: [{ticker, date, with_memory, without_memory,
    alpha, alpha_difference}]}`` from the two variants' decision rows ({ticker, date, rating, alpha})."""
    other = {(r["ticker"], r["date"]): r for r in without_memory}
    rows = []
    compared = 0
    for r in sorted(with_memory, key=lambda r: (r["ticker"], r["date"])):
        twin = other.get((r["ticker"], r["date"]))
        if twin is None:
            continue
        compared += 1
        if twin["rating"] == r["rating"]:
            continue
        alpha = r.get("alpha")
        diff = 0.0 if alpha is None else (direction(r["rating"]) - direction(twin["rating"])) * float(alpha)
        rows.append({"ticker": r["ticker"], "date": r["date"], "with_memory": r["rating"],
                     "without_memory": twin["rating"], "alpha": alpha, "alpha_difference": round(diff, 6)})
    return {"compared": compared, "differing": len(rows),
            "alpha_difference": round(sum(x["alpha_difference"] for x in rows), 6), "decisions": rows}


def describe(effect: Mapping[str, Any]) -> str:
    """The effect as lines for a person (the CLI, the report)."""
    lines = [f"Memory changed {effect['differing']} of {effect['compared']} decisions "
             f"(alpha difference over those days {effect['alpha_difference']:+.2%})."]
    for d in effect["decisions"]:
        alpha = "n/a" if d["alpha"] is None else f"{d['alpha']:+.2%}"
        lines.append(f"  {d['ticker']} {d['date']}: {d['without_memory']} without memory -> {d['with_memory']} "
                     f"with memory (alpha {alpha}, difference {d['alpha_difference']:+.2%})")
    return "\n".join(lines)
