"""The verdict on the edge on top of a finished backtest: from the backtest's own statistics (the
team's excess return over Buy & Hold, its p-value, the no-edge worlds), with a forest plot, a blind
badge, no annualised figure over less than a year, and the p-value in view; English and 中文."""

from __future__ import annotations

import datetime as dt

from studio import backtest_view as view
from tests.app.apptest_utils import texts
from tests.app.test_backtest_page import _fill, _page, _status, _until
from tradingagents.i18n import translator


def _metrics(team_cr: float, p: float, control: tuple[float, float] | None = None, key: str = "NVDA") -> dict:
    out = {key: {"TradingAgents": {"cr": team_cr, "cr_ci": [team_cr - 0.1, team_cr + 0.1], "p_value_vs_buy_hold": p},
                 "Buy & Hold": {"cr": 0.20, "cr_ci": [0.05, 0.35]}}}
    if control:
        out["control"] = {"by_ticker": {key: {"excess_cr": {"p05": control[0], "p95": control[1]}}}}
    return out


def test_the_verdict_says_no_evidence_when_the_team_trails_or_sits_inside_the_no_skill_range():
    v = view.edge_verdict(_metrics(-0.41, 0.999, (-0.7, 0.3)))
    assert not v["evidence"]
    assert v["headline"] == "No evidence of edge: −61 pts against Buy & Hold, p = 0.999, inside the no-skill range"
    # ahead and significant, but not beyond what luck gives in the no-edge worlds: still no evidence
    v = view.edge_verdict(_metrics(0.35, 0.01, (-0.3, 0.3)))
    assert not v["evidence"] and "inside the no-skill range" in v["headline"]
    zh = view.edge_verdict(_metrics(-0.41, 0.999, (-0.7, 0.3)), t=translator("zh"))
    assert zh["headline"] == "没有优势的证据：相对买入持有 −61 个百分点，p = 0.999，处于无技能区间内"


def test_the_verdict_says_evidence_when_the_team_leads_significantly_and_above_the_worlds():
    v = view.edge_verdict(_metrics(0.45, 0.004, (-0.1, 0.1)))
    assert v["evidence"]
    assert v["headline"] == "Evidence of edge: +25 pts against Buy & Hold, p = 0.004, above the no-skill range"
    assert view.edge_verdict(_metrics(0.45, 0.004))["headline"] == \
        "Evidence of edge: +25 pts against Buy & Hold, p = 0.004"  # no control: no range to place it in
    assert view.edge_verdict(_metrics(0.2112, 0.3))["headline"] == \
        "No evidence of edge: +1.1 pts against Buy & Hold, p = 0.300"  # under ten points: one decimal
    two = {**_metrics(0.45, 0.004), **_metrics(0.1, 0.6, key="AAPL")}
    v = view.edge_verdict(two, t=translator("zh"))
    assert v["headline"] == "2 只股票中有 1 只显示出优势的证据" and len(v["lines"]) == 2 and not v["evidence"]


def test_the_forest_plot_has_one_interval_per_strategy_and_ticker():
    fig = view.forest_figure(_metrics(0.3, 0.1))
    trace = fig.data[0]
    assert list(trace.y) == ["NVDA · TradingAgents", "NVDA · Buy & Hold"]
    assert [round(x, 6) for x in trace.x] == [30.0, 20.0]
    assert [round(x, 6) for x in trace.error_x.arrayminus] == [10.0, 15.0]


def test_short_period_withholds_annualised_figures_and_the_p_value_sits_beside_the_return():
    assert view.short_period({"NVDA": 80}) == 80 and view.short_period({"NVDA": 300}) is None
    metrics = {"NVDA": {"TradingAgents": {"cr": 0.2, "arr": 6.8749, "alpha": 3.1, "p_value_vs_buy_hold": 0.5},
                        "Buy & Hold": {"cr": 0.1, "arr": 2.0}}}
    table = view.paper_table(metrics, days=80)
    assert list(table.columns[:5]) == ["Ticker", "Strategy", "CR %", "CR 95% CI", "p vs B&H"]
    assert set(table["ARR %"]) == {view.DASH} and set(table["Alpha %/yr"]) == {view.DASH}
    assert view.paper_table(metrics)["ARR %"].iloc[0] == 687.49  # a year or more: shown as computed


def test_a_finished_blind_backtest_shows_its_verdict_forest_and_badge_in_chinese(ta_home):
    at = _page({"lang": "zh"})
    _fill(at, "NVDA", dt.date(2024, 6, 3), dt.date(2024, 6, 7))
    at.toggle(key="bt_blind").set_value(True)
    at.run()
    at.button(key="bt_start_btn").click()
    at.run()
    at = _until(at, lambda a: _status(a) == "finished")
    assert not at.exception
    shown = texts(at)
    assert "盲测回测" in shown and ":violet-badge[:material/visibility_off: 盲测]" in shown
    verdict = next(m.value for m in at.markdown if str(m.value).startswith("### "))
    assert "优势的证据：相对买入持有" in verdict and "Evidence" not in verdict
    assert "未显示年化收益和年化 alpha：5 个交易日不足一年" in shown
    assert any(c.proto.spec and "累计收益" in c.proto.spec for c in at.get("plotly_chart"))
    paper = next(df.value for df in at.dataframe if "策略" in df.value.columns)
    assert list(paper.columns)[4] == "p 值（对比买入持有）"  # beside the return, never scrolled off
