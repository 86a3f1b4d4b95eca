"""The command line in Chinese (issue 26): with ``TRADINGAGENTS_UI_LANGUAGE=zh`` its own messages (the
first line about the offline engine and the demo market, progress, results, summaries, hints, the
headlines of failures) are Chinese, and every exit code is the one English gives.

What stays English, by design: argparse's help and usage text, and the sentence an error raised
inside the engine carries (it follows the translated headline).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAIServer
from tradingagents import cli
from tradingagents.vendors import engine_notice

DATE = "2024-05-10"
_WORD = re.compile(r"[A-Za-z][A-Za-z'&]+")
NAMES = {"NVDA", "AAPL", "ZZZQ", "STETTLE", "python", "tradingagents", "settle", "stettle", "help", "provider",
         "data", "yfinance", "csv", "TradingAgents", "CR", "SR", "MDD", "MACD", "KDJ", "RSI", "ZMR", "SMA", "SPY",
         "alpha", "market", "report", "md",
         "Buy", "Overweight", "Hold", "Underweight", "Sell"}  # a rating's canonical name beside the shown one


def english_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w not in NAMES]


def _run(monkeypatch, capsys, lang: str | None, *argv: str) -> tuple[int, str, str]:
    if lang:
        monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", lang)
    else:
        monkeypatch.delenv("TRADINGAGENTS_UI_LANGUAGE", raising=False)
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_run_in_chinese_says_everything_in_chinese_and_exits_0(monkeypatch, capsys, ta_home):
    code, out, err = _run(monkeypatch, capsys, "zh", "NVDA", DATE, "--analysts", "market")
    assert code == cli.EXIT_OK == 0
    lines = out.splitlines()
    rating = re.fullmatch(r"评级：(\S+) \((Buy|Overweight|Hold|Underweight|Sell)\)", lines[0])
    assert rating, lines[0]
    report = Path(lines[1].removeprefix("报告："))
    assert lines[1].startswith("报告：") and report == ta_home / "results" / "NVDA" / DATE / "report.md"
    assert report.is_file() and f"**{rating.group(2)}**" in report.read_text(encoding="utf-8")  # files stay canonical
    first = err.splitlines()[0]
    assert first.startswith("注意：离线引擎（") and "合成的演示市场" in first
    assert english_words(first.replace("--provider", "").replace("--data", "")) == [], first
    assert "开始 NVDA 2024-05-10：市场分析师（" in err and "✓ 市场分析师" in err and "… 研究经理 (研究团队)" in err
    assert "研究辩论第 1 轮：多头" in err and "风险辩论第 1 轮：激进" in err and f"完成：{rating.group(1)}，用时" in err
    progress = [line for line in err.splitlines()[1:] if "工具 get_" not in line and "已写入" not in line]
    assert english_words("\n".join(progress)) == [], progress
    # the same command in English: the same exit code, the English words scripts read
    code, out, err = _run(monkeypatch, capsys, None, "NVDA", "2024-05-09", "--analysts", "market")
    assert code == 0 and out.startswith("Rating: ") and err.startswith("Note: offline engine")
    assert err.splitlines()[0] == engine_notice({"llm_provider": "offline", "data_vendor": "demo"})


@pytest.mark.parametrize("argv, code, zh_head", [
    (["NV DA", DATE], 2, "输入有误："),
    (["ZZZQ", DATE], 2, "输入有误："),
    (["NVDA", "2024-02-30"], 2, "输入有误："),
    (["NVDA", DATE, "--provider", "nope"], 2, "配置错误"),
    (["stettle"], 2, "输入有误：未知命令 'stettle'：您是想输入 'settle' 吗？"),
    (["show", "NVDA", DATE], 2, "输入有误：没有 NVDA 在 2024-05-10 的已保存运行"),
    (["NVDA"], 2, None),  # argparse's own usage error: English in every language
    (["--help"], 0, None),
])
def test_failures_have_the_same_exit_code_in_chinese_and_a_chinese_headline(monkeypatch, capsys, ta_home, argv,
                                                                            code, zh_head):
    en_code, _en_out, en_err = _run(monkeypatch, capsys, None, *argv)
    zh_code, zh_out, zh_err = _run(monkeypatch, capsys, "zh", *argv)
    assert en_code == zh_code == code
    if zh_head is None:
        return
    said = [line for line in zh_err.splitlines() if not line.startswith("注意：")]
    assert said and said[0].startswith(zh_head), zh_err
    assert not [line for line in en_err.splitlines() if re.search(r"[\u4e00-\u9fff]", line)]
    assert not (ta_home / "results").exists()


def test_a_model_server_that_is_down_exits_4_in_both_languages(monkeypatch, capsys, ta_home):
    with FakeOpenAIServer() as srv:
        url = srv.base_url  # closed when the block ends: nothing listens there
    argv = ("NVDA", DATE, "--analysts", "market", "--provider", "ollama", "--backend-url", url, "--quiet")
    en = _run(monkeypatch, capsys, None, *argv)
    zh = _run(monkeypatch, capsys, "zh", *argv)
    assert en[0] == zh[0] == cli.EXIT_LLM_FAILURE == 4
    assert en[2].startswith("LLM failure: ") and zh[2].startswith("模型调用失败：")


def test_settle_and_batch_speak_chinese(monkeypatch, capsys, ta_home):
    code, out, _err = _run(monkeypatch, capsys, "zh", "settle")
    assert code == 0 and out.strip() == "没有需要结算的：记忆日志中没有待结算的决策。"
    code, out, _err = _run(monkeypatch, capsys, "zh", "settle", "--ticker", "NVDA")
    assert code == 0 and out.strip() == "没有需要结算的：记忆日志中没有 NVDA 的待结算决策。"
    code, out, err = _run(monkeypatch, capsys, "zh", "batch", "NVDA,AAPL", DATE, "--analysts", "market")
    assert code == 0, err
    rows = out.splitlines()
    assert [r.split()[:2] for r in rows[:2]] == [["NVDA", "完成"], ["AAPL", "完成"]], rows
    assert rows[-1].startswith("合计 ")
    assert re.search(r"2024-05-10 的 2 个代码，执行器 .+，最多同时 \d+ 个模型调用；预计成本", err), err
    assert english_words(out.replace("threads", "")) == [], out
    code, _out, err = _run(monkeypatch, capsys, "zh", "batch", "@nope", DATE)
    assert code == 2 and "输入有误：没有名为 'nope' 的自选列表（已保存：尚未保存）。" in err
    code, _out, err = _run(monkeypatch, capsys, None, "batch", "@nope", DATE)
    assert code == 2 and "Bad input: No watchlist named 'nope' (saved: none saved yet)." in err


def test_the_backtest_command_and_its_report_follow_the_language(monkeypatch, capsys, ta_home):
    argv = ("backtest", "NVDA", "--start", "2024-06-03", "--end", "2024-06-05")
    # the models' language named, so that both languages open the same backtest (under a Chinese UI alone the
    # team writes Chinese: another backtest, with its own folder)
    monkeypatch.setenv("TRADINGAGENTS_OUTPUT_LANGUAGE", "English")
    code, out, err = _run(monkeypatch, capsys, "zh", *argv)
    assert code == 0, err
    assert err.startswith("注意：离线引擎") and "回测 NVDA_2024-06-03_2024-06-05_" in err and "用时 " in err
    assert "NVDA 2024-06-03 " in err and re.search(r"\d/3  NVDA 2024-06-0\d (买入|增持|持有|减持|卖出)", err), err
    lines = out.splitlines()
    assert lines[1].split()[0] == "策略" and any(line.split()[0] == "买入持有" for line in lines[2:])
    assert lines[-1].startswith("回测：")
    folder = Path(lines[-1].removeprefix("回测："))
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# 回测 NVDA：2024-06-03 → 2024-06-05") and "## 决策" in report
    assert "<html lang='zh-Hans'>" in (folder / "report.html").read_text(encoding="utf-8")
    table = "\n".join(lines[:-1])
    assert english_words(table) == [], table
    # English: the same exit code, and the report is rewritten in English when the run is resumed
    code, out, err = _run(monkeypatch, capsys, None, *argv)
    assert code == 0 and out.splitlines()[-1] == f"Backtest: {folder}"
    assert (folder / "report.md").read_text(encoding="utf-8").startswith("# Backtest NVDA: 2024-06-03 → 2024-06-05")
    # an unlisted ticker: exit 2 in both languages, nothing left behind
    en = _run(monkeypatch, capsys, None, "backtest", "ZZZQ", "--start", "2024-06-03", "--end", "2024-06-05")
    zh = _run(monkeypatch, capsys, "zh", "backtest", "ZZZQ", "--start", "2024-06-03", "--end", "2024-06-05")
    assert en[0] == zh[0] == 2
    assert "Bad input: " in en[2] and "输入有误：" in zh[2]


def test_the_notice_is_said_in_chinese_exactly_when_english_says_it():
    t = cli.translator("zh")
    for provider in ("offline", "openai"):
        for vendor in ("demo", "yfinance"):
            settings = {"llm_provider": provider, "data_vendor": vendor}
            en, zh = engine_notice(settings), cli.notice_text(settings, t)
            assert (en is None) == (zh is None), settings
            assert cli.notice_text(settings) == en
            if zh:
                assert zh.startswith("注意：") and zh.endswith("。")


def test_an_unknown_ui_language_is_a_configuration_error(monkeypatch, capsys, ta_home):
    code, _out, err = _run(monkeypatch, capsys, "klingon", "NVDA", DATE)
    assert code == 2 and "TRADINGAGENTS_UI_LANGUAGE" in err


def test_under_a_chinese_ui_the_cli_writes_chinese_reports_unless_the_output_language_is_named(monkeypatch, capsys,
                                                                                            ta_home):
    """``TRADINGAGENTS_UI_LANGUAGE=zh`` alone: the reports are Chinese (the output language follows the UI's);
    an output language named in the environment still wins; the saved files keep the canonical rating."""
    from tradingagents.config import resolve_config

    monkeypatch.delenv("TRADINGAGENTS_OUTPUT_LANGUAGE", raising=False)
    monkeypatch.setenv("TRADINGAGENTS_UI_LANGUAGE", "zh")
    assert resolve_config()["output_language"] == "Chinese"
    assert resolve_config({"output_language": "English"})["output_language"] == "English"
    assert resolve_config().replace(ui_language="en")["output_language"] == "English"
    code, out, _err = _run(monkeypatch, capsys, "zh", "NVDA", DATE, "--analysts", "market")
    assert code == 0
    report = Path(out.splitlines()[1].removeprefix("报告：")).read_text(encoding="utf-8")
    market = report.split("\n### ", 2)[1]
    assert re.search(r"[\u4e00-\u9fff]{4}", market) and "Market analysis of" not in market, market[:400]
    monkeypatch.setenv("TRADINGAGENTS_OUTPUT_LANGUAGE", "English")
    assert resolve_config()["output_language"] == "English"
    code, out, _err = _run(monkeypatch, capsys, "zh", "NVDA", "2024-05-09", "--analysts", "market")
    report = Path(out.splitlines()[1].removeprefix("报告：")).read_text(encoding="utf-8")
    assert code == 0 and "Market analysis of NVDA" in report
    monkeypatch.delenv("TRADINGAGENTS_UI_LANGUAGE")
    monkeypatch.delenv("TRADINGAGENTS_OUTPUT_LANGUAGE")
    assert resolve_config()["output_language"] == "English"
