"""AppTest of the Memory log and Memories pages: pagination, problems shown, charts' data, safe situations."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from tests.app.apptest_utils import form_button, new_app, texts
from tradingagents.agents.utils.memory import SEPARATOR, FinancialSituationMemory, TradingMemoryLog
from tradingagents.config import resolve_config

TICKERS = ("NVDA", "AAPL", "MSFT")


def settled_block(date, ticker, rating="Buy", raw=0.02, alpha=0.01, decision="Go long."):
    return (f"[{date} | {ticker} | {rating} | {raw * 100:+.1f}% | {alpha * 100:+.1f}% | 5d]\n\nDECISION:\n"
            f"{decision}\n\nREFLECTION:\nA lesson.\n\n<!-- exact raw={raw!r} alpha={alpha!r} -->")


def pending_block(date, ticker, rating="Hold", decision="Wait."):
    return f"[{date} | {ticker} | {rating} | pending]\n\nDECISION:\n{decision}"


def write_log(blocks: list[str]) -> Path:
    path = Path(resolve_config()["memory_log_path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(b + SEPARATOR for b in blocks), encoding="utf-8")
    return path


def day(i: int) -> str:
    import datetime as dt

    return (dt.date(2020, 1, 1) + dt.timedelta(days=i)).isoformat()


def many_blocks(n: int) -> list[str]:
    out = []
    for i in range(n):
        ticker = TICKERS[i % 3]
        if i % 4 == 3:
            out.append(pending_block(day(i), ticker))
        else:
            out.append(settled_block(day(i), ticker, ("Buy", "Sell", "Hold")[i % 3], 0.01 * (i % 5 - 2),
                                     0.005 * (i % 7 - 3)))
    return out


def entry_labels(at) -> list[str]:
    """The Memory log's entries as their labels show them (each entry is a <details> whose <summary> is
    its label, all in one HTML element), in page order, unescaped."""
    return [html.unescape(m) for h in at.html
            for m in re.findall(r'<details class="ta-entry"><summary>(.*?)</summary>', str(h.value))]


expanders = entry_labels


def log_table(at):
    """The Memory log page's table (one HTML table of text cells) as a DataFrame of its cells, unescaped."""
    import pandas as pd

    source = next(str(h.value) for h in at.html if 'class="ta-log-table"' in str(h.value))
    head = re.search(r"<thead>(.*?)</thead>", source, re.S).group(1)
    cells = [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
             for row in re.findall(r"<tr>(.*?)</tr>", source.split("</thead>", 1)[1], re.S)]
    return pd.DataFrame(cells, columns=[html.unescape(c) for c in re.findall(r"<th[^>]*>(.*?)</th>", head, re.S)])


def caption_with(at, part: str) -> str:
    return next(str(c.value) for c in at.caption if part in str(c.value))


# ------------------------------------------------------------------------------------------ memory log
def test_memory_log_paginates_newest_first_and_pages_through(ta_home):
    write_log(many_blocks(120))
    at = new_app("memory_log")
    assert not at.exception, [e.value for e in at.exception]
    assert at.metric[0].value == "120"
    assert len(expanders(at)) == 50 and len(log_table(at)) == 50
    assert "Page 1 of 3 · decisions 1–50 of 120" in caption_with(at, "Page ")
    assert expanders(at)[0].startswith(day(119)) and expanders(at)[49].startswith(day(70))
    at.number_input(key="log_page").set_value(3).run()
    assert len(expanders(at)) == 20 and expanders(at)[-1].startswith(day(0))
    assert "Page 3 of 3 · decisions 101–120 of 120" in caption_with(at, "Page ")
    at.selectbox(key="log_page_size").set_value(25).run()  # a new page size starts at page 1
    assert len(expanders(at)) == 25 and "Page 1 of 5" in caption_with(at, "Page ")
    at.selectbox(key="log_page_size").set_value(100).run()
    assert len(expanders(at)) == 100 and list(log_table(at)["date"])[:2] == [day(119), day(118)]


def test_memory_log_filters_apply_before_pagination_and_counts_follow(ta_home):
    write_log(many_blocks(120))
    at = new_app("memory_log")
    at.number_input(key="log_page").set_value(2).run()
    at.multiselect(key="log_tickers").set_value(["AAPL"]).run()  # 40 AAPL decisions: back to page 1
    assert at.metric[0].value == "40"
    assert "40 of the 120 decisions" in caption_with(at, "match the filters")
    assert "Page 1 of 1 · decisions 1–40 of 40" in caption_with(at, "Page ")
    assert len(expanders(at)) == 40 and all(" · AAPL · " in e for e in expanders(at))
    at.segmented_control(key="log_status").set_value("pending").run()
    pending = [i for i in range(120) if TICKERS[i % 3] == "AAPL" and i % 4 == 3]
    assert at.metric[0].value == str(len(pending)) and at.metric[2].value == "0"
    assert [e.split(" · ")[0] for e in expanders(at)] == [day(i) for i in reversed(pending)]
    at.segmented_control(key="log_status").set_value("settled").run()
    table = log_table(at)
    assert set(table["status"]) == {"settled"} and set(table["ticker"]) == {"AAPL"}


def test_memory_log_shows_dashes_never_none_and_the_benchmark_return(ta_home):
    write_log([settled_block("2024-05-10", "NVDA", "Buy", 0.05, 0.02), pending_block("2024-06-10", "NVDA")])
    at = new_app("memory_log")
    table = log_table(at).set_index("date")
    assert "None" not in table.to_string() and "nan" not in table.to_string().lower()
    assert table.loc["2024-06-10", "stock alpha"] == "—" and table.loc["2024-06-10", "entry"] == "—"
    # without a logged benchmark return it is raw − alpha, the definition of alpha
    assert table.loc["2024-05-10", "benchmark return"] == "+3.00%"
    assert table.loc["2024-05-10", "raw return"] == "+5.00%" and table.loc["2024-05-10", "stock alpha"] == "+2.00%"
    assert "alpha = raw return − benchmark return" in texts(at)


def test_memory_log_rereads_the_file_after_a_write_and_not_otherwise(ta_home, monkeypatch):
    path = write_log(many_blocks(10))
    at = new_app("memory_log")
    assert at.metric[0].value == "10"
    calls = []
    real = TradingMemoryLog.load_summary
    monkeypatch.setattr(TradingMemoryLog, "load_summary", lambda self, **kw: calls.append(1) or real(self, **kw))
    at.run()
    assert calls == [] and at.metric[0].value == "10"  # unchanged file: parsed result reused
    TradingMemoryLog(resolve_config()).store_decision("TSLA", "2024-07-01", "New one.", rating="Buy")
    at.run()
    assert calls == [1] and at.metric[0].value == "11"
    assert path.exists()


def test_memory_log_shows_its_problems_with_what_to_do(ta_home):
    good = settled_block("2024-05-10", "NVDA")
    half = "[2024-05-11 | AAPL | Buy | pend"  # a half-written entry
    bad = "[2024-05-12 | MSFT | Buy | +1.0% | +0.5% | 5d]\n\nDECISION:\nno reflection section"
    write_log([good, half, bad])
    log = TradingMemoryLog(resolve_config())
    log.load_entries()
    assert len(log.problems) == 2
    at = new_app("memory_log")
    warning = next(w.value for w in at.warning if "could not be read" in w.value)
    assert warning.startswith("2 block(s)") and "nothing was deleted" in warning and "To fix" in warning
    listed = [str(t.value) for t in at.text]
    assert any("AAPL" in t for t in listed) and any("MSFT" in t for t in listed)
    assert at.metric[0].value == "1"


def test_a_damaged_separator_is_reported_not_silently_merged(ta_home):
    path = write_log([pending_block("2024-05-10", "NVDA"), pending_block("2024-05-13", "AAPL")])
    text = path.read_text()
    path.write_text(text.replace("ENTRY_END", "ENTRY_ENX", 1))  # one changed byte in the first separator
    log = TradingMemoryLog(resolve_config())
    entries = log.load_entries()
    assert len(entries) == 2 or log.problems, (entries, log.problems)


def test_memory_log_renders_model_text_safely(ta_home):
    hostile = "**Rating**: Buy\n\n<script>alert(1)</script> [x](javascript:alert(1)) between $120 and $130"
    write_log([pending_block("2024-05-10", "NVDA", "Buy", hostile)])
    at = new_app("memory_log")
    shown = "\n".join(str(h.value) for h in at.html)
    assert "<strong>Rating</strong>: Buy" in shown and "between $120 and $130" in shown
    assert "<script>" not in shown and "javascript:" not in shown


def test_memory_log_charts_are_per_ticker_and_equity_with_a_plain_hit_rate(ta_home):
    write_log([settled_block("2024-05-10", "NVDA", "Buy", 0.05, 0.02),
               settled_block("2024-05-17", "AAPL", "Sell", -0.03, -0.01),
               settled_block("2024-05-24", "NVDA", "Buy", 0.01, -0.005)])
    at = new_app("memory_log")
    assert not at.exception, [e.value for e in at.exception]
    picker = at.segmented_control(key="log_chart")
    assert list(picker.options) == ["Compounded alpha per ticker", "Equity vs benchmark",
                                    "Hit rate by rating"]
    # one chart at a time: only the picked one is built and sent to the browser
    assert picker.value == "alpha" and len(at.get("plotly_chart")) == 1
    shown = texts(at)
    assert "never combined" in shown and "no day counts twice" in shown
    assert "Growth of 1 from following the settled decisions" not in shown
    at.segmented_control(key="log_chart").set_value("equity").run()
    assert len(at.get("plotly_chart")) == 1 and "Growth of 1 from following the settled decisions" in texts(at)
    at.segmented_control(key="log_chart").set_value("hits").run()
    assert len(at.get("plotly_chart")) == 1 and "A hit is the reflections' own rule" in texts(at)
    stats = next(d.value for d in at.dataframe if "hit_rate" in d.value.columns)
    assert list(stats["rating"]) == ["Buy", "Sell"]


def test_memory_log_shows_the_calls_alpha_beside_the_stocks_and_says_what_memory_changed(ta_home):
    moved = ("**Rating**: Overweight\n\nOverweight on NVDA: the rating was moved from Hold to Overweight because the "
             "last Hold on NVDA missed a +3.0% alpha move and the signals lean the same way.")
    write_log([settled_block("2024-05-10", "AAPL", "Underweight", -0.03, -0.01),
               settled_block("2024-05-17", "NVDA", "Overweight", 0.04, 0.02, decision=moved),
               settled_block("2024-05-24", "NVDA", "Buy", 0.01, -0.005)])
    at = new_app("memory_log")
    assert not at.exception, [e.value for e in at.exception]
    table = log_table(at).set_index("date")
    # an Underweight on a stock that lagged by 1 % earned +1 %: the call's alpha, beside the stock's own
    assert (table.loc["2024-05-10", "call alpha"], table.loc["2024-05-10", "stock alpha"]) == ("+1.00%", "-1.00%")
    assert (table.loc["2024-05-24", "call alpha"], table.loc["2024-05-24", "stock alpha"]) == ("-0.50%", "-0.50%")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Average call alpha"] == "+0.83%" and metrics["Average stock alpha"] == "+0.17%"
    assert "2024-05-10 · AAPL · Underweight · call alpha +1.0% · stock alpha -1.0%" in expanders(at)
    # memory took the Overweight side a Hold would have missed: +2 points of alpha on that decision
    assert ("Memory changed 1 of the 3 settled decisions; on those it earned 2.00 points of alpha against the "
            "ratings the evidence alone gave.") in texts(at)
    at.segmented_control(key="log_chart").set_value("equity").run()
    assert "Underweight and Sell are flat (never short)" in texts(at)


def test_the_log_equity_follows_the_backtests_long_only_positions():
    from studio import charts
    from studio.memlog_view import long_only_equity

    rows = [{"date": "2024-05-10", "ticker": "NVDA", "rating": "Buy", "raw": 0.10, "alpha": 0.05, "holding": 5},
            {"date": "2024-05-17", "ticker": "NVDA", "rating": "Hold", "raw": 0.10, "alpha": 0.05, "holding": 5},
            {"date": "2024-05-24", "ticker": "NVDA", "rating": "Sell", "raw": -0.20, "alpha": -0.1, "holding": 5},
            {"date": "2024-05-31", "ticker": "NVDA", "rating": "Overweight", "raw": 0.10, "alpha": 0.0, "holding": 5},
            {"date": "2024-06-07", "ticker": "NVDA", "rating": "Underweight", "raw": 0.10, "alpha": 0.0,
             "holding": 5}]
    curve = long_only_equity(charts.log_frame(rows))
    # Buy 1.0, Hold keeps 1.0, Sell flat (not short: the fall costs nothing and earns nothing), Overweight 0.5,
    # Underweight flat
    assert list(curve["strategy"].round(6)) == [1.1, 1.21, 1.21, 1.2705, 1.2705]


# ------------------------------------------------------------------------------------------ memories
SEED = [
    ("In 2024 the RSI hit 70 while **institutional selling** rose in tech", "Lower gross exposure."),
    ("Rates fell and the dollar weakened", "Add duration."),
]


def test_memories_query_starts_empty_and_examples_fill_it(ta_home):
    FinancialSituationMemory("bull_memory", resolve_config()).add_situations(SEED)
    at = new_app("memories")
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_area(key="mem_query").value == ""
    assert any("click an example" in i.value for i in at.info)
    at.button(key="mem_example_0").click().run()
    assert at.text_area(key="mem_query").value.startswith("Institutional selling")
    assert "**#1** · score **1.00**" in texts(at)


def test_memories_show_words_not_numbers_and_render_situations_safely(ta_home):
    cfg = resolve_config()
    hostile = ("## Heading\n\n**institutional** selling <script>alert(1)</script> "
               "[click](javascript:alert(1)) at $120 and $130")
    FinancialSituationMemory("bull_memory", cfg).add_situations([*SEED, (hostile, "Be careful.")])
    at = new_app("memories")
    at.text_area(key="mem_query").input("In 2024 the RSI at 70 and institutional selling").run()
    line = next(m.value for m in at.markdown if str(m.value).startswith("**#1**"))
    assert "`rsi`" in line and "`institutional`" in line and "`selling`" in line
    for noise in ("`2024`", "`70`", "`the`", "`in`", "`and`"):
        assert noise not in line, line
    html_out = "\n".join(str(h.value) for h in at.html)
    assert "<strong><mark>institutional</mark> <mark>selling</mark></strong>" in html_out
    assert "<h2>Heading</h2>" in html_out and "<script>" not in html_out and "javascript:" not in html_out
    assert "$120 and $130" in html_out  # prices stay prices (no math rendering)


def test_memories_zero_score_is_not_a_match(ta_home):
    FinancialSituationMemory("bull_memory", resolve_config()).add_situations(SEED)
    at = new_app("memories")
    at.text_area(key="mem_query").input("zebra quokka").run()
    assert any("No memory matches these terms" in i.value for i in at.info)
    assert not any(str(m.value).startswith("**#") for m in at.markdown)


def test_memories_add_and_clear_confirm_and_counts_refresh(ta_home):
    cfg = resolve_config()
    FinancialSituationMemory("trader_memory", cfg).add_situations(SEED)
    at = new_app("memories")
    at.selectbox(key="mem_role").set_value("trader_memory").run()
    label = at.selectbox(key="mem_role").format_func("trader_memory")
    assert label.endswith("(2)")
    at.text_area(key="add_situation").input("Earnings beat with raised guidance")
    at.text_area(key="add_advice").input("Add on pullbacks.")
    form_button(at, "Add to memory").click().run()
    assert len(FinancialSituationMemory("trader_memory", cfg)) == 2  # nothing added before the confirmation
    form_button(at, "Yes, add it").click().run()
    assert len(FinancialSituationMemory("trader_memory", cfg)) == 3
    assert at.selectbox(key="mem_role").value == "trader_memory"
    assert at.selectbox(key="mem_role").format_func("trader_memory").endswith("(3)")
    assert any("Added to the" in s.value for s in at.success)
    # another writer adds one: the next rerun counts it
    FinancialSituationMemory("trader_memory", cfg).add_situations([("x y", "z")])
    at.run()
    assert at.selectbox(key="mem_role").format_func("trader_memory").endswith("(4)")
    form_button(at, "Clear this role's memory").click().run()
    form_button(at, "Cancel").click().run()
    assert len(FinancialSituationMemory("trader_memory", cfg)) == 4
    form_button(at, "Clear this role's memory").click().run()
    form_button(at, "Yes, clear it").click().run()
    assert len(FinancialSituationMemory("trader_memory", cfg)) == 0
    assert at.selectbox(key="mem_role").format_func("trader_memory").endswith("(0)")
    assert any("now empty" in s.value for s in at.success)


def test_memories_show_skipped_lines_with_what_to_do(ta_home):
    cfg = resolve_config()
    path = Path(cfg["memory_dir"]) / "bull_memory.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    good = json.dumps({"situation": "rates rising", "recommendation": "trim"})
    path.write_text(f"{good}\nnot json at all\n{json.dumps({'situation': 1})}\n", encoding="utf-8")
    at = new_app("memories")
    warning = next(w.value for w in at.warning if "could not be read" in w.value)
    assert warning.startswith("2 line(s)") and "To fix" in warning
    assert at.metric[0].value == "1"


def test_memory_log_draws_no_chart_of_a_big_log_until_one_is_picked(ta_home):
    # 5,000 settled decisions: the page opens with the table and the picker, and draws a chart on request
    write_log([settled_block(day(i // 3), TICKERS[i % 3], "Buy", 0.01, 0.001 * (i % 5 - 2)) for i in range(5000)])
    at = new_app("memory_log")
    assert not at.exception, [e.value for e in at.exception]
    assert at.metric[2].value == "5,000" and at.get("plotly_chart") == []
    assert at.segmented_control(key="log_chart").value is None
    assert "5,000 settled decisions: pick a chart above to draw it." in texts(at)
    at.segmented_control(key="log_chart").set_value("equity").run()
    assert len(at.get("plotly_chart")) == 1 and "pick a chart above" not in texts(at)


def test_memory_log_entries_open_on_their_decision_who_and_reflection(ta_home):
    # each entry is one closed <details>: its label, then (opened) the decision, who ran and settled it, the reflection
    meta = json.dumps({"by": "ann@desk.example", "settled_by": "bob@desk.example"})
    write_log([settled_block("2024-05-10", "NVDA", "Buy", 0.05, 0.02, decision="Go **long**.") + f"\n\n<!-- meta {meta} -->",
               pending_block("2024-06-10", "AAPL", decision="Wait.")])
    at = new_app("memory_log")
    assert not at.exception, [e.value for e in at.exception]
    assert entry_labels(at) == ["2024-06-10 · AAPL · Hold · pending", "2024-05-10 · NVDA · Buy · call alpha +2.0% · stock alpha +2.0%"]
    shown = "\n".join(str(h.value) for h in at.html)
    assert "<details open" not in shown
    nvda = shown[shown.index("2024-05-10 · NVDA"):]
    nvda = nvda[:nvda.index("</details>")]
    assert nvda.index("Go <strong>long</strong>.") < nvda.index("Run by ann@desk.example · settled by bob@desk.example") \
        < nvda.index("A lesson.")
    aapl = shown[shown.index("2024-06-10 · AAPL"):]
    aapl = aapl[:aapl.index("</details>")]
    assert "Wait." in aapl and "Reflection" not in aapl and "Run by" not in aapl


def test_memory_log_first_run_of_a_big_log_imports_no_pandas(ta_home):
    # pandas (~0.6 s to import) is for the charts only: a log too big to draw a chart by default opens without it
    # (and numpy, 0.1-0.2 s, is the BM25 memories' and the charts')
    import os
    import subprocess
    import sys

    write_log([settled_block(day(i // 3), TICKERS[i % 3], "Buy", 0.01, 0.001 * (i % 5 - 2)) for i in range(5000)]
              + [pending_block(day(2000), "TSLA")])
    code = ("import sys\nfrom streamlit.testing.v1 import AppTest\n"
            "at = AppTest.from_file('app.py', default_timeout=300)\n"
            "at.switch_page('pages/memory_log.py').run()\n"
            "assert not at.exception, [e.value for e in at.exception]\n"
            "rows = sum(str(h.value).count('<tr>') - 1 for h in at.html if 'ta-log-table' in str(h.value))\n"
            "print(at.metric[0].value, rows, 'pandas' in sys.modules, 'numpy' in sys.modules)\n")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TRADINGAGENTS_STUDIO_WARM_UP": "0"}  # the app's warm-up imports pandas on purpose
    out = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    # the first page's 50 rows, and neither pandas nor numpy (the BM25 memories') imported
    assert out.stdout.split()[-4:] == ["5,001", "50", "False", "False"], out.stdout


def test_what_memory_changed_is_read_from_the_decisions_in_either_language():
    from studio.memlog_view import Entry, memory_changes, memory_line
    from tradingagents.i18n import translator

    zh = translator("zh")
    said = zh("moderated from {before} to {after} because the last {rating} call on {ticker} lost ({alpha} alpha)",
              before="买入", after="增持", rating="买入", ticker="NVDA", alpha="-2.0%")
    entries = [Entry("2024-05-10", "NVDA", "Overweight", "settled", -0.01, []),
               Entry("2024-05-17", "NVDA", "Underweight", "settled", -0.02, []),
               Entry("2024-05-24", "NVDA", "Buy", "pending", None, [])]
    texts = {("2024-05-10", "NVDA"): (f"**Rating**: Overweight\n\n{said}；其余。", ""),
             ("2024-05-17", "NVDA"): ("moved from Hold to Underweight because the last Hold on NVDA missed a -3.0% "
                                      "alpha move and the signals lean the same way.", "")}
    changes = memory_changes(entries, texts)
    assert [(c.before, c.after) for c in changes] == [("Buy", "Overweight"), ("Hold", "Underweight")]
    # Buy → Overweight keeps the side (no alpha changes hands); Hold → Underweight on a -2 % alpha earns 2 points
    assert memory_line(changes, 2, translator("en")) == (
        "Memory changed 2 of the 2 settled decisions; on those it earned 2.00 points of alpha against the ratings "
        "the evidence alone gave.")
