"""The Run result's "Ask the team" and "Your call", and the Debates page's threads after a reload."""

from __future__ import annotations

import datetime as dt

from studio.ui import get_registry
from tests.app.apptest_utils import form_button, new_app, run_until, start_offline_run, texts
from tradingagents import storage
from tradingagents.agents.utils.memory import TradingMemoryLog


def test_ask_the_bear_and_record_your_call_on_the_result_then_see_the_thread_after_a_reload(ta_home):
    at = new_app("run")
    start_offline_run(at, "NVDA", dt.date(2024, 5, 10), analysts=["market"])
    handle = get_registry().get(at.query_params["run"])
    assert handle.wait(120)
    at.run()
    assert "Ask the team" in texts(at) and "Your call" in texts(at)

    # ask the Bear about a figure of its own turn
    [turn] = [t for t in handle.meta["debate_turns"] if t["role"] == "bear"]
    figure = next(w.strip(".,;:") for w in turn["text"].split() if any(c.isdigit() for c in w) and "." in w)
    next(s for s in at.selectbox if s.label == "Agent").set_value("bear")
    [box] = [i for i in at.text_input if i.label == "Your question"]
    box.input(f"Why {figure}?")
    form_button(at, "Ask").click()
    at.run()  # answered off the script thread; the page follows it until the saved thread shows the answer
    run_until(at, lambda a: "offline engine" in texts(a) and not [t for t in a.caption if "answering" in str(t.value)])
    [item] = storage.load_run(None, "NVDA", "2024-05-10")["meta"]["questions"]
    assert item["agent"] == "bear" and figure in item["answer"]
    shown = texts(at)
    assert f"Why {figure}?" in shown and "offline engine" in shown

    # your call beside the decision card, kept in the log beside the team's rating
    [rating] = [s for s in at.get("button_group") if "Your rating" in str(s.proto.label)]
    rating.set_value("Sell")
    [reason] = [a for a in at.text_area if a.label == "Reason"]
    reason.input("Earnings next week; keep it small.")
    form_button(at, "Record my call").click()
    at.run()
    [entry] = TradingMemoryLog(None).load_entries()
    assert entry["pm_decision"]["rating"] == "Sell" and entry["rating"] == handle.rating
    assert entry["pm_decision"]["reason"] == "Earnings next week; keep it small."
    assert "Change my call" in [b.label for b in at.button]

    # a reload: the Debates page of the saved run shows the thread
    again = new_app("debates")
    again.query_params["ticker"], again.query_params["date"] = "NVDA", "2024-05-10"
    again.run()
    shown = texts(again)
    assert f"Why {figure}?" in shown and figure in shown and "Exception" not in shown
