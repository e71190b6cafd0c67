"""What `--partition-by language` costs: CPU seconds of the default build (local engine) over the
1,301 real pages of ../shared/data/extraction with and without it, interleaved rounds after a
warm-up round (model loading not counted).

Usage: python benchmarks/partition_cost.py [--rounds 2] [--out benchmarks/results/partition_cost.json]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
sys.path.insert(0, str(ROOT))

from lang_eval import _pages  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv: list[str] | None = None) -> int:
    from thresher.config import RunConfig
    from thresher.run.build import build

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "partition_cost.json"))
    args = ap.parse_args(argv)
    pages = _pages()
    if not pages:
        print("no pages under ../shared/data/extraction", file=sys.stderr)
        return 1
    tmp = Path(tempfile.mkdtemp(prefix="partition-cost-"))
    crawl = tmp / "crawl.jsonl"
    with open(crawl, "w", encoding="utf-8") as f:
        for url, page in pages:
            f.write(json.dumps({"url": url, "html": page}) + "\n")
    seconds: dict[str, list[float]] = {"plain": [], "partitioned": []}
    manifest: dict = {}
    try:
        for r in range(args.rounds + 1):
            for mode in ("plain", "partitioned"):
                out = tmp / f"out-{mode}"
                config = {"exec": {"engine": "local"}}
                if mode == "partitioned":
                    config["output"] = {"partition_by": "language"}
                t0 = cpu()
                manifest = build([str(crawl)], out, RunConfig.from_dict(config)).manifest
                elapsed = cpu() - t0
                if r > 0:
                    seconds[mode].append(round(elapsed, 3))
                shutil.rmtree(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    ratio = statistics.median(p / q for p, q in zip(seconds["partitioned"], seconds["plain"], strict=True))
    results = {"pages": len(pages), "documents": manifest["records"],
               "partitions": len(manifest["partitions"]["datasets"]), "cpu_s": seconds,
               "median_ratio_partitioned_vs_plain": round(ratio, 4)}
    print(json.dumps(results), flush=True)
    Path(args.out).write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
