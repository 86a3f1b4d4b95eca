"""Ours beside the reference TradingAgents (v0.3.0) in the same bench run, each figure a ratio ours / theirs.

The reference is never part of this project: the bench finds it and the side-by-side scripts at paths.

- ``TA_PERF_DIR``: the folder of side-by-side scripts (``bench_graph_side_by_side.py``, ``bench_memlog.py``,
  their workers and ``setup.sh``); default ``../shared/perf`` beside this checkout.
- ``PEER_SRC`` / ``PEER_PY``: the reference's source tree and its venv's python; defaults
  ``$PERF_TMP/peer`` and ``$PERF_TMP/peerenv/bin/python`` (``PERF_TMP`` default ``<tempdir>/perf``), where
  that folder's ``setup.sh`` puts them (its README says how: ``PEER_GIT=<git dir of the reference>``).

When either is missing the module prints a note and reports nothing (``make bench`` goes on).
Figures (medians of interleaved runs against one fake OpenAI-compatible server, 0 ms per model call;
``TA_REF_REPS`` runs each, 31 unless set: single runs spread ±15% on a shared machine; with 7 the
framework ratio moved ±5% between runs minutes apart, with 15 ±4%):

- ``ref_framework_run_unstreamed_vs_ref``: our whole ``propagate()`` with answers unstreamed / the reference's;
- ``ref_framework_run_streamed_vs_ref``: ours with our defaults (streamed answers) / the reference's (unstreamed);
- ``ref_first_run_vs_ref``: the first run in a new process (importing the engine, building the graph and its
  models, which imports the model clients, + the first propagate) /
  the reference's; ``ref_*_s`` the seconds behind each ratio;
- ``ref_memlog_first_open_vs_ref_10k``: a store on a 10,000-entry log this side never opened (so ours
  builds its index) / the reference's log reader doing the same on the same entries.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the performance issue's goal 1 (unstreamed 1.0, streamed 1.1, the first run in a new process 1.0)
GOALS: dict[str, tuple[str, float]] = {
    "ref_framework_run_unstreamed_vs_ref": ("<=", 1.0),
    "ref_framework_run_streamed_vs_ref": ("<=", 1.1),
    "ref_first_run_vs_ref": ("<=", 1.0),
    "ref_memlog_first_open_vs_ref_10k": ("<=", 1.0),
}


def locations() -> dict[str, Path]:
    perf_tmp = Path(os.environ.get("PERF_TMP") or os.path.join(tempfile.gettempdir(), "perf"))
    return {
        "perf": Path(os.environ.get("TA_PERF_DIR") or ROOT.parent / "shared" / "perf"),
        "perf_tmp": perf_tmp,
        "peer_src": Path(os.environ.get("PEER_SRC") or perf_tmp / "peer"),
        "peer_py": Path(os.environ.get("PEER_PY") or perf_tmp / "peerenv" / "bin" / "python"),
    }


def missing(loc: dict[str, Path]) -> str | None:
    if not (loc["perf"] / "bench_graph_side_by_side.py").is_file():
        return f"no side-by-side scripts at {loc['perf']} (set TA_PERF_DIR)"
    if not (loc["peer_src"] / "tradingagents" / "graph" / "trading_graph.py").is_file():
        return f"no reference source at {loc['peer_src']} (set PEER_SRC, or run {loc['perf']}/setup.sh)"
    if not os.access(loc["peer_py"], os.X_OK):
        return f"no reference venv python at {loc['peer_py']} (set PEER_PY, or run {loc['perf']}/setup.sh)"
    return None


def _script(loc: dict[str, Path], name: str, args: list[str], out: Path, out_env: str | None = None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRADINGAGENTS_")}
    env.update({"PROJECT": str(ROOT), "OURS_PY": sys.executable, "PEER_PY": str(loc["peer_py"]),
                "PEER_SRC": str(loc["peer_src"]), "PERF_TMP": str(loc["perf_tmp"])})
    env.pop("PYTHONPATH", None)
    if out_env:
        env[out_env] = str(out)
    log = out.with_suffix(".log")
    with open(log, "w") as f:
        proc = subprocess.run([sys.executable, str(loc["perf"] / name), *args], cwd=ROOT, env=env,
                              stdout=f, stderr=subprocess.STDOUT, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed ({proc.returncode}); its output: {log}\n" + log.read_text()[-2000:])


def run() -> dict:
    loc = locations()
    why = missing(loc)
    if why:
        print(f"  note: the reference is not measured: {why}", flush=True)
        return {}
    out: dict = {}
    work = Path(tempfile.mkdtemp(prefix="ta_bench_ref_"))
    reps = int(os.environ.get("TA_REF_REPS", "31"))
    graph = work / "graph.json"
    _script(loc, "bench_graph_side_by_side.py",
            ["--reps300", "0", "--reps0", str(reps), "--sides0", "ours_default,ours_nostream,peer", "--out", str(graph)],
            graph)
    s = json.loads(graph.read_text())["summary"]
    peer = s["0ms/peer"]["propagate_s"]
    out["ref_framework_run_0ms_s"] = round(peer, 4)
    out["ref_ours_run_unstreamed_0ms_s"] = round(s["0ms/ours_nostream"]["propagate_s"], 4)
    out["ref_ours_run_streamed_0ms_s"] = round(s["0ms/ours_default"]["propagate_s"], 4)
    out["ref_framework_run_unstreamed_vs_ref"] = round(out["ref_ours_run_unstreamed_0ms_s"] / peer, 3)
    out["ref_framework_run_streamed_vs_ref"] = round(out["ref_ours_run_streamed_0ms_s"] / peer, 3)

    def first(side: str) -> float:  # what a CLI run waits for: the imports, building the graph, the first run
        row = s[f"first/{side}"]
        return (row.get("import_s") or 0.0) + (row.get("init_s") or 0.0) + row["propagate_s"]

    out["ref_first_run_s"] = round(first("peer"), 3)
    out["ref_ours_first_run_s"] = round(first("ours_default"), 3)
    out["ref_first_run_vs_ref"] = round(out["ref_ours_first_run_s"] / out["ref_first_run_s"], 3)

    memlog = work / "memlog.json"
    _script(loc, "bench_memlog.py", [str(reps), "--sizes", "10000", "--ops", "store", "--modes", "first"],
            memlog, out_env="MEMLOG_OUT")
    row = json.loads(memlog.read_text())["store/first/10000"]
    out["ref_memlog_first_open_ms_10k"] = round(row["peer_ms"], 2)
    out["ref_ours_memlog_first_open_ms_10k"] = round(row["ours_ms"], 2)
    out["ref_memlog_first_open_vs_ref_10k"] = round(row["ours_ms"] / row["peer_ms"], 3)
    return out
