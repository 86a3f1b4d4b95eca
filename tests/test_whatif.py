"""What if: a saved run forked at one agent, the rest of the team replayed (graph/whatif.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.fake_openai import fake_openai  # noqa: F401
from tests.graph_helpers import CallCounter
from tradingagents import storage, team
from tradingagents.cli import main
from tradingagents.config import resolve_config
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.graph.whatif import ForkSpec, attribute, fork_run, tier_shift
from tradingagents.validation import ValidationError

DATE = "2024-05-10"
BEARISH_NEWS = "\n".join([
    "## News analysis of NVDA", "", "### Signals", "",
    "- **Company news**: 0 of 9 company headlines read positive and 9 negative → bearish",
    "- **Macro backdrop**: 0 of 7 global headlines read positive and 7 negative → bearish",
    "- **Headline risk**: guidance cut, probe and downgrade headlines all week → bearish",
    "- **Analyst actions**: three downgrades and no upgrade → bearish",
    "- **Supply chain**: a supplier warns of a slump in orders → bearish",
    *(f"- **Headline {i}**: NVIDIA shares tumble on weak demand, day {i} → bearish" for i in range(1, 11)),
    "", "> NVIDIA cuts guidance", "> NVIDIA faces a probe", "> NVIDIA downgraded to sell",
])
DOWNSTREAM = ("investment_plan", "trader_investment_plan", "final_trade_decision")


def _files(root: Path, skip: str | None = None) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not (skip and skip in p.relative_to(root).parts)}


@pytest.fixture(scope="module")
def base_home(tmp_path_factory):
    """One offline base run of NVDA, copied into each test's home (a run takes about a second)."""
    home = tmp_path_factory.mktemp("whatif_base")
    TradingAgentsGraph(config={"home": str(home)}).propagate("NVDA", DATE)
    return home


@pytest.fixture
def home(base_home, ta_home):
    import shutil

    shutil.copytree(base_home, ta_home, dirs_exist_ok=True)
    return ta_home


def test_fork_at_the_news_analyst_changes_downstream_and_leaves_the_run_log_and_memories_alone(home):
    cfg = resolve_config({})
    base = storage.load_run(cfg, "NVDA", DATE)
    run_folder = Path(cfg["results_dir"]) / "NVDA" / DATE
    before_run = _files(run_folder)
    memory = Path(cfg["memory_dir"])
    before_memory = _files(memory)
    assert Path(cfg["memory_log_path"]).read_bytes() and before_memory
    counter = CallCounter()
    graph = TradingAgentsGraph(config=cfg, callbacks=[counter])
    events = []
    out = fork_run(cfg, "NVDA", DATE, ForkSpec(at="news", text=BEARISH_NEWS), graph=graph, on_event=events.append)

    # only the nodes after the analysts ran
    assert counter.calls and not any(team.ROLE_BY_NODE[n].is_analyst for n in counter.calls)
    assert counter.calls["Bull Researcher"] >= 1 and counter.calls["Portfolio Manager"] == 1
    state = out["state"]
    assert state["news_report"] == BEARISH_NEWS
    for key in ("market_report", "sentiment_report", "fundamentals_report"):
        assert state[key] == base["state"][key]  # earlier agents taken as they were
    for key in DOWNSTREAM:
        assert state[key] and state[key] != base["state"][key], key
    assert state["investment_debate_state"]["history"] != base["state"]["investment_debate_state"]["history"]
    # the debate counted the new report's bearish signals (15 more than the base run's news had)
    tally = re.compile(r"against (\d+) bearish signals|(\d+) bearish against")
    count = [max(int(g) for m in tally.finditer(s["investment_debate_state"]["history"]) for g in m.groups() if g)
             for s in (base["state"], state)]
    assert count[1] > count[0]

    # saved as a variant with meta.whatif; events end with run_finished
    assert events[-1].kind == "run_finished" and not any(e.kind == "settle_started" for e in events)
    from tests.test_graph_events import _keys_fit

    assert [problem for e in events if (problem := _keys_fit(e))] == []  # the run's event contract, key for key
    assert {e.kind for e in events} >= {"run_started", "node_started", "report", "debate_turn", "judge_decision"}
    saved = json.loads((run_folder / "whatif" / "1" / "state.json").read_text(encoding="utf-8"))
    whatif = saved["meta"]["whatif"]
    assert whatif["at"] == "News Analyst" and whatif["changed"] == "news_report"
    assert whatif["base_rating"] == base["rating"] and whatif["rating"] == out["rating"] == saved["rating"]
    assert whatif["by"] and whatif["kind"] == "edit"
    assert (run_folder / "whatif" / "1" / "report.md").is_file()
    assert storage.list_forks(cfg, "NVDA", DATE)[0]["whatif"]["at"] == "News Analyst"
    assert storage.load_fork(cfg, "NVDA", DATE, 1)["state"]["news_report"] == BEARISH_NEWS

    # the base run, its log entry and the role memories: byte for byte
    assert _files(run_folder, skip="whatif") == before_run
    assert _files(memory) == before_memory
    assert [r for r in storage.list_runs(cfg, include_previous=True)] == storage.list_runs(cfg)
    assert len(storage.list_runs(cfg)) == 1 and storage.list_runs(cfg)[0]["rating"] == base["rating"]


def test_fork_at_a_debate_turn_keeps_the_turns_before_it(home):
    cfg = resolve_config({})
    base = storage.load_run(cfg, "NVDA", DATE)
    counter = CallCounter()
    graph = TradingAgentsGraph(config=cfg, callbacks=[counter])
    out = fork_run(cfg, "NVDA", DATE, ForkSpec(at="bear", turn=2, text="Bear Analyst: Sell it all."), graph=graph)
    # one round: bull turn 1 kept, bear turn 2 replaced, then the manager judges
    assert set(counter.calls) == {"Research Manager", "Trader", "Aggressive Analyst", "Conservative Analyst",
                                  "Neutral Analyst", "Portfolio Manager"}
    debate = out["state"]["investment_debate_state"]
    bull_turn = base["meta"]["debate_turns"][0]["text"]
    assert debate["history"] == f"Bull Analyst: {bull_turn}\nBear Analyst: Sell it all."
    turns = out["record"]["meta"]["debate_turns"]
    assert [t["speaker"] for t in turns[:2]] == ["Bull", "Bear"] and turns[1]["text"] == "Sell it all."
    assert out["whatif"]["changed"] == "investment_debate_state" and out["whatif"]["turn"] == 2


def test_fork_refuses_what_cannot_be_forked(home):
    cfg = resolve_config({})
    with pytest.raises(ValidationError, match="no turn 1"):
        fork_run(cfg, "NVDA", DATE, ForkSpec(at="bear", turn=1, text="x"))
    with pytest.raises(ValidationError, match="Only an analyst"):
        fork_run(cfg, "NVDA", DATE, ForkSpec(at="trader", drop=True))
    with pytest.raises(ValidationError, match="Nothing runs after"):
        fork_run(cfg, "NVDA", DATE, ForkSpec(at="portfolio_manager", text="x"))
    with pytest.raises(ValidationError, match="No saved run"):
        fork_run(cfg, "AAPL", DATE, ForkSpec(at="news", drop=True))
    assert storage.list_forks(cfg, "NVDA", DATE) == []


def test_attribute_matches_the_forks_run_one_by_one(home):
    cfg = resolve_config({})
    base_state = storage.load_run(cfg, "NVDA", DATE)
    result = attribute(cfg, "NVDA", DATE)
    assert list(result["attribution"]) == list(base_state["meta"]["analysts"])
    one_by_one = {k: fork_run(cfg, "NVDA", DATE, ForkSpec(at=k, drop=True))["rating"] for k in result["attribution"]}
    assert result["attribution"] == one_by_one
    assert result["shift"] == {k: tier_shift(result["base_rating"], r) for k, r in one_by_one.items()}
    after = storage.load_run(cfg, "NVDA", DATE)
    assert after["meta"]["attribution"] == result["attribution"]
    assert after["state"] == base_state["state"] and after["rating"] == base_state["rating"]
    dropped = storage.load_fork(cfg, "NVDA", DATE, 1)["state"]
    key = storage.list_forks(cfg, "NVDA", DATE)[0]["whatif"]["changed"]
    assert dropped[key] == "This report is not available."
    assert len(storage.list_forks(cfg, "NVDA", DATE)) == 2 * len(one_by_one)


def test_cli_whatif_prints_both_ratings(home, tmp_path, capsys):
    report = tmp_path / "news.md"
    report.write_text(BEARISH_NEWS, encoding="utf-8")
    assert main(["whatif", "NVDA", DATE, "--at", "news", "--report-file", str(report), "-q"]) == 0
    out = capsys.readouterr().out
    base = re.search(r"^Base rating: (\w+)$", out, re.M)
    fork = re.search(r"^What-if rating: (\w+)$", out, re.M)
    assert base and fork and "whatif/1/report.md" in out
    assert main(["whatif", "NVDA", DATE, "--drop", "news", "-q"]) == 0
    assert "whatif/2/report.md" in capsys.readouterr().out
    assert main(["whatif", "NVDA", DATE, "--at", "news"]) == 2  # no text
    assert main(["whatif", "NVDA", "2024-05-13", "--drop", "news"]) == 2  # no saved run
    assert "No saved run" in capsys.readouterr().err
    assert main(["attribute", "NVDA", DATE, "--analysts", "news,market", "-q"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Base rating:") and lines[1].split()[0] == "news" and lines[2].split()[0] == "market"


def _roles_asked(server) -> list[str]:
    """The agent of every request the fake server received, from the message that says who it is ("You are the
    X …"): the first message for an analyst, the role's own message after the team's shared context for the rest."""
    roles = []
    for body in server.chat_requests:
        texts = [str(m.get("content") or "") for m in body.get("messages") or []]
        roles.append(next((r.node for text in texts for r in team.ROSTER if text.startswith(f"You are the {r.node}")
                           or text.startswith(f"You are the {r.speaker} Risk Analyst")), "?"))
    return roles


def test_a_fork_makes_no_request_for_the_nodes_before_its_fork_point(fake_openai):  # noqa: F811
    cfg = resolve_config(fake_openai.llm_config())
    TradingAgentsGraph(config=cfg).propagate("NVDA", DATE)
    assert {"Market Analyst", "News Analyst", "Trader"} <= set(_roles_asked(fake_openai))
    base_requests = len(fake_openai.chat_requests)

    fake_openai.reset_counters()
    out = fork_run(cfg, "NVDA", DATE, ForkSpec(at="news", drop=True))
    asked = _roles_asked(fake_openai)
    assert "?" not in asked and not any(team.ROLE_BY_NODE[n].is_analyst for n in asked)
    assert asked[0] == "Bull Researcher" and asked[-1] == "Portfolio Manager"
    assert len(asked) < base_requests and out["record"]["meta"]["usage"]["llm_calls"] == len(asked)

    fake_openai.reset_counters()
    fork_run(cfg, "NVDA", DATE, ForkSpec(at="trader", text="FINAL TRANSACTION PROPOSAL: **SELL**"))
    assert _roles_asked(fake_openai) == ["Aggressive Analyst", "Conservative Analyst", "Neutral Analyst",
                                         "Portfolio Manager"]


def test_attribution_chart_shows_each_analyst_and_the_tiers_it_moves():
    from studio import charts
    from tradingagents.i18n import translator

    rows = charts.attribution_rows("Hold", {"market": "Hold", "news": "Overweight", "fundamentals": "Sell"})
    assert [(r["analyst"], r["shift"]) for r in rows] == [("market", 0), ("news", 1), ("fundamentals", -2)]
    fig = charts.attribution_figure("Hold", {"market": "Hold", "news": "Overweight", "fundamentals": "Sell"})
    bar = fig.data[0]
    assert list(bar.x) == [0, 1, -2] and list(bar.y) == ["Market Analyst", "News Analyst", "Fundamentals Analyst"]
    assert fig.layout.title.text == "What moved the decision" and "Overweight" in bar.text[1]
    zh = charts.attribution_figure("Hold", {"news": "Overweight"}, t=translator("zh"))
    assert zh.layout.title.text != "What moved the decision" and "News Analyst" not in zh.data[0].y


def test_a_fork_runs_as_a_job_of_the_registry(home):
    from studio.jobs import JobRegistry

    registry = JobRegistry()
    cfg = resolve_config({})
    with pytest.raises(ValidationError):
        registry.start_whatif("NVDA", DATE, cfg, spec=ForkSpec(at="bear", turn=1, text="x"), owner="me")
    job_id = registry.start_whatif("NVDA", DATE, cfg, spec=ForkSpec(at="news", drop=True), owner="me")
    job = registry.get(job_id, "whatif")
    assert job.wait(300) and job.status == "finished", job.error
    assert job.result["n"] == 1 and job.result["whatif"]["kind"] == "drop"
    from studio.ui import job_target

    assert job_target(job) == f"whatif NVDA {DATE} at news ({job.id})"  # as the audit trail names it
    assert any(e.kind == "run_finished" for e in job.events)
    attr = registry.get(registry.start_whatif("NVDA", DATE, cfg, attribute=True, owner="me"), "whatif")
    assert attr.wait(300) and attr.status == "finished", attr.error
    assert set(attr.result["attribution"]) == set(attr.progress()["done_forks"]) == set(team.ANALYST_KEYS)


def test_a_failed_fork_resumes_at_the_node_that_failed(home):
    from tests.graph_helpers import InjectedFault, fail_once_at

    cfg = resolve_config({})
    faulty = fail_once_at("Trader")
    graph = TradingAgentsGraph(config=cfg, callbacks=[faulty])
    spec = ForkSpec(at="news", text=BEARISH_NEWS)
    with pytest.raises(InjectedFault):
        fork_run(cfg, "NVDA", DATE, spec, graph=graph)
    assert storage.list_forks(cfg, "NVDA", DATE) == []  # nothing half-saved
    faulty.reset()
    events = []
    out = fork_run(cfg, "NVDA", DATE, spec, graph=graph, on_event=events.append)
    assert events[0].kind == "run_started" and events[0].data["resumed"]
    assert "Bull Researcher" not in faulty.calls and faulty.calls["Trader"] == 1  # finished nodes not run again
    fresh = fork_run(cfg, "NVDA", DATE, spec)
    assert out["state"]["final_trade_decision"] == fresh["state"]["final_trade_decision"]
