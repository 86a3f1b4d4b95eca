"""Ask the team: any agent of a saved run answers from that run's material, and the thread is kept with
the run (``meta.questions``), on files and on the desk database; offline by quoting, networked by one
streamed call counted in usage and held to the budget."""

from __future__ import annotations

import json
import re

import pytest

from tests import pg_server as _pg
from tests.fake_openai import fake_openai  # noqa: F401
from tradingagents import cli, storage
from tradingagents.ask import ask, material_of, run_so_far, took_part
from tradingagents.config import resolve_config
from tradingagents.errors import BudgetExceeded, ValidationError
from tradingagents.graph.trading_graph import TradingAgentsGraph
from tradingagents.team import ROLES

pg_server, pg_url = _pg.pg_server, _pg.pg_url  # the real server's fixtures
DATE = "2024-05-10"


def _run(config=None, ticker="NVDA"):
    TradingAgentsGraph(config=config).propagate(ticker, DATE)
    return storage.load_run(config, ticker, DATE)


def _bear_figure(run) -> tuple[str, str]:
    """A figure of the Bear's own turn and the sentence it stands in."""
    [turn] = [t for t in run["meta"]["debate_turns"] if t["role"] == "bear"]
    for sentence in re.split(r"(?<=[.!?])\s+", turn["text"]):
        figures = re.findall(r"\d+\.\d+", sentence)
        if figures:
            return figures[0], sentence
    raise AssertionError("the offline Bear's turn names no figure")


def test_offline_bear_quotes_the_figure_asked_about_and_the_thread_is_saved(capsys):
    run = _run()
    figure, sentence = _bear_figure(run)
    assert cli.main(["ask", "NVDA", DATE, "--agent", "bear", f"Why does {figure} worry you?"]) == 0
    out = capsys.readouterr().out
    assert figure in out and "offline engine" in out
    words = re.sub(r"\*\*", "", sentence).split()
    assert " ".join(words[-4:]) in out  # the Bear's own sentence, quoted back
    [item] = storage.load_run(None, "NVDA", DATE)["meta"]["questions"]
    assert set(item) == {"agent", "question", "answer", "by", "at", "usage"}
    assert item["agent"] == "bear" and item["question"] == f"Why does {figure} worry you?" and figure in item["answer"]
    assert item["usage"]["llm_calls"] == 0 and item["usage"]["cost_usd"] == 0.0
    # nothing in the material: said so, and kept too
    assert cli.main(["ask", "NVDA", DATE, "--agent", "Bear Researcher", "Will it rain in Paris?"]) == 0
    assert "Nothing in my material" in capsys.readouterr().out
    assert len(storage.load_run(None, "NVDA", DATE)["meta"]["questions"]) == 2
    assert any(e["action"] == "ask" for e in storage.read_audit(None))


def test_unknown_agent_or_run_is_exit_2_naming_what_exists(capsys):
    _run()
    before = storage.load_run(None, "NVDA", DATE)["meta"].get("questions")
    assert cli.main(["ask", "NVDA", DATE, "--agent", "wizard", "Why?"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "wizard" in err and "bear (Bear Researcher)" in err and "portfolio_manager" in err
    assert cli.main(["ask", "NVDA", "2024-05-09", "--agent", "bear", "Why?"]) == cli.EXIT_BAD_INPUT
    assert "runs of NVDA: 2024-05-10" in capsys.readouterr().err
    assert cli.main(["ask", "AAPL", DATE, "--agent", "bear", "Why?"]) == cli.EXIT_BAD_INPUT
    assert "python -m tradingagents AAPL 2024-05-10" in capsys.readouterr().err
    assert storage.load_run(None, "NVDA", DATE)["meta"].get("questions") == before


def test_an_agent_that_did_not_take_part_is_refused():
    run = _run({"selected_analysts": ["market"]})
    keys = [r.key for r in took_part(run)]
    assert "market" in keys and "news" not in keys and "portfolio_manager" in keys
    with pytest.raises(ValidationError, match="market \\(Market Analyst\\)"):
        ask(None, "NVDA", DATE, "news", "What did the headlines say?")


def test_each_role_has_its_own_material():
    run = _run()
    own, read = material_of(ROLES["bear"], run)
    assert own and all("Bear" in label for label, _ in own)
    assert any(label == "Bull Researcher" for label, _ in read)  # the turn it answered
    own, _read = material_of(ROLES["portfolio_manager"], run)
    assert own[0][1] == run["state"]["final_trade_decision"]
    own, read = material_of(ROLES["market"], run)
    assert own == [("Market", run["state"]["market_report"])] and read == []


def test_offline_answer_is_in_the_runs_language():
    run = _run({"output_language": "Chinese"})
    figure, _sentence = _bear_figure(run)
    item = ask({"output_language": "Chinese"}, "NVDA", DATE, "bear", f"为什么 {figure}？")
    assert "离线引擎" in item["answer"] and figure in item["answer"]


def test_questions_are_kept_on_the_desk_database(pg_url):
    cfg = {"storage_url": pg_url}
    run = _run(cfg)
    figure, _sentence = _bear_figure(run)
    first = ask(cfg, "NVDA", DATE, "bear", f"Why {figure}?", by="pm@desk")
    ask(cfg, "NVDA", DATE, "trader", "What size?", by="pm@desk")
    saved = storage.load_run(cfg, "NVDA", DATE)["meta"]["questions"]
    assert [q["agent"] for q in saved] == ["bear", "trader"] and saved[0] == first
    assert figure in saved[0]["answer"] and saved[0]["by"] == "pm@desk"


def test_networked_answer_is_one_streamed_call_with_the_agents_turn_and_the_question(fake_openai):  # noqa: F811
    run = _run()
    [turn] = [t for t in run["meta"]["debate_turns"] if t["role"] == "bear"]
    fake_openai.reset_counters()
    prices = {"fake-quick": [1.0, 2.0], "fake-deep": [5.0, 10.0]}
    tokens: list[str] = []
    overrides = {k: v for k, v in fake_openai.llm_config().items() if k in
                 ("llm_provider", "backend_url", "quick_think_llm", "deep_think_llm")}
    item = ask({"llm_pricing": prices}, "NVDA", DATE, "bear", "Why do you expect margins to fall?",
               overrides=overrides, on_token=tokens.append)
    [request] = fake_openai.chat_requests
    sent = json.dumps(request["messages"], ensure_ascii=False)
    contents = "\n".join(str(m.get("content")) for m in request["messages"])
    assert turn["text"][:200] in contents  # the Bear's own turn
    assert "Why do you expect margins to fall?" in sent and "Bear Researcher" in sent
    assert request.get("stream") is True and request["model"] == "fake-quick"
    assert "".join(tokens).strip() == item["answer"] and item["answer"]
    usage = item["usage"]
    assert usage["llm_calls"] == 1 and usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    assert usage["cost_usd"] == pytest.approx(fake_openai.billed_usd(prices))
    assert storage.load_run(None, "NVDA", DATE)["meta"]["questions"][-1] == item
    # the budget holds: a ceiling below the call's worst case refuses it before it is sent
    fake_openai.reset_counters()
    with pytest.raises(BudgetExceeded):
        ask({"llm_pricing": prices}, "NVDA", DATE, "portfolio_manager", "Why?",
            overrides={**overrides, "max_cost_usd": 0.000001})
    assert fake_openai.chat_requests == []
    assert len(storage.load_run(None, "NVDA", DATE)["meta"]["questions"]) == 1
    assert resolve_config({})["llm_provider"] == "offline"


def test_the_thread_is_in_the_exports_and_the_pdf_handout(tmp_path):
    from studio import export
    from tradingagents.i18n import translator

    _run()
    ask(None, "NVDA", DATE, "trader", "What size?", by="pm@desk")
    run = storage.load_run(None, "NVDA", DATE)
    md = export.report_markdown(run["state"], run["rating"], run["meta"])
    assert "## Questions to the team" in md and "pm@desk asked the Trader" in md and "What size?" in md
    assert "What size?" in export.report_html(run["state"], run["rating"], run["meta"])
    zh = export.report_markdown(run["state"], run["rating"], run["meta"], t=translator("zh"))
    assert "## 向团队的提问" in zh
    pdf = export.report_pdf(run["state"], run["rating"], run["meta"])
    (tmp_path / "handout.pdf").write_bytes(pdf)
    import subprocess

    text = subprocess.run(["pdftotext", str(tmp_path / "handout.pdf"), "-"], check=True, capture_output=True,
                          text=True, timeout=120).stdout  # poppler-utils, as tests/app/test_export.py reads it
    assert "Questions to the team" in text and "What size?" in text


def test_an_agent_is_asked_while_the_run_goes_and_the_thread_is_saved_with_the_run(ta_home):
    """"On a finished (or running) analysis": the Bear answers from its turn while the risk team still works,
    and the question is saved in meta.questions when the run is."""
    import threading

    from studio.jobs import JobRegistry

    gate, bear_spoke = threading.Event(), threading.Event()

    def held(**kw):  # the real engine, held at the Trader until the question was asked
        graph = TradingAgentsGraph(**kw)
        inner = graph.propagate

        def propagate(*a, on_event=None, **k):
            def relay(event):
                if event.kind == "debate_turn" and event.data.get("role") == "bear":
                    bear_spoke.set()
                if event.kind == "node_started" and event.node == ROLES["trader"].node:
                    gate.wait(300)
                on_event(event)
            return inner(*a, on_event=relay, **k)
        graph.propagate = propagate
        return graph

    reg = JobRegistry(graph_factory=held)
    job = reg.get(reg.start_run("NVDA", DATE, ["market"], {}, owner="A"))
    assert bear_spoke.wait(300)
    running = job.status
    run = run_so_far(job.events, job.config)
    figure, sentence = _bear_figure(run)
    item = job.ask("bear", f"Why does {figure} worry you?", by="ann")
    assert running == "running" and job.status == "running" and figure in item["answer"]
    with pytest.raises(ValidationError, match="No agent 'trader' took part"):
        job.ask("trader", "What is your plan?", by="ann")  # it has not spoken yet
    gate.set()
    assert job.wait(300) and job.status == "finished", job.error
    [saved] = storage.load_run(None, "NVDA", DATE)["meta"]["questions"]
    assert saved == item and any(e["action"] == "ask" for e in storage.read_audit(None))
