"""Reading one file a command was given: a path or `-` (standard input), gzip undone by its magic."""

from __future__ import annotations

import gzip
import sys

from thresher.core.errors import InputError


def read_bytes(path: str) -> bytes:
    """The file's bytes (standard input for `-`), decompressed when it is gzip; one-line errors."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{path}: not a readable gzip file: {exc}") from exc
    return data
