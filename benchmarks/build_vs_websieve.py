"""End-to-end build throughput: thresher vs websieve 0.1.2 on the same generated corpus, one run.

The corpus is `thresher.demo`'s synthetic crawl (templated pages in five languages with exact and
near duplicates, spam, stubs and malformed lines), written once to benchmarks/.data/. Each tool runs
its default full pipeline (extract, normalize, quality, exact + near dedup, sharded gzip output) as a
separate process; wall time and peak RSS come from GNU time. We report docs/s (input records per
wall second), medians over repeats, and the ratio against websieve measured in the same run.

websieve must be installed in a side venv (never in the project's):
    python -m venv benchmarks/.venvs/websieve && benchmarks/.venvs/websieve/bin/pip install websieve==0.1.2

Usage: python benchmarks/build_vs_websieve.py [--pages 20000] [--repeats 3]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent
WEBSIEVE = ROOT / ".venvs" / "websieve" / "bin" / "websieve"
THRESHER = Path(sys.executable).parent / "thresher"


def timed(cmd: list[str]) -> tuple[float, int, float]:
    """Run a command under GNU time; return (wall seconds, peak RSS KiB of the largest process,
    CPU seconds (user + sys) of the process and its waited-for children)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%e %M %U %S", "-o", tf.name, *cmd], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        wall, rss, user, sys_s = tf.read().split()
    return float(wall), int(rss), float(user) + float(sys_s)


def kept_of(output: Path) -> int:
    manifest = json.loads((output / "manifest.json").read_text())
    if "records" in manifest:
        return int(manifest["records"])
    return sum(int(s.get("records", s.get("count", 0))) for s in manifest.get("shards", []))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "results" / "build_vs_websieve.json"))
    args = ap.parse_args()
    if not WEBSIEVE.exists():
        print(f"websieve not found at {WEBSIEVE}; see the module docstring", file=sys.stderr)
        return 1
    sys.path.insert(0, str(ROOT.parent / "src"))
    from thresher.demo import write_crawl

    data = ROOT / ".data" / f"demo-{args.pages}.jsonl"
    if not data.exists():
        write_crawl(data, n_pages=args.pages)
    n_records = sum(1 for _ in open(data, "rb"))
    work = Path(tempfile.mkdtemp(prefix="thresher-bench-"))
    runs: dict[str, list[dict[str, float]]] = {}
    variants = {
        "websieve 0.1.2": lambda out: [str(WEBSIEVE), "build", str(data), "-o", str(out), "--progress-every", "0"],
        "thresher (1 worker)": lambda out: [str(THRESHER), "build", str(data), "-o", str(out), "-q", "--workers", "1"],
        "thresher (2 workers)": lambda out: [str(THRESHER), "build", str(data), "-o", str(out), "-q", "--workers", "2",
                                             "--input-partition-bytes", str(8 * 1024 * 1024)],
    }
    try:
        for repeat in range(args.repeats):
            for name, make in variants.items():  # interleaved, so machine noise hits every tool alike
                out = work / f"{name.split()[0]}-{repeat}"
                shutil.rmtree(out, ignore_errors=True)
                wall, rss, cpu = timed(make(out))
                runs.setdefault(name, []).append(
                    {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss / 1024, "kept": kept_of(out)}
                )
                print(f"{name:<22} run {repeat + 1}: {wall:7.2f} s  {n_records / wall:8.0f} docs/s  "
                      f"peak {rss / 1024:6.0f} MiB  kept {runs[name][-1]['kept']}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = {}
    base = statistics.median(r["wall_s"] for r in runs["websieve 0.1.2"])
    base_cpu = statistics.median(r["cpu_s"] for r in runs["websieve 0.1.2"])
    for name, rs in runs.items():
        wall = statistics.median(r["wall_s"] for r in rs)
        summary[name] = {
            "median_wall_s": round(wall, 3),
            "docs_per_s": round(n_records / wall, 1),
            "speedup_vs_websieve": round(base / wall, 2),
            "cpu_s_per_1k_docs": round(1000 * statistics.median(r["cpu_s"] for r in rs) / n_records, 2),
            "cpu_efficiency_vs_websieve": round(base_cpu / statistics.median(r["cpu_s"] for r in rs), 2),
            "peak_rss_mib": round(max(r["peak_rss_mib"] for r in rs), 1),
            "kept": rs[0]["kept"],
        }
    result = {
        "benchmark": "build_vs_websieve",
        "corpus": f"thresher.demo synthetic crawl, {args.pages} pages, {n_records} input records, "
                  f"{data.stat().st_size / 1e6:.1f} MB",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "repeats": args.repeats,
        "load_average_at_start": os.getloadavg(),
        "results": summary,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print("\n| tool | docs/s | vs websieve | CPU s/1k docs | CPU vs websieve | kept |\n|---|---:|---:|---:|---:|---:|")
    for name, s in summary.items():
        print(
            f"| {name} | {s['docs_per_s']:.0f} | {s['speedup_vs_websieve']:.2f}x | {s['cpu_s_per_1k_docs']:.2f} | "
            f"{s['cpu_efficiency_vs_websieve']:.2f}x | {s['kept']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
