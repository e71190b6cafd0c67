"""The cost of `--embed wordllama --semantic-dedup 0.9` inside `thresher build`, at N documents.

The same generated crawl (benchmarks/embed_scale.py's documents: templated sentences of mixed
length, 1 in 10 a reworded copy of an earlier one) is built twice in fresh child processes with the
local engine, quality filters off: plain, and with the embed and semantic-dedup phases. Each
build's CPU time (user + sys of the child) and peak RSS (ru_maxrss of the child) are recorded, with
the phases' wall times from stats.json. While a build runs, its resident memory is sampled every
second (/proc/PID/status VmRSS) beside the newest task completion marker in its work dir, so the
result holds the RSS curve phase by phase, and a progress file is rewritten as it goes (a run
stopped early still says how far it got and at what memory).

Usage: `python benchmarks/embed_build_scale.py 100000 [--semantic-only]` →
benchmarks/results/embed_build_scale_<N>.json (progress: embed_build_scale_<N>.progress.json).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from embed_scale import generated_texts  # noqa: E402


def write_crawl(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i, text in enumerate(generated_texts(n, random.Random(0))):
            f.write(json.dumps({"url": f"https://gen.example/{i}", "text": text}) + "\n")


def _rss_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _newest_marker(done: Path) -> tuple[int, str]:
    try:
        names = [(p.stat().st_mtime, p.name) for p in done.iterdir()]
    except OSError:
        return 0, ""
    return len(names), max(names)[1] if names else ""


class Sampler(threading.Thread):
    """The child's RSS once a second, with the task markers done so far (the phase it is in)."""

    def __init__(self, pid: int, out: Path, progress: Path, label: str) -> None:
        super().__init__(daemon=True)
        self.pid, self.done, self.progress, self.label = pid, out / ".work" / "done", progress, label
        self.samples: list[dict] = []
        self.stop = threading.Event()
        self.start_time = time.monotonic()

    def run(self) -> None:
        last_write = 0.0
        while not self.stop.wait(1.0):
            rss = _rss_mib(self.pid)
            if rss is None:
                continue
            done, newest = _newest_marker(self.done)
            self.samples.append({"t_s": round(time.monotonic() - self.start_time, 1), "rss_mib": round(rss, 1),
                                 "tasks_done": done, "newest_task": newest})
            if time.monotonic() - last_write > 30:
                last_write = time.monotonic()
                self.progress.write_text(json.dumps({"build": self.label, "samples": self.curve()}, indent=1) + "\n")

    def curve(self) -> list[dict]:
        """One sample per phase change, and the highest sample of each phase (what a plot needs)."""
        out: list[dict] = []
        for s in self.samples:
            phase = s["newest_task"].rsplit("-", 1)[0]
            if not out or out[-1]["phase_after"] != phase:
                out.append(
                    {"phase_after": phase, "first_t_s": s["t_s"], "peak_rss_mib": s["rss_mib"], "at_t_s": s["t_s"]}
                )
            elif s["rss_mib"] > out[-1]["peak_rss_mib"]:
                out[-1].update(peak_rss_mib=s["rss_mib"], at_t_s=s["t_s"])
        return out


def run_build(crawl: Path, out: Path, extra: list[str], progress: Path, label: str) -> dict:
    code = (
        "import resource, sys\n"
        "from thresher.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        "u = resource.getrusage(resource.RUSAGE_SELF)\n"
        "print('RUSAGE', u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr)\n"
        "raise SystemExit(rc)\n"
    )
    args = [
        sys.executable,
        "-c",
        code,
        "build",
        str(crawl),
        "-o",
        str(out),
        "--engine",
        "local",
        "--quality-preset",
        "none",
        "--progress-every",
        "0",
        *extra,
    ]
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    t = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    sampler = Sampler(proc.pid, out, progress, label)
    sampler.start()
    stdout, stderr = proc.communicate()
    sampler.stop.set()
    sampler.join()
    if proc.returncode:
        raise SystemExit(stderr[-2000:])
    line = next(x for x in stderr.splitlines() if x.startswith("RUSAGE"))
    _, cpu, rss = line.split()
    stats = json.loads((out / "stats.json").read_text())
    phases = {k.removeprefix("phase."): round(v, 2) for k, v in stats["timings_s"].items() if k.startswith("phase.")}
    return {
        "cpu_s": round(float(cpu), 2),
        "wall_s": round(time.monotonic() - t, 1),
        "peak_rss_mib": round(int(rss) / 1024, 1),
        "kept": stats["kept"],
        "drops": stats.get("drops", {}),
        "phase_wall_s": phases,
        "rss_curve": sampler.curve(),
    }


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    semantic_only = "--semantic-only" in sys.argv
    n = int(args[0]) if args else 10_000
    results = ROOT / "benchmarks" / "results"
    progress = results / f"embed_build_scale_{n}.progress.json"
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        crawl = tmp / "crawl.jsonl"
        t = time.process_time()
        write_crawl(crawl, n)
        generate_cpu = time.process_time() - t
        plain = None if semantic_only else run_build(crawl, tmp / "plain", [], progress, "plain")
        semantic = run_build(
            crawl, tmp / "semantic", ["--embed", "wordllama", "--semantic-dedup", "0.9"], progress, "semantic"
        )
        manifest = json.loads((tmp / "semantic" / "manifest.json").read_text())
    result = {
        "documents": n, "machine": "2 shared cores, CPU only; CPU s = user + sys of the build process",
        "generate_cpu_s": round(generate_cpu, 1),
        "plain_build": plain, "build_with_embed_and_semantic_dedup": semantic,
        "semantic_dedup": manifest["embeddings"]["semantic_dedup"],
        "padding_efficiency": manifest["embeddings"]["padding_efficiency"],
        "cpu_ratio": round(semantic["cpu_s"] / plain["cpu_s"], 2) if plain else None,
    }
    (results / f"embed_build_scale_{n}.json").write_text(json.dumps(result, indent=2) + "\n")
    progress.unlink(missing_ok=True)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
