"""Blind runs: no prompt carries the real ticker, the company's name or a real date; storage is real."""

from __future__ import annotations

import csv
import json
import re

import pandas as pd
import pytest

from tests.fake_openai import FakeOpenAIServer
from tradingagents.backtest.engine import TEAM, Backtest, BacktestSpec, run_backtest
from tradingagents.dataflows.blind import YEAR_SHIFT, BlindMap, alias_for, name_variants
from tradingagents.dataflows.interface import get_provider

START, END = "2024-06-03", "2024-06-14"


def _all_text(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def test_the_map_keeps_weekdays_and_returns_and_undoes_itself(ta_home):
    base = get_provider({})
    blind = BlindMap.make(["NVDA"], START, base)
    alias = blind.alias("NVDA")
    assert alias != "NVDA" and BlindMap.make(["NVDA"], "2020-01-02", base).alias("NVDA") == alias  # stable
    for day in pd.bdate_range("2023-01-02", "2024-12-31"):
        shifted = pd.Timestamp(blind.blind_date(day.date().isoformat()))
        assert shifted.weekday() == day.weekday() and shifted.year == day.year + YEAR_SHIFT
    provider = get_provider({"blind": blind.to_dict()})
    seen = provider.ohlcv(alias, blind.blind_date("2024-01-02"), blind.blind_date(END))
    real = base.ohlcv("NVDA", "2024-01-02", END)
    assert [blind.real_date(d.date().isoformat()) for d in seen.index] == [d.date().isoformat() for d in real.index]
    assert seen["Close"].pct_change().dropna().tolist() == pytest.approx(real["Close"].pct_change().dropna().tolist())
    assert float(seen.loc[blind.blind_date(START), "Close"]) == pytest.approx(100.0)
    name = base.identity("NVDA")["name"]
    text = f"{name} ($NVDA) rose on {START}; nvidia said in 2024 that NVDA would…"
    blinded = blind.blind_text(text)
    assert "NVDA" not in blinded and "nvidia" not in blinded.lower() and "2024" not in blinded
    assert blind.unblind_text(blinded).startswith(f"NVDA ($NVDA) rose on {START}")
    assert provider.identity(alias) == {"name": alias, "data_source": provider.label}
    fundamentals = provider.fundamentals(alias, blind.blind_date(START))
    assert not {"name", "sector", "industry"} & set(fundamentals)
    assert "Corporation" in name_variants("NVIDIA Corporation")[0] and "NVIDIA" in name_variants("NVIDIA Corporation")


def test_a_blind_backtest_through_the_fake_server_leaks_nothing_and_stores_real_names(ta_home):
    base = get_provider({})
    names = [n for t in ("NVDA", "AAPL") for n in name_variants(base.identity(t)["name"])]
    days = pd.bdate_range("2023-01-01", "2024-12-31")  # every real date a tool could have served
    real_dates = {d.date().isoformat() for d in days}
    with FakeOpenAIServer() as server:
        cfg = server.llm_config(analyst_execution="sequential")
        spec = BacktestSpec.make("NVDA,AAPL", START, END, every=5, blind=True)
        result = run_backtest(spec, cfg)
        requests = list(server.requests)
    assert len(requests) > 20  # every agent of every step asked the model
    iso = re.compile(r"\d{4}-\d{2}-\d{2}")
    for body in requests:
        text = _all_text(body.get("messages")) + _all_text(body.get("tools"))
        for word in ("NVDA", "AAPL", *names):
            assert not re.search(r"(?<![A-Za-z0-9])" + re.escape(word) + r"(?![A-Za-z0-9])", text, re.I), word
        leaked = set(iso.findall(text)) & real_dates
        assert not leaked, sorted(leaked)[:5]
        assert not re.search(r"(?<![\d.])202[34](?![\d])", text)

    # everything stored is in real names and dates
    folder = result.folder
    decisions = list(csv.DictReader(open(folder / "decisions.csv", encoding="utf-8")))
    assert {d["ticker"] for d in decisions} == {"NVDA", "AAPL"}
    assert {d["date"] for d in decisions} <= real_dates
    metrics = json.loads((folder / "metrics.json").read_text())
    assert {"NVDA", "AAPL"} <= set(metrics) and metrics["NVDA"][TEAM]["decisions"] == len(
        [d for d in decisions if d["ticker"] == "NVDA"])
    manifest = json.loads((folder / "manifest.json").read_text())
    for ticker, steps in manifest["steps"][TEAM].items():
        for date, step in steps.items():
            assert ticker in ("NVDA", "AAPL") and date in real_dates
            report = (folder / step["results_path"] / "report.md").read_text() if not step["results_path"].startswith(
                "/") else open(f"{step['results_path']}/report.md", encoding="utf-8").read()
            assert ticker in report and step["blind"]["alias"] not in report
            assert date in report
    log = next((folder / "blind" / "real_memory").rglob("trading_memory.md")).read_text()
    assert "NVDA" in log and "2024-06-03" in log
    # the desk's own log never got a blind run's entry
    assert not (ta_home / "memory" / "trading_memory.md").exists() or "X" not in (
        ta_home / "memory" / "trading_memory.md").read_text()
    # the same backtest, not blind, is another one (its own id and folder)
    assert Backtest(BacktestSpec.make("NVDA,AAPL", START, END, every=5), cfg).folder != folder


def test_a_blind_cli_run_through_the_fake_server_leaks_nothing_and_shows_real_names(ta_home, capsys):
    from tradingagents.cli import main

    name_words = name_variants(get_provider({}).identity("AAPL")["name"])
    with FakeOpenAIServer() as server:
        code = main(["AAPL", "2024-06-03", "--blind", "--provider", "openai_compatible", "--backend-url",
                     server.base_url, "--quick-model", "fake-quick", "--deep-model", "fake-deep", "-q"])
        requests = list(server.requests)
    out = capsys.readouterr().out
    assert code == 0 and len(requests) > 5
    for body in requests:
        text = _all_text(body.get("messages")) + _all_text(body.get("tools"))
        for word in ("AAPL", *name_words):
            assert not re.search(r"(?<![A-Za-z0-9])" + re.escape(word) + r"(?![A-Za-z0-9])", text, re.I), word
        assert "2024-" not in text and not re.search(r"(?<![\d.])202[34](?![\d])", text)
    report_line = next(line for line in out.splitlines() if line.startswith("Report: "))
    report = open(report_line.split(": ", 1)[1], encoding="utf-8").read()  # the report file (issue 39.7)
    assert report.startswith("# AAPL — 2024-06-03")
    # saved where every run is, in real terms, marked blind; the alias is named nowhere in it
    assert report_line.endswith(str(ta_home / "results" / "AAPL" / "2024-06-03" / "report.md"))
    assert alias_for("AAPL") not in report and "Blind run" in report


def test_prices_quoted_in_news_and_posts_are_rebased_like_the_prices(ta_home):
    base = get_provider({})
    blind = BlindMap.make(["NVDA"], START, base)
    provider = get_provider({"blind": blind.to_dict()})
    alias = blind.alias("NVDA")
    factor = provider.price_factor("NVDA")
    pattern = re.compile(r"closed at (\d+\.\d+)")
    real_posts = [p["text"] for p in base.social("NVDA", END, 30) if pattern.search(p["text"])]
    seen_posts = [p["text"] for p in provider.social(alias, blind.blind_date(END), 30) if pattern.search(p["text"])]
    assert real_posts and len(real_posts) == len(seen_posts)
    for real, seen in zip(real_posts, seen_posts, strict=True):
        assert float(pattern.search(seen).group(1)) == pytest.approx(float(pattern.search(real).group(1)) * factor,
                                                                     abs=0.006)


def test_a_blind_batch_names_no_ticker_of_the_watchlist_in_any_prompt(ta_home, capsys):
    from tradingagents.cli import main

    base = get_provider({})
    words = ["NVDA", "AAPL", *name_variants(base.identity("NVDA")["name"]), *name_variants(base.identity("AAPL")["name"])]
    with FakeOpenAIServer() as server:
        code = main(["batch", "NVDA,AAPL", "2024-06-03", "--blind", "--provider", "openai_compatible",
                     "--backend-url", server.base_url, "--quick-model", "fake-quick", "--deep-model", "fake-deep",
                     "--json", "-q"])
        requests = list(server.requests)
    rows = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["ticker"] for r in rows] == ["NVDA", "AAPL"] and all(r["status"] == "done" for r in rows)
    for body in requests:
        text = _all_text(body.get("messages")) + _all_text(body.get("tools"))
        for word in words:
            assert not re.search(r"(?<![A-Za-z0-9])" + re.escape(word) + r"(?![A-Za-z0-9])", text, re.I), word
        assert "2024-" not in text
    for r in rows:
        assert open(f"{r['results_path']}/report.md", encoding="utf-8").read().startswith(f"# {r['ticker']} — 2024-06-03")
    assert main(["batch", "NVDA,AAPL", "2024-06-03", "--blind", "--max-cost", "1"]) == 2
