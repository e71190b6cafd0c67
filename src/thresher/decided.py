"""Streams over a partition's work files in ordinal order: the decisions every corpus stage wrote for
it, merged (`iter_decisions`), and the documents the scan kept that those decisions keep, with any
edit applied (`iter_kept`): what a phased corpus stage decides over.

Pure functions of paths, so a stage package reads them without the run layer: the work dir names
the files (`thresher.run.workdir.WorkDir.kept_sources`).
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

from thresher.clusters import Decision


def read_decisions(path: Path) -> Iterator[Decision]:
    """One decisions file's decisions (none when the stage wrote no file)."""
    if path.exists():
        with open(path, "rb") as f:
            for line in f:
                yield Decision.from_json(json.loads(line))


def iter_decisions(paths: Sequence[Path]) -> Iterator[Decision]:
    """The decisions of the files `paths` (each in ordinal order; earlier stages first), one per
    document in ordinal order: a later file's decision applies over an earlier one's
    (`Decision.then`)."""
    streams = [read_decisions(path) for path in paths]
    merged = heapq.merge(*(((d.ordinal, i, d) for d in s) for i, s in enumerate(streams)))
    current: Decision | None = None
    for _, _, decision in merged:
        if current is not None and decision.ordinal == current.ordinal:
            current = current.then(decision)
            continue
        if current is not None:
            yield current
        current = decision
    if current is not None:
        yield current


def iter_scan_lines(docs: Path) -> Iterator[tuple[int, bytes]]:
    """(ordinal, JSON line) of every document the scan kept: its file has one `ordinal TAB json`
    line each, so a reader can pick documents without decoding them."""
    with open(docs, "rb") as f:
        for line in f:
            tab = line.index(b"\t")
            yield int(line[:tab]), line[tab + 1 :]


def iter_kept(docs: Path, decisions: Sequence[Path]) -> Iterator[tuple[int, bytes]]:
    """(ordinal, JSON line) of every document of the scan file `docs` that no decision of the files
    `decisions` drops, in ordinal order; an edited document's line carries its edit (text and
    annotations)."""
    stream = iter_decisions(decisions)
    pending = next(stream, None)
    for ordinal, line in iter_scan_lines(docs):
        while pending is not None and pending.ordinal < ordinal:
            pending = next(stream, None)
        if pending is not None and pending.ordinal == ordinal:
            decision, pending = pending, next(stream, None)
            if not decision.kept:
                continue
            if decision.edit is not None:
                record = json.loads(line)
                apply_edit(record, decision.edit)
                line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        yield ordinal, line


def apply_edit(record: dict[str, object], edit: dict[str, object]) -> None:
    """A document record as an edit left it: the new text, the edit's annotations merged in."""
    record["text"] = edit["text"]
    annotations = edit.get("annotations")
    if isinstance(annotations, dict) and annotations:
        current = record.get("annotations")
        merged = dict(current) if isinstance(current, dict) else {}
        merged.update(annotations)
        record["annotations"] = merged
