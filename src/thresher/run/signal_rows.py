"""What a scan task keeps for the signals table (`build --signals`, docs/signals.md): one work
record per document the chain judged, and the annotation keys it saw with their value types.

A record (`ROW_HEAD`, then its parts) holds the document's ordinal and five byte strings: `extra`,
a JSON object with the document stage's `drop` and `failures` (every failing rule of a rule set);
`measured` and `marks`, what the chain left for a replay (`core.stages.MEASURED`, `MARKS`: each
rule set's exact measurements, each stage's annotation mark), as the JSON the table stores (empty:
none); `signals`, the corpus stages' signals (`core.stages.RecordsSignals`: the exact key, the
MinHash signature and sample), raw (`pack_signals`); and `record`, the document's output line
(`Document.to_record()` as `dumps_line` writes it: for a survivor the very bytes of its scan-file
line, computed once). Binary and length-prefixed, so the signals task (`run/signals.py`) neither
decodes nor re-encodes what it copies into the table (hex signatures in JSON cost as much as the
rest of the table: issue 33).

The column file says, per annotation key, which JSON value types it took in this partition
(`bool`, `int`, `float`, `str`, `json`), and per corpus stage the settings its signals depend on
(`core.stages.ReusesSignals.recorded_with`), and per rule set what its decisions depend on besides
the measurements (`decided_with`, see `core.stages.Decider`): the driver unions the partitions' files into one schema
(`write.signals.table_layout`) so every part file has the same columns whatever its documents.
"""

from __future__ import annotations

import json
import os
import struct
from array import array
from collections.abc import Iterator, Sequence
from itertools import compress
from pathlib import Path
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.stages import MARKS, MEASURED, RecordsSignals, ReusesSignals
from thresher.run.workdir import WorkDir
from thresher.write.atomic import dumps_line

INT64 = 1 << 63
SHAPES_KEPT = 4096  # distinct annotation shapes remembered by a recorder (`SignalRecorder._note_types`)
# built once (`json.dumps` with arguments builds an encoder per call); strict, as `dumps_line` is
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


# ordinal, then the lengths of extra, measured, marks, signals and record
ROW_HEAD = struct.Struct("<qIIIII")
_SIGNAL_HEAD = struct.Struct("<BI")  # name length, value length


def pack_signals(signals: dict[str, bytes]) -> bytes:
    """Signals as name/value pairs, each its lengths then its bytes."""
    parts: list[bytes] = []
    for name, value in signals.items():
        raw = name.encode("utf-8")
        parts += (_SIGNAL_HEAD.pack(len(raw), len(value)), raw, value)
    return b"".join(parts)


def unpack_signals(data: bytes) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    i, size = 0, _SIGNAL_HEAD.size
    while i < len(data):
        n, m = _SIGNAL_HEAD.unpack_from(data, i)
        i += size
        found[data[i:i + n].decode("utf-8")] = data[i + n:i + n + m]
        i += n + m
    return found


def iter_rows(path: Path) -> Iterator[tuple[int, bytes, bytes, bytes, bytes, bytes]]:
    """(ordinal, extra, measured, marks, signals, record) of each record of a rows file, in order."""
    head = ROW_HEAD.size
    with open(path, "rb") as f:
        while True:
            fixed = f.read(head)
            if not fixed:
                return
            if len(fixed) != head:
                raise RuntimeError(f"{path}: truncated signals row")
            ordinal, *sizes = ROW_HEAD.unpack(fixed)
            body = f.read(sum(sizes))
            if len(body) != sum(sizes):
                raise RuntimeError(f"{path}: truncated signals row")
            parts: list[bytes] = []
            i = 0
            for n in sizes:
                parts.append(body[i:i + n])
                i += n
            yield ordinal, parts[0], parts[1], parts[2], parts[3], parts[4]


def extra_json(extra: Any) -> bytes:
    """`dumps_line(extra)` without its newline; the prebuilt encoder where the values are plain."""
    if not extra:
        return b"{}"
    try:
        return _encode(extra).encode("utf-8")
    except (ValueError, UnicodeEncodeError):  # NaN, infinities, lone surrogates: dumps_line repairs them
        return dumps_line(extra)[:-1]


def rows_path(work: WorkDir, p: int) -> Path:
    return work.path("signals", f"p{p:06d}.rows")


def columns_path(work: WorkDir, p: int) -> Path:
    return work.path("signals", f"p{p:06d}.columns.json")


def value_type(value: Any) -> str | None:
    """The type class of an annotation value (None: null, no type)."""
    cls = type(value)
    if cls is float:
        return "float"
    if cls is str:
        return "str"
    if cls is bool:
        return "bool"
    if cls is int:
        return "int" if -INT64 <= value < INT64 else "json"
    return None if value is None else "json"


def _fit_int64(values: Any, ints: tuple[bool, ...]) -> bool:
    """Whether the values at the positions `ints` marks are all within int64 (checked in C)."""
    if not any(ints):
        return True
    try:
        array("q", compress(values, ints))
    except OverflowError:
        return False
    return True


class SignalRecorder:
    """The scan side of the signals table for one partition (see the module doc)."""

    def __init__(self, work: WorkDir, p: int, corpus: Sequence[Any], chain: Sequence[Any] = ()) -> None:
        self.path = rows_path(work, p)
        self.columns = columns_path(work, p)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_suffix(".tmp")
        self._out = open(self._tmp, "wb")
        self.stages = [(i, stage) for i, stage in enumerate(corpus) if isinstance(stage, RecordsSignals)]
        # what each stage's signals depend on: a replay rebuilds a scan from them only under the same
        self.settings = {
            stage.name: stage.recorded_with for _, stage in self.stages if isinstance(stage, ReusesSignals)
        }
        # what each rule set's decisions depend on besides its measurements: a replay whose rule set
        # has the same reuses the recorded decision instead of deciding again (`thresher.replay_chain`)
        self.decided = {stage.name: key for stage in chain if (key := getattr(stage, "decided_with", None))}
        self.types: dict[str, set[str]] = {}
        # (keys, Python types) of the annotations seen, each with which of its values are ints
        self._shapes: dict[tuple[tuple[str, ...], tuple[type, ...]], tuple[bool, ...]] = {}
        self.signal_names: set[str] = set()

    def record(
        self, doc: Document, outcome: tuple[Drop, list[Drop]] | None, scans: Sequence[Any], line: bytes | None
    ) -> None:
        """One document the chain judged: dropped (`outcome`), or passed with its corpus `scans` and
        its scan-file `line`."""
        extra: dict[str, Any] = {}
        derived = doc.derived
        measured = derived.get(MEASURED)
        marks = derived.get(MARKS)
        signals = b""
        if outcome is not None:
            drop, failures = outcome
            extra["drop"] = drop.to_record()
            if failures:  # a rule set's (every failing rule, counted as `fail/`); other stages give none
                extra["failures"] = [f.to_record() for f in failures]
        elif scans:
            found: dict[str, bytes] = {}
            for i, stage in self.stages:
                scanned = scans[i]
                if scanned is not None:
                    found.update(stage.signals(scanned))
            if found:
                signals = pack_signals(found)
                self.signal_names.update(found)
        self._note_types(doc.annotations)
        if line is None:
            line = dumps_line(doc.to_record())
        extra_bytes = extra_json(extra)
        measured_bytes = extra_json(measured) if measured else b""
        marks_bytes = extra_json(marks) if marks else b""
        self._out.writelines((ROW_HEAD.pack(doc.ordinal, len(extra_bytes), len(measured_bytes), len(marks_bytes),
                                            len(signals), len(line)), extra_bytes, measured_bytes, marks_bytes,
                              signals, line))

    def _note_types(self, annotations: dict[str, Any]) -> None:
        """Add each annotation's value type to its key's (`value_type`). Most documents carry the
        same keys with the same Python types as some earlier one: such a row only has its integers
        checked against the int64 range (in C, by `array`), not each value classified again."""
        values = annotations.values()
        shape = (tuple(annotations), tuple(map(type, values)))
        ints = self._shapes.get(shape)
        if ints is None:
            self._classify(annotations)
            ints = tuple(cls is int for cls in shape[1])
            if _fit_int64(values, ints):  # a shape is remembered with the kinds of in-range integers
                if len(self._shapes) >= SHAPES_KEPT:
                    self._shapes.clear()
                self._shapes[shape] = ints
        elif not _fit_int64(values, ints):  # an integer beyond int64: its key's column becomes JSON
            self._classify(annotations)

    def _classify(self, annotations: dict[str, Any]) -> None:
        types = self.types
        for key, value in annotations.items():
            kind = value_type(value)
            if kind is not None:
                seen = types.get(key)
                if seen is None:
                    types[key] = {kind}
                elif kind not in seen:
                    seen.add(kind)

    def close(self) -> None:
        """Put the rows and the column file in place (the rows first: the column file says it is done)."""
        self._out.close()
        os.replace(self._tmp, self.path)
        layout = {
            "annotations": {key: sorted(kinds) for key, kinds in sorted(self.types.items())},
            "signals": sorted(self.signal_names),
            "settings": dict(sorted(self.settings.items())),
            "decided": dict(sorted(self.decided.items())),
        }
        tmp = self.columns.with_suffix(".tmp")
        tmp.write_text(json.dumps(layout, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.columns)
