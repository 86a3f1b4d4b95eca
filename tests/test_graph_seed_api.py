"""The seed documents' engine API, run as written (SEED_API.md), and the graph's one roster."""

from __future__ import annotations

import re

import pytest

from tradingagents import team
from tradingagents.errors import ConfigError, ValidationError

DATE = "2024-05-10"


def test_the_lifecycle_example_runs_verbatim():
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = TradingAgentsGraph(debug=False)
    final_state, signal = graph.propagate("AAPL", "2025-01-15")
    assert signal in ("Buy", "Overweight", "Hold", "Underweight", "Sell")
    lessons = graph.reflect_and_remember("+2.4%")
    assert set(lessons) == set(team.MEMORY_NAMES)
    assert all(re.search(r"\+2\.40?%", lesson) for _, lesson in lessons.values())
    matches = graph.trader_memory.get_memories(final_state["market_report"] + "\n" + final_state["news_report"],
                                               n_matches=1)
    assert len(matches) == 1 and set(matches[0]) == {"matched_situation", "recommendation", "similarity_score"}
    assert re.search(r"\+2\.40?%", matches[0]["recommendation"])


@pytest.mark.parametrize("given, raw", [
    ("+2.4%", 0.024), ("-0.8 %", -0.008), ("2.4%", 0.024), (" -0.8% ", -0.008), ("\u22121.5%", -0.015),
    (0.024, 0.024), (-1, -1.0), ({"raw": "+2.4%"}, 0.024), ({"raw": 0.03, "alpha": "-0.5%"}, 0.03),
])
def test_parse_returns_accepts_numbers_percent_strings_and_dicts(given, raw):
    from tradingagents.dataflows.returns import parse_returns

    out = parse_returns(given, holding_days=5)
    assert out["raw"] == pytest.approx(raw) and out["holding"] == 5 and out["end_date"] is None
    if isinstance(given, dict) and "alpha" in given:
        assert out["alpha"] == pytest.approx(-0.005)
    else:
        assert out["alpha"] == pytest.approx(raw)  # without an alpha, the raw return stands in


@pytest.mark.parametrize("bad, message", [
    ("2.4", "percent string"), ("lots", "percent string"), ("", "percent string"), (True, "not a return"),
    (None, "not a return"), (float("nan"), "finite"), ([0.1], "number or a percent string"),
    ({"alpha": 0.01}, "'raw'"), ({"raw": 0.01, "alfa": 0.01}, "alfa"), ({"raw": 0.01, "holding": 0}, "holding"),
    ({"raw": 0.01, "end_date": "soon"}, "YYYY-MM-DD"), (-1.5, "impossible"),
])
def test_a_bad_return_is_a_clear_validation_error(bad, message):
    from tradingagents.dataflows.returns import parse_returns

    with pytest.raises(ValidationError, match=message):
        parse_returns(bad, holding_days=5)


def test_reflect_and_remember_takes_percent_strings_and_a_dict_with_end_date():
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = TradingAgentsGraph(["market"])
    graph.propagate("7203.T", DATE)
    lessons = graph.reflect_and_remember("-0.8 %")
    assert all(re.search(r"-0\.80?%", lesson) for _, lesson in lessons.values())
    with pytest.raises(ValidationError, match="percent string"):
        graph.reflect_and_remember("a lot")
    assert all(len(m) == 1 for m in graph.memories.values())  # the refused call wrote nothing
    graph.reflect_and_remember({"raw": 0.05, "alpha": 0.02, "holding": 3, "end_date": "2024-05-15"})
    assert all(len(m) == 2 for m in graph.memories.values())
    # a lesson is knowable from its end_date (given), else five business days after the decision
    situation = graph.trader_memory.items()[-1][0]
    known = [len(graph.trader_memory.get_memories(situation, n_matches=5, as_of=day))
             for day in ("2024-05-14", "2024-05-15", "2024-05-16", "2024-05-17")]
    assert known == [0, 1, 1, 2]


def test_reflect_and_remember_names_the_tickers_benchmark():
    from tests.test_agents_nodes import PromptRecorder
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = TradingAgentsGraph(["market"])
    graph.propagate("7203.T", DATE)
    rec = PromptRecorder()
    graph.quick_thinking_llm.callbacks = [rec]
    graph.reflect_and_remember(0.024)
    assert "\nAlpha vs ^N225: +2.40%\n" in rec.calls[-1][1].content


def test_analyst_node_spec_uses_tool_node_and_comes_from_the_roster():
    from tradingagents.graph.analyst_execution import ANALYST_SPECS, build_analyst_execution_plan

    [spec] = build_analyst_execution_plan(["social"])
    assert (spec.agent_node, spec.clear_node, spec.tool_node, spec.report_key) == (
        "Sentiment Analyst", "Msg Clear Sentiment", "tools_social", "sentiment_report")
    assert not hasattr(spec, "tools_node")
    for role in team.ANALYSTS:
        s = ANALYST_SPECS[role.key]
        assert (s.agent_node, s.clear_node, s.tool_node, s.report_key) == (
            role.node, role.clear_node, role.tool_node, role.output_key)


def test_path_maps_and_routers_come_from_the_roster():
    from tradingagents.graph.conditional_logic import ConditionalLogic
    from tradingagents.graph.setup import DEBATE_PATH_MAP, RISK_ANALYSIS_PATH_MAP

    assert set(DEBATE_PATH_MAP) == {r.node for r in team.speakers("invest")} | {team.judge("invest").node}
    assert set(RISK_ANALYSIS_PATH_MAP) == {r.node for r in team.speakers("risk")} | {team.judge("risk").node}
    logic = ConditionalLogic()
    for method in ("should_continue_market", "should_continue_social", "should_continue_news",
                   "should_continue_fundamentals", "should_continue_debate", "should_continue_risk_analysis"):
        assert callable(getattr(logic, method))
    # latest_speaker is the roster's label; the rotation follows the roster's speaking order
    risk = [r.node for r in team.speakers("risk")]
    for i, role in enumerate(team.speakers("risk")):
        state = {"risk_debate_state": {"count": 1, "latest_speaker": role.speaker}}
        assert logic.should_continue_risk_analysis(state) == risk[(i + 1) % 3]


@pytest.mark.parametrize("bad", ["many", 0, 11, None, 1.5, True])
def test_junk_rounds_are_a_clear_config_error_not_silently_one(bad):
    from tradingagents.graph.conditional_logic import ConditionalLogic

    with pytest.raises(ConfigError, match="max_debate_rounds"):
        ConditionalLogic(max_debate_rounds=bad)
    with pytest.raises(ConfigError, match="max_risk_discuss_rounds"):
        ConditionalLogic(max_risk_discuss_rounds=bad)
    assert ConditionalLogic("3", 2).max_debate_rounds == 3


def test_the_graphs_modules_declare_no_roster_facts_of_their_own():
    """No module of the graph or the agents spells a node name, a speaker or a memory name itself."""
    from pathlib import Path

    import tradingagents

    root = Path(tradingagents.__file__).parent
    files = [*root.joinpath("graph").glob("*.py"), *root.joinpath("agents").rglob("*.py")]
    files = [f for f in files if f.name not in ("memory.py",)]
    facts = [f'"{r.node}"' for r in team.ROSTER] + [f'"{r.memory}"' for r in team.ROSTER if r.memory]
    facts += [f'"{r.clear_node}"' for r in team.ANALYSTS] + [f'"{r.tool_node}"' for r in team.ANALYSTS]
    found = []
    for f in files:
        text = f.read_text(encoding="utf-8")
        # docstrings may name them; code may not: look only outside triple-quoted blocks
        code = "".join(part for i, part in enumerate(text.split('"""')) if i % 2 == 0)
        code = "\n".join(line.split("  #")[0] for line in code.splitlines())  # nor comments
        found += [(f.name, fact) for fact in facts if fact in code]
    assert found == []
