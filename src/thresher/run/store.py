"""The work store: where a build's tasks leave their files, behind one interface with two kinds.

`LocalWorkStore` is today's work dir (`thresher.run.workdir`): a POSIX folder, local or mounted,
where a file is written beside its name and renamed into place, a task's completion marker is its
result and `flock` keeps a second build out. `thresher.run.store_object.ObjectWorkStore` is the
same contract on an object store (any fsspec URL; tested on S3), where nothing is renamed,
appended to or locked:

- every write is a whole immutable object (`put`, `writer`): a reader sees all of it or nothing;
- a task writes its outputs under *attempt names* (`attempt_name`) and commits them with a small
  manifest object written last (`commit`): the first attempt to commit wins, a retried or
  duplicated attempt finds the commit and takes its result, so it can never replace a result
  another reader already used; readers resolve a logical name through the commit (`TaskCommit.resolve`);
- reads may be ranged (`read_range`: a ranged GET);
- a lease object with an expiry (`lease`) keeps a second build out, instead of `flock`;
- a stamp object names the thresher that made the store (`STAMP`): another version's store is
  refused before any work, since its objects may follow another layout.

The local kind keeps the names as they are (an attempt writes the logical name itself, the rename
makes the last whole write the file) and the marker format of `thresher.run.task`, so a build
through it is byte-identical to one before the store existed. docs/scaling.md ("Work store")
lists every operation the build does in its work dir and how each maps onto the store.

fsspec is imported only when a work dir is a URL (`thresher.run.stores.open_work_store`).
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from thresher.core.errors import WorkDirError
from thresher.run.workdir import BuildLock, WorkDir
from thresher.version import __version__
from thresher.write.atomic import atomic_open, dumps_json, write_work_json

STAMP = "store.json"
STORE_FORMAT = "thresher work store"
STORE_LAYOUT = 1  # raised when the objects' names or formats change


@dataclass(frozen=True, slots=True)
class TaskCommit:
    """A task's commit: the attempt that won, the objects it wrote by logical name, its result."""

    task: str
    attempt: str
    outputs: Mapping[str, str] = field(default_factory=dict)
    result: Any = None

    def resolve(self, rel: str) -> str:
        """The object that holds logical file `rel` (itself when the store keeps names as they are)."""
        return self.outputs.get(rel, rel)

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "attempt": self.attempt, "outputs": dict(self.outputs), "result": self.result}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskCommit:
        outputs = data.get("outputs") or {}
        if not isinstance(outputs, Mapping) or not isinstance(data.get("task"), str):
            raise ValueError("not a task commit")
        return cls(str(data["task"]), str(data.get("attempt", "")), {str(k): str(v) for k, v in outputs.items()},
                   data.get("result"))


def new_attempt() -> str:
    """A name no other attempt of any task, on any node, takes: time, process and 32 random bits."""
    return f"{time.time_ns():x}-{os.getpid()}-{secrets.token_hex(4)}"


def new_owner() -> str:
    """Who holds a lease, as an error message names it: host, process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class WorkStore(Protocol):
    """What tasks and the driver do in a work dir (module docstring). `rel` names are '/'-separated
    and relative to the store's root."""

    location: str

    def put(self, rel: str, data: bytes) -> None:
        """Write a whole object (a file replaced at once)."""

    def writer(self, rel: str) -> AbstractContextManager[IO[bytes]]:
        """Write an object as a stream; it appears whole when the block ends, and not at all if it raises."""

    def read(self, rel: str) -> bytes:
        """An object's bytes; `FileNotFoundError` when there is none."""

    def locate(self, rel: str) -> str:
        """The object's full name: a path, or a URL under the store's."""

    def local_copies(self, locations: Sequence[str]) -> AbstractContextManager[list[Path]]:
        """Local files holding these objects (named as `locate` names them) while the block runs: the
        files themselves in a folder, downloaded copies from an object store."""

    def read_range(self, rel: str, offset: int, length: int) -> bytes:
        """`length` bytes from `offset` (fewer at the end of the object)."""

    def exists(self, rel: str) -> bool: ...

    def list(self, prefix: str) -> list[str]:
        """The names of the objects under folder `prefix` (at any depth), sorted."""

    def delete(self, prefix: str) -> None:
        """Remove the object `prefix` or everything under it; nothing there is no error."""

    def attempt_name(self, rel: str, attempt: str) -> str:
        """Where an attempt writes logical file `rel`."""

    def commit(self, task: str, attempt: str, outputs: Mapping[str, str], result: Any) -> TaskCommit:
        """Commit an attempt (its manifest written last); the commit that stands, maybe another attempt's."""

    def committed(self, task: str) -> TaskCommit | None:
        """The task's commit, or None when no attempt has committed."""

    def resolve(self, producer: str, rel: str) -> str:
        """The object holding logical file `rel`, which task `producer` wrote (its commit says which
        attempt's); `FileNotFoundError` when that task has not committed."""

    def lease(self, ttl: float = ...) -> AbstractContextManager[object]:
        """Hold the store for one build: a second one is refused with one line while it is held."""

    def task_log(self, task: str, attempt: str) -> AbstractContextManager[Path]:
        """A local file an attempt appends its log to, kept in the store (`logs/`) when the block ends."""


class LocalWorkStore:
    """A POSIX work dir, as before the store: rename into place, markers as results, flock."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.location = str(self.root)
        self.work = WorkDir(self.root)

    def _path(self, rel: str) -> Path:
        return self.root / rel

    def put(self, rel: str, data: bytes) -> None:
        with self.writer(rel) as out:
            out.write(data)

    @contextmanager
    def writer(self, rel: str) -> Iterator[IO[bytes]]:
        path = self._path(rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_open(path, "wb", durable=False) as out:
            yield out

    def read(self, rel: str) -> bytes:
        return self._path(rel).read_bytes()

    def locate(self, rel: str) -> str:
        return str(self._path(rel))

    @contextmanager
    def local_copies(self, locations: Sequence[str]) -> Iterator[list[Path]]:
        yield [Path(location) for location in locations]

    def read_range(self, rel: str, offset: int, length: int) -> bytes:
        with open(self._path(rel), "rb") as f:
            return os.pread(f.fileno(), length, offset)

    def exists(self, rel: str) -> bool:
        return self._path(rel).is_file()

    def list(self, prefix: str) -> list[str]:
        base = self._path(prefix)
        if not base.is_dir():
            return []
        return sorted(p.relative_to(self.root).as_posix() for p in base.rglob("*") if p.is_file())

    def delete(self, prefix: str) -> None:
        import shutil

        path = self._path(prefix)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)

    def attempt_name(self, rel: str, attempt: str) -> str:
        return rel  # the rename makes the last whole write the file: today's names, byte for byte

    def commit(self, task: str, attempt: str, outputs: Mapping[str, str], result: Any) -> TaskCommit:
        # the marker is the result alone, as `thresher.run.task` has always written it
        write_work_json(self.work.marker(task), result)
        return TaskCommit(task, attempt, {}, result)

    def committed(self, task: str) -> TaskCommit | None:
        marker = self.work.marker(task)
        try:
            result = json.loads(marker.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        return TaskCommit(task, "", {}, result)

    def resolve(self, producer: str, rel: str) -> str:
        return rel  # names are kept: the file is where the task wrote it

    def lease(self, ttl: float = 0.0) -> AbstractContextManager[object]:
        self.root.mkdir(parents=True, exist_ok=True)
        return BuildLock(self.work)

    @contextmanager
    def task_log(self, task: str, attempt: str) -> Iterator[Path]:
        path = self.work.path("logs", f"{task}.log")  # every attempt appends to one file, as before
        path.parent.mkdir(parents=True, exist_ok=True)
        yield path


class Attempt:
    """One run of one task: where its outputs go (attempt names) and which it wrote, for its commit.
    `run_task` makes one per run and sets it as the current attempt (`current_attempt`), so a task
    function writes through `TaskContext.output` without knowing the store's kind."""

    def __init__(self, store: WorkStore, task: str, name: str | None = None) -> None:
        self.store = store
        self.task = task
        self.name = name or new_attempt()
        self.outputs: dict[str, str] = {}

    @contextmanager
    def writer(self, rel: str) -> Iterator[IO[bytes]]:
        """Write logical file `rel` as this attempt's object; recorded once it is whole."""
        target = self.store.attempt_name(rel, self.name)
        with self.store.writer(target) as out:
            yield out
        self.outputs[rel] = target

    def put(self, rel: str, data: bytes) -> None:
        with self.writer(rel) as out:
            out.write(data)

    def location(self, rel: str) -> str:
        """Where this attempt's `rel` is (`WorkStore.locate`), for a result that names it."""
        return self.store.locate(self.store.attempt_name(rel, self.name))

    def commit(self, result: Any) -> TaskCommit:
        return self.store.commit(self.task, self.name, self.outputs, result)


_CURRENT: ContextVar[Attempt | None] = ContextVar("thresher_attempt", default=None)


def current_attempt() -> Attempt | None:
    """The attempt `run_task` is running in this thread, if any."""
    return _CURRENT.get()


@contextmanager
def attempt_running(attempt: Attempt) -> Iterator[Attempt]:
    token = _CURRENT.set(attempt)
    try:
        yield attempt
    finally:
        _CURRENT.reset(token)


def store_stamp() -> dict[str, Any]:
    """What `STAMP` holds: the format, its layout and the thresher that wrote it."""
    return {"format": STORE_FORMAT, "layout": STORE_LAYOUT, "thresher": __version__}


def check_stamp(location: str, raw: bytes | None) -> None:
    """Refuse a store another thresher made (another version, or something that is not a stamp)."""
    if raw is None:
        return
    try:
        stamp = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        stamp = None
    if not isinstance(stamp, dict) or stamp.get("format") != STORE_FORMAT:
        raise WorkDirError(f"work dir {location}: {STAMP} is not a thresher work store's; use another --work-dir")
    if stamp.get("thresher") != __version__ or stamp.get("layout") != STORE_LAYOUT:
        raise WorkDirError(
            f"work dir {location}: written by thresher {stamp.get('thresher')} (layout {stamp.get('layout')}), "
            f"this is thresher {__version__} (layout {STORE_LAYOUT}); use another --work-dir or delete it"
        )


def stamp_bytes() -> bytes:
    return dumps_json(store_stamp()).encode("utf-8")
