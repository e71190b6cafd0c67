"""A cluster-round task that fails once mid-phase (importable by spawned workers)."""

from pathlib import Path

from thresher.run.cluster_rounds import round_task


def round_task_failing_once(ctx, partitions, r, q, splits):
    """Fail round 1 of partition 1 the first time, after round 0 and part of round 1 finished."""
    flag = Path(ctx.workdir) / f"failed-round-{r}-{q}"
    if r == 1 and q == 1 and not flag.exists():
        flag.write_text("x")
        raise RuntimeError("interrupted mid cluster phase")
    return round_task(ctx, partitions, r, q, splits)
