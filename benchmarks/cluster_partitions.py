"""The cluster phase over partitions (`--dedup-cluster-partitions`) against the single cluster task,
as the edge count grows: the peak memory of each task, the rounds, CPU and wall time.

Synthetic verified edges in the work-dir format: clusters of 2..8 members (a chain plus a star, as
benchmarks/cluster_memory.py), and 2% of the documents in chains of 2,000 (the long paths that cost
large-star/small-star its rounds), ordinals spread over 256 input partitions, in 8 edge files as
group/verify tasks leave them. The single task and every task of the partitioned phase run in a
fresh process each, one at a time (peak RSS is the process's VmHWM, above what it held before the task
started; CPU is the task's own, without
the interpreter's start, which a pool or Ray worker pays once); the partitions
are chosen so that each holds ~`--edges-per-partition` edges. The decisions files of both must be
the same bytes, or the benchmark fails.

Usage: python benchmarks/cluster_partitions.py [--edges 250000,1000000,2000000] [--edges-per-partition 200000]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))

FILES = 8
INPUT_PARTITIONS = 256


def config() -> Any:
    from thresher.config import RunConfig

    return RunConfig.from_dict({"exec": {"engine": "local"}})


def make_edges(workdir: str, n_edges: int, seed: int = 5) -> int:
    """Write about n_edges edges; returns the number of colliding documents."""
    from thresher.pipeline import build_corpus_stages
    from thresher.run.records import Node, pack_edge
    from thresher.run.workdir import WorkDir

    stages = build_corpus_stages(config())
    work = WorkDir(workdir)
    rng = random.Random(seed)
    n_nodes = n_edges // 2
    per_partition = n_nodes // INPUT_PARTITIONS + 1
    order = list(range(n_nodes))
    rng.shuffle(order)  # cluster members scattered over the input partitions

    def node(i: int) -> Node:
        k = order[i]
        return Node(((k // per_partition) << 40) | ((k % per_partition) << 8), rng.randbytes(8),
                    rng.randint(100, 9000), 0.0)

    outs = []
    for f in range(FILES):
        path = work.edges(stages[f % len(stages)].name, f, "v")
        path.parent.mkdir(parents=True, exist_ok=True)
        outs.append(open(path, "wb"))
    made = written = 0
    while made < n_nodes:
        long_chain = rng.random() < 0.02 * 5 / 2000  # ~2% of documents in chains of 2,000
        size = min(2000 if long_chain else rng.randint(2, 8), n_nodes - made)
        members = [node(made + i) for i in range(size)]
        for i in range(1, size):
            outs[rng.randrange(FILES)].write(pack_edge(members[i - 1], members[i], 0.9))
            written += 1
            if not long_chain:
                outs[rng.randrange(FILES)].write(pack_edge(members[0], members[i], 0.85))
                written += 1
        made += size
    for out in outs:
        out.close()
    return made


# -- one task in a fresh process -------------------------------------------------------------------


def task_child(spec: str) -> None:
    from thresher.core.serial import dump
    from thresher.run.phases import BUILD_PHASES
    from thresher.run.task import TaskContext

    phase, workdir, args = json.loads(spec)
    fn = next(p.task for p in BUILD_PHASES if p.name == phase)
    import numpy  # noqa: F401  (in the baseline, as a pool worker has it)

    baseline = peak_rss_kib()
    before = resource.getrusage(resource.RUSAGE_SELF)
    result = fn(TaskContext(config(), workdir, False), *args)
    after = resource.getrusage(resource.RUSAGE_SELF)
    task_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    print(json.dumps({"baseline_kib": baseline, "peak_kib": peak_rss_kib(), "task_cpu_s": task_cpu,
                      "result": dump(result)}))


def peak_rss_kib() -> int:
    """This process's peak RSS (VmHWM): unlike ru_maxrss on Linux, it starts afresh at exec rather
    than counting the parent's size at the fork."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_child(phase: str, workdir: str, args: list[Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, __file__, "--task", json.dumps([phase, workdir, args])],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"{phase} task failed ({proc.returncode})")
    row = json.loads(out)
    row.update(cpu_s=usage.ru_utime + usage.ru_stime, wall_s=time.perf_counter() - t0)
    return row


class Runner:
    """A phase driver (`thresher.core.phased.PhaseDriver`) that runs each task in its own process."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir
        self.tasks: list[dict[str, Any]] = []

    @property
    def config(self) -> Any:
        return config()

    def call(self, phase: str, task_id: str, *args: Any, weight: float | None = None) -> Any:
        return phase, list(args)

    def phase(self, name: str, calls: list[Any]) -> list[Any]:
        from thresher.core.serial import load
        from thresher.run.phases import BUILD_PHASES

        result_type = next(p.result for p in BUILD_PHASES if p.name == name)
        results = []
        for phase, args in calls:
            row = run_child(phase, self.workdir, args)
            row["phase"] = phase
            self.tasks.append(row)
            results.append(load(result_type, row.pop("result")))
        return results


def decisions(workdir: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(Path(workdir, "decisions").glob("*.jsonl"))}


def measure(n_edges: int, edges_per_partition: int) -> dict[str, Any]:
    from thresher.pipeline import build_corpus_stages
    from thresher.run.cluster_rounds import run_rounds
    from thresher.run.workdir import WorkDir

    with tempfile.TemporaryDirectory() as tmp:
        made = subprocess.run([sys.executable, __file__, "--make", tmp, str(n_edges)], capture_output=True, text=True,
                              check=True)
        nodes = int(made.stdout)
        work = WorkDir(tmp)
        index = {stage.name: si for si, stage in enumerate(build_corpus_stages(config()))}
        files = sorted((index[p.parent.name], p) for p in work.path("edges").rglob("*.edges"))
        edges = sum(p.stat().st_size for _, p in files) // 52
        single = run_child("cluster", tmp, [])
        reference = decisions(tmp)
        for path in Path(tmp, "decisions").glob("*.jsonl"):
            path.unlink()
        partitions = max(2, math.ceil(edges / edges_per_partition))
        runner = Runner(tmp)
        t0 = time.perf_counter()
        run = run_rounds(runner, work, files, partitions)
        wall = time.perf_counter() - t0
        if decisions(tmp) != reference:
            raise AssertionError(f"{edges} edges over {partitions} partitions: decisions differ from the single task")

    def mib(kib: float) -> float:
        return round(kib / 1024, 1)

    by_phase: dict[str, dict[str, float]] = {}
    for row in runner.tasks:
        entry = by_phase.setdefault(row["phase"], {"tasks": 0, "peak_mib": 0.0, "above_baseline_mib": 0.0,
                                                    "cpu_s": 0.0})
        entry["tasks"] += 1
        entry["peak_mib"] = max(entry["peak_mib"], mib(row["peak_kib"]))
        entry["above_baseline_mib"] = max(entry["above_baseline_mib"], mib(row["peak_kib"] - row["baseline_kib"]))
        entry["cpu_s"] = round(entry["cpu_s"] + row["task_cpu_s"], 2)
    return {
        "edges": edges,
        "colliding_documents": nodes,
        "partitions": partitions,
        "rounds": run.rounds,
        "single_task": {"peak_mib": mib(single["peak_kib"]),
                        "above_baseline_mib": mib(single["peak_kib"] - single["baseline_kib"]),
                        "cpu_s": round(single["task_cpu_s"], 2)},
        "partitioned": {"tasks": len(runner.tasks),
                        "max_above_baseline_mib": max(v["above_baseline_mib"] for v in by_phase.values()),
                        "cpu_s": round(sum(r["task_cpu_s"] for r in runner.tasks), 2),
                        "process_cpu_s": round(sum(r["cpu_s"] for r in runner.tasks), 2), "wall_s": round(wall, 2),
                        "by_phase": by_phase},
        "decisions_identical": True,
    }


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--task":
        task_child(sys.argv[2])
        return 0
    if len(sys.argv) > 3 and sys.argv[1] == "--make":  # in a child: the driver stays small
        print(make_edges(sys.argv[2], int(sys.argv[3])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", default="250000,1000000,2000000")
    ap.add_argument("--edges-per-partition", type=int, default=200_000)
    ap.add_argument("--out", default=str(ROOT / "results" / "cluster_partitions.json"))
    args = ap.parse_args()
    rows = []
    for n in (int(x) for x in args.edges.split(",")):
        row = measure(n, args.edges_per_partition)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "partitioned"} | {
            "partitioned": {k: v for k, v in row["partitioned"].items() if k != "by_phase"}}), file=sys.stderr)
    # the goal: a partitioned task's memory follows its partition, not the graph
    first, last = rows[0]["partitioned"]["max_above_baseline_mib"], rows[-1]["partitioned"]["max_above_baseline_mib"]
    growth = rows[-1]["edges"] / rows[0]["edges"]
    result = {"benchmark": "cluster_partitions", "edges_per_partition": args.edges_per_partition,
              "python": sys.version.split()[0], "cpus": os.cpu_count(), "rows": rows,
              "max_task_memory_growth": round(last / first, 2) if first else None, "edge_growth": growth}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    if len(rows) > 1 and last > 2 * first:
        print(f"per-task memory grew {last / first:.1f}x over {growth:.0f}x the edges: not bounded by the partition",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
