"""The work store on an object store (`--work-dir s3://bucket/prefix`; any fsspec URL, tested on S3).

Objects are never renamed, appended to or locked (`thresher.run.store` gives the contract):

- a write is one PUT of a whole object (a streamed writer uploads on close: S3 makes a multipart
  upload visible only once complete), so a reader sees all of an object or none of it;
- a commit is created *exclusively* (S3's `If-None-Match: *`, fsspec's `mode="create"`): the
  first attempt of a task to commit wins and every later one reads that commit back, so two
  attempts running at once (a retry beside a straggler, a node thought lost) cannot both count;
- the lease is a sequence of generation objects `lease/g<n>.json`, each created exclusively. The
  holder of the highest generation owns the store until its `expires_at`; it renews by rewriting
  its own generation (only it writes it), and a build that finds the highest lease expired takes
  the store by creating the next generation, which only one taker can do. A holder that finds a
  generation above its own has lost the store and stops (`ObjectLease.check`).

Expiry compares the writer's clock with the reader's: clocks must agree to well within the lease's
time to live (120 s by default; renewed every third of it).

Errors reaching the store become one line (`probe_work_store`): an unreachable endpoint, a missing
bucket, denied credentials. fsspec and the protocol's package are imported only here.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from thresher.core.errors import ConfigError, WorkDirError
from thresher.run.store import (
    STAMP,
    TaskCommit,
    check_stamp,
    new_owner,
    stamp_bytes,
)
from thresher.version import __version__
from thresher.write.atomic import dumps_json
from thresher.write.storage import fsspec_filesystem

LEASE_TTL = 120.0
LEASE_DIR = "lease"


class ObjectWorkStore:
    """A work store under an fsspec URL (module docstring)."""

    def __init__(self, url: str, options: Mapping[str, Any] | None = None) -> None:
        self.location = url.rstrip("/")
        # a fresh filesystem: a cached one keeps the endpoint and credentials it was made with
        self.fs, self.root = fsspec_filesystem(self.location, skip_instance_cache=True, **(options or {}))
        self.commits: dict[str, TaskCommit] = {}  # a commit never changes once made: safe to keep

    def _path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def _rel(self, path: str) -> str:
        return str(path)[len(self.root) + 1:]

    def put(self, rel: str, data: bytes) -> None:
        self.fs.pipe_file(self._path(rel), data)

    @contextmanager
    def writer(self, rel: str) -> Iterator[IO[bytes]]:
        f = self.fs.open(self._path(rel), "wb")
        try:
            yield f
        except BaseException:
            _discard(f)  # an aborted upload leaves no object
            raise
        f.close()

    def read(self, rel: str) -> bytes:
        return bytes(self.fs.cat_file(self._path(rel)))

    def locate(self, rel: str) -> str:
        return f"{self.location}/{rel}"

    @contextmanager
    def local_copies(self, locations: Sequence[str]) -> Iterator[list[Path]]:
        """Each object downloaded whole (one GET) into a temporary folder, deleted after the block."""
        base = self.location + "/"
        with tempfile.TemporaryDirectory(prefix="thresher-objects-") as folder:
            paths = []
            for i, location in enumerate(locations):
                if not location.startswith(base):
                    raise ValueError(f"{location}: not an object of the work store {self.location}")
                path = Path(folder) / f"{i:06d}-{location.rsplit('/', 1)[-1]}"
                self.fs.get_file(self._path(location[len(base):]), str(path))
                paths.append(path)
            yield paths

    def read_range(self, rel: str, offset: int, length: int) -> bytes:
        if length <= 0:
            return b""
        return bytes(self.fs.cat_file(self._path(rel), start=offset, end=offset + length))

    def exists(self, rel: str) -> bool:
        self.fs.invalidate_cache(self._path(rel))
        return bool(self.fs.isfile(self._path(rel)))

    def list(self, prefix: str) -> list[str]:
        path = self._path(prefix.rstrip("/"))
        self.fs.invalidate_cache(path)
        try:
            found = self.fs.find(path)
        except FileNotFoundError:
            return []
        return sorted(self._rel(p) for p in found if str(p).startswith(path + "/"))

    def delete(self, prefix: str) -> None:
        path = self._path(prefix.rstrip("/"))
        names = [self._path(rel) for rel in self.list(prefix)]
        if self.exists(prefix):
            names.append(path)
        if names:
            self.fs.rm(names)

    def listing(self, prefix: str = "") -> dict[str, str]:
        """The objects under folder `prefix` (every one by default) by name → a version token (its
        ETag, else size and time): one listing (paginated by the protocol), never a cached one
        (fsspec keeps listings per folder, and other processes add objects)."""
        self.fs.invalidate_cache()
        try:
            found = self.fs.find(self._path(prefix.rstrip("/")), detail=True)
        except FileNotFoundError:
            return {}
        out = {}
        for path, info in found.items():
            if str(path).startswith(self.root + "/") and info.get("type", "file") != "directory":
                token = info.get("ETag") or info.get("etag") or f"{info.get('size')}-{info.get('LastModified')}"
                out[self._rel(path)] = str(token)
        return out

    def download(self, rel: str, local: str | Path) -> None:
        """Object `rel` into local file `local` (one GET)."""
        self.fs.get_file(self._path(rel), str(local))

    def upload(self, local: str | Path, rel: str) -> None:
        """Local file `local` as object `rel` (one PUT, or a multipart upload for a large one)."""
        self.fs.put_file(str(local), self._path(rel))

    def remove(self, rels: Sequence[str]) -> None:
        """Delete these objects (one bulk request where the protocol has one); missing ones are no error."""
        if rels:
            try:
                self.fs.rm([self._path(rel) for rel in rels])
            except FileNotFoundError:
                pass

    def create(self, rel: str, data: bytes) -> bool:
        """Write `rel` only if no object has that name; False when one had."""
        path = self._path(rel)
        try:
            self.fs.pipe_file(path, data, mode="create")
        except FileExistsError:
            return False
        except TypeError:  # a filesystem without exclusive creation: check, then write (a race remains)
            self.fs.invalidate_cache(path)
            if self.fs.exists(path):
                return False
            self.fs.pipe_file(path, data)
        return True

    def attempt_name(self, rel: str, attempt: str) -> str:
        return f"{rel}.attempt-{attempt}"

    def _commit_name(self, task: str) -> str:
        return f"done/{task}.json"

    def commit(self, task: str, attempt: str, outputs: Mapping[str, str], result: Any) -> TaskCommit:
        mine = TaskCommit(task, attempt, dict(outputs), result)
        if self.create(self._commit_name(task), dumps_json(mine.to_json()).encode("utf-8")):
            self.commits[task] = mine
            return mine
        standing = self.committed(task)
        if standing is None:  # created, then deleted by a sweep: the store is being torn down
            raise WorkDirError(f"work dir {self.location}: the commit of {task} vanished")
        return standing

    def committed(self, task: str) -> TaskCommit | None:
        known = self.commits.get(task)
        if known is not None:
            return known
        try:
            raw = self.read(self._commit_name(task))
        except FileNotFoundError:
            return None
        commit = self.commits[task] = TaskCommit.from_json(json.loads(raw.decode("utf-8")))
        return commit

    def resolve(self, producer: str, rel: str) -> str:
        commit = self.committed(producer)
        if commit is None:
            raise FileNotFoundError(f"{self.location}/{rel}: task {producer} has not committed it")
        if rel not in commit.outputs:
            raise FileNotFoundError(f"{self.location}/{rel}: not among the outputs task {producer} committed")
        return commit.outputs[rel]

    def check_stamp(self, create: bool = True) -> None:
        """Refuse a store another thresher made; stamp a new one when `create`."""
        try:
            raw: bytes | None = self.read(STAMP)
        except FileNotFoundError:
            raw = None
        check_stamp(self.location, raw)
        if create and raw is None and not self.create(STAMP, stamp_bytes()):
            check_stamp(self.location, self.read(STAMP))  # another build stamped it meanwhile

    def lease(self, ttl: float = LEASE_TTL) -> ObjectLease:
        return ObjectLease(self, ttl)

    @contextmanager
    def task_log(self, task: str, attempt: str) -> Iterator[Path]:
        """A log is appended to locally and uploaded whole at the end, one object per attempt (nothing
        is appended to an object). Empty logs are not uploaded."""
        with tempfile.TemporaryDirectory(prefix="thresher-log-") as folder:
            path = Path(folder) / "task.log"
            failed = False
            try:
                yield path
            except BaseException:
                failed = True
                raise
            finally:
                if path.is_file() and path.stat().st_size:
                    try:
                        self.put(f"logs/{task}.attempt-{attempt}.log", path.read_bytes())
                    except Exception:
                        if not failed:  # the task's own error matters more than its log's
                            raise


def _discard(f: Any) -> None:
    """Drop an unfinished upload (fsspec's buffered files have `discard`; others are closed as is)."""
    discard = getattr(f, "discard", None)
    if callable(discard):
        discard()
        f.closed = True  # else the file's finalizer flushes the discarded buffer and fails
    else:
        f.close()


class ObjectLease:
    """The store held by one build (module docstring); a context manager that renews in a thread."""

    def __init__(self, store: ObjectWorkStore, ttl: float = LEASE_TTL, owner: str | None = None) -> None:
        self.store = store
        self.ttl = ttl
        self.owner = owner or new_owner()
        self.generation = 0
        self.lost: str | None = None
        self._seen: set[str] = set()  # the lease objects the last look found
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _name(self, generation: int) -> str:
        return f"{LEASE_DIR}/g{generation:09d}.json"

    def _record(self, expires_at: float) -> bytes:
        record = {"owner": self.owner, "thresher": __version__, "expires_at": expires_at, "ttl": self.ttl}
        return dumps_json(record).encode("utf-8")

    def _highest(self) -> tuple[int, dict[str, Any] | None]:
        names = [n for n in self.store.list(LEASE_DIR) if n.rsplit("/", 1)[-1].startswith("g")]
        self._seen = set(names)
        if not names:
            return 0, None
        name = max(names)
        generation = int(name.rsplit("/", 1)[-1][1:].split(".", 1)[0])
        try:
            return generation, json.loads(self.store.read(name).decode("utf-8"))
        except FileNotFoundError:  # swept by the build that just took the store
            return generation, {"owner": "?", "expires_at": float("inf")}

    def _refuse(self, held: Mapping[str, Any], now: float) -> WorkDirError:
        left = max(0.0, float(held.get("expires_at", 0)) - now)
        return WorkDirError(
            f"work dir {self.store.location}: another build holds it ({held.get('owner')}, lease expires in "
            f"{left:.0f} s unless renewed); wait for it or use another --work-dir"
        )

    def acquire(self, now: float | None = None) -> None:
        now = time.time() if now is None else now
        self.store.check_stamp()
        generation, held = self._highest()
        if held is not None and held.get("owner") != self.owner and float(held.get("expires_at", 0)) > now:
            raise self._refuse(held, now)
        if not self.store.create(self._name(generation + 1), self._record(now + self.ttl)):
            _, held = self._highest()  # another build took it between the look and the create
            raise self._refuse(held or {}, now)
        self.generation = generation + 1
        # earlier generations are history: one bulk delete (a build still reading one finds the store held)
        self.store.remove(sorted(self._seen))

    def renew(self, now: float | None = None) -> None:
        """Push the expiry on; `WorkDirError` (and `lost` set) when another build took the store."""
        self.check()
        generation, held = self._highest()
        if generation != self.generation or (held or {}).get("owner") != self.owner:
            self.lost = f"work dir {self.store.location}: another build took it over ({(held or {}).get('owner')})"
            raise WorkDirError(self.lost)
        now = time.time() if now is None else now
        self.store.put(self._name(self.generation), self._record(now + self.ttl))

    def check(self) -> None:
        if self.lost is not None:
            raise WorkDirError(self.lost)

    def release(self) -> None:
        """Expire the lease at once, so the next build need not wait for it."""
        if self.generation and self.lost is None:
            self.store.put(self._name(self.generation), self._record(0.0))

    def _keep(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.renew()
            except WorkDirError:
                return
            except Exception:  # noqa: BLE001 - a failed renewal is retried; the expiry has slack for two
                continue

    def __enter__(self) -> ObjectLease:
        self.acquire()
        self._thread = threading.Thread(target=self._keep, name="thresher-lease", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.release()


def _endpoint(fs: Any) -> str:
    client_kwargs = getattr(fs, "client_kwargs", None) or {}
    return str(getattr(fs, "endpoint_url", None) or client_kwargs.get("endpoint_url") or "the default endpoint")


def probe_work_store(url: str) -> None:
    """Reach the store's bucket once, and check its stamp: `ConfigError` (one line) when the endpoint
    cannot be reached, the bucket does not exist or the credentials are refused; `WorkDirError` for
    a store another thresher wrote."""
    # S3's client would retry a dead endpoint for minutes (60 s connect timeout, 5 attempts): the
    # probe gives up after one retry of 5 s, so a wrong endpoint fails the build at once
    quick = {"config_kwargs": {"connect_timeout": 5, "retries": {"max_attempts": 2}}} if url.startswith(
        ("s3://", "s3a://")) else None
    store = ObjectWorkStore(url, quick)
    bucket = store.root.split("/", 1)[0]
    try:
        store.fs.invalidate_cache(bucket)
        store.fs.ls(bucket, detail=False)
        store.check_stamp(create=False)
    except WorkDirError:
        raise
    except FileNotFoundError as exc:
        raise ConfigError(f"work dir {url}: bucket {bucket} does not exist ({_first_line(exc)})") from exc
    except PermissionError as exc:
        raise ConfigError(f"work dir {url}: access denied, check the credentials ({_first_line(exc)})") from exc
    except Exception as exc:  # noqa: BLE001 - connection errors come from the protocol's own package
        if isinstance(exc, OSError) or any(w in type(exc).__name__ for w in ("Connect", "Endpoint", "Timeout")):
            raise ConfigError(f"work dir {url}: cannot reach {_endpoint(store.fs)} ({_first_line(exc)})") from exc
        raise ConfigError(f"work dir {url}: {type(exc).__name__}: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
