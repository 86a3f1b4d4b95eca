"""The offline engine in Chinese (issue 26): a whole run with ``output_language: Chinese`` on the demo
market writes its reports, debate and risk turns, plan, proposal, decision, reflection and lessons in
Chinese from ``engine.po``, the same bytes every time, with the rating words, numbers, tickers and
dates as they are; the English run keeps its English; a settled Chinese lesson is found again by a
Chinese and by a mixed Chinese/English query of the role memory.
"""

from __future__ import annotations

import re

import pytest
from babel.messages.pofile import read_po

from tradingagents import i18n
from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.graph.decision_card import GRAMMAR_LABELS
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.rating import RATINGS_5_TIER, parse_rating
from tradingagents.team import MEMORY_NAMES

TICKER, FIRST, SECOND = "NVDA", "2024-05-01", "2024-05-20"  # the second run settles the first (5 days)
REPORTS = ("market_report", "sentiment_report", "news_report", "fundamentals_report")
TEXTS = (*REPORTS, "investment_plan", "trader_investment_plan", "final_trade_decision")
CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")
FIELD = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")


def _texts(state: dict) -> dict[str, str]:
    out = {key: state[key] for key in TEXTS}
    out["invest_debate"] = state["investment_debate_state"]["history"]
    out["risk_debate"] = state["risk_debate_state"]["history"]
    return out


def _run(home, language: str | None) -> dict:
    config = {"home": str(home)}
    if language:
        config["output_language"] = language
    graph = TradingAgentsGraph(config=config)
    first, first_rating = graph.propagate(TICKER, FIRST)
    second, second_rating = graph.propagate(TICKER, SECOND)
    entries = {e["date"]: e for e in TradingMemoryLog(graph.config).load_entries()}
    lessons = {name: [lesson for _situation, lesson in FinancialSituationMemory(name, graph.config).items()]
               for name in MEMORY_NAMES}
    return {"graph": graph, "first": first, "second": second, "ratings": (first_rating, second_rating),
            "texts": {FIRST: _texts(first), SECOND: _texts(second)}, "reflection": entries[FIRST]["reflection"],
            "lessons": lessons}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRADINGAGENTS_HOME", str(tmp_path_factory.mktemp("home")))
        yield {
            "zh": _run(tmp_path_factory.mktemp("zh"), "Chinese"),
            "zh_again": _run(tmp_path_factory.mktemp("zh_again"), "Chinese"),
            "en": _run(tmp_path_factory.mktemp("en"), "English"),
            "default": _run(tmp_path_factory.mktemp("default"), None),
        }


def _share_cjk(text: str) -> float:
    """Chinese characters among the letters of a text, without the data it quotes (posts and headlines
    as the feeds wrote them, a tool's own "no data" answer)."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith(("> ", "- get_")))
    cjk, latin = len(CJK.findall(body)), len(LATIN.findall(body))
    return cjk / max(1, cjk + latin)


def _english_sentences() -> list[str]:
    """The English templates' pieces of prose (between fields, three words or more) from engine.po; the
    grammar's labels (``FINAL TRANSACTION PROPOSAL``) are not prose: the stored text keeps them English."""
    with (i18n.LOCALES_DIR / "zh" / "LC_MESSAGES" / "engine.po").open("rb") as fh:
        catalog = read_po(fh, locale="zh")
    pieces: set[str] = set()
    for message in catalog:
        ids = message.id if isinstance(message.id, tuple | list) else (message.id,)
        for msgid in ids:
            for piece in FIELD.split(msgid or ""):
                piece = piece.strip(" ,.;:()#*-_|")
                if len(piece.split()) >= 3 and piece not in GRAMMAR_LABELS:
                    pieces.add(piece)
    return sorted(pieces)


def test_the_reports_debates_and_decision_are_in_chinese(runs):
    english = _english_sentences()
    assert len(english) > 100  # the catalogue holds the templates, so an empty list cannot pass
    for date, texts in runs["zh"]["texts"].items():
        for key, text in texts.items():
            assert _share_cjk(text) > 0.55, (date, key, _share_cjk(text), text[:300])
            left = [piece for piece in english if piece in text]
            assert not left, (date, key, left)
    second = runs["zh"]["texts"][SECOND]
    assert "看涨" in second["market_report"] or "看跌" in second["market_report"]
    assert "最有力的论点是“" in second["invest_debate"] and "第 1 轮" not in second["invest_debate"]
    assert "### 执行摘要" in second["final_trade_decision"] and "### 投资论点" in second["final_trade_decision"]
    assert "_由离线引擎（无 LLM）根据本次运行的数据撰写；未使用任何语言模型。_" in second["market_report"]


def test_numbers_tickers_dates_and_rating_words_stay_as_they_are(runs):
    zh, en = runs["zh"], runs["en"]
    assert zh["ratings"] == en["ratings"]  # the same evidence, the same decisions, whatever the language
    for state, rating in ((zh["first"], zh["ratings"][0]), (zh["second"], zh["ratings"][1])):
        assert rating in RATINGS_5_TIER and state["final_rating"] == rating
        assert parse_rating(state["final_trade_decision"]) == rating
        assert state["final_trade_decision"].startswith(f"**Rating**: {rating}\n")
        assert parse_rating(state["investment_plan"]) in RATINGS_5_TIER
        assert re.search(r"FINAL TRANSACTION PROPOSAL: \*\*(BUY|HOLD|SELL)\*\*", state["trader_investment_plan"])
    for key in REPORTS:  # every figure the English report quotes is in the Chinese one
        # (a post's poster, @demo_trader_8027, is a handle the Chinese quote leaves out, not a figure)
        numbers = set(re.findall(r"-?\d+(?:\.\d+)?%?|\d{4}-\d{2}-\d{2}", re.sub(r"@\S+", "", en["second"][key])))
        missing = [n for n in numbers if n not in zh["second"][key]]
        assert not missing, (key, missing)
        assert TICKER in zh["second"][key]


def test_the_chinese_run_is_the_same_bytes_twice(runs):
    assert runs["zh"]["texts"] == runs["zh_again"]["texts"]
    assert runs["zh"]["reflection"] == runs["zh_again"]["reflection"]
    assert runs["zh"]["lessons"] == runs["zh_again"]["lessons"]


def test_the_english_run_keeps_its_english(runs):
    assert runs["en"]["texts"] == runs["default"]["texts"]
    assert runs["en"]["lessons"] == runs["default"]["lessons"]
    for texts in runs["en"]["texts"].values():
        for key, text in texts.items():
            assert not CJK.search(text), key
    assert "'s strongest point is \u201c" in runs["en"]["texts"][SECOND]["invest_debate"]
    assert not CJK.search(runs["en"]["reflection"])


def test_the_settled_decision_has_a_chinese_reflection_and_lessons(runs):
    reflection = runs["zh"]["reflection"]
    assert _share_cjk(reflection) > 0.55 and "Lesson:" not in reflection
    assert re.search(r"[+-]\d+\.\d+%", reflection)  # it cites the realised figures
    for name, lessons in runs["zh"]["lessons"].items():
        assert len(lessons) == 1, name
        assert _share_cjk(lessons[0]) > 0.55, (name, lessons[0])
        assert TICKER in lessons[0] or "Hold" in lessons[0] or "%" in lessons[0]
    # the second run was given the first run's lessons, in Chinese
    bull = runs["zh"]["texts"][SECOND]["invest_debate"]
    assert "一条过往的经验教训在此适用：" in bull


def test_a_chinese_lesson_is_found_by_a_chinese_and_by_a_mixed_query(runs):
    graph = runs["zh"]["graph"]
    memory = FinancialSituationMemory("bull_memory", graph.config)
    [chinese_lesson] = runs["zh"]["lessons"]["bull_memory"]
    # an English lesson on another instrument beside it: the query's language decides which one comes first
    memory.add_situations([("AAPL momentum strong, the close is above its 50-day average, bullish trend.",
                            "Momentum on AAPL paid off; press it when it recurs.")])
    for query in ("收盘价高于50日均线，长期趋势看涨，动量增强",          # Chinese
                  "NVDA 长期趋势 看涨, momentum and the 50-day average"):  # Chinese and English mixed
        matches = memory.get_memories(query, n_matches=2)
        assert matches[0]["recommendation"] == chinese_lesson, (query, matches)
        assert matches[0]["similarity_score"] > 0
    # and the English query still finds the English lesson first
    english = memory.get_memories("AAPL momentum strong bullish trend", n_matches=2)
    assert english[0]["recommendation"].startswith("Momentum on AAPL")


def test_a_chinese_answer_streams_clause_by_clause():
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.messages import HumanMessage, SystemMessage

    from tradingagents.agents.utils.agent_utils import language_instruction
    from tradingagents.llm_clients.offline import OfflineChatModel
    from tradingagents.team import ROLE_METADATA

    class Pieces(BaseCallbackHandler):
        def __init__(self):
            self.pieces = []

        def on_llm_new_token(self, token, **kwargs):
            self.pieces.append(token)

    system = "Instrument: NVDA\nAnalysis date: 2024-05-10\n" + language_instruction({"output_language": "Chinese"})
    msgs = [SystemMessage(system), HumanMessage("Make the bull case.")]
    pieces = Pieces()  # at presenter pace (a pause between pieces): clause by clause
    answer = OfflineChatModel(stream_delay_s=0.001, callbacks=[pieces]).invoke(msgs, {"metadata": {ROLE_METADATA: "bull"}})
    assert CJK.search(answer.content) and "".join(pieces.pieces) == answer.content
    assert len(pieces.pieces) > 5 and all(len(p) < 80 for p in pieces.pieces)
    # at full speed, in runs of whole clauses (the first alone): the same text
    from tradingagents.llm_clients.offline.model import RUN_CHARS

    runs = Pieces()
    fast = OfflineChatModel(callbacks=[runs]).invoke(msgs, {"metadata": {ROLE_METADATA: "bull"}})
    assert fast.content == answer.content == "".join(runs.pieces)
    assert runs.pieces[0] == pieces.pieces[0] and 1 < len(runs.pieces) < len(pieces.pieces)
    assert all(len(p) <= RUN_CHARS for p in runs.pieces)


@pytest.mark.parametrize(("ticker", "date"), [("AAPL", "2024-03-01"), ("TSLA", "2024-04-15")])
def test_the_decision_and_its_levels_do_not_depend_on_the_language(tmp_path, monkeypatch, ticker, date):
    """A BUY with a stop: the Portfolio Manager reads the Trader's Chinese close and stop back, so the
    card's action, entry, target and stop are the English run's."""
    from tradingagents.graph.decision_card import decision_card

    monkeypatch.setenv("TRADINGAGENTS_HOME", str(tmp_path))
    cards = {}
    for language in ("English", "Chinese"):
        graph = TradingAgentsGraph(["market"], config={"output_language": language, "home": str(tmp_path / language)})
        state, rating = graph.propagate(ticker, date)
        card = decision_card(state, 5)
        cards[language] = {k: card[k] for k in ("rating", "action", "conviction", "entry_price", "price_target",
                                                "stop_loss")}
    assert cards["Chinese"] == cards["English"]
    assert cards["Chinese"]["action"] == "BUY" and cards["Chinese"]["stop_loss"] is not None


ALLOWED_LATIN = re.compile(r"(?<![A-Za-z])(NVDA|NVIDIA|Corporation|USD|SPY|DemoWire|DemoSocial)(?![A-Za-z])|"
                           r"@demo_trader_\d+")  # names, units, a post's author


def test_the_chinese_run_reads_chinese_headlines_posts_and_sector_names(runs):
    """The demo market writes its headlines and posts in the run's language (same figures, dates and tones as
    the English run's), so the news and sentiment reports quote Chinese headlines; the instrument's sector and
    industry read in Chinese where a Chinese page shows them."""
    for key in ("news_report", "sentiment_report"):
        zh, en = runs["zh"]["texts"][SECOND][key], runs["en"]["texts"][SECOND][key]
        assert "Synthetic headline" not in zh and "Synthetic post" not in zh
        quotes = [line for line in zh.splitlines() if line.startswith("> ")]
        assert quotes and all(("合成新闻：" if key == "news_report" else "合成帖子：") in line for line in quotes)
        for line in quotes:
            words = re.findall(r"[A-Za-z]{3,}", ALLOWED_LATIN.sub("", line))
            assert not words, (line, words)
        # the same data in both languages: the same dates quoted, the same tone counts
        assert re.findall(r"\d{4}-\d{2}-\d{2}", zh) == re.findall(r"\d{4}-\d{2}-\d{2}", en)
    assert i18n.sector_label("Technology", "zh") == "科技" and i18n.sector_label("Semiconductors", "zh") == "半导体"
    from tradingagents.storage.files_runs import instrument_shown

    context = runs["zh"]["second"]["instrument_context"]
    assert "Technology / Semiconductors" in context  # the models' line keeps the source's names
    assert "(科技 / 半导体, NASDAQ, USD)" in instrument_shown(context, i18n.translator("zh"))
    assert i18n.sector_label("Semiconductors", "en") == "Semiconductors"
    # an exchange written out in words is named in Chinese too; abbreviations and currencies stay as they are
    moutai = "600519.SS — Kweichow Moutai (Consumer Defensive / Beverages—Wineries & Distilleries, Shanghai Stock Exchange, CNY)"
    assert instrument_shown(moutai, i18n.translator("zh")).endswith("(防御性消费 / 酒类酿造, 上海证券交易所, CNY)")
    assert instrument_shown(moutai, i18n.translator("en")) == moutai
