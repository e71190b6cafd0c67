"""The work directory: where tasks leave their files and completion markers.

A build runs in a local (or mounted) folder, its *stage*: task files go to `STAGE/.work/` and
assemble tasks write the shards into `STAGE/`. By default the stage is the output folder itself, so
nothing moves. With `exec.work_dir` (`--work-dir DIR`) the stage is DIR, and for an output at a URL
it defaults to a cache folder named after the URL (`default_work_dir`), so a rerun of the same
command finds its markers and resumes; the shards are then published (copied or uploaded) to the
output. The work dir stays a POSIX path because tasks pread, atomically rename and flock in it.

Layout under `STAGE/.work/` (one concept per folder):

    plan.json                  config hash, partitions, key partitions: a resume must match it
    lock                       flock'd by the running build (two builds on one output are refused)
    stdin.bin                  standard input spooled once, so every phase can re-read it
    done/<task>.json           completion marker = the task's result (stats, counts)
    scan/p000000.docs.jsonl    documents that passed the per-document stages, in ordinal order,
                               one "ordinal TAB json" line each
    scan/p000000.rejects.jsonl dropped documents with their Drop (only with --rejects)
    scan/p000000.malformed.jsonl  malformed records with location
    keys/<stage>/p000000.keys  fixed-size key records, grouped by key partition (+ .idx offsets)
    payload/<stage>/p000000.bin  verification payloads (signatures), addressed from key records
    pairs/<stage>/k0000.pairs  a group task's candidate pairs, in runs of pair buckets (+ .idx)
    edges/<stage>/k0000.edges  a group task's edges between byte-identical payloads
    edges/<stage>/v0000.edges  a verify task's verified edges
    decisions/p000000.jsonl    per-partition drops and keeper annotations from the cluster phase
    decisions/p000000.<stage>.jsonl  a phased corpus stage's drops and edits
    stage-rejects/<kind>/p000000.<stage>.jsonl  a phased stage's records for the rejects folder
    pieces/s00000-p000000.*    each write task's share of each output shard
    output.json                the output this work dir publishes to (when it is not the output)
    rejects-out/               rejects files compressed here before they are uploaded to a URL
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from thresher.core.errors import WorkDirError


class WorkDir:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    def rel(self, path: Path) -> str:
        """A work file's name in the work store (`thresher.run.store`): relative, '/'-separated."""
        return path.relative_to(self.root).as_posix()

    def marker(self, task_id: str) -> Path:
        return self.root / "done" / f"{task_id}.json"

    def scan_docs(self, p: int) -> Path:
        return self.root / "scan" / f"p{p:06d}.docs.jsonl"

    def scan_rejects(self, p: int) -> Path:
        return self.root / "scan" / f"p{p:06d}.rejects.jsonl"

    def scan_malformed(self, p: int) -> Path:
        return self.root / "scan" / f"p{p:06d}.malformed.jsonl"

    def keys(self, stage: str, p: int) -> Path:
        return self.root / "keys" / stage / f"p{p:06d}.keys"

    def payload(self, stage: str, p: int) -> Path:
        return self.root / "payload" / stage / f"p{p:06d}.bin"

    def edges(self, stage: str, k: int, kind: str = "k") -> Path:
        return self.root / "edges" / stage / f"{kind}{k:04d}.edges"

    def pairs(self, stage: str, k: int) -> Path:
        return self.root / "pairs" / stage / f"k{k:04d}.pairs"

    def decisions(self, p: int) -> Path:
        return self.root / "decisions" / f"p{p:06d}.jsonl"

    def stage_decisions(self, stage: str, p: int) -> Path:
        """A phased corpus stage's drops for partition p (`thresher.core.phased`)."""
        return self.root / "decisions" / f"p{p:06d}.{stage}.jsonl"

    def kept_sources(self, p: int, stages: Sequence[str] = ()) -> tuple[Path, list[Path]]:
        """What partition p's kept documents are read from once the cluster phase and the phased
        stages `stages` decided (`thresher.decided.iter_kept`): its scan file and the decisions
        files, in the order they apply."""
        return self.scan_docs(p), [self.decisions(p), *(self.stage_decisions(s, p) for s in stages)]

    def stage_rejects(self, kind: str, stage: str, p: int) -> Path:
        """Where a phased stage writes partition p's records of a kind of its own for the rejects
        folder (line dedup's removed spans: `spans`); finalize concatenates each kind, partition
        by partition, into `<kind>.jsonl.gz` there."""
        return self.root / "stage-rejects" / kind / f"p{p:06d}.{stage}.jsonl"

    def piece(self, shard: int, p: int, suffix: str) -> Path:
        return self.root / "pieces" / f"s{shard:05d}-p{p:06d}{suffix}"

    def write_rejects(self, p: int) -> Path:
        return self.root / "rejects" / f"p{p:06d}.jsonl"

    def observed(self, phase: str, p: int, kind: str) -> Path:
        """A task's index part (`kind` "index") or rule samples ("samples"), see `run/observe.py`."""
        return self.root / "observe" / f"{phase}-p{p:06d}.{kind}.jsonl"


def default_work_dir(url: str) -> Path:
    """The stable local folder where a build to `url` runs unless `--work-dir` says otherwise:
    `$XDG_CACHE_HOME/thresher/work/<readable tail>-<hash of the URL>` (`~/.cache` without it)."""
    url = url.rstrip("/")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    tail = re.sub(r"[^A-Za-z0-9._-]+", "-", url.split("://", 1)[-1]).strip("-.")[-48:].lstrip("-.")
    digest = hashlib.sha256(url.encode("utf-8")).hexdigest()[:12]
    return Path(cache) / "thresher" / "work" / f"{tail or 'output'}-{digest}"


class BuildLock:
    """An exclusive flock on `lock` in the work dir, released when the process ends, even by kill -9."""

    def __init__(self, workdir: WorkDir) -> None:
        self.path = workdir.path("lock")
        self.handle: IO[str] | None = None

    def __enter__(self) -> BuildLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.close()
            raise WorkDirError(
                f"another build is running on this output (lock held: {self.path}); wait for it or use another -o"
            ) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        self.handle = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self.handle is not None:
            fcntl.flock(self.handle.fileno(), fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None
