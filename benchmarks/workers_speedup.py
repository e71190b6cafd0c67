"""Two pool workers against one (issue 29): the scale contract's default build of recombined real
paragraphs (`scale_contract.corpus`, 50k documents by default) with `--workers 1` and `--workers 2`,
interleaved repeats, medians of wall and CPU time, and the phases' wall time from stats.json.

The machine is shared: each run records the 1-minute load average before and after it, and the
ratios (wall of one worker over wall of two; CPU of two over CPU of one) are the figures to compare.
`--src NAME=DIR` (repeatable) builds with another source tree on PYTHONPATH (e.g. the code before a
change, exported with `git archive`), interleaved with the others, so before and after meet the same
load.

    python benchmarks/workers_speedup.py [--docs 50000] [--repeats 3] [--src before=/tmp/base/src]
        [--src after=src] [--out benchmarks/results/workers_speedup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_contract import corpus  # noqa: E402
from tree_memory import run_sampled  # noqa: E402

RESULTS = HERE / "results" / "workers_speedup.json"


def one_build(data: Path, workers: int, src: Path) -> dict:
    out = Path(tempfile.mkdtemp(prefix="thresher-speedup-")) / "out"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(src), str(src.parent)]))
    cmd = [sys.executable, "-m", "thresher", "build", str(data), "-o", str(out), "-q", "--workers", str(workers)]
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        sampled = run_sampled(cmd, out / ".work", env=env)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        stats = json.loads((out / "stats.json").read_text())
        manifest = json.loads((out / "manifest.json").read_text())
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), sampled["sampled_cpu_s"])
    return {
        "workers": workers,
        "wall_s": round(sampled["wall_s"], 2),
        "cpu_s": round(cpu, 2),
        "load_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "phase_s": {k.removeprefix("phase."): round(v, 2)
                    for k, v in sorted(stats.get("timings_s", {}).items()) if k.startswith("phase.")},
        "kept": stats.get("kept"),
        "shards": [(s["path"], s["bytes"], s["sha256"]) for s in manifest["shards"]],
    }


def summarize(runs: list[dict]) -> dict:
    by_workers: dict[int, list[dict]] = {}
    for r in runs:
        by_workers.setdefault(r["workers"], []).append(r)
    out: dict = {}
    for w, rs in sorted(by_workers.items()):
        phases = sorted({p for r in rs for p in r["phase_s"]})
        out[f"workers_{w}"] = {
            "wall_s": statistics.median(r["wall_s"] for r in rs),
            "cpu_s": statistics.median(r["cpu_s"] for r in rs),
            "phase_s": {p: statistics.median(r["phase_s"].get(p, 0.0) for r in rs) for p in phases},
            "runs": len(rs),
        }
    if "workers_1" in out and "workers_2" in out:
        one, two = out["workers_1"], out["workers_2"]
        out["wall_ratio"] = round(one["wall_s"] / two["wall_s"], 3)
        out["cpu_ratio_2_over_1"] = round(two["cpu_s"] / one["cpu_s"], 3)
    digests = {tuple(map(tuple, r["shards"])) for r in runs}
    out["identical_shards"] = len(digests) == 1
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--src", action="append", default=[], help="NAME=DIR: a source tree to build with")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    sources = dict(s.split("=", 1) for s in args.src) or {"current": str(HERE.parent / "src")}
    data = corpus(args.docs)
    runs: dict[str, list[dict]] = {name: [] for name in sources}
    for repeat in range(args.repeats):
        for workers in (1, 2):
            for name, src in sources.items():
                row = one_build(data, workers, Path(src).resolve())
                row["repeat"] = repeat
                runs[name].append(row)
                shown = {k: v for k, v in row.items() if k != "shards"}
                print(name, json.dumps(shown), file=sys.stderr, flush=True)
    result = {
        "benchmark": "workers_speedup",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "documents": args.docs,
        "sources": sources,
        "summary": {name: summarize(rs) for name, rs in runs.items()},
        "runs": runs,
    }
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["summary"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
