"""Chinese names each figure by what it is (issue 43): the memory log's two closes are the price the call
was measured from and the one it was judged at, whatever the rating (never 买入价/卖出价, "buy/sell price",
under a Hold or a Sell)."""

from __future__ import annotations

from tradingagents.i18n import translator

ZH = translator("zh")


def test_the_memory_logs_closes_are_named_for_every_rating():
    assert (ZH("entry"), ZH("exit"), ZH("exit date")) == ("参考价", "评估价", "评估日期")
    caption = ZH("Entry and exit are the closes the return was measured between; the benchmark's return is over the "
                 "same window and alpha = raw return − benchmark return. {dash} marks a value that does not exist "
                 "yet (pending) or that older entries did not record.", dash="—")
    assert caption.startswith("参考价和评估价") and "买入价" not in caption and "卖出价" not in caption


def test_the_no_edge_control_is_said_in_the_pages_language():
    from studio import backtest_view
    from tests.test_i18n_exports import english_words

    metrics = {"control": {"worlds": 20, "by_ticker": {"NVDA": {
        "worlds": 20, "beat_buy_hold": 9, "real_excess_cr": -0.031,
        "text": "The team beat Buy & Hold in 9 of 20 worlds with no edge; on the real prices its cumulative return "
                "over Buy & Hold's was -3.10%.",
        "excess_cr": {"mean": 0.001, "p05": -0.03, "p95": 0.04}, "real_beats_share_of_worlds": 0.05}}}}
    (zh,) = backtest_view.control_text(metrics, t=ZH)
    assert "在 20 个无优势世界中，团队有 9 个跑赢买入持有" in zh and "-3.10%" in zh
    assert english_words(zh.replace("NVDA", "")) == [], zh
    (en,) = backtest_view.control_text(metrics)
    assert en.startswith("NVDA: The team beat Buy & Hold in 9 of 20 worlds with no edge; on the real prices its "
                         "cumulative return over Buy & Hold's was -3.10%. Excess CR")


def test_a_blind_backtest_is_labelled_blind_in_the_picker_in_both_languages():
    from studio import backtest_view

    row = {"id": "b1", "status": "finished", "done": 4, "total": 4,
           "args": {"spec": {"tickers": ["NVDA"], "start": "2024-06-03", "end": "2024-06-06", "blind": True}}}
    assert backtest_view.past_label(row).endswith("finished (4/4 steps) · Blind")
    assert backtest_view.past_label(row, t=ZH).endswith(" · " + ZH("Blind")) and ZH("Blind") != "Blind"
    row["args"]["spec"]["blind"] = False
    assert not backtest_view.past_label(row).endswith("Blind")
