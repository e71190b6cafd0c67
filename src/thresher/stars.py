"""Connected components by alternating large-star and small-star rounds over partitioned edges.

Kiveris, Lattanzi, Mirrokni, Rastogi, Vassilvitskii, "Connected Components in MapReduce and Beyond"
(SoCC 2014), section 3: each round groups the edges by one endpoint (a shuffle by a hash of that
node) and rewrites each node's neighbourhood; the graph stays connected the same way, and after
O(log² n) rounds (in practice a few more than log n; `tests/property/test_stars.py`) every component
is a star whose centre is its lowest node. A node's label is then that centre: the lowest ordinal of
its component, exactly what the single-task union-find of `thresher.clusters.Components` takes as
its root, so both clusterings decide alike.

- `large_star(key, nbr)`: one partition's directed edges (every undirected edge appears once from
  each end, at the partition of its `key`). Each node u links every neighbour above it to
  m(u) = min(u, neighbours). Also reports, for the convergence test, how many of its nodes are not in
  star form (`violations`: neither all neighbours above u, nor exactly one neighbour below u) and
  each node's m(u), which is its final label once no partition reports a violation.
- `small_star(key, nbr)`: one partition's edges, each once at its higher end. Each node u links
  itself and every neighbour (all below u) to the lowest of them.

A kernel returns undirected edges as (hi, lo) with hi > lo, deduplicated; `route` sends them to the
partitions the next round groups by. `star_labels` runs the whole loop in memory over `partitions`
simulated partitions (tests and benchmarks); the build runs each kernel call as a task over files
(`thresher.run.cluster_rounds`). Node values are unsigned 64-bit (document ordinals). Needs NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MIX = 0x9E3779B97F4A7C15  # Fibonacci hashing: ordinals are structured, so they are mixed
U64 = "uint64"


def partition_of(nodes: Any, partitions: int) -> Any:
    """The partition (0..partitions-1) each node's edges are grouped in: a mix of its value."""
    import numpy as np

    with np.errstate(over="ignore"):
        mixed = np.asarray(nodes, dtype=U64) * np.uint64(MIX)
    return ((mixed >> np.uint64(40)) % np.uint64(partitions)).astype(np.int64)


def _grouped(key: Any, nbr: Any) -> tuple[Any, Any, Any, Any]:
    """The distinct (key, nbr) entries sorted by key then nbr, and each key group's first index and size."""
    import numpy as np

    key = np.asarray(key, dtype=U64)
    nbr = np.asarray(nbr, dtype=U64)
    if key.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return key, nbr, empty, empty
    order = np.lexsort((nbr, key))
    key, nbr = key[order], nbr[order]
    fresh = np.ones(key.size, dtype=bool)
    fresh[1:] = (key[1:] != key[:-1]) | (nbr[1:] != nbr[:-1])
    key, nbr = key[fresh], nbr[fresh]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    sizes = np.diff(np.append(starts, key.size))
    return key, nbr, starts, sizes


def _distinct_edges(hi: Any, lo: Any) -> tuple[Any, Any]:
    import numpy as np

    if hi.size == 0:
        return hi, lo
    order = np.lexsort((lo, hi))
    hi, lo = hi[order], lo[order]
    fresh = np.ones(hi.size, dtype=bool)
    fresh[1:] = (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1])
    return hi[fresh], lo[fresh]


@dataclass(frozen=True, slots=True)
class LargeStar:
    """A large-star step: the edges out as (hi, lo), each node's m(u) (`nodes`, `labels`) and how many
    of its nodes were not in star form on the way in (0 everywhere: converged, labels final)."""

    hi: Any
    lo: Any
    nodes: Any
    labels: Any
    violations: int


def large_star(key: Any, nbr: Any) -> LargeStar:
    import numpy as np

    key, nbr, starts, sizes = _grouped(key, nbr)
    nodes = key[starts]
    first = nbr[starts]  # each node's lowest neighbour (sorted by nbr within a key)
    labels = np.minimum(nodes, first)
    star = (first > nodes) | ((sizes == 1) & (first < nodes))
    above = nbr > key
    m = np.repeat(labels, sizes)
    hi, lo = _distinct_edges(nbr[above], m[above])
    return LargeStar(hi, lo, nodes, labels, int(star.size - np.count_nonzero(star)))


def small_star(key: Any, nbr: Any) -> tuple[Any, Any]:
    """Input: each edge once, at its higher end (`nbr` < `key`). Output (hi, lo) edges."""
    import numpy as np

    key, nbr, starts, sizes = _grouped(key, nbr)
    m = np.repeat(nbr[starts], sizes)  # the lowest neighbour, below the key itself
    linked = nbr != m
    hi = np.concatenate((nbr[linked], key[starts]))
    lo = np.concatenate((m[linked], nbr[starts]))
    return _distinct_edges(hi, lo)


def route(hi: Any, lo: Any, partitions: int, *, both: bool) -> list[tuple[Any, Any]]:
    """(key, nbr) per partition for the next round: each edge at its higher end's partition, and
    with `both` (a large-star round next) also at its lower end's, reversed."""
    import numpy as np

    keys, nbrs = (np.concatenate((hi, lo)), np.concatenate((lo, hi))) if both else (hi, lo)
    where = partition_of(keys, partitions)
    order = np.argsort(where, kind="stable")
    keys, nbrs, where = keys[order], nbrs[order], where[order]
    bounds = np.searchsorted(where, np.arange(partitions + 1))
    return [(keys[bounds[q] : bounds[q + 1]], nbrs[bounds[q] : bounds[q + 1]]) for q in range(partitions)]


def undirected(a: Any, b: Any) -> tuple[Any, Any]:
    """Edges as (hi, lo), self loops left out (they link nothing)."""
    import numpy as np

    a = np.asarray(a, dtype=U64)
    b = np.asarray(b, dtype=U64)
    keep = a != b
    a, b = a[keep], b[keep]
    return np.maximum(a, b), np.minimum(a, b)


@dataclass(frozen=True, slots=True)
class Labels:
    """Every node of the edges, ascending, its component's lowest node, and the rounds it took."""

    nodes: Any
    labels: Any
    rounds: int


def star_labels(a: Any, b: Any, partitions: int = 1, max_rounds: int = 1000) -> Labels:
    """The component label of every node of the edges (a[i], b[i]), computed as the build computes
    it over `partitions` partitions, but in memory. A node with only self loops is its own label."""
    import numpy as np

    hi, lo = undirected(a, b)
    parts = route(hi, lo, partitions, both=True)
    nodes = np.unique(np.concatenate((np.asarray(a, dtype=U64), np.asarray(b, dtype=U64))))
    for r in range(max_rounds):
        if r % 2 == 0:
            steps = [large_star(k, n) for k, n in parts]
            if sum(s.violations for s in steps) == 0:
                found = np.concatenate([s.nodes for s in steps] + [np.empty(0, dtype=U64)])
                label = np.concatenate([s.labels for s in steps] + [np.empty(0, dtype=U64)])
                out = nodes.copy()
                where = np.searchsorted(nodes, found)
                out[where] = label
                return Labels(nodes, out, r + 1)
            hi = np.concatenate([s.hi for s in steps])
            lo = np.concatenate([s.lo for s in steps])
            parts = route(hi, lo, partitions, both=False)
        else:
            outs = [small_star(k, n) for k, n in parts]
            hi = np.concatenate([h for h, _ in outs])
            lo = np.concatenate([low for _, low in outs])
            parts = route(hi, lo, partitions, both=True)
    raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
