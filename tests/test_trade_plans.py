"""The offline engine's trade plans pass a risk question: levels from volatility and the month's
support and resistance, reward:risk ≥ 1.5 on every long or short call, a horizon that is the scoring
window, and a decision card that shows % to target and stop and the R:R (English and 中文)."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from bench.bench_plans import TICKERS, fridays, plans
from studio import export
from tradingagents.i18n import Translator
from tradingagents.llm_clients.offline.roles import MIN_REWARD_RISK, plan_levels


def test_every_plan_over_weekly_decisions_on_five_demo_tickers_pays_at_least_1_5_times_its_risk(ta_home):
    # every fourth Friday of 2024 on the five tickers (the full year of weeks: bench/bench_plans.py)
    made = plans(TICKERS, fridays(dt.date(2024, 1, 1), dt.date(2024, 12, 31), step=4))
    assert len(made) == 2 * 5 * 13 and all(p["target"] is not None for p in made)
    for p in made:
        side, entry = p["side"], p["entry"]
        assert (p["target"] - entry) * side > 0, p  # a long's target above the entry, a short's below
        assert (entry - p["stop"]) * side > 0, p  # a long's stop below, a short's above
        assert (p["target"] - entry) * side / ((entry - p["stop"]) * side) >= MIN_REWARD_RISK, p
        assert p["reward_risk"] >= MIN_REWARD_RISK
    # the levels come from the instrument: not the same percentage for every ticker
    assert len({round(p["target"] / p["entry"], 3) for p in made}) > 20


def test_levels_use_the_support_and_resistance_when_they_pay_and_the_atr_otherwise():
    closes = [100, 96, 98, 104, 112, 106, 103, 105]  # support 96, resistance 112; the last close 105
    long = plan_levels(1, 105, 3.0, closes)  # the support is 3 ATRs under: the stop 1.5 ATRs under the entry
    assert long["stop"] == 100.5 and long["target"] == 112 and long["reward_risk"] == 1.56  # the resistance pays
    near = plan_levels(1, 105, 3.0, [100, 99, 104, 105, 130, 105])  # support 99 is 2 ATRs under: stop 98.25
    assert near["stop"] == 98.25 and near["target"] == 105 + 2 * (105 - 98.25)  # resistance 130 too far
    at_level = plan_levels(-1, 105, 3.0, [95, 104, 109, 105])  # resistance 109 (1.33 ATR), support 95
    assert at_level["stop"] == 109.75 and at_level["target"] == 95 and at_level["reward_risk"] >= 1.5
    # no ATR: the mean daily move of the closes; no price or no movement: no plan
    assert plan_levels(1, 10, None, [10, 11, 10, 11, 10])["stop"] == 8.5
    assert plan_levels(1, 10, None, [10, 10]) is None and plan_levels(1, 0, 2.0, []) is None


def test_an_offline_run_states_the_scoring_window_and_its_card_shows_the_plan(ta_home):
    from tradingagents.graph.decision_card import decision_card
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = TradingAgentsGraph(selected_analysts=["market"], config={"analyst_execution": "sequential",
                                                                      "max_debate_rounds": 1, "holding_days": 10})
    state, rating = graph.propagate("NVDA", "2024-05-10")
    decision = state["final_trade_decision"]
    assert "**Time horizon**: 10 trading days" in decision and "months" not in decision
    card = decision_card(state, 10)
    assert card["time_horizon"] == "10 trading days" and card["scored_horizon"] == "10 trading days"
    if card["action"] == "HOLD":
        assert card["price_target"] is None and card["stop_loss"] is None
    else:
        assert card["reward_risk"] >= MIN_REWARD_RISK
    plan = state["trader_investment_plan"]
    if "BUY" in plan.splitlines()[-1] or "SELL" in plan.splitlines()[-1]:
        assert re.search(r"- Reward:risk \d\.\d : 1 over 10 trading days", plan)


CARD = {"rating": "Overweight", "action": "BUY", "conviction": "high", "entry_price": 100.0, "price_target": 112.0,
        "stop_loss": 94.0, "position_size": "half", "time_horizon": "5 trading days", "scored_horizon": "5 trading days"}


@pytest.mark.parametrize("lang, rows", [
    ("en", {"Price target": "$112.00 (+12.0%)", "Stop": "$94.00 (−6.0%)", "Reward:risk": "2.0 : 1", "Conviction": "High"}),
    ("zh", {"目标价": "$112.00 (+12.0%)", "止损": "$94.00 (−6.0%)", "盈亏比": "2.0 : 1", "信心": "高"})])
def test_the_card_shows_the_percent_to_target_and_stop_and_the_reward_risk(lang, rows):
    shown = dict(export.card_rows(CARD, "USD", t=Translator(lang)))
    for label, value in rows.items():
        assert shown[label] == value
    assert list(shown.values()).count(shown["评级" if lang == "zh" else "Rating"]) == 1  # the rating once


def test_a_hold_card_says_it_has_no_levels_in_both_languages():
    hold = {**CARD, "rating": "Hold", "action": "HOLD", "entry_price": None, "price_target": None, "stop_loss": None}
    assert dict(export.card_rows(hold, "USD"))["Reward:risk"] == "none for a Hold"
    assert dict(export.card_rows(hold, "USD", t=Translator("zh")))["目标价"] == "持有不设价位"


def test_a_call_without_a_trade_names_its_price_a_reference_price_in_both_languages():
    """A Hold's price is what the call is measured from, not an entry (the memory log's 参考价); a Buy keeps
    its entry. The offline engine's fixed size and horizon phrases read in the reader's language."""
    hold = {**CARD, "rating": "Hold", "action": "HOLD", "entry_price": 100.0, "price_target": None,
            "stop_loss": None, "position_size": "no change to the current exposure", "time_horizon": "5 trading days"}
    en, zh = dict(export.card_rows(hold, "USD")), dict(export.card_rows(hold, "USD", t=Translator("zh")))
    assert en["Reference price"] == "$100.00" and "Entry" not in en
    assert zh["参考价"] == "$100.00" and "入场价" not in zh
    assert zh["仓位"] == "当前敞口保持不变" and zh["声明的期限"] == "5 个交易日", zh
    assert "入场价" in dict(export.card_rows(CARD, "USD", t=Translator("zh")))
    free = {**hold, "position_size": "a quarter of the book, scaled in", "time_horizon": "3-6 months"}
    assert dict(export.card_rows(free, "USD", t=Translator("zh")))["仓位"] == "a quarter of the book, scaled in"
    from tradingagents.graph.decision_card import display_text

    shown = display_text("**Position size**: no change to the current exposure\n**Time horizon**: 5 trading days\n"
                         "**Time horizon**: 3-6 months", Translator("zh"))
    assert shown == "**仓位**：当前敞口保持不变\n**期限**：5 个交易日\n**期限**：3-6 months"


def test_every_figure_of_the_plan_is_traced_to_the_data_in_both_languages(ta_home):
    """The levels, the reward:risk and the horizon are the plan's own proposals and windows, not figures the
    evidence ledger cannot find ("5 个交易日" is a window, like "5 trading days")."""
    from tradingagents.graph.decision_card import decision_card
    from tradingagents.graph.evidence import ledger
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    for language in ("English", "Chinese"):
        graph = TradingAgentsGraph(selected_analysts=["market"], config={
            "analyst_execution": "sequential", "max_debate_rounds": 1, "output_language": language})
        state, _rating = graph.propagate("XOM", "2024-08-09")
        assert "SELL" in state["trader_investment_plan"].splitlines()[-1]  # a call with levels
        found = ledger(state, [], decision_card(state, 5))
        for key in ("trader_investment_plan", "final_trade_decision"):
            assert found[key]["not_found"] == [], (language, key, found[key]["not_found"])


def test_a_hold_card_shows_the_close_it_is_measured_from_and_a_trade_never_gets_an_invented_entry(ta_home):
    from tradingagents.graph.book_view import close_on
    from tradingagents.graph.decision_card import with_reference_price
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = TradingAgentsGraph(["market"], config={"checkpoint_enabled": False})
    graph.propagate("PG", "2024-05-10")  # a Hold on the demo market: the engine names no price for it
    card = graph.last_run["record"]["meta"]["decision"]
    assert card["action"] == "HOLD" and card["price_target"] is None and card["stop_loss"] is None
    assert card["entry_price"] == pytest.approx(close_on(graph._provider(), "PG", "2024-05-10"))
    # only a call that trades nothing and names no price is filled, and only with a real close
    buy = {**CARD, "entry_price": None}
    assert with_reference_price(buy, 100.0)["entry_price"] is None
    hold = {**CARD, "rating": "Hold", "action": "HOLD", "entry_price": None}
    assert with_reference_price({**hold, "entry_price": 90.0}, 100.0)["entry_price"] == 90.0
    assert with_reference_price(hold, None)["entry_price"] is None
    assert with_reference_price(hold, float("nan"))["entry_price"] is None
    assert with_reference_price(hold, 100.0)["entry_price"] == 100.0
