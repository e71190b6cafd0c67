"""Opening and listing inputs: local files or fsspec URLs (`s3://`, `gs://`, `file://`, ...);
the path/URL helpers themselves are `thresher.paths`.

Every reader opens input through `open_input`, so any input a worker can reach by URL is readable
the same way as a local file. Remote access needs fsspec and the protocol's package (`s3fs`, `gcsfs`),
imported only when a URL is given; credentials and endpoints come from the usual environment and
config files of those packages.
"""

from __future__ import annotations

import io
import os
from typing import BinaryIO

from thresher.core.errors import InputError
from thresher.paths import input_size, is_dir, is_file, is_url, local_path
from thresher.paths import url_fs as _fs

__all__ = ["glob_files", "input_size", "is_dir", "is_file", "is_url", "list_files", "local_path", "open_input"]


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
        return io.BufferedReader(fs.open(root, "rb"), 1 << 20)
    except FileNotFoundError as exc:
        raise InputError(f"{path}: no such object") from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot open: {exc}") from exc


def list_files(path: str) -> list[str]:
    """Every file below a directory (or URL prefix), sorted, hidden names skipped."""
    if not is_url(path):
        from pathlib import Path

        base = Path(local_path(path))
        # a dangling link or a link loop is listed, not skipped: its read reports it (unreadable_file)
        return sorted(
            str(p)
            for p in base.rglob("*")
            if (p.is_file() or (p.is_symlink() and not p.exists())) and not p.name.startswith(".")
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
