"""A build on an object work store, run through local folders: each task in a scratch folder that
holds the store's committed files, its new files uploaded as its attempt's objects and committed.

The build's phases read and write their work files by path (`thresher.run.workdir`), as they do in a
POSIX work dir. For `--work-dir s3://bucket/prefix` they run unchanged in local folders that mirror
the store, so the object-store build is the folder build byte for byte:

- the *view* of the store (`store_view`): every committed task's outputs under their logical names
  (the commit names the winning attempt's objects; objects of attempts that never committed are not
  in it), the driver's own files (the plan, the spooled standard input, the output claim, compiled
  lists) among them, committed by the driver as task `driver` before the first task;
- a host-local *object cache* (`cache_root`): every object this host downloaded or uploaded, by its
  object name (attempt-named objects never change, so a cached one is always right);
- a task runs in a fresh *scratch* folder (`mirrored_task`) where the view's files are hard links
  into the cache; the files it writes there (new names, or names replaced by a rename) are its
  outputs: uploaded under its attempt's names, moved into the cache, committed with its result. A
  task never rewrites a file in place that another task committed (a work file is written beside
  its name and renamed, or written once by the task that owns it), so the cache is never changed
  through a link. Files a task writes beside the work dir (the assembled shards) are kept as
  `_stage/<name>`; its deadline crumbs (`stuck/`) and logs stay local (logs are uploaded by
  `WorkStore.task_log`);
- the driver keeps the same view in its own stage folder (`sync_folder`, after each phase), so
  what it reads between phases and when it finalizes is where the folder build has it.

Deletes a task makes in its scratch folder (a cluster round's `r-2` files) stay local: the store
keeps them until the build's sweep. Costs per task: one listing of `done/` (a name per task), one
GET per commit this process has not read, a download per object this host lacks, a hard link per
file of the view.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from thresher.run.store import Attempt
from thresher.run.store_object import LEASE_DIR, ObjectWorkStore
from thresher.run.workdir import default_work_dir
from thresher.write.atomic import atomic_open

STAGE = "_stage/"  # a file a task wrote beside the work dir (a shard), as a logical name
LOCAL_ONLY = ("stuck/", "logs/", "lock")  # never uploaded: per process, or uploaded by `task_log`
CONTROL = ("done/", f"{LEASE_DIR}/", "logs/")  # the store's own objects, in no view
DRIVER = "driver"  # the task name the driver's own files are committed under


def cache_root(url: str) -> Path:
    """This host's object cache for the store at `url` (beside the default stage folder of that URL)."""
    stage = default_work_dir(url)
    return stage.with_name(stage.name + ".objects")


def store_view(store: ObjectWorkStore) -> dict[str, str]:
    """The store's files by logical name → object name: the outputs of every commit, the driver's
    own files among them (committed as task `DRIVER`). One listing of `done/` (a name per task, not
    per file), and a GET per commit this process has not read."""
    listing = store.listing("done")
    for task in [t for t in store.commits if f"done/{t}.json" not in listing]:
        del store.commits[task]  # swept or reset since it was read
    view: dict[str, str] = {}
    for rel in sorted(listing):
        if not rel.endswith(".json"):
            continue
        commit = store.committed(rel[len("done/"):-len(".json")])
        if commit is not None:
            view.update(commit.outputs)
    return view


def _cached(store: ObjectWorkStore, cache: str, obj: str) -> str:
    """The cached copy of object `obj`, downloaded (whole, one GET) when this host has none."""
    path = os.path.join(cache, "objects", obj)
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".get-")
        os.close(fd)
        try:
            store.download(obj, tmp)
            os.replace(tmp, path)  # another process fetching the same object writes the same bytes
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return path


def _destination(root: str, logical: str) -> str:
    """Where a logical name lives under a stage folder `root` (its work dir is `root/.work`)."""
    if logical.startswith(STAGE):
        return os.path.join(root, logical[len(STAGE):])
    return os.path.join(root, ".work", logical)


def sync_folder(store: ObjectWorkStore, root: Path, cache: Path) -> set[tuple[int, int]]:
    """Link the store's view into stage folder `root`: the files it lacks. Returns the (device,
    inode) of every file linked, so that what a task writes can be told apart."""
    linked: set[tuple[int, int]] = set()
    made: set[str] = set()
    base, cached = str(root), str(cache)
    for logical, obj in sorted(store_view(store).items()):
        dest = _destination(base, logical)
        if os.path.exists(dest):
            continue
        source = _cached(store, cached, obj)
        folder = os.path.dirname(dest)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        os.link(source, dest)
        st = os.stat(source)
        linked.add((st.st_dev, st.st_ino))
    return linked


class MirroredAttempt(Attempt):
    """An attempt whose `TaskContext.output` files are written in its scratch folder (collected with
    the rest of what it writes there), named in results by the objects they become."""

    def __init__(self, store: ObjectWorkStore, task: str, work: Path) -> None:
        super().__init__(store, task)
        self.work = work

    @contextmanager
    def writer(self, rel: str) -> Iterator[IO[bytes]]:
        with atomic_open(self.work / rel, "wb", durable=False) as out:
            yield out


def written_files(root: Path, linked: set[tuple[int, int]]) -> list[tuple[str, Path]]:
    """What a task wrote in its scratch folder `root`: (logical name, file), by name."""
    found = []
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            logical = rel[len(".work/"):] if rel.startswith(".work/") else STAGE + rel
            if logical.startswith(LOCAL_ONLY):
                continue
            st = path.stat()
            if (st.st_dev, st.st_ino) not in linked:
                found.append((logical, path))
    return sorted(found)


def link_driver_files(store: ObjectWorkStore, driver_work: Path, cache: Path) -> None:
    """The driver's own files at the driver's paths on this host too, where missing: a task's
    input may name them by path (a partition of the spooled standard input; compiled URL lists in
    `quality.urls.compiled_dir`). On the driver's host they are there already."""
    commit = store.committed(DRIVER)
    for logical, obj in sorted((commit.outputs if commit is not None else {}).items()):
        dest = driver_work / logical
        if dest.exists():
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.link-{os.getpid()}")
        tmp.unlink(missing_ok=True)
        os.link(_cached(store, str(cache), obj), tmp)
        os.replace(tmp, dest)


@contextmanager
def mirrored_task(store: ObjectWorkStore, task: str, driver_work: Path | None = None
                  ) -> Iterator[tuple[str, MirroredAttempt]]:
    """Run a task in a scratch folder holding the store's view: yields its work dir and attempt; when
    the block ends normally, the files it wrote are uploaded as the attempt's objects (recorded in
    `attempt.outputs`, for its commit) and kept in the cache. The scratch folder goes either way.
    `driver_work`: the driver's work dir, whose own files are linked at their paths here too."""
    cache = cache_root(store.location)
    scratch_base = cache / "scratch"
    scratch_base.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=f"{task}-", dir=scratch_base))
    try:
        linked = sync_folder(store, root, cache)
        if driver_work is not None:
            link_driver_files(store, driver_work, cache)
        (root / ".work").mkdir(exist_ok=True)
        attempt = MirroredAttempt(store, task, root / ".work")
        yield str(root / ".work"), attempt
        for logical, path in written_files(root, linked):
            obj = store.attempt_name(logical, attempt.name)
            store.upload(path, obj)
            kept = cache / "objects" / obj
            kept.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, kept)  # this host has it now: no task here downloads it again
            attempt.outputs[logical] = obj
    finally:
        shutil.rmtree(root, ignore_errors=True)


def push_driver_files(store: ObjectWorkStore, root: Path, names: list[str]) -> None:
    """Commit the driver's own files (`names`, relative to `root/.work`) as task `DRIVER`'s outputs,
    so every view holds them (a standing commit, from a run with the same plan, stays)."""
    attempt = Attempt(store, DRIVER)
    for rel in names:
        path = root / ".work" / rel
        if path.is_file():
            obj = store.attempt_name(rel, attempt.name)
            store.upload(path, obj)
            attempt.outputs[rel] = obj
    attempt.commit(None)


def driver_files(work: Path) -> list[str]:
    """The files in a driver's work dir that are its own (not linked from the store's view)."""
    names = []
    for dirpath, _, files in os.walk(work):
        for name in files:
            path = Path(dirpath, name)
            rel = path.relative_to(work).as_posix()
            if rel.startswith(LOCAL_ONLY) or rel.startswith(CONTROL) or path.stat().st_nlink > 1:
                continue
            names.append(rel)
    return sorted(names)


def reset_store(store: ObjectWorkStore, keep: tuple[str, ...] = ()) -> None:
    """Delete every object of the store but its lease, its stamp and `keep` (a new plan, the sweep)."""
    spared = ("store.json", *keep)
    doomed = [rel for rel in store.listing() if not rel.startswith(f"{LEASE_DIR}/") and rel not in spared]
    store.remove(doomed)
    store.commits.clear()
