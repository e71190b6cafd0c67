"""SIGTERM and Ctrl-C stop a build within about a second, leave no process behind (workers, fork
server, resource tracker: checked in the process table), print the resume hint, and the rerun
resumes to the same output."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.conftest import article_html

ROOT = Path(__file__).resolve().parents[2]


def _group_members(pgid: int) -> list[tuple[int, str]]:
    """Processes of a process group, from /proc (pid, command name)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces, so split after its closing paren
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            found.append((int(entry), comm))
    return found


@pytest.fixture(scope="module")
def big_crawl(tmp_path_factory):
    path = tmp_path_factory.mktemp("signals") / "crawl.jsonl"
    with open(path, "w") as f:
        for i in range(12_000):
            f.write(json.dumps({"url": f"https://e.example/{i}", "html": article_html(i, words=240)}) + "\n")
    return path


def _start(crawl: Path, out: Path, engine: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    cmd = [sys.executable, "-m", "thresher", "build", str(crawl), "-o", str(out), "--engine", engine, "--workers", "2"]
    # its own session: the process group id is its pid, so every process it starts can be found
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _wait_for_scan(out: Path, proc: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the build ended before it could be interrupted: {proc.stderr.read().decode()}")
        logs = out / ".work" / "logs"
        if logs.is_dir() and any(logs.iterdir()):
            time.sleep(0.5)  # inside the scan phase
            return
        time.sleep(0.05)
    pytest.fail("the scan did not start")


@pytest.mark.parametrize(("engine", "signum"), [("pool", signal.SIGTERM), ("pool", signal.SIGINT), ("local", signal.SIGTERM)])
def test_signal_stops_the_build_within_a_second_and_leaves_no_process(big_crawl, tmp_path, engine, signum):
    out = tmp_path / "out"
    proc = _start(big_crawl, out, engine)
    _wait_for_scan(out, proc)
    assert len(_group_members(proc.pid)) >= (3 if engine == "pool" else 1)  # driver, fork server, workers
    t0 = time.monotonic()
    os.killpg(proc.pid, signum) if signum == signal.SIGINT else proc.send_signal(signum)  # Ctrl-C: the whole group
    code = proc.wait(timeout=30)
    stopped_s = time.monotonic() - t0
    err = proc.stderr.read().decode()
    assert code == 130, err
    assert "interrupted; rerun the same command to resume" in err
    assert stopped_s < 1.5, f"took {stopped_s:.2f} s"
    time.sleep(0.3)
    assert _group_members(proc.pid) == []
    assert not (out / "manifest.json").exists()


def test_second_interrupt_ends_the_driver_at_once(big_crawl, tmp_path):
    out = tmp_path / "out"
    proc = _start(big_crawl, out, "pool")
    _wait_for_scan(out, proc)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 130
    time.sleep(0.6)
    assert _group_members(proc.pid) == []
