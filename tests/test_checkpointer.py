"""The per-ticker SQLite checkpointer with a real LangGraph graph."""

from __future__ import annotations

import hashlib
import threading
import time
from operator import add
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph

from tradingagents.config import resolve_config
from tradingagents.graph.checkpointer import (
    checkpoint_path,
    checkpoint_step,
    clear_all_checkpoints,
    clear_checkpoint,
    get_checkpointer,
    has_checkpoint,
    list_checkpoints,
    run_signature,
    thread_id,
)
from tradingagents.validation import ValidationError


def _kept() -> None:
    """Wait until connections handed back are kept (that happens off the closing thread)."""
    from tradingagents.storage import sqlite_checkpoint

    sqlite_checkpoint._IDLE.settle()


class S(TypedDict, total=False):
    company_of_interest: str
    trade_date: str
    trail: Annotated[list[str], add]


def _graph(counts: dict[str, int], *, fail_at: str | None = None, nodes=("n1", "n2", "n3"), sleep=0.0):
    """A linear graph; ``fail_at`` raises on that node's first call only."""
    lock = threading.Lock()

    def make(name):
        def node(state: S) -> dict:
            with lock:
                counts[name] = counts.get(name, 0) + 1
                first = counts[name] == 1
            if sleep:
                time.sleep(sleep)
            if name == fail_at and first:
                raise RuntimeError(f"boom at {name}")
            return {"trail": [name]}

        return node

    g = StateGraph(S)
    for name in nodes:
        g.add_node(name, make(name))
    g.add_edge(START, nodes[0])
    for a, b in zip(nodes, nodes[1:], strict=False):
        g.add_edge(a, b)
    g.add_edge(nodes[-1], END)
    return g


def _cfg(tid):
    return {"configurable": {"thread_id": tid}}


def test_interrupted_run_resumes_without_rerunning_finished_nodes():
    config = resolve_config({})
    tid = thread_id("NVDA", "2024-05-10", run_signature(["market"], 1, 1, "stock"))
    counts: dict[str, int] = {}
    with get_checkpointer(config, "NVDA") as saver:
        graph = _graph(counts, fail_at="n2").compile(checkpointer=saver)
        with pytest.raises(RuntimeError, match="boom at n2"):
            graph.invoke(
                {"company_of_interest": "NVDA", "trade_date": "2024-05-10", "trail": []},
                _cfg(tid),
                durability="sync",
            )
    assert counts == {"n1": 1, "n2": 1}
    step_after_failure = checkpoint_step(config, "NVDA", tid)
    assert step_after_failure is not None and step_after_failure >= 0
    assert has_checkpoint(config, "nvda", tid)  # ticker case does not matter

    # a new process would open a new saver: do the same
    with get_checkpointer(config, "NVDA") as saver:
        graph = _graph(counts, fail_at="n2").compile(checkpointer=saver)
        final = graph.invoke(None, _cfg(tid), durability="sync")
    assert counts == {"n1": 1, "n2": 2, "n3": 1}
    assert final["trail"] == ["n1", "n2", "n3"]
    assert checkpoint_step(config, "NVDA", tid) > step_after_failure


def test_thread_id_formula_and_signature_changes():
    sig = run_signature(["market", "news"], 1, 1, "stock")
    tid = thread_id("nvda", "2024-05-10", sig)
    assert tid == hashlib.sha256(f"NVDA:2024-05-10:{sig}".encode()).hexdigest()[:16]
    assert len(tid) == 16 and int(tid, 16) >= 0
    assert sig == run_signature(["market", "news"], 1, 1, "stock", "parallel")  # the config's default mode
    variants = {
        run_signature(["market"], 1, 1, "stock"),
        run_signature(["market", "news"], 2, 1, "stock"),
        run_signature(["market", "news"], 1, 2, "stock"),
        run_signature(["market", "news"], 1, 1, "crypto"),
        run_signature(["market", "news"], 1, 1, "stock", "sequential"),
        sig,
    }
    assert len(variants) == 6
    assert len({thread_id("NVDA", "2024-05-10", s) for s in variants}) == 6
    assert thread_id("NVDA", "2024-05-11", sig) != tid
    assert thread_id("AMD", "2024-05-10", sig) != tid
    # the edge validates (once); the formula itself trusts its caller
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    with pytest.raises(ValidationError):
        TradingAgentsGraph().thread_id("NVDA", "2024-13-01")
    assert TradingAgentsGraph(["market", "news"], config={"analyst_execution": "parallel"}).thread_id(
        "nvda", "2024-05-10") == thread_id("NVDA", "2024-05-10", sig)


def test_database_path_is_per_ticker_and_inside_checkpoint_dir(tmp_path):
    config = resolve_config({"checkpoint_dir": str(tmp_path / "ck")})
    for ticker in ("^GSPC", "BRK-B", "7203.T", ".X"):
        path = checkpoint_path(config, ticker)
        assert path.parent == tmp_path / "ck"
        assert path.name.endswith(".sqlite") and not path.name.startswith(".")
    assert checkpoint_path(config, "brk-b") == checkpoint_path(config, "BRK-B")
    for bad in ("../etc", "a/b", "", "..", "x\x00y"):
        with pytest.raises(ValidationError):
            checkpoint_path(config, bad)
    with get_checkpointer(config, "BRK-B") as saver:
        assert Path(saver.path).exists()
    assert checkpoint_step(config, "AMD", "0" * 16) is None
    assert not checkpoint_path(config, "AMD").exists()  # asking does not create a database


def _run_to_end(config, ticker, date, counts, nodes=("n1", "n2", "n3")):
    tid = thread_id(ticker, date, run_signature(["market"], 1, 1))
    with get_checkpointer(config, ticker) as saver:
        _graph(counts, nodes=nodes).compile(checkpointer=saver).invoke(
            {"company_of_interest": ticker, "trade_date": date, "trail": []}, _cfg(tid), durability="sync"
        )
    return tid


def test_list_and_clear_checkpoints():
    config = resolve_config({})
    assert list_checkpoints(config) == []
    t1 = _run_to_end(config, "NVDA", "2024-05-10", {})
    t2 = _run_to_end(config, "NVDA", "2024-05-13", {})
    t3 = _run_to_end(config, "AMD", "2024-05-10", {})
    listed = list_checkpoints(config)
    assert {(d["ticker"], d["thread_id"], d["date"]) for d in listed} == {
        ("NVDA", t1, "2024-05-10"),
        ("NVDA", t2, "2024-05-13"),
        ("AMD", t3, "2024-05-10"),
    }
    assert all(d["step"] == checkpoint_step(config, d["ticker"], d["thread_id"]) for d in listed)
    assert all(isinstance(d["updated"], str) and d["updated"] for d in listed)
    assert listed[0]["thread_id"] == t3  # newest first

    clear_checkpoint(config, "NVDA", t1)
    assert not has_checkpoint(config, "NVDA", t1)
    assert has_checkpoint(config, "NVDA", t2) and has_checkpoint(config, "AMD", t3)
    clear_checkpoint(config, "MSFT", t1)  # no database: no error

    assert clear_all_checkpoints(config) == 2
    assert list_checkpoints(config) == []
    assert not has_checkpoint(config, "NVDA", t2)
    # a database still works after being cleared
    _run_to_end(config, "NVDA", "2024-05-10", {})
    assert has_checkpoint(config, "NVDA", t1)


def test_clear_all_removes_a_file_that_is_not_a_database():
    config = resolve_config({})
    folder = Path(config["checkpoint_dir"])
    folder.mkdir(parents=True)
    (folder / "JUNK.sqlite").write_bytes(b"this is not sqlite at all" * 100)
    assert list_checkpoints(config) == []
    clear_all_checkpoints(config)
    assert not (folder / "JUNK.sqlite").exists()


def test_two_threads_two_dates_one_ticker_database():
    config = resolve_config({})
    nodes = tuple(f"n{i}" for i in range(6))
    results: dict[str, object] = {}
    counts = {"2024-05-10": {}, "2024-05-13": {}}

    def work(date):
        try:
            results[date] = _run_to_end(config, "NVDA", date, counts[date], nodes=nodes)
        except Exception as exc:  # noqa: BLE001 - surfaced by the assertion below
            results[date] = exc

    threads = [threading.Thread(target=work, args=(d,)) for d in counts]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert all(isinstance(v, str) for v in results.values()), results
    for date, tid in results.items():
        assert counts[date] == dict.fromkeys(nodes, 1)
        assert checkpoint_step(config, "NVDA", tid) == len(nodes)
    assert len({d["thread_id"] for d in list_checkpoints(config)}) == 2


def test_one_saver_shared_by_two_threads():
    config = resolve_config({})
    sig = run_signature(["market"], 1, 1)
    errors: list[BaseException] = []
    with get_checkpointer(config, "NVDA") as saver:
        graph = _graph({}, nodes=("a", "b", "c", "d"), sleep=0.005).compile(checkpointer=saver)

        def work(date):
            try:
                graph.invoke(
                    {"company_of_interest": "NVDA", "trade_date": date, "trail": []},
                    _cfg(thread_id("NVDA", date, sig)),
                    durability="sync",
                )
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(d,)) for d in ("2024-05-10", "2024-05-13")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert errors == []
    for date in ("2024-05-10", "2024-05-13"):
        assert checkpoint_step(config, "NVDA", thread_id("NVDA", date, sig)) == 4


def test_unusable_checkpoint_dir_gives_a_clear_error(tmp_path):
    from tradingagents.graph.checkpointer import CheckpointError

    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a file where the folder should be")
    config = resolve_config({"checkpoint_dir": str(blocker / "ck")})
    with pytest.raises(CheckpointError, match="checkpoint_dir"):
        get_checkpointer(config, "NVDA")


def test_two_runs_creating_a_new_database_at_once_both_succeed(tmp_path):
    """Two first runs of one ticker race to switch its new database to WAL; neither may fail."""
    for i in range(30):
        config = resolve_config({"home": str(tmp_path / f"h{i}")})
        errors: list[BaseException] = []
        barrier = threading.Barrier(2)

        def work(date, config=config, errors=errors, barrier=barrier):
            try:
                barrier.wait(10)
                _run_to_end(config, "NVDA", date, {})
            except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(d,)) for d in ("2024-05-10", "2024-05-13")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert errors == [], f"iteration {i}: {errors!r}"


def test_a_new_database_has_its_tables_and_writes_checkpoints_with_synchronous_normal(tmp_path):
    """A new file gets its tables (and its WAL switch) without syncs, but what the run writes into it
    is written under synchronous=NORMAL, as in every other database."""
    from tradingagents.storage.sqlite_checkpoint import get_checkpointer

    config = resolve_config({"home": str(tmp_path)})
    saver = get_checkpointer(config, "NVDA")
    try:
        conn = saver.conn
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL, not OFF (0)
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"checkpoints", "writes"} <= tables
    finally:
        saver.close(keep=False)


# ------------------------------------------------------------------ damaged databases, space
def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not sqlite at all" * 100)


def _truncated(path: Path) -> None:
    config = resolve_config({})
    _run_to_end(config, "NVDA", "2024-05-10", {})  # a real database with rows …
    _kept()  # (its run's connection written back and kept, as it is a moment after a run: the damage comes later)
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2 + 100])  # … cut in the middle of a page
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def _foreign_schema(path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, blob TEXT)")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("damage", [_garbage, _truncated, _foreign_schema])
def test_a_damaged_database_is_moved_aside_and_a_fresh_run_starts(damage, caplog):
    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    path.parent.mkdir(parents=True, exist_ok=True)
    damage(path)
    tid = thread_id("NVDA", "2024-05-10", run_signature(["market"], 1, 1))
    assert not has_checkpoint(config, "NVDA", tid)  # asking never raises on it
    with caplog.at_level("WARNING"), get_checkpointer(config, "NVDA") as saver:
        assert saver.warnings and "moved aside" in saver.warnings[0] and str(path.parent) in saver.warnings[0]
        counts: dict[str, int] = {}
        _graph(counts).compile(checkpointer=saver).invoke(
            {"company_of_interest": "NVDA", "trade_date": "2024-05-10", "trail": []}, _cfg(tid), durability="sync"
        )
    assert counts == {"n1": 1, "n2": 1, "n3": 1}
    assert has_checkpoint(config, "NVDA", tid)
    aside = [p for p in path.parent.iterdir() if p.name.startswith("NVDA.sqlite.corrupt-")]
    assert [p.name for p in aside if not p.name.endswith(("-wal", "-shm"))] and "moved it aside" in caplog.text
    assert {d["ticker"] for d in list_checkpoints(config)} == {"NVDA"}  # the copy is not listed
    with get_checkpointer(config, "NVDA") as again:
        assert again.warnings == []  # the fresh database is healthy


def test_a_damaged_database_does_not_block_the_ticker_in_a_full_run():
    from tradingagents.graph.trading_graph import TradingAgentsGraph

    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    path.parent.mkdir(parents=True, exist_ok=True)
    _garbage(path)
    events = []
    _, rating = TradingAgentsGraph(["market"]).propagate("NVDA", "2024-05-10", on_event=events.append)
    started = next(e for e in events if e.kind == "run_started")
    assert started.data["warnings"] and "moved aside" in started.data["warnings"][0]
    finished = next(e for e in events if e.kind == "run_finished")
    assert finished.data["record"]["meta"]["warnings"] == started.data["warnings"]


def test_a_cleared_checkpoint_gives_its_space_back():
    config = resolve_config({})
    big = "x" * 1_000_000  # a 1 MB answer, checkpointed at every step

    class B(TypedDict, total=False):
        trail: Annotated[list[str], add]

    graph = StateGraph(B)
    names = [f"n{i}" for i in range(8)]
    for name in names:
        graph.add_node(name, lambda state, name=name: {"trail": [big + name]})
    graph.add_edge(START, names[0])
    for a, b in zip(names, names[1:], strict=False):
        graph.add_edge(a, b)
    graph.add_edge(names[-1], END)
    tid = "f" * 16
    with get_checkpointer(config, "NVDA") as saver:
        graph.compile(checkpointer=saver).invoke({"trail": []}, _cfg(tid), durability="sync")
    path = checkpoint_path(config, "NVDA")

    def size() -> int:
        return sum(Path(str(path) + s).stat().st_size for s in ("", "-wal") if Path(str(path) + s).exists())

    assert size() > 20_000_000  # the run's checkpoints really were big
    clear_checkpoint(config, "NVDA", tid)
    assert size() < 200_000
    assert not has_checkpoint(config, "NVDA", tid)


# ------------------------------------------------------------------ kept connections, deferred writes
def _put_checkpoints(saver, tid: str, n: int) -> None:
    """``n`` steps of a real graph through ``saver`` (each step's checkpoint goes through the writer)."""
    counts: dict[str, int] = {}
    nodes = tuple(f"n{i}" for i in range(n))
    _graph(counts, nodes=nodes).compile(checkpointer=saver).invoke(
        {"company_of_interest": "NVDA", "trade_date": "2024-05-10", "trail": []}, _cfg(tid), durability="sync")
    assert counts == dict.fromkeys(nodes, 1)


def test_a_closed_savers_connection_serves_the_next_saver_of_an_unchanged_file():
    config = resolve_config({})
    with get_checkpointer(config, "NVDA") as first:
        _put_checkpoints(first, "a" * 16, 2)
        conn = first.conn
    _kept()
    with get_checkpointer(config, "NVDA") as second:
        assert second.conn is conn  # kept open: no new open, check or set-up
        assert second.get_tuple(_cfg("a" * 16)) is not None
    with get_checkpointer(config, "MSFT") as other:
        assert other.conn is not conn  # another ticker's file has its own


@pytest.mark.parametrize("change", ["garbage", "removed", "replaced"])
def test_a_kept_connection_is_not_used_once_the_file_changed(change):
    import sqlite3

    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    with get_checkpointer(config, "NVDA") as first:
        _put_checkpoints(first, "b" * 16, 2)
        conn = first.conn
    _kept()
    if change == "garbage":
        _garbage(path)
    elif change == "removed":
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    else:  # another program wrote a database of its own in its place
        path.unlink()
        other = sqlite3.connect(path)
        other.execute("CREATE TABLE unrelated (x)")
        other.commit()
        other.close()
    with get_checkpointer(config, "NVDA") as second:
        assert second.conn is not conn
        if change == "garbage":
            assert second.warnings and "moved aside" in second.warnings[0]
        _put_checkpoints(second, "c" * 16, 2)
    assert has_checkpoint(config, "NVDA", "c" * 16)
    assert not has_checkpoint(config, "NVDA", "b" * 16)


def test_deferred_writes_are_all_in_the_database_when_the_saver_closes():
    import sqlite3

    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    with get_checkpointer(config, "NVDA") as saver:
        _put_checkpoints(saver, "d" * 16, 12)
    reader = sqlite3.connect(path)  # another connection, as another process would read it
    try:
        n = reader.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", ("d" * 16,)).fetchone()[0]
    finally:
        reader.close()
    assert n >= 13  # the input checkpoint and one per step


def test_a_failed_deferred_write_is_raised_and_the_connection_not_kept():
    import sqlite3

    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    saver = get_checkpointer(config, "NVDA")
    _put_checkpoints(saver, "e" * 16, 1)
    saver.flush()
    vandal = sqlite3.connect(path)  # the table disappears under the run (a disk-level mishap)
    vandal.execute("DROP TABLE writes")
    vandal.commit()
    vandal.close()
    graph = _graph({}, nodes=("m1", "m2", "m3")).compile(checkpointer=saver)
    with pytest.raises(sqlite3.OperationalError, match="writes"):
        graph.invoke({"company_of_interest": "NVDA", "trade_date": "2024-05-10", "trail": []}, _cfg("f" * 16),
                     durability="sync")
        saver.flush()  # when the graph ended before the failure came back
    conn = saver.conn
    saver.close()
    _kept()
    with get_checkpointer(config, "NVDA") as again:
        assert again.conn is not conn


def test_a_forked_child_never_uses_its_parents_kept_connections():
    import os

    from tradingagents.storage import sqlite_checkpoint

    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    with get_checkpointer(config, "NVDA") as saver:
        _put_checkpoints(saver, "g" * 16, 1)
    _kept()
    assert sqlite_checkpoint._IDLE._idle  # the parent keeps one
    pid = os.fork()
    if pid == 0:  # the child: nothing kept is lent to it
        os._exit(0 if sqlite_checkpoint._IDLE.take(path) is None else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    with get_checkpointer(config, "NVDA") as parent:  # the parent's connection is still good
        assert parent.get_tuple(_cfg("g" * 16)) is not None


def test_every_finished_step_is_in_the_database_before_the_next_model_call(monkeypatch):
    """The saver queues its writes; the fence writes them before each model call. Without the fence
    the database would lag the calls (the queue waits for the next read or for close).

    The database is read where the model is called (after every callback of the call's start, in
    whatever order LangChain runs them), and each call is matched with its own graph step (the
    call's ``langgraph_step``): the database must hold the checkpoint of the step before it. A node
    that calls its model twice in one step (a structured answer that did not validate, then plain
    text) has no new step in between."""
    import sqlite3

    from tradingagents.graph.trading_graph import TradingAgentsGraph
    from tradingagents.llm_clients.offline.model import OfflineChatModel

    config = resolve_config({"analyst_execution": "sequential"})
    path = checkpoint_path(config, "NVDA")
    seen: list[tuple[str, int, int]] = []  # (node, its step, the last step whose checkpoint is in the database)
    generate = OfflineChatModel._generate

    def reading_generate(self, messages, stop=None, run_manager=None, **kwargs):
        reader = sqlite3.connect(path)  # what another process (a resume after a kill) would find
        try:
            stored = reader.execute("SELECT MAX(json_extract(CAST(metadata AS TEXT), '$.step')) "
                                    "FROM checkpoints WHERE checkpoint_ns = ''").fetchone()[0]
        finally:
            reader.close()
        metadata = run_manager.metadata
        seen.append((metadata["langgraph_node"], metadata["langgraph_step"], -2 if stored is None else stored))
        return generate(self, messages, stop=stop, run_manager=run_manager, **kwargs)

    monkeypatch.setattr(OfflineChatModel, "_generate", reading_generate)
    TradingAgentsGraph(["market", "news"], config=config).propagate("NVDA", "2024-05-10")
    assert len({step for _, step, _ in seen}) >= 10, str(seen)  # every model-calling step of the run was read
    assert all(stored >= step - 1 for _, step, stored in seen), str(seen)


def _rows(path, table: str, tid: str) -> int:
    import sqlite3

    reader = sqlite3.connect(path)  # another connection, as another process would read it
    try:
        return reader.execute(f"SELECT COUNT(*) FROM {table} WHERE thread_id = ?", (tid,)).fetchone()[0]
    finally:
        reader.close()


def test_a_steps_checkpoint_is_in_the_database_when_put_returns_and_task_writes_wait_for_a_flush():
    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    tid = "h" * 16
    with get_checkpointer(config, "NVDA") as saver:
        _put_checkpoints(saver, tid, 1)  # the graph's last step saved: nothing left queued
        assert _rows(path, "checkpoints", tid) >= 2 and not saver._queued
        last = saver.get_tuple(_cfg(tid)).config
        before = _rows(path, "writes", tid)
        saver.put_writes(last, [("trail", ["x"])], "task-1")  # a task that finished beside others
        assert saver._queued and _rows(path, "writes", tid) == before  # queued for the next flush
        saver.flush()
        assert _rows(path, "writes", tid) == before + 1 and not saver._queued


def test_a_flush_returns_only_once_a_flush_in_progress_on_another_thread_is_written(monkeypatch):
    """Two analysts: one's fence is writing the queue (a slow disk) when the other's model call starts.
    The second fence finds the queue empty, and must still wait: the writes it has to find in the
    database are the first one's."""
    import sqlite3

    config = resolve_config({})
    path = checkpoint_path(config, "NVDA")
    tid = "i" * 16
    with get_checkpointer(config, "NVDA") as saver:
        _put_checkpoints(saver, tid, 1)
        last = saver.get_tuple(_cfg(tid)).config
        saver.put_writes(last, [("trail", ["y"])], "task-2")
        before = _rows(path, "writes", tid)
        writing = threading.Event()
        real = saver.conn

        class SlowCommit:  # the connection, with a commit that takes its time
            def __getattr__(self, name):
                return getattr(real, name)

            def commit(self):
                writing.set()
                time.sleep(0.5)
                real.commit()

        saver.conn = SlowCommit()
        first = threading.Thread(target=saver.flush)
        first.start()
        assert writing.wait(30)  # the first flush has taken the queue and is committing it
        assert not saver._queued
        saver.flush()  # nothing queued: returns once the first flush's writes are in the database
        assert _rows(path, "writes", tid) == before + 1
        first.join(30)
        saver.conn = real
    assert isinstance(real, sqlite3.Connection)
