"""A job's digest: what changed since its last run, as data, as text (e-mail, webhook) and as an HTML page.

``build_digest(...)`` gathers, after a scheduled run: every ticker's rating and the one of the job's
last run (a change is flagged), the new Buy and Sell calls, the order each rating makes of the book
(``meta.order``), the positions over their limit, the decisions that settled since (with alpha), the
cost, and the alerts (a rating change, a limit breach, a failed ticker). ``digest_text`` and
``digest_html`` render it in a language (``t``); ``webhook_payload`` is ``{"text": …}`` (what Slack's
and Teams' incoming webhooks read) with the digest's data beside it. The digest itself keeps canonical
values (ratings in English), like every stored record.
"""

from __future__ import annotations

import html as _html
from collections.abc import Iterable, Mapping
from typing import Any

from tradingagents import figures
from tradingagents.book import order_text
from tradingagents.i18n import Translator, rating_label, translator

__all__ = ["build_digest", "digest_html", "digest_subject", "digest_text", "webhook_payload"]


def build_digest(job: str, due: str, session: str, outcomes: Iterable[Mapping[str, Any]], *,
                 previous: Mapping[str, str] | None = None, orders: Mapping[str, Mapping[str, Any] | None] | None = None,
                 breaches: Iterable[Mapping[str, Any]] = (), settled: Iterable[Mapping[str, Any]] = (),
                 notes: Iterable[str] = (), created_at: str = "") -> dict[str, Any]:
    previous = dict(previous or {})
    orders = dict(orders or {})
    rows = []
    for o in outcomes:
        ticker, rating = o.get("ticker"), o.get("rating")
        before = previous.get(ticker)
        rows.append({"ticker": ticker, "rating": rating, "previous": before,
                     "changed": bool(rating and before and rating != before),
                     "new_call": bool(rating in ("Buy", "Sell") and rating != before),
                     "status": o.get("status"), "error": o.get("error"), "cost_usd": o.get("cost_usd"),
                     "order": orders.get(ticker)})
    breaches = [dict(b) for b in breaches]
    alerts = [{"kind": "rating_change", "ticker": r["ticker"], "before": r["previous"], "after": r["rating"]}
              for r in rows if r["changed"]]
    alerts += [{"kind": "limit_breach", **b} for b in breaches]
    alerts += [{"kind": "failed", "ticker": r["ticker"], "error": r["error"]} for r in rows
               if r["status"] not in ("done", "reused")]
    cost = sum(figures.number(r["cost_usd"]) or 0.0 for r in rows)
    return {"job": job, "due": due, "session": session, "created_at": created_at, "rows": rows,
            "settled": [dict(s) for s in settled], "breaches": breaches, "alerts": alerts,
            "cost_usd": round(cost, 6), "notes": list(notes)}


def _t(t: Translator | None) -> Translator:
    return t or translator(None)


def digest_subject(digest: Mapping[str, Any], t: Translator | None = None) -> str:
    t = _t(t)
    subject = t("{job}: {n} ticker(s) on {session}", job=digest["job"], n=len(digest["rows"]), session=digest["session"])
    if digest.get("alerts"):
        subject = t("Alert: {subject}", subject=subject)
    return subject


def _rating(value: Any, t: Translator) -> str:
    return rating_label(str(value), t.lang) if value else figures.DASH


def _alert_line(a: Mapping[str, Any], t: Translator) -> str:
    if a["kind"] == "rating_change":
        return t("{ticker}: rating changed from {before} to {after}", ticker=a["ticker"],
                 before=_rating(a["before"], t), after=_rating(a["after"], t))
    if a["kind"] == "limit_breach":
        return t("{ticker}: {weight} of the book, over its limit of {limit}", ticker=a["ticker"],
                 weight=figures.pct(a.get("weight"), signed=False), limit=figures.pct(a.get("limit"), signed=False))
    return t("{ticker}: the run failed: {error}", ticker=a.get("ticker") or "", error=a.get("error") or "")


def _sections(digest: Mapping[str, Any], t: Translator) -> list[tuple[str, list[str]]]:
    rows = digest["rows"]
    out: list[tuple[str, list[str]]] = []
    if digest.get("alerts"):
        out.append((t("Alerts"), [_alert_line(a, t) for a in digest["alerts"]]))
    lines = []
    for r in rows:
        if r["status"] in ("done", "reused"):
            line = t("{ticker}: {rating}", ticker=r["ticker"], rating=_rating(r["rating"], t))
            if r["changed"]:
                line += " " + t("(was {before})", before=_rating(r["previous"], t))
            elif r["previous"] is None:
                line += " " + t("(first run of this job)")
        else:
            line = t("{ticker}: the run failed: {error}", ticker=r["ticker"], error=r["error"] or r["status"])
        lines.append(line)
    out.append((t("Ratings"), lines))
    calls = [t("{ticker}: {rating}", ticker=r["ticker"], rating=_rating(r["rating"], t)) for r in rows if r["new_call"]]
    out.append((t("New Buy and Sell calls"), calls or [t("none")]))
    orders = [order_text(r["order"], t) for r in rows if r.get("order")]
    out.append((t("Orders against the book"), orders or [t("no book, or no order")]))
    if digest.get("breaches"):
        out.append((t("Positions over their limit"), [_alert_line({"kind": "limit_breach", **b}, t)
                                                       for b in digest["breaches"]]))
    settled = [t("{ticker} {date}: {rating}, return {raw}, alpha {alpha}", ticker=s.get("ticker"), date=s.get("date"),
                 rating=_rating(s.get("rating"), t), raw=figures.pct(s.get("raw")), alpha=figures.pct(s.get("alpha")))
               for s in digest.get("settled") or []]
    out.append((t("Settled since the last run"), settled or [t("none")]))
    out.append((t("Cost"), [figures.price(digest.get("cost_usd"), "USD")]))
    if digest.get("notes"):
        out.append((t("Notes"), list(digest["notes"])))
    return out


def digest_text(digest: Mapping[str, Any], t: Translator | None = None) -> str:
    t = _t(t)
    head = t("Digest of {job}, due {due}, on the session of {session}", job=digest["job"], due=digest["due"],
             session=digest["session"])
    parts = [head]
    for title, lines in _sections(digest, t):
        parts.append(title + "\n" + "\n".join(f"- {line}" for line in lines))
    return "\n\n".join(parts) + "\n"


def digest_body_html(digest: Mapping[str, Any], t: Translator | None = None, level: int = 1) -> str:
    """The digest's heading and sections as HTML (no page around it: the app shows it inside a page)."""
    t = _t(t)
    esc = _html.escape
    head = t("Digest of {job}, due {due}, on the session of {session}", job=digest["job"], due=digest["due"],
             session=digest["session"])
    body = [f"<h{level}>{esc(head)}</h{level}>"]
    for title, lines in _sections(digest, t):
        body.append(f"<h{level + 1}>{esc(title)}</h{level + 1}><ul>" + "".join(f"<li>{esc(line)}</li>" for line in lines)
                    + "</ul>")
    return "".join(body)


def digest_html(digest: Mapping[str, Any], t: Translator | None = None) -> str:
    """A self-contained page (no script, no outside resource): every text escaped."""
    t = _t(t)
    esc = _html.escape
    head = t("Digest of {job}, due {due}, on the session of {session}", job=digest["job"], due=digest["due"],
             session=digest["session"])
    body = [digest_body_html(digest, t)]
    lang = "zh" if t.lang == "zh" else "en"
    return (f"<!DOCTYPE html><html lang=\"{lang}\"><head><meta charset=\"utf-8\"><title>{esc(head)}</title>"
            "<style>body{font-family:sans-serif;max-width:46rem;margin:1rem auto;padding:0 1rem}"
            "h2{font-size:1.05rem;margin-top:1.2rem}</style></head><body>" + "".join(body) + "</body></html>")


def webhook_payload(digest: Mapping[str, Any], t: Translator | None = None) -> dict[str, Any]:
    t = _t(t)
    return {"text": digest_subject(digest, t) + "\n\n" + digest_text(digest, t), "digest": dict(digest)}


def alert_text(job: str, message: str, t: Translator | None = None) -> tuple[str, str]:
    """(subject, text) of an alert that comes without a digest (a job that failed as a whole, a pause)."""
    t = _t(t)
    return t("Alert: {job}", job=job), message + "\n"
