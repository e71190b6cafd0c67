"""End-to-end dedup throughput, thresher against datatrove's four-stage MinHash, in one run.

Both sides read the same JSONL of ~3 KB texts (the generated corpus of `dedup_scale.py`: real
sentences recombined, 10% of the documents edited copies of earlier ones) and write deduplicated
JSONL.gz:

- thresher: `thresher build --quality-preset none --exec-engine local` (normalize, exact dedup,
  MinHash with LSH and exact-Jaccard verification, cluster, write, assemble), one process;
- datatrove: JsonlReader -> MinhashDedupSignature, MinhashDedupBuckets, MinhashDedupCluster,
  JsonlReader -> MinhashDedupFilter -> JsonlWriter (5-grams, 14 buckets x 8 hashes, 64-bit hashes),
  one task and one worker per stage, `start_method="fork"` so GNU time sees every child's CPU.

Throughput is documents per CPU second (user + sys of the whole process tree), the per-core
measure; repeats are interleaved and we report medians and the ratio. datatrove runs in its own
virtual environment (`--datatrove-python`, default `benchmarks/.venvs/datatrove/bin/python`).

    python benchmarks/dedup_throughput.py [--docs 20000] [--repeats 3]

Writes benchmarks/results/dedup_throughput.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "dedup_throughput.json"
DEFAULT_DATATROVE = HERE / ".venvs" / "datatrove" / "bin" / "python"


def datatrove_worker(corpus: str, work_dir: str) -> None:
    """Runs inside datatrove's venv: the four MinHash stages over `corpus`; prints the kept count."""
    import gzip

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup import (
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.dedup.minhash import MinhashConfig
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.hashing import HashConfig

    work = Path(work_dir)
    src = Path(corpus)
    cfg = MinhashConfig(hash_config=HashConfig(precision=64), num_buckets=14, hashes_per_bucket=8, n_grams=5)
    seconds: dict[str, float] = {}

    def run(name: str, steps: list, tasks: int = 1) -> None:
        t0 = time.perf_counter()
        LocalPipelineExecutor(
            pipeline=steps, tasks=tasks, workers=1, logging_dir=str(work / "logs" / name),
            skip_completed=False, start_method="fork",
        ).run()
        seconds[name] = round(time.perf_counter() - t0, 3)

    def reader() -> JsonlReader:
        return JsonlReader(str(src.parent), glob_pattern=src.name, text_key="text", id_key="url")

    run("signatures", [reader(), MinhashDedupSignature(str(work / "sigs"), config=cfg)])
    run("buckets", [MinhashDedupBuckets(str(work / "sigs"), str(work / "buckets"), config=cfg)], cfg.num_buckets)
    run("cluster", [MinhashDedupCluster(str(work / "buckets"), str(work / "remove_ids"), config=cfg)])
    run("filter", [reader(), MinhashDedupFilter(str(work / "remove_ids")), JsonlWriter(str(work / "out"))])
    kept = 0
    for path in sorted((work / "out").glob("*.jsonl.gz")):
        with gzip.open(path, "rb") as f:
            kept += sum(1 for _ in f)
    print(json.dumps({"kept": kept, "stage_seconds": seconds}))


def floor_costs(corpus: Path, repeats: int) -> dict[str, float]:
    """Microseconds per document of the work thresher's output contract demands of any
    implementation in this interpreter, each step a single call into C: decode the input line,
    check the NFKC form (the text is stored normalized), case-fold, split into `\\w+` words on the
    case-folded text, CRC-32 each word (the token values MinHash shingles), BLAKE2b the exact key,
    encode the output line and gzip it at the default level. Everything else thresher does per
    document (shingling, MinHash, LSH keys, spills, verification, bookkeeping) is left out, so the
    sum bounds thresher's throughput from above on this machine. Median of `repeats` passes."""
    import hashlib
    import re
    import unicodedata
    import zlib

    lines = corpus.read_bytes().splitlines()
    records = [json.loads(line) for line in lines]
    texts = [r["text"] for r in records]
    word = re.compile(r"\w+")
    folded = [t.casefold() for t in texts]
    runs = [word.findall(f) for f in folded]
    encoded = ["\x00".join(r).encode("utf-8", "surrogatepass") for r in runs]
    out_lines = [json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in records]

    def gzip_all(_: object) -> None:
        z = zlib.compressobj(6, zlib.DEFLATED, 31)
        for line in out_lines:
            z.compress(line)
        z.flush()

    steps = {
        "json_decode_input": lambda: [json.loads(line) for line in lines],
        "nfkc_check": lambda: [unicodedata.is_normalized("NFKC", t) for t in texts],
        "casefold": lambda: [t.casefold() for t in texts],
        "split_words": lambda: [word.findall(f) for f in folded],
        "crc32_words": lambda: [list(map(zlib.crc32, e.split(b"\x00"))) for e in encoded],
        "blake2b_key": lambda: [hashlib.blake2b(e, digest_size=16).digest() for e in encoded],
        "json_encode_output": lambda: [json.dumps(r, ensure_ascii=False) for r in records],
        "gzip_output": lambda: gzip_all(None),
    }
    costs: dict[str, float] = {}
    for name, step in steps.items():
        samples = []
        for _ in range(repeats):
            t0 = time.process_time()
            step()
            samples.append(time.process_time() - t0)
        costs[name] = round(statistics.median(samples) / len(lines) * 1e6, 1)
    costs["total"] = round(sum(costs.values()), 1)
    return costs


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[dict[str, float], str]:
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name, *cmd], capture_output=True, text=True, env=env
        )
        if proc.returncode != 0:
            raise RuntimeError(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
        wall, user, sys_s, rss = tf.read().split()
    return {"wall_s": float(wall), "cpu_s": float(user) + float(sys_s), "peak_rss_mib": int(rss) / 1024}, proc.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--datatrove-python", default=str(DEFAULT_DATATROVE))
    ap.add_argument("--datatrove-worker", nargs=2, metavar=("CORPUS", "WORK"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.datatrove_worker:
        datatrove_worker(*args.datatrove_worker)
        return 0

    sys.path.insert(0, str(HERE))
    from dedup_scale import generate

    data = HERE / ".data"
    data.mkdir(exist_ok=True)
    corpus = data / f"dedup_scale_{args.docs}.jsonl"
    if not corpus.exists():
        generate(corpus, args.docs)
    thresher = Path(sys.executable).parent / "thresher"
    have_datatrove = Path(args.datatrove_python).exists()
    runs: dict[str, list[dict]] = {"thresher": [], "datatrove": []}
    kept: dict[str, int] = {}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            out = Path(tmp) / f"t{r}"
            m, _ = timed([str(thresher), "build", str(corpus), "-o", str(out), "--quality-preset", "none",
                          "--exec-engine", "local", "-q"])
            stats = json.loads((out / "stats.json").read_text())
            assert stats["reconciles"] and stats["seen"] == args.docs, stats
            kept["thresher"] = stats["kept"]
            m["phases_s"] = {k: round(v, 2) for k, v in stats["timings_s"].items() if k.startswith("phase.")}
            runs["thresher"].append(m)
            shutil.rmtree(out)
            if have_datatrove:
                work = Path(tmp) / f"d{r}"
                env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
                m, stdout = timed([args.datatrove_python, __file__, "--datatrove-worker", str(corpus), str(work)], env)
                result = json.loads(stdout.strip().splitlines()[-1])
                kept["datatrove"] = result["kept"]
                m["stage_seconds"] = result["stage_seconds"]
                runs["datatrove"].append(m)
                shutil.rmtree(work)
            print(f"repeat {r + 1}/{args.repeats} done", file=sys.stderr)

    def summary(rows: list[dict]) -> dict:
        cpu = statistics.median(x["cpu_s"] for x in rows)
        return {
            "median_cpu_s": round(cpu, 2),
            "median_wall_s": round(statistics.median(x["wall_s"] for x in rows), 2),
            "docs_per_cpu_s": round(args.docs / cpu, 1),
            "peak_rss_mib": round(max(x["peak_rss_mib"] for x in rows), 1),
            "runs": rows,
        }

    result = {
        "benchmark": "dedup_throughput",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "corpus": (
            f"{corpus.name}: {args.docs} generated documents (~3 KB, 10% edited copies), "
            f"{corpus.stat().st_size / 1e6:.1f} MB"
        ),
        "load_average_at_start": [round(x, 2) for x in load],
        "repeats": args.repeats,
        "kept": kept,
        "thresher": summary(runs["thresher"]),
    }
    floor = floor_costs(corpus, args.repeats)
    result["floor_us_per_doc"] = floor
    result["floor_docs_per_cpu_s"] = round(1e6 / floor["total"], 1)
    if runs["datatrove"]:
        result["datatrove"] = summary(runs["datatrove"])
        dt = result["datatrove"]["docs_per_cpu_s"]
        result["ratio_docs_per_cpu_s"] = round(result["thresher"]["docs_per_cpu_s"] / dt, 2)
        # the goal is 30x datatrove; the floor says whether any Python build of this
        # output contract could reach it here
        result["goal_us_per_doc"] = round(1e6 / (30 * dt), 1)
        result["floor_ratio_to_datatrove"] = round(result["floor_docs_per_cpu_s"] / dt, 2)
    else:
        result["datatrove"] = f"not measured: no interpreter at {args.datatrove_python}"
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("thresher", "datatrove")}, indent=1))
    for side in ("thresher", "datatrove"):
        if isinstance(result[side], dict):
            print(side, {k: v for k, v in result[side].items() if k != "runs"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
