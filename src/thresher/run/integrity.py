"""Resume integrity: an unfinished build resumes only over the inputs it started with, and a phase
runs only when the work files the earlier phases left for it are all there.

`input_fingerprint` is cheap (a few hundred KiB read whatever the file's size): size, modification
time, and a BLAKE2b digest of the first and last 64 KiB and of eight 4 KiB blocks spread over the
file. It catches a file rewritten in place with the same size, a truncated file and one replaced by
another; an edit inside an unsampled block of an otherwise untouched file changes its mtime.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from thresher.core.errors import InputError, WorkDirError
from thresher.paths import input_size, is_url, local_path

EDGE_BYTES = 64 * 1024
SAMPLE_BLOCKS = 8
BLOCK_BYTES = 4096


def input_fingerprint(path: str) -> dict[str, Any]:
    """What a resume compares of one input (a URL: its size only)."""
    if is_url(path):
        return {"bytes": input_size(path)}
    local = local_path(path)
    try:
        st = os.stat(local)
        h = hashlib.blake2b(digest_size=16)
        with open(local, "rb") as f:
            size = st.st_size
            offsets = [0, max(0, size - EDGE_BYTES)]
            offsets += [size * (i + 1) // (SAMPLE_BLOCKS + 1) for i in range(SAMPLE_BLOCKS)]
            for off in offsets:
                h.update(os.pread(f.fileno(), EDGE_BYTES if off in offsets[:2] else BLOCK_BYTES, off))
    except OSError:
        return {"bytes": None}
    return {"bytes": size, "mtime_ns": st.st_mtime_ns, "sample": h.hexdigest()}


def fingerprints(paths: Iterable[str]) -> dict[str, dict[str, Any]]:
    return {p: input_fingerprint(p) for p in dict.fromkeys(paths)}


def changed_inputs(previous: dict[str, Any], current: dict[str, Any]) -> list[str]:
    return [p for p in current if previous.get(p) != current[p]]


def require_work_files(paths: Iterable[Path], phase: str) -> None:
    """Refuse to run `phase` when a file an earlier, finished phase wrote for it is gone (a damaged
    work dir would otherwise keep duplicates or lose rejects silently)."""
    for path in paths:
        if not path.exists():
            raise WorkDirError(
                f"the work dir is damaged: {path} (left by an earlier phase for the {phase} phase) is missing; "
                "rerun with --overwrite to start the build over"
            )


# The plan's input fingerprints, read once per process and work dir (a worker runs many scan tasks;
# the plan of a build over many files is large).
_planned: dict[tuple[str, int], dict[str, Any]] = {}


def _planned_inputs(work_root: Path) -> dict[str, Any]:
    path = work_root / "plan.json"
    try:
        key = (str(path), path.stat().st_mtime_ns)
        if key not in _planned:
            _planned.clear()
            inputs = json.loads(path.read_text(encoding="utf-8")).get("inputs")
            _planned[key] = inputs if isinstance(inputs, dict) else {}
        return _planned[key]
    except (OSError, ValueError, AttributeError):
        return {}


def check_unchanged_since_plan(work_root: Path, paths: Iterable[str]) -> None:
    """After a scan task read its share: each local input still has the size and modification time
    the plan recorded (a stat each). An input truncated, appended to or rewritten while the build ran
    would lose its tail with only the cut line reported, or mix old and new records: the task fails
    with one line instead, and a rerun is refused by the plan until `--overwrite`."""
    planned = _planned_inputs(work_root)
    for path in paths:
        before = planned.get(path)
        if not isinstance(before, dict) or before.get("mtime_ns") is None or is_url(path):
            continue
        try:
            st = os.stat(local_path(path))
        except OSError:
            continue  # gone: its reader reported it (malformed/unreadable_file), counted and located
        if (st.st_size, st.st_mtime_ns) != (before.get("bytes"), before["mtime_ns"]):
            raise InputError(
                f"{path}: changed while the build read it (it is {st.st_size} bytes, {before.get('bytes')} when the "
                "build planned it); rerun with --overwrite once the input no longer changes"
            )
