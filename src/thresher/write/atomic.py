"""Atomic file writes: write beside the target, fsync, then `os.replace`. A reader never sees a
half-written file under the final name."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


@contextmanager
def atomic_open(path: str | Path, mode: str = "wb", durable: bool = True) -> Iterator[IO[Any]]:
    """Open `path` for writing through a temp file renamed into place on success.

    `durable=False` skips the fsync: right for work files, which a process kill cannot leave half
    written (the rename is atomic) and only an OS crash could lose; output files are fsynced."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    f = open(tmp, mode, encoding="utf-8" if "b" not in mode else None)
    try:
        yield f
        f.flush()
        if durable:
            os.fsync(f.fileno())
        f.close()
        os.replace(tmp, path)
    except BaseException:
        f.close()
        tmp.unlink(missing_ok=True)
        raise


def dumps_json(data: Any) -> str:
    """A JSON file's text as `write_json_atomic` writes it (also used for files written to a URL)."""
    return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n"


def write_json_atomic(path: str | Path, data: Any, durable: bool = True) -> None:
    with atomic_open(path, "w", durable=durable) as f:
        f.write(dumps_json(data))


def dumps_line(record: dict[str, Any]) -> bytes:
    """One JSONL line. Fixed separators and key order make the bytes deterministic."""
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "surrogatepass")
