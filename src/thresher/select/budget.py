"""A token budget (`--target-tokens N --by COLUMN`): of the documents every other stage kept, keep
those ranked highest by COLUMN until N whitespace tokens, and drop the rest.

The order is COLUMN descending, then each further `--by` descending, then input order (ordinal);
a document without a value of a column ranks after every document with one. The kept documents
are the longest prefix of that order whose tokens fit in N: the first document that does not fit
ends the selection, so the result is a threshold (the values of the last document kept, in the
manifest's `budget` section) and lands below N by less than that next document's tokens.
Deterministic: the order is total, and the same on any engine or partitioning.

A phased corpus stage, last of them (after URL, line and semantic dedup): `budget_values` (one
task per partition: each kept document's rank values and tokens, in ordinal order), `budget_cut`
(one task: the cut point over every partition's values; memory ~40 bytes per kept document plus 16
per `--by`), `budget_drop` (one task per partition: the documents past the cut, dropped as
`select.budget/over_budget` with the document's first value and the threshold).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from thresher.clusters import Decision
from thresher.core.document import Drop
from thresher.core.phased import AfterWrite, KeptCorpus, PhaseDriver, StageOutcome, StagePhase
from thresher.core.serial import Serializable
from thresher.decided import iter_kept
from thresher.write.atomic import atomic_open, dumps_line

if TYPE_CHECKING:
    from thresher.config import RunConfig

NAME = "select.budget"
SECTION = "budget"
REASON = "over_budget"
BUILT_IN = ("words", "text_chars", "text_bytes")


def value_of(record: dict[str, Any], key: str) -> float | None:
    """A document's value of a ranking column (None: it has none)."""
    text = record.get("text") or ""
    if key == "words":
        return float(len(text.split()))
    if key == "text_chars":
        return float(len(text))
    if key == "text_bytes":
        return float(len(text.encode("utf-8", "surrogatepass")))
    annotations = record.get("annotations") or {}
    value = annotations.get(key)
    if value is None and "." not in key:  # a column name of the signals table or Parquet shards
        value = next((v for k, v in annotations.items() if k.replace(".", "_") == key), None)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return None
    return float(value)


def rank_key(values: Sequence[float | None]) -> tuple[float, ...]:
    """Ascending sort key for descending values, a missing value last."""
    key: list[float] = []
    for v in values:
        key += (0.0, -v) if v is not None else (1.0, 0.0)
    return tuple(key)


def _record(by: int) -> struct.Struct:
    return struct.Struct("<" + "?d" * by + "QQ")  # (present, value) per column, tokens, ordinal


def _values_path(work: Any, p: int) -> Any:
    return work.path(SECTION, f"values-p{p:06d}.bin")


def _read_values(work: Any, p: int, by: int) -> Iterator[tuple[list[float | None], int, int]]:
    layout = _record(by)
    with open(_values_path(work, p), "rb") as f:
        data = f.read()
    for fields in layout.iter_unpack(data):
        values = [fields[2 * i + 1] if fields[2 * i] else None for i in range(by)]
        yield values, fields[-2], fields[-1]


@dataclass(frozen=True, slots=True)
class Valued(Serializable):
    """A `budget_values` task's result: its partition's kept documents and their tokens."""

    documents: int
    tokens: int


@dataclass(frozen=True, slots=True)
class Cut(Serializable):
    """The `budget_cut` task's result: the documents and tokens kept, and the rank key (with the
    ordinal) and values of the last document kept (None: none kept)."""

    documents: int
    tokens: int
    last_key: tuple[float, ...] | None
    last_ordinal: int | None
    threshold: tuple[float | None, ...] | None


@dataclass(frozen=True, slots=True)
class Dropped(Serializable):
    dropped: int


def budget_values_task(ctx: Any, p: int, decided_by: Sequence[str], by: Sequence[str]) -> Valued:
    """Each document of partition p kept so far: its values of `by`, whitespace tokens, ordinal."""
    import json

    layout = _record(len(by))
    documents = tokens = 0
    path = _values_path(ctx.work, p)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path, "wb", durable=False) as out:
        for ordinal, line in iter_kept(*ctx.work.kept_sources(p, decided_by)):
            record = json.loads(line)
            n = len((record.get("text") or "").split())
            fields: list[Any] = []
            for key in by:
                v = value_of(record, key)
                fields += (v is not None, 0.0 if v is None else v)
            out.write(layout.pack(*fields, n, ordinal))
            documents += 1
            tokens += n
    return Valued(documents, tokens)


def budget_cut_task(ctx: Any, parts: Sequence[int], by: Sequence[str], target: int) -> Cut:
    """Where the budget cuts the order (see the module doc), over every partition's values."""
    ranked = []
    for p in parts:
        for values, n, ordinal in _read_values(ctx.work, p, len(by)):
            ranked.append((rank_key(values), ordinal, n, values))
    ranked.sort(key=lambda r: (r[0], r[1]))
    tokens = kept = 0
    for entry in ranked:
        if tokens + entry[2] > target:
            break
        tokens += entry[2]
        kept += 1
    if kept == 0:
        return Cut(0, 0, None, None, None)
    last = ranked[kept - 1]
    return Cut(kept, tokens, last[0], last[1], tuple(last[3]))


def budget_drop_task(ctx: Any, p: int, by: Sequence[str], last_key: Sequence[float] | None,
                     last_ordinal: int | None, threshold: Sequence[float | None] | None) -> Dropped:
    """Drop partition p's documents ranked after the cut, in ordinal order."""
    cut = None if last_key is None or last_ordinal is None else (tuple(last_key), last_ordinal)
    limit = threshold[0] if threshold else None
    dropped = 0
    with atomic_open(ctx.work.stage_decisions(SECTION, p), "wb", durable=False) as out:
        for values, _, ordinal in _read_values(ctx.work, p, len(by)):
            if cut is not None and (rank_key(values), ordinal) <= cut:
                continue
            drop = Drop(NAME, REASON, value=values[0], limit=limit, detail={"by": list(by), "cluster": ""})
            out.write(dumps_line(Decision(ordinal=ordinal, drop=drop).to_json()))
            dropped += 1
    return Dropped(dropped)


class Budget:
    """The phased stage (see the module doc)."""

    name: str = SECTION
    section: str = SECTION
    phases: Sequence[StagePhase] = (
        StagePhase("budget_values", budget_values_task, Valued, memory_mib=256),
        StagePhase("budget_cut", budget_cut_task, Cut, memory_mib=1024),
        StagePhase("budget_drop", budget_drop_task, Dropped, memory_mib=256),
    )

    def __init__(self, target_tokens: int, by: Sequence[str]) -> None:
        self.target = target_tokens
        self.by = tuple(by)

    def run(self, driver: PhaseDriver, corpus: KeptCorpus) -> StageOutcome:
        parts = list(corpus.partitions)
        stages = list(corpus.decided_by)
        by = list(self.by)
        valued: list[Valued] = driver.phase(
            "budget_values", [driver.call("budget_values", f"budget_values-{p:06d}", p, stages, by) for p in parts])
        (cut,) = driver.phase("budget_cut", [driver.call("budget_cut", "budget_cut", parts, by, self.target)])
        last_key = list(cut.last_key) if cut.last_key is not None else None
        threshold = list(cut.threshold) if cut.threshold is not None else None
        dropped: list[Dropped] = driver.phase(
            "budget_drop", [driver.call("budget_drop", f"budget_drop-{p:06d}", p, by, last_key, cut.last_ordinal,
                                        threshold) for p in parts])
        state = {
            "target_tokens": self.target,
            "by": by,
            "documents": cut.documents,
            "tokens": cut.tokens,
            "threshold": dict(zip(by, threshold or [None] * len(by), strict=True)),
            "candidates": sum(v.documents for v in valued),
            "candidate_tokens": sum(v.tokens for v in valued),
            "dropped": sum(d.dropped for d in dropped),
        }
        return StageOutcome({p: d.dropped for p, d in zip(parts, dropped, strict=True)}, state)

    def after_write(
        self, driver: PhaseDriver, corpus: KeptCorpus, shards: Sequence[Any], outcome: StageOutcome
    ) -> AfterWrite:
        return AfterWrite(section=dict(outcome.state))


def budget_stage(config: RunConfig) -> Budget | None:
    select = config.select
    return None if select.target_tokens is None else Budget(select.target_tokens, select.by)


def budget_line(manifest: dict[str, Any]) -> str | None:
    """What a budget kept and the threshold it implies, in one line (None: no budget)."""
    section = manifest.get(SECTION)
    if not section:
        return None
    threshold = ", ".join(f"{key} {value:g}" if value is not None else f"{key} (none)"
                          for key, value in section["threshold"].items())
    return (f"budget: kept {section['documents']} of {section['candidates']} documents, {section['tokens']} of "
            f"{section['target_tokens']} target tokens; threshold: {threshold or 'none (nothing fits)'}")
