"""A build of the real archives with the FineWeb URL block list (4.6 M domains), with this checkout's
code and, as the peer, another source tree (the code before the list was cached per process).

    python benchmarks/blocklist_build.py [--before-src OTHER/src] [--workers 2] [--limit N]

Each variant runs `thresher build` in a child process; the CPU time and peak RSS of its process tree
come from `RUSAGE_CHILDREN` (each variant in its own wrapper process, so the numbers do not mix).
Writes benchmarks/results/blocklist_build.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BLOCKLIST = DATA / "blocklists" / "fineweb-url-blocklist.tar.gz"

_WRAPPER = """
import json, resource, subprocess, sys, time
t = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "wall_s": wall, "cpu_s": use.ru_utime + use.ru_stime,
                  "max_rss_mib": use.ru_maxrss / 1024, "stderr_tail": proc.stderr[-400:]}))
"""


def archives() -> list[str]:
    found = sorted(p for p in (DATA / "warc").glob("*/*") if p.is_file() and p.name not in ("LICENSE", "README.md"))
    return [str(p) for p in found]


def run_variant(src: Path, inputs: list[str], workers: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PYTHONPATH": str(src)}
        cmd = [sys.executable, "-m", "thresher", "build", *inputs, "-o", f"{tmp}/out", "-q",
               "--workers", str(workers), "--quality-urls-blocklists", str(BLOCKLIST)]
        out = subprocess.run([sys.executable, "-c", _WRAPPER, *cmd], env=env, capture_output=True, text=True, check=True)
        result = json.loads(out.stdout)
        manifest = Path(tmp, "out", "manifest.json")
        result["records"] = json.loads(manifest.read_text())["records"] if manifest.exists() else None
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", type=Path, default=None, help="source tree of the code to compare against")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="build only the first N archives (the before code loads the list once per archive)")
    args = parser.parse_args()
    if not BLOCKLIST.exists():
        sys.exit(f"needs {BLOCKLIST}")
    inputs = archives()[: args.limit]
    results = {"inputs": len(inputs), "workers": args.workers, "blocklist": BLOCKLIST.name,
               "date": time.strftime("%Y-%m-%d"), "load_avg_start": os.getloadavg()[0]}
    results["after"] = run_variant(ROOT / "src", inputs, args.workers)
    if args.before_src is not None:
        results["before"] = run_variant(args.before_src, inputs, args.workers)
        results["cpu_ratio_before_over_after"] = results["before"]["cpu_s"] / results["after"]["cpu_s"]
    results["load_avg_end"] = os.getloadavg()[0]
    out = ROOT / "benchmarks" / "results" / "blocklist_build.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
