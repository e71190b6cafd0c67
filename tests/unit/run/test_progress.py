import io
import json

from tests.conftest import local_config

from thresher.report.progress import ProgressPrinter, format_line
from thresher.run.build import build
from thresher.run.progress import Aggregator, Snapshot


def test_scan_fraction_uses_bytes_read_within_a_partition(tmp_path):
    src = tmp_path / "c.jsonl"
    with open(src, "w") as f:
        for i in range(3000):
            f.write(json.dumps({"url": f"u{i}", "text": f"Document {i} with a few distinct words."}) + "\n")
    snapshots: list[tuple[str, float | None, int]] = []
    build(
        [str(src)],
        tmp_path / "out",
        local_config(),
        on_progress=lambda s: snapshots.append((s.phase, s.fraction(), s.seen)),
    )
    scan = [(f, seen) for phase, f, seen in snapshots if phase == "scan" and f is not None]
    fractions = [f for f, _ in scan]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert {"group", "cluster", "write", "assemble", "finalize"} <= {phase for phase, _, _ in snapshots}


def test_aggregator_counts_ticks_and_tasks():
    seen = []
    agg = Aggregator(seen.append)
    agg.start_phase("scan", 2, bytes_total=100)
    agg.tick("scan", {"passed": 5, "dropped": 2, "malformed": 1, "bytes": 40})
    s = agg.snapshot
    assert (s.seen, s.passed, s.dropped, s.malformed, s.fraction()) == (8, 5, 2, 1, 0.4)
    agg.task_done(60)  # a task finished without ticking (resumed from its marker)
    assert s.fraction() == 0.6 and s.tasks_done == 1
    agg.start_phase("write", 4)
    agg.tick("write", {"kept": 3})
    agg.task_done()
    assert s.kept == 3 and s.fraction() == 0.25


def test_line_shows_rate_share_and_eta():
    s = Snapshot(phase="scan", tasks_done=1, tasks_total=4, seen=1000, passed=900, bytes_done=50, bytes_total=100)
    s.phase_started -= 10
    line = format_line(s)
    assert "tasks 1/4" in line and "1,000 seen" in line and "90.0% passed" in line and "docs/s" in line
    assert " 50.0%" in line and "ETA 0:00:10" in line


def test_printer_prints_every_n_records_when_not_a_terminal():
    out = io.StringIO()
    printer = ProgressPrinter(out, every=100)
    s = Snapshot(phase="scan")
    for seen in (50, 120, 150, 260):
        s.seen = seen
        printer(s)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # past 100 and past 200 (a phase's start prints nothing)
    quiet = io.StringIO()
    ProgressPrinter(quiet, quiet=True)(s)
    assert quiet.getvalue() == ""


def _scan_result(seen, survivors, dropped, malformed):
    from types import SimpleNamespace

    return SimpleNamespace(stats=SimpleNamespace(seen=seen, dropped=dropped, malformed=malformed), survivors=survivors)


def test_progress_counts_come_from_task_results_after_retries_and_resume():
    from types import SimpleNamespace

    from thresher.run.progress import Aggregator

    snapshots = []
    agg = Aggregator(snapshots.append)
    agg.start_phase("scan", 2)
    agg.tick("scan", {"passed": 7, "dropped": 2})  # an attempt that then failed: its ticks stay...
    agg.tick("scan", {"passed": 7, "dropped": 2, "malformed": 1})  # ...and the retry ticks again
    agg.task_done(0, _scan_result(seen=10, survivors=7, dropped=2, malformed=1))
    agg.task_done(0, _scan_result(seen=20, survivors=15, dropped=5, malformed=0))  # skipped on resume: no ticks
    s = agg.snapshot
    assert (s.seen, s.passed, s.dropped, s.malformed) == (30, 22, 7, 1)
    agg.start_phase("write", 1)
    agg.tick("write", {"kept": 25})  # over-counted ticks
    agg.task_done(0, SimpleNamespace(stats=SimpleNamespace(dropped=1), kept=21))
    assert (s.kept, s.dropped) == (21, 8) and s.kept <= s.seen


def test_named_tasks_ticks_are_replaced_by_their_results_and_late_ticks_ignored():
    from types import SimpleNamespace

    from thresher.run.progress import ATTEMPT, TASK_SEP

    agg = Aggregator(None)
    s = agg.snapshot
    agg.start_phase("scan", 3, bytes_total=300)
    a, b = f"scan{TASK_SEP}scan-000000", f"scan{TASK_SEP}scan-000001"
    # task 2 was finished before the kill: skipped on resume, it counts at once (no ticks ever)
    agg.task_done(100, _scan_result(seen=10, survivors=9, dropped=1, malformed=0), "scan-000002")
    assert (s.seen, s.passed, s.fraction()) == (10, 9, 100 / 300)
    agg.tick(a, {ATTEMPT: 1})
    agg.tick(a, {"passed": 4, "dropped": 1, "bytes": 50})
    agg.tick(a, {ATTEMPT: 1})  # its worker died; the retry starts over
    agg.tick(a, {"passed": 2, "bytes": 20})
    assert (s.seen, s.passed, s.dropped, s.bytes_running) == (12, 11, 1, 20)
    agg.tick(b, {ATTEMPT: 1})
    agg.tick(b, {"passed": 3})
    agg.task_done(100, _scan_result(seen=8, survivors=7, dropped=1, malformed=0), "scan-000000")
    agg.tick(a, {"passed": 5, "dropped": 1})  # the dead attempt's queue drained late: ignored
    assert (s.seen, s.passed, s.dropped) == (21, 19, 2)
    agg.task_done(100, _scan_result(seen=3, survivors=3, dropped=0, malformed=0), "scan-000001")
    agg.tick(b, {"passed": 3})  # after the phase's last result
    assert (s.seen, s.passed, s.dropped, s.fraction()) == (21, 19, 2, 1.0)
    agg.start_phase("write", 1)
    agg.tick(b, {"passed": 3})  # a tick of the scan phase arriving in the next one
    w = f"write{TASK_SEP}write-000000"
    agg.tick(w, {ATTEMPT: 1})
    agg.tick(w, {"kept": 19})
    agg.task_done(0, SimpleNamespace(stats=SimpleNamespace(dropped=2), kept=17), "write-000000")
    agg.tick(w, {"kept": 19})  # late
    assert (s.seen, s.kept, s.dropped) == (21, 17, 4)


def test_counts_shown_after_sigkill_and_resume_equal_the_real_totals(tmp_path):
    """A real build killed with SIGKILL once part of its write phase is done, then resumed: no
    snapshot shows more than the dataset's real counts, and the last one shows exactly them."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from thresher.config import RunConfig
    from thresher.demo import write_crawl

    crawl = write_crawl(tmp_path / "crawl.jsonl", n_pages=1200)
    out = tmp_path / "out"
    flags = ["--input-partition-bytes", "150000", "--engine", "pool", "--workers", "2", "-q"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "thresher.cli", "build", str(crawl), "-o", str(out), *flags], start_new_session=True
    )
    done = out / ".work" / "done"
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        if done.exists() and sum(1 for _ in done.glob("write-*.json")) >= 3:
            break
        time.sleep(0.002)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "manifest.json").exists(), "the build finished before the kill"
    snapshots = []
    config = RunConfig.from_dict({"exec": {"engine": "pool", "workers": 2}, "input": {"partition_bytes": 150000}})
    printed = io.StringIO()
    printer = ProgressPrinter(printed, every=100)

    def on_progress(s):
        snapshots.append(s.to_dict())
        printer(s)

    build([str(crawl)], out, config, on_progress=on_progress)
    stats = json.loads((out / "stats.json").read_text())
    real = {k: stats[k] for k in ("seen", "kept", "dropped", "malformed")}
    for snap in snapshots:
        assert all(snap[k] <= real[k] for k in real), (snap, real)
    assert {k: snapshots[-1][k] for k in real} == real
    assert real["kept"] > 0 and f"{real['kept']:,} kept" in printed.getvalue()
