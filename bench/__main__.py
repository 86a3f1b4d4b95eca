"""`make bench`: run every bench/bench_*.py module, print a table, write bench/results.json.

Each module defines ``GOALS`` ({key: (op, target)}) and ``run() -> dict`` of figures. A module that
fails is reported (and makes the exit code non-zero) without hiding the others' figures.
"""

from __future__ import annotations

import importlib
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OPS = {"<=": lambda v, t: v <= t, ">=": lambda v, t: v >= t}


def _machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem_gib = None
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        mem_gib = round(pages / 2**30, 1)
    except (ValueError, OSError):
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gib": mem_gib,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "unknown"


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def main(argv: list[str]) -> int:
    only = set(argv)
    modules = sorted(p.stem for p in Path(__file__).parent.glob("bench_*.py"))
    if only:
        modules = [m for m in modules if m in only or m.removeprefix("bench_") in only]
    results: dict = {"machine": _machine(), "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "loadavg_start": _loadavg()}
    print(f"load average at the start (/proc/loadavg): {results['loadavg_start']}", flush=True)
    goals: dict = {}
    failed: list[str] = []
    # Benchmarks never touch the user's home.
    with tempfile.TemporaryDirectory(prefix="ta_bench_home_") as home:
        os.environ["TRADINGAGENTS_HOME"] = home
        for name in modules:
            print(f"… {name}", flush=True)
            results.setdefault("loadavg_by_module", {})[name] = _loadavg()
            try:
                mod = importlib.import_module(f"bench.{name}")
                t0 = time.perf_counter()
                figures = mod.run()
                results.update(figures)
                goals.update(getattr(mod, "GOALS", {}))
                print(f"  done in {time.perf_counter() - t0:.1f}s", flush=True)
            except Exception:  # report and go on: one broken bench must not hide the others
                failed.append(name)
                traceback.print_exc()
    results["loadavg_end"] = _loadavg()
    results["goals"] = {k: list(v) for k, v in goals.items()}
    out = Path(__file__).parent / "results.json"
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=2, sort_keys=True))
    os.replace(tmp, out)

    print()
    print(f"Machine: {results['machine']['cpu']}, {results['machine']['cores']} cores, "
          f"{results['machine']['memory_gib']} GiB, Python {results['machine']['python']}")
    print(f"{'figure':<40} {'value':>12}  {'goal':<10} ok")
    print("-" * 70)
    misses = 0
    print(f"Load average (/proc/loadavg): start {results['loadavg_start']}, end {results['loadavg_end']}")
    for key in sorted(k for k in results if k not in ("machine", "started", "goals", "loadavg_start", "loadavg_end")):
        value = results[key]
        if isinstance(value, dict):
            print(f"{key:<40} {'(per item)':>12}")
            for sub, v in value.items():
                print(f"  {sub:<38} {_fmt(v):>12}")
            continue
        goal = goals.get(key)
        mark = ""
        if goal and isinstance(value, (int, float)):
            ok = OPS[goal[0]](value, goal[1])
            mark = "yes" if ok else "NO"
            misses += not ok
        elif goal and value is None:  # a figure with a goal that could not be measured is no pass
            mark = "NO (not measured)"
            misses += 1
        goal_txt = f"{goal[0]} {goal[1]:g}" if goal else ""
        print(f"{key:<40} {_fmt(value):>12}  {goal_txt:<10} {mark}")
    print(f"\nwritten to {out}")
    if failed:
        print(f"FAILED bench modules: {', '.join(failed)}")
    if misses:
        print(f"{misses} figure(s) missed their goal")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
