"""The scale contract (issue 29): peak memory and CPU per document of `thresher build` as the corpus
grows, for the default build and for one with every optional stage that needs no model download.

Corpus: recombined real paragraphs (`dedup_scale.generate`: sentences of real article bodies and
lingua's test sentences in 75 languages, ~3 KB a document, 10% edited copies), so the language
stage meets many languages and near dedup has real work. Each size is built by the CLI with the
pool engine; a sampler sums VmRSS over the build process and all its descendants every 0.1 s.

Configs:
- `default`: every default stage (extract, normalize, language with the lang extra, quality
  rules, exact and MinHash near dedup).
- `optional`: default plus the FineWeb URL blocklist (../shared/data/blocklists), PII redaction and
  decontamination against GSM8K (../shared/data/benchmarks-for-decontamination).
- `without_new_stages`: default without URL dedup and the consent stage (what a default build ran
  before they joined it), and `line_dedup`: default plus `--line-dedup`: what each stage costs.

Reported per size and config: peak tree RSS, peak of the driver and of the largest worker, CPU
seconds of the build and its workers (rusage of waited-for children), CPU µs per document, per-stage
seconds from stats.json, docs/s; and the growth per 1,000 documents between sizes. Goals (issue
29): tree peak <= 256 MiB at 200k with defaults, growth <= 0.25 MiB per 1,000, CPU per document at
the largest size within 15% of the smallest.

    python benchmarks/scale_contract.py [--sizes 50000,200000] [--configs default,optional] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from tree_memory import run_sampled  # noqa: E402

SHARED = HERE.parent.parent / "shared" / "data"
RESULTS = HERE / "results" / "scale_contract.json"


def corpus(n: int) -> Path:
    from dedup_scale import generate

    path = HERE / ".data" / f"recombined-{n}.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        generate(partial, n)
        partial.rename(path)
    return path


def config_args(name: str) -> list[str]:
    if name == "default":
        return []
    if name == "optional":
        blocklist = SHARED / "blocklists" / "fineweb-url-blocklist.tar.gz"
        bench = SHARED / "benchmarks-for-decontamination" / "gsm8k" / "test.jsonl"
        return ["--quality-urls-blocklists", str(blocklist), "--pii", "email,ip,phone,card,iban",
                "--decontaminate", str(bench), "--decontaminate-field", "question,answer"]
    if name == "without_new_stages":  # the default build before URL dedup and the consent stage
        return ["--no-url-dedup", "--consent", "off"]
    if name == "line_dedup":
        return ["--line-dedup"]
    raise SystemExit(f"unknown config {name!r}")


def measure(n: int, config: str, workers: int) -> dict:
    data = corpus(n)
    out = Path(tempfile.mkdtemp(prefix="thresher-scale-")) / "out"
    thresher = Path(sys.executable).parent / "thresher"
    cmd = [str(thresher), "build", str(data), "-o", str(out), "-q", "--workers", str(workers), *config_args(config)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        sampled = run_sampled(cmd, out / ".work")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        stats = json.loads((out / "stats.json").read_text())
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)
    # rusage counts the children the build waited for; a worker reaped by the fork server may be
    # missed, and the sampler misses at most the last 0.1 s of each process: the larger is nearer
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), sampled["sampled_cpu_s"])
    timings = stats.get("timings_s", {})
    return {
        "documents": n,
        "config": config,
        "peak_tree_rss_mib": round(sampled["peak_tree_rss_mib"], 1),
        "peak_tree_pss_mib": round(sampled["peak_tree_pss_mib"], 1),
        "peak_driver_mib": sampled["peak_driver_mib"],
        "peak_largest_child_mib": sampled["peak_largest_child_mib"],
        "peak_by_phase_mib": sampled["peak_by_phase_mib"],
        "pss_at_peak_by_process_mib": sampled["pss_at_peak_by_process_mib"],
        "wall_s": round(sampled["wall_s"], 1),
        "cpu_s": round(cpu, 1),
        "cpu_us_per_document": round(cpu / n * 1e6, 1),
        "docs_per_s": round(n / sampled["wall_s"], 1),
        "kept": stats.get("kept"),
        "dropped": stats.get("dropped"),
        "stage_us_per_document": {
            k: round(v / n * 1e6, 1) for k, v in sorted(timings.items()) if not k.startswith("phase.")
        },
        "phase_s": {k: round(v, 2) for k, v in sorted(timings.items()) if k.startswith("phase.")},
    }


def summary(rows: list[dict]) -> dict:
    out = {}
    for config in sorted({r["config"] for r in rows}):
        mine = sorted((r for r in rows if r["config"] == config), key=lambda r: r["documents"])
        if len(mine) < 2:
            continue
        a, b = mine[0], mine[-1]
        out[config] = {
            "from": a["documents"],
            "to": b["documents"],
            "growth_mib_per_1000": round(
                (b["peak_tree_rss_mib"] - a["peak_tree_rss_mib"]) / (b["documents"] - a["documents"]) * 1000, 3
            ),
            "pss_growth_mib_per_1000": round(
                (b["peak_tree_pss_mib"] - a["peak_tree_pss_mib"]) / (b["documents"] - a["documents"]) * 1000, 3
            ),
            "cpu_per_document_ratio": round(b["cpu_us_per_document"] / a["cpu_us_per_document"], 3),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="50000,200000")
    ap.add_argument("--configs", default="default,optional")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args()
    rows = []
    for config in args.configs.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            row = measure(n, config, args.workers)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    result = {
        "benchmark": "scale_contract",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "when": time.strftime("%Y-%m-%d"),
        "workers": args.workers,
        "load_average": os.getloadavg(),
        "rows": rows,
        "summary": summary(rows),
    }
    path = Path(args.out)
    previous = json.loads(path.read_text()) if path.exists() else {}
    keep = [
        r
        for r in previous.get("rows", [])
        if (r["documents"], r["config"]) not in {(x["documents"], x["config"]) for x in rows}
    ]
    result["rows"] = sorted(keep + rows, key=lambda r: (r["config"], r["documents"]))
    result["summary"] = summary(result["rows"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["summary"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
