"""A build's work plan and its resume check, and how the dedup phases are split into tasks.

`prepare_workdir` spools standard input, plans the input partitions and writes `plan.json` in the
work dir: a rerun of the same command finds the same plan and resumes from the completion markers;
another plan (config, inputs, key layout) is refused unless `--overwrite` discards it.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from typing import Any

from thresher.config import RunConfig
from thresher.core.errors import WorkDirError
from thresher.pipeline import build_corpus_stages
from thresher.read.base import Partition
from thresher.read.sources import plan_partitions
from thresher.run.integrity import changed_inputs, fingerprints
from thresher.run.observe import OBSERVE_LAYOUT
from thresher.run.records import KEY_BUCKETS, KEY_LAYOUT
from thresher.run.workdir import WorkDir
from thresher.version import __version__
from thresher.write.atomic import write_json_atomic

log = logging.getLogger(__name__)

# Group (and verify) tasks are planned from the key (pair) bytes the scan (group) phase wrote: about
# GROUP_TASK_BYTES each, at least MIN_GROUP_TASKS so every worker has work on small inputs. A key
# record is 52 bytes on disk and ~100 bytes in a group task's memory, so a task holds ~16 MB of
# records: the cap is reached from ~150k documents on, and peak memory stays flat beyond (a bigger
# corpus makes more tasks, not bigger ones).
GROUP_TASK_BYTES = 8 * 1024 * 1024
MIN_GROUP_TASKS = 16
# ... but no task below GROUP_TASK_MIN_BYTES while fewer would do: a task has files, a log and a done
# record of its own (a 1-page build ran 92 M fewer instructions, -4.4%, with 30 fewer tasks; in CPU
# time under 0.1 ms a task, `benchmarks/startup_costs.py`), and a 200-page build made 32 group tasks
# of a few KB each: splitting keys that small balances nothing. Below 16 x 256 KiB (~4 MiB of keys,
# ~40k documents) there are fewer, down to one.
GROUP_TASK_MIN_BYTES = 256 * 1024
# How group and verify tasks are planned, recorded in the plan: a resume finds the group tasks done
# under their first bucket, so a work dir planned another way is refused (2: GROUP_TASK_MIN_BYTES).
GROUP_PLAN = 2


def spool_stdin(work: WorkDir) -> str:
    path = work.path("stdin.bin")
    tmp = path.with_name("stdin.bin.tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    if sys.stdin is None or sys.stdin.closed:
        from thresher.core.errors import InputError

        raise InputError("-: standard input is closed, there is nothing to read")
    with open(tmp, "wb") as out:
        shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
    os.replace(tmp, path)
    return str(path)


def reset_workdir(work: WorkDir) -> None:
    """Empty the work dir (all but the lock the running build holds, and the output a `--work-dir`
    was claimed for: `thresher.run.output.claim_work_dir` checked it)."""
    for entry in work.root.iterdir():
        if entry.name in ("lock", "output.json"):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)  # never follows a link inside
        else:
            entry.unlink()  # a file, or a link itself (never what it points at)


def prepare_workdir(
    work: WorkDir, inputs: list[str], config: RunConfig, *, write_rejects: bool, overwrite: bool
) -> tuple[list[str], list[Partition]]:
    """Spool stdin, plan the partitions, and check (or write) the work dir's plan: a resume must
    find the same plan; another one is refused unless `overwrite`."""
    plan_path = work.path("plan.json")
    if not plan_path.exists():
        # a work dir without a plan holds nothing a resume can use (an older thresher's half-deleted
        # work dir, a spool cut by a kill): task markers left in it would be taken for this plan's
        reset_workdir(work)
    if "-" in inputs:
        spooled = work.path("stdin.bin")
        spooled_path = str(spooled) if plan_path.exists() and spooled.exists() else spool_stdin(work)
        inputs = [spooled_path if i == "-" else i for i in inputs]
    partitions, plan = work_plan(inputs, config, write_rejects=write_rejects)
    if plan_path.exists():
        previous = json.loads(plan_path.read_text(encoding="utf-8"))
        same_but_inputs = {k: v for k, v in previous.items() if k != "inputs"} == {
            k: v for k, v in plan.items() if k != "inputs"
        }
        if same_but_inputs and previous.get("inputs") != plan["inputs"] and not overwrite:
            changed = changed_inputs(previous.get("inputs") or {}, plan["inputs"])
            raise WorkDirError(
                f"{changed[0] if changed else 'an input'} changed since the unfinished build in {work.root} started "
                "(size, modification time or content); resuming would mix old and new records: "
                "pass --overwrite to start over"
            )
        if previous != plan:
            if not overwrite:
                raise WorkDirError(
                    f"{work.root} holds an unfinished build with another config or input "
                    f"(config hash {previous.get('config_hash')} vs {config.hash}); rerun it as it was, "
                    "or pass --overwrite to discard it"
                )
            reset_workdir(work)
        else:
            log.info("resuming the build in %s", work.root)
    write_json_atomic(plan_path, plan)
    return inputs, partitions


def work_plan(inputs: list[str], config: RunConfig, *, write_rejects: bool) -> tuple[list[Partition], dict[str, Any]]:
    """The input partitions and the work plan of a build (`plan.json`): what a resume must match."""
    partitions = plan_partitions(inputs, config.input)
    plan: dict[str, Any] = {
        "thresher_version": __version__,
        "config_hash": config.hash,
        "write_rejects": write_rejects,
        "key_buckets": KEY_BUCKETS,
        "key_layout": KEY_LAYOUT,
        "observe_layout": OBSERVE_LAYOUT,
        "group_plan": GROUP_PLAN,
        "corpus_stages": [s.name for s in build_corpus_stages(config)],
        "partitions": [[p.kind, list(p.paths), p.start, p.end] for p in partitions],
        "inputs": fingerprints(path for p in partitions for path in p.paths),
    }
    return partitions, plan


def plan_group_ranges(bucket_bytes: list[int], tasks: int | None = None) -> list[tuple[int, int]]:
    """Contiguous key-bucket ranges for the group tasks of one corpus stage, balanced by the key
    bytes the scan actually wrote: about GROUP_TASK_BYTES each, at least MIN_GROUP_TASKS ranges
    (so every worker has work) once each would hold GROUP_TASK_MIN_BYTES, or exactly `tasks` when given.
    Deterministic; the split never changes the output, only each group task's memory."""
    total = sum(bucket_bytes)
    floor = max(1, min(MIN_GROUP_TASKS, -(-total // GROUP_TASK_MIN_BYTES)))
    n = tasks or max(floor, -(-total // GROUP_TASK_BYTES))
    n = max(1, min(n, len(bucket_bytes)))
    target = total / n
    ranges: list[tuple[int, int]] = []
    lo = 0
    acc = 0
    for b, size in enumerate(bucket_bytes):
        acc += size
        if len(ranges) < n - 1 and acc >= target * (len(ranges) + 1):
            ranges.append((lo, b + 1))
            lo = b + 1
    ranges.append((lo, len(bucket_bytes)))
    return [r for r in ranges if r[0] < r[1]]
