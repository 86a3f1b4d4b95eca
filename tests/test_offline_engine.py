"""The offline engine: grounded tool loops, structured output, scoring, labels and determinism."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import BaseModel

from tests.graph_helpers import as_role
from tests.test_agents_nodes import ANALYSTS, DATE, TICKER, analysed_state, analyst_graph, run_rest
from tradingagents.agents.managers.portfolio_manager import PortfolioDecision
from tradingagents.graph.propagation import Propagator
from tradingagents.llm_clients.offline import OFFLINE_LABEL, OfflineChatModel
from tradingagents.llm_clients.offline.common import (
    Signal,
    score_of,
    signals_in,
    tier_for_ratio,
)

ROOT = Path(__file__).resolve().parents[1]
NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")


def _market_run(config=None):
    state = Propagator().create_initial_state(TICKER, DATE)
    return analyst_graph("market", OfflineChatModel(), config, clear=False).invoke(state)


def test_every_figure_of_the_market_report_is_in_a_tool_message():
    final = _market_run()
    tool_text = "\n".join(m.content for m in final["messages"] if isinstance(m, ToolMessage))
    report = final["market_report"]
    figures = NUMBER_RE.findall(report)
    assert len(figures) >= 15  # the report quotes prices and indicator values, not just words
    missing = [f for f in figures if f not in tool_text]
    assert missing == []
    # and the signals the report draws are the ones its numbers imply
    signals = {s.name: s for s in signals_in(report)}
    trend = re.search(r"close of (\S+) is (above|below) the 50-day average of (\S+)", signals["Trend"].detail)
    close, sma = float(trend.group(1)), float(trend.group(3))
    assert (close > sma) == (trend.group(2) == "above") == (signals["Trend"].direction == "bullish")
    rsi = float(re.search(r"relative strength index of (\S+)", signals["RSI"].detail).group(1))
    expected = "bearish" if rsi >= 70 else "bullish" if rsi <= 30 else "neutral"
    assert signals["RSI"].direction == expected


def test_tool_calls_are_deterministic_schema_valid_and_counted():
    from tradingagents.agents import get_analyst_tools
    from tradingagents.agents.analysts.fundamentals_analyst import FETCH_PLAN
    from tradingagents.agents.utils.agent_utils import plan_block

    tools = get_analyst_tools("fundamentals", {}, as_of=DATE)
    plan = plan_block(tools, FETCH_PLAN, {"company_of_interest": TICKER, "trade_date": DATE})
    messages = [SystemMessage(f"You are the Fundamentals Analyst.\nInstrument: {TICKER}\nAnalysis date: {DATE}"
                              f"\n\n{plan}"), HumanMessage("Go.")]
    bound = OfflineChatModel().bind_tools(tools)
    first, second = bound.invoke(messages, as_role("fundamentals")), bound.invoke(messages, as_role("fundamentals"))
    assert first.tool_calls == second.tool_calls and first.id == second.id
    assert [c["name"] for c in first.tool_calls] == [
        "get_fundamentals", "get_income_statement", "get_balance_sheet", "get_cashflow"]
    by_name = {t.name: t for t in tools}
    for call in first.tool_calls:
        by_name[call["name"]].args_schema.model_validate(call["args"])
        assert call["args"]["ticker"] == TICKER and call["args"]["curr_date"] == DATE
    assert len({c["id"] for c in first.tool_calls}) == 4
    usage = first.usage_metadata
    assert usage["input_tokens"] > 0 and usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_missing_data_is_named_in_the_report_not_invented(tmp_path):
    config = {"data_vendor": "csv", "csv_data_dir": str(tmp_path / "no_files_here")}
    final = _market_run(config)
    report = final["market_report"]
    tool_texts = [m.content for m in final["messages"] if isinstance(m, ToolMessage)]
    assert tool_texts and all(t.startswith(("NO_DATA_AVAILABLE:", "DATA_UNAVAILABLE:")) for t in tool_texts)
    assert "### Missing data" in report and "- price history:" in report
    assert "- technical indicators (relative strength index):" in report and "get_" not in report
    assert "Not estimated." in report
    assert signals_in(report) == []


def test_structured_output_like_langchain_models():
    messages = [SystemMessage(f"You are the Portfolio Manager.\nInstrument: {TICKER}\nAnalysis date: {DATE}"),
                HumanMessage("<investment_plan>\n**Recommendation**: Sell\n</investment_plan>")]
    llm = OfflineChatModel()
    decision = llm.with_structured_output(PortfolioDecision).invoke(messages, as_role("portfolio_manager"))
    assert isinstance(decision, PortfolioDecision) and decision.rating == "Sell"
    assert OFFLINE_LABEL in decision.executive_summary
    raw = llm.with_structured_output(PortfolioDecision, method="json_schema", include_raw=True).invoke(
        messages, as_role("portfolio_manager"))
    assert isinstance(raw["raw"], AIMessage) and raw["parsing_error"] is None
    assert raw["parsed"] == decision

    class Other(BaseModel):
        label: str
        size: int

    other = llm.with_structured_output(Other).invoke(messages, as_role("portfolio_manager"))  # an unknown schema validates
    assert isinstance(other, Other)


def test_every_report_carries_the_offline_label():
    state = run_rest(analysed_state(), OfflineChatModel())
    for _, key, _ in ANALYSTS.values():
        assert OFFLINE_LABEL in state[key], key
    for key in ("investment_plan", "trader_investment_plan", "final_trade_decision"):
        assert OFFLINE_LABEL in state[key], key


def test_quoted_headlines_and_posts_are_each_their_own_paragraph():
    """Markdown joins adjacent quoted lines into one paragraph: the headlines and posts a report quotes would
    run together on screen and in report.md, so a bare ">" parts them."""
    state = analysed_state()
    quoted = 0
    for key in ("news_report", "sentiment_report"):
        lines = state[key].splitlines()
        quoted += sum(line.startswith("> ") for line in lines)
        assert not any(a.startswith(">") and a.strip() != ">" and b.startswith(">") and b.strip() != ">"
                       for a, b in zip(lines, lines[1:], strict=False)), state[key]
    assert quoted >= 6  # three headlines of each feed and three posts, at the least


def test_the_rating_follows_the_documented_score():
    assert [tier_for_ratio(r) for r in (1.0, 0.4, 0.39, 0.15, 0.14, 0.0, -0.14, -0.15, -0.39, -0.4, -1.0)] == [
        "Buy", "Buy", "Overweight", "Overweight", "Hold", "Hold", "Hold", "Underweight", "Underweight", "Sell",
        "Sell"]
    signals = [Signal("A", "a", "bullish"), Signal("B", "b", "bullish"), Signal("C", "c", "bearish"),
               Signal("D", "d", "neutral")]
    score = score_of(signals)
    assert (score.net, score.n, score.tier) == (1, 4, "Overweight")
    report = "\n".join(s.line() for s in signals)
    assert [(s.name, s.direction) for s in signals_in(report)] == [(s.name, s.direction) for s in signals]
    # the Research Manager's plan states exactly this score for the run's reports
    state = run_rest(analysed_state(), OfflineChatModel())
    everything = score_of([s for key in ("market_report", "sentiment_report", "news_report", "fundamentals_report")
                           for s in signals_in(state[key])])
    assert f"**Recommendation**: {everything.tier}" in state["investment_plan"]
    assert (f"The four reports carry {everything.bullish} bullish, {everything.bearish} bearish and "
            f"{everything.neutral} neutral readings.") in state["investment_plan"]


def test_a_call_that_names_no_role_is_refused_with_a_clear_error_whatever_its_prompt_says():
    import pytest

    from tradingagents.errors import LLMConfigError

    prompt = [SystemMessage("You are the Trader of a trading team.\nInstrument: AAPL\nAnalysis date: 2024-01-02")]
    with pytest.raises(LLMConfigError, match="cannot tell which role .* outside a graph node.*ta_role"):
        OfflineChatModel().invoke(prompt)  # the prose names a role: it is not read
    with pytest.raises(LLMConfigError, match="graph node 'Summariser', which is no agent of the roster"):
        OfflineChatModel().invoke(prompt, {"metadata": {"langgraph_node": "Summariser"}})
    with pytest.raises(LLMConfigError, match="unknown role.*'traderr'"):
        OfflineChatModel().invoke(prompt, as_role("traderr"))


_SUBPROCESS = """
import hashlib, json, os, sys, tempfile
os.environ["TRADINGAGENTS_HOME"] = tempfile.mkdtemp()
sys.path.insert(0, {root!r})
from tests.test_agents_nodes import analysed_state, run_rest
from tradingagents.llm_clients.offline import OfflineChatModel
llm = OfflineChatModel()
state = run_rest(analysed_state(llm, ticker={ticker!r}, date={date!r}), llm, rounds=2)
state["messages"] = [[m.type, m.id, m.content] for m in state["messages"]]
print(hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest(),
      state["final_trade_decision"].split()[1], state["investment_debate_state"]["count"])
"""


def test_same_inputs_give_identical_final_state_across_processes():
    script = _SUBPROCESS.format(root=str(ROOT), ticker="AAPL", date="2024-03-15")
    digests = []
    for seed in ("0", "12345"):  # different hash seeds: no dict/set-order or hash() dependence
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                             env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}, cwd=str(ROOT))
        assert out.returncode == 0, out.stderr[-2000:]
        digests.append(out.stdout.strip().splitlines()[-1])
    assert digests[0] == digests[1]
    digest, rating, n_turns = digests[0].split()
    assert rating in ("Buy", "Overweight", "Hold", "Underweight", "Sell") and n_turns == "4"



def test_sentiment_and_news_reports_count_what_the_tools_returned():
    llm = OfflineChatModel()
    state = Propagator().create_initial_state(TICKER, DATE)
    social = analyst_graph("social", llm, clear=False).invoke(state)
    posts = next(m.content for m in social["messages"] if isinstance(m, ToolMessage) and m.name == "get_social_posts")
    tally = re.search(r"Tone tally: bearish (\d+), bullish (\d+), neutral (\d+)", posts)
    total = sum(int(x) for x in tally.groups())
    tone = {s.name: s for s in signals_in(social["sentiment_report"])}["Social tone"]
    assert tone.detail == f"{tally.group(2)} of {total} posts read positive and {tally.group(1)} negative"
    news = analyst_graph("news", llm, clear=False).invoke(state)
    company = next(m.content for m in news["messages"] if isinstance(m, ToolMessage) and m.name == "get_news")
    headlines = re.findall(r"^### (.+)$", company, re.M)
    signal = {s.name: s for s in signals_in(news["news_report"])}["Company news"]
    assert f" of {len(headlines)} company headlines" in signal.detail
    section = news["news_report"].split("### Company headlines")[1].split("###")[0]
    quoted = re.findall(r"^> (.+) \((\d{4}-\d{2}-\d{2})\)$", section, re.M)
    assert quoted and all(title in headlines for title, _ in quoted)


def test_a_multi_indicator_answer_is_split_by_section_and_gaps_are_named():
    from tradingagents.llm_clients.offline.analysts import ToolResult, _missing_section, indicator_values

    text = ("# atr for X from 2024-01-01 to 2024-01-03 (source: test)\nNO_DATA_AVAILABLE: not enough history.\n\n"
            "# rsi for X from 2024-01-01 to 2024-01-03 (source: test)\n# RSI.\n2024-01-02: 40.10\n2024-01-03: 55.20\n")
    result = ToolResult("get_indicators", {"indicator": "rsi,atr"}, text)
    assert indicator_values(result) == {"rsi": ("2024-01-03", "55.20")}
    lines = _missing_section([result])
    assert any(line.startswith("- technical indicators (average true range): the answer held no value for it.")
               for line in lines)
    assert not any("relative strength index" in line for line in lines)


def test_the_market_analyst_asks_for_all_indicators_in_one_call_when_the_tool_allows_it():
    from tradingagents.agents import get_analyst_tools
    from tradingagents.agents.analysts.market_analyst import fetch_plan_for
    from tradingagents.agents.utils.agent_utils import plan_block

    tools = get_analyst_tools("market", {}, as_of=DATE)
    plan = plan_block(tools, fetch_plan_for(tools), {"company_of_interest": TICKER, "trade_date": DATE})
    calls = OfflineChatModel().bind_tools(tools).invoke(
        [SystemMessage(f"You are the Market Analyst.\nInstrument: {TICKER}\nAnalysis date: {DATE}\n\n{plan}")],
        as_role("market")).tool_calls
    assert [c["name"] for c in calls] == ["get_stock_data", "get_indicators"]
    assert calls[1]["args"]["indicator"].split(",") == [
        "close_50_sma", "close_200_sma", "macd", "macds", "rsi", "boll_ub", "boll_lb", "atr"]


# ---------------------------------------------------------------- one package, facts from the roster and the scale
AGENT_PROMPTS = {
    "market": "analysts.market_analyst", "social": "analysts.social_media_analyst", "news": "analysts.news_analyst",
    "fundamentals": "analysts.fundamentals_analyst", "bull": "researchers.bull_researcher",
    "bear": "researchers.bear_researcher", "research_manager": "managers.research_manager", "trader": "trader.trader",
    "aggressive": "risk_mgmt.aggressive_debator", "conservative": "risk_mgmt.conservative_debator",
    "neutral": "risk_mgmt.neutral_debator", "portfolio_manager": "managers.portfolio_manager",
}


def test_every_role_is_the_one_of_the_node_the_call_runs_in():
    from tradingagents.llm_clients.offline.engine import ROLES, role_for
    from tradingagents.team import LESSONS, REFLECTION, ROLE_METADATA, ROSTER

    assert set(AGENT_PROMPTS) == {r.key for r in ROSTER}  # every role of the roster is covered
    assert ROLES == (*ROSTER, REFLECTION, LESSONS)
    for role in ROSTER:
        assert role_for({"langgraph_node": role.node}) is role, role.node
        assert role_for({ROLE_METADATA: role.key}) is role, role.key
    assert role_for({ROLE_METADATA: "reflection"}) is REFLECTION and role_for({ROLE_METADATA: "lessons"}) is LESSONS
    # the explicit role wins over the node (a caller outside the graph may run inside some node)
    assert role_for({"langgraph_node": "Trader", ROLE_METADATA: "lessons"}) is LESSONS
    assert [r.node for r in ROSTER if r.memory] == ["Bull Researcher", "Bear Researcher", "Research Manager",
                                                    "Trader", "Portfolio Manager"]


def _role_texts(state: dict) -> dict:
    from tests.test_agents_nodes import run_rest

    final = run_rest(dict(state), OfflineChatModel())
    return {k: final[k] for k in ("investment_debate_state", "investment_plan", "trader_investment_plan",
                                  "risk_debate_state", "final_trade_decision")}


def test_editing_a_prompts_you_are_the_sentence_changes_no_answer(monkeypatch):
    """The role comes from the node, so a prompt may name its role any way (or another role's way)."""
    import importlib

    from tradingagents.graph.reflection import Reflector

    state = analysed_state()
    before = _role_texts(state)
    assert before == _role_texts(state)  # same inputs, same answers
    for key, module in AGENT_PROMPTS.items():
        if key in ANALYSTS:
            continue  # the analysts' reports come from their tool results (checked below)
        agent = importlib.import_module(f"tradingagents.agents.{module}")
        sentence = re.search(r"You are the [^.,]+", agent.PROMPT).group(0)
        # the worst edit: the prose now names another role of the roster
        monkeypatch.setattr(agent, "PROMPT", agent.PROMPT.replace(sentence, "You are the Market Analyst"))
    after = _role_texts(state)
    assert after == before
    # an analyst: the prompt names another analyst, the report stays the market report
    market = importlib.import_module("tradingagents.agents.analysts.market_analyst")
    plain = _market_run()["market_report"]
    monkeypatch.setattr(market, "PROMPT", market.PROMPT.replace("You are the Market Analyst",
                                                                "You are the Fundamentals Analyst"))
    assert _market_run()["market_report"] == plain and "Fundamentals Analyst" not in plain
    # the reflector's writers name their role in the run metadata, not in the prose
    from tradingagents.graph import reflection

    outcome = dict(ticker="NVDA", date="2024-05-10", rating="Buy", decision="**Rating**: Buy", raw=0.03,
                   alpha=0.01, holding=5, reports=None)
    text, lessons = Reflector(OfflineChatModel()).reflect_on_decision(**outcome), Reflector(
        OfflineChatModel()).role_lessons(**outcome)
    monkeypatch.setattr(reflection, "REFLECTION_PROMPT", reflection.REFLECTION_PROMPT.replace(
        "You are the Reflection Analyst", "You are the Lessons Analyst"))
    monkeypatch.setattr(reflection, "LESSONS_PROMPT", reflection.LESSONS_PROMPT.replace(
        "You are the Lessons Analyst", "You are the Trader"))
    assert Reflector(OfflineChatModel()).reflect_on_decision(**outcome) == text
    assert Reflector(OfflineChatModel()).role_lessons(**outcome) == lessons


def test_the_scale_and_report_names_are_views_of_rating_and_team():
    from tradingagents.agents.utils import rating
    from tradingagents.llm_clients.offline import common
    from tradingagents.team import REPORT_KEYS

    assert common.TIERS is rating.RATINGS_5_TIER
    assert set(common.BULLISH_TIERS) == rating.BULLISH and set(common.BEARISH_TIERS) == rating.BEARISH
    for tier in rating.RATINGS_5_TIER:
        expected = {1: "BUY", 0: "HOLD", -1: "SELL"}[rating.direction(tier)]
        assert common.TIER_ACTION[tier] == expected
    assert tuple(common.SOURCES) == REPORT_KEYS


def test_each_module_of_the_package_imports_on_its_own():
    # a fresh interpreter per module: an import cycle would fail whichever module comes first
    for module in ("common", "analysts", "roles", "engine", "model"):
        proc = subprocess.run([sys.executable, "-c", f"import tradingagents.llm_clients.offline.{module}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    import tradingagents.llm_clients as package

    assert not any((Path(package.__file__).parent / f"offline_{m}.py").exists()
                   for m in ("common", "engine", "roles", "analysts"))


def _reflect(lines: str, role: str = "reflection") -> str:
    return OfflineChatModel().invoke([
        SystemMessage("Look back at a decision.\nInstrument: NVDA\nAnalysis date: 2024-05-10"),
        HumanMessage(lines),
    ], as_role(role)).content


def test_reflection_follows_the_verdict_line_not_the_rounded_alpha():
    # alpha +0.004 % shows as "+0.0%": the rule on the exact alpha (bullish, > 0) says right;
    # recomputing from the rounded figure would say wrong
    outcome = "Rating: Overweight\nRealised return: -0.9% over 5 trading days\nAlpha vs SPY: +0.0%\n"
    assert "was right" in _reflect(outcome + "Verdict: right")
    assert "was wrong" in _reflect(outcome + "Verdict: wrong")
    assert "was wrong" in _reflect(outcome)  # no verdict: rating.was_right on the alpha as quoted
    lessons = _reflect(outcome + "Verdict: right", "lessons")
    assert "Trader: The BUY on NVDA was right" in lessons


def test_reflection_names_the_benchmark_of_the_prompt():
    text = _reflect("Rating: Buy\nRealised return: +3.2% over 5 trading days\nAlpha vs ^N225: +1.1%\nVerdict: right")
    assert "+1.1%" in text and "against ^N225" in text and "was right" in text
    old = _reflect("Rating: Buy\nRealised return: +3.2% over 5 trading days\nAlpha vs benchmark: +1.1%")
    assert "against its benchmark" in old and "was right" in old


def test_portfolio_manager_never_says_there_is_nothing_to_learn_from_while_applying_a_lesson():
    prompt = ("You are the Portfolio Manager of a trading team.\nInstrument: NVDA\nAnalysis date: 2024-05-10\n"
              "<past_lessons>\n1. Trim size when RSI is overbought (similarity 1.00)\n</past_lessons>\n"
              "<past_decisions>\n(none)\n</past_decisions>")
    text = OfflineChatModel().invoke([SystemMessage(prompt), HumanMessage("Decide.")], as_role("portfolio_manager")).content
    assert "Lesson applied: Trim size when RSI is overbought" in text
    assert "no settled decision on this ticker to learn from" not in text
    assert "No earlier decision on NVDA has settled yet; the lesson below comes from similar situations" in text


def _offline_run(ticker: str, date: str, **config):
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    events = []
    graph = TradingAgentsGraph(selected_analysts=["market"],
                               config={"analyst_execution": "sequential", "max_debate_rounds": 1, **config})
    state, rating = graph.propagate(ticker, date, on_event=events.append)
    messages = [[m.type, m.id, m.content, getattr(m, "tool_calls", None)] for m in state.get("messages") or []]
    return {**{k: v for k, v in state.items() if k != "messages"}, "messages": messages}, rating, events


def test_streamed_text_arrives_in_words_and_the_final_state_is_the_unstreamed_one(ta_home):
    """The graph streams (LangGraph "messages" mode): the offline model answers word by word, so token
    events carry part of a text before the whole; what the run decides is byte-for-byte unchanged."""
    streamed, rating, events = _offline_run("AAPL", "2024-03-15")
    tokens = [e for e in events if e.kind == "token" and e.node == "Market Analyst"]
    assert len(tokens) >= 2, "the report reached the page in one piece"
    assert 0 < len(tokens[0].data["text_delta"]) < len(streamed["market_report"]) / 10
    assert "".join(t.data["text_delta"] for t in tokens).endswith(streamed["market_report"])

    plain, plain_rating, plain_events = _offline_run("AAPL", "2024-03-15", llm_streaming=False)
    assert [len([e for e in plain_events if e.kind == "token" and e.node == "Market Analyst"])] == [1]
    assert rating == plain_rating
    assert json.dumps(streamed, sort_keys=True, default=str) == json.dumps(plain, sort_keys=True, default=str)


class _Pieces(BaseCallbackHandler):
    """The streamed pieces of a model's answer, as its callbacks see them."""

    def __init__(self):
        self.pieces = []

    def on_llm_new_token(self, token, **kwargs):
        self.pieces.append(token)


def test_stream_delay_is_validated_and_only_changes_timing(monkeypatch):
    import pytest

    from tradingagents.llm_clients.offline.model import STREAM_DELAY_ENV

    msgs = [SystemMessage("Instrument: NVDA\nAnalysis date: 2024-05-10"), HumanMessage("Make the bull case.")]
    monkeypatch.setenv(STREAM_DELAY_ENV, "0.001")
    words = _Pieces()
    paced = OfflineChatModel(callbacks=[words]).invoke(msgs, as_role("bull"))
    monkeypatch.delenv(STREAM_DELAY_ENV)
    quiet = _Pieces()
    unstreamed = OfflineChatModel(streaming=False, callbacks=[quiet]).invoke(msgs, as_role("bull"))
    assert len(words.pieces) > 10 and "".join(words.pieces) == paced.content == unstreamed.content
    assert quiet.pieces == [] and paced.id == unstreamed.id
    for bad in ("fast", "-1", "5"):
        monkeypatch.setenv(STREAM_DELAY_ENV, bad)
        with pytest.raises(ValueError, match="number from 0 to 1"):
            OfflineChatModel()


def test_at_full_speed_the_words_go_out_in_runs_that_join_back_to_the_same_answer():
    """Without a pause the words go out in runs of whole words (the first word alone, so a page has it at
    once), far fewer chunks than words; at presenter pace they still go word by word. Same text either way."""
    from tradingagents.llm_clients.offline.model import RUN_CHARS, _runs_of

    msgs = [SystemMessage("Instrument: NVDA\nAnalysis date: 2024-05-10"), HumanMessage("Make the bull case.")]
    runs, words = _Pieces(), _Pieces()
    fast = OfflineChatModel(callbacks=[runs]).invoke(msgs, as_role("bull"))
    paced = OfflineChatModel(stream_delay_s=0.001, callbacks=[words]).invoke(msgs, as_role("bull"))
    assert "".join(runs.pieces) == fast.content == paced.content == "".join(words.pieces)
    assert runs.pieces[0] == words.pieces[0]
    assert 2 <= len(runs.pieces) < len(words.pieces) / 5
    assert all(len(p) <= RUN_CHARS for p in runs.pieces)

    def ends(pieces):
        out, at = set(), 0
        for p in pieces:
            at += len(p)
            out.add(at)
        return out

    assert ends(runs.pieces) <= ends(words.pieces)  # a run ends where a word ends
    assert _runs_of(["a ", "x" * 300, "b"], RUN_CHARS) == ["a ", "x" * 300, "b"]  # a long word is a run alone


def test_reports_speak_plain_words_and_write_amounts_for_people():
    """No indicator identifier reaches a reader, and a statement's revenue reads $…B, not 105743196183."""
    final = _market_run()
    report = final["market_report"]
    for identifier in ("close_50_sma", "close_200_sma", "macds", "boll_ub", "boll_lb", " rsi ", " atr "):
        assert identifier not in report, identifier
    assert "50-day average" in report and "relative strength index" in report
    state = Propagator().create_initial_state(TICKER, DATE)
    fundamentals = analyst_graph("fundamentals", OfflineChatModel(), None, clear=False).invoke(state)
    text = fundamentals["fundamentals_report"]
    revenue = re.search(r"Total Revenue: (\S+) for the period", text).group(1)
    assert re.fullmatch(r"\$\d+(\.\d+)?[KMBT]", revenue), revenue
    assert not re.search(r"\d{7,}", text)  # no long raw integers
    assert "fraction of one" not in text and re.search(r"revenue (grew|shrank) \S+%", text)


def test_the_debate_reads_like_one_plain_words_quoted_points_and_each_side_argues_its_case():
    from studio.debates import answered_point

    final = run_rest(analysed_state(), OfflineChatModel(), rounds=2)
    debate = final["investment_debate_state"]
    bull_turns = [t for t in debate["bull_history"].split("Bull Analyst: ") if t.strip()]
    bear_turns = [t for t in debate["bear_history"].split("Bear Analyst: ") if t.strip()]
    assert len(bull_turns) == len(bear_turns) == 2
    for text in bull_turns + bear_turns:
        for identifier in ("close_50_sma", "close_200_sma", "macds", "boll_ub", "boll_lb"):
            assert identifier not in text, identifier
        assert re.search(r"\d", text)  # numbers, in plain words
    # each answer quotes the opponent's actual lead point, and the UI's "answers" finds that very point
    order = [bull_turns[0], bear_turns[0], bull_turns[1], bear_turns[1]]
    lead = re.compile(r"\*\*([^*]+)\*\* (?:in|from) the [a-z]+ report(?: to that)?: (.+?)\.(?:\s|$)")
    for prev, turn in zip(order, order[1:], strict=False):
        claim = lead.search(prev)
        quoted = f"{claim.group(1)}: {claim.group(2)}"
        assert f"\u201c{quoted}\u201d" in turn
        assert answered_point(turn, prev)[0] == quoted
    # the bear argues the bear case whatever the tally: never that the count "is not on my side"
    for text in bear_turns:
        assert "not on my side" not in text and ("avoiding" in text or "risk" in text)


def test_the_language_comes_from_the_prompts_instruction():
    from tradingagents.agents.utils.agent_utils import language_instruction
    from tradingagents.llm_clients.offline.common import translator_of

    assert translator_of(language_instruction({"output_language": "Chinese"})).lang == "zh"
    assert translator_of(language_instruction({"output_language": "English"})).lang == "en"
    assert translator_of(language_instruction({"output_language": "Français"})).lang == "en"  # no catalogue
    assert translator_of("You are the Trader.").lang == "en"


def test_chinese_signal_lines_read_back_canonical():
    from tradingagents.i18n import translator
    from tradingagents.llm_clients.offline.common import flag_text

    zh = translator("zh")
    signals = [Signal(zh.p("signal", "RSI"), "相对强弱指数为 75.10", "bearish", flag_text("overbought", zh)),
               Signal(zh.p("signal", "Volatility"), "ATR 3.1", "neutral", flag_text("volatility elevated", zh)),
               Signal(zh.p("signal", "Trend"), "收盘价 54.75 低于 50 日均线 57.39", "bullish")]
    report = "\n".join(s.line(zh) for s in signals)
    assert "→ 看跌；超买" in report and "→ 看涨" in report
    back = signals_in(report)
    assert [(s.name, s.direction, s.rest) for s in back] == [(s.name, s.direction, s.rest) for s in signals]
    assert [(s.key, s.flag) for s in back] == [("RSI", "overbought"), ("Volatility", "volatility elevated"),
                                               ("Trend", "")]
    assert score_of(back).net == 0


def test_a_line_is_parsed_with_the_message_it_was_written_from():
    from tradingagents.i18n import translator
    from tradingagents.llm_clients.offline.common import template_res

    msgid = "The last close was {close} on {date}."
    res = template_res(msgid, close=r"-?\d+(?:\.\d+)?")
    assert len(res) == 2  # English and Chinese
    for lang in ("en", "zh"):
        line = translator(lang)(msgid, close="54.75", date="2024-05-20")
        assert any((m := r.search(f"x {line} y")) and m.group("close") == "54.75" for r in res), line
