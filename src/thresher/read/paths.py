"""Input paths: local files or fsspec URLs (`s3://`, `gs://`, `file://`, ...).

Every reader opens input through `open_input`, so any input a worker can reach by URL is readable
the same way as a local file. Remote access needs fsspec and the protocol's package (`s3fs`, `gcsfs`),
imported only when a URL is given; credentials and endpoints come from the usual environment and
config files of those packages.
"""

from __future__ import annotations

import io
import os
import re
from typing import Any, BinaryIO

from thresher.core.errors import ConfigError, InputError

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*://")


def is_url(path: str) -> bool:
    return bool(_URL.match(path)) and not path.startswith("file://")


def local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def _fs(url: str) -> tuple[Any, str]:
    try:
        import fsspec  # type: ignore[import-not-found]
    except ImportError as exc:
        raise ConfigError(f"{url}: reading URLs needs fsspec: pip install 'thresher[remote]' (fsspec and s3fs; gcsfs for gs://)") from exc
    try:
        fs, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise ConfigError(f"{url}: {exc}") from exc
    return fs, root


def open_input(path: str) -> BinaryIO:
    """A seekable binary stream of an input file; `InputError` names the path when it cannot be read."""
    if not is_url(path):
        path = local_path(path)
        try:
            return open(path, "rb")
        except FileNotFoundError as exc:
            raise InputError(f"{path}: no such file") from exc
        except OSError as exc:
            raise InputError(f"{path}: cannot open: {exc.strerror or exc}") from exc
    fs, root = _fs(path)
    try:
        # a standard buffered reader on top gives every reader the full io API (readline(limit), peek)
        return io.BufferedReader(fs.open(root, "rb"), 1 << 20)  # type: ignore[arg-type]
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such object") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot open: {exc}") from exc


def input_size(path: str) -> int | None:
    try:
        if not is_url(path):
            return os.path.getsize(local_path(path))
        fs, root = _fs(path)
        return int(fs.size(root))
    except (OSError, InputError):
        return None


def is_file(path: str) -> bool:
    if not is_url(path):
        return os.path.isfile(local_path(path))
    fs, root = _fs(path)
    try:
        return bool(fs.isfile(root))
    except OSError:
        return False


def is_dir(path: str) -> bool:
    if not is_url(path):
        return os.path.isdir(local_path(path))
    fs, root = _fs(path)
    try:
        return bool(fs.isdir(root))
    except OSError:
        return False


def list_files(path: str) -> list[str]:
    """Every file below a directory (or URL prefix), sorted, hidden names skipped."""
    if not is_url(path):
        from pathlib import Path

        base = Path(local_path(path))
        # a dangling link or a link loop is listed, not skipped: its read reports it (unreadable_file)
        return sorted(
            str(p) for p in base.rglob("*") if (p.is_file() or (p.is_symlink() and not p.exists())) and not p.name.startswith(".")
        )
    fs, root = _fs(path)
    protocol = path.split("://", 1)[0]
    found = [f for f in fs.find(root) if not f.rsplit("/", 1)[-1].startswith(".")]
    return sorted(f"{protocol}://{f}" for f in found)


def glob_files(pattern: str) -> list[str]:
    if not is_url(pattern):
        import glob

        return sorted(p for p in glob.glob(local_path(pattern), recursive=True) if os.path.isfile(p))
    fs, root = _fs(pattern)
    protocol = pattern.split("://", 1)[0]
    return sorted(f"{protocol}://{f}" for f in fs.glob(root) if fs.isfile(f))
