"""Labelled examples from JSONL files, and the seeded held-out split.

A labelled source is either `FILE:LABEL` (every record of FILE has that label) or a FILE whose
records carry their labels in a field (a string, or a list for multi-label data). Text comes from
any field (`text` by default). Files may be gzip- or zstd-compressed JSONL.
"""

from __future__ import annotations

import gzip
import io
import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from thresher.classify.training import TrainingError
from thresher.core.errors import InputError


@dataclass(frozen=True, slots=True)
class LabelledSource:
    path: str
    label: str | None  # None: labels come from the record's label field


def parse_label_spec(spec: str) -> LabelledSource:
    """`FILE:LABEL` (the last colon splits, so paths may contain colons)."""
    path, sep, label = spec.rpartition(":")
    if not sep or not path or not label:
        raise InputError(f"--label expects FILE:LABEL, got {spec!r}")
    return LabelledSource(path, label)


def _open_text(path: str) -> io.TextIOBase:
    from thresher.read.paths import open_input

    raw = open_input(path)
    head = raw.peek(4)[:4] if hasattr(raw, "peek") else b""
    stream: object = raw
    if head[:2] == b"\x1f\x8b":
        stream = gzip.GzipFile(fileobj=raw)
    elif head == b"\x28\xb5\x2f\xfd":
        try:
            import zstandard
        except ImportError:
            raise InputError(f"{path}: zstd-compressed; install thresher[zstd] to read it") from None
        stream = zstandard.ZstdDecompressor().stream_reader(raw)
    return io.TextIOWrapper(stream, encoding="utf-8", errors="replace")  # type: ignore[type-var]


def json_records(path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every non-blank line of a JSONL file (.gz/.zst by magic); a line that
    is not a JSON object is an error naming the file and line."""
    with _open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object")
            yield lineno, record


def read_examples(
    source: LabelledSource, text_field: str = "text", label_field: str = "label"
) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(text, labels) of every record; records without the text field are errors naming the line."""
    for lineno, record in json_records(source.path):
        text = record.get(text_field)
        if not isinstance(text, str):
            raise InputError(f"{source.path}:{lineno}: no string field {text_field!r} (set --text-field)")
        if source.label is not None:
            yield text, (source.label,)
            continue
        value = record.get(label_field)
        if isinstance(value, str):
            yield text, (value,)
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            yield text, tuple(value)
        else:
            raise InputError(f"{source.path}:{lineno}: no label in field {label_field!r} (a string or a list)")


def load_examples(
    sources: Sequence[LabelledSource], text_field: str = "text", label_field: str = "label"
) -> list[tuple[str, tuple[str, ...]]]:
    examples: list[tuple[str, tuple[str, ...]]] = []
    for source in sources:
        before = len(examples)
        examples.extend(read_examples(source, text_field, label_field))
        if len(examples) == before:
            raise TrainingError(f"{source.path}: no examples (an empty file)")
    return examples


def split_examples(
    examples: Sequence[tuple[str, tuple[str, ...]]], labels: Sequence[str], holdout: float, seed: int
) -> tuple[list[tuple[str, tuple[str, ...]]], list[tuple[str, tuple[str, ...]]]]:
    """A seeded split stratified by each example's first label: `holdout` of each label's examples
    are held out. Every label must keep examples on both sides."""
    if not 0.0 <= holdout < 1.0:
        raise TrainingError(f"--holdout must be in [0, 1), got {holdout}")
    if holdout == 0.0:
        return list(examples), []
    by_label: dict[str, list[int]] = {lab: [] for lab in labels}
    for i, (_, labs) in enumerate(examples):
        by_label.setdefault(labs[0], []).append(i)
    rng = random.Random(seed)
    held: set[int] = set()
    for label, members in by_label.items():
        rng.shuffle(members)
        n_held = round(len(members) * holdout)
        if n_held == 0 or n_held == len(members):
            raise TrainingError(
                f"label {label!r} has {len(members)} example(s): too few for a held-out split of {holdout} "
                "(each label needs examples on both sides); add examples or pass --holdout 0"
            )
        held.update(members[:n_held])
    train_part = [e for i, e in enumerate(examples) if i not in held]
    test_part = [e for i, e in enumerate(examples) if i in held]
    return train_part, test_part
