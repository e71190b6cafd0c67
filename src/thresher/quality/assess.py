"""Assess a corpus against the quality rules without dropping anything.

`assess` runs every quality stage on every document (transforms still rewrite the text, so later
rule sets see what they would see in a build), records every failing rule, the rule the document
would be dropped by, and the value of every metric. The `AssessReport` gives per-rule fail counts,
p1..p99 percentiles of each metric with its bounds, and example documents per failing rule.

Memory stays bounded: `sample=N` assesses a seeded reservoir sample of N documents (drawn before any
costly preparation such as extraction), and each metric keeps at most `max_values` values (a
seeded reservoir too, so percentiles of very large inputs are estimates; the report says so).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from thresher.core.document import Document, Drop, Malformed
from thresher.core.stages import Stage, stage_runner
from thresher.lang.routing import build_routed_quality_stages
from thresher.quality.config import QualityConfig
from thresher.quality.rules import QualityRuleSet

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)
EXAMPLE_CHARS = 300


def reservoir(items: Iterable[Any], k: int, seed: int) -> tuple[list[Any], int]:
    """A uniform sample of `k` items (in input order) and the number of items seen (Algorithm R)."""
    rng = random.Random(seed)
    chosen: list[tuple[int, Any]] = []
    n = 0
    for n, item in enumerate(items, 1):
        if len(chosen) < k:
            chosen.append((n, item))
        else:
            j = rng.randrange(n)
            if j < k:
                chosen[j] = (n, item)
    chosen.sort(key=lambda pair: pair[0])
    return [item for _, item in chosen], n


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_values:
        return float("nan")
    pos = (len(sorted_values) - 1) * p / 100
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


@dataclass
class _Values:
    """A seeded reservoir of one metric's values."""

    limit: int
    rng: random.Random
    values: list[float] = field(default_factory=list)
    count: int = 0

    def add(self, value: float) -> None:
        self.count += 1
        if len(self.values) < self.limit:
            self.values.append(value)
        else:
            j = self.rng.randrange(self.count)
            if j < self.limit:
                self.values[j] = value


@dataclass
class AssessReport:
    seen: int = 0
    assessed: int = 0
    malformed: int = 0
    would_keep: int = 0
    would_drop: int = 0
    sampled: bool = False
    drops: Counter[str] = field(default_factory=Counter)  # stage/reason the document is attributed to
    failures: Counter[str] = field(default_factory=Counter)  # every failing rule
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    stages: list[str] = field(default_factory=list)
    languages: Counter[str] = field(default_factory=Counter)  # lang.code of assessed documents

    def to_dict(self) -> dict[str, Any]:
        return {
            "seen": self.seen,
            "assessed": self.assessed,
            "sampled": self.sampled,
            "malformed": self.malformed,
            "would_keep": self.would_keep,
            "would_drop": self.would_drop,
            "stages": self.stages,
            "drops": dict(sorted(self.drops.items())),
            "rule_failures": dict(sorted(self.failures.items())),
            "languages": dict(sorted(self.languages.items(), key=lambda kv: (-kv[1], kv[0]))),
            "metrics": self.metrics,
            "examples": self.examples,
        }

    def render(self, verbose: bool = False) -> str:
        n = self.assessed or 1
        lines = [
            f"assessed {self.assessed} of {self.seen} documents" + (" (seeded sample)" if self.sampled else ""),
            f"would keep {self.would_keep} ({100 * self.would_keep / n:.1f}%), "
            f"would drop {self.would_drop} ({100 * self.would_drop / n:.1f}%)"
            + (f"; {self.malformed} malformed input records" if self.malformed else ""),
            f"stages: {' -> '.join(self.stages) or '(none)'}",
        ]
        if self.languages:
            top = sorted(self.languages.items(), key=lambda kv: (-kv[1], kv[0]))
            shown = ", ".join(f"{code} {count} ({100 * count / n:.1f}%)" for code, count in top[:12])
            lines.append(f"languages: {shown}" + (f", {len(top) - 12} more" if len(top) > 12 else ""))
        if self.drops:
            lines.append("")
            lines.append("dropped by (first failing rule):")
            width = max(map(len, self.drops))
            for key, count in sorted(self.drops.items(), key=lambda kv: (-kv[1], kv[0])):
                lines.append(f"  {key:<{width}}  {count:>8}  {100 * count / n:5.1f}%")
        if self.failures:
            lines.append("")
            lines.append("rule failures (a document can fail several):")
            width = max(map(len, self.failures))
            for key, count in sorted(self.failures.items(), key=lambda kv: (-kv[1], kv[0])):
                lines.append(f"  {key:<{width}}  {count:>8}  {100 * count / n:5.1f}%")
        if self.metrics:
            lines.append("")
            lines.append("metric percentiles (! = outside the bound; bound shown as min..max):")
            header = "  " + f"{'metric':<36} {'bound':>14} " + " ".join(f"{'p' + str(p):>8}" for p in PERCENTILES)
            lines.append(header)
            for name, m in self.metrics.items():
                lo, hi = m.get("min"), m.get("max")
                bound = f"{_fmt(lo) if lo is not None else ''}..{_fmt(hi) if hi is not None else ''}"
                cells = []
                for p in PERCENTILES:
                    v = m["percentiles"][f"p{p}"]
                    out = (lo is not None and v < lo) or (hi is not None and v > hi)
                    cells.append(f"{('!' if out else '') + _fmt(v):>8}")
                lines.append(f"  {name:<36} {bound:>14} " + " ".join(cells))
            if any(m["count"] > m["kept_values"] for m in self.metrics.values()):
                lines.append("  (percentiles estimated from a seeded sample of each metric's values)")
        if verbose and self.examples:
            lines.append("")
            lines.append("examples per failing rule:")
            for key, examples in sorted(self.examples.items()):
                lines.append(f"  {key}:")
                for ex in examples:
                    where = ex.get("url") or ex["id"]
                    lines.append(f"    - {where} (value {ex['value']}, limit {ex['limit']})")
                    snippet = ex["text"].replace("\n", " / ")
                    lines.append(f"      {snippet}")
        return "\n".join(lines)


def _fmt(v: float | int) -> str:
    if isinstance(v, int) or float(v).is_integer():
        return str(int(v))
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def _bounds(stages: Sequence[Stage]) -> dict[str, tuple[Any, Any]]:
    bounds: dict[str, tuple[Any, Any]] = {}
    for stage in stages:
        if isinstance(stage, QualityRuleSet):
            for rule in stage.rules:
                bounds[rule.metric] = (rule.min_value, rule.max_value)
    return bounds


def assess(
    documents: Iterable[Document | Malformed],
    config: QualityConfig,
    sample: int | None = None,
    seed: int = 0,
    *,
    prepare: Sequence[Stage] = (),
    examples: int = 3,
    max_values: int = 100_000,
    stages: Sequence[Stage] | None = None,
) -> AssessReport:
    """Run the quality stages of `config` on every document without dropping any.

    `prepare` stages (extraction, normalization) run first on each assessed document; a document
    they drop counts as `would_drop` under their reason and skips quality. With `sample`, a seeded
    reservoir sample of that many documents is assessed (drawn before `prepare` runs).
    """
    report = AssessReport()
    quality = list(stages) if stages is not None else build_routed_quality_stages(config)
    report.stages = [s.name for s in quality]
    bounds = _bounds(quality)
    items: Iterable[Document | Malformed]
    if sample is not None:
        chosen, report.seen = reservoir(documents, sample, seed)
        items, report.sampled = chosen, report.seen > len(chosen)
    else:
        items = _counting(documents, report)
    rng = random.Random(seed)
    values: dict[str, _Values] = {}
    # resolve each stage's method once, as the build's DocumentChain does
    prepare_runners = [stage_runner(stage) for stage in prepare]
    quality_runners = [stage_runner(stage) for stage in quality]
    for item in items:
        if isinstance(item, Malformed):
            report.malformed += 1
            continue
        if not isinstance(item, Document):
            continue
        report.assessed += 1
        attributed: Drop | None = None
        for run in prepare_runners:
            drops = run(item)
            if drops:
                attributed = drops[0]
                report.failures[f"{drops[0].stage}/{drops[0].reason}"] += 1
                _example(report, item, drops[0], examples)
                break
        language = item.annotations.get("lang.code")
        if isinstance(language, str):
            report.languages[language] += 1
        if attributed is None:
            for run in quality_runners:
                drops = run(item)
                for drop in drops:
                    key = f"{drop.stage}/{drop.reason}"
                    report.failures[key] += 1
                    _example(report, item, drop, examples)
                if drops and attributed is None:
                    attributed = drops[0]
            for key, value in item.annotations.items():
                if key.startswith("quality.") and isinstance(value, (int, float)) and not isinstance(value, bool):
                    metric = key[8:]
                    slot = values.get(metric)
                    if slot is None:
                        slot = values[metric] = _Values(max_values, random.Random(rng.random()))
                    slot.add(value)
        if attributed is None:
            report.would_keep += 1
        else:
            report.would_drop += 1
            report.drops[f"{attributed.stage}/{attributed.reason}"] += 1
    if sample is None:
        report.seen = max(report.seen, report.assessed + report.malformed)
    for metric in sorted(values, key=lambda m: (m not in bounds, m)):
        slot = values[metric]
        ordered = sorted(slot.values)
        lo, hi = bounds.get(metric, (None, None))
        report.metrics[metric] = {
            "count": slot.count,
            "kept_values": len(ordered),
            "min": lo,
            "max": hi,
            "lowest": ordered[0],
            "highest": ordered[-1],
            "percentiles": {f"p{p}": round(percentile(ordered, p), 4) for p in PERCENTILES},
        }
    return report


def _counting(documents: Iterable[Document | Malformed], report: AssessReport) -> Iterator[Document | Malformed]:
    for item in documents:
        report.seen += 1
        yield item


def _example(report: AssessReport, doc: Document, drop: Drop, limit: int) -> None:
    key = f"{drop.stage}/{drop.reason}"
    found = report.examples.setdefault(key, [])
    if len(found) < limit:
        found.append({
            "id": doc.id,
            "url": doc.url,
            "value": drop.value,
            "limit": drop.limit,
            "text": (doc.text or "")[:EXAMPLE_CHARS],
        })
