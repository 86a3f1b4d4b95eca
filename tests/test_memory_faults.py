"""Faults and hostile input: SIGKILLed log writers, forged structure, bad sizes, path traversal."""

from __future__ import annotations

import datetime as dt
import os
import random
import re
import signal
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tradingagents.agents.utils.memory import SEPARATOR, FinancialSituationMemory, TradingMemoryLog

# ---------------------------------------------------------------- SIGKILL at random moments
TICKERS = ("NVDA", "AAPL", "7203.T", "BRK-B")
_START = dt.date(2021, 1, 4)
PLAN = [(TICKERS[i % 4], (_START + dt.timedelta(days=i // 4)).isoformat()) for i in range(4000)]
INDEX = {key: i for i, key in enumerate(PLAN)}
RATINGS = ("Buy", "Overweight", "Hold", "Underweight", "Sell")


def _decision(i: int) -> str:
    # long enough that a write takes a while, and full of things that must not read as structure
    t, d = PLAN[i]
    return f"Decision {i} on {t}.\n[{d} | {t} | Buy | pending]" + SEPARATOR + ("filler text " * 40) + f"\nend {i}"


def _update(i: int) -> dict:
    t, d = PLAN[i]
    return {
        "ticker": t.lower(), "date": d, "raw": (i % 17 - 8) / 313, "alpha": (i % 5 - 2) / 997,
        "holding": 5, "reflection": f"Reflection {i}.\nREFLECTION:\n<!-- exact raw=9 alpha=9 -->",
    }


def _writer(log_path: str, start: int, fd: int) -> None:
    """Runs in a forked child: store decisions in plan order, settle a batch every 4 stores."""
    out = os.fdopen(fd, "w", buffering=1)
    log = TradingMemoryLog({"memory_log_path": log_path})
    for i in range(start, len(PLAN)):
        t, d = PLAN[i]
        if log.store_decision(t, d, _decision(i), rating=RATINGS[i % 5]):
            out.write(f"S {i}\n")  # acknowledged: the call returned
        if i % 4 == 3:
            batch = [INDEX[(e["ticker"], e["date"])] for e in log.get_pending_entries()[:6]]
            out.write("B " + ",".join(map(str, batch)) + "\n")
            n = log.batch_update_with_outcomes([_update(j) for j in batch])
            out.write(f"U {n} " + ",".join(map(str, batch)) + "\n")


def _check_log(log_path: str, acked: set[int], settled_acked: set[int], open_batch: list[int] | None) -> list[dict]:
    log = TradingMemoryLog({"memory_log_path": log_path})
    entries = log.load_entries()
    assert log.problems == [], log.problems
    keys = [(e["ticker"], e["date"]) for e in entries]
    assert len(set(keys)) == len(keys), "duplicate entry"
    present = {INDEX[k]: e for k, e in zip(keys, entries, strict=True)}
    assert acked <= present.keys(), f"acknowledged entries lost: {sorted(acked - present.keys())[:5]}"
    # entries appear in plan order, without a hole
    assert sorted(present) == list(range(len(present)))
    for i, e in present.items():
        assert e["decision"] == _decision(i) and e["rating"] == RATINGS[i % 5]
        if not e["pending"]:
            u = _update(i)
            assert (e["raw"], e["alpha"], e["holding"], e["reflection"]) == (
                u["raw"], u["alpha"], u["holding"], u["reflection"],
            )
    settled = {i for i, e in present.items() if not e["pending"]}
    assert settled_acked <= settled, "an acknowledged settlement was lost"
    if open_batch:  # the batch the kill interrupted is all settled or not at all
        done = [i in settled for i in open_batch]
        assert all(done) or not any(done), f"half-settled batch {open_batch}: {done}"
    return entries


@pytest.mark.slow
def test_memory_log_survives_sigkill_at_random_moments(tmp_path):
    log_path = str(tmp_path / "memory" / "log.md")
    rng = random.Random(20240510)
    acked: set[int] = set()
    settled_acked: set[int] = set()
    kills = 0
    mid_settle = 0
    mid_write = 0  # kills that left a temp file behind: the writer died between mkstemp and replace
    # kill until every kind of kill has been seen often enough: the count decides, not the clock (the
    # deadline only catches a hang; a slow machine simply takes more rounds)
    deadline = time.monotonic() + 480
    start = 0
    while (kills < 120 or len(acked) < 100 or len(settled_acked) < 20 or not mid_settle or not mid_write) \
            and time.monotonic() < deadline:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: never returns into pytest
            code = 0
            try:
                os.close(r)
                _writer(log_path, start, w)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        time.sleep(rng.uniform(0.0, 0.1))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        with os.fdopen(r, "r") as fh:
            lines = fh.read().split("\n")[:-1]  # a cut-off last line carries no acknowledgement
        assert os.WIFSIGNALED(status), "the writer stopped on its own (an exception in the child?)"
        kills += 1
        open_batch = None
        for line in lines:
            kind, _, rest = line.partition(" ")
            if kind == "S":
                acked.add(int(rest))
            elif kind == "B":
                open_batch = [int(x) for x in rest.split(",") if x]
            elif kind == "U":
                settled_acked.update(open_batch or [])
                open_batch = None
        mid_settle += open_batch is not None
        folder = Path(log_path).parent
        mid_write += folder.exists() and any(p.name.endswith(".tmp") for p in folder.iterdir())
        entries = _check_log(log_path, acked, settled_acked, open_batch)
        start = len(entries)
    assert kills >= 100, f"only {kills} kills before the hang guard"
    assert len(acked) >= 50 and len(settled_acked) >= 20 and mid_settle > 0 and mid_write > 0, (
        len(acked), len(settled_acked), mid_settle, mid_write)
    # after all that, a normal writer works and cleans up any temp file a kill left behind
    log = TradingMemoryLog({"memory_log_path": log_path})
    t, d = PLAN[start]
    assert log.store_decision(t, d, _decision(start), rating="Hold")
    leftovers = [p.name for p in Path(log_path).parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []


def _memory_adder(memory_dir: str, worker: int, count: int, fd: int) -> None:
    out = os.fdopen(fd, "w", buffering=1)
    mem = FinancialSituationMemory("bull_memory", {"memory_dir": memory_dir})
    for i in range(count):
        pairs = [(f"w{worker} item {i} part {k} " + "selling tech " * 30, f"{worker}:{i}:{k}") for k in range(3)]
        mem.add_situations(pairs)
        out.write(f"A {worker}:{i}\n")


def _fork(target, *args) -> tuple[int, int]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            target(*args, w)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _read_acks(r: int) -> list[str]:
    with os.fdopen(r, "r") as fh:
        return fh.read().split("\n")[:-1]


def test_memory_appends_from_many_processes_interleave_whole(tmp_path):
    memory_dir = str(tmp_path / "mem")
    children = [_fork(_memory_adder, memory_dir, w, 40) for w in range(6)]
    for pid, r in children:
        assert len(_read_acks(r)) == 40
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    mem = FinancialSituationMemory("bull_memory", {"memory_dir": memory_dir})
    recs = [r for _, r in mem.items()]
    assert mem.problems == [] and len(recs) == 6 * 40 * 3 and len(set(recs)) == len(recs)
    # one add_situations call is one write: its three pairs stay together
    for j in range(0, len(recs), 3):
        assert {x.rsplit(":", 1)[0] for x in recs[j : j + 3]} == {recs[j].rsplit(":", 1)[0]}


@pytest.mark.slow
def test_memory_file_survives_sigkill_of_writers(tmp_path):
    memory_dir = str(tmp_path / "mem")
    rng = random.Random(7)
    acked: set[str] = set()
    for round_no in range(40):
        pid, r = _fork(_memory_adder, memory_dir, round_no, 10_000)
        # the kill lands at a random moment after the writer got going (however loaded the machine is)
        first = os.read(r, 1 << 16).decode()
        time.sleep(rng.uniform(0.0, 0.03))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with os.fdopen(r, "r") as fh:
            lines = (first + fh.read()).split("\n")[:-1]
        acked.update(line[2:] for line in lines)
        mem = FinancialSituationMemory("bull_memory", {"memory_dir": memory_dir})
        recs = [rec for _, rec in mem.items()]
        assert mem.problems == [] and len(set(recs)) == len(recs)
        present = {x.rsplit(":", 1)[0] for x in recs}
        assert acked <= present
        assert len(recs) % 3 == 0, "a torn write must not leave part of a call behind"
    assert len(acked) > 40


def test_a_write_stopped_part_way_leaves_no_part_of_its_call(tmp_path):
    """A SIGKILL can stop write(2) part-way, leaving whole lines of an unfinished call: what the
    killed writer left is never read as lessons, and the next writer cuts it off."""
    memory_dir = tmp_path / "mem"
    mem = FinancialSituationMemory("bull_memory", {"memory_dir": str(memory_dir)})
    mem.add_situations([("first call situation", "kept")])
    path = memory_dir / "bull_memory.jsonl"
    whole = path.read_bytes()
    FinancialSituationMemory("bull_memory", {"memory_dir": str(memory_dir)}).add_situations(
        [("torn call one", "a"), ("torn call two", "b"), ("torn call three", "c")])
    written = path.read_bytes()[len(whole):]
    lines = written.split(b"\n")
    path.write_bytes(whole + lines[0] + b"\n" + lines[1] + b"\n" + lines[2][:9])  # two whole lines and a torn one
    reader = FinancialSituationMemory("bull_memory", {"memory_dir": str(memory_dir)})
    assert [r for _, r in reader.items()] == ["kept"] and reader.problems == []
    reader.add_situations([("after the kill", "next")])
    assert [r for _, r in FinancialSituationMemory("bull_memory", {"memory_dir": str(memory_dir)}).items()] == [
        "kept", "next"]
    after = path.read_bytes()
    assert after.startswith(whole) and b"torn call" not in after


def test_an_unfinished_call_inside_the_file_is_reported_not_indexed(tmp_path):
    memory_dir = tmp_path / "mem"
    FinancialSituationMemory("bull_memory", {"memory_dir": str(memory_dir)}).add_situations(
        [("one", "a"), ("two", "b"), ("three", "c")])
    path = memory_dir / "bull_memory.jsonl"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(lines[0] + b"\n" + lines[1] + b"\n")  # a writer of an older copy stopped after two parts
    FinancialSituationMemory("bull_memory", {"memory_dir": str(memory_dir)})  # (an unfinished tail: nothing yet)
    with open(path, "ab") as fh:  # then someone appended a one-pair call by hand after it
        fh.write(b'{"situation": "later", "recommendation": "d"}\n')
    mem = FinancialSituationMemory("bull_memory", {"memory_dir": str(memory_dir)})
    assert [r for _, r in mem.items()] == ["d"]
    assert len(mem.problems) == 1 and "lines 1–2 skipped" in mem.problems[0]


# ---------------------------------------------------------------- hostile text (hypothesis)
HOSTILE = st.sampled_from(
    [
        SEPARATOR, "<!-- ENTRY_END -->", "\n[2024-05-10 | NVDA | Buy | pending]\n", "[2024-05-10 | NVDA | Buy | +1.0% | +1.0% | 5d]",
        "\nDECISION:\n", "\nREFLECTION:\n", "REFLECTION:", "\\", "\n\\", "\n<!-- exact raw=1 alpha=2 -->", "\n\n",
        "\r\n", "\u2028", "\x00", "]", "|", "\n<", "\n[",
    ]
)
HOSTILE_TEXT = st.lists(st.one_of(HOSTILE, st.text(max_size=12)), max_size=8).map("".join)
_FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_FAST
@given(decision=HOSTILE_TEXT, reflection=HOSTILE_TEXT, raw=st.floats(-0.99, 5.0), alpha=st.floats(-5.0, 5.0))
def test_hostile_model_text_reads_back_identical_and_forges_nothing(ta_home, decision, reflection, raw, alpha):
    import tempfile

    folder = tempfile.mkdtemp(dir=ta_home)
    cfg = {"memory_log_path": os.path.join(folder, "log.md")}
    log = TradingMemoryLog(cfg)
    assert log.store_decision("NVDA", "2024-05-10", decision, rating="Buy")
    assert log.store_decision("AAPL", "2024-05-10", reflection, rating="Sell")
    assert log.batch_update_with_outcomes(
        [{"ticker": "NVDA", "date": "2024-05-10", "raw": raw, "alpha": alpha, "holding": 5, "reflection": reflection}]
    ) == 1
    fresh = TradingMemoryLog(cfg)
    entries = fresh.load_entries()
    assert fresh.problems == []
    assert [(e["ticker"], e["pending"]) for e in entries] == [("NVDA", False), ("AAPL", True)]
    assert entries[0]["decision"] == decision and entries[0]["reflection"] == reflection
    assert entries[0]["raw"] == raw and entries[0]["alpha"] == alpha
    assert entries[1]["decision"] == reflection
    assert Path(cfg["memory_log_path"]).read_text().count(SEPARATOR) == 2


@_FAST
@given(pairs=st.lists(st.tuples(HOSTILE_TEXT, HOSTILE_TEXT), min_size=1, max_size=5))
def test_hostile_memory_texts_survive_a_reload(ta_home, pairs):
    import tempfile

    cfg = {"memory_dir": tempfile.mkdtemp(dir=ta_home)}
    mem = FinancialSituationMemory("bull_memory", cfg)
    mem.add_situations(pairs)
    again = FinancialSituationMemory("bull_memory", cfg)
    assert again.items() == pairs and again.problems == []
    for situation, _ in pairs:
        top = again.get_memories(situation, len(pairs))
        assert len(top) == len(pairs)
        assert max(m["similarity_score"] for m in top) in (0.0, 1.0)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(min_value=-(10**12), max_value=10**12))
def test_n_matches_is_capped_or_refused(ta_home, n):
    mem = FinancialSituationMemory("nmatch", {"memory_dir": str(ta_home / "nm")})
    if len(mem) == 0:  # the first example fills it; later ones reload it from disk
        mem.add_situations([("selling in tech", "a"), ("rates rising", "b"), ("tech rally", "c")])
    assert len(mem) == 3
    if n < 0:
        with pytest.raises(ValueError, match="0 or more"):
            mem.get_memories("selling in tech", n)
    else:
        out = mem.get_memories("selling in tech", n)
        assert len(out) == min(n, 3)
        assert [m["recommendation"] for m in out] == ["a", "c", "b"][: len(out)]


def _snapshot(tmp_path: Path, home: Path) -> set[str]:
    """Every path under tmp_path except inside the home, plus the session folder's top level."""
    out = {str(p) for p in tmp_path.parent.iterdir()}
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        if Path(dirpath) == home:
            dirnames[:] = []
            continue
        out.update(os.path.join(dirpath, n) for n in dirnames + filenames)
    return out


def _deep_home(tmp_path: Path) -> Path:
    home = tmp_path / "a" / "b" / "c" / "home"  # so that ../../.. lands in a folder we can list
    home.mkdir(parents=True, exist_ok=True)
    return home


TRAVERSAL = [
    "../escape", "../../escape", "../" * 8 + "tmp/escape", "/tmp/escape", "..", ".", "", "a/../../b",
    "bull_memory/../../x", "..\\x", "x\x00y", "~", "~/x", "$HOME", "bull memory", "é", "CON", "a" * 65,
]


@pytest.mark.parametrize("name", TRAVERSAL)
def test_role_names_cannot_reach_outside_the_home(tmp_path, name):
    home = _deep_home(tmp_path)
    before = _snapshot(tmp_path, home)
    if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
        mem = FinancialSituationMemory(name, {"home": str(home)})  # e.g. "CON": a plain POSIX file name
        mem.add_situations([("a", "b")])
        assert mem.path.parent == home / "memory"
    else:
        with pytest.raises(ValueError, match="Invalid memory name"):
            FinancialSituationMemory(name, {"home": str(home)})
    assert _snapshot(tmp_path, home) == before


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(max_size=70))
def test_any_role_name_is_a_safe_file_name_or_refused(tmp_path, name):
    home = _deep_home(tmp_path)
    before = _snapshot(tmp_path, home)
    try:
        mem = FinancialSituationMemory(name, {"home": str(home)})
    except ValueError as exc:
        assert "letters, digits" in str(exc)
    else:
        mem.add_situations([("a", "b")])
        assert mem.path.parent == home / "memory" and mem.path.name == name + ".jsonl"
        assert "/" not in name and name not in (".", "..")
    assert _snapshot(tmp_path, home) == before
