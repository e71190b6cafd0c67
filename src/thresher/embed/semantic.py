"""Semantic deduplication over an embedded dataset, after SemDeDup (Abbas et al. 2023, section 3):
cluster the vectors with k-means, and within each cluster call a document a duplicate when its
cosine to an earlier kept document reaches the threshold. It finds paraphrases and templated
rewrites that share meaning but few shingles, which MinHash cannot see.

- k-means (spherical: unit rows, dot-product assignment) runs on a seeded sample of the vectors,
  started from seeded distinct sample rows, a fixed number of Lloyd rounds: same data and seed,
  same centroids.
- Assignment streams shard by shard; each cluster's vectors, positions and ids are spilled to its
  own temp files, so one process never holds the whole matrix: memory is the sample, one shard's
  vectors, and then one cluster at a time (its vectors and a block of similarities).
- Keep policy first: within a cluster documents are visited in dataset order (lowest shard, then
  row); a document is dropped when an earlier *kept* one has cosine ≥ threshold, and the drop
  names that kept document (the most similar one) and the cosine. A cluster the sample says is
  over `cluster_max` rows is re-split by k-means inside it (`split_oversized`). Here (the report of
  `thresher embed --semantic-dedup`) pairs split across clusters are not compared; the build's
  phases also compare a boundary document in its second-nearest cluster (`thresher.embed.semantic_phase`).
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.core.document import Drop
from thresher.core.errors import ConfigError
from thresher.embed.dataset import shard_vectors
from thresher.write.manifest import read_shards

STAGE = "dedup.semantic"
_BLOCK = 2048  # rows of a cluster's similarity block
_BLOCK_CELLS = 16 * 1024 * 1024  # cosines held at once (64 MiB of float32), whatever the cluster size


@dataclass(frozen=True, slots=True, kw_only=True)
class SemanticDedupConfig:
    threshold: float = 0.9  # cosine at or above which a document duplicates an earlier kept one
    clusters: int | None = None  # k; None: one cluster per ~1,000 documents
    sample_size: int = 50_000  # vectors k-means is fitted on
    iterations: int = 25  # Lloyd rounds (stops early when no assignment changes)
    seed: int = 0
    cluster_max: int = 20_000  # a cluster estimated over this many rows is re-split (`split_oversized`)

    def __post_init__(self) -> None:
        if not 0 < self.threshold <= 1:
            raise ConfigError(f"semantic threshold must be in (0, 1], not {self.threshold}")
        if self.clusters is not None and self.clusters < 1:
            raise ConfigError("semantic clusters must be positive")


@dataclass(frozen=True, slots=True)
class SemanticDuplicate:
    id: Any
    shard: str
    row: int
    kept_id: Any
    kept_shard: str
    kept_row: int
    cosine: float
    cluster: int

    def drop(self, threshold: float) -> Drop:
        return Drop(STAGE, "semantic_duplicate", value=round(self.cosine, 6), limit=threshold,
                    detail={"kept_id": self.kept_id, "kept_shard": self.kept_shard, "kept_row": self.kept_row,
                            "cluster": self.cluster})


@dataclass(slots=True)
class SemanticStats:
    records: int = 0
    clusters: int = 0
    largest_cluster: int = 0
    duplicates: int = 0


_ASSIGN_ROWS = 4096  # sample rows scored against the centroids at a time (a block of rows x k cosines)


def nearest(vectors: Any, centroids: Any) -> Any:
    """Each row's nearest centroid (highest dot product; ties to the lower index), a block of rows at
    a time so that memory is one block x k cosines, never the whole sample x k."""
    import numpy as np

    out = np.zeros(len(vectors), dtype=np.int64)
    for s in range(0, len(vectors), _ASSIGN_ROWS):
        out[s : s + _ASSIGN_ROWS] = np.argmax(np.asarray(vectors[s : s + _ASSIGN_ROWS]) @ centroids.T, axis=1)
    return out


def kmeans(sample: Any, k: int, *, iterations: int, seed: int) -> Any:
    """Spherical k-means centroids (k, d) of unit rows `sample`, seeded and deterministic."""
    import numpy as np

    rng = np.random.default_rng(seed)
    k = min(k, len(sample))
    centroids = sample[np.sort(rng.choice(len(sample), size=k, replace=False))].copy()
    assign = None
    for _ in range(iterations):
        new = nearest(sample, centroids)
        if assign is not None and np.array_equal(new, assign):
            break
        assign = new
        # each cluster's members summed in sample order (sorted once, not one mask per cluster),
        # one contiguous slice at a time: NumPy's pairwise sum of a slice is 15x faster than
        # `np.add.reduceat` over the sorted rows (50k x 256, k = 50) and rounds less; an empty
        # cluster keeps its centroid
        counts = np.bincount(assign, minlength=k)
        filled = np.flatnonzero(counts)
        ends = np.cumsum(counts)
        grouped = sample[np.argsort(assign, kind="stable")]
        sums = np.stack([grouped[ends[j] - counts[j] : ends[j]].sum(axis=0) for j in filled])
        norms = np.linalg.norm(sums, axis=1)
        nonzero = norms > 0
        centroids[filled[nonzero]] = sums[nonzero] / norms[nonzero, None]
    return centroids


_SPLIT_ROUNDS = 4  # re-split passes; each one at least halves an oversized cluster or stops


def split_oversized(
    sample: Any, centroids: Any, *, total: int, max_rows: int, iterations: int, seed: int
) -> tuple[Any, int]:
    """Centroids in which every cluster whose estimated size (its share of the sample x `total`)
    exceeds `max_rows` is replaced, in place, by the centroids of a seeded k-means inside it (k =
    its estimated size / max_rows, rounded up, at least 2); repeated until none is over or a split
    no longer divides (identical rows cannot be told apart). Returns (centroids, clusters split).

    A cluster's semantic task compares its rows pairwise: m rows cost m²/2 cosines, so one dense
    region (a template, a boilerplate page) would be one task of quadratic time. Splitting it makes
    new boundaries; the second-nearest assignment (`nearest_two`) compares the pairs across them."""
    import numpy as np

    if not len(sample):
        return centroids, 0
    scale = total / len(sample)
    split = 0
    for round_ in range(_SPLIT_ROUNDS):
        assign = nearest(sample, centroids)
        counts = np.bincount(assign, minlength=len(centroids))
        parts: list[Any] = []
        changed = False
        for j in range(len(centroids)):
            estimate = counts[j] * scale
            if estimate <= max_rows or counts[j] < 2:
                parts.append(centroids[j : j + 1])
                continue
            members = sample[assign == j]
            k = max(2, math.ceil(estimate / max_rows))
            sub = kmeans(members, k, iterations=iterations, seed=seed + 7919 * (round_ + 1) + j)
            sizes = np.bincount(nearest(members, sub), minlength=len(sub))
            if np.count_nonzero(sizes) < 2:  # all members alike: this cluster cannot be divided
                parts.append(centroids[j : j + 1])
                continue
            parts.append(sub[sizes > 0])  # an empty sub-cluster would only be a dead centroid
            split += 1
            changed = True
        centroids = np.concatenate(parts)
        if not changed:
            break
    return centroids, split


def nearest_two(vectors: Any, centroids: Any, margin: float) -> tuple[Any, Any]:
    """(nearest, second) centroid of each row, second = -1 unless the row's cosine to it is within
    `margin` of its cosine to the nearest: such a row sits on a boundary between two clusters, and
    its duplicates may have fallen on the other side. Ties go to the lower index, as in `nearest`."""
    import numpy as np

    first = np.zeros(len(vectors), dtype=np.int64)
    second = np.full(len(vectors), -1, dtype=np.int64)
    if len(centroids) < 2 or margin <= 0:
        return nearest(vectors, centroids), second
    for s in range(0, len(vectors), _ASSIGN_ROWS):
        sims = np.asarray(vectors[s : s + _ASSIGN_ROWS]) @ centroids.T
        rows = np.arange(len(sims))
        best = np.argmax(sims, axis=1)
        top = sims[rows, best]
        sims[rows, best] = -np.inf
        runner_up = np.argmax(sims, axis=1)
        close = sims[rows, runner_up] >= top - np.float32(margin)
        first[s : s + len(sims)] = best
        second[s : s + len(sims)] = np.where(close, runner_up, -1)
    return first, second


def _sample(dataset: Any, total: int, size: int, seed: int) -> Any:
    import numpy as np

    rng = np.random.default_rng(seed)
    picks = np.sort(rng.choice(total, size=min(size, total), replace=False))
    rows, start = [], 0
    for entry, vectors in shard_vectors(dataset):
        end = start + entry["rows"]
        local = picks[(picks >= start) & (picks < end)] - start
        rows.append(np.asarray(vectors[local], dtype=np.float32))
        start = end
    return np.concatenate(rows) if rows else np.zeros((0, 1), dtype=np.float32)


def _spill(dataset: Any, centroids: Any, folder: Path) -> list[int]:
    """Each record's vector, dataset position and (id, shard, row) appended to its cluster's files."""
    import numpy as np

    sizes = [0] * len(centroids)
    records = read_shards(dataset)
    position = 0
    for entry, vectors in shard_vectors(dataset):
        vectors = np.asarray(vectors, dtype=np.float32)
        names = [(r.get("id"), entry["shard"], row) for row, r in zip(range(entry["rows"]), records, strict=False)]
        assign = np.argmax(vectors @ centroids.T, axis=1) if len(vectors) else np.zeros(0, dtype=np.int64)
        for j in np.unique(assign):
            rows = np.flatnonzero(assign == j)
            with open(folder / f"{j}.vec", "ab") as f:
                vectors[rows].tofile(f)
            with open(folder / f"{j}.pos", "ab") as f:
                (rows + position).astype(np.int64).tofile(f)
            with open(folder / f"{j}.ids", "a", encoding="utf-8") as f:
                for r in rows:
                    f.write(json.dumps(names[r], ensure_ascii=False) + "\n")
            sizes[int(j)] += len(rows)
        position += entry["rows"]
    return sizes


def cluster_neighbours(vectors: Any, threshold: float) -> list[tuple[int, int, float]]:
    """(row, kept row, cosine) for each duplicate of a cluster whose rows are in keep order (the
    keep policy's rank: dataset order for `first`). A block of rows is compared with every earlier
    row at a time, the block shrinking as the cluster grows so that it holds ~_BLOCK_CELLS cosines."""
    import numpy as np

    m = len(vectors)
    block = max(1, min(_BLOCK, _BLOCK_CELLS // max(1, m)))
    best_earlier = np.full(m, -np.inf, dtype=np.float32)
    for s in range(0, m, block):
        e = min(m, s + block)
        sims = vectors[s:e] @ vectors[:e].T
        earlier = np.arange(e)[None, :] < np.arange(s, e)[:, None]
        best_earlier[s:e] = np.max(np.where(earlier, sims, -np.inf), axis=1) if e > 1 else -np.inf
    kept = best_earlier < threshold  # nothing earlier is that close: kept whatever else is decided
    found = []
    for i in np.flatnonzero(~kept):
        sims = vectors[:i] @ vectors[i]
        close = np.flatnonzero(kept[:i] & (sims >= threshold))
        if close.size:
            j = int(close[np.argmax(sims[close])])
            found.append((int(i), j, float(sims[j])))
        else:
            kept[i] = True
    return found


def boundary_pairs(kept: Any, visitors: Any, threshold: float, most: int) -> list[tuple[int, int, float]]:
    """(row of `kept`, row of `visitors`, cosine) for each pair at or above the threshold, at most
    `most` per kept row (its closest visitors; ties to the lower visitor row). `kept` are a cluster's
    own documents that survived its dedup, `visitors` the copies of boundary documents whose nearest
    centroid is another's (`nearest_two`). A block of kept rows at a time, ~_BLOCK_CELLS cosines."""
    import numpy as np

    found: list[tuple[int, int, float]] = []
    m = len(visitors)
    if not len(kept) or not m:
        return found
    block = max(1, min(_BLOCK, _BLOCK_CELLS // m))
    for s in range(0, len(kept), block):
        sims = kept[s : s + block] @ visitors.T
        for r in np.flatnonzero(np.max(sims, axis=1) >= threshold):
            hits = np.flatnonzero(sims[r] >= threshold)
            if most and len(hits) > most:
                hits = hits[np.lexsort((hits, -sims[r, hits]))[:most]]
            found += [(s + int(r), int(c), float(sims[r, c])) for c in hits]
    return found


def semantic_duplicates(dataset: str | Path, config: SemanticDedupConfig, stats: SemanticStats | None = None,
                        workdir: str | Path | None = None) -> Iterator[SemanticDuplicate]:
    """The semantic duplicates of an embedded dataset, cluster by cluster (`stats` filled as it goes)."""
    import numpy as np

    from thresher.embed.vectors import embedding_section
    from thresher.write.manifest import load_manifest

    stats = stats if stats is not None else SemanticStats()
    section = embedding_section(load_manifest(dataset), str(dataset))
    total = int(section["records"])
    stats.records = total
    if total == 0:
        return
    k = config.clusters or max(1, math.ceil(total / 1000))
    sample = _sample(dataset, total, config.sample_size, config.seed)
    centroids = kmeans(sample, k, iterations=config.iterations, seed=config.seed)
    centroids, _ = split_oversized(
        sample, centroids, total=total, max_rows=config.cluster_max, iterations=config.iterations, seed=config.seed
    )
    del sample
    stats.clusters = len(centroids)
    with tempfile.TemporaryDirectory(prefix="thresher-semdedup-", dir=workdir) as tmp:
        folder = Path(tmp)
        sizes = _spill(dataset, centroids, folder)
        stats.largest_cluster = max(sizes)
        for j, size in enumerate(sizes):
            if size < 2:
                continue
            vectors = np.fromfile(folder / f"{j}.vec", dtype=np.float32).reshape(size, -1)
            found = cluster_neighbours(vectors, config.threshold)
            if not found:
                continue
            with open(folder / f"{j}.ids", encoding="utf-8") as f:
                names = [json.loads(line) for line in f]
            for row, kept_row, cosine in found:
                stats.duplicates += 1
                (doc_id, shard, r), (kept_id, kept_shard, kr) = names[row], names[kept_row]
                yield SemanticDuplicate(doc_id, shard, r, kept_id, kept_shard, kr, cosine, j)
