"""History and Compare on real saved runs: readable times and labels, filters, one-click links, the
rating ladder, the configuration difference, usage and "run again with changes"."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from studio import compare
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.rating import parse_rating
from tradingagents.storage import list_runs, load_run
from tradingagents.storage.files_runs import save_run

ROOT = Path(__file__).resolve().parents[2]
NEW_PAGES = (
    '    st.Page("pages/history.py", title="History", icon=":material/history:", url_path="history"),\n'
    '    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),\n'
)


@pytest.fixture
def entry(tmp_path) -> str:
    """app.py itself, with the History and Compare pages registered if app.py does not list them yet."""
    src = (ROOT / "app.py").read_text(encoding="utf-8")
    if "pages/history.py" not in src:
        src = src.replace("\n]\n\npage = st.navigation", "\n" + NEW_PAGES.rstrip("\n") + "\n]\n\npage = st.navigation", 1)
    assert "pages/history.py" in src
    src = src.replace('"pages/', f'"{ROOT}/pages/')
    path = tmp_path / "app_entry.py"
    path.write_text(src, encoding="utf-8")
    return str(path)


def _open(entry: str, page: str, **params) -> AppTest:
    at = AppTest.from_file(entry, default_timeout=300)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(str(ROOT / "pages" / f"{page}.py")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.fixture
def runs(ta_home):
    base = resolve_config({})
    TradingAgentsGraph(config=base).propagate("NVDA", "2024-05-10")
    two = resolve_config({"max_debate_rounds": 2})
    TradingAgentsGraph(config=two, selected_analysts=["market", "news"]).propagate("AAPL", "2024-06-10")
    # a run saved from an OpenAI-compatible server (the engine's own save, a copied state)
    data = load_run(base, "NVDA", "2024-05-10")
    cfg = resolve_config({"llm_provider": "openai_compatible", "backend_url": "http://127.0.0.1:9/v1",
                          "quick_think_llm": "qwen-small", "deep_think_llm": "qwen-large"})
    meta = {**data["meta"], "llm_provider": "openai_compatible", "quick_think_llm": "qwen-small",
            "deep_think_llm": "qwen-large", "config": dict(cfg)}
    save_run(cfg, {**data["state"], "trade_date": "2024-07-10"}, "Sell", meta)
    return base


def test_history_shows_readable_times_and_labels_and_filters(runs, entry):
    at = _open(entry, "history")
    table = at.dataframe[0].value
    assert len(table) == 3
    shown = table.to_csv()
    assert "openai_compatible" not in shown and "OpenAI-compatible server · qwen-small / qwen-large" in shown
    assert "Offline engine (no LLM)" in shown
    # every run used the demo data: said once above the table, not on each row
    assert "Data" not in table.columns
    assert any(str(c.value).startswith("All shown runs: Data Demo market (synthetic)") for c in at.caption)
    assert not re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}", shown)  # no microsecond ISO
    today = dt.datetime.now(dt.UTC)
    assert all(re.fullmatch(rf"{today.day} {today:%b %Y} \d\d:\d\d", s) for s in table["Saved"])
    opened = {(r.Ticker, r.Date): r.Open for r in table.itertuples()}
    assert opened[("AAPL", "2024-06-10")] == "./?ticker=AAPL&date=2024-06-10&lang=en"
    # filters: ticker, rating, provider, model, dates
    at.text_input(key="hist_ticker").input("nv").run()
    assert set(at.dataframe[0].value["Ticker"]) == {"NVDA"}
    at.text_input(key="hist_ticker").input("").run()
    at.multiselect(key="hist_providers").set_value(["openai_compatible"]).run()
    assert list(at.dataframe[0].value["Date"]) == ["2024-07-10"]
    assert at.multiselect(key="hist_providers").format_func("openai_compatible") == "OpenAI-compatible server"
    at.multiselect(key="hist_providers").set_value([]).run()
    at.multiselect(key="hist_models").set_value(["qwen-large"]).run()
    assert list(at.dataframe[0].value["Date"]) == ["2024-07-10"]
    at.multiselect(key="hist_models").set_value([]).run()
    at.date_input(key="hist_dates").set_value((dt.date(2024, 6, 1), dt.date(2024, 6, 30))).run()
    assert list(at.dataframe[0].value["Ticker"]) == ["AAPL"]
    at.date_input(key="hist_dates").set_value((dt.date(2024, 5, 1), dt.date(2024, 7, 31))).run()
    at.multiselect(key="hist_ratings").set_value(["Sell"]).run()
    assert list(at.dataframe[0].value["Date"]) == ["2024-07-10"]


def test_compare_shows_ladder_config_difference_usage_and_rerun_link(runs, entry):
    at = _open(entry, "compare", a="NVDA|2024-05-10", b="AAPL|2024-06-10")
    assert at.selectbox(key="cmp_a").value == "NVDA|2024-05-10" and at.selectbox(key="cmp_b").value == "AAPL|2024-06-10"
    shown = "\n".join(str(h.value) for h in at.html)
    a, b = load_run(runs, "NVDA", "2024-05-10"), load_run(runs, "AAPL", "2024-06-10")
    rungs = re.findall(r'data-role="([^"]+)"></div>|data-role="([^"]+)">[^<]*</div><div>(.*?)</div><div>(.*?)</div>',
                       shown)
    names = [r[1] for r in rungs if r[1]]
    assert names == ["Research Manager", "Trader", "Portfolio Manager"]
    pills = re.findall(r'data-rating="(\w+)"', shown.split('data-testid="ta-ladder"', 1)[1])
    expected = [parse_rating(a["state"]["investment_plan"], default=None), None,
                parse_rating(a["state"]["trader_investment_plan"], default=None), None, a["rating"], b["rating"]]
    expected[1] = parse_rating(b["state"]["investment_plan"], default=None)
    expected[3] = parse_rating(b["state"]["trader_investment_plan"], default=None)
    assert pills == [p for p in expected if p]
    card = at.dataframe[0].value  # the decision card, both runs side by side
    assert list(card[""]) == ["Rating", "Action", "Conviction", "Entry", "Price target", "Stop", "Reward:risk",
                              "Position size", "Stated horizon", "Scored over"]
    assert list(card.iloc[0, 1:]) == [a["rating"], b["rating"]]
    assert list(card.iloc[-1, 1:]) == ["5 trading days", "5 trading days"]
    assert "None" not in card.to_string() and "nan" not in card.to_string()
    diff = at.dataframe[1].value
    settings = set(diff["Setting"])
    # settings by their labels, not their config keys
    assert {"Debate rounds", "Analysts"} <= settings
    assert not any("_" in s for s in settings), settings
    # only settings a user chose: no run facts or outcomes (missing_data, log_note) listed as settings
    assert not settings & {compare.setting_label(k) for k in (
        "home", "results_dir", "thread_id", "elapsed_s", "debate_turns", "missing_data", "log_note", "warnings",
        "memory_used", "decision", "session_note")}
    analysts = diff[diff["Setting"] == "Analysts"].iloc[0]
    assert list(analysts.iloc[1:]) == ["Market Analyst, Sentiment Analyst, News Analyst, Fundamentals Analyst",
                                       "Market Analyst, News Analyst"]
    usage = at.dataframe[2].value
    assert list(usage[""]) == ["Run time", "LLM calls", "Tool calls", "Tokens in", "Tokens out", "Cost"]
    assert f"{a['meta']['usage']['llm_calls']:,}" in list(usage.iloc[:, 1])
    links = [el.proto.url for el in at.get("link_button")]
    pre = [u for u in links if u.startswith("./?prefill=")]
    doc = json.loads(unquote(parse_qs(urlsplit(pre[1]).query, keep_blank_values=True)["prefill"][0]))
    assert doc == {"ticker": "AAPL", "date": "2024-06-10", "analysts": ["market", "news"], "max_debate_rounds": 2,
                   "max_risk_discuss_rounds": 1, "llm_provider": "offline", "data_vendor": "demo"}
    assert [t.label for t in at.tabs] == ["Market Analyst", "Sentiment Analyst", "News Analyst",
                                          "Fundamentals Analyst", "Research Manager", "Trader", "Portfolio Manager"]
    # B ran without the sentiment analyst: its side of that tab says so
    assert "_Not produced in this run._" in [m.value for m in at.tabs[1].markdown]


def test_units_readable_time_labels_ladder_and_diff(runs):
    assert compare.readable_time("2026-12-01T09:41:07.123456+00:00") == "1 Dec 2026 09:41"
    assert compare.readable_time("2026-12-01T10:41:07+01:00") == "1 Dec 2026 09:41"
    assert compare.readable_time("") == "—" and compare.readable_time(None) == "—"
    assert compare.provider_label("openai_compatible") == "OpenAI-compatible server"
    assert compare.provider_label("offline") == "Offline engine (no LLM)"
    rows = compare.history_rows(list_runs(runs), {})
    assert [r.ticker for r in compare.filter_rows(rows, text="aap")] == ["AAPL"]
    assert compare.filter_rows(rows, start=dt.date(2025, 1, 1)) == []
    ladder = compare.rating_ladder({"investment_plan": "Rating: Overweight", "trader_investment_plan": ""}, "Sell")
    assert ladder == [("Research Manager", "Overweight"), ("Trader", None), ("Portfolio Manager", "Sell")]
    diff = compare.config_diff({"llm_provider": "offline", "max_debate_rounds": 1, "home": "/a"},
                               {"llm_provider": "openai_compatible", "max_debate_rounds": 1, "home": "/b"})
    assert diff == [("llm_provider", "Offline engine (no LLM)", "OpenAI-compatible server")]
    link = compare.prefill_link({"analysts": ["news"], "max_debate_rounds": 3}, "BRK-B", "2024-01-05")
    assert link.startswith("./?prefill=%7B") and " " not in link
    assert json.loads(unquote(link.split("=", 1)[1]))["ticker"] == "BRK-B"


def test_history_lists_a_reanalysed_session_twice_and_compare_opens_the_earlier_run(ta_home, entry):
    base = resolve_config({})
    TradingAgentsGraph(config=base, selected_analysts=["market"]).propagate("NVDA", "2024-05-10")
    first = load_run(base, "NVDA", "2024-05-10")["rating"]
    save_run(base, {**load_run(base, "NVDA", "2024-05-10")["state"]}, "Sell", {"analysts": ["market"]})
    at = _open(entry, "history")
    table = at.dataframe[0].value
    assert sorted(table["Version"]) == ["current", "earlier #1"] and set(table["Date"]) == {"2024-05-10"}
    at = _open(entry, "compare", a="NVDA|2024-05-10|1", b="NVDA|2024-05-10")
    assert at.selectbox(key="cmp_a").value == "NVDA|2024-05-10|1"
    assert "earlier #1" in at.selectbox(key="cmp_a").format_func("NVDA|2024-05-10|1")
    shown = "\n".join(str(h.value) for h in at.html)
    assert first in shown and "Sell" in shown


def test_history_offers_the_exports_without_building_them(runs, entry, monkeypatch):
    """A PDF takes over a second: the page hands each download to Streamlit as a callable, built on the click
    (tests/browser/test_demo_walk.py clicks one); the saved run itself is read at once, so a damaged one is
    still said on the page."""
    from studio import export

    built = []
    for name in ("report_pdf", "report_html", "report_markdown"):
        real = getattr(export, name)
        monkeypatch.setattr(export, name, lambda *a, _real=real, _name=name, **k: built.append(_name) or _real(*a, **k))
    at = _open(entry, "history")
    labels = [el.proto.label for el in at.get("download_button")]
    assert labels[-3:] == ["Markdown", "HTML", "PDF"] and built == [], (labels, built)
