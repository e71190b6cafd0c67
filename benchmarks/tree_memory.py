"""Memory and CPU of a process tree, sampled from /proc while a command runs: what the scale
benchmarks (`scale_contract.py`) and the CI memory guard (`tests/scale/`) measure a build with.

RSS counts every page a process maps, shared ones in full in each process (the pool's fork server
and its workers share their imports and preloaded models); PSS divides each shared page among the
processes that map it, so the tree's PSS sum is the memory the machine really holds for the build.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

PHASES = ("scan", "group", "verify", "cluster", "write", "assemble", "publish")


def current_phase(done_dir: Path) -> str:
    """The phase of the newest task completion marker (approximate at phase boundaries)."""
    try:
        markers = sorted(done_dir.iterdir(), key=lambda p: p.stat().st_mtime)
    except (FileNotFoundError, ValueError):
        return "scan"
    if not markers:
        return "scan"
    name = markers[-1].name.split("-")[0].split(".")[0]
    return name if name in PHASES else "scan"


def descendants(pid: int) -> list[int]:
    out, stack = [], [pid]
    while stack:
        p = stack.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return out


def memory_of(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in bytes, from smaps_rollup (see the module docstring)."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return rss, pss


def peak_rss_of(pid: int) -> int:
    """The kernel's own record of a process's peak RSS so far (VmHWM), in bytes: exact, where a
    sampled RSS can miss a short peak between two samples."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return 0


TICKS = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of one process so far (/proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


def role_of(pid: int, driver: int) -> str:
    """What a process of a build's tree is: the driver, the pool's fork server, its resource tracker, or
    a worker (a child of the fork server)."""
    if pid == driver:
        return "driver"
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return "gone"
    if b"resource_tracker" in cmdline:
        return "resource_tracker"
    try:
        with open(f"/proc/{pid}/stat") as f:
            parent = int(f.read().rsplit(")", 1)[1].split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError, IndexError):
        return "gone"
    return "fork_server" if parent == driver and b"forkserver" in cmdline else "worker"


def run_sampled(cmd: list[str], work: Path, env: dict[str, str] | None = None, interval: float = 0.1) -> dict:
    """Run `cmd` (a build whose work dir is `work`), sampling its tree every `interval` seconds."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peaks = {"rss": 0, "pss": 0, "driver": 0, "child": 0}
    at_pss_peak: list[tuple[str, int]] = []  # (role, PSS) of each process when the tree's PSS peaked
    by_phase: dict[str, int] = {}
    cpu_seen: dict[int, float] = {}  # the last CPU time read of each process of the tree
    hwm_seen: dict[int, int] = {}  # the last peak RSS (VmHWM) read of each process of the tree
    done = threading.Event()

    def sample() -> None:
        phase, checked = "scan", 0.0
        while not done.is_set():
            pids = descendants(proc.pid)
            sizes = {p: memory_of(p) for p in pids}
            for p in pids:
                cpu_seen[p] = max(cpu_seen.get(p, 0.0), cpu_of(p))
                hwm_seen[p] = max(hwm_seen.get(p, 0), peak_rss_of(p))
            rss = sum(r for r, _ in sizes.values())
            peaks["rss"] = max(peaks["rss"], rss)
            pss = sum(p for _, p in sizes.values())
            if pss > peaks["pss"]:
                peaks["pss"] = pss
                at_pss_peak[:] = [(role_of(p, proc.pid), share) for p, (_, share) in sizes.items()]
            peaks["driver"] = max(peaks["driver"], sizes.get(proc.pid, (0, 0))[0])
            peaks["child"] = max([peaks["child"], *(r for p, (r, _) in sizes.items() if p != proc.pid)])
            if time.monotonic() - checked > 1.0:
                phase, checked = current_phase(work / "done"), time.monotonic()
            by_phase[phase] = max(by_phase.get(phase, 0), rss)
            time.sleep(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"build failed: {err.decode()[-3000:]}")
    mib = 2**20
    return {
        "wall_s": time.monotonic() - t0,
        "peak_tree_rss_mib": peaks["rss"] / mib,
        "peak_tree_pss_mib": peaks["pss"] / mib,
        "peak_driver_mib": round(peaks["driver"] / mib, 1),
        "peak_largest_child_mib": round(peaks["child"] / mib, 1),
        "peak_by_phase_mib": {k: round(v / mib, 1) for k, v in by_phase.items()},
        "pss_at_peak_by_process_mib": sorted(((r, round(v / mib, 1)) for r, v in at_pss_peak), key=lambda x: -x[1]),
        "sampled_cpu_s": sum(cpu_seen.values()),
        # each process's own peak, summed: an upper bound of the tree's peak RSS, read from the kernel
        "sum_of_process_peaks_mib": sum(hwm_seen.values()) / mib,
        "largest_process_peak_mib": max(hwm_seen.values(), default=0) / mib,
        "process_peaks_mib": sorted((round(v / mib, 1) for v in hwm_seen.values()), reverse=True),
    }
