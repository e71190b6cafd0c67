"""Random SIGKILL trials (issue 36): kill `thresher build` anywhere, finalize and the work dir's
clean-up included, rerun the same command, and require exit 0 and the reference dataset's bytes.

One uninterrupted build gives the reference files and the timeline: its duration, when its
finalize begins (`stats.json` appears: finalize writes it first) and when the manifest appears
(what follows is the work dir's finish: marker, rename, sweep). Each trial starts the same build
in a fresh folder and SIGKILLs its whole process group (driver, fork server, workers: a machine's
OOM killer or a lost node, not a polite stop) at a drawn time, in turn: uniformly over the whole
build; once `stats.json` appears, after a delay drawn over the reference's finalize; once
`manifest.json` appears, after a delay drawn over the reference's finish. What the kill left is
recorded (`building`; `finishing`: the manifest beside the work dir; `retired`: a `.work.done-*`
folder; `done`), then the same command runs again. A kill that would land after the build exited
is no trial: the time is drawn again (counted). Neither is a kill that lands after the build's
last file operation, while the interpreter exits (the folder is a finished dataset with no work
dir, `done`): nothing was interrupted, and the rerun meets the finished-dataset rule (exit 1,
"pass --overwrite"); such kills are counted with their rerun's exit code and drawn again.

    python benchmarks/kill_trials.py [--trials 10] [--docs 4000] [--seed 36]

Writes `benchmarks/results/kill_trials.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
RESULTS = HERE / "results" / "kill_trials.json"
VARYING = ("stats.json", "README.md")  # timings: the same on no two runs


def write_corpus(path: Path, docs: int, seed: int) -> None:
    """Pages with boilerplate around a body; one in ten repeats an earlier body (dedup has work)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(3000)]
    bodies: list[str] = []
    with open(path, "w", encoding="utf-8") as f:
        for i in range(docs):
            if bodies and rng.random() < 0.1:
                body = rng.choice(bodies)
            else:
                body = " ".join(" ".join(rng.choices(words, k=12)) + "." for _ in range(rng.randint(15, 40)))
                bodies.append(body)
            html = (f"<html><head><title>Page {i}</title></head><body><nav><a href='/'>Home</a></nav>"
                    f"<article><h1>Page {i}</h1><p>{body}</p></article><footer>Privacy policy.</footer></body></html>")
            f.write(json.dumps({"url": f"https://k.example/{i}", "html": html}) + "\n")


def command(corpus: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "thresher", "build", str(corpus), "-o", str(out), "--engine", "pool",
            "--workers", "2", "--quality", "none", "--output-shard-max-records", "500", "-q"]


def start(corpus: Path, out: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(SRC))
    with open(log, "ab") as err:
        return subprocess.Popen(command(corpus, out), env=env, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)


def files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name not in VARYING}


def state(out: Path) -> str:
    names = {p.name for p in out.iterdir()} if out.is_dir() else set()
    if any(n.startswith(".work.done-") for n in names):
        return "retired"
    if ".work" in names:
        return "finishing" if "manifest.json" in names else "building"
    return "done" if "manifest.json" in names else "empty"


def reference(corpus: Path, out: Path, log: Path) -> dict[str, float]:
    """When the build's finalize began, when its manifest appeared, when its work dir was gone and
    when it exited (s after its start), polled every 2 ms."""
    t0 = time.monotonic()
    proc = start(corpus, out, log)
    seen: dict[str, float] = {}
    while proc.poll() is None:
        names = {e.name for e in out.iterdir()} if out.is_dir() else set()
        for name in ("stats.json", "manifest.json"):
            if name not in seen and name in names:
                seen[name] = time.monotonic() - t0
        if "manifest.json" in seen and "gone" not in seen and not any(n.startswith(".work") for n in names):
            seen["gone"] = time.monotonic() - t0
        time.sleep(0.002)
    end = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"the reference build failed: {log.read_text()}")
    return {"end": end, **{k: seen.get(k, end) for k in ("stats.json", "manifest.json", "gone")}}


def trial(corpus: Path, out: Path, log: Path, trigger: str | None, draw: Any) -> dict[str, Any]:
    """One kill: `draw()` seconds after the start (`trigger` None) or after `trigger` appears."""
    redrawn = 0
    after_end: list[int] = []  # the reruns' exit codes of kills that landed as the process exited
    while True:
        shutil.rmtree(out, ignore_errors=True)
        delay = draw()
        t0 = time.monotonic()
        proc = start(corpus, out, log)
        fired = t0 if trigger is None else None
        while proc.poll() is None:
            now = time.monotonic()
            if fired is None and (out / str(trigger)).exists():
                fired = now
            if fired is not None and now - fired >= delay:
                os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.001)
        if proc.wait() == 0:
            redrawn += 1  # the build had exited: not a kill
            continue
        kill_at = time.monotonic() - t0
        time.sleep(0.2)  # the killed group's pipes close
        left = state(out)
        if left != "done":
            break
        after_end.append(start(corpus, out, log).wait())
    work = {p.name: sorted(e.name for e in p.iterdir()) for p in out.iterdir() if p.name.startswith(".work")}
    t1 = time.monotonic()
    rerun = start(corpus, out, log)
    rc = rerun.wait()
    return {"kill_at_s": round(kill_at, 3), "left": left, "work_dirs": {k: v[:12] for k, v in work.items()},
            "rerun_rc": rc, "rerun_s": round(time.monotonic() - t1, 2), "redrawn": redrawn,
            "killed_while_exiting": after_end}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=36)
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="kill-trials-"))
    try:
        corpus = tmp / "crawl.jsonl"
        write_corpus(corpus, args.docs, args.seed)
        log = tmp / "stderr.txt"
        times = reference(corpus, tmp / "reference", log)
        want = files(tmp / "reference")
        windows = [  # (name, file that starts the delay, the delay's range)
            ("whole build", None, times["end"]),
            ("finalize", "stats.json", times["gone"] - times["stats.json"]),
            ("after the manifest", "manifest.json", times["gone"] - times["manifest.json"]),
        ]
        trials = []
        for i in range(args.trials):
            name, trigger, span = windows[i % len(windows)]
            result = trial(corpus, tmp / f"t{i}", log, trigger, lambda span=span: rng.uniform(0.0, span))
            result["window"] = name
            result["identical"] = files(tmp / f"t{i}") == want
            result["work_left"] = sorted(p.name for p in (tmp / f"t{i}").iterdir() if p.name.startswith(".work"))
            trials.append(result)
            print(json.dumps(result), flush=True)
        ok = sum(t["rerun_rc"] == 0 and t["identical"] and not t["work_left"] for t in trials)
        report = {
            "benchmark": "kill_trials",
            "command": " ".join(command(Path("crawl.jsonl"), Path("out"))[1:]),
            "docs": args.docs, "seed": args.seed, "trials": args.trials,
            "reference_s": {k: round(v, 3) for k, v in times.items()},
            "resumed_identical_rc0": ok,
            "left_states": {s: sum(t["left"] == s for t in trials) for s in sorted({t["left"] for t in trials})},
            "redrawn": sum(t["redrawn"] for t in trials),
            "killed_while_exiting": sum(len(t["killed_while_exiting"]) for t in trials),
            "results": trials,
            "stderr": [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][:20],
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        }
        RESULTS.write_text(json.dumps(report, indent=1) + "\n")
        print(f"{ok}/{args.trials} resumed to identical output with rc 0; left: {report['left_states']}")
        return 0 if ok == args.trials else 1
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
