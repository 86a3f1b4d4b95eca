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


def describe(effect: Mapping[str, Any], *, t: Any = None) -> str:
    """The effect as lines for a person (the CLI, the report), in ``t``'s language (a
    ``tradingagents.i18n.Translator``; None: English); ratings shown in that language."""
    from tradingagents.i18n import rating_label, translator

    t = t or translator("en")
    lines = [t("Memory changed {differing} of {compared} decisions (alpha difference over those days {difference}).",
               differing=effect["differing"], compared=effect["compared"],
               difference=f"{effect['alpha_difference']:+.2%}")]
    for d in effect["decisions"]:
        alpha = t("n/a") if d["alpha"] is None else f"{d['alpha']:+.2%}"
        lines.append("  " + t("{ticker} {date}: {without} without memory -> {with_} with memory (alpha {alpha}, "
                              "difference {difference})", ticker=d["ticker"], date=d["date"],
                              without=rating_label(d["without_memory"], t.lang),
                              with_=rating_label(d["with_memory"], t.lang), alpha=alpha,
                              difference=f"{d['alpha_difference']:+.2%}"))
    return "\n".join(lines)


def paired_effect(with_memory: Sequence[Mapping[str, Any]], without_memory: Sequence[Mapping[str, Any]], *,
                  resamples: int = 2000, seed: int = 7) -> dict[str, Any]:
    """Memory's effect on the same decisions, with 95 % intervals: ``{decisions, changed, hit_rate_with,
    hit_rate_without, hit_rate_diff, hit_rate_diff_ci, return_with, return_without, return_diff,
    return_diff_ci}``.

    Each variant's rows are its settled decisions ({ticker, date, rating, raw, alpha}); only the (ticker,
    date) pairs both settled are compared. A decision is a hit by ``rating.was_right`` on its alpha. Its
    return is what the backtest's long-only position earns over its window (``positions.LONG_ONLY``:
    Buy 1.0, Overweight 0.5, Underweight and Sell flat, Hold keeps the ticker's position) times the
    window's raw return; ``return_*`` sum these per ticker and average over tickers (points of return per
    ticker over the period, windows added, not compounded). The intervals resample the paired decisions
    (``resamples`` draws with replacement, seeded: the same rows give the same interval)."""
    import random

    from tradingagents.backtest.positions import LONG_ONLY, target_position
    from tradingagents.rating import was_right

    def outcomes(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], tuple[str, bool, float]]:
        out, held = {}, {}
        for r in sorted(rows, key=lambda r: (r["ticker"], r["date"])):
            if r.get("alpha") is None or r.get("raw") is None:
                continue
            held[r["ticker"]] = target_position(r["rating"], held.get(r["ticker"], 0.0), LONG_ONLY)
            out[(r["ticker"], r["date"])] = (r["rating"], bool(was_right(r["rating"], float(r["alpha"]))),
                                             held[r["ticker"]] * float(r["raw"]))
        return out

    a, b = outcomes(with_memory), outcomes(without_memory)
    keys = sorted(set(a) & set(b))
    if not keys:
        return {"decisions": 0, "changed": 0}
    tickers = max(1, len({k[0] for k in keys}))
    hits = [(a[k][1] - b[k][1]) for k in keys]
    rets = [(a[k][2] - b[k][2]) for k in keys]
    n = len(keys)
    rng = random.Random(seed)
    draws_hit, draws_ret = [], []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        draws_hit.append(sum(hits[i] for i in idx) / n)
        draws_ret.append(sum(rets[i] for i in idx) / tickers)
    draws_hit.sort()
    draws_ret.sort()

    def ci(draws: list[float]) -> tuple[float, float]:
        return round(draws[int(0.025 * len(draws))], 6), round(draws[int(0.975 * len(draws)) - 1], 6)

    return {
        "decisions": n, "changed": sum(a[k][0] != b[k][0] for k in keys),
        "hit_rate_with": round(sum(a[k][1] for k in keys) / n, 6),
        "hit_rate_without": round(sum(b[k][1] for k in keys) / n, 6),
        "hit_rate_diff": round(sum(hits) / n, 6), "hit_rate_diff_ci": ci(draws_hit),
        "return_with": round(sum(a[k][2] for k in keys) / tickers, 6),
        "return_without": round(sum(b[k][2] for k in keys) / tickers, 6),
        "return_diff": round(sum(rets) / tickers, 6), "return_diff_ci": ci(draws_ret),
    }
