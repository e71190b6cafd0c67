"""Where a dataset lives: a local folder or an fsspec URL (`s3://`, `gs://`, ...).

A build assembles its shards on local disk (the work dir) and *publishes* them here; `stats.json`,
the card and the manifest are written here directly, the manifest last. `verify_dataset` and
`read_shards` read through the same interface, so a dataset on an object store is checked by
streaming each shard through sha256.

`file://` locations are local folders. fsspec (the `remote` extra) and the protocol's
package (`s3fs`, `gcsfs`) are imported only when a URL is given; credentials and endpoints come from
the usual environment and config files of those packages.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import IO, Any, Protocol

from thresher.core.errors import ConfigError
from thresher.paths import is_url, local_path
from thresher.write.atomic import atomic_open

FSSPEC_EXTRA = "pip install 'thresher[remote]' (fsspec and s3fs; gcsfs for gs://)"


class Store(Protocol):
    """A dataset location. Paths are relative to it, `/`-separated (`data/train-00000-of-00002.parquet`)."""

    remote: bool

    def locate(self, rel: str = "") -> str:
        """The location (or one file's) as the user would write it, for messages."""
        ...

    def is_file(self) -> bool:
        """True when the location itself is a file (so it cannot be a dataset folder)."""
        ...

    def names(self) -> set[str]:
        """Names of the entries directly inside; empty when the location does not exist."""
        ...

    def files(self, prefix: str) -> list[str]:
        """Relative paths of the files whose relative path starts with `prefix`, sorted."""
        ...

    def size(self, rel: str) -> int | None:
        """A file's size, or None when it does not exist."""
        ...

    def open(self, rel: str) -> IO[bytes]:
        """A file opened for reading (raises FileNotFoundError)."""
        ...

    def remove(self, rel: str) -> None:
        """Delete a file; a missing one is not an error."""
        ...

    def put_file(self, src: Path, rel: str) -> None:
        """Copy a local file here; a reader never sees a partial file under `rel`."""
        ...

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write a file; a reader never sees a partial file under `rel`."""
        ...


def is_remote(location: str | os.PathLike[str]) -> bool:
    return isinstance(location, str) and is_url(location)


def open_store(location: str | os.PathLike[str]) -> Store:
    """The store of a dataset location: a `LocalStore` for paths and `file://`, else a `RemoteStore`."""
    if is_remote(location):
        return RemoteStore(str(location))
    return LocalStore(Path(local_path(str(location)) if isinstance(location, str) else location))


class LocalStore:
    remote = False

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def __str__(self) -> str:
        return str(self.root)

    def locate(self, rel: str = "") -> str:
        return str(self.root / rel) if rel else str(self.root)

    def is_file(self) -> bool:
        return self.root.exists() and not self.root.is_dir()

    def names(self) -> set[str]:
        if not self.root.is_dir():
            return set()
        return {e.name for e in self.root.iterdir()}

    def files(self, prefix: str) -> list[str]:
        folder, _, stem = prefix.rpartition("/")
        base = self.root / folder if folder else self.root
        if not base.is_dir():
            return []
        return sorted(
            f"{folder}/{e.name}" if folder else e.name
            for e in base.iterdir()
            if e.name.startswith(stem) and e.is_file()
        )

    def size(self, rel: str) -> int | None:
        path = self.root / rel
        return path.stat().st_size if path.is_file() else None

    def open(self, rel: str) -> IO[bytes]:
        return open(self.root / rel, "rb")

    def remove(self, rel: str) -> None:
        (self.root / rel).unlink(missing_ok=True)

    def put_file(self, src: Path, rel: str) -> None:
        dest = self.root / rel
        if Path(src).resolve() == dest.resolve():
            return
        with open(src, "rb") as f, atomic_open(dest, "wb") as out:
            shutil.copyfileobj(f, out, 1 << 20)

    def write_bytes(self, rel: str, data: bytes) -> None:
        with atomic_open(self.root / rel, "wb") as out:
            out.write(data)


def fsspec_filesystem(url: str, **options: Any) -> tuple[Any, str]:
    """fsspec's filesystem for a URL and the path within it (`options` go to the filesystem);
    `ConfigError` naming the extra when fsspec or the protocol's package is missing."""
    try:
        import fsspec
    except ImportError as exc:
        raise ConfigError(f"{url}: a dataset at a URL needs fsspec: {FSSPEC_EXTRA}") from exc
    try:
        fs, root = fsspec.core.url_to_fs(url, **options)
    except ImportError as exc:
        raise ConfigError(f"{url}: {exc} ({FSSPEC_EXTRA})") from exc
    except ValueError as exc:
        raise ConfigError(f"{url}: {exc}") from exc
    return fs, str(root).rstrip("/")


class RemoteStore:
    """A dataset under an fsspec URL. Object stores make a finished upload visible at once, whole:
    a reader never sees a partial object, so no temp name and rename are needed."""

    remote = True

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.fs, self.root = fsspec_filesystem(self.url)

    def __str__(self) -> str:
        return self.url

    def _path(self, rel: str) -> str:
        return f"{self.root}/{rel}" if rel else self.root

    def locate(self, rel: str = "") -> str:
        return f"{self.url}/{rel}" if rel else self.url

    def _refresh(self) -> None:
        try:
            self.fs.invalidate_cache(self.root)
        except Exception:  # a cache that cannot be dropped only risks a stale listing
            pass

    def is_file(self) -> bool:
        self._refresh()
        try:
            return bool(self.fs.isfile(self.root))
        except OSError:
            return False

    def names(self) -> set[str]:
        self._refresh()
        try:
            entries = self.fs.ls(self.root, detail=False)
        except (FileNotFoundError, NotADirectoryError):
            return set()
        return {str(e).rstrip("/").rsplit("/", 1)[-1] for e in entries if str(e).rstrip("/") != self.root}

    def files(self, prefix: str) -> list[str]:
        folder, _, stem = prefix.rpartition("/")
        self._refresh()
        try:
            found = self.fs.find(self._path(folder))
        except FileNotFoundError:
            return []
        base = self._path(folder) + "/"
        out = []
        for f in found:
            f = str(f)
            if f.startswith(base) and "/" not in f[len(base):] and f[len(base):].startswith(stem):
                out.append(f"{folder}/{f[len(base):]}" if folder else f[len(base):])
        return sorted(out)

    def size(self, rel: str) -> int | None:
        try:
            info = self.fs.info(self._path(rel))
        except FileNotFoundError:
            return None
        if info.get("type") == "directory":
            return None
        return int(info["size"])

    def open(self, rel: str) -> IO[bytes]:
        f: IO[bytes] = self.fs.open(self._path(rel), "rb", block_size=8 << 20)
        return f

    def remove(self, rel: str) -> None:
        try:
            self.fs.rm_file(self._path(rel))
        except FileNotFoundError:
            pass
        self._refresh()

    def put_file(self, src: Path, rel: str) -> None:
        self.fs.put_file(str(src), self._path(rel))
        self._refresh()
        size = os.path.getsize(src)
        if self.size(rel) != size:
            raise OSError(f"{self.locate(rel)}: uploaded {size} bytes, the store reports {self.size(rel)}")

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.fs.pipe_file(self._path(rel), data)
        self._refresh()
