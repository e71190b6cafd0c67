"""Where a build writes: the output (a folder or a URL), the stage folder it runs in, and publishing.

The build always runs in a local (or mounted) folder, the stage (`thresher.run.workdir`): shards are
assembled there, byte for byte as for a local output, then a publish phase copies or uploads them to
the output. By default the stage is the output folder itself and nothing is published.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from thresher.core.errors import WorkDirError
from thresher.paths import is_url, local_path
from thresher.run.plan import reset_workdir
from thresher.run.results import Published
from thresher.run.safety import check_no_links, own_manifest, own_work_dir
from thresher.run.task import TaskContext
from thresher.run.workdir import WorkDir, default_work_dir
from thresher.write.atomic import write_json_atomic
from thresher.write.storage import LocalStore, Store, open_store

_OUTPUT_NAMES = ("shard-", "data", "stats.json", "README.md")


@dataclass(frozen=True, slots=True)
class OutputPlace:
    """A build's output and the stage folder it runs in. `owned`: thresher owns the whole stage (the
    default cache folder of a URL output), so it is removed after the build."""

    target: Store
    stage: Path
    owned: bool
    store: str | None = None  # a work dir at a URL: the object store the stage mirrors (run/store_build.py)

    @property
    def work(self) -> WorkDir:
        return WorkDir(self.stage / ".work")

    @property
    def publishes(self) -> bool:
        """Whether shards are copied or uploaded from the stage to the output."""
        return not isinstance(self.target, LocalStore) or os.path.abspath(self.target.root) != os.path.abspath(
            self.stage
        )

    @property
    def location(self) -> str:
        """The output as a publish task opens it again: an absolute folder or the URL."""
        return os.path.abspath(self.target.root) if isinstance(self.target, LocalStore) else self.target.locate()

    @property
    def shown(self) -> Path | str:
        """The output as `BuildResult.output` reports it: the folder, or the URL as given."""
        return self.target.root if isinstance(self.target, LocalStore) else self.target.locate()


def place_output(output: str | Path, work_dir: str | None) -> OutputPlace:
    """The output store (fsspec is imported only for a URL) and the stage a build to it runs in."""
    target = open_store(output)
    if work_dir is not None and is_url(work_dir):  # the stage: a local mirror of the store, owned
        return OutputPlace(target, default_work_dir(work_dir), True, work_dir.rstrip("/"))
    if work_dir is not None:
        return OutputPlace(target, Path(local_path(work_dir)), False)
    if isinstance(target, LocalStore):
        return OutputPlace(target, target.root, False)
    return OutputPlace(target, default_work_dir(target.locate()), True)


def check_output(place: OutputPlace, *, overwrite: bool = False) -> None:
    """Refuse an output that is a file, a non-empty folder (prefix) that is neither a thresher
    dataset nor an unfinished build whose work dir is here, and a finished dataset unless `overwrite`
    (`thresher.run.safety` says what counts as thresher's)."""
    target, work = place.target, place.work
    if target.is_file():
        raise WorkDirError(f"{target.locate()}: exists and is not a directory")
    check_no_links(place.stage)  # nothing is written or deleted through a link, --overwrite or not
    entries = target.names()
    if not entries:
        return
    if work.root.is_dir() and own_work_dir(work):
        return  # an unfinished build: resumed (or refused by its plan)
    if ".work" in entries and not place.publishes:
        raise WorkDirError(
            f"{target.locate()}: its .work was not made by thresher; choose an empty or new output directory"
        )
    manifest = own_manifest(target)
    if manifest is not None:
        if manifest.get("complete") and not overwrite:
            raise WorkDirError(f"{target.locate()}: holds a finished dataset; pass --overwrite to replace it")
        return
    if target.remote and all(e.startswith(_OUTPUT_NAMES) for e in entries):
        raise WorkDirError(
            f"{target.locate()}: holds shards but no manifest, an unfinished build whose work dir is not here; "
            "rerun with the --work-dir it used, or empty the location"
        )
    kind = "location" if target.remote else "directory"
    raise WorkDirError(f"{target.locate()}: not empty and not a thresher dataset; choose an empty or new output {kind}")


def claim_work_dir(place: OutputPlace, overwrite: bool) -> None:
    """A work dir that is not the output's own `.work` records the output it publishes to; one that
    belongs to another output is refused (its publish markers would be wrong) unless `overwrite`."""
    work = place.work
    path = work.path("output.json")
    location = place.location
    if path.exists():
        previous = json.loads(path.read_text(encoding="utf-8")).get("output")
        if previous != location:
            if not overwrite:
                raise WorkDirError(
                    f"{work.root} holds an unfinished build to {previous}; use another --work-dir, "
                    "or pass --overwrite to discard it"
                )
            reset_workdir(work)
    write_json_atomic(path, {"output": location})


def publish_task(ctx: TaskContext, src: str, target: str, rel: str) -> Published:
    """Copy or upload one assembled shard from the stage to the output (a folder or a URL). On an
    object work store the shard is the one in the task's own mirror of it (`src` is the driver's)."""
    path = Path(ctx.workdir).parent / rel if ctx.store_url is not None else Path(src)
    open_store(target).put_file(path, rel)
    return Published(path=rel, bytes=os.path.getsize(path))
