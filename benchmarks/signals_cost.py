"""What `build --signals` costs over the same build without it (issue 33: goal <= 15% CPU): CPU
seconds per document, and the disk the signals table takes per document.

Corpus: the first `--docs` lines (default 20,000) of the recombined real-paragraph corpus
(`benchmarks/.data/recombined-50000.jsonl`, made by `scale_contract.py`): text input, so the build
runs no extraction and the overhead is measured against the cheapest chain (language, quality
rules, exact and near dedup, URL dedup); with HTML input the same overhead is a smaller share.
Each build runs in its own process with the local engine (every task in that process) and the
default config; plain and --signals builds alternate, `--repeats` times each, and the medians are
reported. The package's bytecode is compiled once before the timed runs. CPU is the child's
user + system time (`resource.getrusage(RUSAGE_CHILDREN)`); the phase
wall times come from the build's `stats.json`. The shards of both builds are compared byte for byte.

    python benchmarks/signals_cost.py [--docs 20000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "signals_cost.json"
SOURCE = HERE / ".data" / "recombined-50000.jsonl"
SRC = HERE.parent / "src"

DRIVER = r"""
import sys
from thresher.config import RunConfig
from thresher.run.build import build

corpus, out, signals = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
build([corpus], out, RunConfig.from_dict({"exec": {"engine": "local"}, "output": {"signals": signals}}))
"""


def compile_bytecode() -> None:
    """Write the package's bytecode once before the timed runs, as `pip install` does (and the
    headline benchmark): with PYTHONDONTWRITEBYTECODE set, a source checkout compiles every module
    again in every process, and a --signals build imports more of them than a plain one."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(SRC / "thresher")], check=True,
                   stdout=subprocess.DEVNULL)


def subsample(docs: int, dest: Path) -> Path:
    with open(SOURCE, "rb") as src, open(dest, "wb") as out:
        for i, line in enumerate(src):
            if i >= docs:
                break
            out.write(line)
    return dest


def run_build(corpus: Path, out: Path, signals: bool) -> dict[str, float]:
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", DRIVER, str(corpus), str(out), "1" if signals else "0"], env=env,
                   check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    stats = json.loads((out / "stats.json").read_text())
    timings = stats.get("timings_s", {})
    phases = {k.removeprefix("phase."): v for k, v in timings.items() if k.startswith("phase.")}
    return {"cpu_s": cpu, **{f"wall_{k}_s": v for k, v in phases.items()}}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    if not SOURCE.exists():
        sys.exit(f"{SOURCE} is missing: run benchmarks/scale_contract.py once to generate it")
    compile_bytecode()
    with tempfile.TemporaryDirectory(prefix="signals-cost-") as tmp_name:
        tmp = Path(tmp_name)
        corpus = subsample(args.docs, tmp / "corpus.jsonl")
        runs: dict[str, list[dict[str, float]]] = {"plain": [], "signals": []}
        for _ in range(args.repeats):
            for kind in ("plain", "signals"):
                runs[kind].append(run_build(corpus, tmp / kind, kind == "signals"))
        plain_manifest = json.loads((tmp / "plain" / "manifest.json").read_text())
        signals_manifest = json.loads((tmp / "signals" / "manifest.json").read_text())
        same_shards = plain_manifest["shards"] == signals_manifest["shards"]
        section = signals_manifest["signals"]
        rows = section["rows"]
        medians = {kind: {key: statistics.median(r[key] for r in rs) for key in rs[0]} for kind, rs in runs.items()}
        plain_cpu, signals_cpu = medians["plain"]["cpu_s"], medians["signals"]["cpu_s"]
        result = {
            "benchmark": "signals_cost",
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                        "load_average": os.getloadavg()},
            "corpus": {"source": SOURCE.name, "documents": args.docs, "input_bytes": corpus.stat().st_size},
            "repeats": args.repeats,
            "runs": runs,
            "medians": medians,
            "cpu_overhead": round(signals_cpu / plain_cpu - 1, 4),
            "cpu_us_per_document": {"plain": round(plain_cpu / args.docs * 1e6, 1),
                                    "signals": round(signals_cpu / args.docs * 1e6, 1),
                                    "added": round((signals_cpu - plain_cpu) / args.docs * 1e6, 1)},
            "disk": {
                "signals_bytes": section["bytes"],
                "signals_rows": rows,
                "signals_bytes_per_row": round(section["bytes"] / rows, 1),
                "shard_bytes": plain_manifest["bytes"],
                "kept": plain_manifest["records"],
                "plain_output_bytes": folder_bytes(tmp / "plain"),
                "signals_output_bytes": folder_bytes(tmp / "signals"),
                "input_bytes_per_document": round(corpus.stat().st_size / args.docs, 1),
            },
            "same_shards": same_shards,
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("cpu_overhead", "cpu_us_per_document", "disk", "same_shards")},
                     indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
