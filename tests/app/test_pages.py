"""AppTest of every page: empty home, an offline run to completion, settle, memory query, bad input."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.app.apptest_utils import form_button, new_app, run_until, start_offline_run, texts
from tradingagents import team
from tradingagents.agents.utils.memory import FinancialSituationMemory, TradingMemoryLog
from tradingagents.config import resolve_config
from tradingagents.rating import was_right

SEED = [
    ("Rising yields and strong dollar pressure on growth and EM assets",
     "Reduce long-duration growth exposure; hedge FX risk; increase defensive allocation."),
    ("Volatility spike with institutional selling in high-beta tech",
     "Lower gross exposure and tighten stop-loss thresholds."),
]


def _rating_shown(at) -> bool:
    return any('data-rating="' in h.value for h in at.html)


@pytest.mark.parametrize("page, expected", [
    ("run", "No saved run yet"),
    ("debates", "No debate to show yet"),
    ("memory_log", "The memory log is empty"),
    ("memories", "has no lessons yet"),
])
def test_every_page_renders_on_an_empty_home(page, expected, ta_home):
    at = new_app(page)
    assert not at.exception, [e.value for e in at.exception]
    shown = texts(at)
    assert expected in shown
    # the sidebar labels the embedded defaults; the home folder's path is not sidebar copy (issue 25)
    sidebar = "\n".join(str(h.value) for h in at.sidebar.html) + "\n".join(str(c.value) for c in at.sidebar.caption)
    assert "offline engine (no LLM)" in sidebar and "synthetic demo data" in sidebar
    assert str(ta_home) not in sidebar
    assert not any(ta_home.rglob("*.md")), "rendering an empty home must not create a log"


@pytest.mark.parametrize("page, title", [("run", "Run an analysis"), ("debates", "Debates"),
                                         ("memory_log", "Memory log"), ("memories", "Memories")])
def test_pages_folder_pages_run_inside_the_shared_frame_on_every_rerun(page, title):
    # AppTest resets Streamlit's pages/-folder switch on every run, so each rerun starts the way a
    # fresh server's first deep link does: Streamlit executes pages/<page>.py directly. The page
    # must still appear inside app.py's frame (sidebar settings), once, without an exception.
    at = new_app(page)
    for _ in range(2):
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert [t.value for t in at.title] == [title]
        assert at.sidebar.selectbox(key="set_provider").value == "offline"
        assert len(at.sidebar.selectbox) == 4  # provider, output language, data source and analyst data, drawn once


def test_bad_input_shows_inline_message_and_starts_nothing():
    at = new_app("run")
    from studio.ui import get_registry

    before = len(get_registry().list())
    start_offline_run(at, "NV/DA", dt.date(2024, 5, 10))
    assert any("not allowed" in e.value for e in at.error), texts(at)
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=[])
    assert any("Select at least one analyst" in e.value for e in at.error)
    assert len(get_registry().list()) == before
    assert not _rating_shown(at)


def test_offline_run_to_completion_then_debates_and_settle(ta_home):
    at = new_app("run")
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market", "news"])
    assert at.query_params.get("run"), "the run id goes into the URL so a refresh finds it"
    run_until(at, _rating_shown)
    assert not at.exception, [e.value for e in at.exception]
    badge = next(h.value for h in at.html if 'data-rating="' in h.value)
    rating = badge.split('data-rating="')[1].split('"')[0]
    assert rating in {"Buy", "Overweight", "Hold", "Underweight", "Sell"}
    labels = [t.label for t in at.tabs]
    assert "Market" in labels and "News" in labels and "Decision" in labels and "Sentiment" not in labels
    assert any(rating in m.value for m in at.markdown)  # the PM's decision text is shown
    assert (ta_home / "results" / "NVDA" / "2024-05-10" / "state.json").exists()
    # the past-runs list offers it for reopening
    assert "No saved run yet" not in texts(at)
    form_button(at, "Open saved run").click().run()
    assert "Saved run: NVDA as of 2024-05-10" in texts(at)
    assert sum('data-rating="' in h.value for h in at.html) == 2  # the live result and the reopened one

    # a fresh session that opens the URL with the run id (a browser refresh) shows the same result
    again = new_app("run")
    again.query_params["run"] = at.query_params["run"]
    again.run()
    assert _rating_shown(again)

    # Debates: both sides as chat bubbles with distinct avatars, and both judges' verdicts
    at.switch_page("pages/debates.py").run()
    names = [c.name for c in at.chat_message]
    assert "Bull Researcher" in names and "Bear Researcher" in names
    assert {"Aggressive Analyst", "Conservative Analyst", "Neutral Analyst"} <= set(names)
    avatars = {c.name: c.avatar for c in at.chat_message}
    assert avatars["Bull Researcher"] != avatars["Bear Researcher"]
    assert "Research Manager — verdict" in texts(at) and "Portfolio Manager — verdict" in texts(at)
    # the bubbles are the saved meta's debate_turns, one for one, for the current run and reopened
    from tradingagents.storage.files_runs import load_run

    saved = load_run(resolve_config(), "NVDA", "2024-05-10")
    recorded = [team.ROLES[t["role"]].node for t in saved["meta"]["debate_turns"]]
    assert names == recorded
    at.selectbox(key="debate_source").set_value(1).run()
    assert "saved:" not in texts(at) and [c.name for c in at.chat_message] == recorded
    at.selectbox(key="debate_source").set_value(0).run()
    # replay steps turn by turn
    at.segmented_control(key="debate_mode").set_value("Replay").run()
    assert len(at.chat_message) == 1
    form_button(at, "Next").click().run()
    assert len(at.chat_message) == 2
    form_button(at, "End").click().run()
    assert len(at.chat_message) == len(names)

    # Memory log: pending entry, then Settle now settles it with an alpha
    at.switch_page("pages/memory_log.py").run()
    assert "2024-05-10 · NVDA" in texts(at) and "pending" in texts(at)
    form_button(at, "Settle now").click().run()
    assert any("Settled 1 decision" in s.value for s in at.success), texts(at)
    entry = TradingMemoryLog(resolve_config()).load_entries()[0]
    assert not entry["pending"] and entry["alpha"] is not None and entry["reflection"]
    assert f"alpha {entry['alpha']:+.1%}" in texts(at)
    assert at.metric[0].value == "1" and at.metric[2].value == "1"  # one decision, settled
    at.segmented_control(key="log_status").set_value("pending").run()
    assert at.metric[0].value == "0" and "2024-05-10 · NVDA" not in texts(at)
    at.segmented_control(key="log_status").set_value("all").run()
    assert any(d.label.startswith("Download the raw log") for d in at.get("download_button"))
    # the role memories learned from it: counts per role on the Memories page
    at.switch_page("pages/memories.py").run()
    assert [m.value for m in at.metric] == ["1"] * 5


def test_memories_query_add_and_clear():
    cfg = resolve_config()
    FinancialSituationMemory("bull_memory", cfg).add_situations(SEED)
    at = new_app("memories")
    assert [m.value for m in at.metric][0] == "2"
    at.text_area(key="mem_query").input("Institutional selling increases in tech while rates continue rising")
    at.slider(key="mem_n").set_value(2).run()
    shown = texts(at)
    first = shown.index("**#1** · score **1.00**")
    assert "institutional" in shown[first:first + 200] and "selling" in shown[first:first + 200]
    assert "<mark>institutional</mark>" in shown
    assert shown.index("Lower gross exposure") < shown.index("Reduce long-duration")
    # add a lesson (empty advice is refused)
    at.text_area(key="add_situation").input("Earnings beat with raised guidance")
    form_button(at, "Add to memory").click().run()
    assert any("Both the situation and the advice" in e.value for e in at.error)
    at.text_area(key="add_situation").input("Earnings beat with raised guidance")
    at.text_area(key="add_advice").input("Add on pullbacks.")
    form_button(at, "Add to memory").click().run()
    assert len(FinancialSituationMemory("bull_memory", cfg)) == 2  # adding asks first, too
    form_button(at, "Yes, add it").click().run()
    assert len(FinancialSituationMemory("bull_memory", cfg)) == 3
    # clear asks first; only the confirmation clears
    form_button(at, "Clear this role's memory").click().run()
    assert len(FinancialSituationMemory("bull_memory", cfg)) == 3
    form_button(at, "Yes, clear it").click().run()
    assert len(FinancialSituationMemory("bull_memory", cfg)) == 0
    assert any("now empty" in s.value for s in at.success)


def test_failed_run_shows_its_error_and_resume(ta_home):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    at = new_app("run")
    at.selectbox(key="set_provider").set_value("openai_compatible").run()
    at.text_input(key="set_base_url").input(f"http://127.0.0.1:{port}/v1")
    at.run()
    start_offline_run(at, "MSFT", dt.date(2024, 5, 10), analysts=["market"])
    run_until(at, lambda a: any("The run failed" in e.value for e in a.error), timeout=90)
    assert "MSFT as of 2024-05-10 — failed" in texts(at)
    resume = form_button(at, "Resume")
    resume.click().run()
    # resumed: it runs again (and fails again the same way: the server is still down)
    run_until(at, lambda a: any("The run failed" in e.value for e in a.error), timeout=90)
    from studio.ui import get_registry

    assert get_registry().get(at.query_params["run"]).attempts == 2
    assert not _rating_shown(at)


def test_analysts_in_parallel_toggle_reaches_the_engine():
    at = new_app("run")
    at.toggle(key="form_parallel").set_value(True)
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market", "news"])
    from studio.ui import get_registry

    handle = get_registry().get(at.query_params["run"])
    assert handle.config["analyst_execution"] == "parallel"
    run_until(at, _rating_shown)


def test_debates_page_follows_a_live_run():
    from studio.ui import get_registry
    from tests.fake_openai import FakeOpenAIServer

    with FakeOpenAIServer(latency_s=0.25) as server:
        at = new_app("run")
        at.selectbox(key="set_provider").set_value("openai_compatible").run()
        at.text_input(key="set_base_url").input(server.base_url)
        at.run()
        start_offline_run(at, "AMD", dt.date(2024, 5, 10), analysts=["market"])
        handle = get_registry().get(at.query_params["run"])
        at.switch_page("pages/debates.py").run()
        assert "Current run: AMD" in at.selectbox(key="debate_source").format_func(0)
        seen_live = run_until(at, lambda a: len(a.chat_message) >= 1 and handle.status == "running", timeout=60)
        assert "Live: the debate fills in" in texts(seen_live)
        assert at.chat_message[0].name == "Bull Researcher"
        assert handle.wait(120) and handle.status == "finished"
        at.run()
        names = {c.name for c in at.chat_message}
        assert {"Bull Researcher", "Bear Researcher", "Neutral Analyst"} <= names
        assert "Live:" not in texts(at)


def test_run_page_board_is_the_plan_of_run_started():
    at = new_app("run")
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["news"])
    run_until(at, _rating_shown)
    at.toggle(key=f"details_{at.query_params['run']}").set_value(True).run()
    board = next(h.value for h in at.html if 'class="ta-board"' in h.value)
    shown = [part.split('"', 1)[0] for part in board.split('data-agent="')[1:]]
    assert shown == [agent for group in team.plan(["news"]) for agent in group["agents"]]
    assert 'data-status="done"' in board and 'data-status="pending"' not in board


def _settled_block(date, ticker, rating, raw, alpha):
    return (f"[{date} | {ticker} | {rating} | {raw * 100:+.1f}% | {alpha * 100:+.1f}% | 5d]\n\nDECISION:\n"
            f"**Rating**: {rating}\n\nREFLECTION:\nA lesson.\n\n<!-- exact raw={raw!r} alpha={alpha!r} -->")


def test_memory_log_counts_hits_exactly_as_rating_was_right(ta_home):
    # AAPL 2024-06-10 Overweight: raw -0.9 %, alpha +0.004 % (the tag shows +0.0 %): right by was_right
    entries = [("2024-06-10", "AAPL", "Overweight", -0.009, 0.00004),
               ("2024-06-17", "AAPL", "Overweight", 0.004, -0.00004),
               ("2024-06-24", "AAPL", "Hold", 0.01, 0.02)]
    log = Path(resolve_config()["memory_log_path"])
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(_settled_block(*e) + "\n\n<!-- ENTRY_END -->\n\n" for e in entries))
    at = new_app("memory_log")
    assert not at.exception, [e.value for e in at.exception]
    at.segmented_control(key="log_chart").set_value("hits").run()  # one chart at a time: the hit rate's
    stats = next(d.value for d in at.dataframe if "hit_rate" in d.value.columns).set_index("rating")
    for rating in ("Overweight", "Hold"):
        calls = [was_right(r, a) for _, _, r, _, a in entries if r == rating]
        assert stats.loc[rating, "hit_rate"] == pytest.approx(100 * sum(calls) / len(calls))
    assert stats.loc["Overweight", "hit_rate"] == pytest.approx(50.0)  # AAPL 06-10 a hit, 06-17 a miss
    assert "2024-06-10 · AAPL · Overweight · call alpha +0.0% · stock alpha +0.0%" in texts(at)
    # a Hold earns nothing whatever the stock did: the call's alpha beside the stock's (the log's tag)
    assert "2024-06-24 · AAPL · Hold · call alpha +0.0% · stock alpha +2.0%" in texts(at)


def test_settle_now_settles_what_is_due_and_says_why_the_rest_is_pending(ta_home, monkeypatch):
    from studio.jobs import JobRegistry
    from tradingagents.graph import trading_graph

    # one decision whose window has closed (a real offline run), one from the last weekday
    reg = JobRegistry()
    assert reg.wait(reg.start_run("NVDA", "2024-05-10", ["market"])).status == "finished"
    day = dt.date.today() - dt.timedelta(days=1)
    while day.weekday() >= 5:
        day -= dt.timedelta(days=1)
    recent = day.isoformat()
    log = Path(resolve_config()["memory_log_path"])
    log.write_text(log.read_text() + f"[{recent} | NVDA | Hold | pending]\n\nDECISION:\n**Rating**: Hold"
                   "\n\n<!-- ENTRY_END -->\n\n")
    at = new_app("memory_log")

    def no_graph(*_a, **_k):
        raise AssertionError("Settle now must not build the agent graph")

    monkeypatch.setattr(trading_graph.TradingAgentsGraph, "__init__", no_graph)
    form_button(at, "Settle now").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Settled 1 decision" in s.value for s in at.success), texts(at)
    assert any("1 decision(s) still pending" in w.value for w in at.warning)
    pending = next(d.value for d in at.dataframe if "why" in d.value.columns)
    assert list(pending["date"]) == [recent] and list(pending["ticker"]) == ["NVDA"]
    assert pending["why"][0].startswith("window closes on "), pending["why"][0]
    settled = next(d.value for d in at.dataframe if "benchmark" in d.value.columns)
    assert list(settled["date"]) == ["2024-05-10"] and list(settled["benchmark"]) == ["SPY"]
    entries = {e["date"]: e for e in TradingMemoryLog(resolve_config()).load_entries()}
    assert entries[recent]["pending"] and not entries["2024-05-10"]["pending"]


def test_a_bad_environment_variable_stops_every_page_with_a_plain_message(ta_home, monkeypatch):
    monkeypatch.setenv("TRADINGAGENTS_LLM_PRICING", "{not json")
    for page in ("run", "memory_log", "backtest"):
        at = new_app(page)
        assert not at.exception, at.exception
        shown = " ".join(e.value for e in at.error)
        assert "TRADINGAGENTS_LLM_PRICING" in shown and "cannot start" in shown, shown
