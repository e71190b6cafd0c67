"""The pool engine runs the driver's preparation in a process of its own (`PoolEngine.run_apart`):
compiling the FineWeb URL list (4.56 M domains) peaked at ~100 MiB (61 since its digests are held
once), and a driver that compiled it itself kept 7-8 MiB of it for the whole build. A process
that fails hands the work back: the driver runs it and meets the error with its own message."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import shared_path

from thresher.run.pool_engine import PoolEngine


def _write_marker(path: str) -> None:
    Path(path).write_text("ran apart")


def _fail() -> None:
    raise ValueError("no")


def test_run_apart_runs_in_another_process_and_reports_failure(tmp_path):
    engine = PoolEngine(2)
    try:
        marker = tmp_path / "marker"
        assert engine.run_apart(_write_marker, str(marker)) is True
        assert marker.read_text() == "ran apart"
        assert engine.run_apart(_fail) is False
    finally:
        engine.close()


_DRIVER = """
import sys
from thresher.cli import main
code = main(sys.argv[1:])
hwm_kib = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(code, hwm_kib)
"""


def test_a_pool_build_compiles_the_fineweb_list_outside_the_driver(tmp_path):
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc/self/status (Linux) to read the driver's peak RSS")
    tarball = shared_path("blocklists", "fineweb-url-blocklist.tar.gz")
    corpus = tmp_path / "docs.jsonl"
    words = "the quick brown fox jumps over the lazy dog while the cat sleeps on a warm mat".split()
    with corpus.open("w") as f:
        for i in range(40):
            host = "0-1sex.com" if i == 3 else f"site{i}.example"
            text = " ".join(words[(i + j) % len(words)] for j in range(120)) + f" page {i}."
            f.write(json.dumps({"id": f"d{i}", "url": f"https://{host}/p/{i}", "text": text}) + "\n")
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-c", _DRIVER, "build", str(corpus), "-o", str(out), "-q", "--engine", "pool",
         "--workers", "2", "--quality-urls-blocklists", str(tarball), "--rejects", str(tmp_path / "rejects")],
        capture_output=True, text=True, check=True)
    code, hwm_kib = map(int, run.stdout.split())
    assert code == 0, run.stderr
    stats = json.loads((out / "stats.json").read_text())
    assert stats["drops"]["quality.urls"]["blocked_domain"] == 1, stats["drops"]  # the list was read
    # compiled by the driver itself, its peak RSS was ~100-111 MiB; apart, the driver stays near its
    # size without the list (~45-60 MiB: the CLI, the config, the pool)
    assert hwm_kib < 80 * 1024, f"the driver peaked at {hwm_kib / 1024:.0f} MiB"
