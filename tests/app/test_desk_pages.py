"""The desk's pages under AppTest: the Run page's order ticket and paper book, the Book page, the Schedules page."""

from __future__ import annotations

import datetime as dt

import pytest
from streamlit.testing.v1 import AppTest

from studio import desk_view
from tests.app.apptest_utils import APP, form_button, new_app, texts
from tradingagents import storage
from tradingagents.storage.book import import_book_csv

DATE = "2024-05-10"


@pytest.fixture
def nvda_run():
    """A book that holds AAPL with cash to spare, and a saved offline NVDA run (Overweight: a buy)."""
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    import_book_csv(None, "book.csv", text="ticker,shares,cost_basis\nAAPL,100,150\n", cash=1_000_000.0)
    graph = TradingAgentsGraph(config={"selected_analysts": ["market"], "analyst_execution": "sequential"})
    _state, rating = graph.propagate("NVDA", DATE)
    order = graph.last_run["record"]["meta"]["order"]
    assert rating == "Overweight" and order["side"] == "buy" and order["shares"] > 0
    return order


def test_the_run_page_offers_the_order_ticket_and_fills_the_paper_book(nvda_run):
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["ticker"], at.query_params["date"] = "NVDA", DATE
    at.run()
    assert not at.exception
    card = "".join(h.value for h in at.html)
    assert "Buy " + str(nvda_run["shares"]) + " NVDA" in card  # the card's Order row
    ticket = desk_view.order_ticket_csv([nvda_run]).splitlines()
    assert ticket[0].startswith("date,ticker,side,shares,price") and ticket[1].startswith(f"{DATE},NVDA,buy,")
    assert any("Order ticket" in str(b.proto.label) for b in at.get("download_button"))
    form_button(at, "Apply to the paper book").click().run()
    from tradingagents.desk.paper import load_paper

    paper = load_paper()
    assert [(f["ticker"], f["side"], f["shares"]) for f in paper["fills"]] == [("NVDA", "buy", nvda_run["shares"])]
    assert paper["positions"]["AAPL"] == 100  # the paper book started as a copy of the book
    # applying the same order twice is refused, and says so
    form_button(at, "Apply to the paper book").click().run()
    assert any("already in the paper book" in e.value for e in at.error)

    book = new_app("book")
    assert not book.exception
    text = texts(book)
    assert "AAPL" in str([df.value for df in book.dataframe]) and "limit per position 10.0%" in text
    assert "Paper book" in text and len(book.get("arrow_vega_lite_chart")) + len(book.get("vega_lite_chart")) >= 1


def test_the_book_page_without_a_book_says_how_to_import_one():
    at = new_app("book")
    assert not at.exception
    assert "No book yet" in texts(at)


def test_the_schedules_page_adds_a_job_and_shows_its_digest(monkeypatch):
    from tradingagents.desk.scheduler import run_due
    from tradingagents.desk.schedules import list_schedules

    storage.save_watchlist("morning", "NVDA")
    at = new_app("schedules")
    assert not at.exception and "No scheduled job yet" in texts(at)
    at.text_input(key="sched_name").input("morning")
    assert at.text_input(key="sched_watchlist").value == "@morning"  # the saved watchlist, offered first
    at.text_input(key="sched_webhook").input("http://127.0.0.1:9/hook").run()
    form_button(at, "Add the job").click().run()
    assert not at.exception
    (job,) = list_schedules()
    assert (job.name, job.watchlist, job.at, job.tz, job.days) == ("morning", "@morning", "07:30", "Europe/London",
                                                                    (0, 1, 2, 3, 4))
    monkeypatch.setattr("tradingagents.desk.senders.RETRY_BACKOFF_S", 0.01)
    with monkeypatch.context() as env:
        env.setenv("TRADINGAGENTS_SELECTED_ANALYSTS", "market")  # one analyst: seconds
        (report,) = run_due(None, dt.datetime.fromisoformat("2024-05-13T07:31+01:00"))
    assert report.status == "ran"
    at = new_app("schedules")
    text = texts(at)
    assert "Digest of morning" in text and "NVDA" in text
    assert any("Not sent by webhook to" in w.value for w in at.warning)  # the failed delivery is shown, the run kept
    at.button(key="sched_pause").click().run()
    assert list_schedules()[0].paused


def test_the_book_page_saves_an_edit_and_refuses_a_bad_one():
    from tradingagents.storage.audit import read_audit
    from tradingagents.storage.book import load_book

    import_book_csv(None, "book.csv", text="ticker,shares,cost_basis\nAAPL,100,150\n", cash=1000.0)
    at = new_app("book")
    at.number_input(key="edit_cash").set_value(2500.0)
    at.number_input(key="edit_max_weight").set_value(8.0)
    form_button(at, "Save the book").click().run()
    assert not at.exception
    book = load_book()
    assert (book.cash, book.max_weight, [p.ticker for p in book.positions]) == (2500.0, 0.08, ["AAPL"])
    assert [e["action"] for e in read_audit()] == ["book_import", "book_edit"]
    at.text_input(key="edit_currency").input("U$").run()
    form_button(at, "Save the book").click().run()
    assert any("three-letter code" in e.value for e in at.error) and load_book().currency == "USD"


def test_compare_puts_a_run_with_an_order_beside_one_without(nvda_run):
    from pathlib import Path

    from tradingagents.graph.trading_graph import TradingAgentsGraph
    from tradingagents.storage.desk import open_desk_docs

    open_desk_docs(None).update("book", lambda _old: None)  # the book is gone: the next run has no order
    graph = TradingAgentsGraph(config={"selected_analysts": ["market"], "analyst_execution": "sequential"})
    graph.propagate("AAPL", DATE)
    assert graph.last_run["record"]["meta"]["order"] is None
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["a"], at.query_params["b"] = f"NVDA|{DATE}", f"AAPL|{DATE}"
    at.run()
    at.switch_page(str(Path(APP).parent / "pages" / "compare.py")).run()
    assert not at.exception, [e.value for e in at.exception]
    card = at.dataframe[0].value
    assert list(card[""])[-1] == "Order" and list(card.iloc[-1, 1:])[1] == "—"
    assert "Buy " in list(card.iloc[-1, 1:])[0]
    assert "order" not in set(at.dataframe[1].value.get("Setting", []))  # an outcome, not a setting
