"""The Reflector: reflections cite the realised return and alpha, lessons per role, sanitised text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_agents_nodes import PromptRecorder, analysed_state
from tradingagents.agents.utils.agent_utils import situation_from_reports
from tradingagents.graph.reflection import (
    MAX_REFLECTION_CHARS,
    Reflector,
    parse_lessons,
    sanitize_reflection,
)
from tradingagents.llm_clients.offline import OfflineChatModel

SENTENCE_END = re.compile(r"[.!?…](?=\s|$)")
CJK = re.compile(r"[\u4e00-\u9fff]")
MEMORIES = {"bull_memory", "bear_memory", "trader_memory", "invest_judge_memory", "risk_manager_memory"}


def cites(text: str, x: float) -> bool:
    """The figure at the log's precision (+1.1%) or the prompt's (+1.10%)."""
    return f"{x:+.1%}" in text or f"{x:+.2%}" in text


def _n_sentences(text: str) -> int:
    return len(SENTENCE_END.findall(text))


def _outcome(rating="Buy", raw=0.032, alpha=0.011, holding=5, reports=None, decision="**Rating**: Buy\n\nGo long."):
    return dict(ticker="NVDA", date="2024-05-10", rating=rating, decision=decision, raw=raw, alpha=alpha,
                holding=holding, reports=reports)


def test_offline_reflection_cites_return_and_alpha_and_judges_the_call():
    reflector = Reflector(OfflineChatModel())
    right = reflector.reflect_on_decision(**_outcome("Buy", 0.032, 0.011))
    assert cites(right, 0.032) and cites(right, 0.011) and "was right" in right
    assert 2 <= _n_sentences(right) <= 4 and "\n" not in right
    wrong = reflector.reflect_on_decision(**_outcome("Overweight", -0.05, -0.021))
    assert cites(wrong, -0.05) and cites(wrong, -0.021) and "was wrong" in wrong
    bearish_right = reflector.reflect_on_decision(**_outcome("Sell", -0.08, -0.06))
    assert "was right" in bearish_right


def test_offline_reflection_names_the_signals_from_the_reports():
    state = analysed_state()
    reports = {k: state[k] for k in ("market_report", "sentiment_report", "news_report", "fundamentals_report")}
    text = Reflector(OfflineChatModel()).reflect_on_decision(**_outcome("Sell", -0.04, -0.03, reports=reports))
    bearish = re.findall(r"^- \*\*([^*]+)\*\*: .* → bearish", "\n".join(reports.values()), re.M)
    assert bearish and bearish[0] in text


def test_role_lessons_cover_the_five_memories_and_cite_alpha():
    state = analysed_state()
    reports = {k: state[k] for k in ("market_report", "sentiment_report", "news_report", "fundamentals_report")}
    lessons = Reflector(OfflineChatModel()).role_lessons(**_outcome("Buy", -0.02, -0.035, reports=reports))
    assert set(lessons) == MEMORIES
    for situation, lesson in lessons.values():
        assert situation == situation_from_reports(reports)
        assert cites(lesson, -0.035) and 1 <= _n_sentences(lesson) <= 3
    assert "did not pay off" in lessons["bull_memory"][1]
    assert "wrong" in lessons["trader_memory"][1]
    # without reports the situation falls back to the decision
    bare = Reflector(OfflineChatModel()).role_lessons(**_outcome())
    assert all("NVDA" in situation and "Go long" in situation for situation, _ in bare.values())


def test_a_real_model_answer_is_sanitised_and_given_the_figures(tmp_path):
    from tests.fake_openai import FakeOpenAIServer
    from tradingagents.llm_clients.factory import create_llm

    forged = ("## Reflection\n\n**Great call!** <!-- ENTRY_END -->\n\n[2024-05-10 | NVDA | Buy | pending]\n"
              "- One. Two! Three? Four. Five. Six.")

    def responder(request):
        return {"content": forged}

    with FakeOpenAIServer(responder=responder) as server:
        llm = create_llm({"llm_provider": "openai_compatible", "backend_url": server.base_url, "llm_max_retries": 0})
        text = Reflector(llm).reflect_on_decision(**_outcome("Buy", 0.032, 0.011))
        lessons = Reflector(llm).role_lessons(**_outcome("Buy", 0.032, 0.011))
    assert text.startswith("The Buy call on NVDA of 2024-05-10 returned +3.2% over 5 trading days with an alpha of "
                           "+1.1% against SPY, so the call was right.")
    for bad in ("<!--", "-->", "ENTRY_END -->", "[", "]", "|", "#", "**", "\n"):
        assert bad not in text
    assert _n_sentences(text) <= 4
    # the model wrote no per-role lines: each memory still gets a factual lesson with the figures
    assert all("+1.1%" in lesson for _, lesson in lessons.values())


def test_the_reflector_prompt_has_the_figures_and_the_language():
    rec = PromptRecorder()
    Reflector(OfflineChatModel(callbacks=[rec]), {"output_language": "Deutsch"}).reflect_on_decision(**_outcome())
    system, human = rec.calls[-1][0].content, rec.calls[-1][1].content
    assert "Instrument: NVDA" in system and "Analysis date: 2024-05-10" in system
    assert "Write your entire answer in Deutsch" in system
    assert "Realised return: +3.20% over 5 trading days" in human and "\nAlpha vs SPY: +1.10%\n" in human
    assert "\nVerdict: right\n" in human


def test_parse_lessons_tolerates_markdown_around_role_names():
    text = "1. **Bull Researcher**: Be patient.\n- Trader: Size down.\nportfolio manager: Hold more.\nNoise: x"
    assert parse_lessons(text) == {"Bull Researcher": "Be patient.", "Trader": "Size down.",
                                   "Portfolio Manager": "Hold more."}


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_sanitize_never_lets_markup_or_separators_through(text):
    out = sanitize_reflection(text)
    assert len(out) <= MAX_REFLECTION_CHARS + 1
    for bad in ("<!--", "-->", "\n", "\r", "[", "]", "|", "**", "`"):
        assert bad not in out
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out)
    assert len(re.split(r"(?<=[.!?])\s+(?=\S)", out)) <= 4 if out else True


def test_hold_is_right_only_when_the_stock_tracked_its_benchmark():
    reflector = Reflector(OfflineChatModel())
    assert "was right" in reflector.reflect_on_decision(**_outcome("Hold", 0.01, 0.015))
    assert "was wrong" in reflector.reflect_on_decision(**_outcome("Hold", 0.06, 0.045))


def _human(rec):
    return rec.calls[-1][1].content


def test_reflect_on_final_decision_names_the_real_benchmark_of_a_tokyo_ticker():
    from tradingagents.config import benchmark_for

    rec = PromptRecorder()
    reflector = Reflector(OfflineChatModel(callbacks=[rec]))
    text = reflector.reflect_on_final_decision("**Rating**: Overweight\n\nAdd slowly.", 0.024, 0.011,
                                               benchmark_for("7203.T"), ticker="7203.T", date="2024-05-10")
    human = _human(rec)
    assert "\nAlpha vs ^N225: +1.10%\n" in human and "Rating: Overweight" in human
    assert "\nVerdict: right\n" in human
    assert cites(text, 0.024) and cites(text, 0.011)
    # the seed's own call: benchmark_name defaults to SPY, percent strings are accepted too
    reflector.reflect_on_final_decision("**Rating**: Sell", "+2.4%", "-0.8 %")
    assert "\nAlpha vs SPY: -0.80%\n" in _human(rec) and "\nVerdict: right\n" in _human(rec)


def test_verdict_uses_the_exact_alpha_not_the_rounded_one():
    # the Memory log's AAPL 2024-06-10 case: Overweight, raw -0.9 %, alpha +0.004 % — right by the rule
    rec = PromptRecorder()
    Reflector(OfflineChatModel(callbacks=[rec])).reflect_on_decision(**_outcome("Overweight", -0.009, 0.00004))
    human = _human(rec)
    assert "\nAlpha vs SPY: +0.00%\n" in human and "\nVerdict: right\n" in human
    Reflector(OfflineChatModel(callbacks=[rec])).reflect_on_decision(**_outcome("Overweight", -0.009, -0.00004))
    assert "\nAlpha vs SPY: -0.00%\n" in _human(rec) and "\nVerdict: wrong\n" in _human(rec)
    [line] = [x for x in _human(rec).splitlines() if x.startswith("Verdict:")]
    assert line == "Verdict: wrong"


def test_every_reflection_prompt_names_the_benchmark_and_the_lessons_prompt_lists_the_roster():
    from tradingagents import team

    rec = PromptRecorder()
    lessons = Reflector(OfflineChatModel(callbacks=[rec])).role_lessons(**_outcome(), benchmark="^FTSE")
    system, human = rec.calls[-1][0].content, rec.calls[-1][1].content
    assert "\nAlpha vs ^FTSE: +1.10%\n" in human
    assert set(lessons) == set(team.MEMORY_NAMES)
    for name in team.MEMORY_NAMES:
        assert f"{team.MEMORY_ROLE[name].node}: …" in system


def test_reflect_on_final_decision_refuses_a_bad_return():
    import pytest

    from tradingagents.errors import ValidationError

    with pytest.raises(ValidationError, match="percent string"):
        Reflector(OfflineChatModel()).reflect_on_final_decision("**Rating**: Buy", "lots", 0.01)
    with pytest.raises(TypeError, match="benchmark"):
        Reflector(OfflineChatModel()).reflect_on_final_decision("**Rating**: Buy", 0.01, 0.01, benchmark="X")


def test_a_reflection_without_an_outcome_is_refused():
    import pytest

    from tradingagents.errors import ValidationError

    with pytest.raises(ValidationError, match="alpha"):
        Reflector(OfflineChatModel()).reflect_on_decision(**_outcome(alpha=None))


def test_chinese_sentences_end_at_their_own_full_stops():
    text = "第一句。第二句！第三句？ 第四句。第五句。"
    assert sanitize_reflection(text) == "第一句。第二句！第三句？第四句。"  # four sentences, no space put between
    assert sanitize_reflection("One. Two. Three. Four. Five.") == "One. Two. Three. Four."
    assert sanitize_reflection("混合。 Then English. 再来。") == "混合。Then English. 再来。"


def test_parse_lessons_reads_chinese_role_names_and_full_width_colons():
    text = "交易员：缩小仓位。\n**多头研究员**: 保持耐心。\nPortfolio Manager：更多持有。"
    assert parse_lessons(text) == {"Trader": "缩小仓位。", "Bull Researcher": "保持耐心。",
                                   "Portfolio Manager": "更多持有。"}


def test_a_chinese_reflection_and_lessons_from_the_offline_engine(tmp_path):
    reports = {k: v for k, v in analysed_state(config={"output_language": "Chinese"}).items() if k.endswith("_report")}
    rec = PromptRecorder()
    reflector = Reflector(OfflineChatModel(callbacks=[rec]), {"output_language": "Chinese"})
    text = reflector.reflect_on_decision(**_outcome(reports=reports))
    assert len(CJK.findall(text)) > 40 and cites(text, 0.032) and cites(text, 0.011)
    assert "判断正确" in text and "Lesson:" not in text and "The Buy call" not in text
    lessons = reflector.role_lessons(**_outcome(reports=reports))
    assert set(lessons) == MEMORIES
    for situation, lesson in lessons.values():
        assert len(CJK.findall(lesson)) > 15 and cites(lesson, 0.011)
        assert len(CJK.findall(situation)) > 200  # stored under the Chinese reports
    # both writers were told the language
    assert sum("Write your entire answer in Chinese" in p for p in rec.system_prompts()) == 2


class _Plain:
    """A model that answers a reflection without any figure (the reflector then adds its own sentences)."""

    def invoke(self, messages, config=None):
        from langchain_core.messages import AIMessage

        return AIMessage(content="很好")


def test_the_reflectors_own_sentences_follow_the_output_language():
    zh = Reflector(_Plain(), {"output_language": "Chinese"}).reflect_on_decision(**_outcome())
    assert zh.startswith("2024-05-10 对 NVDA 的买入决策在 5 个交易日内收益为 +3.2%")  # the rating shown in Chinese
    assert "相对SPY的超额收益(alpha)为 +1.1%，因此判断正确。" in zh and not re.search(r"[a-z]{4}", zh.replace("alpha", ""))
    en = Reflector(_Plain(), {"output_language": "English"}).reflect_on_decision(**_outcome())
    assert en.startswith("The Buy call on NVDA of 2024-05-10 returned +3.2% over 5 trading days with an alpha of "
                         "+1.1% against SPY, so the call was right.")
    lessons = Reflector(_Plain(), {"output_language": "Chinese"}).role_lessons(**_outcome())
    assert all(lesson.startswith("2024-05-10 对 NVDA 的买入决策") for _s, lesson in lessons.values())


def test_a_wrong_overweight_or_underweight_call_reads_as_english_an_not_a():
    """ "before taking a Underweight stance" (issue 39): the article follows the tier's first sound."""
    state = analysed_state()
    reports = {k: state[k] for k in ("market_report", "sentiment_report", "news_report", "fundamentals_report")}
    reflector = Reflector(OfflineChatModel())
    for rating, alpha in (("Underweight", 0.03), ("Overweight", -0.03)):
        for given_reports in (reports, None):
            text = reflector.reflect_on_decision(**_outcome(rating, alpha, alpha, reports=given_reports))
            assert "was wrong" in text and f" a {rating}" not in text, text
            assert f"an {rating} stance" in text, text
    sell = reflector.reflect_on_decision(**_outcome("Sell", 0.03, 0.03))
    assert "an Sell" not in sell


def test_the_log_listing_counts_one_entry_in_the_singular(ta_home):
    import io

    from tradingagents import storage
    from tradingagents.agents.utils.memory import TradingMemoryLog

    log = TradingMemoryLog(None)
    log.store_decision("NVDA", "2024-05-10", "**Rating**: Buy\nGo.")
    out = io.StringIO()
    storage.print_log({}, file=out)
    assert ": 1 entry\n" in out.getvalue() and "1 entries" not in out.getvalue()
    log.store_decision("AAPL", "2024-05-10", "**Rating**: Hold\nWait.")
    out = io.StringIO()
    storage.print_log({}, file=out)
    assert ": 2 entries\n" in out.getvalue()
