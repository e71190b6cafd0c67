"""What the end of a build costs (issue 29: finalize and the index in one streaming pass each): CPU
seconds and bytes read by the assemble phase (pieces into shards, sha256 for the manifest), by
finalize as a whole and by its index merge, for a baseline source tree and this one, on the same
corpus and config.

Corpus: recombined real paragraphs (`dedup_scale.generate`, as `scale_contract.py`), cached under
`benchmarks/.data/`. Each build runs in its own process with the local engine (every task in that
process), the source tree chosen by PYTHONPATH; the assemble task, `finalize` and the index merge
are wrapped to read `time.process_time()` and `/proc/self/io` (`rchar`: bytes through read calls,
page cache included) before and after. The builds' shards, manifests' shard lists and indexes are
compared byte for byte.

    git worktree add /tmp/thresher-base main   # copy the compiled .so files beside it too
    python benchmarks/finalize_cost.py --baseline /tmp/thresher-base/src [--docs 40000] [--repeats 2]
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_contract import corpus  # noqa: E402  (the recombined corpus, generated once)

RESULTS = HERE / "results" / "finalize_cost.json"
THIS_SRC = HERE.parent / "src"

DRIVER = r"""
import hashlib, json, sys, time
from pathlib import Path

import thresher.run.build as build_module
import thresher.run.finalize as finalize_module
from thresher.config import RunConfig
from thresher.run.phases import DEFAULT_TASKS

corpus, out, formats = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
spent = {}


def counters():
    io = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return time.process_time(), int(io["rchar"])


def measured(name, fn):
    def wrapper(*args, **kwargs):
        cpu, rchar = counters()
        try:
            return fn(*args, **kwargs)
        finally:
            cpu2, rchar2 = counters()
            row = spent.setdefault(name, {"cpu_s": 0.0, "bytes_read": 0, "calls": 0})
            row["cpu_s"] += cpu2 - cpu
            row["bytes_read"] += rchar2 - rchar
            row["calls"] += 1
    return wrapper


build_module.finalize = measured("finalize", build_module.finalize)
finalize_module.write_observations = measured("finalize.index_and_samples", finalize_module.write_observations)
tasks = DEFAULT_TASKS.replace(assemble=measured("assemble", DEFAULT_TASKS.assemble))
config = RunConfig.from_dict({"exec": {"engine": "local"}, "output": {"format": formats}})
start = counters()
result = build_module.build([corpus], out, config, tasks=tasks)
end = counters()
digest = hashlib.sha256()
for path in sorted(
    p for p in out.rglob("*") if p.is_file() and p.name not in ("manifest.json", "stats.json", "README.md")
):
    digest.update(str(path.relative_to(out)).encode() + b"\0" + path.read_bytes())
print(json.dumps({"phases": spent, "build_cpu_s": end[0] - start[0], "build_bytes_read": end[1] - start[1],
                  "kept": result.manifest["records"], "shards": result.manifest["shards"],
                  "shard_bytes": result.manifest["bytes"], "outputs_sha256": digest.hexdigest()}))
"""


def one_build(src: Path, data: Path, fmt: str) -> dict:
    out = Path(tempfile.mkdtemp(prefix="thresher-finalize-")) / "out"
    env = {**os.environ, "PYTHONPATH": str(src)}
    run = subprocess.run(
        [sys.executable, "-c", DRIVER, str(data), str(out), fmt], capture_output=True, text=True, env=env
    )
    if run.returncode != 0:
        raise SystemExit(f"build with {src} failed:\n{run.stderr[-3000:]}")
    subprocess.run(["rm", "-rf", str(out.parent)], check=False)
    result: dict = json.loads(run.stdout.strip().splitlines()[-1])
    return result


PHASES = ("assemble", "finalize", "finalize.index_and_samples")


def summarize(runs: dict[str, list[dict]]) -> dict[str, dict[str, float]]:
    """Per phase, the median CPU s and bytes read of each side's builds."""
    return {phase: {f"{name}_{field}": statistics.median(r["phases"][phase][field] for r in runs[name])
                    for name in runs for field in ("cpu_s", "bytes_read")} for phase in PHASES}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="the src folder of the baseline checkout")
    parser.add_argument("--docs", type=int, default=40_000)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--format", default="jsonl.gz")
    args = parser.parse_args(argv)
    data = corpus(args.docs)
    runs: dict[str, list[dict]] = {"baseline": [], "this": []}
    for _ in range(args.repeats):  # interleaved, so a change of load hits both alike
        for name, src in (("baseline", args.baseline), ("this", THIS_SRC)):
            runs[name].append(one_build(src.resolve(), data, args.format))
            r = runs[name][-1]
            print(
                name,
                json.dumps({k: {m: round(v, 3) for m, v in p.items()} for k, p in r["phases"].items()}),
                file=sys.stderr,
            )

    summary = summarize(runs)
    same = {r["outputs_sha256"] for rs in runs.values() for r in rs}
    result = {
        "corpus": f"{data.name}: {args.docs:,} recombined documents, {data.stat().st_size:,} bytes",
        "format": args.format,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "load_average_at_start": os.getloadavg(),
        "repeats": args.repeats,
        "kept": runs["this"][0]["kept"],
        "shards": len(runs["this"][0]["shards"]),
        "shard_bytes": runs["this"][0]["shard_bytes"],
        "outputs_identical": len(same) == 1 and runs["baseline"][0]["shards"] == runs["this"][0]["shards"],
        "summary": summary,
        "runs": runs,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    for phase, row in summary.items():
        print(f"{phase:28s} CPU s {row['baseline_cpu_s']:7.3f} -> {row['this_cpu_s']:7.3f}   "
              f"bytes read {row['baseline_bytes_read']:>13,} -> {row['this_bytes_read']:>13,}")
    print(f"outputs identical: {result['outputs_identical']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
