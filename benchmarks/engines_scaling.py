"""Engines side by side: docs/s for 1 and 2 pool workers and Ray, identical output everywhere, and
the cost of many partitions — the measurements behind docs/scaling.md.

1. speed-up: the demo HTML crawl (CPU-bound: extraction, quality, MinHash), `--workers 1` vs
   `--workers 2` vs `--engine ray` (2 CPUs), interleaved repeats, medians; manifests compared. The
   input is planned as a build plans it by default (`--partitions N` forces about N), and each run
   records its phases' wall time, its CPU time and the load average around it (the box is shared:
   the CPU ratio is the number that others' load disturbs least).
2. identity at scale: a generated text corpus of >= 100k documents (templated articles with exact
   and near duplicates) built by local, pool (2) and Ray; manifests and stats must be identical.
3. partition overhead: the HTML crawl as planned by default vs split into 64 partitions.

Wall time, CPU time (user + sys of the whole process tree) and peak RSS come from GNU time.
Usage: python benchmarks/engines_scaling.py [--pages 6000] [--docs 100000] [--repeats 3] [--skip-identity]
       [--parts speedup,partitions,identity] [--variants 1,2,ray] [--partitions N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
THRESHER = Path(sys.executable).parent / "thresher"
sys.path.insert(0, str(ROOT.parent / "src"))


def timed(cmd: list[str]) -> dict[str, float]:
    load_before = os.getloadavg()[0]
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%e %U %S %M", "-o", tf.name, *cmd], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise RuntimeError(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
        wall, user, sys_s, rss = tf.read().split()
    return {"wall_s": float(wall), "cpu_s": round(float(user) + float(sys_s), 2), "peak_rss_mib": int(rss) / 1024,
            "load_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)]}


def phases_of(out: Path) -> dict[str, float]:
    return {
        k.removeprefix("phase."): round(v, 2) for k, v in stats_of(out)["timings_s"].items() if k.startswith("phase.")
    }


def planned_partitions(data: Path, partition_bytes: str | None) -> int:
    from thresher.read.config import InputConfig
    from thresher.read.sources import plan_partitions

    config = InputConfig(partition_bytes=int(partition_bytes)) if partition_bytes else InputConfig()
    return len(plan_partitions([str(data)], config))


def manifest_of(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def stats_of(out: Path) -> dict:
    return json.loads((out / "stats.json").read_text())


def write_text_corpus(path: Path, n_docs: int, seed: int = 11, max_sentences: int | None = None) -> None:
    """Text documents (no HTML): templated articles; 10% exact and 10% near duplicates.
    `max_sentences` shortens each article (memory scales with the number of documents, not their
    length, so short documents measure it at a fraction of the CPU cost)."""
    from thresher.demo import _english_article

    rng = random.Random(seed)
    kept: list[str] = []
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n_docs):
            roll = rng.random()
            if kept and roll < 0.1:
                text = rng.choice(kept)
            elif kept and roll < 0.2:
                text = rng.choice(kept) + "\n\nThis article was updated with a correction on page two."
            else:
                title, paragraphs = _english_article(rng)
                if max_sentences is not None:
                    flat = [s for p in paragraphs for s in p][:max_sentences]
                    paragraphs = [flat[i : i + 3] for i in range(0, len(flat), 3)]
                text = title + "\n\n" + "\n\n".join(" ".join(p) for p in paragraphs)
                if len(kept) < 5000:
                    kept.append(text)
                else:
                    kept[rng.randrange(len(kept))] = text
            f.write(json.dumps({"url": f"https://gen.example/{i}", "text": text}) + "\n")


def build_cmd(data: Path, out: Path, *extra: str) -> list[str]:
    return [str(THRESHER), "build", str(data), "-o", str(out), "-q", *extra]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=6000)
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-identity", action="store_true")
    ap.add_argument("--parts", default="speedup,partitions,identity", help="which measurements to run")
    ap.add_argument("--sentences", type=int, default=None, help="shorten the identity corpus's articles to N sentences")
    ap.add_argument("--variants", default="1,2,ray", help="speed-up runs: 1 and 2 pool workers, ray (2 CPUs)")
    ap.add_argument(
        "--partitions",
        type=int,
        default=None,
        help=(
            "speed-up input split into about N partitions "
            "(--input-partition-bytes size/N; default: the build's own plan)"
        ),
    )
    ap.add_argument("--out", default=str(ROOT / "results" / "engines_scaling.json"))
    args = ap.parse_args()
    from thresher.demo import write_crawl

    data_dir = ROOT / ".data"
    html = data_dir / f"demo-{args.pages}.jsonl"
    if not html.exists():
        write_crawl(html, n_pages=args.pages)
    n_html = sum(1 for _ in open(html, "rb"))
    size = html.stat().st_size
    part_bytes = str(-(-size // args.partitions)) if args.partitions else None
    work = Path(tempfile.mkdtemp(prefix="thresher-scaling-"))
    parts = set(args.parts.split(","))
    if args.skip_identity:
        parts.discard("identity")
    out_path = Path(args.out)
    result: dict = json.loads(out_path.read_text()) if out_path.exists() else {}  # parts run separately merge
    result["machine"] = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    try:
        # 1. speed-up
        if "speedup" in parts:
            load_start = os.getloadavg()
            result.pop("load_average_at_start", None)  # recorded per part now
            split = ("--input-partition-bytes", part_bytes) if part_bytes else ()
            all_variants = {
                "1": ("pool, 1 worker", ("--workers", "1", *split)),
                "2": ("pool, 2 workers", ("--workers", "2", *split)),
                "ray": ("ray, 2 CPUs", ("--engine", "ray", "--workers", "2", *split)),
            }
            variants = dict(all_variants[v] for v in args.variants.split(","))
            runs: dict[str, list[dict]] = {k: [] for k in variants}
            manifests = {}
            for r in range(args.repeats):
                for name, extra in variants.items():
                    out = work / f"speed-{r}-{name.split(',')[0]}-{name[-9:].strip()}".replace(" ", "")
                    runs[name].append({**timed(build_cmd(html, out, *extra)), "phases_s": phases_of(out)})
                    manifests[name] = manifest_of(out)
                    print(f"{name:<16} {runs[name][-1]}", file=sys.stderr)
                    shutil.rmtree(out, ignore_errors=True)
            base_name = "pool, 1 worker"
            base = statistics.median(x["wall_s"] for x in runs[base_name]) if base_name in runs else None
            base_cpu = statistics.median(x["cpu_s"] for x in runs[base_name]) if base_name in runs else None

            def summary(rs: list[dict]) -> dict:
                wall = statistics.median(x["wall_s"] for x in rs)
                cpu = statistics.median(x["cpu_s"] for x in rs)
                phase_names = sorted({k for x in rs for k in x["phases_s"]})
                return {
                    "median_wall_s": round(wall, 2),
                    "docs_per_s": round(n_html / wall, 1),
                    "speedup_vs_1_worker": round(base / wall, 2) if base else None,
                    "cpu_s_per_1k_docs": round(1000 * cpu / n_html, 2),
                    "cpu_vs_1_worker": round(cpu / base_cpu, 3) if base_cpu else None,
                    "peak_rss_mib": round(max(x["peak_rss_mib"] for x in rs), 1),
                    "median_phases_s": {
                        k: round(statistics.median(x["phases_s"].get(k, 0.0) for x in rs), 2) for k in phase_names
                    },
                    "runs": [{k: x[k] for k in ("wall_s", "cpu_s", "load_1min")} for x in rs],
                }

            result["speedup"] = {
                "corpus": f"thresher.demo HTML crawl, {args.pages} pages, {n_html} records, {size / 1e6:.1f} MB, "
                f"{planned_partitions(html, part_bytes)} partitions"
                + (f" (--input-partition-bytes {part_bytes})" if part_bytes else " (the default plan)"),
                "load_average_at_start": [round(x, 2) for x in load_start],
                "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
                "identical_manifests": len({json.dumps(m, sort_keys=True) for m in manifests.values()}) == 1,
                "results": {name: summary(rs) for name, rs in runs.items()},
            }
        # 3. partition overhead
        if "partitions" in parts:
            overhead = {}
            for label, part in (("default plan", None), ("64 partitions", str(-(-size // 64)))):
                out = work / f"parts-{label.split()[0]}"
                split = ("--input-partition-bytes", part) if part else ()
                t = timed(build_cmd(html, out, "--workers", "2", *split))
                overhead[label] = {**t, "partitions": planned_partitions(html, part), "phases_s": phases_of(out)}
                overhead[label]["manifest_sha256s"] = [s["sha256"] for s in manifest_of(out)["shards"]]
                shutil.rmtree(out, ignore_errors=True)
            result["partitions"] = overhead
            result["partitions_identical"] = (
                overhead["default plan"]["manifest_sha256s"] == overhead["64 partitions"]["manifest_sha256s"]
            )
        # 2. identity at scale
        if "identity" in parts:
            text = data_dir / (f"text-{args.docs}" + (f"-s{args.sentences}" if args.sentences else "") + ".jsonl")
            if not text.exists():
                write_text_corpus(text, args.docs, max_sentences=args.sentences)
            tsize = text.stat().st_size
            part = str(max(1 << 20, -(-tsize // 16)))
            identity = {}
            for name, extra in {
                "local": ("--engine", "local"),
                "pool, 2 workers": ("--workers", "2"),
                "ray, 2 CPUs": ("--engine", "ray", "--workers", "2"),
            }.items():
                out = work / f"id-{name.split(',')[0]}"
                t = timed(build_cmd(text, out, *extra, "--input-partition-bytes", part))
                st = stats_of(out)
                identity[name] = {
                    **t,
                    "docs_per_s": round(args.docs / t["wall_s"], 1),
                    "manifest": manifest_of(out),
                    "counters": st["counters"],
                    "phases_s": {k: v for k, v in st["timings_s"].items() if k.startswith("phase.")},
                }
                print(f"identity {name:<16} {t}", file=sys.stderr)
                shutil.rmtree(out, ignore_errors=True)
            ref = identity["local"]
            result["identity"] = {
                "corpus": f"generated text corpus, {args.docs} documents, {tsize / 1e6:.1f} MB, 16 partitions",
                "identical_manifests": all(v["manifest"] == ref["manifest"] for v in identity.values()),
                "equal_stats": all(v["counters"] == ref["counters"] for v in identity.values()),
                "kept": ref["manifest"]["records"],
                "shard_sha256s": [s["sha256"][:16] for s in ref["manifest"]["shards"]],
                "runs": {
                    k: {kk: vv for kk, vv in v.items() if kk not in ("manifest", "counters")}
                    for k, v in identity.items()
                },
            }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    if "speedup" in result:
        print(json.dumps(result["speedup"], indent=2))
    if "identity" in result:
        print(json.dumps({k: v for k, v in result["identity"].items() if k != "runs"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
