"""Caching for speed must not change behaviour: shared tools keep each run's cut-off, a compiled graph
reused across tickers and dates gives the same states as a fresh one, checkpoints still land in the
ticker's own database."""

from __future__ import annotations

import re
import threading

import pytest

from tradingagents.dataflows import tools as data_tools
from tradingagents.dataflows.tools import AS_OF_KEY, shared_tools
from tradingagents.errors import CheckpointError
from tradingagents.graph import checkpointer as ckpt
from tradingagents.graph.checkpoint_router import ROUTE_KEY, CheckpointRouter
from tradingagents.graph.trading_graph import TradingAgentsGraph

DEMO = {"data_vendor": "demo"}


def _last_price_day(text: str) -> str:
    days = re.findall(r"^(\d{4}-\d{2}-\d{2}),", text, flags=re.M)
    assert days, text[:400]
    return days[-1]


def _stock(tool, as_of: str) -> str:
    args = {"symbol": "NVDA", "start_date": "2024-01-01", "end_date": "2030-01-01"}
    return tool.invoke(args, config={"configurable": {AS_OF_KEY: as_of}})


def test_shared_tools_are_built_once_per_provider():
    assert shared_tools(DEMO) is shared_tools(DEMO)
    assert set(shared_tools(DEMO)) == set(data_tools.TOOL_NAMES)


def test_a_shared_tool_used_by_two_runs_returns_each_runs_own_cut_off():
    tool = shared_tools(DEMO)["get_stock_data"]
    early, late = _stock(tool, "2024-03-01"), _stock(tool, "2024-06-14")
    assert _last_price_day(early) <= "2024-03-01" and "2024-03" in _last_price_day(early)
    assert "2024-06" in _last_price_day(late) and _last_price_day(late) <= "2024-06-14"
    # the same answers as tools bound to one date (the old way)
    for day, text in (("2024-03-01", early), ("2024-06-14", late)):
        bound = data_tools.make_tools(DEMO, as_of=day)["get_stock_data"]
        assert text == bound.invoke({"symbol": "NVDA", "start_date": "2024-01-01", "end_date": "2030-01-01"})


def test_shared_tools_keep_each_threads_date_when_runs_overlap():
    tool = shared_tools(DEMO)["get_indicators"]
    dates = ["2024-02-01", "2024-04-15", "2024-05-10", "2024-06-03"] * 3
    seen: dict[int, str] = {}
    barrier = threading.Barrier(len(dates))

    def call(i: int, day: str) -> None:
        barrier.wait()
        seen[i] = tool.invoke({"symbol": "AAPL", "indicator": "rsi", "curr_date": "2031-01-01"},
                              config={"configurable": {AS_OF_KEY: day}})

    threads = [threading.Thread(target=call, args=(i, d)) for i, d in enumerate(dates)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, day in enumerate(dates):
        last = re.findall(r"^(\d{4}-\d{2}-\d{2}): ", seen[i], flags=re.M)[-1]
        assert last <= day and last[:7] == day[:7], (day, last)


def test_a_shared_tool_without_a_run_date_refuses_instead_of_guessing():
    out = shared_tools(DEMO)["get_stock_data"].invoke(
        {"symbol": "NVDA", "start_date": "2024-01-01", "end_date": "2024-05-10"})
    assert out.startswith("INVALID_ARGUMENT:") and AS_OF_KEY in out


def _run_states(graph: TradingAgentsGraph, runs, events=None):
    out = []
    for ticker, day in runs:
        state, rating = graph.propagate(ticker, day, on_event=events.append if events is not None else None)
        # message ids are fresh uuids on every run; everything else must be the same
        out.append(({k: v for k, v in state.items() if k != "messages"}, rating))
    return out


@pytest.mark.parametrize("mode", ["parallel", "sequential"])
def test_one_compiled_graph_serves_every_ticker_and_date_with_the_same_results(mode, tmp_path):
    cfg = {"llm_provider": "offline", **DEMO, "analyst_execution": mode, "checkpoint_enabled": True}
    # distinct tickers: a ticker's second run would rightly see its first in the memory log
    runs = [("NVDA", "2024-05-10"), ("AAPL", "2024-03-04"), ("MSFT", "2024-06-03")]
    reused = TradingAgentsGraph(config={**cfg, "home": str(tmp_path / "a")})
    events: list = []
    got = _run_states(reused, runs, events)
    assert reused.compiled_graphs.compiles == 1  # not once per run, ticker or date
    assert reused.checkpoint_router.active_routes() == 0  # every run's database was closed
    for (ticker, day), result in zip(runs, got, strict=True):
        fresh = TradingAgentsGraph(config={**cfg, "home": str(tmp_path / f"f{ticker}{day}")})
        assert _run_states(fresh, [(ticker, day)]) == [result]
        assert result[0]["company_of_interest"] == ticker and result[0]["trade_date"] == day
    # the tools of each run answered as of that run's date, not the previous run's
    starts = [i for i, e in enumerate(events) if e.kind == "run_started"]
    for n, (_ticker, day) in enumerate(runs):
        chunk = events[starts[n]: starts[n + 1] if n + 1 < len(starts) else None]
        previews = [e.data["result_preview"] for e in chunk if e.kind == "tool_call"]
        assert previews
        for text in previews:
            for found in re.findall(r"\d{4}-\d{2}-\d{2}", text):
                assert found <= day, (day, text[:200])


def test_checkpoints_are_routed_to_each_tickers_database(tmp_path):
    cfg = {"llm_provider": "offline", **DEMO, "checkpoint_enabled": True, "home": str(tmp_path)}
    graph = TradingAgentsGraph(config=cfg)
    seen: dict[str, set] = {}  # ticker → the databases holding its thread mid-run
    for ticker in ("NVDA", "AAPL"):
        tid = graph.thread_id(ticker, "2024-05-10")

        def on_event(event, ticker=ticker, tid=tid):
            if event.kind == "node_finished" and event.node == "Trader":
                seen.setdefault(ticker, set()).update(
                    t for t in ("NVDA", "AAPL") if ckpt.has_checkpoint(graph.config, t, tid))

        graph.propagate(ticker, "2024-05-10", on_event=on_event)
    assert seen == {"NVDA": {"NVDA"}, "AAPL": {"AAPL"}}
    assert ckpt.checkpoint_path(graph.config, "NVDA").exists() and ckpt.checkpoint_path(graph.config, "AAPL").exists()
    assert ckpt.list_checkpoints(graph.config) == []  # success cleared each run's thread


def test_a_run_config_without_a_route_is_refused(tmp_path):
    router = CheckpointRouter({"checkpoint_enabled": False})
    with pytest.raises(CheckpointError):
        router.get_tuple({"configurable": {"thread_id": "x"}})
    with router.route("NVDA") as route:
        assert set(route) == {ROUTE_KEY}
        assert router.get_tuple({"configurable": {"thread_id": "x", "checkpoint_ns": "", **route}}) is None
    with pytest.raises(CheckpointError):  # closed once the run's block ends
        router.get_tuple({"configurable": {"thread_id": "x", **route}})
