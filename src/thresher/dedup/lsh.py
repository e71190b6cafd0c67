"""LSH banding for MinHash signatures: parameters from a similarity goal, band keys, hot buckets.

A signature of `num_hashes` values is cut into `bands` bands of `rows` values; two documents are
candidates when they agree on every value of at least one band. With MinHash, a pair of Jaccard
similarity s collides in one band with probability s**rows, so it becomes a candidate with

    P(s) = 1 - (1 - s**rows) ** bands                                   (the S-curve)

**Choosing bands x rows from a threshold t.** The pairs the index should miss are those below t and
the pairs it should find are those above, so (following Leskovec, Rajaraman & Ullman, *Mining of
Massive Datasets*, ch. 3.4) we score each (bands, rows) with bands * rows <= num_hashes by

    cost = w_fp * integral_0^t P(s) ds  +  w_fn * integral_t^1 (1 - P(s)) ds

the area under the S-curve left of t (false-positive mass) and above it right of t
(false-negative mass), and take the minimum. Candidates are *verified* afterwards (signature and
exact Jaccard, `thresher.dedup.near`), so a false positive costs one comparison while a false
negative is a duplicate kept for good: the default weights put `FALSE_NEGATIVE_WEIGHT` on misses.
Integrals are Simpson's rule on `INTEGRATION_STEPS` intervals; ties go to fewer bands (fewer keys).
`bands=` / `rows=` override the derivation.

**Hot buckets.** A templated site puts thousands of pages in one bucket. Verifying all n(n-1)/2
pairs is quadratic; `representative_pairs` pairs every member with the first `max_representatives`
members of the bucket (sorted by ordinal) instead: O(n * max_representatives) pairs, and every
member still reaches the cluster of the bucket's first member whenever it is similar to it.
"""

from __future__ import annotations

import functools
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: Weight of false-negative mass against false-positive mass (they sum to 1): a missed pair is a
#: duplicate kept for good, a false candidate costs one verification (~10 us). At 128 hashes it
#: gives 27 x 4 at t = 0.7, 21 x 6 at 0.8 and 14 x 9 at 0.9: P(t) >= 0.998 in each. Weights up to
#: 0.995 leave P(0.8) at 0.986 and measurably lower recall on the benchmark corpus (docs/dedup.md).
FALSE_NEGATIVE_WEIGHT = 0.999
INTEGRATION_STEPS = 200


def collision_probability(similarity: float, bands: int, rows: int) -> float:
    """Probability that a pair of Jaccard `similarity` shares at least one band."""
    return 1.0 - (1.0 - similarity**rows) ** bands


def _simpson(f: Callable[[float], float], lo: float, hi: float, steps: int = INTEGRATION_STEPS) -> float:
    if hi <= lo:
        return 0.0
    steps += steps % 2
    h = (hi - lo) / steps
    total = f(lo) + f(hi)
    for i in range(1, steps):
        total += (4 if i % 2 else 2) * f(lo + i * h)
    return total * h / 3


def false_positive_mass(threshold: float, bands: int, rows: int) -> float:
    """Area under the S-curve below `threshold`: how much dissimilar mass becomes candidates."""
    return _simpson(lambda s: collision_probability(s, bands, rows), 0.0, threshold)


def false_negative_mass(threshold: float, bands: int, rows: int) -> float:
    """Area above the S-curve from `threshold` to 1: how much similar mass is missed."""
    return _simpson(lambda s: 1.0 - collision_probability(s, bands, rows), threshold, 1.0)


@dataclass(frozen=True, slots=True)
class BandParams:
    bands: int
    rows: int

    @property
    def knee(self) -> float:
        """Similarity at which the S-curve is steepest, about (1/bands)**(1/rows)."""
        knee: float = (1.0 / self.bands) ** (1.0 / self.rows)
        return knee


# The search's answers for the thresholds people use at the default signature length and weight,
# so a build does not pay ~0.06 s of CPU per process for them (tests/unit/dedup/test_lsh.py checks
# every entry against the search). (threshold, num_hashes, false_negative_weight) -> (bands, rows)
_DERIVED: dict[tuple[float, int, float], tuple[int, int]] = {
    (0.5, 128, FALSE_NEGATIVE_WEIGHT): (42, 3),
    (0.6, 128, FALSE_NEGATIVE_WEIGHT): (31, 3),
    (0.7, 128, FALSE_NEGATIVE_WEIGHT): (27, 4),
    (0.75, 128, FALSE_NEGATIVE_WEIGHT): (25, 5),
    (0.8, 128, FALSE_NEGATIVE_WEIGHT): (21, 6),
    (0.85, 128, FALSE_NEGATIVE_WEIGHT): (18, 7),
    (0.9, 128, FALSE_NEGATIVE_WEIGHT): (14, 9),
    (0.95, 128, FALSE_NEGATIVE_WEIGHT): (9, 14),
}


def derive_bands_rows(
    threshold: float, num_hashes: int, false_negative_weight: float = FALSE_NEGATIVE_WEIGHT
) -> BandParams:
    """The (bands, rows) with bands * rows <= num_hashes minimizing the weighted FP/FN mass
    (`search_bands_rows`; common settings are answered from a table of its results)."""
    known = _DERIVED.get((threshold, num_hashes, false_negative_weight))
    if known is not None:
        return BandParams(*known)
    return search_bands_rows(threshold, num_hashes, false_negative_weight)


@functools.lru_cache(maxsize=64)
def search_bands_rows(
    threshold: float, num_hashes: int, false_negative_weight: float = FALSE_NEGATIVE_WEIGHT
) -> BandParams:
    """The grid search behind `derive_bands_rows`. Cached: with numerical integration it costs
    ~0.06 s, and the driver and every worker build the stage."""
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    if not 0.0 <= false_negative_weight <= 1.0:
        raise ValueError(f"false_negative_weight must be in [0, 1], got {false_negative_weight}")
    w_fn = false_negative_weight
    w_fp = 1.0 - w_fn
    best: tuple[float, int, int] | None = None
    for bands in range(1, num_hashes + 1):
        for rows in range(1, num_hashes // bands + 1):
            cost = w_fp * false_positive_mass(threshold, bands, rows) + w_fn * false_negative_mass(
                threshold, bands, rows
            )
            key = (round(cost, 12), bands, rows)
            if best is None or key < best:
                best = key
    assert best is not None
    return BandParams(best[1], best[2])


_KEY_HEAD = struct.Struct(">IH")


def band_keys(signature: bytes | memoryview, bands: int, rows: int, tag: bytes = b"mh") -> list[bytes]:
    """One 16-byte key per band: (CRC-32 of tag + band, band index u16, the band's first 10 bytes).

    `signature` is the little-endian u32 encoding of the signature (4 bytes per value). Equal bands
    give equal keys; different bands collide only when the CRC and the first 10 bytes agree (a
    false candidate, which verification rejects). The key leads with the CRC of the *whole* band
    because the key bucket is taken from the leading bytes (`records.key_bucket`): a band's first
    value alone is skewed wherever documents share a common shingle (templates, boilerplate), and
    bucketing by it once put 57x the median bucket's keys into one group task. Cost ~1 us per band
    (a cryptographic digest per band cost ~4.5 us)."""
    width = 4 * rows
    if len(signature) < bands * width:
        raise ValueError(f"signature of {len(signature) // 4} values is shorter than {bands} x {rows}")
    data = bytes(signature)
    seed = zlib.crc32(tag)
    pack = _KEY_HEAD.pack
    out = []
    for b in range(bands):
        band = data[b * width : (b + 1) * width]
        key = pack(zlib.crc32(band, seed), b) + band[:10]
        out.append(key + bytes(16 - len(key)) if len(key) < 16 else key)
    return out


def representative_pairs(n: int, max_representatives: int) -> Iterator[tuple[int, int]]:
    """Pairs (i, j), i < j, of a bucket of n members: all pairs while n <= max_representatives + 1,
    else every member paired with each of the first `max_representatives` members."""
    reps = max(1, max_representatives)
    for j in range(1, n):
        for i in range(min(j, reps)):
            yield (i, j)
