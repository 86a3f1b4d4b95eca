"""A blind run's stored text quotes prices on the real scale: the rebased prices the models read (a close
of 100.00 on the anchor day) are mapped back with the run's own factors, like its ticker and dates."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tradingagents.config import resolve_config
from tradingagents.dataflows.blind import BlindMap, BlindProvider
from tradingagents.dataflows.interface import get_provider
from tradingagents.graph.blind_run import run_blind
from tradingagents.graph.trading_graph import TradingAgentsGraph

TICKER, DATE = "NVDA", "2024-05-10"
# the decision card's lines too ("**Entry**: 54.69", "- Stop-loss: 47.97, two ATRs (3.36) below …")
PRICE_LINE = re.compile(r"close|macd|atr|boll_|EPS|estimate|Entry|Price target|Stop-loss|ATRs")
STATEMENT = re.compile(r"^- (Total Revenue|Net Income|Total Debt): (\S+) for the period ending \S+, against (\S+) ", re.M)


_NUMBER = re.compile(r"-?\d[\d,]*\.\d+")


def same_quotes(real: list[str], seen: list[str]) -> bool:
    """The same lines quoting the same prices: a blind figure is rounded on its own scale before it is
    mapped back, so the two may differ by a cent (80.68 and 80.69) or in trailing zeros (0.55 and
    0.550), never by the rebasing factor (a price left on the blind scale is ~10% off here)."""
    if len(real) != len(seen):
        return False
    for a, b in zip(real, seen, strict=True):
        if _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
            return False
        for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b), strict=True):
            x, y = float(x.replace(",", "")), float(y.replace(",", ""))
            if abs(x - y) > max(0.011, 0.002 * abs(x)):
                return False
    return True


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if PRICE_LINE.search(line) and "Company news" not in line]


def test_a_blind_runs_stored_report_quotes_the_real_prices(ta_home):
    cfg = resolve_config({})
    blind = run_blind(cfg, TICKER, DATE)
    # the blind run is saved where every run is; the real run after it makes it an earlier version
    seen = (Path(blind["results_path"]) / "report.md").read_text()
    state = json.loads((Path(blind["results_path"]) / "state.json").read_text())["state"]
    graph = TradingAgentsGraph(config=cfg)
    graph.propagate(TICKER, DATE)
    real = (Path(graph.last_run["results_path"]) / "report.md").read_text()
    close = float(get_provider(cfg).ohlcv(TICKER, "2024-05-01", DATE)["Close"].iloc[-1])
    assert f"close {close:.2f}" in seen and "close 100.00" not in seen
    # every price the market, fundamentals and debate texts quote is the one a run on real prices quotes
    # (headlines differ only by the company's name, which a blind run scrubs)
    assert same_quotes([line.replace("NVIDIA Corporation", TICKER) for line in _lines(real)], _lines(seen))
    figures = STATEMENT.findall(seen)
    assert len(figures) == 3
    def amount(text: str) -> float:  # "$105.74B" (tradingagents.figures.money)
        return float(text.lstrip("-$")[:-1]) * {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[text[-1]]

    # a blind statement figure is rounded for display before it is mapped back: equal to that rounding
    for (label, a, b), (label2, a2, b2) in zip(figures, STATEMENT.findall(real), strict=True):
        assert label == label2 and abs(amount(a) / amount(a2) - 1) < 0.01 and abs(amount(b) / amount(b2) - 1) < 0.01
    # the saved state is mapped back too (what the Run and Debates pages show)
    assert f"close {close:.2f}" in state["market_report"]
    # while the blind desk itself keeps what the models saw
    desk = (Path(ta_home) / "blind" / "desk" / "results" / blind["alias"]).rglob("report.md")
    assert "close 100.00" in next(desk).read_text()


def test_only_price_phrases_are_mapped_back():
    class Base:
        vendor, supports_social = "demo", False

        def ohlcv(self, ticker, start, end):
            import pandas as pd

            return pd.DataFrame({"Close": [250.0]}, index=pd.DatetimeIndex([end]))

    blind = BlindMap([TICKER], DATE)
    provider = BlindProvider(Base(), blind)
    text = ("close 100.00. RSI 47.00, P/E 26.03, growth 0.6619, up +2.50%, $40.00 target, 4.00 million shares sold "
            "for 12.5 million, close rose from 80.00 on 2023-01-02 to 90.00.")
    out = provider.real_prices_text(text, TICKER)
    m = blind.money_factor(TICKER)
    assert out.startswith("close 250.00. RSI 47.00, P/E 26.03, growth 0.6619, up +2.50%, $100.00 target")
    assert f"for {12.5 / m:.1f} million" in out and "from 200.00 on 2023-01-02 to 225.00." in out


def test_a_blind_run_in_chinese_quotes_the_real_prices_too(ta_home):
    # the offline engine's Chinese phrasings of the same prices (收盘价, 日均线, 布林带, ATR, 止损价, 入场 …)
    cfg = resolve_config({"output_language": "Chinese"})
    blind = run_blind(cfg, TICKER, DATE)
    seen = (Path(blind["results_path"]) / "report.md").read_text()
    graph = TradingAgentsGraph(config=cfg)
    graph.propagate(TICKER, DATE)
    real = (Path(graph.last_run["results_path"]) / "report.md").read_text()
    price_line = re.compile(r"收盘价|均线|布林带|ATR|MACD|止损|入场")
    lines = [line for line in real.splitlines() if price_line.search(line)]
    assert len(lines) > 10 and "收盘价 100.00" not in seen
    assert same_quotes([line.replace("NVIDIA Corporation", TICKER) for line in lines],
                       [line for line in seen.splitlines() if price_line.search(line)])
