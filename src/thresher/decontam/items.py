"""Reading benchmark files: JSONL records with text fields, or plain text with one item per line.

A file whose first non-blank character is `{` is JSONL: each line a JSON object, its text the
configured fields that it has (each field is indexed separately, so an n-gram never spans two
fields), its id the `id` field or else its line number. Any other file is plain text: each
non-blank line an item whose id is its line number. Gzip files are read transparently.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from thresher.core.errors import InputError

#: Longest line (one benchmark item) read; a benchmark item is a problem or a passage, not a book.
MAX_LINE_CHARS = 4_000_000

GENERIC_STEMS = frozenset({"test", "train", "dev", "validation", "valid", "val", "data", "eval", "questions"})


@dataclass(frozen=True, slots=True)
class Item:
    id: str
    texts: tuple[str, ...]


def benchmark_name(path: str) -> str:
    """`gsm8k/test` for `.../gsm8k/test.jsonl` (a generic file name keeps its folder), `mmlu` for `mmlu.jsonl`."""
    base = os.path.basename(path)
    stem = base.split(".")[0] or base
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return f"{parent}/{stem}" if stem.lower() in GENERIC_STEMS and parent else stem


def _open(path: str) -> IO[str]:
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_items(path: str, fields: tuple[str, ...]) -> Iterator[Item]:
    """The items of one benchmark file; malformed JSONL lines and items without any of the fields are
    `InputError`s naming the file and line (a benchmark silently half-read would let its items through)."""
    try:
        f = _open(path)
    except OSError as exc:
        raise InputError(f"benchmark file {path}: {exc.strerror or exc}") from None
    with f:
        jsonl: bool | None = None
        # lines read with a bound: a huge single-line file must fail clearly, not fill memory
        for lineno, line in enumerate(iter(lambda: f.readline(MAX_LINE_CHARS + 1), ""), 1):
            if len(line) > MAX_LINE_CHARS:
                raise InputError(f"benchmark file {path}:{lineno}: line longer than {MAX_LINE_CHARS:,} characters "
                                 "(one item per line is expected)")
            stripped = line.strip()
            if not stripped:
                continue
            if jsonl is None:
                jsonl = stripped.startswith("{")
            if not jsonl:
                yield Item(str(lineno), (stripped,))
                continue
            try:
                record = json.loads(stripped)
            except ValueError as exc:
                raise InputError(f"benchmark file {path}:{lineno}: not a JSON object ({exc})") from None
            if not isinstance(record, dict):
                raise InputError(f"benchmark file {path}:{lineno}: not a JSON object")
            texts = tuple(str(record[k]) for k in fields if isinstance(record.get(k), (str, int, float)))
            if not texts:
                raise InputError(f"benchmark file {path}:{lineno}: none of the fields {', '.join(fields)}")
            item_id = record.get("id")
            yield Item(str(item_id) if item_id is not None else str(lineno), texts)


def read_texts(path: str, fields: tuple[str, ...]) -> Iterator[str]:
    """The texts of a reference file (common n-grams), in the same formats, fields joined."""
    for item in read_items(path, fields):
        yield "\n".join(item.texts)
