"""Watchlist batches: concurrency under one bound, isolation of failures, resume, budgets, watchlists."""

from __future__ import annotations

import json

import pytest

from tests.fake_openai import FakeOpenAIServer
from tradingagents import batch, storage
from tradingagents.errors import ConfigError, ValidationError
from tradingagents.graph.trading_graph import TradingAgentsGraph

DATE = "2024-05-10"
PRICES = {"fake-quick": [1000.0, 4000.0], "fake-deep": [2000.0, 8000.0]}


def test_offline_batch_matches_single_runs_and_is_reused_on_a_second_run(tmp_path):
    cfg = {"home": str(tmp_path / "h"), "max_concurrent_llm_calls": 4}
    seen = []
    outcomes = batch.run_batch("NVDA, AAPL,msft 0700.HK", DATE, cfg, on_update=seen.append)
    assert [o.ticker for o in outcomes] == ["NVDA", "AAPL", "MSFT", "0700.HK"]
    assert all(o.status == "done" and o.rating for o in outcomes)
    assert {o.status for o in seen} >= {"queued", "running", "done"}
    assert batch.exit_code(outcomes) == 0
    for o in outcomes:  # the same as one run of the ticker alone
        _, rating = TradingAgentsGraph(config={"home": str(tmp_path / "single")}).propagate(o.ticker, DATE)
        assert rating == o.rating
    again = batch.run_batch(["NVDA", "AAPL", "MSFT", "0700.HK"], DATE, cfg)
    assert [o.status for o in again] == ["reused"] * 4
    assert [o.rating for o in again] == [o.rating for o in outcomes]


def test_a_failed_ticker_does_not_stop_the_others_and_sets_the_exit_code(tmp_path):
    cfg = {"home": str(tmp_path), "max_concurrent_llm_calls": 2}
    # AAPL is being analysed elsewhere (its run lock is held): it fails with exit 6, the others run
    graph = TradingAgentsGraph(config=cfg)
    with storage.run_lock(graph.config, "AAPL", graph.thread_id("AAPL", DATE)):
        outcomes = batch.run_batch("NVDA,AAPL,MSFT", DATE, cfg)
    by = {o.ticker: o for o in outcomes}
    assert by["NVDA"].status == by["MSFT"].status == "done"
    assert by["AAPL"].status == "failed" and "already running" in by["AAPL"].error
    assert by["AAPL"].exit_code == 6
    assert batch.exit_code(outcomes) == 6
    # run again: the two finished are reused, the failed one runs now
    again = batch.run_batch("NVDA,AAPL,MSFT", DATE, cfg)
    assert [o.status for o in again] == ["reused", "done", "reused"]


def test_exit_code_is_the_worst_in_the_documented_order():
    def o(status, code):
        return batch.TickerOutcome("X", DATE, status=status, exit_code=code)

    assert batch.exit_code([o("done", 0), o("reused", 0)]) == 0
    assert batch.exit_code([o("budget", 5), o("failed", 4)]) == 4
    assert batch.exit_code([o("failed", 3), o("failed", 2), o("stopped", 5)]) == 2
    assert batch.exit_code([o("failed", 1), o("failed", 2)]) == 1


def test_batch_budget_stops_the_batch_and_a_larger_one_finishes_it_without_redoing_work(tmp_path):
    with FakeOpenAIServer() as server:
        cfg = server.llm_config(home=str(tmp_path / "h"), analyst_execution="sequential", llm_pricing=PRICES,
                                max_concurrent_llm_calls=2, llm_max_output_tokens=256)
        ref = TradingAgentsGraph(config={**cfg, "home": str(tmp_path / "ref")})
        ref.propagate("NVDA", DATE)
        one = ref.last_run["record"]["meta"]["usage"]["cost_usd"]
        calls_one = ref.last_run["usage"]["llm_calls"]
        server.reset_counters()

        first = batch.run_batch("NVDA,AAPL", DATE, cfg, max_cost_usd=one * 0.8)
        assert any(o.status == "budget" for o in first)
        assert batch.exit_code(first) == 5
        stopped = next(o for o in first if o.status == "budget")
        assert "--max-cost" in stopped.error and stopped.resumable
        spent = sum(o.cost_usd or 0 for o in first)
        # every call reserves its worst case from the batch's one ledger first: never above the budget
        assert spent <= one * 0.8
        calls_first = len(server.chat_requests)
        server.reset_counters()

        second = batch.run_batch("NVDA,AAPL", DATE, cfg, max_cost_usd=one * 10)
        assert all(o.ok for o in second), [o.error for o in second]
        # the two tickers together made exactly two runs' calls: nothing done twice
        assert calls_first + len(server.chat_requests) == 2 * calls_one


def test_watchlists_are_saved_validated_and_written_atomically(tmp_path):
    cfg = {"home": str(tmp_path)}
    assert storage.list_watchlists(cfg) == {}
    assert storage.save_watchlist("Morning", "nvda, aapl,NVDA", cfg) == ["NVDA", "AAPL"]
    storage.save_watchlist("asia", ["0700.HK", "7203.T"], cfg)
    assert storage.list_watchlists(cfg) == {"Morning": ["NVDA", "AAPL"], "asia": ["0700.HK", "7203.T"]}
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert storage.delete_watchlist("asia", cfg) and not storage.delete_watchlist("asia", cfg)
    with pytest.raises(ValidationError):
        storage.save_watchlist("../etc", "NVDA", cfg)
    with pytest.raises(ValidationError):
        storage.save_watchlist("ok", "NVDA,$$$", cfg)
    # a hand-edited entry that does not validate is left out, the others stay
    doc = json.loads((tmp_path / "watchlists.json").read_text())
    doc["watchlists"]["bad"] = ["$$$"]
    (tmp_path / "watchlists.json").write_text(json.dumps(doc))
    assert storage.list_watchlists(cfg) == {"Morning": ["NVDA", "AAPL"]}


def test_a_watchlists_file_written_before_still_loads_and_keeps_its_format(tmp_path):
    # exactly what the earlier writer (json.dump(..., indent=1), names sorted) left on disk
    old = '{\n "version": 1,\n "watchlists": {\n  "Morning": [\n   "NVDA",\n   "AAPL"\n  ],\n  "asia": [\n   "0700.HK"\n  ]\n }\n}'
    (tmp_path / "watchlists.json").write_text(old, encoding="utf-8")
    cfg = {"home": str(tmp_path)}
    assert storage.list_watchlists(cfg) == {"Morning": ["NVDA", "AAPL"], "asia": ["0700.HK"]}
    stray = tmp_path / ".watchlists.json.killed.tmp"  # what a writer killed mid-way left
    stray.write_text("half")
    storage.save_watchlist("asia", "0700.HK", cfg)  # the same lists again: the same bytes
    assert not stray.exists()
    assert (tmp_path / "watchlists.json").read_text(encoding="utf-8") == old
    assert repr(storage.open_watchlists(cfg)) == f"FileWatchlists(path={str(tmp_path / 'watchlists.json')!r})"


def test_the_watchlists_file_is_the_watchlists_path_setting(tmp_path, monkeypatch):
    elsewhere = tmp_path / "shared" / "lists.json"
    cfg = {"home": str(tmp_path / "home"), "watchlists_path": str(elsewhere)}
    storage.save_watchlist("morning", "NVDA", cfg)
    assert json.loads(elsewhere.read_text())["watchlists"] == {"morning": ["NVDA"]}
    assert not (tmp_path / "home" / "watchlists.json").exists()
    monkeypatch.setenv("TRADINGAGENTS_WATCHLISTS_PATH", str(elsewhere))  # or from the environment
    assert storage.list_watchlists({"home": str(tmp_path / "other")}) == {"morning": ["NVDA"]}
    elsewhere.write_text("{not json")
    with pytest.raises(ConfigError, match="lists.json is not a readable watchlist file"):
        storage.list_watchlists(cfg)


def test_estimates_come_from_past_runs_of_the_same_configuration_else_a_typical_run(tmp_path):
    from tradingagents.estimates import estimate_batch_cost, estimate_run_cost

    with FakeOpenAIServer() as server:
        cfg = server.llm_config(home=str(tmp_path), analyst_execution="sequential", llm_pricing=PRICES)
        typical = estimate_run_cost(cfg)
        assert typical["source"] == "typical run" and typical["cost_usd"] > 0
        g = TradingAgentsGraph(config=cfg)
        g.propagate("NVDA", DATE)
        actual = g.last_run["record"]["meta"]["usage"]["cost_usd"]
        past = estimate_run_cost(cfg)
        assert past == {"cost_usd": pytest.approx(actual), "source": "past runs", "runs": 1}
        assert estimate_batch_cost(cfg, 3)["cost_usd"] == pytest.approx(3 * actual)
        # another configuration (other rounds) has no past run
        assert estimate_run_cost({**cfg, "max_debate_rounds": 2})["source"] == "typical run"
    assert estimate_run_cost({"home": str(tmp_path / "x")})["cost_usd"] == 0.0  # offline costs nothing


def test_cli_batch_prints_one_line_per_ticker_and_exits_with_the_worst_code(tmp_path, capsys):
    from tradingagents.cli import main

    home = str(tmp_path)
    assert main(["batch", "NVDA,AAPL", DATE, "--home", home, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("NVDA") and "done" in out and "total $0.0000" in out
    storage.save_watchlist("morning", "NVDA,MSFT", {"home": home})
    assert main(["batch", "@morning", DATE, "--home", home, "--json", "--quiet"]) == 0
    docs = json.loads(capsys.readouterr().out)
    assert [(d["ticker"], d["status"]) for d in docs] == [("NVDA", "reused"), ("MSFT", "done")]
    assert main(["batch", "@nope", DATE, "--home", home]) == 2
    assert "No watchlist named 'nope'" in capsys.readouterr().err
    assert main(["batch", "NVDA,$$", DATE, "--home", home]) == 2
    assert main(["batch", "NVDA", DATE, "--home", home, "--executor", "quantum"]) == 2
    assert main(["batch", "--help"]) == 0
    assert "worst ticker" in capsys.readouterr().out


def test_the_tickers_running_at_once_share_one_bound_of_model_calls(tmp_path):
    with FakeOpenAIServer(latency_s=0.25) as server:
        # calls long enough that the four runs overlap even on a loaded machine (the bound must be reached)
        cfg = server.llm_config(home=str(tmp_path), max_concurrent_llm_calls=3)
        outcomes = batch.run_batch("NVDA,AAPL,MSFT,AMZN", DATE, cfg)
        assert all(o.ok for o in outcomes), [o.error for o in outcomes]
        assert server.max_in_flight == 3  # never more in all; and the bound is really used


def test_executor_comes_from_the_config_the_environment_or_the_flag(monkeypatch):
    from tradingagents.config import resolve_config
    from tradingagents.errors import ConfigError
    from tradingagents.executor import RayExecutor, ThreadExecutor, get_executor

    assert resolve_config({})["executor"] == "threads"
    assert isinstance(get_executor(resolve_config({}), 4), ThreadExecutor)
    monkeypatch.setenv("TRADINGAGENTS_EXECUTOR", "Ray")
    monkeypatch.setenv("TRADINGAGENTS_RAY_ADDRESS", "ray://head:10001")
    cfg = resolve_config({})
    ex = get_executor(cfg, 4)  # built, not connected: Ray starts only when a batch runs
    assert isinstance(ex, RayExecutor) and ex.address == "ray://head:10001"
    monkeypatch.setenv("TRADINGAGENTS_EXECUTOR", "spark")
    with pytest.raises(ConfigError, match="TRADINGAGENTS_EXECUTOR"):
        resolve_config({})
    assert resolve_config({"executor": "thread"})["executor"] == "threads"


def test_a_small_batch_on_a_local_ray_runs_on_threads_and_says_so(tmp_path, capsys):
    """Starting a local Ray costs more than a small batch: fewer than RAY_LOCAL_MIN_TASKS tickers run
    on threads, the terminal says so, and no Ray is started; a cluster address or more tickers keep Ray."""
    import sys

    from tradingagents.cli import main
    from tradingagents.executor import RAY_LOCAL_MIN_TASKS, RayExecutor, ThreadExecutor, get_executor

    small = get_executor({"executor": "ray"}, RAY_LOCAL_MIN_TASKS - 1)
    assert isinstance(small, ThreadExecutor) and "threads chosen" in small.note
    assert isinstance(get_executor({"executor": "ray"}, RAY_LOCAL_MIN_TASKS), RayExecutor)
    assert isinstance(get_executor({"executor": "ray", "ray_address": "ray://head:10001"}, 1), RayExecutor)
    assert not get_executor({}, 1).note  # threads asked for: nothing to say
    home = str(tmp_path / "h")
    assert main(["batch", "NVDA,AAPL,MSFT", DATE, "--home", home, "--executor", "ray"]) == 0
    err = capsys.readouterr().err
    assert "executor threads (ray asked for, threads chosen: 3 tasks" in err
    ray = sys.modules.get("ray")
    assert ray is None or not ray.is_initialized()  # the batch ran without starting Ray
