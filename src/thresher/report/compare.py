"""`thresher compare A B`: two datasets side by side (say thresher's build of a crawl and a
FineWeb-recipe build of the same crawl) — how much they share, what each keeps that the other does
not, and the `check` measures of both.

Overlap by URL is counted over every record through bottom-k sketches of URL hashes (exact while
both datasets together hold fewer than `URL_SKETCH` distinct URLs; beyond that the standard KMV
estimate, relative error about 1/sqrt(k)). Overlap by near-duplicate text is measured on a uniform
sample of each side: each sampled document's MinHash band keys (thresher's own near-dedup stage and
settings) are looked up while streaming the *whole* other dataset, and a candidate counts when its
verified similarity reaches the threshold. Memory is bounded by the sample, never by the datasets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.report.check import Bounds, CheckResult, measure, sample_documents
from thresher.report.sample import BottomK, stable_hash

URL_SKETCH = 1 << 16
NEAR_SAMPLE = 2_000
ONLY_EXAMPLES = 5


@dataclass
class Side:
    dataset: str
    documents: int = 0
    near_matched: int = 0  # sampled documents with a near duplicate in the other dataset
    near_sampled: int = 0
    only_examples: list[dict[str, Any]] = field(default_factory=list)
    check: CheckResult | None = None

    @property
    def near_share(self) -> float:
        return self.near_matched / self.near_sampled if self.near_sampled else float("nan")


@dataclass
class Comparison:
    a: Side
    b: Side
    urls_a: int
    urls_b: int
    urls_both: float
    exact_urls: bool

    def to_dict(self) -> dict[str, Any]:
        def side(s: Side) -> dict[str, Any]:
            return {
                "dataset": s.dataset, "documents": s.documents, "near_sampled": s.near_sampled,
                "near_matched": s.near_matched, "near_share": round(s.near_share, 6) if s.near_sampled else None,
                "only_examples": s.only_examples, "check": s.check.to_dict() if s.check else None,
            }

        return {"a": side(self.a), "b": side(self.b), "urls": {
            "a": self.urls_a, "b": self.urls_b, "both": round(self.urls_both, 1), "exact": self.exact_urls}}

    def render(self) -> str:
        a, b = self.a, self.b
        approx = "" if self.exact_urls else " (estimated)"
        lines = [
            f"A: {a.dataset} ({a.documents:,} documents)",
            f"B: {b.dataset} ({b.documents:,} documents)",
            f"URLs: A {self.urls_a:,}, B {self.urls_b:,}, in both {self.urls_both:,.0f}{approx}",
            f"near-duplicate text: {a.near_share:.1%} of A's sample ({a.near_sampled:,}) is in B;"
            f" {b.near_share:.1%} of B's sample ({b.near_sampled:,}) is in A",
        ]
        for name, s in (("A", a), ("B", b)):
            if s.only_examples:
                lines.append(f"kept only in {name} (examples):")
                lines += [f"  {e['id']} {e['url']}  {e['text'][:80]!r}" for e in s.only_examples]
        if a.check and b.check:
            lines.append(f"{'measure':<28} {'A':>20} {'B':>20}")
            for ma, mb in zip(a.check.measures, b.check.measures, strict=True):
                lines.append(f"{ma.name:<28} {_ci(ma.value, ma.low, ma.high):>20} {_ci(mb.value, mb.low, mb.high):>20}")
        return "\n".join(lines)


def _ci(v: float, lo: float, hi: float) -> str:
    return "n/a" if v != v else f"{v:.4g} [{lo:.3g}, {hi:.3g}]"


class _UrlSketch:
    """Bottom-k of URL hashes for one dataset (set semantics: a URL twice counts once)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.values: set[int] = set()
        self.bound = 1 << 64

    def add(self, url: str) -> None:
        h = stable_hash(url)
        if h >= self.bound or h in self.values:
            return
        self.values.add(h)
        if len(self.values) > 2 * self.k:
            kept = sorted(self.values)[: self.k]
            self.values = set(kept)
            self.bound = kept[-1] + 1

    def smallest(self) -> list[int]:
        return sorted(self.values)[: self.k]

    @property
    def saturated(self) -> bool:
        return self.bound != 1 << 64 or len(self.values) > self.k


def _url_overlap(a: _UrlSketch, b: _UrlSketch) -> tuple[int, int, float, bool]:
    sa, sb = a.smallest(), b.smallest()
    exact = not (a.saturated or b.saturated)
    if exact:
        na, nb = len(sa), len(sb)
        return na, nb, float(len(set(sa) & set(sb))), True
    k = min(len(sa), len(sb))
    union = sorted(set(sa) | set(sb))[:k]
    kth = union[-1]
    est_union = (k - 1) * (1 << 64) / (kth + 1)
    both_in_union = len(set(union) & set(sa) & set(sb))
    jaccard = both_in_union / k
    na = round((k - 1) * (1 << 64) / (sa[k - 1] + 1)) if len(sa) >= k else len(sa)
    nb = round((k - 1) * (1 << 64) / (sb[k - 1] + 1)) if len(sb) >= k else len(sb)
    return na, nb, jaccard * est_union, False


def _near_stage(dataset: str) -> Any:
    """The MinHash stage to compare with: the dataset's own near-dedup settings when it used
    MinHash, else thresher's defaults."""
    import json

    from thresher.config import RunConfig
    from thresher.dedup.config import DedupConfig
    from thresher.dedup.near import MinHashDedup

    try:
        manifest = json.loads((Path(dataset) / "manifest.json").read_text(encoding="utf-8"))
        near = RunConfig.from_dict(manifest.get("config", {})).dedup.near
        if near.method == "minhash":
            return MinHashDedup(near)
    except Exception:  # noqa: BLE001 - any unreadable config falls back to the defaults
        pass
    return MinHashDedup(DedupConfig().near)


def _sketch(stage: Any, record: dict[str, Any]) -> Any:
    from thresher.core.document import Document

    doc = Document(id=str(record.get("id")), url=record.get("url"), text=record.get("text") or "")
    return stage.scan(doc)


def _near_pass(sample: list[dict[str, Any]], other: str, stage: Any) -> tuple[set[str], int]:
    """Stream `other`; return the ids of sampled documents with a near duplicate in it."""
    from thresher.write.manifest import read_shards

    keyed: dict[bytes, list[int]] = {}
    scanned = [_sketch(stage, r) for r in sample]
    for i, s in enumerate(scanned):
        if s is None:
            continue
        for key in s.keys:
            keyed.setdefault(key, []).append(i)
    matched: set[int] = set()
    n = 0
    for record in read_shards(other):
        n += 1
        s = _sketch(stage, record)
        if s is None:
            continue
        for key in s.keys:
            for i in keyed.get(key, ()):
                if i in matched:
                    continue
                payload = scanned[i].payload
                if stage.similarity(payload, s.payload) is not None:
                    matched.add(i)
    return {str(sample[i]["id"]) for i in matched}, n


def compare_datasets(a: str, b: str, bounds: Bounds | None = None, sample: int = NEAR_SAMPLE) -> Comparison:
    from thresher.write.manifest import read_shards

    bounds = bounds or Bounds()
    sketches = (_UrlSketch(URL_SKETCH), _UrlSketch(URL_SKETCH))
    samples = (BottomK[dict[str, Any]](sample), BottomK[dict[str, Any]](sample))
    counts = [0, 0]
    for side, dataset in enumerate((a, b)):
        for record in read_shards(dataset):
            counts[side] += 1
            url = record.get("url")
            if url:
                sketches[side].add(url)
            samples[side].add(
                str(record.get("id")),
                {
                    "id": record.get("id"),
                    "url": url,
                    "text": record.get("text") or "",
                    "lang": (record.get("annotations") or {}).get("lang.code"),
                },
            )
    stage = _near_stage(a)
    sa, sb = samples[0].items(), samples[1].items()
    in_b, _ = _near_pass(sa, b, stage)
    in_a, _ = _near_pass(sb, a, stage)
    side_a = Side(a, counts[0], len(in_b), len(sa))
    side_b = Side(b, counts[1], len(in_a), len(sb))
    side_a.only_examples = [_brief(r) for r in sa if str(r["id"]) not in in_b][:ONLY_EXAMPLES]
    side_b.only_examples = [_brief(r) for r in sb if str(r["id"]) not in in_a][:ONLY_EXAMPLES]
    side_a.check = CheckResult(a, len(sa), counts[0], measure(sa, bounds))
    side_b.check = CheckResult(b, len(sb), counts[1], measure(sb, bounds))
    na, nb, both, exact = _url_overlap(*sketches)
    return Comparison(side_a, side_b, na, nb, both, exact)


def _brief(record: dict[str, Any]) -> dict[str, Any]:
    return {"id": record["id"], "url": record["url"], "text": record["text"][:300]}


__all__ = ["compare_datasets", "Comparison", "sample_documents"]
