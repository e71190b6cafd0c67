"""Memory of the cluster phase per colliding document: the one part of a build that must fit on a
single node. Synthetic verified edges (clusters of 2..8 members, chains and stars) for n colliding
documents are written in the work-dir format and `cluster_task` is run in a fresh process; we report
its peak RSS above the interpreter's baseline and bytes per colliding document.

Usage: python benchmarks/cluster_memory.py [--nodes 100000,400000,1600000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))


def child(workdir: str, n_nodes: int) -> None:
    from thresher.config import RunConfig
    from thresher.pipeline import build_corpus_stages
    from thresher.run.cluster import cluster_task
    from thresher.run.records import Node, pack_edge
    from thresher.run.task import TaskContext
    from thresher.run.workdir import WorkDir

    config = RunConfig.from_dict({"exec": {"engine": "local"}})
    stages = build_corpus_stages(config)
    work = WorkDir(workdir)
    rng = random.Random(5)
    path = work.edges(stages[-1].name, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    made = 0
    with open(path, "wb") as out:
        ordinal = 0
        while made < n_nodes:
            size = rng.randint(2, 8)
            members = [Node((ordinal + i) << 8, rng.randbytes(8), rng.randint(100, 9000), 0.0) for i in range(size)]
            ordinal += size
            for i in range(1, size):  # a chain plus a star edge: both shapes occur in real clusters
                out.write(pack_edge(members[i - 1], members[i], 0.9))
                out.write(pack_edge(members[0], members[i], 0.85))
            made += size
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = cluster_task(TaskContext(config, workdir, False))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {"nodes": result["nodes"], "clusters": result["clusters"], "baseline_kib": baseline, "peak_kib": peak}
        )
    )


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="100000,400000,1600000")
    ap.add_argument("--out", default=str(ROOT / "results" / "cluster_memory.json"))
    args = ap.parse_args()
    rows = []
    for n in (int(x) for x in args.nodes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                [sys.executable, __file__, "--child", tmp, str(n)], capture_output=True, text=True, check=True
            )
        row = json.loads(out.stdout)
        row["bytes_per_colliding_document"] = round((row["peak_kib"] - row["baseline_kib"]) * 1024 / row["nodes"], 1)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    result = {"benchmark": "cluster_memory", "rows": rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
