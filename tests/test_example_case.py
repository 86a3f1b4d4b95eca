"""The Run page's "Run an example" (``demo_identities.EXAMPLE_CASE``) is a first run worth showing: on the demo
market the offline team makes a decisive call there with a whole plan (entry, target, stop) whose reward:risk
passes the committee's first question, in English and in Chinese."""

from __future__ import annotations

import pytest

from studio.run_view import example_config
from tradingagents.dataflows.demo_identities import EXAMPLE_CASE
from tradingagents.graph.decision_card import decision_card
from tradingagents.graph.trading_graph import TradingAgentsGraph


@pytest.mark.parametrize("language", ["English", "Chinese"])
def test_the_example_is_a_decisive_call_with_a_whole_plan(ta_home, language):
    config = {**example_config({"llm_provider": "offline", "data_vendor": "demo", "output_language": language}),
              "offline_stream_delay_s": 0.0}  # the pace changes when the words come, not which words
    ticker, date = EXAMPLE_CASE
    state, rating = TradingAgentsGraph(config=config).propagate(ticker, date)
    card = decision_card(state)
    assert rating not in ("Hold", None), rating  # a call a committee can argue with, not "wait and see"
    assert card["action"] in ("BUY", "SELL")
    for field in ("entry_price", "price_target", "stop_loss"):
        assert card[field] is not None, field
    assert card["reward_risk"] is not None and card["reward_risk"] >= 1.5, card
    assert card["entry_price"] == pytest.approx(89.87)  # the README's close of that session
