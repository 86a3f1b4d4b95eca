"""``storage.inert.SanitizedView``: ``sanitize_tree`` read lazily reads exactly as ``sanitize_tree``."""

from __future__ import annotations

from collections.abc import Mapping

from tradingagents.storage import inert
from tradingagents.storage.files_runs import render_report_markdown

HOSTILE = "[x](javascript:alert(1)) <img src=x onerror=alert(1)> \x00\u202e ![i](http://a/b.png) \ud800"


def _plain(value):
    """A view (or any mapping) as the dict ``sanitize_tree`` would have built."""
    if isinstance(value, Mapping):
        return {k: _plain(value[k]) for k in value}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def test_the_view_reads_as_sanitize_tree_keys_values_and_nesting():
    tree = {"final_trade_decision": HOSTILE, "a\x00b": "clean key", "ab": "the last raw key of one cleaned key wins",
            "risk_debate_state": {"history": HOSTILE, "count": 3, "deep": {"x\u202e": [HOSTILE, {"y": HOSTILE}]}},
            "turns": [{"text": HOSTILE}], "n": 1.5, "none": None}
    view = inert.SanitizedView(tree)
    assert _plain(view) == inert.sanitize_tree(tree)
    assert list(view) == list(inert.sanitize_tree(tree))
    assert len(view) == len(inert.sanitize_tree(tree))
    assert "ab" in view and "a\x00b" not in view and view.get("missing") is None
    assert view["risk_debate_state"].get("history") == inert.sanitize_markdown(HOSTILE)


def test_the_report_reads_nothing_unsanitised_and_says_the_same_as_from_the_eager_tree():
    state = {"company_of_interest": "NVDA", "trade_date": "2024-05-10", "final_trade_decision": HOSTILE,
             "market_report": HOSTILE, "investment_debate_state": {"history": HOSTILE, "bull_history": HOSTILE},
             "risk_debate_state": {"history": HOSTILE}, "investment_plan": HOSTILE, "past_context": HOSTILE}
    meta = {"ticker": "NVDA", "analysts": ["market"], "session_note": HOSTILE, "log_note": HOSTILE,
            "usage": {"llm_calls": 3}, "elapsed_s": 1.0, "instrument_context": HOSTILE, "debate_turns": [{"text": HOSTILE}]}
    eager = inert.sanitize_tree(state), inert.sanitize_tree(meta)
    report = render_report_markdown(state, "Sell", meta)
    assert report == render_report_markdown(*[eager[0], "Sell", eager[1]])
    assert "<img" not in report and "javascript:" not in report and "\x00" not in report
