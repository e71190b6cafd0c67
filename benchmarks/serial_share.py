"""What of a build is serial, counted in CPU time so that a loaded machine does not move it (issue 29).

Wall-clock speed-up of two workers over one needs a quiet machine; this counts instead. The build runs
in one process (`--workers 1` is the in-process engine) with every task timed by its own CPU time
(`time.process_time` around `run_task`); what the process spent outside tasks is the driver's
(planning, stage construction, finalize: serial by nature). From the task times, each phase's span
on `w` workers is that of greedy list scheduling in the order the build submits its tasks (the pool
engine hands a free worker the next task, heaviest first where the phase gives weights, which the
in-process engine cannot show: greedy in submission order is the conservative estimate), phases one
after the other, plus the driver's time. The predicted speed-up is `T(1) / T(2)`; it leaves out
what two processes cost more than one (each worker builds its own stages once, IPC), which the CPU
ratio of a real two-worker run shows.

    python benchmarks/serial_share.py [--docs 50000] [--repeats 3] [--src before=/tmp/base/src]
        [--src after=src] [--out benchmarks/results/serial_share.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

RESULTS = HERE / "results" / "serial_share.json"

# Run in a child process with the source tree under test first on sys.path.
CHILD = r"""
import json, sys, time
t0, c0 = time.monotonic(), time.process_time()
import thresher.run.phases as phases
from thresher.config import RunConfig
from thresher.run.build import build

tasks = []
real = phases.run_task

def timed(fn, result_type, ctx, task_id, *args):
    c, w = time.process_time(), time.monotonic()
    try:
        return real(fn, result_type, ctx, task_id, *args)
    finally:
        tasks.append((task_id, time.process_time() - c, time.monotonic() - w))

phases.run_task = timed
corpus, out = sys.argv[1], sys.argv[2]
result = build([corpus], out, RunConfig.from_dict({"exec": {"engine": "pool", "workers": 1}}))
json.dump({"tasks": tasks, "cpu_s": time.process_time() - c0, "wall_s": time.monotonic() - t0,
           "shards": [(s["path"], s["sha256"]) for s in result.manifest["shards"]]}, sys.stdout)
"""


def phase_of(task_id: str) -> str:
    """`scan-000003` → scan, `cluster` → cluster, `url_keys-000001` → url_keys."""
    head, _, tail = task_id.rpartition("-")
    return head if head and tail.isdigit() else task_id


def span(times: list[float], workers: int) -> float:
    """Greedy list scheduling in submission order: each task to the worker free first."""
    free = [0.0] * workers
    for t in times:
        i = free.index(min(free))
        free[i] += t
    return max(free)


def model(run: dict, workers: int) -> dict:
    phases: dict[str, list[float]] = {}
    for task_id, cpu, _ in run["tasks"]:
        phases.setdefault(phase_of(task_id), []).append(cpu)
    in_tasks = sum(cpu for _, cpu, _ in run["tasks"])
    driver = run["cpu_s"] - in_tasks
    spans = {p: span(times, workers) for p, times in phases.items()}
    return {"driver_s": round(driver, 2), "phase_span_s": {p: round(s, 2) for p, s in spans.items()},
            "total_s": round(driver + sum(spans.values()), 2)}


def one_run(data: Path, src: Path) -> dict:
    out = Path(tempfile.mkdtemp(prefix="thresher-serial-")) / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(src.parent)]))
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, str(data), str(out)], env=env, capture_output=True,
                              text=True, check=False)
    finally:
        subprocess.run(["rm", "-rf", str(out.parent)], check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    run = json.loads(proc.stdout)
    one, two = model(run, 1), model(run, 2)
    largest = sorted(((cpu, task_id) for task_id, cpu, _ in run["tasks"]), reverse=True)[:5]
    return {
        "cpu_s": round(run["cpu_s"], 2),
        "wall_s": round(run["wall_s"], 2),
        "load_1min": round(os.getloadavg()[0], 2),
        "one_worker": one,
        "two_workers": two,
        "predicted_speedup": round(one["total_s"] / two["total_s"], 3),
        "largest_tasks_cpu_s": [(t, round(c, 2)) for c, t in largest],
        "shards": run["shards"],
    }


def main() -> int:
    from scale_contract import corpus

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--src", action="append", default=[], help="NAME=DIR: a source tree to build with")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    sources = dict(s.split("=", 1) for s in args.src) or {"current": str(HERE.parent / "src")}
    data = corpus(args.docs)
    runs: dict[str, list[dict]] = {name: [] for name in sources}
    for _ in range(args.repeats):
        for name, src in sources.items():
            row = one_run(data, Path(src).resolve())
            runs[name].append(row)
            shown = {k: v for k, v in row.items() if k != "shards"}
            print(name, json.dumps(shown), file=sys.stderr, flush=True)
    summary = {}
    for name, rows in runs.items():
        summary[name] = {
            "predicted_speedup": statistics.median(r["predicted_speedup"] for r in rows),
            "cpu_s": statistics.median(r["cpu_s"] for r in rows),
            "driver_s": statistics.median(r["one_worker"]["driver_s"] for r in rows),
            "two_workers_total_s": statistics.median(r["two_workers"]["total_s"] for r in rows),
            "two_workers_phase_span_s": {
                p: statistics.median(r["two_workers"]["phase_span_s"].get(p, 0.0) for r in rows)
                for p in sorted({p for r in rows for p in r["two_workers"]["phase_span_s"]})
            },
            "runs": len(rows),
        }
    result = {
        "benchmark": "serial_share",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "documents": args.docs,
        "sources": sources,
        "summary": summary,
        "runs": runs,
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
