"""Coverage-guided fuzzing of the readers and the extractor with atheris (the `fuzz` extra).

    python benchmarks/fuzz_readers.py run TARGET [libFuzzer flags]   # one target, in this process
    python benchmarks/fuzz_readers.py all --seconds 1800 --runs 1000000  # every target, results JSON

Targets and the property each is held to (a failure is an uncaught exception, i.e. a crash):
- `jsonl`, `warc`, `html`: the bytes as one input file of that kind; reading it never raises;
- `auto`: the bytes as a file of unknown kind: planning (sniffing, compression) and reading never raise;
- `extract`: the bytes decoded as a page; the stage chain never raises and returns within its deadline.

`all` runs each target in its own process under `nice -n 19`, bounded by `--seconds` and `--runs`,
and writes the executions, time and findings of each to benchmarks/results/fuzz_readers.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = ("jsonl", "warc", "html", "auto", "extract")
RESULTS = Path(__file__).parent / "results" / "fuzz_readers.json"
SEEDS = {
    "jsonl": [b'{"url": "https://e.example/", "html": "<p>hi</p>"}\n{"text": "x"}\n', b'\xef\xbb\xbf{"text": "a"}\n'],
    "warc": [
        b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://e.example/\r\nContent-Type: application/http; "
        b"msgtype=response\r\nContent-Length: 60\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hello "
        b"there</p>\r\n\r\n"
    ],
    "html": [
        b"<html><head><meta charset=utf-8><title>t</title></head><body><article><p>Some "
        b"text.</p></article></body></html>"
    ],
    "auto": [b'{"text": "a"}\n', b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", b"\x28\xb5\x2f\xfdgarbage", b"PAR1"],
    "extract": [b'<html><body><p>if(a<b&&c<d)</p><b <a "x</body></html>'],
}


def _target(name: str):  # noqa: ANN202 - the fuzz callback
    import atheris

    import thresher.read.files
    import thresher.read.jsonl
    import thresher.read.warc  # noqa: F401 - imported before instrumenting, like the lazily imported readers
    from thresher.config import RunConfig
    from thresher.core.document import Document
    from thresher.pipeline import DocumentChain
    from thresher.read.base import Partition
    from thresher.read.sources import plan_partitions, read_partition

    config = RunConfig.from_dict({"quality": {"preset": None}, "exec": {"doc_deadline_s": 2.0}})
    folder = tempfile.mkdtemp(prefix="thresher-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    path = os.path.join(folder, "input")
    chain = DocumentChain(config)  # first: it imports the extractor, which must be loaded to be instrumented
    atheris.instrument_all()  # coverage feedback from every loaded module, thresher's included

    def read_kind(kind: str, data: bytes) -> None:
        with open(path, "wb") as f:
            f.write(data)
        for _ in read_partition(Partition(0, kind, (path,)), config.input):  # type: ignore[arg-type]
            pass

    def one(data: bytes) -> None:
        if name in ("jsonl", "warc", "html"):
            read_kind(name, data)
        elif name == "auto":
            with open(path, "wb") as f:
                f.write(data)
            for partition in plan_partitions([path], config.input):
                for _ in read_partition(partition, config.input):
                    pass
        else:
            t0 = time.monotonic()
            chain.run(Document(id="x", html=data.decode("utf-8", "replace")))
            if time.monotonic() - t0 > 3.0:
                raise AssertionError(f"the chain took {time.monotonic() - t0:.1f} s past its 2 s deadline")

    return one


def run_one(name: str, flags: list[str]) -> None:
    import atheris

    one = _target(name)
    corpus = Path(tempfile.mkdtemp(prefix=f"thresher-fuzz-{name}-"))
    for i, seed in enumerate(SEEDS[name]):
        (corpus / f"seed-{i}").write_bytes(seed)
    atheris.Setup([sys.argv[0], *flags, str(corpus)], one)
    atheris.Fuzz()


_DONE = re.compile(r"Done (\d+) runs in (\d+) second")
_EXECS = re.compile(r"#(\d+)\s")


def run_all(seconds: int, runs: int, targets: list[str], results_path: Path = RESULTS, niceness: int = 19) -> None:
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    for name in targets:
        t0 = time.monotonic()
        cpu0 = os.times()
        log = Path(tempfile.gettempdir()) / f"thresher-fuzz-{name}.log"
        with open(log, "w") as out:
            proc = subprocess.run(
                ["nice", "-n", str(niceness), sys.executable, __file__, "run", name, f"-max_total_time={seconds}",
                 f"-runs={runs}", "-rss_limit_mb=2048", "-timeout=20"],
                stdout=out, stderr=subprocess.STDOUT, check=False,
            )
        cpu1 = os.times()
        text = log.read_text(errors="replace")
        done = _DONE.search(text)
        execs = int(done.group(1)) if done else max((int(m) for m in _EXECS.findall(text)), default=0)
        crash = proc.returncode != 0
        results[name] = {
            "executions": execs,
            "wall_s": round(time.monotonic() - t0, 1),
            "cpu_s": round(
                (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system), 1
            ),
            "exit_code": proc.returncode,
            "finding": text[-3000:] if crash else None,
            "limits": {"seconds": seconds, "runs": runs},
        }
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results_path.write_text(json.dumps(results, indent=2) + "\n")
        print(name, results[name]["executions"], "executions", "CRASH" if crash else "ok", flush=True)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "run":
        run_one(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["all"])
    parser.add_argument("--seconds", type=int, default=600, help="per target")
    parser.add_argument("--runs", type=int, default=1_000_000, help="per target")
    parser.add_argument("--targets", nargs="*", default=list(TARGETS))
    parser.add_argument("--results", type=Path, default=RESULTS, help="results JSON (one per parallel run)")
    parser.add_argument("--nice", type=int, default=19, help="niceness of the fuzzing processes")
    args = parser.parse_args()
    run_all(args.seconds, args.runs, args.targets, args.results, args.nice)


if __name__ == "__main__":
    main()
