"""Engine identity at scale on a mixed-language corpus (issue 29's "Done when": local, pool and Ray
give byte-identical shards on the 40k-document mixed-language corpus).

The corpus is the CI test's (`tests/engines/mixed_language.py`: lingua's test sentences in 75
languages, documents mixed within and across paragraphs so that every path of the cascade detector
is taken), at 40,000 documents. Each build is its own `thresher build` process with its own
PYTHONHASHSEED (as separate runs are in real use): local, pool with 1 and 2 workers, Ray with 2
CPUs, and a resume (a pool build with half its completion markers removed, run again). Every
build's shards are compared with the local build's, byte for byte; the result goes to
benchmarks/results/mixed_language_identity.json.

    python benchmarks/mixed_language_identity.py [--documents 40000] [--partition-bytes 2000000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from tests.engines.mixed_language import write_corpus  # noqa: E402

LINGUA = ROOT.parent / "shared" / "data" / "language" / "lingua"
RESULTS = HERE / "results" / "mixed_language_identity.json"


def build(corpus: Path, out: Path, seed: int, partition_bytes: int, *args: str) -> float:
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    command = [sys.executable, "-m", "thresher.cli", "build", str(corpus), "-o", str(out), "-q",
               "--input-partition-bytes", str(partition_bytes), *args]
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def shard_digests(out: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("shard-*"))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--documents", type=int, default=40000)
    ap.add_argument("--partition-bytes", type=int, default=2_000_000)
    args = ap.parse_args()
    if not LINGUA.is_dir():
        print(f"skipped: {LINGUA} is absent (the shared data)", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="thresher-identity-") as tmp:
        root = Path(tmp)
        corpus = write_corpus(root / "mixed.jsonl", LINGUA, args.documents)
        pb = args.partition_bytes
        runs: dict[str, dict[str, object]] = {}
        seconds = build(corpus, root / "local", 1, pb, "--engine", "local")
        expected = shard_digests(root / "local")
        manifest = json.loads((root / "local" / "manifest.json").read_text())
        runs["local"] = {"seconds": round(seconds, 1), "identical": True}
        variants = {"pool-1": (2, "--engine", "pool", "--workers", "1"),
                    "pool-2": (3, "--engine", "pool", "--workers", "2")}
        try:
            import ray  # noqa: F401

            variants["ray-2"] = (4, "--engine", "ray", "--workers", "2")
        except ImportError:
            print("ray is not installed: the Ray build is skipped", file=sys.stderr)
        for name, (seed, *extra) in variants.items():
            seconds = build(corpus, root / name, seed, pb, *extra)
            runs[name] = {"seconds": round(seconds, 1), "identical": shard_digests(root / name) == expected}
            shutil.rmtree(root / name)
        resumed = root / "resumed"
        build(corpus, resumed, 5, pb, "--engine", "pool", "--workers", "2", "--keep-work")
        (resumed / "manifest.json").unlink()
        markers = sorted((resumed / ".work" / "done").glob("*.json"))
        for marker in markers[::2]:
            marker.unlink()
        seconds = build(corpus, resumed, 6, pb, "--engine", "pool", "--workers", "2")
        runs["resumed"] = {"seconds": round(seconds, 1), "identical": shard_digests(resumed) == expected,
                           "markers_removed": len(markers[::2])}
    result = {
        "benchmark": "mixed_language_identity",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "when": time.strftime("%Y-%m-%d"),
        "documents": args.documents,
        "kept": manifest["stats"]["kept"],
        "shards": len(expected),
        "runs": runs,
        "all_identical": all(r["identical"] for r in runs.values()),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if result["all_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
