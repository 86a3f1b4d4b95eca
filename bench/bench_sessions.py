"""Several browser sessions at once, and 1 MB answers: does the UI cost more than the engine it drives?

Every figure goes through the real langchain-openai client against the fake OpenAI-compatible server
answering each call in 0.3 s (the default analysts and rounds), so runs wait on the model as real ones
do. "Round" = three analyses started at the same moment, one per ticker; the first round of each
setting warms the engine up and is not counted.

- ``threads3_run_s``: three runs in three threads of one process (graph built and propagated, as the
  app's worker thread does), the median of the runs of two rounds.
- ``sessions3_run_s``: three browser sessions of one ``streamlit run app.py`` server (the app's own
  ``.streamlit/config.toml``), each clicking Start on its own ticker at once; each run from the click to
  its rating badge on screen; the median of the runs of two rounds.
- ``sessions3_vs_threads3``: the two medians' ratio (goal ≤ 1.25: a run's click-to-badge also holds
  the form's submit and one poll of the page, ~0.3 s, that a thread does not have).
- ``sessions3_server_cpu_s`` / ``threads3_cpu_s``: CPU seconds of the server process / of the thread
  process per round (the server's includes the same three engine runs).
- ``sessions3_streamlit_defaults_run_s`` and ``…_server_cpu_s``: one round on a server run with
  Streamlit's defaults for the two options the app's config turns off (``runner.postScriptGC`` true:
  a full ``gc.collect(2)`` after every fragment rerun; ``server.fileWatcherType`` auto: without the
  watchdog package, a poll of every module of the app five times a second).
- ``cli_1mb_run_s`` / ``app_1mb_run_s``: one analysis whose Market Analyst answers 1 MB of Markdown,
  ``python -m tradingagents`` wall time against the app's click-to-badge (after one such run that
  warms the server); ``app_1mb_vs_cli`` their ratio (goal ≤ 1.2).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GOALS: dict[str, tuple[str, float]] = {
    "sessions3_vs_threads3": ("<=", 1.25),
    "app_1mb_vs_cli": ("<=", 1.2),
}

LATENCY_S = 0.3
TICKERS = ("NVDA", "AAPL", "MSFT")
DATES = ("2024-04-10", "2024-05-10", "2024-06-10")  # warm-up round, then two measured rounds
STREAMLIT_DEFAULTS = {"STREAMLIT_RUNNER_POST_SCRIPT_GC": "true", "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "auto"}
PARAGRAPH = "The market analyst notes that momentum, volume and the 50-day average agree on the trend. " * 10
BIG_REPORT = ((PARAGRAPH + "\n\n") * (1_000_000 // (len(PARAGRAPH) + 2) + 1))[:1_000_000]


def _llm_env(llm) -> dict[str, str]:
    return {"TRADINGAGENTS_LLM_PROVIDER": "openai_compatible", "TRADINGAGENTS_BACKEND_URL": llm.base_url,
            "TRADINGAGENTS_QUICK_THINK_LLM": "fake-quick", "TRADINGAGENTS_DEEP_THINK_LLM": "fake-deep"}


def _server_cpu_s(url: str) -> float:
    """User + system CPU seconds of the ``streamlit run`` process serving ``url``."""
    port = url.rsplit(":", 1)[1].encode()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if b"streamlit" not in b" ".join(argv) or port not in argv:
                continue
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    raise RuntimeError(f"no streamlit process serves {url}")


def _thread_rounds(llm) -> tuple[list[float], list[float]]:
    """Run times of the measured rounds' threads, and each round's process CPU seconds."""
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    times: list[float] = []
    cpu: list[float] = []
    with tempfile.TemporaryDirectory(prefix="ta_bench_threads_") as home:
        config = {**llm.llm_config(), "home": home}
        for n, date in enumerate(DATES):
            took: dict[str, float] = {}
            failed: list[BaseException] = []

            def one(ticker: str, date: str = date, took: dict = took, failed: list = failed) -> None:
                try:
                    t0 = time.perf_counter()
                    TradingAgentsGraph(config=config).propagate(ticker, date)
                    took[ticker] = time.perf_counter() - t0
                except BaseException as exc:  # noqa: BLE001 - re-raised below in the bench's thread
                    failed.append(exc)

            c0 = time.process_time()
            threads = [threading.Thread(target=one, args=(t,)) for t in TICKERS]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            if failed:
                raise failed[0]
            if n:
                times += took.values()
                cpu.append(time.process_time() - c0)
    return times, cpu


def _session_rounds(llm, home: Path, dates, extra_env: dict | None = None) -> tuple[list[float], list[float]]:
    """Click-to-badge times of three sessions starting at once (rounds after the first), server CPU."""
    from tests.browser.harness import DONE_OBSERVER_JS, chromium, fill_run_form, streamlit_server

    times: list[float] = []
    cpu: list[float] = []
    with streamlit_server(home, extra_env={**_llm_env(llm), **(extra_env or {})}) as url, chromium() as page0:
        browser = page0.context.browser
        pages = []
        for _ in TICKERS:
            page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
            page.set_default_timeout(60_000)
            page.goto(url + "/")
            page.get_by_role("button", name="Start analysis").wait_for(state="visible")
            pages.append(page)
        for n, date in enumerate(dates):
            for ticker, page in zip(TICKERS, pages, strict=True):
                fill_run_form(page, ticker, date)
                page.evaluate(DONE_OBSERVER_JS, [ticker, date])
            c0 = _server_cpu_s(url)
            clicks = []
            for page in pages:
                clicks.append(time.time())
                page.get_by_role("button", name="Start analysis").click()
            done = []
            for page in pages:
                page.wait_for_function("() => window.__taDone !== null", timeout=180_000)
                done.append(page.evaluate("() => window.__taDone"))
            if n:
                times += [d - c for c, d in zip(clicks, done, strict=True)]
                cpu.append(_server_cpu_s(url) - c0)
    return times, cpu


def _big_responder(body: dict) -> dict:
    from tests.fake_openai import agentic_responder

    answer = agentic_responder(body)
    if answer.get("tool_calls") or not isinstance(answer.get("content"), str) or body.get("response_format"):
        return answer
    system = str((body.get("messages") or [{}])[0].get("content"))
    return {**answer, "content": answer["content"] + ("\n\n" + BIG_REPORT if "Market Analyst" in system else "")}


def _one_mb(home: Path) -> dict:
    from tests.browser.harness import DONE_OBSERVER_JS, chromium, fill_run_form, streamlit_server
    from tests.fake_openai import FakeOpenAIServer

    out: dict = {}
    with FakeOpenAIServer(_big_responder, latency_s=LATENCY_S) as llm:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_")}
        env.update({**_llm_env(llm), "TRADINGAGENTS_HOME": str(home / "cli")})
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "tradingagents", TICKERS[0], DATES[1], "--quiet"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        out["cli_1mb_run_s"] = time.perf_counter() - t0
        if proc.returncode:
            raise RuntimeError(f"the CLI run failed ({proc.returncode}): {proc.stderr[-1500:]}")
        with streamlit_server(home / "app", extra_env=_llm_env(llm)) as url, chromium() as page:
            page.goto(url + "/")
            page.get_by_role("button", name="Start analysis").wait_for(state="visible")
            for date in DATES[:2]:  # the first warms the server up, as in the CLI's own process
                fill_run_form(page, TICKERS[0], date)
                page.evaluate(DONE_OBSERVER_JS, [TICKERS[0], date])
                click = time.time()
                page.get_by_role("button", name="Start analysis").click()
                page.wait_for_function("() => window.__taDone !== null", timeout=300_000)
                out["app_1mb_run_s"] = page.evaluate("() => window.__taDone") - click
        saved = json.loads((home / "app" / "results" / TICKERS[0] / DATES[1] / "state.json").read_text("utf-8"))
        if BIG_REPORT not in saved["state"]["market_report"]:
            raise RuntimeError("the 1 MB answer did not reach the saved report")
    return out


def _r(x):
    return round(x, 3) if isinstance(x, float) else x


def run() -> dict:
    from tests.fake_openai import FakeOpenAIServer

    with tempfile.TemporaryDirectory(prefix="ta_bench_sessions_") as tmp:
        home = Path(tmp)
        with FakeOpenAIServer(latency_s=LATENCY_S) as llm:
            threads, threads_cpu = _thread_rounds(llm)
            sessions, sessions_cpu = _session_rounds(llm, home / "app", DATES)
            defaults, defaults_cpu = _session_rounds(llm, home / "defaults", DATES[:2], STREAMLIT_DEFAULTS)
        big = _one_mb(home / "big")
    return {
        "threads3_run_s": _r(statistics.median(threads)),
        "sessions3_run_s": _r(statistics.median(sessions)),
        "sessions3_vs_threads3": _r(statistics.median(sessions) / statistics.median(threads)),
        "sessions3_run_max_s": _r(max(sessions)),
        "threads3_cpu_s": _r(statistics.median(threads_cpu)),
        "sessions3_server_cpu_s": _r(statistics.median(sessions_cpu)),
        "sessions3_streamlit_defaults_run_s": _r(statistics.median(defaults)),
        "sessions3_streamlit_defaults_server_cpu_s": _r(statistics.median(defaults_cpu)),
        "cli_1mb_run_s": _r(big["cli_1mb_run_s"]),
        "app_1mb_run_s": _r(big["app_1mb_run_s"]),
        "app_1mb_vs_cli": _r(big["app_1mb_run_s"] / big["cli_1mb_run_s"]),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
