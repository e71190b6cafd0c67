"""The end of a build's life: from a complete manifest to a folder with no work dir, resumable at
every step.

A build's stage folder (the output folder itself, or `--work-dir`) goes through these states; a
kill can stop it in any of them, and the rerun (plain or `--overwrite`) picks up from each:

    building    `.work/` holds `plan.json` (or only the lock, or the spooled standard input
                before the plan): resumed from its completion markers
    finished    the manifest is written; `.work/finished.json` says so and names the plan
    retired     `.work` renamed to `.work.done-<plan>-<pid>-<ns>` (one atomic rename; `<plan>` the
                first 16 hex digits of the plan's digest): no rerun can take it for an unfinished
                build, and a new build may start a new `.work` beside it
    swept       the retired folder's files deleted, its marker last, then the folder itself

`finished.json` (the marker) is what makes a retired folder thresher's: it is written before the
rename and deleted after everything else in the folder, so a `.work.done-*` folder holds it until
it is empty; an empty one still names its plan. A rerun completes any retirement and sweep it
finds (`complete_finish`); one of the same plan (config, inputs and their fingerprints) as a
finished build it completed then has nothing left to do and returns that dataset, any other meets
the finished-dataset rule (`--overwrite` to replace it).

An older thresher deleted `.work` in place, so a kill part-way left a `.work` with no plan beside
a complete manifest; such a folder, holding only names of the work dir's layout, is retired the
same way (`remnant_of_finished_build`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.run.workdir import WorkDir
from thresher.write.atomic import write_json_atomic

FINISHED = "finished.json"
RETIRED_PREFIX = ".work.done-"
# What a work dir holds at its top (`thresher.run.workdir` lists the layout); a `.work` beside a
# complete manifest holding only these is what an interrupted in-place delete left
WORK_LAYOUT = frozenset({
    "plan.json", "lock", "stdin.bin", "stdin.bin.tmp", "done", "scan", "keys", "payload", "pairs", "edges",
    "decisions", "stage-rejects", "pieces", "output.json", "rejects-out", "rejects", "observe", "logs", "lists",
    "previous-shards.json", "index-parts", "observed-out", "stuck", FINISHED,
    "url", "lines", "semantic", "embed",  # the built-in phased stages' folders
})


def plan_digest(plan: dict[str, Any]) -> str:
    """A work plan's identity: the SHA-256 of its canonical JSON."""
    canonical = json.dumps(plan, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


PLAN_KEY_HEX = 16
NO_PLAN = "0" * PLAN_KEY_HEX  # an older thresher's remnant: no plan is known


def plan_key(digest: str | None) -> str:
    """The part of a plan digest a retired folder's name carries."""
    return (digest or NO_PLAN)[:PLAN_KEY_HEX]


@dataclass(frozen=True, slots=True)
class FinishedBuild:
    """What a finished build's marker says: its plan (None for an older thresher's remnant) and
    the files of the stage to delete with its work dir (shards staged for publishing)."""

    plan: str | None
    staged: tuple[str, ...] = ()
    owned_stage: bool = False

    def same_plan(self, digest: str) -> bool:
        """Whether this build had the plan of `digest` (an emptied folder knows only its key)."""
        return self.plan is not None and plan_key(self.plan) == plan_key(digest)

    def to_json(self) -> dict[str, Any]:
        return {"finished": True, "plan": self.plan, "staged": list(self.staged), "owned_stage": self.owned_stage}

    @classmethod
    def read(cls, folder: Path) -> FinishedBuild | None:
        try:
            data = json.loads((folder / FINISHED).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("finished") is not True:
            return None
        plan = data.get("plan")
        staged = data.get("staged")
        return cls(
            plan if isinstance(plan, str) and plan != NO_PLAN else None,
            tuple(s for s in staged if isinstance(s, str) and _inside(s)) if isinstance(staged, list) else (),
            data.get("owned_stage") is True,
        )


def _inside(rel: str) -> bool:
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and ".." not in parts and "\\" not in rel


def finish(stage: Path, work: WorkDir, plan: str | None, staged: Sequence[str] = (), owned_stage: bool = False) -> None:
    """After the manifest: mark the work dir finished, retire it and sweep it (each step resumable)."""
    write_json_atomic(work.path(FINISHED), FinishedBuild(plan, tuple(staged), owned_stage).to_json())
    try:
        retired = retire(stage, work, plan)
    except FileNotFoundError:  # a rerun started meanwhile retired it (and leaves its sweep to this build)
        return
    sweep(retired, held=True)


def retire(stage: Path, work: WorkDir, plan: str | None) -> Path:
    """Rename a finished work dir aside (atomic): from here no rerun takes it for an unfinished build."""
    target = stage / f"{RETIRED_PREFIX}{plan_key(plan)}-{os.getpid()}-{time.monotonic_ns()}"
    os.rename(work.root, target)
    return target


def sweep(folder: Path, *, held: bool = False, staged: bool = True) -> FinishedBuild | None:
    """Delete a retired work dir: the staged files it names (unless not `staged`: the stage is the
    output, whose shards are the dataset), its files but the marker, the marker, then the folder
    (and an owned stage left empty). Returns what it knew of the finished build; None when another
    process still holds its lock (a build sweeping it now) or it is not a finished work dir.
    `held`: this process holds the lock (the build that just finished)."""
    marker = FinishedBuild.read(folder)
    if marker is None:
        if not _empty_dir(folder):
            return None
        with contextlib.suppress(OSError):  # the marker was the last file: only the folder is left
            folder.rmdir()
        key = folder.name[len(RETIRED_PREFIX):].partition("-")[0]
        return FinishedBuild(None if key == NO_PLAN else key)
    with _lock_or_none(folder, held) as locked:
        if not locked:
            return None
        stage = folder.parent
        if staged and marker.staged:
            for rel in marker.staged:
                (stage / rel).unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                (stage / "data").rmdir()  # a Parquet layout's folder, once its staged shards are gone
        for entry in sorted(folder.iterdir()):
            if entry.name in (FINISHED, "lock"):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    (folder / "lock").unlink(missing_ok=True)
    (folder / FINISHED).unlink()
    folder.rmdir()
    if marker.owned_stage:
        with contextlib.suppress(OSError):
            stage.rmdir()  # only when nothing else is left in it
    return marker


@contextlib.contextmanager
def _lock_or_none(folder: Path, held: bool) -> Any:
    """The retired work dir's build lock, when no live process holds it (the lock follows the
    renamed folder: a build still sweeping its own holds it)."""
    path = folder / "lock"
    if held or not path.exists():
        yield True
        return
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def _empty_dir(folder: Path) -> bool:
    try:
        return folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir())
    except OSError:
        return False


def remnant_of_finished_build(work: WorkDir, complete_manifest: bool) -> bool:
    """Whether `.work` is what an interrupted in-place delete of a finished build's work dir left:
    no plan, only names of the work dir's layout, beside a complete manifest."""
    if not complete_manifest or work.root.is_symlink() or not work.root.is_dir():
        return False
    names = {e.name for e in work.root.iterdir()}
    return "plan.json" not in names and names <= WORK_LAYOUT


def complete_finish(stage: Path, work: WorkDir, complete_manifest: bool, *, publishes: bool) -> list[FinishedBuild]:
    """Complete every finish a kill interrupted in `stage`: a `.work` marked finished (or an older
    thresher's remnant) is retired, then every retired work dir is swept (`publishes`: the stage is
    not the output, so the shards staged in it are deleted too). Returns what is known of the
    finished builds completed."""
    if not work.root.is_symlink() and work.root.is_dir():
        marker = FinishedBuild.read(work.root)
        if marker is not None:
            retire(stage, work, marker.plan)
        elif remnant_of_finished_build(work, complete_manifest):
            write_json_atomic(work.path(FINISHED), FinishedBuild(None).to_json())
            retire(stage, work, None)
    done = []
    for folder in retired_folders(stage):
        marker = sweep(folder, staged=publishes)
        if marker is not None:
            done.append(marker)
    return done


def retired_folders(stage: Path) -> list[Path]:
    try:
        with os.scandir(stage) as entries:
            return sorted(
                Path(e.path) for e in entries
                if e.name.startswith(RETIRED_PREFIX) and e.is_dir(follow_symlinks=False)
            )
    except (FileNotFoundError, NotADirectoryError):
        return []
