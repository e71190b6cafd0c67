"""Bounded, deterministic summaries of a stream: the pieces `report`, `check` and `compare` share.

- `BottomK` keeps the k items with the smallest hash keys: a uniform sample whose content depends
  only on the items (never on their order, the shard layout or a random seed), and which merges
  (the bottom k of a union is the bottom k of the parts' bottom ks).
- `TopK` keeps the k items with the largest scores, ties broken by key, so the result is fixed.
- `HeavyHitters` is the space-saving algorithm: the most frequent keys of a stream with a fixed
  number of counters (hosts of a billion pages fit in a few thousand).
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


def stable_hash(key: str) -> int:
    """64 bits of BLAKE2b: the same on every machine and Python run (unlike `hash`)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class BottomK(Generic[T]):
    def __init__(self, k: int) -> None:
        self.k = k
        self._heap: list[tuple[int, str, T]] = []  # max-heap on (hash, key) through negation
        self.seen = 0

    def add(self, key: str, item: T) -> None:
        self.seen += 1
        h = stable_hash(key)
        heap = self._heap
        if len(heap) < self.k:
            heapq.heappush(heap, (-h, _neg(key), item))
            return
        worst = heap[0]
        # the tie key is built only when the hash does not decide (most items lose on the hash)
        if -h > worst[0] or (-h == worst[0] and _neg(key) > worst[1]):
            heapq.heapreplace(heap, (-h, _neg(key), item))

    def items(self) -> list[T]:
        """The sample, ordered by hash (a fixed order, unrelated to input order)."""
        return [item for _, _, item in sorted(self._heap, key=lambda e: (-e[0], e[1]))]

    def __len__(self) -> int:
        return len(self._heap)


def _neg(key: str) -> str:
    # ties on the 64-bit hash are broken by the key itself; the heap needs "larger is worse"
    return "".join(chr(0x10FFFF - ord(c)) for c in key[:32])


class TopK(Generic[T]):
    def __init__(self, k: int) -> None:
        self.k = k
        self._heap: list[tuple[float, str, T]] = []

    def add(self, score: float, key: str, item: T) -> None:
        entry = (score, _neg(key), item)
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, entry)
        elif (score, _neg(key)) > (self._heap[0][0], self._heap[0][1]):
            heapq.heapreplace(self._heap, entry)

    def items(self) -> list[T]:
        """Highest score first; equal scores by key."""
        return [item for _, _, item in sorted(self._heap, key=lambda e: (-e[0], _unneg(e[1])))]


def _unneg(key: str) -> str:
    return "".join(chr(0x10FFFF - ord(c)) for c in key)


class HeavyHitters:
    """Space-saving: counts are exact for keys that never left the table and over-estimate by at
    most the smallest count otherwise (reported as `error`)."""

    def __init__(self, capacity: int = 2000) -> None:
        self.capacity = capacity
        self.counts: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.total = 0

    def add(self, key: str, n: int = 1) -> None:
        self.total += n
        counts = self.counts
        if key in counts:
            counts[key] += n
            return
        if len(counts) < self.capacity:
            counts[key] = n
            self.errors[key] = 0
            return
        # evict the smallest (ties: the largest key, so eviction is deterministic)
        victim = min(counts, key=lambda k: (counts[k], _neg(k)))
        floor = counts.pop(victim)
        self.errors.pop(victim, None)
        counts[key] = floor + n
        self.errors[key] = floor

    def most_common(self, n: int) -> list[tuple[str, int]]:
        return sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def mean_ci(values: Iterable[float], z: float = 1.96) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval (sample standard deviation)."""
    xs = list(values)
    n = len(xs)
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    mean = sum(xs) / n
    if n == 1:
        return (mean, mean, mean)
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    half = z * (var / n) ** 0.5
    return (mean, mean - half, mean + half)


def wilson_ci(successes: int, n: int, z: float = 1.96) -> tuple[float, float, float]:
    """A proportion and its Wilson score interval: sound near 0 and 1, where the normal
    approximation gives intervals below zero for rare events such as a 0.3% duplicate rate."""
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / denom
    return (p, max(0.0, centre - half), min(1.0, centre + half))
