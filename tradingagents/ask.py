"""Ask the team: a question to any agent that took part in a saved run, answered in its role from that
run's material only, and kept with the run (``meta.questions``).

``ask(config, ticker, date, agent, question)`` answers and saves one thread item
``{"agent", "question", "answer", "by", "at", "usage"}``:

- **material** (``material_of``): the agent's own text in that run (an analyst's report, a debater's
  turns, a judge's verdict, the trader's plan), then what it read there (the reports, the debate it
  judged or answered, the plan it was handed). Nothing else: no data dated after the analysis date can
  reach an answer, because none is looked up.
- **networked model** (the run's provider and models unless the config given overrides them): one
  streamed call, in the role, with the material and the question, counted in ``usage`` (tokens and
  cost at the pricing table's prices) and held to ``max_cost_usd`` (``BudgetExceeded``, exit 5).
- **offline engine**: ``offline_answer`` quotes the sentences of the material that best match the
  question (its words, and any figure it names: a figure asked about is quoted back), own material
  first, in the run's language; it says so when nothing matches. Deterministic.

The agent is named by its roster key (``bear``), its node (``Bear Researcher``) or its debate label
(``Bear``), case-insensitive (``resolve_agent``); an agent that did not take part, or a run that does
not exist, is a ``ValidationError`` naming what exists.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable, Mapping
from typing import Any

from tradingagents import team
from tradingagents.errors import ValidationError
from tradingagents.i18n import N_, Translator, language_of_output, translator
from tradingagents.memory.tokens import bm25_tokenize

__all__ = ["QUESTION_MAX", "ask", "material_of", "offline_answer", "resolve_agent", "took_part"]

QUESTION_MAX = 2000
"""The longest question kept (characters)."""
QUOTES = 3
"""How many sentences the offline answer quotes at most."""

# words that say nothing about what is asked (the question's own grammar)
_STOP = frozenset("""a an the and or but of to in on at for from by with about as is are was were be been being do
does did done why what how when where which who whom whose that this these those it its it's you your yours
i me my we our they them their he she his her there here not no so than then too very can could would should
will shall may might must have has had having any some more most less into over under again just also
吗 呢 吧 啊 的 了 是 在 和 与 你 我 他 她 它 们 为 什 么 怎 样 这 那 有 会 要 就 都 也""".split())
_FIGURE_RE = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?%?")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？；;])\s+|\n+")
_MARKUP_RE = re.compile(r"^[\s>*#\-•|]+|\*\*|__|`")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# ---------------------------------------------------------------------------- who took part, what they had
def took_part(run: Mapping[str, Any]) -> list[team.Role]:
    """The roles of a saved run that produced something: its analysts, then everyone who spoke or wrote."""
    state, meta = run.get("state") or {}, run.get("meta") or {}
    spoke = {t.get("role") for t in meta.get("debate_turns") or [] if isinstance(t, Mapping)}
    out = []
    for role in team.ROSTER:
        if role.output_key and str(state.get(role.output_key) or "").strip():
            out.append(role)
        elif role.debate and (role.key in spoke or _history_turns(role, state)):
            out.append(role)
    return out


def resolve_agent(name: str, roles: list[team.Role]) -> team.Role:
    """The role ``name`` means (key, node or debate label, any case) among ``roles``; else a
    ``ValidationError`` naming the agents that took part."""
    want = " ".join(str(name or "").replace("_", " ").split()).lower()
    for role in team.ROSTER:
        names = {role.key.replace("_", " "), role.node.lower(), (role.speaker or "").lower(), (role.title or "").lower()}
        if want and want in names:
            if role in roles:
                return role
            break
    listed = ", ".join(f"{r.key} ({r.node})" for r in roles)
    raise ValidationError(f"No agent {name!r} took part in this run. Ask one of: {listed}.")


def _history_turns(role: team.Role, state: Mapping[str, Any]) -> list[str]:
    debate = state.get("investment_debate_state" if role.debate == "invest" else "risk_debate_state") or {}
    history = str(debate.get(f"{role.speaker.lower()}_history") or "") if role.speaker else ""
    label = role.turn_label + ":"
    return [p.strip() for p in history.split(label) if p.strip()]


def material_of(role: team.Role, run: Mapping[str, Any]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """``(own, read)``: the agent's own texts in the run and what it read there, each ``(label, text)``."""
    state, meta = run.get("state") or {}, run.get("meta") or {}
    own: list[tuple[str, str]] = []
    if role.output_key and str(state.get(role.output_key) or "").strip():
        own.append((role.title or role.node, str(state[role.output_key])))
    if role.debate:
        turns = [t for t in meta.get("debate_turns") or [] if isinstance(t, Mapping) and t.get("role") == role.key]
        if turns:
            own += [(f"{role.node}, round {t.get('round') or i + 1}", str(t.get("text") or "")) for i, t in enumerate(turns)]
        else:
            own += [(role.node, text) for text in _history_turns(role, state)]
    read: list[tuple[str, str]] = []
    reports = [(r.title or r.node, str(state.get(r.output_key) or "")) for r in team.ANALYSTS]
    if role.is_analyst:
        pass  # its own data became its report; the run keeps no other trace of what it fetched
    elif role.debate == "invest" or role.key == "research_manager":
        read = reports + [(r.node, str(t.get("text") or "")) for r in team.speakers("invest") if r is not role
                          for t in meta.get("debate_turns") or [] if t.get("role") == r.key]
    elif role.key == "trader":
        read = [("Research plan", str(state.get("investment_plan") or "")), *reports]
    else:  # the risk debaters and the Portfolio Manager
        read = [("Trader", str(state.get("trader_investment_plan") or "")),
                ("Research plan", str(state.get("investment_plan") or ""))]
        read += [(r.node, str(t.get("text") or "")) for r in team.speakers("risk") if r is not role
                 for t in meta.get("debate_turns") or [] if t.get("role") == r.key]
    return own, [(label, text) for label, text in read if text.strip()]


# ---------------------------------------------------------------------------- the offline answer
def _sentences(text: str) -> list[str]:
    out = []
    for part in _SENTENCE_RE.split(text or ""):
        clean = _MARKUP_RE.sub("", part).strip()
        if len(clean) >= 3:
            out.append(clean)
    return out


def _figures(text: str) -> set[str]:
    return {f.replace(",", "").lstrip("+") for f in _FIGURE_RE.findall(text or "") if any(c.isdigit() for c in f)}


def _terms(text: str) -> set[str]:
    return {w for w in bm25_tokenize(text or "") if w not in _STOP and not w.isdigit()}


def _best(question: str, pieces: list[tuple[str, str]]) -> list[tuple[float, int, str, str]]:
    """The matching sentences of ``pieces``: (score, order, label, sentence), best first."""
    terms, figures = _terms(question), _figures(question)
    found = []
    order = 0
    for label, text in pieces:
        for sentence in _sentences(text):
            order += 1
            hit_terms = len(terms & _terms(sentence))
            hit_figures = len(figures & _figures(sentence))
            if hit_terms or hit_figures:
                found.append((hit_terms + 3 * hit_figures, order, label, sentence))
    found.sort(key=lambda f: (-f[0], f[1]))
    return found


def offline_answer(role: team.Role, question: str, own: list[tuple[str, str]], read: list[tuple[str, str]],
                   t: Translator) -> str:
    """The offline engine's answer: the best-matching sentences of the agent's own material (then of what
    it read) quoted in their order, or a sentence saying that nothing there matches."""
    chosen = _best(question, own)[:QUOTES]
    source = N_("From my own work in this run (offline engine, quoting it):")
    if not chosen:
        chosen = _best(question, read)[:QUOTES]
        source = N_("My own work in this run does not speak to that; from what I read in it (offline engine, quoting it):")
    if not chosen:
        return t("Nothing in my material for this run matches that question (offline engine: I can only quote what "
                 "this run holds). Ask about something in my {what}.",
                 what=t(N_("report")) if role.output_key and not role.debate else t(N_("turns")))
    chosen.sort(key=lambda f: f[1])
    lines = [t(source)]
    lines += [f"> {sentence}" + (f" ({label})" if len({c[2] for c in chosen}) > 1 else "")
              for _score, _order, label, sentence in chosen]
    return "\n".join(lines)


# ---------------------------------------------------------------------------- the networked answer
_SYSTEM = (
    "{header}\n"
    "You are the {node} of a trading team. A portfolio manager asks you about your part in the analysis above. "
    "Answer in your role, in a few sentences, from the material below only: your own work in this run and what "
    "you read in it. Say so when that material does not answer the question. {language}"
)


def _networked_answer(cfg: Mapping[str, Any], role: team.Role, run: Mapping[str, Any], question: str,
                      own: list[tuple[str, str]], read: list[tuple[str, str]], *, api_key: str | None,
                      on_token: Callable[[str], None] | None) -> tuple[str, dict[str, Any]]:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import HumanMessage, SystemMessage

    from tradingagents import pricing
    from tradingagents.agents.utils.agent_utils import header_lines, language_instruction
    from tradingagents.llm_clients.factory import create_llm
    from tradingagents.llm_clients.structured import message_text
    from tradingagents.llm_clients.usage import RunGuard, UsageTracker

    class _Tokens(BaseCallbackHandler):
        raise_error = False
        run_inline = True

        def on_llm_new_token(self, token, **kwargs):  # noqa: ANN001
            if on_token is not None and token:
                on_token(str(token))

    tracker = UsageTracker()
    limit = cfg.get("max_cost_usd")
    ledger = pricing.CostLedger(float(limit)) if limit is not None else None
    guard = RunGuard((ledger,), table=pricing.pricing_table(cfg),
                     max_output_tokens=pricing.output_limit(cfg, budgeted=True), where=" for a question")
    llm = create_llm(cfg, role.model, api_key=api_key)
    state = run.get("state") or {}
    system = _SYSTEM.format(header=header_lines(state), node=role.node, language=language_instruction(cfg)).strip()
    body = "\n\n".join([f"## Your own work: {label}\n{text.strip()}" for label, text in own]
                       + [f"## What you read: {label}\n{text.strip()}" for label, text in read])
    result = llm.invoke([SystemMessage(content=system), HumanMessage(content=f"{body}\n\n## The question\n{question}")],
                        config={"callbacks": [guard, tracker, _Tokens()],
                                "metadata": {team.ROLE_METADATA: role.key}})
    usage = {**tracker.totals(), "cost_usd": pricing.cost_by_node(tracker.by_node(), cfg)["cost_usd"],
             "model": getattr(llm, "model_name", None)}
    return message_text(result).strip(), usage


# ---------------------------------------------------------------------------- the one entry
def run_so_far(events: list[Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """A running analysis as ``ask`` reads a saved run: its texts so far (the ``report`` events, the last of
    each key) and its debate turns (``debate_turn`` events), with the run's settings as the saved meta's."""
    state: dict[str, Any] = {}
    turns: list[dict[str, Any]] = []
    for event in events:
        data = getattr(event, "data", None) or {}
        if getattr(event, "kind", None) == "report" and data.get("key"):
            state[str(data["key"])] = str(data.get("text") or "")
        elif getattr(event, "kind", None) == "debate_turn":
            turns.append({k: data.get(k) for k in ("debate", "role", "speaker", "round", "turn", "text")})
    return {"state": state, "meta": {"debate_turns": turns, "config": dict(config),
                                     "llm_provider": config.get("llm_provider")}}


def ask(config: Mapping[str, Any] | None, ticker: str, date: str, agent: str, question: str, *,
        by: str | None = None, api_key: str | None = None, overrides: Mapping[str, Any] | None = None,
        on_token: Callable[[str], None] | None = None, save: bool = True,
        run: Mapping[str, Any] | None = None, shared: bool = False) -> dict[str, Any]:
    """Answer ``question`` as ``agent`` of the saved run of ``ticker`` on ``date`` and keep the thread item
    in the run's ``meta.questions`` (``save=False``: only answer). Returns the item.

    ``run``: a run still going (``run_so_far``): its material so far is read instead of a saved run's, and
    nothing is saved (the run's job keeps the item and saves it with the run). ``shared``: asked from the shared
    app, whose environment's key goes only where that environment points (``check_key_destination``).

    The model is the run's provider and models, unless ``overrides`` (``llm_provider``, ``backend_url``,
    ``quick_think_llm``, ``deep_think_llm``, ``max_cost_usd``) say otherwise."""
    from tradingagents import storage
    from tradingagents.config import resolve_config
    from tradingagents.validation import validate_date, validate_ticker

    base = resolve_config(config)
    ticker, date = validate_ticker(ticker), validate_date(date, allow_future=True)
    if not isinstance(question, str) or not question.strip():
        raise ValidationError("Write a question to ask.")
    question = question.strip()
    if len(question) > QUESTION_MAX:
        raise ValidationError(f"The question is {len(question)} characters long; keep it under {QUESTION_MAX}.")
    try:
        if run is not None:
            save = False
        else:
            run = storage.load_run(base, ticker, date)
    except FileNotFoundError:
        have = sorted(r["date"] for r in storage.list_runs(base) if r["ticker"] == ticker)
        raise ValidationError(
            f"No saved run of {ticker} on {date}" + (f"; runs of {ticker}: {', '.join(have)}." if have else
                                                     f": run 'python -m tradingagents {ticker} {date}' first.")
        ) from None
    role = resolve_agent(agent, took_part(run))
    saved_cfg = (run.get("meta") or {}).get("config") or {}
    meta = run.get("meta") or {}
    chosen = {k: saved_cfg.get(k) for k in ("llm_provider", "backend_url", "quick_think_llm", "deep_think_llm",
                                             "output_language") if saved_cfg.get(k) is not None}
    chosen.setdefault("llm_provider", meta.get("llm_provider") or base["llm_provider"])
    chosen.update({k: v for k, v in (overrides or {}).items() if v is not None})
    cfg = resolve_config({**{k: v for k, v in base.items() if k not in ("quick_think_llm", "deep_think_llm")},
                          **chosen})
    own, read = material_of(role, run)
    if cfg["llm_provider"] == "offline":
        answer = offline_answer(role, question, own, read, translator(language_of_output(cfg.get("output_language"))))
        if on_token is not None:
            on_token(answer)
        usage: dict[str, Any] = {"llm_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                                 "model": "offline"}
    else:
        if shared:
            from tradingagents.llm_clients.factory import check_key_destination

            check_key_destination(cfg, api_key=api_key)
        answer, usage = _networked_answer(cfg, role, run, question, own, read, api_key=api_key, on_token=on_token)
    item = {"agent": role.key, "question": question, "answer": answer,
            "by": by or storage.default_user(base), "at": _now(), "usage": usage}
    if save:
        storage.append_run_item(base, ticker, date, "questions", item)
        storage.record_audit(base, "ask", by=item["by"], target=f"{ticker} {date}", agent=role.key,
                             cost_usd=usage.get("cost_usd"))
    return item
