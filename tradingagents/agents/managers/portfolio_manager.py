"""Portfolio Manager: the final 5-tier decision, as structured output (deep model)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from tradingagents.agents.utils.agent_states import empty_risk_debate_state
from tradingagents.agents.utils.agent_utils import (
    agent_config,
    format_memories,
    lessons_used,
    pm_notes_block,
    recall,
    scoring_block,
    tagged,
    team_messages,
)
from tradingagents.i18n import language_of_output, translator
from tradingagents.llm_clients.structured import StructuredAnswer, invoke_structured, message_text
from tradingagents.rating import RATINGS_5_TIER, parse_rating


class PortfolioDecision(StructuredAnswer):
    """The Portfolio Manager's decision."""

    rating: Literal[RATINGS_5_TIER] = Field(  # type: ignore[valid-type]
        description="The final rating on the five-tier scale."
    )
    executive_summary: str = Field(description="Two to four sentences: the decision and its main reasons.")
    investment_thesis: str = Field(description="The reasoning: evidence for, risks against, what would change it.")
    price_target: float | None = Field(default=None, description="Price target in the instrument's currency, if any.")
    time_horizon: str | None = Field(default=None, description="Holding horizon, e.g. '1-3 months', if any.")
    action: Literal["BUY", "HOLD", "SELL"] | None = Field(
        default=None, description="The transaction to make now: BUY, HOLD or SELL.")
    conviction: Literal["low", "medium", "high"] | None = Field(
        default=None, description="How strongly the evidence supports the rating: low, medium or high.")
    entry_price: float | None = Field(default=None, description="Entry price (or level) in the instrument's currency.")
    stop_loss: float | None = Field(default=None, description="Stop-loss price in the instrument's currency.")
    position_size: str | None = Field(
        default=None, description="Position size in words, e.g. 'half of the target weight now'.")


PROMPT = """You are the Portfolio Manager of a trading team. You make the final decision on the instrument
after the risk committee's debate.

Weigh the Trader's proposal, the Research Manager's plan and the three risk analysts' arguments. Use
the outcomes of past decisions (in <past_decisions>) and the lessons from similar situations (in
<past_lessons>): repeat what worked, avoid what did not. Give the rating on the five-tier scale: Buy
(strong conviction to enter or add), Overweight (favourable, increase gradually), Hold (keep the
position, no action), Underweight (reduce exposure), Sell (exit or avoid). When <portfolio> describes the desk's book, decide
knowing what is held, its weight and the limits: the order is sized from your rating and capped by them. Then an executive summary,
the investment thesis, and if you can, the action (BUY/HOLD/SELL), your conviction, the entry, a price
target, a stop-loss, the position size and a time horizon. If you answer in plain
text, put the rating on its own line as `**Rating**: <tier>`.
{language}"""


def render_decision(decision: PortfolioDecision, lang: str | None = None) -> str:
    """Markdown of the decision: `**Rating**: X`, Executive Summary, Investment Thesis, target, horizon.

    The headings are in ``lang`` (the output language's code; English by default); the ``**Label**:``
    lines keep their English labels and canonical values, the grammar ``graph.decision_card`` reads."""
    t = translator(lang)
    parts = [
        f"**Rating**: {decision.rating}",
        t("### Executive Summary") + "\n\n" + decision.executive_summary.strip(),
        t("### Investment Thesis") + "\n\n" + decision.investment_thesis.strip(),
    ]
    extras = []
    if decision.action:
        extras.append(f"**Action**: {decision.action}")
    if decision.conviction:
        extras.append(f"**Conviction**: {decision.conviction}")
    for label, value in (("Entry", decision.entry_price), ("Price target", decision.price_target),
                         ("Stop-loss", decision.stop_loss)):
        if value is not None and math.isfinite(value):
            extras.append(f"**{label}**: {value:.2f}")
    if decision.position_size and decision.position_size.strip():
        extras.append(f"**Position size**: {' '.join(decision.position_size.split())}")
    if decision.time_horizon and decision.time_horizon.strip():
        extras.append(f"**Time horizon**: {decision.time_horizon.strip()}")
    if extras:
        parts.append("\n".join(extras))
    return "\n\n".join(parts)


def text_rating(text: str) -> str:
    """The rating of a plain-text answer (the fallback when the server has no structured output)."""
    return parse_rating(text) or "Hold"


def render_text_decision(text: str, rating: str | None = None, lang: str | None = None) -> str:
    """The plain-text fallback: the rating (``text_rating`` unless given), then the model's text."""
    t = translator(lang)
    rating = rating or text_rating(text)
    body = text.strip() or t("The model gave no explanation.")
    return f"**Rating**: {rating}\n\n" + t("### Executive Summary") + f"\n\n{body}"


def create_portfolio_manager(llm, memory, config=None):
    """Node "Portfolio Manager": writes ``final_trade_decision``, ``final_rating`` and ``judge_decision``.

    ``final_rating`` is THE rating of the run: the structured answer's field (or, for a plain-text
    answer, the rating parsed once from that text); the markdown is rendered from it, so nothing
    downstream needs to parse the text again ("Last month's rating: Sell" in a summary never wins).
    """
    cfg = agent_config(config)
    lang = language_of_output(cfg.get("output_language"))

    def portfolio_manager_node(state: Mapping[str, Any]) -> dict[str, Any]:
        debate = {**empty_risk_debate_state(), **dict(state.get("risk_debate_state") or {})}
        memories = recall(memory, state)
        instructions = PROMPT.format(header="", language="")
        stages = [
            tagged("investment_plan", state.get("investment_plan")),
            tagged("trader_plan", state.get("trader_investment_plan")),
            tagged("risk_debate_history", debate.get("history")),
        ]
        own = [
            *([tagged("portfolio", state["portfolio_context"])] if state.get("portfolio_context") else []),
            tagged("past_decisions", state.get("past_context") or "No past decisions on record."),
            tagged("past_lessons", format_memories(memories)),
            scoring_block(cfg),
            *pm_notes_block(state, "portfolio_manager"),
            "Make the final decision.",
        ]
        messages = team_messages(state, stages, instructions, own, config=cfg)
        decision, raw = invoke_structured(llm, PortfolioDecision, messages)
        if isinstance(decision, PortfolioDecision):
            rating = str(decision.rating)
            markdown = render_decision(decision, lang)
        else:
            text = message_text(raw)
            rating = text_rating(text)
            markdown = render_text_decision(text, rating, lang)
        new_debate = dict(debate)
        new_debate["judge_decision"] = markdown
        return {"final_trade_decision": markdown, "final_rating": rating, "risk_debate_state": new_debate,
                **lessons_used(memory, memories)}

    return portfolio_manager_node
