"""Which benchmark items were found where: read back from a build's rejects (mode `drop`: each
dropped document's `Drop.detail` names its benchmark item) or from a dataset's records (mode `cut`:
the `decontam.items` annotation)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.core.errors import InputError

REJECTS_FILE = "rejects.jsonl.gz"
EXAMPLES_PER_ITEM = 3


@dataclass
class ItemFindings:
    benchmark: str
    item: str
    documents: int = 0
    max_shared_ngrams: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)  # {"id", "url", "ngram"}

    def to_dict(self) -> dict[str, Any]:
        return {"benchmark": self.benchmark, "item": self.item, "documents": self.documents,
                "max_shared_ngrams": self.max_shared_ngrams, "examples": self.examples}


@dataclass
class ContaminationReport:
    source: str
    documents: int = 0  # contaminated documents seen
    items: dict[tuple[str, str], ItemFindings] = field(default_factory=dict)

    def add(self, benchmark: str, item: str, doc: dict[str, Any], shared: int, ngram: str | None) -> None:
        found = self.items.get((benchmark, item))
        if found is None:
            found = self.items[(benchmark, item)] = ItemFindings(benchmark, item)
        found.documents += 1
        found.max_shared_ngrams = max(found.max_shared_ngrams, shared)
        if len(found.examples) < EXAMPLES_PER_ITEM:
            example = {"id": doc.get("id"), "url": doc.get("url")}
            if ngram:
                example["ngram"] = ngram
            found.examples.append(example)

    def rows(self) -> list[ItemFindings]:
        """By benchmark, then item id (numerically when ids are numbers)."""
        return sorted(self.items.values(), key=lambda f: (f.benchmark, _id_key(f.item)))

    def by_benchmark(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for f in self.items.values():
            entry = out.setdefault(f.benchmark, {"items": 0, "documents": 0})
            entry["items"] += 1
            entry["documents"] += f.documents
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "contaminated_documents": self.documents,
                "benchmarks": self.by_benchmark(), "items": [f.to_dict() for f in self.rows()]}

    def render(self) -> str:
        if not self.items:
            return f"no benchmark overlap recorded in {self.source}"
        lines = [f"{self.documents} contaminated document(s) in {self.source}"]
        for name, entry in self.by_benchmark().items():
            lines.append(f"  {name}: {entry['items']} item(s) in {entry['documents']} document(s)")
        width = max(len(f"{f.benchmark}#{f.item}") for f in self.items.values())
        lines.append(f"{'item':<{width}}  {'docs':>5}  {'ngrams':>6}  example")
        for f in self.rows():
            ex = f.examples[0] if f.examples else {}
            where = ex.get("url") or ex.get("id") or ""
            lines.append(f"{f.benchmark + '#' + f.item:<{width}}  {f.documents:>5}  {f.max_shared_ngrams:>6}  {where}")
        return "\n".join(lines)


def _id_key(item: str) -> tuple[int, int, str]:
    return (0, int(item), "") if item.isdigit() else (1, 0, item)


def _json_lines(path: Path) -> Iterator[dict[str, Any]]:
    opener: Any = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except ValueError as exc:
                        raise InputError(f"{path}:{lineno}: not a JSON record ({exc})") from None
    except (OSError, EOFError) as exc:
        raise InputError(f"{path}: unreadable: {exc}") from None


def contamination_report(path: str | os.PathLike[str]) -> ContaminationReport:
    """The report of a rejects folder (or its rejects.jsonl.gz), or of a dataset folder (manifest.json)."""
    p = Path(path)
    report = ContaminationReport(str(p))
    rejects = p / REJECTS_FILE if p.is_dir() else p
    if p.is_dir() and (p / "manifest.json").exists() and not rejects.exists():
        from thresher.write.manifest import read_shards

        for record in read_shards(p):
            labels = (record.get("annotations") or {}).get("decontam.items") or []
            if labels:
                report.documents += 1
                shared = int((record.get("annotations") or {}).get("decontam.cut_ngrams") or 0)
                for label in labels:
                    benchmark, _, item = str(label).rpartition("#")
                    report.add(benchmark, item, record, shared, None)
        return report
    if not rejects.exists():
        raise InputError(f"{p}: neither a rejects folder ({REJECTS_FILE}, written by build --rejects) nor a dataset")
    for record in _json_lines(rejects):
        drop = record.get("drop") or {}
        if drop.get("stage") != "decontam" or drop.get("reason") != "benchmark_overlap":
            continue
        detail = drop.get("detail") or {}
        report.documents += 1
        report.add(str(detail.get("benchmark")), str(detail.get("item")), record, int(drop.get("value") or 0),
                   detail.get("ngram"))
    return report
