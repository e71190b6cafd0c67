"""What the FineWeb URL block list (4.56 M domains) adds to a build: CPU seconds and the peak memory
of the whole process tree, cold (the list compiled in a fresh work dir) and warm (its compiled file
already in `--quality-urls-compiled-dir`), against the same build without the list.

    python benchmarks/blocklist_build.py [--input A.warc.gz] [--workers 2] [--repeats 3]

Each run is `thresher build` in a child process. CPU: user + system of the tree (`RUSAGE_CHILDREN`
of a wrapper process). Memory: the tree's processes are sampled every 20 ms from /proc; the peak
of the summed PSS (smaps_rollup: shared pages divided among the processes that map them) and of the
summed RSS. Medians of the repeats. Writes benchmarks/results/blocklist_build.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
BLOCKLIST = DATA / "blocklists" / "fineweb-url-blocklist.tar.gz"
INPUT = DATA / "warc" / "aut" / "example.warc.gz"

_WRAPPER = """
import json, resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": proc.returncode, "cpu_s": use.ru_utime + use.ru_stime, "stderr": proc.stderr[-400:]}))
"""


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, ()))
    return found


def _rollup_kib(pid: int) -> tuple[int, int]:
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
    except OSError:
        pass
    return pss, rss


def run_once(cmd: list[str], env: dict[str, str]) -> dict:
    proc = subprocess.Popen([sys.executable, "-c", _WRAPPER, *cmd], env=env, stdout=subprocess.PIPE, text=True)
    peak = {"pss": 0, "rss": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pids = [p for p in _tree(proc.pid) if p != proc.pid]  # the wrapper itself is not the build
            figures = [_rollup_kib(p) for p in pids]
            peak["pss"] = max(peak["pss"], sum(f[0] for f in figures))
            peak["rss"] = max(peak["rss"], sum(f[1] for f in figures))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, _ = proc.communicate()
    done.set()
    sampler.join()
    result = json.loads(out)
    if result["rc"] != 0:
        raise SystemExit(f"build failed: {result['stderr']}")
    return {"cpu_s": result["cpu_s"], "peak_pss_mib": peak["pss"] / 1024, "peak_rss_mib": peak["rss"] / 1024}


def variant(name: str, args: argparse.Namespace, extra: list[str], warm_dir: str | None) -> dict:
    runs = []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "thresher", "build", str(args.input), "-o", f"{tmp}/out", "-q",
                   "--workers", str(args.workers), *extra]
            if warm_dir is not None:
                cmd += ["--quality-urls-compiled-dir", warm_dir]
            runs.append(run_once(cmd, {**os.environ, "PYTHONPATH": str(ROOT / "src")}))
    summary = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(name, json.dumps({k: round(v, 2) for k, v in summary.items()}), file=sys.stderr)
    return {"median": summary, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", type=Path, default=INPUT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not BLOCKLIST.exists() or not args.input.exists():
        sys.exit(f"needs {BLOCKLIST} and {args.input}")
    block = ["--quality-urls-blocklists", str(BLOCKLIST)]
    results: dict = {"input": str(args.input.relative_to(DATA)) if args.input.is_relative_to(DATA) else str(args.input),
                     "workers": args.workers, "repeats": args.repeats, "date": time.strftime("%Y-%m-%d"),
                     "load_avg_start": os.getloadavg()[0]}
    results["without"] = variant("without", args, [], None)
    results["cold"] = variant("cold", args, block, None)  # compiled in the build's fresh work dir
    with tempfile.TemporaryDirectory() as lists:
        subprocess.run([sys.executable, "-c", "import sys; from thresher.quality.list_store import shared_url_lists; "
                        "shared_url_lists((sys.argv[1],), sys.argv[2])", str(BLOCKLIST), lists],
                       env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, check=True)
        results["warm"] = variant("warm", args, block, lists)
    base = results["without"]["median"]
    for name in ("cold", "warm"):
        m = results[name]["median"]
        results[f"{name}_adds"] = {
            "cpu_s": m["cpu_s"] - base["cpu_s"],
            "peak_pss_mib": m["peak_pss_mib"] - base["peak_pss_mib"],
            "peak_rss_mib": m["peak_rss_mib"] - base["peak_rss_mib"],
        }
    results["load_avg_end"] = os.getloadavg()[0]
    out = ROOT / "benchmarks" / "results" / "blocklist_build.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: v for k, v in results.items() if k.endswith("_adds")}, indent=2))


if __name__ == "__main__":
    main()
