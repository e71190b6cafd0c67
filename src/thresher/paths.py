"""Paths and URLs: what every layer needs to tell a local path from an fsspec URL (`s3://`,
`gs://`, ...; `file://` is local) and to ask a file's size or kind either way.

Remote access needs fsspec and the protocol's package (`s3fs`, `gcsfs`), imported only when a URL is
given. Reading inputs is `thresher.read.paths.open_input`; writing outputs is `thresher.write.storage`.
"""

from __future__ import annotations

import os
import re
from typing import Any

from thresher.core.errors import ConfigError, InputError

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*://")


def is_url(path: str) -> bool:
    return bool(_URL.match(path)) and not path.startswith("file://")


def local_path(path: str) -> str:
    return path[len("file://"):] if path.startswith("file://") else path


def url_fs(url: str) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError as exc:
        raise ConfigError(
            f"{url}: reading URLs needs fsspec: pip install 'thresher[remote]' (fsspec and s3fs; gcsfs for gs://)"
        ) from exc
    try:
        fs, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as exc:
        raise ConfigError(f"{url}: {exc}") from exc
    return fs, root


def input_size(path: str) -> int | None:
    try:
        if not is_url(path):
            return os.path.getsize(local_path(path))
        fs, root = url_fs(path)
        return int(fs.size(root))
    except (OSError, InputError):
        return None


def is_file(path: str) -> bool:
    if not is_url(path):
        return os.path.isfile(local_path(path))
    fs, root = url_fs(path)
    try:
        return bool(fs.isfile(root))
    except OSError:
        return False


def is_dir(path: str) -> bool:
    if not is_url(path):
        return os.path.isdir(local_path(path))
    fs, root = url_fs(path)
    try:
        return bool(fs.isdir(root))
    except OSError:
        return False


