"""The cost of `--embed wordllama --semantic-dedup 0.9` inside `thresher build`, at N documents.

The same generated crawl (benchmarks/embed_scale.py's documents: templated sentences of mixed
length, 1 in 10 a reworded copy of an earlier one) is built twice in fresh child processes with the
local engine, quality filters off: plain, and with the embed and semantic-dedup phases. Each
build's CPU time (user + sys of the child) and peak RSS (ru_maxrss of the child) are recorded, with
the phases' wall times from stats.json. Usage: `python benchmarks/embed_build_scale.py 100000` →
benchmarks/results/embed_build_scale_<N>.json.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from embed_scale import generated_texts  # noqa: E402


def write_crawl(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i, text in enumerate(generated_texts(n, random.Random(0))):
            f.write(json.dumps({"url": f"https://gen.example/{i}", "text": text}) + "\n")


def run_build(crawl: Path, out: Path, extra: list[str]) -> dict:
    code = (
        "import resource, sys\n"
        "from thresher.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "u = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print('RUSAGE', u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr)\n"
        "raise SystemExit(rc)\n"
    )
    args = [sys.executable, "-c", code, "build", str(crawl), "-o", str(out), "--engine", "local", "--quality-preset", "none",
            "--progress-every", "0", *extra]
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(args, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    line = next(x for x in proc.stderr.splitlines() if x.startswith("RUSAGE"))
    _, cpu, rss = line.split()
    stats = json.loads((out / "stats.json").read_text())
    phases = {k.removeprefix("phase."): round(v, 2) for k, v in stats["timings_s"].items() if k.startswith("phase.")}
    return {"cpu_s": round(float(cpu), 2), "peak_rss_mib": round(int(rss) / 1024, 1), "kept": stats["kept"],
            "drops": stats.get("drops", {}), "phase_wall_s": phases}


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        crawl = tmp / "crawl.jsonl"
        write_crawl(crawl, n)
        plain = run_build(crawl, tmp / "plain", [])
        semantic = run_build(crawl, tmp / "semantic", ["--embed", "wordllama", "--semantic-dedup", "0.9"])
        manifest = json.loads((tmp / "semantic" / "manifest.json").read_text())
    result = {
        "documents": n, "machine": "2 shared cores, CPU only; CPU s = user + sys of the build process",
        "plain_build": plain, "build_with_embed_and_semantic_dedup": semantic,
        "semantic_dedup": manifest["embeddings"]["semantic_dedup"],
        "padding_efficiency": manifest["embeddings"]["padding_efficiency"],
        "cpu_ratio": round(semantic["cpu_s"] / plain["cpu_s"], 2),
    }
    out = ROOT / "benchmarks" / "results" / f"embed_build_scale_{n}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
