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
    build([str(src)], tmp_path / "out", local_config(), on_progress=lambda s: snapshots.append((s.phase, s.fraction(), s.seen)))
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
