"""The offline debates argue, on real offline runs (several tickers and dates, one to three rounds, English
and Chinese): each turn opens differently from the speaker's other turns, answers the opponent's lead
point by quoting it, counts the readings as the reports hold them, applies each past lesson once, never
argues against its own side; the judges say which argument decided without reciting a formula; nothing
on screen names an indicator by its code or speaks like a developer."""

from __future__ import annotations

import re

import pytest

from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.llm_clients.offline.common import signals_in

REPORTS = ("market_report", "sentiment_report", "news_report", "fundamentals_report")
SHOWN = (*REPORTS, "investment_plan", "trader_investment_plan", "final_trade_decision")
# (ticker, first date, second date: the first settles before the second runs, so its lessons are recalled)
CASES = [("NVDA", "2024-05-01", "2024-05-10"), ("AAPL", "2024-09-03", "2024-09-13"),
         ("MSFT", "2025-02-03", "2025-02-12"), ("0700.HK", "2024-11-04", "2024-11-13")]
RAW_ID = re.compile(r"\b(close_\d+_[sw]?ma|close_\d+_ema|macd[sh]|boll_(?:ub|lb)|vwma|get_[a-z_]+)\b")
FORBIDDEN = {
    "en": ("Round 1", "Round 2", "My main point", "less conviction", "was wrong the last time", "deterministic",
           "word-overlap", "net score", "per signal", "forty percent", "### Scoring", "such as none",
           "count of evidence"),
    "zh": ("第 1 轮", "第 2 轮", "我本轮的主要论点", "信心不足", "确定性", "百分之四十", "净得分"),
}
SPEAKER = re.compile(r"^(Bull Analyst|Bear Analyst): ", re.M)


def _turns(history: str) -> list[tuple[str, str]]:
    """(speaker, text) of each turn of the investment debate, in order."""
    parts = SPEAKER.split(history)
    return [(parts[i], parts[i + 1].strip()) for i in range(1, len(parts), 2)]


def _run(home, ticker: str, first: str, second: str, rounds: int, language: str) -> dict:
    graph = TradingAgentsGraph(config={"home": str(home), "max_debate_rounds": rounds, "output_language": language})
    graph.propagate(ticker, first)
    state, _ = graph.propagate(ticker, second)
    return state


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for i, (ticker, first, second) in enumerate(CASES):
        rounds = 1 + i % 3 if i < 3 else 3
        for language in ("English", "Chinese"):
            home = tmp_path_factory.mktemp(f"h{i}{language[:2]}")
            out[(ticker, language)] = (rounds, _run(home, ticker, first, second, rounds, language))
    return out


def _signals(state: dict) -> list:
    return [s for key in REPORTS for s in signals_in(state[key])]


def test_each_turn_opens_differently_and_quotes_the_opponents_lead_point(runs):
    for (ticker, language), (rounds, state) in runs.items():
        turns = _turns(state["investment_debate_state"]["history"])
        assert len(turns) == 2 * rounds, (ticker, language)
        signals = _signals(state)
        for speaker in ("Bull Analyst", "Bear Analyst"):
            mine = [text for who, text in turns if who == speaker]
            openings = [re.split(r"[“\"*]", text, maxsplit=1)[0] for text in mine]
            assert len(set(openings)) == len(openings), (ticker, language, openings)
        for (prev_who, prev), (who, text) in zip(turns, turns[1:], strict=False):
            assert prev_who != who
            side = "bullish" if prev_who == "Bull Analyst" else "bearish"
            theirs = {s.name: s for s in signals if s.direction == side}
            bold = [m for m in re.findall(r"\*\*([^*\n]+)\*\*", prev) if m in theirs]
            if not bold:
                continue  # the opponent had no reading of its side to press
            lead = theirs[bold[0]]
            quoted = re.search(r"“([^”]+)”", text)
            assert quoted, (ticker, language, text[:200])
            assert quoted.group(1).startswith(lead.name) and quoted.group(1).endswith(lead.detail), (
                ticker, language, quoted.group(1), lead)


def test_counts_agree_with_the_readings_of_the_reports(runs):
    for (ticker, language), (_rounds, state) in runs.items():
        if language != "English":
            continue
        signals = _signals(state)
        count = {d: sum(s.direction == d for s in signals) for d in ("bullish", "bearish", "neutral")}
        for who, text in _turns(state["investment_debate_state"]["history"]):
            mine, theirs = ("bullish", "bearish") if who == "Bull Analyst" else ("bearish", "bullish")
            said = (re.search(r"It is (?:still )?one of (\d+) (\w+) readings(?: in the reports)?[;,] (?:my side has "
                              r"(\d+)\.|against (\d+) on my side)", text) or
                    re.search(r"(\d+) (\w+) readings in all, against (\d+) of mine", text))
            if said:
                numbers = [int(g) for g in said.groups() if g and g.isdigit()]
                assert (numbers[0], said.group(2), numbers[1]) == (count[theirs], theirs, count[mine]), (ticker, text)
            elif re.search(r"the only \w+ reading|One \w+ reading in all", text):
                assert count[theirs] == 1
            tally = re.search(r"I count (\d+) bullish against (\d+) bearish signals \((\d+) neutral\)", text)
            if tally:
                assert tuple(map(int, tally.groups())) == (count["bullish"], count["bearish"], count["neutral"])
            outnumber = re.search(r"The (bullish|bearish) readings outnumber mine, (\d+) to (\d+)", text)
            if outnumber:
                assert outnumber.group(1) == theirs and count[theirs] > count[mine]
                assert (int(outnumber.group(2)), int(outnumber.group(3))) == (count[theirs], count[mine])
        plan = state["investment_plan"]
        assert (f"The four reports carry {count['bullish']} bullish, {count['bearish']} bearish and "
                f"{count['neutral']} neutral readings.") in plan


def test_lessons_are_applied_once_and_no_side_argues_against_itself(runs):
    applied = 0
    for (ticker, language), (_rounds, state) in runs.items():
        for speaker in ("Bull Analyst", "Bear Analyst"):
            mine = [text for who, text in _turns(state["investment_debate_state"]["history"]) if who == speaker]
            sentences = [s for text in mine for s in re.split(r"(?<=\.)\s+|(?<=。)", text) if s]
            repeated = {s for s in sentences if sentences.count(s) > 1}
            assert not repeated, (ticker, language, repeated)
            lessons = [s for s in sentences if re.match(r"(A past lesson applies here|Another lesson from a similar "
                                                        r"setup|One more lesson bears on this|一条过往的经验教训在此适用"
                                                        r"|类似情形中的另一条经验|还有一条经验与此相关)", s)]
            applied += len(lessons)
            for text in mine:
                assert "less conviction" not in text and "My side was wrong" not in text
    assert applied, "the second run of each case recalls the first one's lessons"


def test_judges_say_what_decided_and_recite_no_formula(runs):
    for (ticker, language), (_rounds, state) in runs.items():
        plan, decision = state["investment_plan"], state["final_trade_decision"]
        if language == "English":
            assert re.search(r"decided it|Neither case carried", plan), (ticker, plan)
            assert "What decided it:" in decision
        else:
            assert re.search(r"决定结果的是|双方都未占上风", plan), (ticker, plan)
            assert "决定因素：" in decision


def test_nothing_shown_names_an_indicator_by_its_code_or_speaks_like_a_developer(runs):
    for (ticker, language), (_rounds, state) in runs.items():
        lang = "en" if language == "English" else "zh"
        texts = [state[k] for k in SHOWN] + [state["investment_debate_state"]["history"],
                                              state["risk_debate_state"]["history"]]
        for text in texts:
            assert not RAW_ID.search(text), (ticker, language, RAW_ID.search(text).group(0))
            for phrase in FORBIDDEN[lang]:
                assert phrase not in text, (ticker, language, phrase)


def test_the_debate_is_the_same_text_every_time(runs, tmp_path):
    ticker, first, second = CASES[0]
    rounds, state = runs[(ticker, "English")]
    again = _run(tmp_path, ticker, first, second, rounds, "English")
    assert again["investment_debate_state"]["history"] == state["investment_debate_state"]["history"]
    assert again["investment_plan"] == state["investment_plan"]
