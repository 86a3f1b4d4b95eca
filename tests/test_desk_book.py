"""The desk's book: CSV import, `book import/show`, order sizing, and decisions that know the holding."""

from __future__ import annotations

import json

import pytest

from tests.fake_openai import fake_openai  # noqa: F401
from tradingagents.book import Book, Position, book_from_doc, order_text, parse_csv, size_order
from tradingagents.cli import main
from tradingagents.errors import ValidationError
from tradingagents.i18n import translator

DATE = "2024-05-10"


# ---------------------------------------------------------------------------- CSV
def test_a_brokers_csv_is_read_with_extra_columns_ignored_and_a_ticker_twice_merged():
    text = ("Account,Ticker,Shares,Cost Basis,Currency\n"
            "A1,nvda,100,90.5,USD\n"
            "A1,AAPL,\"1,000\",150,USD\n"
            "\n"
            "A2,NVDA,100,110.5,USD\n")
    positions = {p.ticker: p for p in parse_csv(text)}
    assert set(positions) == {"NVDA", "AAPL"}
    assert positions["NVDA"].shares == 200 and positions["NVDA"].cost_basis == pytest.approx(100.5)
    assert positions["AAPL"].shares == 1000


def test_bad_rows_are_refused_with_their_line_numbers_and_nothing_is_imported():
    text = "ticker,shares,cost_basis\nNVDA,100,90\nAAPL,lots,150\nMSFT,-5,300\nGOOG,10,120\n"
    with pytest.raises(ValidationError) as err:
        parse_csv(text, "book.csv")
    message = str(err.value)
    assert "book.csv has 2 row(s)" in message and "line 3" in message and "line 4" in message
    assert "line 2" not in message and "line 5" not in message
    with pytest.raises(ValidationError, match="no column cost_basis"):
        parse_csv("ticker,shares\nNVDA,1\n")


# ---------------------------------------------------------------------------- sizing
def _book(shares: float, price: float, cash: float, **limits) -> Book:
    return book_from_doc({"positions": [{"ticker": "NVDA", "shares": shares, "cost_basis": 100.0}] if shares else [],
                          "cash": cash, "currency": "USD", "limits": {"max_weight": 0.08, **limits}})


def test_a_buy_goes_towards_the_target_weight_within_the_limit():
    # NVDA 41,000 of a 1,000,000 book: 4.1%; the target is three quarters of 8%: 6%
    book = _book(410, 100.0, 959_000)
    order = size_order("Buy", book, "NVDA", 100.0)
    assert order["side"] == "buy" and order["shares"] == 190 and order["notional"] == 19_000
    assert order["weight_before"] == pytest.approx(0.041) and order["weight_after"] == pytest.approx(0.06)
    assert order["capped_by"] is None
    assert order_text(order) == "Buy 190 NVDA ≈ $19,000.00, 4.1% → 6.0% of the book; limit 8.0%"


def test_a_buy_on_a_position_at_its_limit_orders_nothing_and_says_it_is_capped():
    book = _book(800, 100.0, 920_000)  # exactly 8%
    order = size_order("Buy", book, "NVDA", 100.0)
    assert order == {**order, "side": "none", "shares": 0, "notional": 0.0, "capped_by": "max_weight"}
    assert order["weight_before"] == order["weight_after"] == pytest.approx(0.08)
    text = order_text(order)
    assert "No order for NVDA" in text and "capped by the limit per position" in text
    assert "封顶" in order_text(order, translator("zh"))


def test_overweight_goes_half_way_and_a_buy_past_the_target_stops_at_the_limit():
    book = _book(200, 100.0, 980_000)  # 2%
    assert size_order("Overweight", book, "NVDA", 100.0)["weight_after"] == pytest.approx(0.04)  # half way to 6%
    past = _book(700, 100.0, 930_000)  # 7%: past the target, a Buy adds up to the limit
    order = size_order("Buy", past, "NVDA", 100.0)
    assert order["shares"] == 100 and order["capped_by"] == "max_weight"


def test_cash_caps_a_buy_and_hold_orders_nothing():
    book = _book(0, 100.0, 1_000)  # a tiny book: cash is all there is
    rich = book.replace(positions=[Position("AAPL", 1000, 10.0)])  # 10,000 in AAPL, 1,000 cash
    order = size_order("Buy", rich, "NVDA", 100.0, {"AAPL": 10.0})
    assert order["side"] == "buy" and order["shares"] == 6 and order["capped_by"] is None  # 6% of 11,000
    rich = rich.replace(cash=300.0)
    order = size_order("Buy", rich, "NVDA", 100.0, {"AAPL": 10.0})
    assert order["shares"] == 3 and order["capped_by"] == "cash"
    assert size_order("Hold", rich, "NVDA", 100.0)["side"] == "none"


def test_underweight_trims_half_and_sell_exits_and_nothing_held_sells_nothing():
    book = _book(301, 100.0, 500_000)
    trim = size_order("Underweight", book, "NVDA", 100.0)
    assert trim["side"] == "sell" and trim["shares"] == 150
    exit_ = size_order("Sell", book, "NVDA", 100.0)
    assert exit_["shares"] == 301 and exit_["weight_after"] == 0
    assert size_order("Sell", book, "AAPL", 50.0)["side"] == "none"


def test_a_sector_limit_caps_a_buy():
    book = book_from_doc({"positions": [{"ticker": "AMD", "shares": 100, "cost_basis": 100}], "cash": 990_000,
                          "limits": {"max_weight": 0.08, "max_sector_weight": 0.03},
                          "sectors": {"AMD": "Technology"}})
    order = size_order("Buy", book, "NVDA", 100.0, {"AMD": 100.0}, sector="Technology")
    assert order["capped_by"] == "max_sector_weight" and order["weight_after"] == pytest.approx(0.02)


# ---------------------------------------------------------------------------- the command line
def test_book_import_and_show_json(tmp_path, capsys):
    csv_file = tmp_path / "positions.csv"
    csv_file.write_text("ticker,shares,cost_basis,note\nNVDA,350,95.5,core\nAAPL,100,150,\n", encoding="utf-8")
    assert main(["book", "import", str(csv_file), "--cash", "250000", "--currency", "usd", "--max-weight", "0.08"]) == 0
    capsys.readouterr()
    assert main(["book", "show", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == {"positions": [{"ticker": "NVDA", "shares": 350, "cost_basis": 95.5},
                                 {"ticker": "AAPL", "shares": 100, "cost_basis": 150.0}],
                   "cash": 250000.0, "currency": "USD", "limits": {"max_weight": 0.08}}
    # a second import keeps cash, currency and limits unless given
    csv_file.write_text("ticker,shares,cost_basis\nMSFT,10,300\n", encoding="utf-8")
    assert main(["book", "import", str(csv_file)]) == 0
    capsys.readouterr()
    main(["book", "show", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["positions"] == [{"ticker": "MSFT", "shares": 10, "cost_basis": 300.0}] and doc["cash"] == 250000.0
    from tradingagents.storage.audit import read_audit

    assert [e["action"] for e in read_audit()] == ["book_import", "book_import"]


def test_book_import_refuses_a_bad_file_with_exit_2_and_keeps_the_book(tmp_path, capsys):
    good = tmp_path / "good.csv"
    good.write_text("ticker,shares,cost_basis\nNVDA,10,100\n", encoding="utf-8")
    assert main(["book", "import", str(good)]) == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("ticker,shares,cost_basis\nAAPL,10,100\nMSFT,ten,300\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["book", "import", str(bad)]) == 2
    assert "line 3" in capsys.readouterr().err
    assert main(["book", "import", str(tmp_path / "missing.csv")]) == 2
    assert main(["book", "import", str(good), "--max-weight", "1.5"]) == 2
    capsys.readouterr()
    main(["book", "show", "--json"])
    assert json.loads(capsys.readouterr().out)["positions"] == [{"ticker": "NVDA", "shares": 10, "cost_basis": 100.0}]


# ---------------------------------------------------------------------------- decisions that know the book
def _nvda_close() -> float:
    from tradingagents.dataflows.interface import get_provider
    from tradingagents.graph.book_view import close_on

    return close_on(get_provider({"data_vendor": "demo"}), "NVDA", DATE)


def _book_at_the_limit(tmp_path) -> None:
    """NVDA 1/11 of the book (9.1%), over its 8% limit."""
    price = _nvda_close()
    csv_file = tmp_path / "book.csv"
    csv_file.write_text(f"ticker,shares,cost_basis\nNVDA,1000,{price / 1.25:.2f}\n", encoding="utf-8")
    assert main(["book", "import", str(csv_file), "--cash", str(10_000 * price), "--max-weight", "0.08"]) == 0


def test_the_portfolio_managers_prompt_names_the_holding_and_a_capped_buy_orders_nothing(
        fake_openai, tmp_path, capsys):  # noqa: F811
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    _book_at_the_limit(tmp_path)
    fake_openai.rating = "Buy"
    graph = TradingAgentsGraph(config=fake_openai.llm_config(analyst_execution="sequential"))
    state, rating = graph.propagate("NVDA", DATE)
    assert rating == "Buy"
    pm = [r for r in fake_openai.chat_requests if r["model"] == "fake-deep" and r.get("response_format")]
    prompt = str(pm[-1]["messages"])
    assert "<portfolio>" in prompt and "Held: 1000 shares of NVDA" in prompt
    assert "weight 9.1% of the book" in prompt and "unrealised return +25.0%" in prompt and "limit 8.0%" in prompt
    others = [r for r in fake_openai.chat_requests if r not in pm]
    assert not any("</portfolio>" in str(r["messages"]) for r in others)
    order = graph.last_run["record"]["meta"]["order"]
    assert {k: order[k] for k in ("side", "shares", "notional", "capped_by")} == {
        "side": "none", "shares": 0, "notional": 0.0, "capped_by": "max_weight"}
    assert order["weight_before"] == pytest.approx(1 / 11) == order["weight_after"]
    # the decision card (page and exports) says so
    from studio import export

    rows = dict(export.card_rows(export.card(state, graph.last_run["record"]["meta"], rating)))
    assert "capped by the limit per position" in rows["Order"]
    from tradingagents import storage

    assert storage.load_run(graph.config, "NVDA", DATE)["meta"]["order"]["capped_by"] == "max_weight"


def test_without_a_book_the_prompt_and_meta_are_as_before(fake_openai):  # noqa: F811
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    graph = TradingAgentsGraph(config=fake_openai.llm_config(analyst_execution="sequential"))
    graph.propagate("NVDA", DATE)
    assert not any("</portfolio>" in str(r["messages"]) for r in fake_openai.chat_requests)
    assert graph.last_run["record"]["meta"]["order"] is None


def test_the_offline_engine_names_the_holding_and_an_unheld_ticker_gets_an_order(tmp_path, capsys):
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    _book_at_the_limit(tmp_path)
    graph = TradingAgentsGraph(config={"analyst_execution": "sequential", "selected_analysts": ["market"]})
    state, rating = graph.propagate("NVDA", DATE)
    assert "The book holds 1000 NVDA, 9.1% of it, at its limit of 8.0%" in state["final_trade_decision"]
    state, rating = graph.propagate("AAPL", DATE)
    assert "The book holds no AAPL" in state["final_trade_decision"]
    order = graph.last_run["record"]["meta"]["order"]
    assert order["weight_before"] == 0
    assert order["side"] == ("buy" if rating in ("Buy", "Overweight") else "none")


# ---------------------------------------------------------------------------- the paper book
def test_the_paper_book_fills_at_the_close_and_is_valued_daily_against_the_benchmark():
    from tradingagents.dataflows.interface import get_provider
    from tradingagents.desk.paper import apply_order, load_paper, paper_history
    from tradingagents.graph.book_view import close_on
    from tradingagents.storage.book import import_book_csv

    provider = get_provider({"data_vendor": "demo"})
    import_book_csv(None, "b.csv", text="ticker,shares,cost_basis\nAAPL,100,150\n", cash=100_000.0)
    nvda, aapl = close_on(provider, "NVDA", DATE), close_on(provider, "AAPL", DATE)
    order = {"side": "buy", "shares": 50, "price": nvda, "ticker": "NVDA", "date": DATE}
    fill = apply_order(None, order)
    assert fill["shares"] == 50 and load_paper()["cash"] == pytest.approx(100_000 - 50 * nvda)
    with pytest.raises(ValidationError, match="already in the paper book"):
        apply_order(None, order)
    with pytest.raises(ValidationError, match="fills nothing"):
        apply_order(None, {**order, "side": "none", "shares": 0})
    history = paper_history(None, provider, "2024-05-17")
    assert [d.date().isoformat() for d in history.index][:2] == [DATE, "2024-05-13"]
    assert history["value"].iloc[0] == pytest.approx(100_000 + 100 * aapl)  # a fill at the close changes nothing
    later = history.index[-1].date().isoformat()
    expected = 100_000 - 50 * nvda + 50 * close_on(provider, "NVDA", later) + 100 * close_on(provider, "AAPL", later)
    assert history["value"].iloc[-1] == pytest.approx(expected)
    assert history["benchmark"].iloc[0] == pytest.approx(history["value"].iloc[0])
    assert history.attrs["benchmark"] == "SPY" and history.index[-1].date().isoformat() <= "2024-05-17"


def test_the_order_ticket_lists_orders_with_shares_and_never_a_formula():
    from studio.desk_view import order_ticket_csv

    buy = {"date": DATE, "ticker": "NVDA", "side": "buy", "shares": 10, "price": 900.5, "notional": 9005.0,
           "currency": "USD", "weight_before": 0.01, "weight_after": 0.02, "limit": 0.08, "capped_by": None}
    nothing = {**buy, "side": "none", "shares": 0}
    odd = {**buy, "ticker": "=HYPERLINK(1)", "side": "sell"}
    lines = order_ticket_csv([buy, nothing, None, odd]).splitlines()
    assert lines[0] == "date,ticker,side,shares,price,notional,currency,weight_before,weight_after,limit,capped_by"
    assert lines[1] == f"{DATE},NVDA,buy,10,900.5,9005.0,USD,0.010000,0.020000,0.080000,"
    assert len(lines) == 3 and lines[2].split(",")[1] == "'=HYPERLINK(1)"
