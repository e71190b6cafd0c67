"""MinHash and SimHash kernels: a pure-Python reference and a NumPy kernel with identical output.

Every kernel starts from a document's token values (`thresher.dedup.shingles`) and works in
64-bit modular arithmetic, which Python ints reproduce with `& MASK64` and NumPy's `uint64` does by
wrapping. That is the whole trick that makes the two paths bit-identical: no floating point, no
platform-dependent hash, the same integer formulas. `tests/property/test_kernels.py` checks the
equality with hypothesis and `tests/unit/dedup/test_minhash.py` pins exact values.

Shingle hash: a window of k token values t_0..t_{k-1} hashes to
    h = (offset + sum_j m_j * t_j) mod 2^64
with odd random 64-bit multipliers m_j: multilinear hashing, strongly universal on its high bits
(Lemire & Kaser, "Strongly universal string hashing is fast", 2014). The shingle id used for the
exact-Jaccard sample and k-permutation MinHash is the top 32 bits, `h >> 32`.

MinHash schemes (values are 32-bit):
- `k_permutation`: classic MinHash (Broder 1997): for each of k hash functions
  g_i(x) = (a_i * x + b_i) mod 2^64 (multiply-shift, Dietzfelbinger 1996) over 32-bit shingle ids
  x, the signature value is min_x g_i(x) >> 32. Cost O(k * n).
- `one_permutation`: one permutation hashing (Li, Owen & Zhang, NIPS 2012): the single hash h of
  each shingle picks a bin from its top log2(k) bits; a bin keeps the minimum h that falls in it,
  stored as the 32 bits below the bin bits. Cost O(n). Empty bins (short documents) are filled by
  optimal densification (Shrivastava, ICML 2017): bin i borrows the value of the first originally
  non-empty bin in a fixed pseudo-random probe sequence for i.

NumPy is imported lazily, only when a NumPy kernel is asked for (the `fast` extra).

The pure kernel's MinHash runs compiled where the package was built with a C compiler
(`thresher.dedup._minhash`, from `_minhash.c`: the same integers, computed in C; the Python code
below stays the reference, and runs where the module is absent or THRESHER_PURE_PYTHON=1 is set).
With it, `auto` never switches to NumPy: the compiled kernel is faster per document than NumPy's
(`benchmarks/startup_costs.py`), and costs no import.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from thresher.compiled import compiled_module

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1
EMPTY = -1  # an empty one-permutation bin before densification

Scheme = Literal["one_permutation", "k_permutation"]
KernelName = Literal["auto", "pure", "numpy"]

#: Length of each bin's pseudo-random probe sequence for densification; beyond it the probe
#: continues circularly (i+1, i+2, ...), so the table stays small for large k.
MAX_PROBES = 64
#: Shingle ids processed per block by the NumPy k-permutation kernel (bounds memory on 10 MB docs:
#: k * block * 8 bytes = 8 MiB at k = 128).
NUMPY_BLOCK = 8192


def splitmix64(state: int) -> tuple[int, int]:
    """One step of SplitMix64 (Steele, Lea & Flood 2014): (new state, output)."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def fmix64(h: int) -> int:
    """MurmurHash3's 64-bit finalizer: spreads every input bit over every output bit."""
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK64
    return h ^ (h >> 33)


def _stream(seed: int, salt: int) -> Any:
    state = (seed * 0x2545F4914F6CDD1D + salt) & MASK64
    while True:
        state, out = splitmix64(state)
        yield out


@dataclass(frozen=True, slots=True)
class Coefficients:
    """Every random constant of a MinHash/SimHash configuration, derived from `seed` alone."""

    scheme: Scheme
    num_hashes: int
    shingle_size: int
    window: tuple[int, ...]  # multilinear multipliers, odd, one per token in a shingle
    offset: int
    perm_a: tuple[int, ...]  # k_permutation multipliers (odd)
    perm_b: tuple[int, ...]
    bin_bits: int  # one_permutation: log2(num_hashes)
    probes: tuple[tuple[int, ...], ...]  # one_permutation: densification probe order per bin


def make_coefficients(scheme: Scheme, num_hashes: int, shingle_size: int, seed: int = 0) -> Coefficients:
    """The constants for (scheme, num_hashes, shingle_size, seed); equal inputs, equal constants."""
    if num_hashes < 1:
        raise ValueError(f"num_hashes must be >= 1, got {num_hashes}")
    if shingle_size < 1:
        raise ValueError(f"shingle_size must be >= 1, got {shingle_size}")
    rnd = _stream(seed, 1)
    window = tuple(next(rnd) | 1 for _ in range(shingle_size))
    offset = next(rnd)
    perm_a: tuple[int, ...] = ()
    perm_b: tuple[int, ...] = ()
    bin_bits = 0
    probes: tuple[tuple[int, ...], ...] = ()
    if scheme == "k_permutation":
        prnd = _stream(seed, 2)
        perm_a = tuple(next(prnd) | 1 for _ in range(num_hashes))
        perm_b = tuple(next(prnd) for _ in range(num_hashes))
    elif scheme == "one_permutation":
        if num_hashes & (num_hashes - 1) or num_hashes > 1 << 24:
            raise ValueError(f"one_permutation needs a power of two num_hashes <= 2^24, got {num_hashes}")
        bin_bits = num_hashes.bit_length() - 1
        drnd = _stream(seed, 3)
        table = []
        for i in range(num_hashes):
            others = [j for j in range(num_hashes) if j != i] if num_hashes <= 4 * MAX_PROBES else None
            if others is None:  # large k: sample MAX_PROBES distinct bins instead of a full shuffle
                seen: dict[int, None] = {}
                while len(seen) < MAX_PROBES:
                    j = next(drnd) % num_hashes
                    if j != i:
                        seen[j] = None
                table.append(tuple(seen))
                continue
            for pos in range(len(others) - 1, 0, -1):  # Fisher-Yates
                swap = next(drnd) % (pos + 1)
                others[pos], others[swap] = others[swap], others[pos]
            table.append(tuple(others[:MAX_PROBES]))
        probes = tuple(table)
    else:
        raise ValueError(f"unknown MinHash scheme {scheme!r}")
    return Coefficients(scheme, num_hashes, shingle_size, window, offset, perm_a, perm_b, bin_bits, probes)


def densify(bins: list[int], probes: tuple[tuple[int, ...], ...]) -> list[int]:
    """Fill each EMPTY bin from the first originally non-empty bin of its probe sequence.

    Needs at least one non-empty bin. Shared by both kernels (it touches at most k values)."""
    if EMPTY not in bins:
        return bins
    k = len(bins)
    out = list(bins)
    i = bins.index(EMPTY)
    while True:
        for j in probes[i]:
            if bins[j] != EMPTY:
                out[i] = bins[j]
                break
        else:
            for step in range(1, k):
                j = (i + step) % k
                if bins[j] != EMPTY:
                    out[i] = bins[j]
                    break
        try:
            i = bins.index(EMPTY, i + 1)
        except ValueError:
            return out


@dataclass(frozen=True, slots=True)
class Sketch:
    """A document's MinHash signature and its bottom-`sample_size` shingle ids (sorted ascending);
    `complete` when the sample holds every distinct shingle id, so Jaccard on it is exact."""

    signature: list[int]
    sample: list[int]
    complete: bool


# ---------------------------------------------------------------------------------------------
# pure Python


def shingle_hashes_pure(tokens: Sequence[int], c: Coefficients) -> list[int]:
    """The 64-bit multilinear hash of every window of `shingle_size` tokens (empty if too few)."""
    k = c.shingle_size
    n = len(tokens) - k + 1
    if n <= 0:
        return []
    off = c.offset
    if k == 5:  # the default, unrolled: one pass instead of five
        m0, m1, m2, m3, m4 = c.window
        t = tokens
        return [
            (m0 * a + m1 * b + m2 * d + m3 * e + m4 * f + off) & MASK64
            for a, b, d, e, f in zip(t, t[1:], t[2:], t[3:], t[4:], strict=False)
        ]
    m0 = c.window[0]
    acc = [m0 * t for t in tokens[:n]]
    for j in range(1, k):
        m = c.window[j]
        acc = [a + m * t for a, t in zip(acc, tokens[j : j + n], strict=True)]
    return [(a + off) & MASK64 for a in acc]


def minhash_pure(tokens: Sequence[int], c: Coefficients, sample_size: int = 0) -> Sketch | None:
    """Signature and shingle-id sample of one document; None when it has fewer tokens than a shingle."""
    hashes = shingle_hashes_pure(tokens, c)
    if not hashes:
        return None
    complete, sample = False, []
    ids: set[int] = set()
    if sample_size > 0 or c.scheme == "k_permutation":
        ids = {h >> 32 for h in hashes}
        if sample_size > 0:
            complete = len(ids) <= sample_size
            sample = sorted(ids) if complete else heapq.nsmallest(sample_size, ids)
    if c.scheme == "k_permutation":
        xs = list(ids)
        sig = [min([(a * x + b) & MASK64 for x in xs]) >> 32 for a, b in zip(c.perm_a, c.perm_b, strict=True)]
        return Sketch(sig, sample, complete)
    shift = 64 - c.bin_bits
    vshift = shift - 32
    smallest: dict[int, int] = {}
    get = smallest.get
    above = 1 << 64
    for h in hashes:
        b = h >> shift
        if h < get(b, above):
            smallest[b] = h
    bins = [EMPTY] * c.num_hashes
    for b, h in smallest.items():
        bins[b] = (h >> vshift) & MASK32
    return Sketch(densify(bins, c.probes), sample, complete)


_COMPILED: Any = compiled_module("thresher.dedup._minhash")


def compiled_available() -> bool:
    return _COMPILED is not None


def minhash_compiled(tokens: Sequence[int], c: Coefficients, sample_size: int = 0) -> Sketch | None:
    """`minhash_pure`'s result from the compiled kernel (densification stays here: it touches at
    most k values)."""
    out = _COMPILED.minhash(tokens, c.window, c.offset, c.scheme == "k_permutation", c.bin_bits, c.perm_a,
                            c.perm_b, sample_size)
    if out is None:
        return None
    values, sample, complete = out
    if c.scheme == "one_permutation":
        values = densify(values, c.probes)
    return Sketch(values, sample, complete)


# The pure kernel's MinHash as it runs: compiled where built (identical values), else the reference.
minhash_small = minhash_compiled if _COMPILED is not None else minhash_pure


def simhash_pure(tokens: Sequence[int], c: Coefficients) -> tuple[int, int] | None:
    """(fingerprint, number of distinct features): 64-bit SimHash (Charikar 2002) over the distinct
    shingles, each feature weight 1, its hash passed through `fmix64`; a bit is set when strictly
    more than half of the features have it. None when there are no shingles."""
    hashes = shingle_hashes_pure(tokens, c)
    if not hashes:
        return None
    feats = {fmix64(h) for h in hashes}
    n = len(feats)
    bits = "".join(format(f, "064b") for f in feats)  # column j holds bit 63 - j of every feature
    out = "".join("1" if 2 * bits[j::64].count("1") > n else "0" for j in range(64))
    return int(out, 2), n


# ---------------------------------------------------------------------------------------------
# NumPy (the `fast` extra)


def _np() -> Any:
    import numpy

    return numpy


def numpy_available() -> bool:
    try:
        _np()
    except ImportError:
        return False
    return True


def shingle_hashes_numpy(tokens: Sequence[int], c: Coefficients) -> Any:
    np = _np()
    k = c.shingle_size
    n = len(tokens) - k + 1
    if n <= 0:
        return np.empty(0, dtype=np.uint64)
    t = np.asarray(tokens, dtype=np.uint64)
    # uint64 array arithmetic wraps modulo 2^64 without warnings (only scalar ops warn)
    acc = t[:n] * np.uint64(c.window[0])
    for j in range(1, k):
        acc += t[j : j + n] * np.uint64(c.window[j])
    acc += np.uint64(c.offset)
    return acc


def minhash_numpy(tokens: Sequence[int], c: Coefficients, sample_size: int = 0) -> Sketch | None:
    """Same result as `minhash_pure`, computed with NumPy."""
    np = _np()
    hashes = shingle_hashes_numpy(tokens, c)
    if hashes.size == 0:
        return None
    hashes.sort()
    complete, sample = False, []
    if sample_size > 0 or c.scheme == "k_permutation":
        ids = hashes >> np.uint64(32)  # sorted, since the hashes are
        if ids.size > 1:
            ids = ids[np.concatenate(([True], ids[1:] != ids[:-1]))]  # distinct
        if sample_size > 0:
            complete = ids.size <= sample_size
            sample = ids[:sample_size].tolist()
    if c.scheme == "k_permutation":
        a = np.asarray(c.perm_a, dtype=np.uint64)[:, None]
        b = np.asarray(c.perm_b, dtype=np.uint64)[:, None]
        best = None
        with np.errstate(over="ignore"):
            for start in range(0, ids.size, NUMPY_BLOCK):
                block = ids[None, start : start + NUMPY_BLOCK]
                m = (a * block + b).min(axis=1)
                best = m if best is None else np.minimum(best, m)
        return Sketch((best >> np.uint64(32)).tolist(), sample, complete)
    shift = np.uint64(64 - c.bin_bits)
    bins = hashes >> shift
    first = np.flatnonzero(np.concatenate(([True], bins[1:] != bins[:-1])))
    out = np.full(c.num_hashes, EMPTY, dtype=np.int64)
    vals = (hashes[first] >> np.uint64(64 - c.bin_bits - 32)) & np.uint64(MASK32)
    out[bins[first].astype(np.int64)] = vals.astype(np.int64)
    return Sketch(densify(out.tolist(), c.probes), sample, complete)


def simhash_numpy(tokens: Sequence[int], c: Coefficients) -> tuple[int, int] | None:
    """Same result as `simhash_pure`, computed with NumPy."""
    np = _np()
    h = shingle_hashes_numpy(tokens, c)
    if h.size == 0:
        return None
    with np.errstate(over="ignore"):
        h = h ^ (h >> np.uint64(33))
        h = h * np.uint64(0xFF51AFD7ED558CCD)
        h = h ^ (h >> np.uint64(33))
        h = h * np.uint64(0xC4CEB9FE1A85EC53)
        h = h ^ (h >> np.uint64(33))
    feats = np.unique(h)
    n = feats.size
    shifts = np.arange(64, dtype=np.uint64)
    counts = np.zeros(64, dtype=np.int64)
    for start in range(0, n, NUMPY_BLOCK):
        block = feats[start : start + NUMPY_BLOCK, None]
        counts += ((block >> shifts) & np.uint64(1)).sum(axis=0, dtype=np.int64)
    value = 0
    for bit in range(64):
        if 2 * int(counts[bit]) > n:
            value |= 1 << bit
    return value, int(n)


# ---------------------------------------------------------------------------------------------


def resolve_kernel(name: KernelName) -> Literal["pure", "numpy"]:
    """`auto` means NumPy when it is installed; asking for `numpy` without it is an error."""
    if name == "pure":
        return "pure"
    if name == "numpy":
        _np()  # raises ImportError with the module name
        return "numpy"
    return "numpy" if numpy_available() else "pure"


# `auto` starts on the pure kernel and resolves (NumPy when installed) after this many documents.
# Importing NumPy costs ~0.13 s of CPU; its kernel saves ~0.34 ms a real 3.7 KB page (523 -> 178 us),
# so a process must hash ~380 such pages before the import pays (~2,800 of the demo's 1.1 KB pages:
# short texts gain less). A small build, or a task of a few hundred pages, is faster without it.
# Both kernels give identical results, so when the switch happens changes no output.
# (`benchmarks/startup_costs.py`, results/startup_costs.json)
AUTO_PURE_DOCUMENTS = 512


class KernelSwitch:
    """The kernel a hasher uses now: the one asked for, or for `auto` the pure kernel for its first
    AUTO_PURE_DOCUMENTS documents and `resolve_kernel("auto")` after; with `pure_is_compiled` (the
    hasher's pure kernel runs compiled, faster than NumPy's) `auto` stays on the pure kernel."""

    __slots__ = ("current", "_left")

    def __init__(self, name: KernelName, pure_is_compiled: bool = False) -> None:
        if name == "auto":
            self.current: Literal["pure", "numpy"] = "pure"
            self._left = 0 if pure_is_compiled else AUTO_PURE_DOCUMENTS
        else:
            self.current, self._left = resolve_kernel(name), 0

    def count(self) -> bool:
        """One more document; True when the kernel has just changed."""
        if not self._left:
            return False
        self._left -= 1
        if self._left:
            return False
        self.current = resolve_kernel("auto")
        return self.current != "pure"
