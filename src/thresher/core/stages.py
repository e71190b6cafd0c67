"""Stage roles as small protocols, and the one adapter that runs any of them on a document.

- A **Transform** rewrites `doc.text` (extraction, normalization, line cleanup); it may return a
  `Drop` (e.g. extraction produced nothing).
- An **Annotator** writes only its own annotation keys, which it declares in `annotates`
  (`("lang.code", "lang.score")`), and never drops or rewrites: `annotate(doc) -> None`.
- A **Filter** decides, never mutates: `check(doc) -> Drop | None`.
- A **RuleSet** is a filter made of rules that all run even after one fails, so the failure
  histogram is complete: `check_all(doc) -> list[Drop]`. One that also measures (the quality rule
  sets) is an **Evaluator**: `evaluate(doc) -> Evaluation` returns the annotations it measured and
  its drops in one pure pass, and the runner writes the annotations (deciding never mutates).
- A **CorpusStage** needs the whole corpus (dedup); it contributes keys and a payload in the scan
  phase, its candidate pairs are formed in the group phase and verified in the verify phase, and the
  cluster phase decides (`thresher.clusters`; the phases are in `thresher.run.task`). A corpus
  stage that can decode a payload once for many comparisons also implements `PreparedComparison`.

No base classes: a stage is any object with a `name` and one of these methods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from thresher.core.document import Document, Drop
from thresher.core.stats import Stats


@runtime_checkable
class Transform(Protocol):
    name: str

    def transform(self, doc: Document) -> Drop | None: ...


@runtime_checkable
class Annotator(Protocol):
    name: str
    annotates: tuple[str, ...]  # every annotation key it may write, e.g. ("lang.code", "lang.score")

    def annotate(self, doc: Document) -> None: ...


@runtime_checkable
class CountsIntoStats(Protocol):
    """Optional on any stage: counts of its own (languages seen, replacements made) go into the
    run's `Stats`. The chain hands each such stage its stats once, before the first document."""

    def bind_stats(self, stats: Stats) -> None: ...


@runtime_checkable
class Filter(Protocol):
    name: str

    def check(self, doc: Document) -> Drop | None: ...


@runtime_checkable
class RuleSet(Protocol):
    name: str

    def check_all(self, doc: Document) -> list[Drop]: ...


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What an evaluator measured on one document (annotation key -> value, in the order measured)
    and the drops it decided, in rule order."""

    annotations: dict[str, Any]
    drops: list[Drop]


@runtime_checkable
class Evaluator(Protocol):
    name: str

    def evaluate(self, doc: Document) -> Evaluation: ...

    def check_all(self, doc: Document) -> list[Drop]: ...


# What a chain that records for the signals table (`build --signals`) leaves in `Document.derived`:
# each `Decider` stage's `measure` by stage name, and after each stage it ran, `[row, stage, n]`
# with n the number of annotation keys the document then had (the annotations are ordered, so a
# stage's keys are the slice between its mark and the one before)
MEASURED = "signals.measured"
MARKS = "signals.marks"
# what the signals reader (`thresher replay`) hands the replayed chain beside a row's Document: the
# row's chain drop and failures (as records), MEASURED and MARKS, as the first build left them
RECORDED = "signals.recorded"
# and, for a row that passed the first build's chain, what its corpus stages recorded:
# `(settings, values)`, the table's `{stage name: ReusesSignals.recorded_with}` and the row's
# `{signal name: bytes}` (`thresher.read.signals`; `run.scan.corpus_scans` reads it)
RECORDED_SIGNALS = "signals.recorded_corpus"
# and the sizes the table holds of the row's text, `(text, UTF-8 bytes, whitespace tokens)`: the
# build's observer counts a survivor's text from them while its text is that very string (a replay
# revives most texts unchanged, and `str.split` of a long non-ASCII text costs ~50 µs)
RECORDED_TEXT_SIZES = "signals.text_sizes"


@runtime_checkable
class Decider(Protocol):
    """Optional on an evaluator: its measuring and deciding as two halves. `measure(doc)` returns
    the exact value of everything its decisions read (every rule's metric, bound on or off; JSON
    values), `decide(doc, measured)` the `Evaluation` that `evaluate(doc)` gives, from those values
    alone. `build --signals` records what `measure` returns; `thresher replay` decides again from it
    under other bounds, without the text (docs/signals.md)."""

    name: str

    def measure(self, doc: Document) -> dict[str, Any]: ...

    def decide(self, doc: Document, measured: Mapping[str, Any]) -> Evaluation: ...


@dataclass(frozen=True, slots=True)
class CorpusKeys:
    """What a corpus stage extracts from one document in the scan phase.

    `keys` are 16-byte grouping keys (an exact-text digest, MinHash band keys, SimHash blocks);
    documents sharing a key are duplicate candidates. `payload` is what verification needs (a
    signature), stored once per document and read back only for documents that collide.
    """

    keys: list[bytes]
    payload: bytes = b""


@runtime_checkable
class CorpusStage(Protocol):
    """A stage decided over the whole corpus (dedup), run by the phase machinery:

    scan: `scan(doc)` per document (None: the document does not take part, e.g. no shingles);
    group: per key seen more than once, `candidate_pairs(n)` over the bucket's members (sorted by
    ordinal; a hot bucket must yield O(n) pairs, not O(n^2)), each verified by `similarity`;
    cluster: union-find over verified edges, keeper chosen by the dedup keep policy.
    """

    name: str
    reason: str  # the Drop reason of a removed duplicate, e.g. "exact_duplicate"
    threshold: float | None  # the similarity bound a Drop reports as its limit (None: exact)

    def scan(self, doc: Document) -> CorpusKeys | None: ...

    def candidate_pairs(self, n: int) -> Iterable[tuple[int, int]]: ...

    def similarity(self, a: bytes, b: bytes) -> float | None:
        """Verified similarity of two payloads, or None when they are not duplicates. Identical
        payloads must mean identical documents for the stage (`similarity(a, a) == 1.0`): the group
        phase links them without asking."""
        ...


@runtime_checkable
class RecordsSignals(Protocol):
    """Optional on a corpus stage: what the signals table (`build --signals`, docs/signals.md) keeps
    of a document's scan, by signal name (`dedup.exact.key`, `dedup.near.minhash`): the bytes a
    later replay needs to decide again without recomputing them."""

    def signals(self, scanned: CorpusKeys) -> dict[str, bytes]: ...


@runtime_checkable
class ReusesSignals(Protocol):
    """Optional beside `RecordsSignals`: a corpus stage whose scan a replay can rebuild from the
    recorded signals instead of the text. `recorded_with` names every setting the recorded bytes
    depend on (the table keeps it per stage); where the replay's stage has the same, the text is
    the one the first build scanned (`thresher.replay_chain`) and `from_signals(values)` must
    equal `scan(doc)` (None where the scan gave None, i.e. no signal was recorded)."""

    name: str
    recorded_with: str

    def from_signals(self, values: Mapping[str, bytes]) -> CorpusKeys | None: ...


@runtime_checkable
class PreparedComparison(Protocol):
    """A corpus stage's verification split in two: `prepare(payload)` decodes a payload once and
    `compare(x, y)` compares two prepared payloads, with `compare(prepare(a), prepare(b)) ==
    similarity(a, b)`. The verify phase then decodes each member once instead of once per pair."""

    def prepare(self, payload: bytes) -> Any: ...

    def compare(self, a: Any, b: Any) -> float | None: ...


def _unprepared(payload: bytes) -> bytes:
    return payload


def comparison_of(stage: CorpusStage) -> tuple[Callable[[bytes], Any], Callable[[Any, Any], float | None]]:
    """(prepare, compare) for verifying a corpus stage's pairs: its own when it declares
    `PreparedComparison`, else the payload as is and `similarity`."""
    if isinstance(stage, PreparedComparison):
        return stage.prepare, stage.compare
    return _unprepared, stage.similarity


Stage = Transform | Annotator | Filter | RuleSet


StageRunner = Callable[[Document], list[Drop]]


def stage_runner(stage: Stage) -> StageRunner:
    """The function that runs one per-document stage and returns its drops (empty: it passed).

    Resolved once per stage (protocol checks are slow on the hot path). For a rule set every failing
    rule is returned; the first is the one the document is attributed to.
    """
    if isinstance(stage, Evaluator):
        evaluate = stage.evaluate

        def run_evaluator(doc: Document) -> list[Drop]:
            evaluation = evaluate(doc)
            doc.annotations.update(evaluation.annotations)
            return evaluation.drops

        return run_evaluator
    if isinstance(stage, RuleSet):
        return stage.check_all
    if isinstance(stage, Filter):
        check = stage.check
        return lambda doc: [d] if (d := check(doc)) is not None else []
    if isinstance(stage, Transform):
        transform = stage.transform
        return lambda doc: [d] if (d := transform(doc)) is not None else []
    if isinstance(stage, Annotator):
        annotate = stage.annotate

        def run_annotator(doc: Document) -> list[Drop]:
            annotate(doc)
            return []

        return run_annotator
    raise TypeError(f"{stage!r} is not a thresher stage (needs transform, annotate, check or check_all)")


def apply_stage(stage: Stage, doc: Document) -> list[Drop]:
    """Run one per-document stage on one document (see `stage_runner`)."""
    return stage_runner(stage)(doc)


def undeclared_annotations(annotator: Annotator, doc: Document) -> list[str]:
    """Run `annotator` on `doc` and return the keys it wrote or changed that it does not declare
    (empty: it kept its contract). For an annotator's own tests."""
    before = dict(doc.annotations)
    annotator.annotate(doc)
    declared = set(annotator.annotates)
    return sorted(k for k, v in doc.annotations.items() if k not in declared and (k not in before or before[k] != v))


def recording_runner(row: str, stage: Stage) -> Callable[[Document], list[Drop]]:
    """`stage_runner(stage)` that also leaves what the signals table records (`build --signals`):
    a `Decider`'s exact measurements (decided from them, which gives `evaluate`'s result), and the
    stage's mark (`core.stages.MARKS`)."""
    name = stage.name
    run: Callable[[Document], list[Drop]]
    if isinstance(stage, Decider):
        measure, decide = stage.measure, stage.decide

        def run_decider(doc: Document) -> list[Drop]:
            measured = measure(doc)
            doc.derived.setdefault(MEASURED, {})[name] = measured
            evaluation = decide(doc, measured)
            doc.annotations.update(evaluation.annotations)
            return evaluation.drops

        run = run_decider
    else:
        run = stage_runner(stage)

    def recorded(doc: Document) -> list[Drop]:
        drops = run(doc)
        doc.derived.setdefault(MARKS, []).append([row, name, len(doc.annotations)])
        return drops

    return recorded
