"""Does a process's memory grow with the number of scan tasks it has run? (issue 29: the pool's
workers came out ~4 MiB larger each at 1M documents than at 200k, with the same partition size.)

One `thresher build --engine local` (every task in one process, so nothing is forked or recycled)
of the recombined corpus with small partitions, so one process runs hundreds of scan tasks of the
same size; its RSS and PSS are sampled every 0.5 s beside the count of finished scan tasks. A leak
per task shows as a floor that keeps rising; a heap's high-water marks show as steps that stop.
The build is stopped once the scan phase ends. Writes benchmarks/results/scan_memory_tasks.json.

    python benchmarks/scan_memory_tasks.py [--documents 200000] [--partition-bytes 2000000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_contract import corpus  # noqa: E402
from tree_memory import memory_of  # noqa: E402

RESULTS = HERE / "results" / "scan_memory_tasks.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--documents", type=int, default=200_000)
    ap.add_argument("--partition-bytes", type=int, default=2_000_000)
    ap.add_argument("--window", type=int, default=25, help="scan tasks per row of the report")
    args = ap.parse_args()
    data = corpus(args.documents)
    out = Path(tempfile.mkdtemp(prefix="thresher-scan-memory-")) / "out"
    thresher = Path(sys.executable).parent / "thresher"
    cmd = [str(thresher), "build", str(data), "-o", str(out), "-q", "--engine", "local",
           "--input-partition-bytes", str(args.partition_bytes)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    plan, done = out / ".work" / "plan.json", out / ".work" / "done"
    samples: list[tuple[int, float, float]] = []  # (scan tasks finished, RSS MiB, PSS MiB)
    total = None
    try:
        while proc.poll() is None:
            if total is None and plan.exists():
                try:
                    total = len(json.loads(plan.read_text())["partitions"])
                except (ValueError, KeyError, TypeError):
                    total = None
            finished = sum(1 for p in done.iterdir() if p.name.startswith("scan-")) if done.exists() else 0
            rss, pss = memory_of(proc.pid)
            if rss:
                samples.append((finished, rss / 2**20, pss / 2**20))
            if total is not None and finished >= total:
                break  # the scan phase is over: what follows is not what is measured
            time.sleep(0.5)
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(out.parent, ignore_errors=True)
    rows = []
    for start in range(0, max(n for n, _, _ in samples) + 1, args.window):
        mine = [s for s in samples if start <= s[0] < start + args.window and s[0] > 0]
        if mine:
            rows.append({"scan_tasks": f"{start}-{start + args.window - 1}", "samples": len(mine),
                         "rss_min_mib": round(min(s[1] for s in mine), 1),
                         "rss_max_mib": round(max(s[1] for s in mine), 1),
                         "pss_min_mib": round(min(s[2] for s in mine), 1)})
    result = {"benchmark": "scan_memory_tasks", "when": time.strftime("%Y-%m-%d"), "documents": args.documents,
              "partition_bytes": args.partition_bytes, "scan_tasks": total, "rows": rows}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
