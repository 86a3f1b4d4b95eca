"""Memory log and Memories pages at size, timed through Streamlit's AppTest (same process, no browser).

A temporary home gets ``RUNS`` saved runs (one offline run's state.json and report under 20 tickers × 100
days: a watchlist analysed every trading day for five months), a 20,000-entry memory log (three in four settled, 40 tickers, decisions and
reflections of ~600 characters) and a bull memory of 50,000 situations (~60 words each, from a
5,000-word vocabulary). Figures are script-run times of the page (what a rerun costs the server),
not browser paint:

- pages_memory_log_first_s: the first run of the Memory log page (the log parsed, frame built).
- pages_memory_log_rerun_s: the median of ``RERUNS`` reruns with nothing changed (the parsed log
  reused from the cache); ``pages_memory_log_next_page_s`` the median of moving to the next page,
  ``pages_memory_log_filter_s`` of changing the ticker filter.
- pages_memories_first_s: the first run of the Memories page with a query (the 50,000 situations
  opened and indexed); pages_memories_rerun_s the median of reruns with a new query each time.
- pages_list_runs_first_s / pages_list_runs_s: listing the home's ``RUNS`` saved runs (the Run, History,
  Debates, Compare and Watchlist pages do on every rerun): the process's first listing, which reads every
  state.json (a server's warm-up does it before the first page), and the median of ``RERUNS`` listings after
  it, which read only new or changed files.
- pages_list_runs_pg_s: the same listing from a desk database holding ``RUNS`` copies of that run (a
  throwaway PostgreSQL server on 127.0.0.1, Debian's binaries: ``make bench`` installs them), the median of
  ``RERUNS``; ``pages_list_runs_pg_unfilled_s``: the first listing of those rows as an earlier version of the
  app saved them (no ``listing`` column yet: each row's document parsed, and the column then filled).
- pages_audit_first_s / pages_audit_rerun_s: the Audit page (a desk lead signed in) over a trail of
  ``AUDIT_ENTRIES`` entries (a desk of 20 runs a day for a year: sign-ins, job starts, settlements): its
  first visit in the process (every line parsed and its hash checked), and the median of ``RERUNS`` reruns
  that change its filters, each after one more entry is appended (a rerun parses and checks that one).
- pages_switch_max_s: in the same home and session, a switch to each page of the app in turn (as a
  person clicks the sidebar), each page's script run timed; the slowest page, on the second round
  (the first visit of each page is ``pages_switch_first_max_s``: it also imports the page's modules,
  which a server's warm-up does before the first person arrives). ``pages_switch_median_s`` the
  median page; ``pages_switch_slowest`` names the slowest.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

GOALS: dict[str, tuple[str, float]] = {
    "pages_memory_log_rerun_s": ("<=", 2.0),
    "pages_memory_log_next_page_s": ("<=", 2.0),
    "pages_memory_log_filter_s": ("<=", 2.0),
    "pages_memories_rerun_s": ("<=", 2.0),
    "pages_switch_max_s": ("<=", 0.3),  # the performance issue's goal 4: a page switch's script
    "pages_audit_rerun_s": ("<=", 0.3),  # the same goal for a desk lead's Audit page
}

LOG_ENTRIES = 20_000
RUNS = 2_000
SITUATIONS = 50_000
AUDIT_ENTRIES = 20_000
LEAD = "lead@desk.example"
RERUNS = 5
RATINGS = ("Buy", "Overweight", "Hold", "Underweight", "Sell")


def _words(rng: random.Random, vocab: list[str], n: int) -> str:
    return " ".join(rng.choice(vocab) for _ in range(n))


def _write_log(path: Path, rng: random.Random, vocab: list[str], entries: int = LOG_ENTRIES) -> None:
    from tradingagents.agents.utils.memory import SEPARATOR

    tickers = [f"T{i:02d}" for i in range(40)]
    start = dt.date(2000, 1, 3)
    parts = []
    for i in range(entries):
        date = (start + dt.timedelta(days=i // len(tickers))).isoformat()
        ticker, rating = tickers[i % len(tickers)], RATINGS[i % 5]
        decision = f"**Rating**: {rating}\n\n{_words(rng, vocab, 90)}"
        if i % 4 == 3:
            parts.append(f"[{date} | {ticker} | {rating} | pending]\n\nDECISION:\n{decision}")
        else:
            raw, alpha = rng.gauss(0, 0.04), rng.gauss(0, 0.02)
            parts.append(f"[{date} | {ticker} | {rating} | {raw:+.1%} | {alpha:+.1%} | 5d]\n\nDECISION:\n"
                         f"{decision}\n\nREFLECTION:\n{_words(rng, vocab, 90)}\n\n"
                         f"<!-- exact raw={raw!r} alpha={alpha!r} -->")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(p + SEPARATOR for p in parts), encoding="utf-8")


def _write_runs(config: dict) -> None:
    """``RUNS`` saved runs: one offline run's files, copied under 20 tickers × 100 business days."""
    from tradingagents.graph.trading_graph import TradingAgentsGraph
    from tradingagents.storage.files_runs import (
        REPORT_FILE,
        STATE_FILE,
        document_json,
        load_document,
        run_dir,
    )

    TradingAgentsGraph(config={**config, "llm_provider": "offline", "data_vendor": "demo"}).propagate("NVDA", "2024-05-10")
    folder = run_dir(config, "NVDA", "2024-05-10")
    doc, report = load_document(folder / STATE_FILE), (folder / REPORT_FILE).read_bytes()
    days = [d for d in (dt.date(2024, 1, 2) + dt.timedelta(days=i) for i in range(200)) if d.weekday() < 5][:100]
    for i in range(RUNS):
        ticker, day = f"T{i % 20:02d}", days[i // 20].isoformat()
        target = run_dir(config, ticker, day)
        target.mkdir(parents=True, exist_ok=True)
        saved_at = f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000000+00:00"
        (target / STATE_FILE).write_bytes(document_json({**doc, "ticker": ticker, "date": day, "saved_at": saved_at}))
        (target / REPORT_FILE).write_bytes(report)


def _pg_listing(config: dict) -> dict:
    """The desk database's listing of ``RUNS`` runs: the home's first saved run, copied in SQL."""
    import psycopg

    from tests.pg_server import PgServer
    from tradingagents.storage.files_runs import STATE_FILE, load_document, run_dir
    from tradingagents.storage.runs import PgRunRecords

    doc = load_document(run_dir(config, "NVDA", "2024-05-10") / STATE_FILE)
    server = PgServer()
    server.start()
    try:
        url = server.create_database()
        records = PgRunRecords(config, url=url)
        records.save_run(doc["state"], doc["rating"], doc["meta"])
        with psycopg.connect(url) as conn:
            cols = [r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name ="
                                               " 'ta_runs' ORDER BY ordinal_position")]
            picked = ["'T' || lpad((g % 20)::text, 2, '0')" if c == "ticker" else
                      "trade_date + (g / 20 + 1)" if c == "trade_date" else c for c in cols]
            conn.execute(f"INSERT INTO ta_runs ({', '.join(cols)}) SELECT {', '.join(picked)} FROM ta_runs,"
                         f" generate_series(1, {RUNS - 1}) AS g")
        took = []
        for _ in range(RERUNS):
            t0 = time.perf_counter()
            listed = len(records.list_runs())
            took.append(time.perf_counter() - t0)
        if listed != RUNS:
            raise RuntimeError(f"the desk database listed {listed} runs, not {RUNS}")
        with psycopg.connect(url) as conn:
            conn.execute("UPDATE ta_runs SET listing = NULL")
        t0 = time.perf_counter()
        records.list_runs()
        unfilled = time.perf_counter() - t0
        return {"pages_list_runs_pg_s": statistics.median(took), "pages_list_runs_pg_unfilled_s": unfilled}
    finally:
        server.stop()


def _write_memory(path: Path, rng: random.Random, vocab: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(SITUATIONS):
            fh.write(json.dumps({"situation": _words(rng, vocab, 60), "recommendation": _words(rng, vocab, 15)})
                     + "\n")


def _write_audit(path: Path, rng: random.Random) -> None:
    """``AUDIT_ENTRIES`` chained entries, written as the trail's appender writes them (one fsync for the lot)."""
    from tradingagents.storage.audit import _entry, _hash, canonical

    people = [f"pm{i}@desk.example" for i in range(6)]
    prev = ""
    at = 1.7e9
    with open(path, "w", encoding="ascii") as fh:
        for i in range(AUDIT_ENTRIES):
            at += rng.uniform(60, 3000)
            action = ("sign_in", "job_start", "job_start", "settle", "memory_edit")[i % 5]
            entry = _entry(action, rng.choice(people), f"run T{i % 20:02d} 2024-05-10 ({i:06d})",
                           {"run_id": f"{i:06d}", "date": "2024-05-10"} if action != "sign_in" else {}, at=at)
            digest = _hash(canonical(entry, prev))
            fh.write(json.dumps({**entry, "prev": prev, "hash": digest}, sort_keys=True, ensure_ascii=True) + "\n")
            prev = digest


def _audit_page(config: dict) -> dict:
    """The Audit page's first visit and its reruns (see the module docstring)."""
    from streamlit.testing.v1 import AppTest

    from tests.app.apptest_utils import APP
    from tests.app.test_sign_in import AUTH, _user  # the sign-in tests' [auth] secrets and ID-token claims
    from tradingagents.storage import record_audit

    os.environ["TRADINGAGENTS_DESK_LEADS"] = LEAD
    try:
        at = AppTest.from_file(APP, default_timeout=300)
        at.secrets["auth"] = AUTH
        at.user = _user("lead-1", LEAD)
        at.run()
        at.switch_page("pages/audit.py")
        first = _timed(at)
        if not at.success or f" {AUDIT_ENTRIES + 1} entries" not in at.success[0].value:  # and the lead's sign-in
            raise RuntimeError(f"the Audit page said {at.success[0].value!r}")
        reruns = []
        for i in range(RERUNS):
            record_audit(config, "job_start", by=LEAD, target=f"run NVDA 2024-06-{i + 10} (bench)")
            at.multiselect(key="audit_actions").set_value(["settle"] if i % 2 else [])
            reruns.append(_timed(at))
        return {"pages_audit_first_s": first, "pages_audit_rerun_s": statistics.median(reruns),
                "pages_audit_entries": AUDIT_ENTRIES}
    finally:
        os.environ.pop("TRADINGAGENTS_DESK_LEADS", None)


def _switches(at) -> dict:
    from tests.app.apptest_utils import PAGES

    rounds = []
    for _ in range(2):
        took = {}
        for name, path in PAGES.items():
            at.switch_page(path)
            took[name] = _timed(at)
        rounds.append(took)
    first, warm = rounds
    slowest = max(warm, key=warm.__getitem__)
    return {"pages_switch_first_max_s": max(first.values()), "pages_switch_max_s": warm[slowest],
            "pages_switch_median_s": statistics.median(warm.values()), "pages_switch_slowest": slowest}


def _timed(at) -> float:
    t0 = time.perf_counter()
    at.run()
    took = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(f"the page failed: {[e.value for e in at.exception]}")
    return took


def run() -> dict:
    from tests.app.apptest_utils import new_app
    from tradingagents.config import resolve_config

    old_home = os.environ.get("TRADINGAGENTS_HOME")
    with tempfile.TemporaryDirectory(prefix="ta_bench_pages_") as home:
        os.environ["TRADINGAGENTS_HOME"] = home
        try:
            rng = random.Random(7)
            vocab = [f"w{i}" for i in range(5_000)] + ["rates", "selling", "tech", "earnings", "guidance"]
            cfg = resolve_config()
            _write_runs(cfg)
            _write_log(Path(cfg["memory_log_path"]), rng, vocab)
            _write_memory(Path(cfg["memory_dir"]) / "bull_memory.jsonl", rng, vocab)
            _write_audit(Path(cfg["audit_path"]), rng)
            out: dict = {}
            from tradingagents.storage import list_runs

            t0 = time.perf_counter()
            listed = len(list_runs(cfg))
            out["pages_list_runs_first_s"] = time.perf_counter() - t0
            if listed != RUNS + 1:  # and the offline run they were copied from
                raise RuntimeError(f"{listed} saved runs listed, not {RUNS + 1}")
            took = []
            for _ in range(RERUNS):
                t0 = time.perf_counter()
                list_runs(cfg)
                took.append(time.perf_counter() - t0)
            out["pages_list_runs_s"] = statistics.median(took)
            out.update(_pg_listing(cfg))

            at = new_app("run", timeout=300)
            t0 = time.perf_counter()
            at.switch_page("pages/memory_log.py").run()
            out["pages_memory_log_first_s"] = time.perf_counter() - t0
            if at.exception:
                raise RuntimeError(f"the page failed: {[e.value for e in at.exception]}")
            if at.metric[0].value != f"{LOG_ENTRIES:,}":
                raise RuntimeError(f"the Memory log page counted {at.metric[0].value} decisions")
            out["pages_memory_log_rerun_s"] = statistics.median(_timed(at) for _ in range(RERUNS))
            nxt = []
            for page in range(2, 2 + RERUNS):
                at.number_input(key="log_page").set_value(page)
                nxt.append(_timed(at))
            out["pages_memory_log_next_page_s"] = statistics.median(nxt)
            flt = []
            for i in range(RERUNS):
                at.multiselect(key="log_tickers").set_value([f"T{i:02d}"])
                flt.append(_timed(at))
            out["pages_memory_log_filter_s"] = statistics.median(flt)
            out["pages_memory_log_expanders"] = sum(" · " in str(e.label) for e in at.expander)

            at.switch_page("pages/memories.py")
            at.session_state["mem_query"] = "rates selling tech w17 w99"
            out["pages_memories_first_s"] = _timed(at)
            reruns = []
            for i in range(RERUNS):
                at.text_area(key="mem_query").input(f"earnings guidance w{i * 37} w{i * 91} w{i * 7}")
                reruns.append(_timed(at))
            out["pages_memories_rerun_s"] = statistics.median(reruns)
            matches = sum(str(m.value).startswith("**#") for m in at.markdown)
            if matches != 3 or at.metric[0].value != f"{SITUATIONS:,}":
                raise RuntimeError(f"the Memories page showed {matches} matches and {at.metric[0].value} lessons")
            out.update(_switches(at))
            out.update(_audit_page(cfg))
            out["pages_memories_situations"] = SITUATIONS
            out["pages_memory_log_entries"] = LOG_ENTRIES
            out["pages_saved_runs"] = RUNS + 1
            return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}
        finally:
            if old_home is None:
                os.environ.pop("TRADINGAGENTS_HOME", None)
            else:
                os.environ["TRADINGAGENTS_HOME"] = old_home


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
