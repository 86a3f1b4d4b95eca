"""Each agent node factory's state-update contract, run with the real offline engine and data tools."""

from __future__ import annotations

import re

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode

from tests.graph_helpers import in_node
from tradingagents import agents, team
from tradingagents.agents import create_msg_delete, get_analyst_tools
from tradingagents.agents.utils.agent_states import AgentState
from tradingagents.agents.utils.agent_utils import (
    MAX_TOOL_ROUNDS,
    create_analyst_node,
    header_lines,
    language_instruction,
)
from tradingagents.agents.utils.memory import FinancialSituationMemory
from tradingagents.graph.propagation import Propagator
from tradingagents.llm_clients.offline import OFFLINE_LABEL, OfflineChatModel
from tradingagents.rating import RATINGS_5_TIER, parse_rating


def _in_its_node(key: str):
    """The role's factory, its node called as the graph calls it (the model calls run in the node)."""
    role = team.ROLES[key]
    factory = getattr(agents, role.factory)

    def make(*args, **kwargs):
        return in_node(role.node, factory(*args, **kwargs))

    make.__name__ = role.factory
    return make


create_market_analyst = _in_its_node("market")
create_social_media_analyst = _in_its_node("social")
create_news_analyst = _in_its_node("news")
create_fundamentals_analyst = _in_its_node("fundamentals")
create_bull_researcher = _in_its_node("bull")
create_bear_researcher = _in_its_node("bear")
create_research_manager = _in_its_node("research_manager")
create_trader = _in_its_node("trader")
create_aggressive_debator = _in_its_node("aggressive")
create_conservative_debator = _in_its_node("conservative")
create_neutral_debator = _in_its_node("neutral")
create_portfolio_manager = _in_its_node("portfolio_manager")

TICKER, DATE = "NVDA", "2024-05-10"
ANALYSTS = {
    "market": (create_market_analyst, "market_report", "Market Analyst"),
    "social": (create_social_media_analyst, "sentiment_report", "Sentiment Analyst"),
    "news": (create_news_analyst, "news_report", "News Analyst"),
    "fundamentals": (create_fundamentals_analyst, "fundamentals_report", "Fundamentals Analyst"),
}


class PromptRecorder(BaseCallbackHandler):
    """Keeps every message list a chat model was called with (a real LangChain callback)."""

    def __init__(self) -> None:
        self.calls: list[list] = []

    def on_chat_model_start(self, serialized, messages, **kwargs):
        self.calls.extend(messages)

    def system_prompts(self) -> list[str]:
        return [m.content for call in self.calls for m in call if m.type == "system"]

    def texts(self) -> list[str]:
        return ["\n".join(str(m.content) for m in call) for call in self.calls]


def analyst_graph(key: str, llm, config: dict | None = None, *, clear: bool = True):
    """agent ⇄ ToolNode (the real data tools of this analyst) [→ Msg Clear] → END."""
    factory, _, name = ANALYSTS[key]
    tools = get_analyst_tools(key, config or {}, as_of=DATE)
    graph = StateGraph(AgentState)
    graph.add_node(name, factory(llm, tools, config))
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, name)
    after = "clear" if clear else END
    graph.add_conditional_edges(
        name, lambda s: "tools" if s["messages"][-1].tool_calls else "done", {"tools": "tools", "done": after}
    )
    graph.add_edge("tools", name)
    if clear:
        graph.add_node("clear", create_msg_delete())
        graph.add_edge("clear", END)
    return graph.compile()


def custom_loop_analyst(llm):
    """A custom analyst on the tool loop (``create_analyst_node``, kept for such analysts): the News
    Analyst's tools, role and report, but the model asks for the tools and a ToolNode runs them."""

    def prompt(state, tool_names, cfg):
        return (f"You are the News Analyst on a trading team.\n{header_lines(state)}\n\n"
                f"Tools you can call: {', '.join(tool_names)}.\n{language_instruction(cfg)}")

    return create_analyst_node(llm, get_analyst_tools("news", {}, as_of=DATE), name="News Analyst",
                               report_key="news_report", system_prompt=prompt)


def custom_loop_graph(llm):
    """custom_loop_analyst ⇄ ToolNode → END (no Msg Clear: the scratchpad stays, to look at)."""
    graph = StateGraph(AgentState)
    graph.add_node("News Analyst", custom_loop_analyst(llm))
    graph.add_node("tools", ToolNode(get_analyst_tools("news", {}, as_of=DATE)))
    graph.add_edge(START, "News Analyst")
    graph.add_conditional_edges(
        "News Analyst", lambda s: "tools" if s["messages"][-1].tool_calls else "done", {"tools": "tools", "done": END}
    )
    graph.add_edge("tools", "News Analyst")
    return graph.compile()


def analysed_state(llm=None, config: dict | None = None, ticker: str = TICKER, date: str = DATE) -> dict:
    """The initial state after the four analysts ran (sequentially, with their Msg Clear nodes)."""
    llm = llm or OfflineChatModel()
    state = Propagator().create_initial_state(ticker, date, instrument_context=f"{ticker} — test instrument")
    for key in ANALYSTS:
        state = analyst_graph(key, llm, config).invoke(state)
    return state


def run_rest(state: dict, llm, config: dict | None = None, memories: dict | None = None, rounds: int = 1) -> dict:
    """Bull/Bear for ``rounds``, Research Manager, Trader, one risk round, Portfolio Manager."""
    mem = memories or {}
    nodes = []
    for _ in range(rounds):
        nodes += [create_bull_researcher(llm, mem.get("bull"), config), create_bear_researcher(llm, mem.get("bear"), config)]
    nodes += [
        create_research_manager(llm, mem.get("judge"), config),
        create_trader(llm, mem.get("trader"), config),
        create_aggressive_debator(llm, config),
        create_conservative_debator(llm, config),
        create_neutral_debator(llm, config),
        create_portfolio_manager(llm, mem.get("risk"), config),
    ]
    for node in nodes:
        state = {**state, **node(state)}
    return state


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRADINGAGENTS_HOME", str(tmp_path_factory.mktemp("agents_home")))
        yield analysed_state()


def test_market_analyst_asks_for_its_data_with_tool_calls_by_default():
    """The tools shape (the default): the model's first answer is the plan's calls, no report yet."""
    tools = get_analyst_tools("market", {}, as_of=DATE)
    node = create_market_analyst(OfflineChatModel(), tools)
    update = node(Propagator().create_initial_state(TICKER, DATE))
    (asked,) = update["messages"]
    assert [c["name"] for c in asked.tool_calls] == ["get_stock_data", "get_indicators"]
    assert "market_report" not in update


def test_market_analyst_fetches_its_data_then_writes_its_report_in_one_call():
    llm = OfflineChatModel()
    tools = get_analyst_tools("market", {}, as_of=DATE)
    node = create_market_analyst(llm, tools, {"analyst_data": "prefetch"})
    state = Propagator().create_initial_state(TICKER, DATE)
    update = node(state)
    assert update["sender"] == "Market Analyst"
    request, *results, answer = update["messages"]
    calls = request.tool_calls
    # one get_indicators call for all the indicators: the tool takes several separated by commas
    assert [c["name"] for c in calls] == ["get_stock_data", "get_indicators"]
    by_name = {t.name: t for t in tools}
    for call in calls:
        by_name[call["name"]].args_schema.model_validate(call["args"])  # valid for the tool's schema
        assert call["args"].get("symbol") == TICKER
        assert max(v for k, v in call["args"].items() if k.endswith("date")) == DATE
    assert len(results) == len(calls) and all(isinstance(m, ToolMessage) for m in results)
    assert not answer.tool_calls
    assert update["market_report"] == answer.content
    assert "50-day average" in update["market_report"]


def test_four_analysts_write_reports_and_each_msg_clear_leaves_one_placeholder(analysed):
    for _, key, _name in ANALYSTS.values():
        assert analysed[key].strip(), key
        assert OFFLINE_LABEL in analysed[key]
    assert analysed["sender"] == "Fundamentals Analyst"
    messages = analysed["messages"]
    assert len(messages) == 1 and isinstance(messages[0], HumanMessage)
    assert TICKER in messages[0].content and DATE in messages[0].content


def test_msg_delete_removes_every_message_and_adds_one_placeholder():
    old = [HumanMessage("start", id="h1"), AIMessage("", id="a1"), ToolMessage("x", tool_call_id="c", id="t1")]
    state = {"messages": old, "company_of_interest": "7203.T", "trade_date": "2024-01-05", "sender": "News Analyst"}
    update = create_msg_delete()(state)
    merged = add_messages(old, update["messages"])
    assert len(merged) == 1
    assert merged[0].content == "Continue the analysis of 7203.T as of 2024-01-05."
    assert merged[0].id not in {"h1", "a1", "t1"}
    # a second clear (next analyst) removes the first placeholder too
    again = add_messages(merged, create_msg_delete()({**state, "messages": merged, "sender": "Fundamentals Analyst"})["messages"])
    assert len(again) == 1 and again[0].id != merged[0].id


def test_bull_and_bear_turns_update_the_debate_state(analysed):
    llm = OfflineChatModel()
    state = {**analysed, "investment_debate_state": {**analysed["investment_debate_state"], "judge_decision": "kept"}}
    state = {**state, **create_bull_researcher(llm, None)(state)}
    debate = state["investment_debate_state"]
    assert debate["count"] == 1 and debate["current_response"].startswith("Bull Analyst: ")
    assert debate["history"] == debate["bull_history"] == debate["current_response"]
    assert debate["bear_history"] == "" and debate["judge_decision"] == "kept"
    state = {**state, **create_bear_researcher(llm, None)(state)}
    debate = state["investment_debate_state"]
    assert debate["count"] == 2 and debate["current_response"].startswith("Bear Analyst: ")
    assert debate["bear_history"] == debate["current_response"]
    assert debate["history"].splitlines() == [debate["bull_history"], debate["bear_history"]]
    assert debate["judge_decision"] == "kept"


def test_later_rounds_differ_and_answer_the_opponents_last_point(analysed):
    llm = OfflineChatModel()
    bull, bear = create_bull_researcher(llm, None), create_bear_researcher(llm, None)
    state = dict(analysed)
    turns = []
    for node in (bull, bear, bull, bear):
        state = {**state, **node(state)}
        turns.append(state["investment_debate_state"]["current_response"])
    assert turns[0] != turns[2] and turns[1] != turns[3]
    lead = re.compile(r"\*\*([^*]+)\*\* (?:in|from) the [a-z]+ report")
    bull_lead_1, bear_lead_1 = lead.search(turns[0]).group(1), lead.search(turns[1]).group(1)
    assert turns[1].startswith(f"Bear Analyst: The bull's strongest point is \u201c{bull_lead_1}: ")  # the bear answers it first
    assert turns[2].startswith(f"Bull Analyst: The bear now leans on \u201c{bear_lead_1}: ")  # and the bull answers the bear's
    assert lead.search(turns[2]).group(1) != bull_lead_1  # a new point in round two
    assert state["investment_debate_state"]["count"] == 4


def test_researchers_read_their_top_memories(analysed):
    rec = PromptRecorder()
    llm = OfflineChatModel(callbacks=[rec])
    memory = FinancialSituationMemory("bull_memory")
    memory.add_situations(
        [
            (analysed["market_report"], "Trim into strength when RSI runs hot after earnings."),
            ("Quiet utilities market with falling volumes", "Ignore utilities noise."),
        ]
    )
    update = create_bull_researcher(llm, memory)(analysed)
    prompt = rec.texts()[-1]
    assert "Trim into strength when RSI runs hot after earnings." in prompt
    assert "A past lesson applies here: Trim into strength" in update["investment_debate_state"]["current_response"]


def test_research_manager_writes_plan_with_recommendation_and_judge_decision(analysed):
    llm = OfflineChatModel()
    state = {**analysed, **create_bull_researcher(llm, None)(analysed)}
    state = {**state, **create_bear_researcher(llm, None)(state)}
    update = create_research_manager(llm, None)(state)
    plan = update["investment_plan"]
    match = re.search(r"\*\*Recommendation\*\*: (\w+)", plan)
    assert match and match.group(1) in RATINGS_5_TIER
    assert parse_rating(plan) == match.group(1)
    debate = update["investment_debate_state"]
    assert debate["judge_decision"] == plan
    assert debate["history"] == state["investment_debate_state"]["history"] and debate["count"] == 2


def test_trader_reads_plan_reports_and_recent_prices_up_to_the_date(analysed):
    rec = PromptRecorder()
    llm = OfflineChatModel(callbacks=[rec])
    state = {**analysed, "investment_plan": "**Recommendation**: Overweight\n\nBuild gradually."}
    update = create_trader(llm, None)(state)
    assert update["sender"] == "Trader"
    plan = update["trader_investment_plan"]
    assert plan.rstrip().endswith("FINAL TRANSACTION PROPOSAL: **BUY**")  # Overweight → BUY
    prompt = rec.texts()[-1]
    assert "Build gradually." in prompt and analysed["market_report"].strip() in prompt
    prices = re.search(r"<recent_prices>\n(.*?)\n</recent_prices>", prompt, re.S).group(1)
    days = re.findall(r"^(\d{4}-\d{2}-\d{2}): \d", prices, re.M)
    assert len(days) == 20 and max(days) <= DATE  # a month of closes: the plan's support and resistance
    assert re.search(rf"last close was (\S+) on {days[-1]}", plan)


def test_trader_says_when_prices_are_unavailable(tmp_path):
    rec = PromptRecorder()
    config = {"data_vendor": "csv", "csv_data_dir": str(tmp_path / "empty")}
    state = Propagator().create_initial_state(TICKER, DATE)
    update = create_trader(OfflineChatModel(callbacks=[rec]), None, config)(state)
    prompt = rec.texts()[-1]
    prices = re.search(r"<recent_prices>\n(.*?)\n</recent_prices>", prompt, re.S).group(1)
    assert prices.startswith(("DATA_UNAVAILABLE:", "NO_DATA_AVAILABLE:"))
    assert update["trader_investment_plan"].rstrip().endswith("FINAL TRANSACTION PROPOSAL: **HOLD**")


def test_risk_analysts_rotate_and_update_latest_speaker(analysed):
    llm = OfflineChatModel()
    state = run_rest(dict(analysed), llm)  # one full pass, then check the risk state
    risk = state["risk_debate_state"]
    assert risk["count"] == 3 and risk["latest_speaker"] == "Neutral"
    for key, prefix in (("aggressive", "Aggressive Analyst: "), ("conservative", "Conservative Analyst: "),
                        ("neutral", "Neutral Analyst: ")):
        assert risk[f"current_{key}_response"].startswith(prefix)
        assert risk[f"{key}_history"] == risk[f"current_{key}_response"]
    assert [line.split(":")[0] for line in risk["history"].splitlines()] == [
        "Aggressive Analyst", "Conservative Analyst", "Neutral Analyst"]
    # a second round: each speaker answers and says something new
    again = dict(state)
    for factory, speaker in ((create_aggressive_debator, "Aggressive"), (create_conservative_debator, "Conservative"),
                             (create_neutral_debator, "Neutral")):
        again = {**again, **factory(llm)(again)}
        assert again["risk_debate_state"]["latest_speaker"] == speaker
    assert again["risk_debate_state"]["count"] == 6
    for key in ("aggressive", "conservative", "neutral"):
        assert again["risk_debate_state"][f"current_{key}_response"] != risk[f"current_{key}_response"]


def test_portfolio_manager_renders_structured_decision(analysed):
    llm = OfflineChatModel()
    state = run_rest(dict(analysed), llm)
    final = state["final_trade_decision"]
    rating = re.match(r"\*\*Rating\*\*: (\w+)\n", final).group(1)
    assert rating in RATINGS_5_TIER and parse_rating(final) == rating
    assert "### Executive Summary" in final and "### Investment Thesis" in final
    assert "**Time horizon**:" in final
    assert state["risk_debate_state"]["judge_decision"] == final
    assert state["risk_debate_state"]["count"] == 3  # the PM does not take a turn


def test_portfolio_manager_reads_past_context_and_learns_from_a_lost_call(analysed):
    rec = PromptRecorder()
    llm = OfflineChatModel(callbacks=[rec])
    state = {
        **analysed,
        "investment_plan": "**Recommendation**: Overweight\n\nAdd gradually.",
        "trader_investment_plan": "Buy half now.\n\nFINAL TRANSACTION PROPOSAL: **BUY**",
    }
    pm = create_portfolio_manager(llm, None)
    fresh = pm(state)["final_trade_decision"]
    assert fresh.startswith("**Rating**: Overweight")
    # the header exactly as the past context writes it (rating.settled_header)
    past = ("[2024-04-01 | NVDA | Buy | return -3.0% | alpha -4.1% | 5d]\n\nDECISION:\nBuy.\n\nREFLECTION:\nWrong call.")
    once = pm({**state, "past_context": past})["final_trade_decision"]
    assert past.splitlines()[0] in rec.texts()[-1]
    # one lost call is no record yet: the rule to moderate waits until it has helped on this ticker
    assert once.startswith("**Rating**: Overweight") and "has no record on NVDA yet" in once
    # an earlier lost Buy followed by another losing Buy: moderating would have helped, so it applies now
    earlier = "[2024-03-25 | NVDA | Buy | return -1.0% | alpha -2.0% | 5d]\n\nDECISION:\nBuy.\n\nREFLECTION:\nWrong."
    burned = pm({**state, "past_context": earlier + "\n\n" + past})["final_trade_decision"]
    assert burned.startswith("**Rating**: Hold")
    assert "-4.1%" in burned
    # another ticker's loss does not count
    other = pm({**state, "past_context": past.replace("NVDA", "AAPL")})["final_trade_decision"]
    assert other.startswith("**Rating**: Overweight")


def test_portfolio_manager_falls_back_to_text_when_json_schema_is_unsupported(analysed):
    from tests.fake_openai import FakeOpenAIServer, Fault
    from tradingagents.llm_clients.factory import create_llm
    from tradingagents.llm_clients.structured import forget_json_schema_support

    forget_json_schema_support()
    with FakeOpenAIServer(rating="Underweight") as server:
        server.inject(Fault.no_json_schema())
        llm = create_llm({"llm_provider": "openai_compatible", "backend_url": server.base_url,
                          "llm_max_retries": 0}, "deep")
        update = create_portfolio_manager(llm, None)(dict(analysed))
        bodies = list(server.requests)
    forget_json_schema_support()
    final = update["final_trade_decision"]
    assert final.startswith("**Rating**: Underweight\n\n### Executive Summary")
    assert update["risk_debate_state"]["judge_decision"] == final
    assert any("response_format" in b or b.get("tool_choice") for b in bodies)  # tried structured first
    assert "response_format" not in bodies[-1] and not bodies[-1].get("tools")  # then plain text


def test_every_prompt_names_instrument_and_date_and_honours_the_language(analysed):
    rec = PromptRecorder()
    llm = OfflineChatModel(callbacks=[rec])
    config = {"output_language": "Français"}
    state = analysed_state(llm, config)
    run_rest(state, llm, config)
    systems = rec.system_prompts()
    # the four analysts (two calls each: the tool round, then the report) and the eight later nodes
    assert len(systems) == 4 * 2 + 8
    for prompt in systems:
        assert f"Instrument: {TICKER}" in prompt and f"Analysis date: {DATE}" in prompt
        assert "Instrument context: NVDA — test instrument" in prompt
        assert "Write your entire answer in Français" in prompt
    english = PromptRecorder()
    run_rest(dict(analysed), OfflineChatModel(callbacks=[english]), {"output_language": "English"})
    assert english.system_prompts() and not any("Write your entire answer" in p for p in english.system_prompts())


def test_an_analyst_that_keeps_calling_tools_is_made_to_write_its_report():
    from tests.fake_openai import FakeOpenAIServer, instrument_and_date, tool_arguments
    from tradingagents.llm_clients.factory import create_llm

    def tool_happy(request):  # a real-world failure mode: a model that never stops calling tools
        tools = request.get("tools") or []
        if tools:
            ticker, date = instrument_and_date(request["messages"])
            fn = tools[0]["function"]
            return {"content": None, "tool_calls": [{"name": fn["name"],
                                                      "arguments": tool_arguments(fn["parameters"], ticker, date)}]}
        return {"content": "Report from the tool results so far."}

    with FakeOpenAIServer(responder=tool_happy) as server:
        llm = create_llm({"llm_provider": "openai_compatible", "backend_url": server.base_url, "llm_max_retries": 0})
        state = Propagator().create_initial_state(TICKER, DATE)
        final = custom_loop_graph(llm).invoke(state)
        bodies = list(server.requests)
    assert final["news_report"] == "Report from the tool results so far."
    assert len(bodies) == MAX_TOOL_ROUNDS + 1
    assert all(b.get("tools") for b in bodies[:-1]) and not bodies[-1].get("tools")
    assert "do not call any tool" in bodies[-1]["messages"][-1]["content"]


def test_an_empty_scratchpad_starts_with_a_user_turn():
    rec = PromptRecorder()
    llm = OfflineChatModel(callbacks=[rec])
    state = {**Propagator().create_initial_state(TICKER, DATE), "messages": []}
    update = create_news_analyst(llm, get_analyst_tools("news", {}, as_of=DATE), {"analyst_data": "prefetch"})(state)
    [sent] = rec.calls  # one model call: the node fetched its data itself
    assert [m.type for m in sent] == ["system", "human"] and TICKER in sent[1].content
    # the kickoff message is not written back into the state: the fetch record, its answers, the report
    assert [m.type for m in update["messages"]] == ["ai", "tool", "tool", "ai"]
    assert [c["name"] for c in update["messages"][0].tool_calls] == ["get_news", "get_global_news"]
    assert update["news_report"] == update["messages"][-1].content

    # the tool loop (the default shape) starts the same way and asks for its tools
    rec.calls.clear()
    update = create_news_analyst(llm, get_analyst_tools("news", {}, as_of=DATE))(state)
    [sent] = rec.calls
    assert [m.type for m in sent] == ["system", "human"] and TICKER in sent[1].content
    assert [m.type for m in update["messages"]] == ["ai"]
    assert [c["name"] for c in update["messages"][0].tool_calls] == ["get_news", "get_global_news"]
    # and so does a custom analyst's loop
    rec.calls.clear()
    update = in_node("News Analyst", custom_loop_analyst(llm))(state)
    [sent] = rec.calls
    assert [m.type for m in sent] == ["system", "human"] and TICKER in sent[1].content
    assert [m.type for m in update["messages"]] == ["ai"] and update["messages"][0].tool_calls


def _signal_reports(*market_lines: str) -> dict:
    state = Propagator().create_initial_state(TICKER, DATE)
    state["market_report"] = "## Market\n\n" + "\n".join(market_lines)
    return state


def test_portfolio_manager_moderates_a_buy_facing_elevated_volatility():
    pm = create_portfolio_manager(OfflineChatModel(), None)
    calm = _signal_reports("- **Trend**: close 10 is above close_50_sma 9 → bullish",
                           "- **Volatility**: atr 0.1 against close 10 → neutral; volatility moderate")
    calm.update(investment_plan="**Recommendation**: Buy", trader_investment_plan=(
        "The last close was 10.00 on 2024-05-10.\n\nFINAL TRANSACTION PROPOSAL: **BUY**"))
    decision = pm(calm)["final_trade_decision"]
    # no levels in the Trader's plan: the PM's own, 1.5 ATRs of risk and twice that of reward
    assert decision.startswith("**Rating**: Buy") and "**Price target**: 10.30" in decision
    assert "**Stop-loss**: 9.85" in decision
    wild = dict(calm, market_report=calm["market_report"].replace("volatility moderate", "volatility elevated"))
    decision = pm(wild)["final_trade_decision"]
    # moderated to Overweight: a smaller size, the same levels (they come from the instrument, not the tier)
    assert decision.startswith("**Rating**: Overweight") and "**Price target**: 10.30" in decision
    assert "moderated from Buy to Overweight because of elevated volatility" in decision


def test_risk_analysts_answer_each_others_lead_points(analysed):
    llm = OfflineChatModel()
    state = run_rest(dict(analysed), llm)
    risk = state["risk_debate_state"]
    bold = re.compile(r"\*\*([^*]+)\*\*")
    aggressive_lead = bold.search(risk["current_aggressive_response"]).group(1)
    conservative = risk["current_conservative_response"]
    assert aggressive_lead in conservative.split("**")[0]  # answered before its own lead point
    neutral = risk["current_neutral_response"]
    assert f"The aggressive analyst's {aggressive_lead}" in neutral


def test_the_decision_card_comes_from_the_structured_decision_and_the_trader_proposal():
    from tradingagents.graph.decision_card import decision_card

    pm = create_portfolio_manager(OfflineChatModel(), None)
    state = _signal_reports("- **Trend**: close 10 is above close_50_sma 9 → bullish",
                            "- **Volatility**: atr 0.1 against close 10 → neutral; volatility moderate")
    state.update(investment_plan="**Recommendation**: Buy", trader_investment_plan=(
        "The last close was 10.00 on 2024-05-10.\n\n- Action: BUY — a full position at the target weight.\n"
        "- Entry: near 10.00.\n- Stop-loss: 9.80, two ATRs (0.10) below the last close.\n\n"
        "FINAL TRANSACTION PROPOSAL: **BUY**"))
    state.update(pm(state))
    card = decision_card(state, 5)
    assert card == {"rating": "Buy", "action": "BUY", "conviction": "high", "entry_price": 10.0,
                    "price_target": 10.4, "stop_loss": 9.8, "reward_risk": 2.0,
                    "position_size": "a full position at the target weight",
                    "time_horizon": "5 trading days", "scored_horizon": "5 trading days"}
    # a plain-text decision (no structured fields): the Trader's proposal fills the levels, nothing is invented
    plain = {"final_trade_decision": "**Rating**: Buy\n\nBuy it.", "final_rating": "Buy",
             "trader_investment_plan": state["trader_investment_plan"]}
    card = decision_card(plain, 10)
    assert (card["action"], card["entry_price"], card["stop_loss"], card["price_target"], card["conviction"]) == (
        "BUY", 10.0, 9.8, None, None)
    assert card["scored_horizon"] == "10 trading days"


def test_in_chinese_every_node_writes_chinese_and_the_decision_keeps_its_grammar(tmp_path, monkeypatch):
    """output_language "Chinese" reaches every prompt, and the offline engine answers each in Chinese; the
    PM's rating stays canonical (the structured field and the card's ``**Label**:`` lines)."""
    monkeypatch.setenv("TRADINGAGENTS_HOME", str(tmp_path))
    rec = PromptRecorder()
    llm = OfflineChatModel(callbacks=[rec])
    config = {"output_language": "Chinese"}
    state = run_rest(analysed_state(llm, config), llm, config)
    assert all("Write your entire answer in Chinese" in p for p in rec.system_prompts())
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for key in ("market_report", "sentiment_report", "news_report", "fundamentals_report", "investment_plan",
                "trader_investment_plan", "final_trade_decision"):
        assert len(cjk.findall(state[key])) > 50, key
    for turn in (state["investment_debate_state"]["bull_history"], state["investment_debate_state"]["bear_history"],
                 state["risk_debate_state"]["history"]):
        assert len(cjk.findall(turn)) > 30 and "Round" not in turn
    final = state["final_trade_decision"]
    assert state["final_rating"] in RATINGS_5_TIER and parse_rating(final) == state["final_rating"]
    assert final.startswith(f"**Rating**: {state['final_rating']}\n\n### 执行摘要\n\n")
    assert "### 投资论点" in final and "### Executive Summary" not in final
    assert re.search(r"^\*\*Conviction\*\*: (low|medium|high)$", final, re.M)
    assert re.search(r"^\*\*Time horizon\*\*: 5 个交易日$", final, re.M)  # the window it is scored over
