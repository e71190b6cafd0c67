"""Atomic file writes: write beside the target, fsync, then `os.replace`. A reader never sees a
half-written file under the final name."""

from __future__ import annotations

import json
import math
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


def write_work_json(path: str | Path, data: Any) -> None:
    """A work file's JSON (a task's completion marker, a spill index): compact, so that the C encoder
    writes it (the standard library encodes `indent` output in Python: a scan task's marker, with its
    2,048 key-bucket sizes, 0.63 ms that way against 0.14 ms, `benchmarks/startup_costs.py`); not
    fsynced, like every work file."""
    with atomic_open(path, "w", durable=False) as f:
        f.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


# built once: `json.dumps` with arguments builds an encoder per call (~2 µs, on every scanned,
# written and decided line); the same settings, so the same bytes
_encode_line = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def dumps_line(record: dict[str, Any]) -> bytes:
    """One JSONL line of strict JSON in valid UTF-8. Fixed separators and key order make the bytes
    deterministic.

    The readers already replace lone surrogates and non-finite numbers and count it
    (`read.strict_json`); this is the guarantee for values from anywhere else (a Parquet float
    column, a stage's annotation): NaN and infinities are written as null, lone surrogates as U+FFFD."""
    try:
        text = _encode_line(record)
    except ValueError:
        text = _encode_line(_finite(record))
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # a pair of surrogates becomes its code point again, a lone one U+FFFD
        repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return (repaired + "\n").encode("utf-8")


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
