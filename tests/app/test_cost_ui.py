"""Cost in the UI (AppTest, real engine): the Run page's live and final cost, the estimate next to
Start, the sidebar's Model prices editor (session only), History's cost column and Compare's cost."""

from __future__ import annotations

import datetime as dt

import pytest
from streamlit.testing.v1 import AppTest

from studio import ui
from studio.runs import ProgressFolder
from studio.ui import get_registry
from tests.app.apptest_utils import APP, PAGES, new_app, run_until, start_offline_run, texts
from tests.fake_openai import FakeOpenAIServer
from tradingagents import estimates, pricing
from tradingagents.config import resolve_config
from tradingagents.errors import ConfigError
from tradingagents.graph.events import RunEvent
from tradingagents.storage import load_run, save_run


@pytest.fixture(autouse=True)
def _fresh_server_memory():
    get_registry.clear()
    yield


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _use_server(at, url: str, quick: str, deep: str):
    at.selectbox(key="set_provider").set_value("openai_compatible").run()
    at.text_input(key="set_base_url").input(url)
    at.text_input(key="set_quick").input(quick)
    at.text_input(key="set_deep").input(deep)
    return at.run()


def test_the_live_board_follows_the_running_cost_of_the_llm_usage_events():
    folder = ProgressFolder()
    folder.feed([RunEvent("llm_usage", ts=1.0,
                          data={"llm_calls": 2, "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.0125})])
    assert folder.snapshot(now=2.0).cost_usd == pytest.approx(0.0125)
    folder.feed([RunEvent("llm_usage", ts=1.5,
                          data={"llm_calls": 3, "input_tokens": 20, "output_tokens": 9, "cost_usd": None})])
    assert folder.snapshot(now=2.0).cost_usd is None  # a model without a price: no figure, never $0
    assert pricing.cost_text(None) == "—"
    assert pricing.cost_text(0.0125) == "$0.0125"
    assert pricing.cost_text(12.345) == "$12.35"
    assert pricing.cost_text(None, offline=True) == "$0.00 · offline engine"


def test_an_offline_run_costs_nothing_live_and_when_finished_with_a_table_per_agent(ta_home):
    at = new_app("run")
    assert "Estimated cost" not in texts(at)  # the offline engine is free: no estimate to show
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(120)
    at.run()
    at.toggle(key=f"details_{handle.run_id}").set_value(True).run()  # the board as it ended
    assert _metric(at, "Cost") == "$0.00 · offline engine"
    assert any(e.label.startswith("Cost of this run: $0.00 · offline engine") for e in at.expander)
    table = next(d.value for d in at.dataframe if "Agent" in d.value.columns)
    by_agent = handle.meta["usage"]["by_agent"]
    assert set(table["Agent"]) == set(by_agent) and "Market Analyst" in set(table["Agent"])
    assert set(table["Cost"]) == {"$0.00 · offline engine"}


def test_a_paid_model_shows_an_estimate_then_its_priced_cost_from_the_sessions_prices(ta_home):
    with FakeOpenAIServer(latency_s=0.15) as server:
        at = _use_server(new_app("run"), server.base_url, "fake-quick", "fake-deep")
        assert "Estimated cost: —" in texts(at)  # no price for these models yet
        at.session_state[ui.KEY_PRICES_OPEN] = True  # the Model prices expander opened
        at.run()
        # this session's prices, typed into the sidebar's editor as two new rows
        at.session_state[ui.KEY_PRICES_EDITOR] = {"edited_rows": {}, "deleted_rows": [], "added_rows": [
            {"model": "fake-quick", "$/1M input": 1.0, "$/1M output": 2.0},
            {"model": "fake-deep", "$/1M input": 3.0, "$/1M output": 4.0}]}
        at.run()
        cfg = {**ui.resolve_config({"llm_provider": "openai_compatible", "quick_think_llm": "fake-quick",
                                    "deep_think_llm": "fake-deep",
                                    "llm_pricing": {"fake-quick": [1, 2], "fake-deep": [3, 4]}})}
        want = pricing.cost_text(estimates.estimate_run_cost(cfg)["cost_usd"])
        assert f"Estimated cost: about {want} (a typical run" in texts(at)
        start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
        handle = get_registry().get(at.query_params["run"])
        # live: the board's cost follows the llm_usage events, a priced dollar figure
        run_until(at, lambda a: any(m.label == "Cost" and m.value.startswith("$") and m.value != "$0.0000"
                                    for m in a.metric) or handle.done)
        assert not handle.done, "the run ended before the live board showed a cost"
        assert handle.wait(120), handle.error
        at.run()
        usage = handle.meta["usage"]
        assert usage["cost_usd"] > 0
        assert usage["cost_usd"] == pytest.approx(sum(usage["by_agent"].values()))
        assert {n["model"] for n in usage["by_node"].values()} <= {"fake-quick", "fake-deep"}
        assert handle.meta["config"]["llm_pricing"]["fake-deep"] == [3.0, 4.0] or \
            tuple(handle.meta["config"]["llm_pricing"]["fake-deep"]) == (3.0, 4.0)
        assert any(e.label == f"Cost of this run: {pricing.cost_text(usage['cost_usd'])}" for e in at.expander)
        # the next estimate comes from this past run of the same settings
        assert f"about {pricing.cost_text(usage['cost_usd'])} (the mean of 1 past run" in texts(at)


def test_price_rows_become_a_validated_override_and_a_bad_row_says_what_to_fix():
    base = pricing.pricing_table(resolve_config())
    rows = [{"model": m, "$/1M input": p[0], "$/1M output": p[1]} for m, p in base.items()]
    assert ui.prices_from_rows(rows, base) == {}  # nothing edited: no override
    rows[0] = {**rows[0], "$/1M input": 9.0}
    rows.append({"model": "my-model", "$/1M input": 1, "$/1M output": 2})
    rows.append({"model": None, "$/1M input": None, "$/1M output": None})  # an empty new row is ignored
    assert ui.prices_from_rows(rows, base) == {rows[0]["model"]: (9.0, base[rows[0]["model"]][1]),
                                              "my-model": (1.0, 2.0)}
    for bad, says in (({"model": "x", "$/1M input": -1, "$/1M output": 2}, "from 0 to 1,000,000"),
                      ({"model": "x", "$/1M input": 1, "$/1M output": None}, "give both prices"),
                      ({"model": "", "$/1M input": 1, "$/1M output": 2}, "give the model's name")):
        with pytest.raises(ConfigError, match=says):
            ui.prices_from_rows([bad], base)


def test_the_sidebar_editor_sets_the_sessions_prices_and_reset_returns_to_list_prices(ta_home):
    at = new_app("run")
    assert not at.data_editor  # the table is built once the Model prices expander is opened
    at.session_state[ui.KEY_PRICES_OPEN] = True
    at.run()
    editor = at.data_editor(key=ui.KEY_PRICES_EDITOR)
    models = list(editor.value["model"])
    assert models == list(pricing.pricing_table(resolve_config()))
    i = models.index("gpt-4o-mini")
    at.session_state[ui.KEY_PRICES_EDITOR] = {"edited_rows": {i: {"$/1M input": 0.5}}, "added_rows": [],
                                              "deleted_rows": []}
    at.run()
    assert at.session_state[ui.KEY_PRICING] == {"gpt-4o-mini": (0.5, 0.6)}
    assert "Edited in this session: gpt-4o-mini." in texts(at)
    # closed, the edits stay in force; opened again, the table starts from them
    at.session_state[ui.KEY_PRICES_OPEN] = False
    at.run()
    assert not at.data_editor and at.session_state[ui.KEY_PRICING] == {"gpt-4o-mini": (0.5, 0.6)}
    assert "Edited in this session: gpt-4o-mini." in texts(at)
    at.session_state[ui.KEY_PRICES_OPEN] = True
    at.run()
    assert list(at.data_editor(key=ui.KEY_PRICES_EDITOR).value["$/1M input"])[i] == 0.5
    assert at.session_state[ui.KEY_PRICING] == {"gpt-4o-mini": (0.5, 0.6)}
    # a bad row: a clear message, the last valid prices stay
    at.session_state[ui.KEY_PRICES_EDITOR] = {"edited_rows": {i: {"$/1M output": None}}, "added_rows": [],
                                              "deleted_rows": []}
    at.run()
    assert any("give both prices" in e.value for e in at.error)
    assert at.session_state[ui.KEY_PRICING] == {"gpt-4o-mini": (0.5, 0.6)}
    at.button(key="prices_reset").click().run()
    assert ui.KEY_PRICING not in at.session_state
    assert not list((ta_home).rglob("*pric*"))  # never written to a file


def test_the_history_and_compare_pages_show_each_runs_cost(ta_home):
    at = new_app("run")
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(120)
    data = load_run({}, "NVDA", "2024-05-10")
    paid = resolve_config({"llm_provider": "openai", "quick_think_llm": "gpt-4o-mini", "deep_think_llm": "gpt-4o"})
    for ticker, cost in (("AAPL", 0.0421), ("MSFT", None)):  # a priced run, and one with an unpriced model
        meta = {**data["meta"], "llm_provider": "openai", "quick_think_llm": "gpt-4o-mini", "deep_think_llm": "gpt-4o",
                "config": dict(paid), "usage": {**data["meta"]["usage"], "cost_usd": cost}}
        save_run(paid, {**data["state"], "company_of_interest": ticker}, "Hold", meta)
    hist = new_app("history")
    table = next(d.value for d in hist.dataframe if "Cost" in d.value.columns)
    assert dict(zip(table["Ticker"], table["Cost"], strict=True)) == {
        "NVDA": "$0.00 · offline engine", "AAPL": "$0.0421", "MSFT": "—"}
    cmp = AppTest.from_file(APP, default_timeout=300)
    cmp.query_params["a"], cmp.query_params["b"] = "AAPL|2024-05-10", "NVDA|2024-05-10"
    cmp.run()
    cmp.switch_page(PAGES["compare"]).run()
    assert not cmp.exception, [e.value for e in cmp.exception]
    usage = next(d.value for d in cmp.dataframe if "" in d.value.columns and "Cost" in set(d.value[""]))
    cost_row = usage[usage[""] == "Cost"].iloc[0]
    assert list(cost_row)[1:] == ["$0.0421", "$0.00 · offline engine"]
