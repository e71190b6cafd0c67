"""The benchmark n-gram index: hashed word n-grams of every benchmark item, in a sorted array.

Tokens are the dedup shingles' word tokens (`thresher.dedup.shingles`: lower-cased `\\w+` runs, so
punctuation, spacing and case never matter), and an n-gram is hashed to 64 bits by the same
multilinear hash as a MinHash shingle (`thresher.dedup.kernels`), with its own seed. The index keeps
each distinct n-gram once: its hash in a sorted `uint64` array (8 bytes) and the first benchmark item
containing it in a parallel `uint32` array (4 bytes): **12 bytes per n-gram**, 12 MB for 1M n-grams,
plus a 2 MiB bitmap of hash prefixes that lets the pure-Python lookup skip the binary search for
almost every n-gram of a clean document. A false match needs a 64-bit collision: about
(document n-grams x index size) / 2^64, 5 x 10^-11 for a 1,000-word document against 1M n-grams.

Exempt n-grams (common phrasing rather than a copied item) are left out when the index is built:
those in more than `max_items_per_ngram` benchmark items, and those found in at least
`max_common_docs` documents of the configured reference texts.

A stage gets its index from `thresher.decontam.index_store.load_index`: built once per process and
settings, or, in a build, compiled once into a file that every worker maps.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from thresher.core.errors import InputError
from thresher.decontam.config import DecontamConfig, benchmark_mismatches
from thresher.decontam.items import benchmark_name, read_items, read_texts
from thresher.dedup.kernels import (
    Coefficients,
    make_coefficients,
    numpy_available,
    shingle_hashes_numpy,
    shingle_hashes_pure,
)
from thresher.dedup.shingles import word_token_values

SEED = 0xDEC0

BITMAP_BITS = 24  # 2^24 bits = 2 MiB
BYTES_PER_NGRAM = 12


def ngram_coefficients(n: int) -> Coefficients:
    return make_coefficients("k_permutation", 1, n, seed=SEED)


def ngram_hashes(text: str, c: Coefficients, use_numpy: bool) -> Any:
    """The 64-bit hash of every word n-gram of `text`, in text order (a list, or a NumPy array)."""
    tokens = word_token_values(text)
    return shingle_hashes_numpy(tokens, c) if use_numpy else shingle_hashes_pure(tokens, c)


@dataclass(frozen=True, slots=True)
class ItemRef:
    benchmark: str
    id: str


class NgramIndex:
    """Sorted unique n-gram hashes of the benchmarks with the first item of each (module doc)."""

    def __init__(self, hashes: Sequence[int], items_of: Sequence[int], items: Sequence[ItemRef], n: int, exempt: int,
                 bitmap: bytearray | memoryview | None = None) -> None:
        # arrays, or the mapped pages of a compiled index (`thresher.decontam.index_store`)
        self.hashes = hashes
        self.items_of = items_of
        self.items = items
        self.n = n
        self.exempt = exempt  # distinct n-grams left out by the frequency cuts
        self.coefficients = ngram_coefficients(n)
        self.use_numpy = numpy_available()
        self.bitmap = bitmap if bitmap is not None else prefix_bitmap(hashes)
        self._np_hashes: Any = None
        self._np_bitmap: Any = None
        if self.use_numpy:
            import numpy

            buffer: Any = hashes  # an array or a mapped memoryview: both expose their buffer
            self._np_hashes = (
                numpy.frombuffer(buffer, dtype=numpy.uint64) if len(hashes) else numpy.empty(0, numpy.uint64)
            )
            self._np_bitmap = numpy.frombuffer(self.bitmap, dtype=numpy.uint8)

    def __len__(self) -> int:
        return len(self.hashes)

    @property
    def nbytes(self) -> int:
        return len(self.hashes) * 8 + len(self.items_of) * 4 + len(self.bitmap)

    def matches(self, text: str) -> list[tuple[int, int]]:
        """(n-gram position in the text's word tokens, index entry) of every n-gram of `text` that is
        in the index, in text order."""
        if not len(self.hashes):
            return []
        doc = ngram_hashes(text, self.coefficients, self.use_numpy)
        if not len(doc):
            return []
        if self.use_numpy:
            import numpy

            # the prefix bitmap (2 MiB, cache-resident) first; the binary search only for its hits
            keys = doc >> numpy.uint64(64 - BITMAP_BITS)
            bits = self._np_bitmap[keys >> numpy.uint64(3)] >> (keys & numpy.uint64(7)).astype(numpy.uint8)
            candidates = numpy.flatnonzero(bits & 1)
            if not len(candidates):
                return []
            index = self._np_hashes
            wanted = doc[candidates]
            pos = numpy.searchsorted(index, wanted)
            pos[pos == len(index)] = 0
            hit = numpy.flatnonzero(index[pos] == wanted)
            return [(int(candidates[i]), int(pos[i])) for i in hit]
        return self._matches_pure(doc)

    def _matches_pure(self, doc: Sequence[int]) -> list[tuple[int, int]]:
        bitmap, hashes, shift = self.bitmap, self.hashes, 64 - BITMAP_BITS
        out = []
        for i, h in enumerate(doc):
            key = h >> shift
            if bitmap[key >> 3] & (1 << (key & 7)):
                j = bisect_left(hashes, h)
                if j < len(hashes) and hashes[j] == h:
                    out.append((i, j))
        return out


def prefix_bitmap(hashes: Iterable[int]) -> bytearray:
    """One bit per value of a hash's top BITMAP_BITS bits, set where an indexed hash has it."""
    bitmap = bytearray(1 << (BITMAP_BITS - 3))
    shift = 64 - BITMAP_BITS
    for h in hashes:
        key = h >> shift
        bitmap[key >> 3] |= 1 << (key & 7)
    return bitmap


def verify_benchmarks(config: DecontamConfig) -> None:
    """`InputError` when a benchmark file is missing or differs from the digest the config records
    (a build reproduced from a manifest must use the same benchmark files)."""
    try:
        problems = benchmark_mismatches(config)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if problems:
        raise InputError(problems[0])


def build_index(config: DecontamConfig) -> NgramIndex:
    """Read every benchmark file and build the index; `InputError` for an empty or malformed file or
    past `max_ngrams` (counted while reading, so a huge file fails before it fills memory)."""
    verify_benchmarks(config)
    c = ngram_coefficients(config.ngram)
    items: list[ItemRef] = []
    all_hashes, all_items = array("Q"), array("I")  # 12 bytes per (n-gram, item) while reading
    for path in config.benchmarks:
        name = benchmark_name(path)
        before = len(items)
        for item in read_items(path, config.fields):
            idx = len(items)
            if idx >= 1 << 32:
                raise InputError(f"benchmark files hold more than 2^32 items (at {path})")
            items.append(ItemRef(name, item.id))
            grams: set[int] = set()
            for text in item.texts:
                grams.update(shingle_hashes_pure(word_token_values(text), c))
            all_hashes.extend(grams)
            all_items.extend([idx] * len(grams))
            if len(all_hashes) > config.max_ngrams:
                raise InputError(
                    f"benchmark files hold more than decontam.max_ngrams = {config.max_ngrams:,} n-grams "
                    f"(reached in {path}); raise the limit ({BYTES_PER_NGRAM} bytes per n-gram per worker) or "
                    "index fewer items"
                )
        if len(items) == before:
            raise InputError(f"benchmark file {path} holds no items")
    hashes, items_of, counts = _sorted_unique(all_hashes, all_items)
    del all_hashes, all_items
    keep = [True] * len(hashes)
    if config.max_items_per_ngram is not None:
        for i, n in enumerate(counts):
            if n > config.max_items_per_ngram:
                keep[i] = False
    if config.common_texts:
        for i in _common_positions(hashes, config, c):
            keep[i] = False
    exempt = keep.count(False)
    if exempt:
        hashes = array("Q", (h for h, k in zip(hashes, keep, strict=True) if k))
        items_of = array("I", (t for t, k in zip(items_of, keep, strict=True) if k))
    return NgramIndex(hashes, items_of, items, config.ngram, exempt)


def _sorted_unique(hashes: array[int], items: array[int]) -> tuple[array[int], array[int], list[int]]:
    """Distinct hashes in ascending order, the lowest item of each, and how many items hold it.
    NumPy when installed (~28 bytes per n-gram while sorting), else Python ints (~50); same result."""
    if numpy_available() and len(hashes):
        import numpy

        h = numpy.frombuffer(hashes, dtype=numpy.uint64)
        t = numpy.frombuffer(items, dtype=numpy.uint32)
        order = numpy.lexsort((t, h))
        h, t = h[order], t[order]
        starts = numpy.flatnonzero(numpy.concatenate(([True], h[1:] != h[:-1])))
        counts = numpy.diff(numpy.append(starts, len(h)))
        return array("Q", h[starts].tobytes()), array("I", t[starts].tobytes()), counts.tolist()
    keyed = sorted((hv << 32) | iv for hv, iv in zip(hashes, items, strict=True))
    out_h, out_t, out_n = array("Q"), array("I"), []
    last = -1
    for k in keyed:
        hv = k >> 32
        if hv != last:
            out_h.append(hv)
            out_t.append(k & 0xFFFFFFFF)
            out_n.append(1)
            last = hv
        else:
            out_n[-1] += 1
    return out_h, out_t, out_n


def _common_positions(hashes: array[int], config: DecontamConfig, c: Coefficients) -> Iterable[int]:
    """Index positions of n-grams found in at least `max_common_docs` reference documents."""
    seen_in: dict[int, int] = {}
    for path in config.common_texts:
        for text in read_texts(path, config.fields):
            for h in set(shingle_hashes_pure(word_token_values(text), c)):
                j = bisect_left(hashes, h)
                if j < len(hashes) and hashes[j] == h:
                    seen_in[j] = seen_in.get(j, 0) + 1
    return [j for j, n in seen_in.items() if n >= config.max_common_docs]
