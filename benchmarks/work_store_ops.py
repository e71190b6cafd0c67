"""What one work-store operation costs the task that does it: the local store (a folder) against the
object store (S3 over HTTP on loopback, moto's server in a separate process, so the CPU measured is
the client's alone: request signing, HTTP, s3fs). Side by side in one run, medians of repeats:

- put a 64 KiB object (local: write beside the name and rename);
- a task's commit (local: the marker; object store: an exclusive create, `If-None-Match: *`);
- read 200 bytes at an offset (local: `pread`; object store: a ranged GET);
- read a whole 4 MiB object.

These are the figures behind the design's rule that a task's many small reads (verify's payload
records) must be coalesced before they go to an object store (docs/scaling.md, "Work store"). The
server is loopback moto, not S3: its wall times are a floor on the network's, the client CPU is
what a task pays on any S3 endpoint.

    python benchmarks/work_store_ops.py [--repeats 200]   # writes benchmarks/results/work_store_ops.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent / "src"))

from thresher.run.stores import open_work_store  # noqa: E402


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(op: Callable[[int], object], repeats: int) -> dict[str, float]:
    """Median wall and mean CPU per call (CPU over all calls: single calls are below its resolution)."""
    walls = []
    c0 = cpu()
    for i in range(repeats):
        t = time.perf_counter()
        op(i)
        walls.append(time.perf_counter() - t)
    per_call_cpu = (cpu() - c0) / repeats
    return {"wall_ms_median": round(statistics.median(walls) * 1e3, 4), "cpu_ms_mean": round(per_call_cpu * 1e3, 4)}


def start_server() -> tuple[subprocess.Popen[bytes], str]:
    server = shutil.which("moto_server") or str(Path(sys.executable).parent / "moto_server")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([server, "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("moto_server did not start")


def ops(s: Any, repeats: int) -> dict[str, dict[str, float]]:
    small = os.urandom(64 * 1024)
    big = os.urandom(4 * 1024 * 1024)
    s.put("payload/big.bin", big)
    s.put("payload/small.bin", small)
    result = {"put_64k": measure(lambda i: s.put(f"scan/p{i:06d}.bin", small), repeats),
              "commit": measure(lambda i: s.commit(f"scan-{i:06d}", f"a{i}", {}, {"n": i}), repeats),
              "read_range_200b": measure(lambda i: s.read_range("payload/small.bin", (i * 997) % 60000, 200), repeats),
              "read_4m": measure(lambda i: s.read("payload/big.bin"), max(5, repeats // 20))}
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args()
    proc, endpoint = start_server()
    try:
        os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1",
                          AWS_ENDPOINT_URL=endpoint)
        import boto3

        boto3.client("s3", endpoint_url=endpoint).create_bucket(Bucket="bench-work")
        with tempfile.TemporaryDirectory() as folder:
            local = ops(open_work_store(folder), args.repeats)
        remote = ops(open_work_store("s3://bench-work/w"), args.repeats)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ratios = {k: {"cpu": round(remote[k]["cpu_ms_mean"] / max(local[k]["cpu_ms_mean"], 1e-4), 1),
                  "wall": round(remote[k]["wall_ms_median"] / max(local[k]["wall_ms_median"], 1e-4), 1)}
              for k in local}
    out = {"repeats": args.repeats, "load_1_5_15": [round(x, 2) for x in os.getloadavg()],
           "python": platform.python_version(), "local": local, "object_store_loopback_moto": remote,
           "object_over_local": ratios}
    dest = BENCH / "results" / "work_store_ops.json"
    dest.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
