"""The pieces write tasks emit: each partition's share of one shard, as plain JSONL lines that an
output format's `assemble` turns into the shard file."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any


def iter_piece_lines(pieces: Sequence[Path]) -> Iterator[bytes]:
    for piece in pieces:
        with open(piece, "rb") as f:
            yield from f


def iter_piece_records(pieces: Sequence[Path]) -> Iterator[dict[str, Any]]:
    for line in iter_piece_lines(pieces):
        yield json.loads(line)
