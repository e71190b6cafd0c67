"""What a small build pays before and around its pages: the figures behind the start-up choices
(`dedup.kernels.AUTO_PURE_DOCUMENTS`, `run.plan.GROUP_TASK_MIN_BYTES`, `write.atomic.write_work_json`,
optional stages imported only when enabled). Each is measured here, CPU time, medians of repeats:

- importing NumPy (a fresh interpreter with and without `import numpy`);
- importing the pii detectors after the config (what a build without `[pii]` no longer pays);
- MinHash per document, pure and NumPy kernels, on the demo crawl's kept texts;
- a task completion marker written with `indent` (Python encoder) and compact (C encoder);
- one group task's own cost: the same small build with 32 key partitions and with 1;
- a 1-page WARC build, end to end.

    python benchmarks/startup_costs.py [--repeats 7]   # writes benchmarks/results/startup_costs.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
WARC = ROOT.parent / "shared" / "data" / "warc"
WHIRLWIND = WARC / "whirlwind" / "whirlwind.warc.gz"
# the headline's real WARC files (benchmarks/headline_datatrove.py SOURCES): their kept texts are
# what a small real build hashes (~3.7 KB each; the demo's are ~1.1 KB)
REAL = ("aut/example.warc.gz", "resiliparse/warcfile.warc.gz", "dolma/sample-0000.warc.gz", "dolma/sample-0001.warc.gz",
        "pywb/iana.warc.gz", "ukwa/BL-20140325121225068-00000-32090_opera_8443.warc.gz",
        "ukwa/BL-20140325122341434-00000-32090_opera_8443.warc.gz", "whirlwind/whirlwind.warc.gz")
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "src"))


def child_cpu(cmd: list[str]) -> float:
    """CPU seconds (user + system) of one child process run to its end (getrusage: microseconds,
    where `os.times` counts clock ticks of 10 ms)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_diff(a: list[str], b: list[str], repeats: int) -> dict[str, float]:
    """Median CPU of b minus a, runs interleaved."""
    ta, tb = [], []
    for _ in range(repeats):
        ta.append(child_cpu(a))
        tb.append(child_cpu(b))
    return {"without_s": round(statistics.median(ta), 4), "with_s": round(statistics.median(tb), 4),
            "cost_s": round(statistics.median(tb) - statistics.median(ta), 4)}


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def build(inputs: list[str], out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "thresher", "build", *inputs, "-o", str(out), "-q", "--workers", "1",
            "--overwrite", *extra]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=str(BENCH / "results" / "startup_costs.json"))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    r = args.repeats
    result: dict = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "loadavg_before": [round(x, 2) for x in os.getloadavg()], "repeats": r}
    result["numpy_import"] = median_diff(python("pass"), python("import numpy"), r)
    result["pii_detectors_import"] = median_diff(python("import thresher.config"),
                                                 python("import thresher.config, thresher.pii.redact"), r)

    from thresher.dedup.minhash import MinHasher
    from thresher.demo import write_crawl
    from thresher.write.atomic import dumps_json

    with tempfile.TemporaryDirectory(prefix="startup-costs-") as tmp_s:
        tmp = Path(tmp_s)
        crawl = write_crawl(tmp / "crawl.jsonl", n_pages=300)
        out = tmp / "out"
        subprocess.run(build([str(crawl)], out, "--keep-work"), check=True, env=ENV, capture_output=True)
        corpora = {"demo": out}
        real = [str(WARC / f) for f in REAL]
        if all(Path(f).is_file() for f in real):
            subprocess.run(build(real, tmp / "real"), check=True, env=ENV, capture_output=True)
            corpora["real_warc"] = tmp / "real"
        result["minhash_us_per_document"] = {}
        for corpus, dataset in corpora.items():
            texts = [
                json.loads(line)["text"]
                for shard in sorted(dataset.glob("shard-*.jsonl.gz"))
                for line in gzip.open(shard)
            ]
            per_doc = {}
            for kernel in ("pure", "numpy"):
                hasher = MinHasher(kernel=kernel)  # type: ignore[arg-type]
                runs = []
                for _ in range(r):
                    t = time.process_time()
                    for text in texts:
                        hasher.sketch(text)
                    runs.append((time.process_time() - t) / len(texts))
                per_doc[kernel] = round(statistics.median(runs) * 1e6, 1)
            saved = per_doc["pure"] - per_doc["numpy"]
            result["minhash_us_per_document"][corpus] = {
                **per_doc,
                "documents": len(texts),
                "mean_chars": round(sum(map(len, texts)) / len(texts)),
                "documents_to_pay_numpy_import": round(result["numpy_import"]["cost_s"] * 1e6 / saved)
                if saved > 0
                else None,
            }
        marker = max((out / ".work" / "done").glob("*.json"), key=lambda p: p.stat().st_size)
        data = json.loads(marker.read_text())
        timings = {}
        for name, encode in (("indent", dumps_json),
                             ("compact", lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":")))):
            runs = []
            for _ in range(r):
                t = time.process_time()
                for _ in range(20):
                    encode(data)
                runs.append((time.process_time() - t) / 20)
            timings[name] = round(statistics.median(runs) * 1000, 3)
        result["task_marker_ms"] = {
            **timings,
            "marker": marker.name,
            "bytes_compact": len(json.dumps(data, separators=(",", ":"))),
        }
        many = median_diff(build([str(crawl)], tmp / "o1", "--key-partitions", "1", "--keep-work"),
                           build([str(crawl)], tmp / "o32", "--key-partitions", "32", "--keep-work"), r)

        def grouping_tasks(o: Path) -> int:
            return sum(1 for m in (o / ".work" / "done").glob("*.json") if m.name.startswith(("group-", "verify-")))

        extra = grouping_tasks(tmp / "o32") - grouping_tasks(tmp / "o1")
        result["group_task_own_cost"] = {**many, "extra_group_and_verify_tasks": extra,
                                         "ms_per_task": round(many["cost_s"] / extra * 1000, 2)}
        if WHIRLWIND.is_file():
            runs = [child_cpu(build([str(WHIRLWIND)], tmp / "w")) for _ in range(r)]
            result["one_page_warc_build_cpu_s"] = round(statistics.median(runs), 3)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
