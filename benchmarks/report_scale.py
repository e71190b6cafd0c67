"""Report, explain and check at scale, and what the build's new records (histograms, index, samples)
cost a build.

For each size (documents of the synthetic demo crawl, `thresher.demo.generate_crawl`: templated
articles in five languages with duplicates, spam and stubs — generated, not real text), this
builds the crawl once with 2 pool workers and measures:
- `thresher report`: CPU seconds and the page's size;
- `thresher explain`: latency (wall, median of 20 lookups of random ids and URLs);
- `thresher check --sample 10000`: CPU seconds.
The build's cost is measured A/B in the same run: the same crawl built by this checkout and by
`--baseline REV` (default: the commit before the build started recording them), checked out into a
temporary git worktree, CPU seconds of the whole process tree, median of `--repeats`.

    python benchmarks/report_scale.py --sizes 10000,100000 [--baseline REV] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
DEFAULT_BASELINE = "84d6747"  # main just before the build recorded the index, samples and histograms


def run(cmd: list[str], src: Path, **kw) -> tuple[float, float, subprocess.CompletedProcess]:
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return cpu, wall, proc


def ablate(src: Path) -> None:
    """Switch the build's observations off in a checkout: every TaskObserver method returns at
    once and finalize writes no index or samples."""
    observe = src / "thresher" / "run" / "observe.py"
    text = observe.read_text()
    for method in (
        "annotations",
        "survived",
        "corpus_dropped",
        "dropped",
        "chain_dropped",
        "kept",
        "kept_json",
        "close",
    ):
        text = text.replace(
            f"    def {method}(self",
            f"    def {method}(self, *_a, **_k) -> None:  # ablated\n        return\n\n    def _orig_{method}(self",
            1,
        )
    text = text.replace("self._index = open(", "self._index = None and open(", 1)
    observe.write_text(text)
    finalize = src / "thresher" / "run" / "finalize.py"
    ftext = finalize.read_text()
    ftext = ftext.replace("    write_observations(out, work, done.partitions, done.stats.seen)\n", "", 1)
    finalize.write_text(ftext)


def thresher(src: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "thresher", *args]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--baseline", default=DEFAULT_BASELINE)
    ap.add_argument("--new", default=None, help="revision to measure (default: this working tree)")
    ap.add_argument("--ablate", action="store_true",
                    help="baseline = the measured revision with the build's observations (index, samples, "
                         "histograms) switched off by a patch: the cost of exactly those")
    ap.add_argument("--repeats", type=int, default=3,
                    help="interleaved A/B builds per size; 0 builds once with this revision only (no cost ratio)")
    ap.add_argument("--corpus", choices=("demo", "text"), default="demo",
                    help="demo: the demo crawl's HTML pages; text: generated text records "
                         "(engines_scaling.write_text_corpus), cheap enough for a 1M-document dataset")
    ap.add_argument("--sentences", type=int, default=None, help="with --corpus text: N sentences a document")
    ap.add_argument("--out", default=str(ROOT / "results" / "report_scale.json"))
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from thresher.demo import write_crawl

    src_new = REPO / "src"
    results = {"sizes": [], "baseline": args.baseline, "machine": os.uname().machine, "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory(prefix="report-scale-") as tmp_s:
        tmp = Path(tmp_s)
        base_tree = tmp / "baseline"
        base_rev = args.new if args.ablate and args.new else args.baseline
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(base_tree), base_rev],
                       check=True, capture_output=True)
        if args.ablate:
            ablate(base_tree / "src")
            results["baseline"] = f"{base_rev} without observations"
        if args.new is not None:
            new_tree = tmp / "new"
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(new_tree), args.new],
                           check=True, capture_output=True)
            src_new = new_tree / "src"
            results["new"] = args.new
        try:
            for n in [int(x) for x in args.sizes.split(",")]:
                if args.corpus == "text":
                    sys.path.insert(0, str(ROOT))
                    from engines_scaling import write_text_corpus

                    crawl = tmp / f"text-{n}.jsonl"
                    write_text_corpus(crawl, n, max_sentences=args.sentences)
                else:
                    crawl = write_crawl(tmp / f"crawl-{n}.jsonl", n_pages=n)
                row: dict = {"documents_in": n, "corpus": args.corpus, "sentences": args.sentences}
                cpu_new, cpu_old = [], []
                runs = [(("new", src_new, cpu_new), ("old", base_tree / "src", cpu_old))] * args.repeats
                if args.repeats == 0:
                    runs = [(("new", src_new, cpu_new),)]
                for r, pair in enumerate(runs):
                    for label, src, sink in pair:
                        out = tmp / f"ds-{n}-{label}-{r}"
                        cpu, wall, _ = run(
                            thresher(src, "build", str(crawl), "-o", str(out), "--workers", "2", "-q"), src
                        )
                        sink.append(cpu)
                        if label == "new" and r == 0:
                            row["build_wall_s"] = round(wall, 2)
                            dataset = out
                        elif label == "old" or r > 0:
                            subprocess.run(["rm", "-rf", str(out)])
                if cpu_old:
                    row["build_cpu_s"] = {
                        "new": round(statistics.median(cpu_new), 3),
                        "baseline": round(statistics.median(cpu_old), 3),
                    }
                    row["build_cpu_ratio"] = round(statistics.median(cpu_new) / statistics.median(cpu_old), 4)
                else:
                    row["build_cpu_s"] = {"new": round(cpu_new[0], 3)}
                cpu, wall, _ = run(thresher(src_new, "report", str(dataset), "-o", str(tmp / "r.html"), "-q"), src_new)
                row["report_cpu_s"] = round(cpu, 3)
                row["report_bytes"] = (tmp / "r.html").stat().st_size
                index_bytes = sum(p.stat().st_size for p in (dataset / "index").iterdir())
                row["index_bytes"] = index_bytes
                row["samples_bytes"] = (dataset / "samples.jsonl.gz").stat().st_size
                row["shard_bytes"] = sum(p.stat().st_size for p in dataset.glob("shard-*"))
                # explain latency: ids and URLs drawn from the index, looked up in fresh processes
                # (what a user pays), and in one process (the lookup itself)
                sys.path.insert(0, str(src_new))
                import gzip

                from thresher.report.explain import explain

                entries = []
                for part in sorted((dataset / "index").glob("ids-*.jsonl.gz"))[:50]:
                    with gzip.open(part, "rt") as f:
                        entries += [json.loads(line) for line in f]
                rng = random.Random(3)
                picks = rng.sample(entries, min(20, len(entries)))
                lat = []
                for e in picks:
                    q = e["id"] if len(lat) % 2 == 0 or not e.get("url") else e["url"]
                    t0 = time.perf_counter()
                    found = explain(dataset, q, rerun_inputs=False)
                    lat.append(time.perf_counter() - t0)
                    assert found, q
                row["explain_ms_median"] = round(1000 * statistics.median(lat), 2)
                row["explain_ms_max"] = round(1000 * max(lat), 2)
                cpu, wall, proc = run(thresher(src_new, "explain", str(dataset), picks[0]["id"], "--no-rerun"), src_new)
                row["explain_cli_wall_s"] = round(wall, 3)
                cpu, wall, _ = run(thresher(src_new, "check", str(dataset), "--sample", "10000"), src_new)
                row["check_cpu_s"] = round(cpu, 3)
                kept = json.loads((dataset / "manifest.json").read_text())["records"]
                row["documents_kept"] = kept
                results["sizes"].append(row)
                print(json.dumps(row), flush=True)
                subprocess.run(["rm", "-rf", str(dataset)])
        finally:
            for tree in (base_tree, tmp / "new"):
                if tree.exists():
                    subprocess.run(
                        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], capture_output=True
                    )
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
