"""The stage table, the per-document stage chain, and the streaming `Pipeline` of the library.

`STAGE_TABLE` lists every stage a build can run, in order, one row each (document stages, then the
corpus stages the group, verify and cluster phases decide, then the phased corpus stages of
`thresher.core.phased`). `DocumentChain` is what every scan task runs on each document: the document
rows in order, stopping at the first stage that drops the document. The build runs the corpus stages
through the phase machinery with bounded memory; `Pipeline.process` runs the key-based ones with an
in-memory index, first seen wins.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from thresher import stage_cache
from thresher.config import RunConfig
from thresher.core.document import Document, Drop, Malformed
from thresher.core.errors import ConfigError
from thresher.core.phased import PhasedStage
from thresher.core.stages import (
    MARKS,
    CorpusStage,
    CountsIntoStats,
    Evaluation,
    RuleSet,
    Stage,
    recording_runner,
    stage_runner,
)
from thresher.core.stats import Stats
from thresher.normalize.text import Normalize
from thresher.registry import Registry
from thresher.run.deadline import DeadlineExceeded, DocumentDeadline

Outcome = tuple[Drop, list[Drop]] | None  # what `DocumentChain.run` returns for one document

# Bounds on one batch of the scan loop (`run/scan.py`): documents, and characters of their text or
# HTML. They bound the memory a batch holds; they never change the output (see `BatchEvaluator`).
# 2048, not 512: a NumPy call has a fixed cost, and a batch of 512 tweets paid ~25% of the
# classifier's time in it (benchmarks/classify_eval.py); the characters bound memory either way.
BATCH_DOCS = 2048
BATCH_CHARS = 8 << 20


@runtime_checkable
class BatchEvaluator(Protocol):
    """A per-document stage that can also judge many documents in one call (a model that scores a
    batch with NumPy or ONNX Runtime at a fraction of the per-call cost).

    The contract that keeps output byte-identical whether or not batches are used, on any engine and
    worker count: `evaluate_batch(docs)[i]` equals `evaluate(docs[i])` for every i, whatever the
    other documents of the batch (a pure function of the one document). The chain still calls
    `evaluate` where it has no batch (the library `Pipeline`, `explain`, a batch that failed)."""

    name: str

    def evaluate(self, doc: Document) -> Evaluation: ...

    def evaluate_batch(self, docs: Sequence[Document]) -> list[Evaluation]: ...


# -- the stage table ------------------------------------------------------------------------------
# Every stage a build can run, in the order it runs, one row each: the scan runs the document
# stages in this order (stopping at the first drop), the group, verify and cluster phases the corpus
# stages, and after them the phased stages (`thresher.core.phased`). A stage's module is imported
# only when its row's builder finds it enabled. Adding a stage is one module and one row here.

DOCUMENT, CORPUS, PHASED = "document", "corpus", "phased"


@dataclass(frozen=True, slots=True)
class StageRow:
    name: str  # the stage (or family of stages) as drops, stats and the docs name it
    kind: str  # DOCUMENT, CORPUS or PHASED
    build: Callable[[RunConfig], list[Any]]  # the stages this row contributes for a config (may be none)
    why: str  # what it does, and why it sits where it does in the order


def _consent(config: RunConfig) -> list[Any]:
    if not config.consent.enabled:
        return []
    from thresher.consent.stage import build_consent_stages

    return list(build_consent_stages(config.consent))


def _extract(config: RunConfig) -> list[Any]:
    from thresher.extract.stage import Extract

    return [Extract(config.extract)]


def _normalize(config: RunConfig) -> list[Any]:
    return [Normalize(config.normalize)]


def _lang(config: RunConfig) -> list[Any]:
    from thresher.lang.stage import build_lang_stages

    return list(build_lang_stages(config.lang))


def _quality(config: RunConfig) -> list[Any]:
    from thresher.lang.routing import build_routed_quality_stages

    return list(build_routed_quality_stages(config.quality))


def _decontam(config: RunConfig) -> list[Any]:
    if not config.decontam.enabled:
        return []
    from thresher.decontam.stage import build_decontam_stages

    return list(build_decontam_stages(config.decontam))


def _classify(config: RunConfig) -> list[Any]:
    if not config.classify.models:
        return []
    from thresher.classify.stage import build_classifier_stages

    return list(build_classifier_stages(config.classify))


def _pii(config: RunConfig) -> list[Any]:
    if not config.pii.enabled:
        return []
    from thresher.pii.redact import build_pii_stages

    return list(build_pii_stages(config.pii))


def _exact(config: RunConfig) -> list[Any]:
    if config.dedup.exact.level is None:
        return []
    from thresher.dedup.exact import ExactDedup

    return [ExactDedup(config.dedup.exact.level)]


def _near(config: RunConfig) -> list[Any]:
    from thresher.dedup.near import build_near_stage

    near = build_near_stage(config.dedup.near)
    return [] if near is None else [near]


# Phased corpus stages by the name `dedup.stages` (`--corpus-stages`) lists them under: each entry a
# factory `(RunConfig) -> PhasedStage | None` (None: nothing to do for this config).
PHASED_STAGES: Registry[Callable[[RunConfig], PhasedStage | None]] = Registry(
    "corpus stage",
    "thresher.corpus_stages",
    {"url": "thresher.dedup.url_stage:url_stage", "lines": "thresher.dedup.line_stage:line_stage",
     "semantic": "thresher.embed.stage:semantic_stage"},
)


def _phased(config: RunConfig) -> list[Any]:
    stages = [PHASED_STAGES.get(name)(config) for name in config.dedup.stages]
    if config.select.target_tokens is not None:  # a token budget ranks what every other stage kept: last
        from thresher.select.budget import budget_stage

        stages.append(budget_stage(config))
    built = [s for s in stages if s is not None]
    for stage in built:
        if not isinstance(stage, PhasedStage):
            raise ConfigError(f"corpus stage {stage!r} does not implement thresher.core.phased.PhasedStage")
    return built


STAGE_TABLE: tuple[StageRow, ...] = (
    StageRow("consent", DOCUMENT, _consent,
             "opt-out signals (robots.txt, noai, TDMRep) recorded or enforced; first, it reads the HTML"),
    StageRow("extract", DOCUMENT, _extract, "HTML to the page's main text; every later stage reads text"),
    StageRow("normalize", DOCUMENT, _normalize, "Unicode, whitespace and line clean-up of the extracted text"),
    StageRow("lang", DOCUMENT, _lang, "language per document and per paragraph; routes the rules that follow"),
    StageRow("quality", DOCUMENT, _quality, "rule sets (Gopher, C4, FineWeb, URL lists), per language"),
    StageRow("decontam", DOCUMENT, _decontam,
             "benchmark n-gram overlap; before models and PII, on the text as written"),
    StageRow("classify", DOCUMENT, _classify, "model scores; after the rules, as a model costs more than a rule"),
    StageRow("pii", DOCUMENT, _pii, "redaction last: rules and models judge the text as written"),
    StageRow("dedup.exact", CORPUS, _exact, "exact duplicates by text digest; before near dedup, its edges win"),
    StageRow("dedup.near", CORPUS, _near, "near duplicates (MinHash/LSH or SimHash), verified pairs"),
    StageRow("phased", PHASED, _phased,
             "stages with phases of their own after clustering (URL dedup, line dedup, semantic dedup, plugins), "
             "in dedup.stages order"),
)


def build_document_stages(config: RunConfig) -> list[Stage]:
    return [stage for _, stage in document_stages_by_row(config)]


def document_stages_by_row(config: RunConfig, rows: Sequence[str] | None = None) -> list[tuple[str, Stage]]:
    """(row name, stage) of every document stage of a config, in order (of the rows named in `rows`
    when given)."""
    return [(row.name, stage) for row in STAGE_TABLE if row.kind == DOCUMENT and (rows is None or row.name in rows)
            for stage in row.build(config)]


def build_phased_stages(config: RunConfig) -> list[PhasedStage]:
    """The phased corpus stages of a config, in the order they run."""
    return [stage for row in STAGE_TABLE if row.kind == PHASED for stage in row.build(config)]


def fork_server_preloads(config: RunConfig) -> tuple[str, ...]:
    """Modules the pool's fork server imports before it forks the workers: read-only data that
    every worker of the build would otherwise load for itself, loaded once and shared (the pages
    are never written, so forked workers keep sharing them)."""
    # NumPy where installed (the fast extra): a scan task's histograms switch to it after ~2,000
    # documents (`run.histograms`), so on any real input every worker imports it, ~10 MiB each of
    # private pages; imported once here, the workers share them. A fork server skips a module that
    # is not installed.
    modules: list[str] = ["numpy"]
    if config.lang.enabled and config.lang.detector == "cascade" and config.lang.model is None:
        modules.append("thresher.lang.lingua_models")  # ~77 MiB of lingua models, else per worker
        # the open-set gate reads the n-gram model's tables (thresher.lang.open_set), in their flat form
        modules.append("thresher.lang.open_set_tables")
    elif config.lang.enabled and config.lang.detector == "wide":
        modules += ["thresher.lang.lingua_models", "thresher.lang.open_set_tables"]
        modules.append("thresher.lang.heliport_model")  # ~880 MiB of heliport's tables, else per worker
    elif config.lang.enabled and config.lang.detector == "ngram":
        modules.append("thresher.lang.ngram_tables")  # the n-gram model's ~10 MiB of score tables
    return tuple(modules)


def build_corpus_stages(config: RunConfig) -> list[CorpusStage]:
    """The corpus stages of a config, built once per process and dedup config
    (`thresher.stage_cache`, which also hands them to pool workers)."""
    return stage_cache.cached(config.dedup, lambda: _make_corpus_stages(config))


def _make_corpus_stages(config: RunConfig) -> list[CorpusStage]:
    return [stage for row in STAGE_TABLE if row.kind == CORPUS for stage in row.build(config)]


class DocumentChain:
    """Runs the per-document stages in order and counts what happens in `stats`."""

    def __init__(self, config: RunConfig, stats: Stats | None = None, deadline: DocumentDeadline | None = None) -> None:
        self.config = config
        by_row = self._stages_by_row(config)
        self.stages = [stage for _, stage in by_row]
        # with `output.signals` each stage also leaves what the signals table records (core.stages.MARKS)
        self.recording = config.output.signals
        self.runners = [
            (stage.name, recording_runner(row, stage) if self.recording else stage_runner(stage),
             isinstance(stage, RuleSet))
            for row, stage in by_row
        ]
        self.rows = [row for row, _ in by_row]
        # the stages that take batches, by position (None: per document only); see `disable_batches`
        self.batch_stages: list[BatchEvaluator | None] = [
            stage if isinstance(stage, BatchEvaluator) else None for stage in self.stages]
        self.stats = stats if stats is not None else Stats()
        self.deadline = deadline if deadline is not None else DocumentDeadline(config.exec.doc_deadline_s)
        for stage in self.stages:  # stages that count into the run's stats (languages seen, PII replaced)
            if isinstance(stage, CountsIntoStats):
                stage.bind_stats(self.stats)

    def _stages_by_row(self, config: RunConfig) -> list[tuple[str, Stage]]:
        return document_stages_by_row(config)

    def disable_batches(self) -> None:
        """Judge every document alone (a retried scan task does, so that a worker that died inside a
        batch call is attributed to the one document it died in)."""
        self.batch_stages = [None] * len(self.stages)

    @property
    def batched(self) -> bool:
        """Whether any stage takes batches (only then does the scan loop read ahead)."""
        return any(self.batch_stages)

    def run(self, doc: Document) -> Outcome:
        """None when the document passes every stage; else the attributed drop and all failures
        of the stage that dropped it. Counts are left to the caller (`seen`, `kept`, `dropped`).

        No document can stop or stall the caller: a stage that raises drops the document as
        `<stage>: error` (the exception in `detail`), and one that runs past the deadline
        (`exec.doc_deadline_s`, see `thresher.run.deadline`) as `<stage>: timeout`."""
        return self._run_span(doc, 0, len(self.runners))

    def run_batch(self, docs: Sequence[Document]) -> list[Outcome]:
        """`run` of each document, with every `BatchEvaluator` stage called once on the documents
        that reached it: the stages before it run document by document, the batch stage on the
        survivors, then the stages after it, and so on. The outcomes equal `run`'s, document by
        document (the stages are pure per document; a batch stage's contract says the same of its
        batch). A batch call that raises or runs past the deadline is not attributed to the whole
        batch: that stage is run again document by document, as `run` would have."""
        outcomes: list[Outcome] = [None] * len(docs)
        alive = list(range(len(docs)))
        start = 0
        for index, batch_stage in enumerate(self.batch_stages):
            if batch_stage is None:
                continue
            alive = self._run_span_each(docs, alive, outcomes, start, index)
            if alive:
                alive = self._run_batch_stage(index, batch_stage, docs, alive, outcomes)
            start = index + 1
        self._run_span_each(docs, alive, outcomes, start, len(self.runners))
        return outcomes

    def _run_span_each(
        self, docs: Sequence[Document], alive: list[int], outcomes: list[Outcome], lo: int, hi: int
    ) -> list[int]:
        if lo >= hi:
            return alive
        survivors = []
        for i in alive:
            outcome = self._run_span(docs[i], lo, hi)
            if outcome is None:
                survivors.append(i)
            else:
                outcomes[i] = outcome
        return survivors

    def _run_batch_stage(self, index: int, stage: BatchEvaluator, docs: Sequence[Document], alive: list[int],
                         outcomes: list[Outcome]) -> list[int]:
        batch = [docs[i] for i in alive]
        name = self.runners[index][0]
        deadline = self.deadline
        t0 = time.perf_counter()
        # the crumb names the batch's first document: a worker that dies inside the batch call is
        # retried with batches off (`scan_task`), so the retry attributes it to the right document
        deadline.start(batch[0].ordinal)
        try:
            deadline.entering(index)
            evaluations = stage.evaluate_batch(batch)
            if len(evaluations) != len(batch):
                raise ValueError(f"evaluate_batch returned {len(evaluations)} evaluations for {len(batch)} documents")
        except (Exception, DeadlineExceeded):  # noqa: BLE001 - judged again one document at a time, as `run` does
            deadline.stop()
            self.timings_add(name, time.perf_counter() - t0)
            self.stats.count("event/batch_fallback")
            return self._run_span_each(docs, alive, outcomes, index, index + 1)
        finally:
            deadline.stop()
        self.timings_add(name, time.perf_counter() - t0)
        is_rule_set = self.runners[index][2]
        survivors = []
        row = self.rows[index]
        for i, doc, evaluation in zip(alive, batch, evaluations, strict=True):
            doc.annotations.update(evaluation.annotations)
            if self.recording:
                doc.derived.setdefault(MARKS, []).append([row, name, len(doc.annotations)])
            if evaluation.drops:
                outcomes[i] = (evaluation.drops[0], evaluation.drops if is_rule_set else [])
            else:
                survivors.append(i)
        return survivors

    def timings_add(self, name: str, seconds: float) -> None:
        timings = self.stats.timings
        timings[name] = timings.get(name, 0.0) + seconds

    def _run_span(self, doc: Document, lo: int, hi: int) -> Outcome:
        """Stages `lo..hi-1` on one document (`run` is the whole chain)."""
        timings = self.stats.timings
        clock = time.perf_counter
        deadline = self.deadline
        name = ""
        deadline.start(doc.ordinal)
        try:
            for index in range(lo, hi):
                name, run, is_rule_set = self.runners[index]
                deadline.entering(index)
                t0 = clock()
                try:
                    drops = run(doc)
                except Exception as exc:  # noqa: BLE001 - one document's failure is its drop, not the run's
                    timings[name] = timings.get(name, 0.0) + clock() - t0
                    self.stats.count("event/stage_error")
                    doc.html = None
                    detail = {"error": f"{type(exc).__name__}: {exc}"[:500]}
                    return Drop(name, "error", detail=detail), []
                timings[name] = timings.get(name, 0.0) + clock() - t0
                if drops:
                    # only a rule set reports a failure histogram; other stages have one reason
                    return drops[0], (drops if is_rule_set else [])
        except DeadlineExceeded:
            self.stats.count("event/deadline_exceeded")
            doc.html = None
            return Drop(
                name or "extract",
                "timeout",
                value=round(max(deadline.elapsed(), deadline.seconds or 0.0), 3),
                limit=deadline.seconds,
            ), []
        finally:
            deadline.stop()
        return None


class StreamingIndex:
    """An in-memory duplicate index for one corpus stage: first seen wins. Memory grows with the
    number of kept documents; the build's phase machinery is the bounded alternative."""

    def __init__(self, stage: CorpusStage, max_members_per_key: int = 8) -> None:
        self.stage = stage
        self.max_members = max_members_per_key
        self.buckets: dict[bytes, list[tuple[str, bytes]]] = {}

    def check_and_add(self, doc: Document) -> Drop | None:
        scanned = self.stage.scan(doc)
        if scanned is None:
            return None
        checked: set[str] = set()
        for key in scanned.keys:
            for kept_id, payload in self.buckets.get(key, ()):
                if kept_id in checked:
                    continue
                checked.add(kept_id)
                sim = self.stage.similarity(payload, scanned.payload)
                if sim is not None:
                    return Drop(
                        self.stage.name,
                        self.stage.reason,
                        value=round(sim, 4),
                        limit=self.stage.threshold,
                        detail={"kept_id": kept_id},
                    )
        for key in scanned.keys:
            members = self.buckets.setdefault(key, [])
            if len(members) < self.max_members:
                members.append((doc.id, scanned.payload))
        return None


class Pipeline:
    """Streaming processing for library callers: documents in, kept documents out, as they pass.

    >>> pipeline = Pipeline(RunConfig())
    >>> for doc in pipeline.process(Document(id=..., url=u, html=h) for u, h in pages): ...
    >>> print(pipeline.stats.render())

    Dropped documents are reported to `on_drop(doc, drop)` when given. Accepts `Document`s,
    `Malformed` records (counted), or dicts with `url` and `html`/`text`.
    """

    def __init__(self, config: RunConfig | None = None, on_drop: Any = None) -> None:
        self.config = config or RunConfig()
        self.stats = Stats()
        self.chain = DocumentChain(self.config, self.stats)
        self.indexes = [StreamingIndex(s) for s in build_corpus_stages(self.config)]
        self.on_drop = on_drop
        self._records = 0  # dicts named so far: a dict's id is its place in what this pipeline was given

    def process(self, items: Iterable[Document | Malformed | dict[str, Any]]) -> Iterator[Document]:
        stats = self.stats
        for item in items:
            if isinstance(item, Malformed):
                stats.record_seen()
                stats.record_malformed(item)
                continue
            if isinstance(item, dict):
                self._records += 1
            doc = _as_document(item, self._records - 1)
            stats.record_seen()
            outcome = self.chain.run(doc)
            if outcome is None:
                for index in self.indexes:
                    drop = index.check_and_add(doc)
                    if drop is not None:
                        outcome = (drop, [])
                        break
            if outcome is not None:
                stats.record_drop(outcome[0], outcome[1])
                if self.on_drop is not None:
                    self.on_drop(doc, outcome[0])
                continue
            stats.record_kept()
            yield doc


def _as_document(item: Document | dict[str, Any], position: int) -> Document:
    """A dict is named by its position among the dicts the pipeline was given (`record_id`), so the
    same page given twice is two documents with two ids."""
    if isinstance(item, Document):
        return item
    from thresher.core.document import record_id

    record = dict(item)
    url = record.pop("url", None)
    html = record.pop("html", None)
    text = record.pop("text", None) or ""
    return Document(id=record_id({"row": position}), url=url, html=html, text=text, metadata=record)
