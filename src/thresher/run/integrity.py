"""Resume integrity: an unfinished build resumes only over the inputs it started with, and a phase
runs only when the work files the earlier phases left for it are all there.

`input_fingerprint` is cheap (a few hundred KiB read whatever the file's size): size, modification
time, and a BLAKE2b digest of the first and last 64 KiB and of eight 4 KiB blocks spread over the
file. It catches a file rewritten in place with the same size, a truncated file and one replaced by
another; an edit inside an unsampled block of an otherwise untouched file changes its mtime.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from thresher.core.errors import WorkDirError
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
