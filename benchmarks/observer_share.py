"""The share of a build's CPU spent on what it records for `report` and `explain`, timed inside
the build itself.

`report_scale.py --ablate` measures the same cost as the difference of two builds (with and without
the records), which on a busy machine is buried in the noise between runs: a 3% cost is 3 s of a
100 s build, and two identical builds differ by more than that at load 5. This script measures it
inside one process instead: it builds generated text records (`engines_scaling.write_text_corpus`,
the cheapest documents per record, where the records cost the most relative to the build) with the
local engine and times every entry point of `run.observe.TaskObserver` and finalize's
`write_observations` with the process's CPU clock. The share is that time over the build's CPU
time (median of `--repeats`); the timing wrappers' own cost is counted as observer time, so the
share is an upper bound.

    python benchmarks/observer_share.py [--documents 20000] [--sentences 5] [--repeats 3] [--max-share 0.03]

Exits 1 when the median share is above `--max-share` (the issue's budget is 3% of a build's CPU).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent / "src"))
sys.path.insert(0, str(ROOT))

ENTRY_POINTS = ("__init__", "survived", "chain_dropped", "dropped", "corpus_dropped", "kept", "kept_json", "close")


class Timed:
    """Wraps functions so that the CPU time spent in the outermost wrapped call is summed by name
    (a wrapped method that calls another wrapped one is counted once)."""

    def __init__(self) -> None:
        self.by_name: dict[str, float] = {}
        self._depth = 0

    def wrap(self, fn, name: str):
        def timed(*args, **kwargs):
            self._depth += 1
            start = time.process_time() if self._depth == 1 else None
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if start is not None:
                    self.by_name[name] = self.by_name.get(name, 0.0) + time.process_time() - start
        return timed

    @property
    def total(self) -> float:
        return sum(self.by_name.values())


def one_build(crawl: Path, out: Path) -> tuple[float, dict[str, float]]:
    import thresher.run.finalize as finalize
    import thresher.run.observe as observe
    from thresher.cli import main

    timed = Timed()
    saved = {name: getattr(observe.TaskObserver, name) for name in ENTRY_POINTS if hasattr(observe.TaskObserver, name)}
    saved_write = finalize.write_observations
    try:
        for name, fn in saved.items():
            setattr(observe.TaskObserver, name, timed.wrap(fn, name))
        finalize.write_observations = timed.wrap(saved_write, "write_observations")
        start = time.process_time()
        rc = main(["build", str(crawl), "-o", str(out), "--engine", "local", "-q", "--overwrite"])
        build = time.process_time() - start
    finally:
        for name, fn in saved.items():
            setattr(observe.TaskObserver, name, fn)
        finalize.write_observations = saved_write
    if rc != 0:
        raise SystemExit(f"build failed with exit code {rc}")
    return build, timed.by_name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--documents", type=int, default=20_000)
    ap.add_argument(
        "--sentences", type=int, default=5, help="sentences a generated document (fewer: cheaper documents)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-share", type=float, default=0.03)
    ap.add_argument("--out", default=str(ROOT / "results" / "observer_share.json"))
    args = ap.parse_args()
    from engines_scaling import write_text_corpus

    runs = []
    with tempfile.TemporaryDirectory(prefix="observer-share-") as tmp_s:
        tmp = Path(tmp_s)
        crawl = tmp / "text.jsonl"
        write_text_corpus(crawl, args.documents, max_sentences=args.sentences)
        for _ in range(args.repeats):
            build, parts = one_build(crawl, tmp / "out")
            share = sum(parts.values()) / build
            runs.append(
                {
                    "build_cpu_s": round(build, 3),
                    "observer_cpu_s": round(sum(parts.values()), 3),
                    "share": round(share, 4),
                    "by_entry_point": {k: round(v, 3) for k, v in sorted(parts.items())},
                }
            )
            print(json.dumps(runs[-1]), flush=True)
    median = statistics.median(run["share"] for run in runs)
    result = {"documents": args.documents, "sentences": args.sentences, "engine": "local", "runs": runs,
              "median_share": median, "max_share": args.max_share, "within_budget": median <= args.max_share}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(f"median share {100 * median:.2f}% of build CPU (budget {100 * args.max_share:.1f}%)")
    return 0 if result["within_budget"] else 1


if __name__ == "__main__":
    sys.exit(main())
