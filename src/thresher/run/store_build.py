"""The driver's side of a build whose work dir is an object store (`--work-dir s3://bucket/prefix`).

The store is held by its lease (`thresher.run.store_object.ObjectLease`, in place of the folder's
`flock`) for the whole build. The driver runs in a local stage folder (`OutputPlace.stage`, a cache
folder named after the store's URL) whose `.work` mirrors the store (`thresher.run.store_mirror`):

- at the start the local `.work` is dropped and made again from the store's view, so a build
  resumed on another machine, or after a kill, starts from what the store holds (its commits and
  the driver's files), never from what a local folder kept;
- once the plan is written, a plan other than the store's empties the store (as `reset_workdir`
  empties a folder), and the driver's own files (plan, spooled standard input, output claim,
  compiled lists) are uploaded and committed as task `driver`, before any task;
- after each phase the driver links the new committed files into its `.work` (`PhaseRunner`);
- at the end the store is marked finished (`finished.json`) before the local retirement, then
  swept (everything but the lease and the stamp); a rerun that finds the marker completes the sweep.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from thresher.run.lifecycle import FINISHED, FinishedBuild
from thresher.write.atomic import dumps_json

if TYPE_CHECKING:
    from thresher.run.output import OutputPlace
    from thresher.run.store_object import ObjectWorkStore


def driver_store(url: str) -> ObjectWorkStore:
    """The store as this process's tasks see it (one instance: commits a sweep drops are forgotten)."""
    from thresher.run.store_object import ObjectWorkStore
    from thresher.run.task import shared_store

    store = shared_store(url)
    assert isinstance(store, ObjectWorkStore)
    return store


def held(place: OutputPlace) -> Any:
    """A context holding the build's work store: its lease and a fresh local mirror (module
    docstring); nothing for a work dir in a folder."""
    return _held(place) if place.store is not None else nullcontext()


@contextmanager
def _held(place: OutputPlace) -> Iterator[None]:
    from thresher.run.store_mirror import cache_root, reset_store, sync_folder

    assert place.store is not None
    store = driver_store(place.store)
    with store.lease():
        finished = store.exists(FINISHED)
        if finished:  # a finished build's sweep a kill stopped: all but its marker go
            reset_store(store, keep=(FINISHED,))
        work = place.work.root
        if work.is_dir() and not work.is_symlink():
            shutil.rmtree(work)
        work.mkdir(parents=True, exist_ok=True)
        sync_folder(store, place.stage, cache_root(place.store))
        if finished:  # for the local lifecycle to complete (`complete_finish`)
            (work / FINISHED).write_bytes(store.read(FINISHED))
        yield


def sync_driver(place_store: str, stage: Path) -> None:
    """Link the files committed since the last look into the driver's mirror (after each phase)."""
    from thresher.run.store_mirror import cache_root, sync_folder

    sync_folder(driver_store(place_store), stage, cache_root(place_store))


def after_finish_check(place: OutputPlace) -> None:
    """Once the local lifecycle completed a finished build's clean-up, its marker leaves the store."""
    if place.store is not None:
        driver_store(place.store).remove([FINISHED])


def plan_bytes(place: OutputPlace) -> bytes | None:
    path = place.work.path("plan.json")
    return path.read_bytes() if path.is_file() else None


def push_plan(place: OutputPlace, before: bytes | None) -> None:
    """After the driver wrote its plan: a plan other than the one the store held (`before`) empties
    the store; then the driver's own files are uploaded."""
    from thresher.run.store_mirror import driver_files, push_driver_files, reset_store

    if place.store is None:
        return
    store = driver_store(place.store)
    if plan_bytes(place) != before:
        reset_store(store)
    push_driver_files(store, place.stage, driver_files(place.work.root))


def mark_finished(place: OutputPlace, plan: str, staged: list[str], owned_stage: bool) -> None:
    """The store's finished marker, before the local work dir is retired."""
    if place.store is not None:
        marker = FinishedBuild(plan, tuple(staged), owned_stage).to_json()
        driver_store(place.store).put(FINISHED, dumps_json(marker).encode("utf-8"))


def sweep_store(place: OutputPlace) -> None:
    """Delete the finished build's objects (its marker last) and this host's object cache."""
    from thresher.run.store_mirror import cache_root, reset_store

    if place.store is None:
        return
    store = driver_store(place.store)
    reset_store(store, keep=(FINISHED,))
    store.remove([FINISHED])
    shutil.rmtree(cache_root(place.store), ignore_errors=True)
