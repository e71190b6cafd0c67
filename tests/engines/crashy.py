"""Task stand-ins that fail in worker processes (importable by spawned workers)."""

import os
from pathlib import Path

from thresher.run.scan import scan_task


def scan_task_dying_once(ctx, partition):
    """Kill the worker process the first time partition 1 is scanned: a crash, not an exception."""
    flag = Path(ctx.workdir) / f"died-{partition.index}"
    if partition.index == 1 and not flag.exists():
        flag.write_text("x")
        os._exit(9)
    return scan_task(ctx, partition)


def scan_task_always_failing(ctx, partition):
    if partition.index == 1:
        raise ValueError("bad partition")
    return scan_task(ctx, partition)
