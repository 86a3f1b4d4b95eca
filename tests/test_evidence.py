"""The evidence ledger (``meta["evidence"]``): every figure of a run's texts found in the run's data or not."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fake_openai import FakeOpenAIServer, agentic_responder
from tradingagents import team
from tradingagents.graph.evidence import Pool, check_text, data_values, figures_in, ledger, totals
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"


def _values(text: str, **kw) -> list[str]:
    return [f.written for f in figures_in(text, **kw)]


def test_what_is_a_figure_and_what_is_not():
    text = ("1. On 2024-05-10 (Q1 2024) NVDA closed at $54.69, its 50-day average is 57.66 and the 7 days to "
            "it saw RSI 47.0; revenue $105.7B, margin 15.2%, 16 posts, a 1-3 months horizon, close_50_sma, "
            "round 2, after 1 round of debate, 经过 3 轮辩论, 7203.T")
    assert _values(text, ticker="7203.T") == ["$54.69", "57.66", "47.0", "$105.7B", "15.2%", "16"]
    [amount] = figures_in("revenue of $188.9B")
    assert amount.value == pytest.approx(188.9e9) and amount.tolerance == pytest.approx(0.05e9)


@pytest.mark.parametrize("written, data", [
    ("$188.9B", "Total Revenue,188912345678"), ("69.5", "rsi: 69.49"), ("16.0%", "profit_margin: 0.160"),
    ("16.0%", "net margin 16.04%"), ("down 3.2%", "change: -3.2%"), ("301.7M shares", "volume 301668254"),
])
def test_found_at_the_printed_precision_units_normalised(written, data):
    record, _ = check_text(f"The figure is {written}.", Pool(data_values(data, "t", {})))
    assert (record["figures"], record["found"]) == (1, 1), record


@pytest.mark.parametrize("written, data", [
    ("69.6", "rsi: 69.49"), ("16.1%", "profit_margin: 0.160"), ("2", "current_ratio: 1.70"),
    ("$188.8B", "Total Revenue,188912345678"), ("16.0%", "atr: 16.0"),
])
def test_not_found_otherwise(written, data):
    record, _ = check_text(f"The figure is {written}.", Pool(data_values(data, "t", {})))
    assert record["found"] == 0 and record["not_found"][0]["figure"] == written


def test_a_derived_figure_is_found_when_its_inputs_are_and_the_arithmetic_holds():
    pool = Pool(data_values("2024-02-09,45.07\n2024-05-10,54.69", "get_stock_data", {"symbol": "NVDA"}))
    record, _ = check_text("The price rose from 45.07 to 54.69, up 21.3%.", pool)
    assert record["found"] == 3 and record["sources"][-1]["tool"] == "derived"
    wrong, _ = check_text("The price rose from 45.07 to 54.69, up 25.3%.", pool)
    assert wrong["found"] == 2 and wrong["not_found"][0]["figure"] == "25.3%"


def test_a_later_text_finds_what_an_earlier_text_found_and_proposals_are_not_figures():
    state = {"company_of_interest": "NVDA", "market_report": "The close was 54.69.",
             "tool_answers": [{"tool": "get_stock_data", "args": {"symbol": "NVDA"}, "text": "2024-05-10,54.69"}],
             "investment_plan": "Buy: the close of 54.69 and a target of 61.00.",
             "final_trade_decision": "**Rating**: Buy\nEntry 54.50, target 61.00, stop 50.25, size 2%."}
    evidence = ledger(state, decision={"entry_price": 54.5, "price_target": 61.0, "stop_loss": 50.25,
                                       "position_size": "2% of the book"})
    assert evidence["market_report"]["sources"][0]["tool"] == "get_stock_data"
    assert evidence["investment_plan"]["found"] == 1 and evidence["investment_plan"]["not_found"][0]["figure"] == "61.00"
    assert evidence["final_trade_decision"]["figures"] == 0  # entry, target, stop and size are the decision's own


@pytest.mark.parametrize("ticker", ["NVDA", "AAPL"])
def test_offline_every_analyst_figure_is_found_and_nearly_every_figure(ticker):
    graph = TradingAgentsGraph(config={"checkpoint_enabled": False})
    graph.propagate(ticker, DATE)
    evidence = graph.last_run["record"]["meta"]["evidence"]
    keys = {*team.REPORT_KEYS, "investment_plan", "trader_investment_plan", "final_trade_decision"}
    assert keys <= set(evidence) and any(k.startswith("invest:Bull") for k in evidence)
    for key in team.REPORT_KEYS:
        assert evidence[key]["figures"] > 0 and evidence[key]["not_found"] == [], (key, evidence[key]["not_found"])
        assert all(s["tool"].startswith("get_") and s["excerpt"] for s in evidence[key]["sources"])
    found, figures = totals(evidence)
    assert figures > 100 and found >= 0.98 * figures


def test_the_demo_walks_market_only_run_has_every_figure_found():
    """The presenter's run (the market analyst alone): the judges' "after 1 round of debate" is a count of the
    debate, not a figure the data must hold; nothing on the card may show as untraced."""
    graph = TradingAgentsGraph(["market"], config={"checkpoint_enabled": False})
    graph.propagate("NVDA", DATE)
    evidence = graph.last_run["record"]["meta"]["evidence"]
    assert {k: v["not_found"] for k, v in evidence.items() if v["not_found"]} == {}


# ---------------------------------------------------------------- a model that invents, a model that copies
LABELS = ["close", "volume", "prior close", "high", "low", "first close", "momentum gauge", "prior gauge",
          "turnover", "open"]
INVENTED = ["87.3", "4.87", "$312.45", "912.4M", "41.6%", "12.84", "$733.10", "2.71", "$1.27T", "118.06"]


def _market_report_call(body: dict) -> bool:
    messages = body.get("messages") or []
    return (str(messages[0].get("content") or "").startswith("You are the Market Analyst")
            and any(m.get("role") == "tool" for m in messages))


def _copied(body: dict) -> list[str]:
    """Ten figures copied from the tool answers in the request, rounded, with units."""
    texts = [str(m.get("content")) for m in body["messages"] if m.get("role") == "tool"]
    rows = [line.split(",") for text in texts for line in text.splitlines()
            if re.match(r"\d{4}-\d{2}-\d{2},", line)]
    indicator = [float(m.group(1)) for text in texts for m in re.finditer(r"^\d{4}-\d{2}-\d{2}: (-?\d+\.\d+)$", text, re.M)]
    last, prev, first = rows[-1], rows[-2], rows[0]
    o, h, lo, c, v = (float(x) for x in last[1:6])
    return [f"${c:.1f}", f"{v / 1e6:.1f}M", f"{float(prev[4]):.2f}", f"${h:.2f}", f"{lo:.1f}",
            f"${float(first[4]):.2f}", f"{indicator[-1]:.1f}", f"{indicator[-2]:.2f}", f"{v / 1e3:.0f}K", f"${o:.2f}"]


def _run_with_report(write) -> dict:
    def responder(body):
        if _market_report_call(body):
            figures = write(body)
            sentences = [f"The {label} reads {fig}." for label, fig in zip(LABELS, figures, strict=True)]
            return {"content": "## Market\n\n" + " ".join(sentences), "finish_reason": "stop"}
        return agentic_responder(body)

    with FakeOpenAIServer(responder) as server:
        graph = TradingAgentsGraph(["market"], config=server.llm_config(checkpoint_enabled=False))
        graph.propagate("NVDA", DATE)
    return graph.last_run["record"]["meta"]["evidence"]["market_report"]


def test_a_report_quoting_invented_figures_has_them_not_found():
    record = _run_with_report(lambda body: INVENTED)
    assert record["figures"] == 10 and len(record["not_found"]) >= 9, record
    assert {n["figure"] for n in record["not_found"]} <= set(INVENTED)
    assert all(n["sentence"].startswith("The ") for n in record["not_found"])


def test_a_report_quoting_figures_copied_from_its_tool_answers_has_them_all_found():
    copied: list[str] = []

    def write(body):
        copied[:] = _copied(body)
        return copied

    record = _run_with_report(write)
    assert record["figures"] == 10 and record["found"] == 10 and record["not_found"] == [], record
    assert [s["figure"] for s in record["sources"]] == copied
    assert {s["tool"] for s in record["sources"]} == {"get_stock_data", "get_indicators"}
    assert all(s["args"] and s["excerpt"] for s in record["sources"])


# ---------------------------------------------------------------- where a reader sees it
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A saved offline run of two analysts whose market report is made to quote one invented figure."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRADINGAGENTS_HOME", str(tmp_path_factory.mktemp("evidence_home")))
        graph = TradingAgentsGraph(["market", "news"], config={"checkpoint_enabled": False})
        state, rating = graph.propagate("NVDA", DATE)
        state = {**state, "market_report": state["market_report"] + "\n\nThe RSI printed 96.4 at the open."}
        meta = dict(graph.last_run["record"]["meta"])
        meta["evidence"] = ledger(state, meta.get("debate_turns") or [], meta.get("decision"))
        yield state, rating, meta, graph.config["home"]


def test_the_report_show_card_and_handout_carry_the_counts_and_the_figures_not_found(saved, monkeypatch, capsys):
    from studio import export
    from tradingagents import cli
    from tradingagents.i18n import translator
    from tradingagents.storage.files_runs import render_report_markdown

    state, rating, meta, home = saved
    found, figures = totals(meta["evidence"])
    assert figures - found >= 1
    line = f"Evidence: {found} of {figures} figures found in the data"
    md = render_report_markdown(state, rating, meta)
    assert f"- {line}" in md and "## Figures not found in the data" in md
    assert "- **Market**: 96.4 — The RSI printed 96.4 at the open." in md
    zh = render_report_markdown(state, rating, meta, t=translator("zh"))
    assert f"证据：{figures} 个数字中有 {found} 个在数据中找到" in zh and "## 数据中未找到的数字" in zh
    assert line in export.card_html(export.card(state, meta, rating), t=None, meta=meta)
    written = []
    monkeypatch.setattr(export._Handout, "text", lambda self, text, size=9, gray=0: written.append(text))
    export.report_pdf(state, rating, meta)
    assert line in written  # page 1; the list of figures not found is in the body (the Markdown above)
    # python -m tradingagents show prints the saved report, counts included
    monkeypatch.setenv("TRADINGAGENTS_HOME", home)
    assert cli.main(["show", "NVDA", DATE]) == 0
    out = capsys.readouterr().out
    saved_found, saved_figures = totals(_saved_meta(home)["evidence"])
    assert f"Evidence: {saved_found} of {saved_figures} figures found in the data" in out


def _saved_meta(home: str) -> dict:
    from tradingagents.storage import load_run

    return load_run({"home": home}, "NVDA", DATE)["meta"]


def test_a_report_tab_marks_the_figures_not_found_and_lists_every_source(saved):
    from studio import export

    state, _, meta, _ = saved
    record = export.evidence_of(meta, "market_report")
    marked = export.marked_text(state["market_report"], record, "NVDA")
    assert ":orange-background[96.4]" in marked and marked.count(":orange-background[") == 1
    rows = export.source_rows(record)
    assert len(rows) == record["figures"]
    assert {"Figure", "Source", "Arguments", "Excerpt"} == set(rows[0])
    assert any(r["Source"] == "get_indicators" and "indicator=" in r["Arguments"] for r in rows)
    assert rows[-1] == {"Figure": "96.4", "Source": "not found in the data", "Arguments": "",
                        "Excerpt": "The RSI printed 96.4 at the open."}
    assert export.marked_text("no record", None) == "no record"


def test_a_crowded_pool_returns_the_same_source_as_checking_each_value_in_turn():
    # the pool checks crowded buckets and the scan for large amounts as arrays: the first source that
    # matches, in bucket order then arrival order, must be the one a value-by-value scan finds
    import random

    from tradingagents.graph.evidence import Figure, Source, _matches

    rng = random.Random(5)
    sources = []
    for i in range(1500):
        kind = rng.random()
        value = (rng.uniform(0, 2) if kind < 0.5 else rng.uniform(0, 300) if kind < 0.8
                 else rng.choice([1, -1]) * rng.uniform(1e6, 5e9))
        value = round(value, rng.choice([0, 1, 2, 4]))
        sources.append(Source(value, f"tool{i}", {}, "", percent=rng.random() < 0.3, whole=value == int(value)))
    pool = Pool(sources)

    def by_hand(figure):
        want = abs(figure.value)
        lo, hi = int(max(0.0, want - figure.tolerance)) - 1, int(want + figure.tolerance) + 1
        groups = pool._by_bucket
        order = ([s for b in range(lo, hi + 1) for s in groups.get(b, ())] if hi - lo < 64
                 else [*groups.get(int(want), ()), *(s for g in groups.values() for s in g)])
        return next((s for s in order if _matches(figure, s.value, s.percent, s.whole)), None)

    hits = 0
    for _ in range(600):
        pick = rng.choice(sources)
        decimals = rng.choice([0, 1, 2])
        scale = rng.choice([1.0, 1.0, 1e6, 1e9])
        value = round(pick.value * rng.choice([1, 100, 1.001]) / scale, decimals) * scale
        percent = rng.random() < 0.4
        figure = Figure(str(value), value, 0.5 * 10 ** -decimals * scale, percent, 0, 1,
                        count=decimals == 0 and scale == 1.0 and not percent)
        got = pool.find(figure)
        assert got is by_hand(figure)
        hits += got is not None
    assert 100 < hits < 600  # both found and not found were checked


def test_the_excerpt_of_a_value_is_its_stripped_line_cut_to_the_excerpt_length():
    from tradingagents.graph.evidence import EXCERPT_CHARS, _line_at

    long_line = "  close " + " ".join(f"{i}.5" for i in range(400)) + " \t"
    text = "\n".join(["head 1.25", "", "   short 7.5 line  ", long_line, "tail 99.5"])
    values = data_values(text, "t", {})
    by_hand = []
    for v in values:
        pos = text.index(v.excerpt.rstrip("…")[:20])
        assert v.excerpt == _line_at(text, pos)  # the same excerpt as a search from the value's position
        line = next(ln.strip() for ln in text.split("\n") if v.excerpt.rstrip("…") in ln.strip())
        by_hand.append(line if len(line) <= EXCERPT_CHARS else line[:EXCERPT_CHARS - 1] + "…")
    assert [v.excerpt for v in values] == by_hand
    assert sum(v.excerpt.endswith("…") for v in values) == 400 and len(values) == 403


# the characters a figure is made of and what stands around one: signs, currencies, spaces, points, commas,
# units, names, dates, times, and digits of other scripts (\d is any Unicode digit)
_PIECES = [*"0123456789", *"0123456789", *"-+−$€£¥ \t\n.,%KMBTkmbt_xQ:", "million", "bn", "FY", "2024-05-10",
           "12:30", "１２", "٣", "close_50_sma"]


@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_figure_scan_finds_exactly_what_the_pattern_finds_at_every_position(text):
    # the ledger skips to a few characters before each digit instead of trying the pattern everywhere: it
    # must find the very matches (their spans and groups) a full scan finds, e.g. the sign of "-$ .5"
    from tradingagents.graph.evidence import FIGURE_RE, _figure_matches

    fast = [(m.span(), m.groupdict()) for m in _figure_matches(text)]
    assert fast == [(m.span(), m.groupdict()) for m in FIGURE_RE.finditer(text)]


def test_the_furthest_lead_before_a_digit_is_found():
    from tradingagents.graph.evidence import _figure_matches

    assert [m.group(0) for m in _figure_matches("so -$ .5 and +€ 1,234.5M")] == ["-$ .5", "+€ 1,234.5M"]


def test_the_values_of_a_text_keep_their_own_copy_of_the_tool_arguments():
    args = {"symbol": "NVDA"}
    values = data_values("close 54.69\nvolume 1,200", "get_stock_data", args)
    args["symbol"] = "AMD"  # the caller's dict changes later: the sources still say where they came from
    assert [(v.value, v.args, v.excerpt) for v in values] == [(54.69, {"symbol": "NVDA"}, "close 54.69"),
                                                              (1200.0, {"symbol": "NVDA"}, "volume 1,200")]
