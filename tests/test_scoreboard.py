"""Who was right: the scoreboard from the memory log and the saved runs (pure scoring, the CLI, the desk)."""

from __future__ import annotations

import json

import pytest

from tests import pg_server as _pg
from tradingagents import cli
from tradingagents.scoreboard import gather, mean_interval, score, stats, wilson

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures


def _entry(ticker, rating, alpha, pm=None, by="pm@desk", provider="offline", pending=False):
    return {"date": "2024-05-10", "ticker": ticker, "rating": rating, "pending": pending, "alpha": alpha,
            "llm_provider": provider, "models": {"quick": "q", "deep": "d"},
            "pm_decision": {"rating": pm, "by": by} if pm else None}


def test_wilson_and_mean_intervals():
    lo, hi = wilson(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)  # the textbook values
    assert wilson(0, 0) is None and wilson(0, 5)[0] == 0.0 and wilson(5, 5)[1] == 1.0
    assert mean_interval([0.01]) is None
    lo, hi = mean_interval([0.01, 0.03])
    assert lo < 0.02 < hi and (hi - lo) / 2 == pytest.approx(1.959964 * 0.0141421 / 2 ** 0.5, rel=1e-4)
    s = stats([(True, 0.02), (False, -0.01), (None, None)])
    assert s["n"] == 2 and s["hits"] == 1 and s["hit_rate"] == 0.5 and s["mean_alpha"] == pytest.approx(0.005)


def test_score_counts_each_call_on_its_entrys_alpha():
    entries = [
        _entry("NVDA", "Buy", 0.03, pm="Sell"),          # team right, PM wrong
        _entry("AAPL", "Buy", -0.04, pm="Sell"),         # team wrong, PM right
        _entry("MSFT", "Hold", 0.01, pm="Hold", by="lead@desk"),  # both right, agreed
        _entry("AMZN", "Sell", -0.05, provider="openai"),         # no PM call
        _entry("TSLA", "Buy", None, pm="Buy", pending=True),      # pending: not scored
    ]
    runs = {("NVDA", "2024-05-10"): {"state": {"investment_plan": "**Recommendation**: Underweight",
                                               "trader_investment_plan": "FINAL TRANSACTION PROPOSAL: **SELL**"},
                                     "meta": {"decision": {"conviction": "high"},
                                              "debate_turns": [{"role": "bull", "text": "Up."},
                                                               {"role": "bear", "text": "**Rating**: Hold"}]}}}
    board = score(entries, runs)
    assert board["n_settled"] == 4
    pm_role = board["by_role"]["portfolio_manager"]
    assert pm_role["n"] == 4 and pm_role["hits"] == 3
    assert board["by_role"]["research_manager"]["n"] == 1 and board["by_role"]["research_manager"]["hits"] == 0
    assert board["by_role"]["trader"]["hits"] == 0
    assert board["by_role"]["bull"]["hits"] == 1  # its side, Buy, on +3%
    assert board["by_role"]["bear"]["hits"] == 0  # it stated Hold: |3%| is outside Hold's band
    assert set(board["by_model"]) == {"offline", "openai · d"} and board["by_model"]["openai · d"]["hits"] == 1
    assert board["by_person"]["pm@desk"]["n"] == 2 and board["by_person"]["pm@desk"]["hits"] == 1
    assert board["by_person"]["lead@desk"]["hits"] == 1
    vs = board["team_vs_pm"]
    assert vs["n"] == 3 and vs["hit_rate"] == pytest.approx(2 / 3) and vs["interval"] == wilson(2, 3)
    assert vs["team"]["hits"] == 2 and vs["agreement"]["rate"] == pytest.approx(1 / 3)
    assert vs["disagreed"] == {"n": 2, "pm_right": 1, "team_right": 1, "both_right": 0, "neither_right": 0,
                               "pm_win_rate": 0.5, "interval": wilson(1, 2)}
    assert vs["pm"]["mean_alpha"] == pytest.approx((-0.03 + 0.04 + 0.0) / 3)
    assert board["calibration"] == [{"conviction": "high", **stats([(True, 0.03)])}]


def test_scores_json_after_decide_and_settle(capsys):
    assert cli.main(["NVDA", "2024-05-01", "--analysts", "market", "--quiet"]) == 0
    assert cli.main(["decide", "NVDA", "2024-05-01", "--rating", "Sell", "--by", "pm@desk"]) == 0
    assert cli.main(["NVDA", "2024-05-08", "--analysts", "market", "--quiet"]) == 0  # settles 05-01 first
    assert cli.main(["settle"]) == 0
    capsys.readouterr()
    assert cli.main(["scores", "--json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["n_settled"] == 2
    for section in ("by_role", "by_model", "by_person"):
        for name, s in board[section].items():
            assert {"n", "hit_rate", "interval"} <= set(s), (section, name)
    assert board["by_role"]["portfolio_manager"]["n"] == 2 and board["by_role"]["trader"]["n"] == 2
    assert board["by_person"]["pm@desk"]["n"] == 1
    assert board["team_vs_pm"]["n"] == 1 and board["team_vs_pm"]["interval"] is not None
    assert list(board["by_model"]) == ["offline"]
    assert cli.main(["scores"]) == 0
    out = capsys.readouterr().out
    assert "Scoreboard: 2 settled decisions" in out and "Team vs you (1 decisions with both calls)" in out


def test_scoreboard_of_the_desk_database(pg_url, monkeypatch):
    from tradingagents.storage.pg_memory_log import PgMemoryLog

    log = PgMemoryLog({"storage_url": pg_url})
    log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy\nGo.")
    log.record_pm_decision("NVDA", "2024-05-10", {"rating": "Hold", "reason": "", "by": "pm@desk",
                                                  "at": "2024-05-10T16:00:00Z"})
    log.batch_update_with_outcomes([{"ticker": "NVDA", "trade_date": "2024-05-10", "raw_return": 0.05,
                                     "alpha_return": 0.04, "holding_days": 5, "reflection": "Up."}])
    board = gather({"storage_url": pg_url})
    assert board["n_settled"] == 1 and board["by_role"]["portfolio_manager"]["hits"] == 1
    assert board["by_person"]["pm@desk"]["hits"] == 0 and board["team_vs_pm"]["disagreed"]["team_right"] == 1
