"""What each role was given from memory is recorded (meta["memory_used"]) and is exactly what its prompt held."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.fake_openai import fake_openai  # noqa: F401
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.memory.situation_memory import FinancialSituationMemory, lesson_id
from tradingagents.rating import parse_settled_headers, settled_header

DATE = "2024-05-10"
SITUATION = "NVDA market report price trend momentum volume sentiment news fundamentals revenue growth"


def _seed(graph) -> None:
    log = graph.memory_log
    log.store_decision("NVDA", "2024-03-01", "NVDA decision one", rating="Buy")
    log.store_decision("AAPL", "2024-03-04", "AAPL decision", rating="Sell")
    log.store_decision("NVDA", "2024-04-01", "NVDA decision two", rating="Overweight")
    log.batch_update_with_outcomes([
        {"ticker": "NVDA", "date": "2024-03-01", "raw": 0.05, "alpha": 0.021, "holding": 5, "reflection": "Right."},
        {"ticker": "AAPL", "date": "2024-03-04", "raw": -0.01, "alpha": 0.013, "holding": 5, "reflection": "Wrong."},
        {"ticker": "NVDA", "date": "2024-04-01", "raw": -0.06, "alpha": -0.075, "holding": 5, "reflection": "Lost."},
    ])
    for name, memory in graph.memories.items():
        memory.add_situations([(SITUATION, f"{name}: lesson one on momentum."),
                               (SITUATION + " earnings", f"{name}: lesson two on earnings.")], known_from="2024-04-10")
        memory.add_situations([(SITUATION, f"{name}: a lesson from the future.")], known_from="2024-06-01")


def _saved_meta(graph) -> dict:
    return json.loads(Path(graph.last_run["record"]["state_path"]).read_text())["meta"]


def _lessons_in(prompt: str) -> list[str]:
    block = re.search(r"<past_lessons>\n(.*?)\n</past_lessons>", prompt, re.S).group(1)
    return [re.sub(r"^\d+\. (.*?)(?: \(similarity [0-9.]+\))?$", r"\1", line) for line in block.splitlines()]


def test_lesson_ids_are_stable_across_reopenings():
    first = FinancialSituationMemory("bull_memory")
    first.add_situations([(SITUATION, "Press momentum.")], known_from="2024-01-05")
    got = FinancialSituationMemory("bull_memory").recall_lessons(SITUATION, n_matches=1)
    assert got[0]["id"] == lesson_id(SITUATION, "Press momentum.") == first.recall_lessons(SITUATION)[0]["id"]
    assert got[0]["known_from"] == "2024-01-05"


def test_settled_header_is_read_back_by_the_same_format():
    header = settled_header("2024-04-01", "NVDA", "Overweight", -0.064, -0.075, 5)
    assert header == "[2024-04-01 | NVDA | Overweight | return -6.4% | alpha -7.5% | 5d]"
    assert parse_settled_headers("x " + header) == [
        {"date": "2024-04-01", "ticker": "NVDA", "rating": "Overweight", "raw": -0.064, "alpha": -0.075, "holding": 5}]


def test_prompts_hold_exactly_what_memory_used_lists(fake_openai):  # noqa: F811
    graph = TradingAgentsGraph(config=fake_openai.llm_config())
    _seed(graph)
    graph.propagate("NVDA", DATE)
    used = _saved_meta(graph)["memory_used"]
    decisions = [(d["date"], d["ticker"], d["rating"]) for d in used["past_decisions"]]
    assert decisions == [("2024-04-01", "NVDA", "Overweight"), ("2024-03-01", "NVDA", "Buy"),
                         ("2024-03-04", "AAPL", "Sell")]
    assert used["past_decisions"][0]["alpha"] == -0.075
    # every memory-reading role recorded its lessons; none knowable only after the analysis date
    assert set(used["lessons"]) == set(graph.memories)
    for name, items in used["lessons"].items():
        assert {i["lesson"] for i in items} == {f"{name}: lesson one on momentum.", f"{name}: lesson two on earnings."}
        assert all(i["situation_date"] == "2024-04-10" and len(i["id"]) == 12 for i in items)
    prompts = {}
    for r in fake_openai.chat_requests:
        text = "\n".join(str(m.get("content")) for m in r["messages"])
        if "Make the final decision." in text:
            prompts["risk_manager_memory"] = text
    pm = prompts["risk_manager_memory"]
    # the Portfolio Manager's prompt: exactly the settled decisions listed, and exactly the lessons listed
    assert [(d["date"], d["ticker"], d["rating"]) for d in parse_settled_headers(pm)] == decisions
    assert _lessons_in(pm) == [i["lesson"] for i in used["lessons"]["risk_manager_memory"]]
    # the Research Manager (the other judge) likewise
    rm = next("\n".join(str(m.get("content")) for m in r["messages"]) for r in fake_openai.chat_requests
              if r["model"] == "fake-deep" and "Make the final decision." not in str(r["messages"]))
    assert _lessons_in(rm) == [i["lesson"] for i in used["lessons"]["invest_judge_memory"]]


def test_a_run_with_memory_off_records_nothing(fake_openai):  # noqa: F811
    graph = TradingAgentsGraph(config=fake_openai.llm_config(memory_enabled=False))
    graph.propagate("NVDA", DATE)
    assert _saved_meta(graph)["memory_used"] == {"past_decisions": [], "lessons": {}}


def test_offline_pm_cites_the_settled_decisions_it_was_given():
    graph = TradingAgentsGraph()
    _seed(graph)
    state, _ = graph.propagate("NVDA", DATE)
    decision = state["final_trade_decision"]
    assert "has settled yet" not in decision
    assert "The last settled call on NVDA, Overweight on 2024-04-01" in decision and "-7.5%" in decision
    assert "Settled decisions considered (3)" in decision and "AAPL of 2024-03-04 (+1.3% alpha, wrong)" in decision
    again = TradingAgentsGraph()
    assert again.memory_log.get_past_memory("NVDA", as_of=DATE)[1] == _saved_meta(graph)["memory_used"]["past_decisions"]


# ---------------------------------------------------------------- lessons consistent with the outcome
def _outcome_prompt(rating: str, alpha: float) -> str:
    from tradingagents.rating import was_right
    return (f"Instrument: NVDA\nDate: 2024-05-10\nRating: {rating}\nRealised return: {alpha:+.1%} over 5 trading days\n"
            f"Alpha vs SPY: {alpha:+.1%}\nVerdict: {'right' if was_right(rating, alpha) else 'wrong'}\n")


import pytest  # noqa: E402

from tradingagents.llm_clients.offline import roles  # noqa: E402
from tradingagents.rating import RATINGS_5_TIER, direction, was_right  # noqa: E402


@pytest.mark.parametrize("rating", RATINGS_5_TIER)
@pytest.mark.parametrize("right", [True, False])
def test_lessons_agree_with_was_right(rating, right):
    alpha = {1: 0.04, -1: -0.04, 0: 0.005}[direction(rating)] if right else {1: -0.04, -1: 0.04, 0: 0.06}[direction(rating)]
    assert was_right(rating, alpha) is right
    prompt = _outcome_prompt(rating, alpha)
    reflection = roles.reflection(prompt)
    lessons = roles.role_lessons(prompt)
    word = "right" if right else "wrong"
    assert "call on NVDA of " in reflection and f" was {word}:" in reflection
    pm = next(line for line in lessons.splitlines() if line.startswith("Portfolio Manager"))
    assert f"was {word}" in pm
    if rating == "Hold" and not right:
        # a wrong Hold never teaches "toward Hold"; it teaches the side the market took
        assert "toward Hold" not in lessons and "staying at Hold" in reflection and "Overweight" in pm
        assert "tighter stops" not in lessons
    elif not right:
        assert "moderate toward Hold" in pm
    else:
        assert "wrong" not in pm


def test_a_debater_presses_after_its_side_won_and_leans_on_the_whole_count_after_it_lost():
    from tradingagents.team import ROLES

    reports = "<market_report>\n- **Trend**: the close is above the 50-day average → bullish\n</market_report>\n"
    win = roles.role_lessons(_outcome_prompt("Buy", 0.04) + reports).splitlines()
    loss = roles.role_lessons(_outcome_prompt("Buy", -0.04) + reports).splitlines()
    bull_win = next(x for x in win if x.startswith("Bull")).split(": ", 1)[1]
    bull_loss = next(x for x in loss if x.startswith("Bull")).split(": ", 1)[1]
    base = "Instrument: NVDA\nDate: 2024-05-10\n"
    more = roles.debate_turn(ROLES["bull"], base + f"<past_lessons>\n1. {bull_win}\n</past_lessons>")
    less = roles.debate_turn(ROLES["bull"], base + f"<past_lessons>\n1. {bull_loss}\n</past_lessons>")
    assert "so I press them" in more and "I rest the case on the whole count" in less
    for turn in (more, less):  # it never argues against its own side
        assert "conviction" not in turn and "my side was wrong" not in turn.lower()
    assert roles.debate_turn(ROLES["bull"], base + f"<past_lessons>\n1. {bull_win}\n</past_lessons>") == more


def test_a_side_without_readings_learns_a_sentence_not_readings_such_as_none():
    lessons = roles.role_lessons(_outcome_prompt("Buy", 0.04))
    assert "such as none" not in lessons and "none" not in lessons.lower()
    bear = next(x for x in lessons.splitlines() if x.startswith("Bear"))
    assert "No bearish reading stood out on NVDA, and it beat its benchmark (+4.0% alpha)" in bear


@pytest.mark.parametrize("lesson_tier, call, agrees", [
    ("Overweight", "Overweight", True), ("Overweight", "Buy", True), ("Overweight", "Underweight", False),
    ("Underweight", "Overweight", False), ("Underweight", "Sell", True), ("Overweight", "Hold", False)])
def test_the_portfolio_managers_lesson_shown_agrees_with_the_call(lesson_tier, call, agrees):
    alpha = 0.06 if lesson_tier == "Overweight" else -0.06
    pm = next(x for x in roles.role_lessons(_outcome_prompt("Hold", alpha)).splitlines()
              if x.startswith("Portfolio Manager")).split(": ", 1)[1]
    assert f"lean {lesson_tier}" in pm
    assert roles.lesson_agrees(pm, call) is agrees
    right = next(x for x in roles.role_lessons(_outcome_prompt("Sell", -0.05)).splitlines()
                 if x.startswith("Portfolio Manager")).split(": ", 1)[1]
    assert roles.lesson_agrees(right, "Underweight") and not roles.lesson_agrees(right, "Buy")
    wrong = next(x for x in roles.role_lessons(_outcome_prompt("Buy", -0.05)).splitlines()
                 if x.startswith("Portfolio Manager")).split(": ", 1)[1]
    assert roles.lesson_agrees(wrong, "Overweight") and not roles.lesson_agrees(wrong, "Buy")


def test_a_memory_rule_that_hurt_more_than_it_helped_is_retired():
    def d(day, rating, alpha):
        return {"date": f"2024-05-{day:02d}", "ticker": "NVDA", "rating": rating, "raw": alpha, "alpha": alpha,
                "holding": 5}
    # two Buys lost, and each time the next Buy was right: moderating would have hurt twice
    history = [d(1, "Buy", -0.03), d(8, "Buy", 0.04), d(15, "Buy", -0.02), d(22, "Buy", 0.05)]
    assert roles.rule_record(history, "moderate") == (0, 2)
    # a lost Hold on a rise followed by another rise: following the move helped
    assert roles.rule_record([d(1, "Hold", 0.05), d(8, "Hold", 0.04)], "follow") == (1, 0)
    past = "\n".join(f"[{x['date']} | NVDA | {x['rating']} | return {x['raw']*100:+.1f}% | alpha {x['alpha']*100:+.1f}% | 5d]"
                      for x in history + [d(29, "Buy", -0.04)])
    prompt = ("Instrument: NVDA\nAnalysis date: 2024-06-05\n<past_decisions>\n" + past + "\n</past_decisions>\n"
              "<investment_plan>\n**Recommendation**: Buy\n</investment_plan>\n")
    decision = roles.portfolio_decision(prompt)
    assert decision["rating"] == "Buy"  # the last Buy lost, but the rule's record on NVDA retires it
    assert "retired on NVDA: on its past decisions it helped 0 time(s) and hurt 2" in decision["investment_thesis"]


@pytest.mark.parametrize("language", ["English", "Chinese"])
def test_the_trader_and_research_manager_show_only_a_lesson_that_agrees_with_their_call(language):
    from tradingagents.agents.utils.agent_utils import language_instruction

    head = language_instruction({"output_language": language}) + "\n"
    lines = roles.role_lessons(head + _outcome_prompt("Hold", 0.06)).splitlines()  # a Hold that missed a rise
    trader = next(x for x in lines if x.startswith("Trader")).split(": ", 1)[1]
    manager = next(x for x in lines if x.startswith("Research Manager")).split(": ", 1)[1]
    # "buy a starter position" / "side with the bullish case": a bullish call only
    assert roles.lesson_agrees(trader, "Overweight") and not roles.lesson_agrees(trader, "Underweight")
    assert roles.lesson_agrees(manager, "Buy") and not roles.lesson_agrees(manager, "Hold")
    right = roles.role_lessons(head + _outcome_prompt("Sell", -0.05)).splitlines()
    kept = next(x for x in right if x.startswith("Trader")).split(": ", 1)[1]  # the SELL was right: keep sizing
    assert roles.lesson_agrees(kept, "Sell") and not roles.lesson_agrees(kept, "Buy")
    base = head + "Instrument: NVDA\nAnalysis date: 2024-05-10\n"
    plan = roles.research_plan(base + f"<past_lessons>\n1. {manager}\n</past_lessons>")  # no readings: a Hold
    assert manager not in plan
    bearish = ("<investment_plan>\n**Recommendation**: Underweight\n</investment_plan>\n"
               f"<past_lessons>\n1. {trader}\n2. {kept}\n</past_lessons>")
    proposal = roles.trader_plan(base + bearish)
    assert kept in proposal and trader not in proposal  # the SELL lesson is shown, the "buy" one is not
