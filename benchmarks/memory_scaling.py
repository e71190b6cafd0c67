"""Peak memory of `thresher build` as the corpus grows: the whole process tree's RSS, sampled.

Generated text corpora (templated articles, 10% exact and 10% near duplicates; see
engines_scaling.write_text_corpus) of each requested size are built with the default pipeline
(quality, exact + MinHash near dedup) and 2 pool workers. A sampler sums VmRSS over the driver and
all its descendants every 0.1 s; we report the peak of that sum, wall time, docs/s and the growth in
bytes per document between the sizes. Flat memory means the growth per document is ~0.

Usage: python benchmarks/memory_scaling.py [--sizes 100000,1000000] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
THRESHER = Path(sys.executable).parent / "thresher"
sys.path.insert(0, str(ROOT))

from tree_memory import run_sampled  # noqa: E402  (the process-tree sampler every memory benchmark uses)


def growth_steps(rows: list[dict]) -> list[dict]:
    """Peak growth in bytes per added document between each pair of consecutive sizes."""
    return [
        {
            "from": a["documents"],
            "to": b["documents"],
            "bytes_per_document": round(
                (b["peak_tree_rss_mib"] - a["peak_tree_rss_mib"]) * 2**20 / (b["documents"] - a["documents"]), 2
            ),
        }
        for a, b in zip(rows, rows[1:], strict=False)
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sentences", type=int, default=None, help="shorten articles to N sentences (~20 words each)")
    ap.add_argument("--out", default=str(ROOT / "results" / "memory_scaling.json"))
    args = ap.parse_args()
    from engines_scaling import write_text_corpus

    sizes = [int(s) for s in args.sizes.split(",")]
    rows = []
    for n in sizes:
        suffix = f"-s{args.sentences}" if args.sentences else ""
        data = ROOT / ".data" / f"text-{n}{suffix}.jsonl"
        if not data.exists():
            write_text_corpus(data, n, max_sentences=args.sentences)
        out = Path(tempfile.mkdtemp(prefix="thresher-mem-")) / "out"
        try:
            r = run_sampled(
                [str(THRESHER), "build", str(data), "-o", str(out), "-q", "--workers", str(args.workers)], out / ".work"
            )
            stats = json.loads((out / "stats.json").read_text())
        finally:
            shutil.rmtree(out.parent, ignore_errors=True)
        row = {"documents": n, "input_mb": round(data.stat().st_size / 1e6, 1),
               **{k: round(v, 2) if isinstance(v, float) else v for k, v in r.items()},
               "docs_per_s": round(n / r["wall_s"], 1), "kept": stats["kept"],
               "phases_s": {k: v for k, v in stats["timings_s"].items() if k.startswith("phase.")}}
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    growth = None
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        growth = (b["peak_tree_rss_mib"] - a["peak_tree_rss_mib"]) * 2**20 / (b["documents"] - a["documents"])
    result = {
        "benchmark": "memory_scaling",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "workers": args.workers,
        "corpus": "generated templated English articles, 10% exact and 10% near duplicates"
        + (f", shortened to {args.sentences} sentences" if args.sentences else ""),
        "rows": rows,
        "growth_bytes_per_document": None if growth is None else round(growth, 2),
        # per step between consecutive sizes: per-task buffers fill up to their caps (8 MiB of key
        # or pair records) as partitions grow, then stay; a flat design shows ~0 in the last steps
        "growth_by_step": growth_steps(rows),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
