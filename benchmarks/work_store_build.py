"""What a whole build pays for its work dir on an object store: the same build with `--work-dir` a
folder and `--work-dir s3://...` (S3 over HTTP on loopback: moto's server in its own process),
interleaved, side by side in one run, on the local engine (every task in this process, so its CPU
is the build's whole client CPU: tasks, uploads, downloads, listings). The server's CPU is read from
its process and reported apart (moto is not S3: it is what the endpoint costs here, not what a task
pays). The shards of both builds are checked to be byte-identical.

    python benchmarks/work_store_build.py [--docs 1500] [--repeats 3]
    # writes benchmarks/results/work_store_build.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "src"))
sys.path.insert(0, str(BENCH))

from work_store_ops import start_server  # noqa: E402

from thresher.config import RunConfig  # noqa: E402
from thresher.run.build import build  # noqa: E402

WORDS = [f"w{i}" for i in range(5000)]


def corpus(path: Path, n: int) -> None:
    """Chains of near duplicates, exact copies and unique documents (a fifth of each kind of drop)."""
    rng = random.Random(3)
    texts: list[str] = []
    while len(texts) < n * 0.4:
        words = [rng.choice(WORDS) for _ in range(300)]
        for _ in range(6):
            texts.append(" ".join(words))
            for _ in range(10):
                words[rng.randrange(len(words))] = rng.choice(WORDS)
    texts += [" ".join(rng.choice(WORDS) for _ in range(250)) for _ in range(int(n * 0.5))]
    texts += [rng.choice(texts) for _ in range(n - len(texts))]
    rng.shuffle(texts)
    with open(path, "w", encoding="utf-8") as out:
        for i, text in enumerate(texts[:n]):
            out.write(json.dumps({"id": f"d{i}", "url": f"https://b.example/{i}", "text": text}) + "\n")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def config(work_dir: str) -> RunConfig:
    return RunConfig.from_dict({"exec": {"engine": "local", "work_dir": work_dir}, "quality": {"preset": None},
                                "input": {"partition_bytes": 64 * 1024}, "dedup": {"near": {"threshold": 0.7}}})


def one(kind: str, docs: Path, tmp: Path, server_pid: int, i: int) -> tuple[dict[str, float], bytes, int]:
    out = tmp / f"{kind}-{i}"
    work = str(tmp / f"{kind}-work-{i}") if kind == "folder" else f"s3://bench-build/w{i}"
    c0, s0, t0 = cpu(), server_cpu(server_pid), time.perf_counter()
    result = build([str(docs)], out, config(work))
    wall = time.perf_counter() - t0
    figures = {"cpu_s": cpu() - c0, "wall_s": wall, "server_cpu_s": server_cpu(server_pid) - s0}
    shards = b"".join(p.read_bytes() for p in sorted(out.glob("shard-*")))
    shutil.rmtree(out)
    return figures, shards, result.stats.kept


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    proc, endpoint = start_server()
    runs: dict[str, list[dict[str, float]]] = {"folder": [], "object_store": []}
    try:
        os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1",
                          AWS_ENDPOINT_URL=endpoint)
        import boto3

        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="bench-build")
        with tempfile.TemporaryDirectory() as folder:
            tmp = Path(folder)
            os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")  # the object cache: removed with the run
            docs = tmp / "docs.jsonl"
            corpus(docs, args.docs)
            seen: dict[str, bytes] = {}
            kept = 0
            for i in range(args.repeats):  # interleaved: load changes hit both kinds alike
                for kind in ("folder", "object_store"):
                    figures, shards, kept = one(kind, docs, tmp, proc.pid, i)
                    runs[kind].append(figures)
                    if seen.setdefault(kind, shards) != shards:
                        raise SystemExit(f"{kind}: shards differ between repeats")
            if seen["folder"] != seen["object_store"]:
                raise SystemExit("the object-store build's shards differ from the folder build's")
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    def med(kind: str, key: str) -> float:
        return round(statistics.median(r[key] for r in runs[kind]), 3)

    summary = {kind: {key: med(kind, key) for key in ("cpu_s", "wall_s", "server_cpu_s")} for kind in runs}
    out: dict[str, Any] = {
        "docs": args.docs, "kept": kept, "repeats": args.repeats, "engine": "local",
        "load_1_5_15": [round(x, 2) for x in os.getloadavg()], "python": platform.python_version(),
        "identical_shards": True, "medians": summary,
        "object_over_folder": {"cpu": round(summary["object_store"]["cpu_s"] / summary["folder"]["cpu_s"], 2),
                               "wall": round(summary["object_store"]["wall_s"] / summary["folder"]["wall_s"], 2)},
        "runs": runs,
    }
    dest = BENCH / "results" / "work_store_build.json"
    dest.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k != "runs"}, indent=2))


if __name__ == "__main__":
    main()
