"""What the report shows, gathered from a finished dataset in one bounded pass.

Sources: `manifest.json` (config, shards, inputs), `stats.json` (every counter the build kept), the
kept records of the shards (their annotations hold every metric the quality rules measured), and,
when the build wrote them (`--rejects DIR`), the dropped records with their `Drop`. Everything held
is bounded whatever the dataset size: metric values and examples are `BottomK` samples (uniform,
deterministic), hosts go through `HeavyHitters`, clusters through `TopK`. So the same dataset
always gives the same report.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from thresher.core.errors import DatasetError
from thresher.report.sample import BottomK, HeavyHitters, TopK


def _stage_order() -> tuple[str, ...]:
    """The order of the stages a document can be dropped by, from the stage table: the reader, the
    document and corpus rows by their first name part (`dedup.exact` -> `dedup`), then the encoder
    of the semantic stage (`embed`: a document it could not encode). A phased stage's drops come
    after, in the dataset config's `dedup.stages` order (see `stage_rank`)."""
    from thresher.pipeline import PHASED, STAGE_TABLE

    heads = ["read", *(row.name.split(".", 1)[0] for row in STAGE_TABLE if row.kind != PHASED), "embed"]
    return tuple(dict.fromkeys(heads))


STAGE_ORDER = _stage_order()

METRIC_SAMPLE = 20_000  # values per metric and side (kept / dropped): histograms are of these
EXAMPLES_PER_RULE = 5
KEPT_EXAMPLES = 8
LARGEST_CLUSTERS = 10
MEMBERS_PER_CLUSTER = 6
TEXT_PREVIEW = 1_500  # characters of a document's text shown in the report


@dataclass(frozen=True, slots=True)
class RuleBound:
    """One quality rule as the build applied it: the annotation it measured and its bounds."""

    stage: str
    metric: str  # annotation key, e.g. quality.word_count
    low_reason: str
    high_reason: str
    min_value: float | None
    max_value: float | None

    @property
    def bounds(self) -> list[float]:
        return [b for b in (self.min_value, self.max_value) if b is not None]


@dataclass
class Example:
    id: str
    url: str | None
    text: str
    drop: dict[str, Any] | None = None


@dataclass
class Cluster:
    keeper: Example
    duplicates: int
    members: list[Example] = field(default_factory=list)


@dataclass
class ReportData:
    dataset: str
    manifest: dict[str, Any]
    stats: dict[str, Any]
    rules: list[RuleBound]
    has_rejects: bool
    kept_docs: int = 0
    kept_text_bytes: int = 0
    dropped_docs_seen: int = 0  # dropped records read from the rejects (0 without them)
    dropped_text_bytes: int = 0
    metric_values: dict[str, tuple[list[float], list[float]]] = field(default_factory=dict)
    metric_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    length_words: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    languages: Counter[str] = field(default_factory=Counter)
    language_dropped: Counter[str] = field(default_factory=Counter)
    und_scripts: Counter[str] = field(default_factory=Counter)  # `lang.script` of the kept `und` documents
    cluster_sizes: Counter[int] = field(default_factory=Counter)
    clusters: list[Cluster] = field(default_factory=list)
    hosts_kept: list[tuple[str, int]] = field(default_factory=list)
    hosts_dropped: list[tuple[str, int]] = field(default_factory=list)
    binned: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)  # the build's histograms
    consent: dict[str, Any] = field(default_factory=dict)  # `report.consent` ledger of the kept records
    examples_source: str = ""  # "rejects", "samples" (the build's samples.jsonl.gz) or "" (none)
    examples: dict[str, list[Example]] = field(default_factory=dict)  # "stage/reason" -> dropped examples
    kept_examples: list[Example] = field(default_factory=list)

    def funnel(self) -> list[tuple[str, int]]:
        """Documents left after each stage, in pipeline order: seen → … → kept."""
        seen = int(self.stats.get("seen", 0))
        steps = [("seen", seen)]
        left = seen - int(self.stats.get("malformed", 0))
        steps.append(("after reading (malformed removed)", left))
        for stage, n in ordered_stage_drops(self.stats, phased_stages(self.manifest)):
            left -= n
            steps.append((f"after {stage}", left))
        return steps


def stage_rank(stage: str, phased: Sequence[str] = ()) -> tuple[int, str]:
    """Where `stage`'s drops go in the funnel: by the stage table, a phased stage of `phased` (the
    dataset's `dedup.stages`) after every table row in its order, any other (a plugin's
    per-document stage) just before dedup, by name."""
    head = stage.split(".", 1)[0]
    if head in STAGE_ORDER:
        return (STAGE_ORDER.index(head) * 2, stage)
    if stage in phased:
        return ((len(STAGE_ORDER) + list(phased).index(stage)) * 2, stage)
    return (STAGE_ORDER.index("dedup") * 2 - 1, stage)


def ordered_stage_drops(stats: dict[str, Any], phased: Sequence[str] = ()) -> list[tuple[str, int]]:
    drops = stats.get("drops", {}) or {}
    return [(stage, sum(reasons.values()))
            for stage, reasons in sorted(drops.items(), key=lambda kv: stage_rank(kv[0], phased))]


def phased_stages(manifest: dict[str, Any]) -> list[str]:
    """The phased corpus stages a dataset's build ran (its config's `dedup.stages`)."""
    stages = ((manifest.get("config") or {}).get("dedup") or {}).get("stages") or []
    return [s for s in stages if isinstance(s, str)]


def rule_bounds(config: dict[str, Any]) -> list[RuleBound]:
    """The quality rules of the dataset's recorded config, rebuilt with thresher's own code (so the
    report marks exactly the bounds the build used). Empty if the config is not one this version
    can read (a dataset from a newer thresher)."""
    from thresher.config import RunConfig
    from thresher.core.errors import ConfigError
    from thresher.quality.stages import build_quality_stages

    try:
        run_config = RunConfig.from_dict(config)
    except (ConfigError, TypeError, ValueError):
        return []
    out: list[RuleBound] = []
    for stage in build_quality_stages(run_config.quality):
        for rule in getattr(stage, "rules", ()):
            lo = rule.min_value
            out.append(
                RuleBound(
                    stage=stage.name,
                    metric=rule.key,
                    low_reason=rule.too_low,
                    high_reason=rule.too_high,
                    min_value=float(lo) if lo is not None else None,
                    max_value=float(rule.max_value) if rule.max_value is not None else None,
                )
            )
    return out


def _host(url: str | None) -> str:
    if not url:
        return "(no url)"
    try:
        return urlsplit(url).hostname or "(no host)"
    except ValueError:
        return "(bad url)"


def _example(record: dict[str, Any]) -> Example:
    text = record.get("text") or ""
    return Example(id=str(record.get("id")), url=record.get("url"), text=text[:TEXT_PREVIEW], drop=record.get("drop"))


SAMPLES = "samples.jsonl.gz"


def read_samples(path: Path) -> dict[str, list[Example]]:
    """The build's per-rule samples of dropped documents (`thresher.run.observe`); a damaged file
    is a `DatasetError` naming it."""
    out: dict[str, list[Example]] = {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            for line in f:
                item = json.loads(line)
                ex = Example(
                    id=str(item["id"]),
                    url=item.get("url"),
                    text=(item.get("text") or "")[:TEXT_PREVIEW],
                    drop=item.get("drop"),
                )
                out.setdefault(str(item["rule"]), []).append(ex)
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DatasetError(f"{path}: damaged ({type(exc).__name__}: {exc}); run thresher verify") from exc
    return dict(sorted(out.items()))


def iter_rejects(rejects: Path) -> Iterator[dict[str, Any]]:
    path = rejects / "rejects.jsonl.gz"
    if not path.is_file():
        return
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _sample_metrics(
    metrics: list[str],
    annotations: dict[str, Any],
    doc_id: str,
    values: dict[str, BottomK[float]],
    counts: Counter[str],
) -> None:
    for m in metrics:
        v = annotations.get(m)
        if isinstance(v, int | float):
            values[m].add(doc_id, float(v))
            counts[m] += 1


def collect(dataset: str | Path, rejects: str | Path | None = None) -> ReportData:
    from thresher.report.dataset import open_dataset
    from thresher.write.manifest import read_shards

    root = Path(dataset)
    opened = open_dataset(root)  # every defect of the manifest or stats.json: one located line
    manifest, stats = opened.manifest, opened.stats()
    rejects_dir = Path(rejects) if rejects is not None else None
    has_rejects = rejects_dir is not None and (rejects_dir / "rejects.jsonl.gz").is_file()
    rules = rule_bounds(manifest.get("config", {}))
    # a build that recorded binned histograms (every document, in stats.json) needs no value
    # samples; older datasets get histograms of sampled annotation values instead
    metrics = [] if stats.get("histograms") else sorted({r.metric for r in rules})
    data = ReportData(str(dataset), manifest, stats, rules, has_rejects)

    kept_values = {m: BottomK[float](METRIC_SAMPLE) for m in metrics}
    dropped_values = {m: BottomK[float](METRIC_SAMPLE) for m in metrics}
    kept_count = Counter[str]()
    dropped_count = Counter[str]()
    words_kept = BottomK[float](METRIC_SAMPLE)
    words_dropped = BottomK[float](METRIC_SAMPLE)
    hosts_kept = HeavyHitters()
    hosts_dropped = HeavyHitters()
    kept_examples = BottomK[Example](KEPT_EXAMPLES)
    largest = TopK[tuple[int, Example]](LARGEST_CLUSTERS)

    from thresher.report.consent import consent_ledger

    ledger = consent_ledger(())
    for record in read_shards(root):
        ledger.add(record)
        doc_id = str(record.get("id"))
        annotations = record.get("annotations") or {}
        text = record.get("text") or ""
        data.kept_docs += 1
        data.kept_text_bytes += len(text.encode("utf-8", "surrogatepass"))
        _sample_metrics(metrics, annotations, doc_id, kept_values, kept_count)
        words_kept.add(doc_id, float(annotations.get("quality.word_count", len(text.split()))))
        code = annotations.get("lang.code")
        if isinstance(code, str):
            data.languages[code] += 1
            if code == "und":
                data.und_scripts[str(annotations.get("lang.script", "Zyyy"))] += 1
        dup = annotations.get("dedup.duplicates")
        if isinstance(dup, int) and dup > 0:
            data.cluster_sizes[dup + 1] += 1
            largest.add(float(dup), doc_id, (dup, _example(record)))
        hosts_kept.add(_host(record.get("url")))
        kept_examples.add(doc_id, _example(record))

    top_clusters = [Cluster(ex, dup) for dup, ex in largest.items()]
    member_samples = {c.keeper.id: BottomK[Example](MEMBERS_PER_CLUSTER) for c in top_clusters}
    examples: dict[str, BottomK[Example]] = {}

    if has_rejects:
        assert rejects_dir is not None
        for record in iter_rejects(rejects_dir):
            doc_id = str(record.get("id"))
            drop = record.get("drop") or {}
            annotations = record.get("annotations") or {}
            text = record.get("text") or ""
            data.dropped_docs_seen += 1
            data.dropped_text_bytes += len(text.encode("utf-8", "surrogatepass"))
            _sample_metrics(metrics, annotations, doc_id, dropped_values, dropped_count)
            if "quality.word_count" in annotations:
                words_dropped.add(doc_id, float(annotations["quality.word_count"]))
            code = annotations.get("lang.code")
            if isinstance(code, str):
                data.language_dropped[code] += 1
            hosts_dropped.add(_host(record.get("url")))
            rule = f"{drop.get('stage')}/{drop.get('reason')}"
            examples.setdefault(rule, BottomK[Example](EXAMPLES_PER_RULE)).add(doc_id, _example(record))
            kept_id = (drop.get("detail") or {}).get("kept_id")
            if kept_id in member_samples:
                member_samples[kept_id].add(doc_id, _example(record))

    for m in metrics:
        data.metric_values[m] = (kept_values[m].items(), dropped_values[m].items())
        data.metric_counts[m] = (kept_count[m], dropped_count[m])
    data.length_words = (words_kept.items(), words_dropped.items())
    for cluster in top_clusters:
        cluster.members = member_samples[cluster.keeper.id].items()
        data.clusters.append(cluster)
    data.hosts_kept = hosts_kept.most_common(15)
    data.hosts_dropped = hosts_dropped.most_common(15)
    data.examples = {rule: sample.items() for rule, sample in sorted(examples.items())}
    data.binned = dict(stats.get("histograms") or {})
    if data.examples:
        data.examples_source = "rejects"
    elif (root / SAMPLES).is_file():
        data.examples = read_samples(root / SAMPLES)
        data.examples_source = "samples"
    data.kept_examples = kept_examples.items()
    data.consent = ledger.to_dict() if ledger.by_signal else {}
    return data

