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


@pytest.fixture()
def started():
    """Starts builds; whatever they leave behind is killed after the test (a failing run included)."""
    procs: list[subprocess.Popen] = []

    def start(crawl: Path, out: Path, engine: str) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
        cmd = [
            sys.executable,
            "-m",
            "thresher",
            "build",
            str(crawl),
            "-o",
            str(out),
            "--engine",
            engine,
            "--workers",
            "2",
            "--quality",
            "none",
        ]
        # stderr to a file: a process left behind holding a pipe would block the read
        err = open(out.parent / "stderr.txt", "wb")  # noqa: SIM115 - closed below
        # its own session: the process group id is its pid, so every process it starts can be found
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        err.close()
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        for pid, _ in _group_members(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _wait_for_scan(out: Path, proc: subprocess.Popen, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the build ended before it could be interrupted: {(out.parent / 'stderr.txt').read_text()}")
        logs = out / ".work" / "logs"
        if logs.is_dir() and any(logs.iterdir()):
            time.sleep(0.5)  # inside the scan phase
            return
        time.sleep(0.05)
    pytest.fail("the scan did not start")


@pytest.mark.parametrize(
    ("engine", "signum"), [("pool", signal.SIGTERM), ("pool", signal.SIGINT), ("local", signal.SIGTERM)]
)
def test_signal_stops_the_build_within_a_second_and_leaves_no_process(big_crawl, tmp_path, started, engine, signum):
    out = tmp_path / "out"
    proc = started(big_crawl, out, engine)
    _wait_for_scan(out, proc)
    assert len(_group_members(proc.pid)) >= (3 if engine == "pool" else 1)  # driver, fork server, workers
    t0 = time.monotonic()
    os.killpg(proc.pid, signum) if signum == signal.SIGINT else proc.send_signal(signum)  # Ctrl-C: the whole group
    code = proc.wait(timeout=30)
    stopped_s = time.monotonic() - t0
    err = (tmp_path / "stderr.txt").read_text()
    assert code == 130, err
    assert "interrupted; rerun the same command to resume" in err
    print(f"{engine} signal {signum}: stopped in {stopped_s:.2f} s")
    assert stopped_s < 1.5, f"took {stopped_s:.2f} s"
    time.sleep(0.3)
    assert _group_members(proc.pid) == []
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_interrupted_pool_build_prints_the_hint_and_no_traceback(big_crawl, tmp_path, started, signum):
    """The pool's queues and locks are released once: no `sem_unlink` traceback at exit, and the
    resource tracker finds nothing leaked (issue 36, item 4)."""
    out = tmp_path / "out"
    proc = started(big_crawl, out, "pool")
    _wait_for_scan(out, proc)
    os.killpg(proc.pid, signum) if signum == signal.SIGINT else proc.send_signal(signum)
    assert proc.wait(timeout=30) == 130
    time.sleep(0.3)  # a resource tracker's warning would come as it exits
    err = (tmp_path / "stderr.txt").read_text()
    assert err == "thresher: interrupted; rerun the same command to resume\n", err


@pytest.mark.slow
def test_interrupted_build_resumes_to_the_same_output(big_crawl, tmp_path, started):
    from thresher.cli import main

    out = tmp_path / "out"
    proc = started(big_crawl, out, "pool")
    _wait_for_scan(out, proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 130
    assert main(["build", str(big_crawl), "-o", str(out), "--engine", "local", "--quality", "none", "-q"]) == 0
    reference = tmp_path / "ref"
    assert main(["build", str(big_crawl), "-o", str(reference), "--engine", "local", "--quality", "none", "-q"]) == 0
    shards = sorted(p.name for p in out.glob("shard-*"))
    assert shards and shards == sorted(p.name for p in reference.glob("shard-*"))
    assert all((out / n).read_bytes() == (reference / n).read_bytes() for n in shards)


def test_second_interrupt_ends_the_driver_at_once(big_crawl, tmp_path, started):
    out = tmp_path / "out"
    proc = started(big_crawl, out, "pool")
    _wait_for_scan(out, proc)
    proc.send_signal(signal.SIGTERM)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 130
    time.sleep(0.6)
    assert _group_members(proc.pid) == []
    err = (tmp_path / "stderr.txt").read_text()
    assert "Traceback" not in err and "leaked semaphore" not in err, err
