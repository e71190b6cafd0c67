"""MinHash sketches of documents, their wire format, and similarity estimates.

A `MinHasher` turns text into a `Sketch`: a MinHash signature (`num_hashes` 32-bit values, either
classic k-permutation MinHash or one-permutation hashing with densification, see
`thresher.dedup.kernels`) plus the bottom-`sample_size` 32-bit shingle ids. The sample makes exact
Jaccard verification affordable: when a document has at most `sample_size` distinct shingles the
sample *is* its shingle set and the Jaccard of two such documents is exact; above that, the two
bottom-k samples give the Jaccard of the union's bottom values (Broder 1997; Cohen & Kaplan 2007),
whose error (sqrt(J(1-J)/k), 0.0125 at J = 0.8, k = 1024) is a third of the signature's at 128
hashes.

Payload layout (little-endian), written once per document in the scan phase and read back only for
documents that collide:

    u8 version (=1) | u8 flags (bit 0: sample complete) | u16 num_hashes | u32 sample length
    num_hashes x u32 signature | sample length x u32 shingle ids, ascending
"""

from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_right
from operator import eq
from typing import Any, Literal

from thresher.dedup import kernels
from thresher.dedup.kernels import KernelName, Scheme, Sketch
from thresher.dedup.shingles import ShingleKind, tokenize

PAYLOAD_VERSION = 1
_HEADER = struct.Struct("<BBHI")
SKETCH_HEADER_SIZE = _HEADER.size
_FLAG_COMPLETE = 1
_BIG_ENDIAN = sys.byteorder == "big"


def u32_bytes(values: list[int]) -> bytes:
    arr = array("I", values)
    if arr.itemsize != 4:  # pragma: no cover - every supported platform has a 4-byte unsigned int
        arr = array("L", values)
    if _BIG_ENDIAN:  # pragma: no cover
        arr.byteswap()
    return arr.tobytes()


def _u32_list(data: bytes | memoryview) -> array[int]:
    arr = array("I")
    arr.frombytes(data)
    if _BIG_ENDIAN:  # pragma: no cover
        arr.byteswap()
    return arr


def encode_sketch(sketch: Sketch) -> bytes:
    """The payload bytes of a sketch (see the module doc for the layout)."""
    flags = _FLAG_COMPLETE if sketch.complete else 0
    head = _HEADER.pack(PAYLOAD_VERSION, flags, len(sketch.signature), len(sketch.sample))
    return head + u32_bytes(sketch.signature) + u32_bytes(sketch.sample)


def decode_sketch(payload: bytes) -> Sketch:
    """Inverse of `encode_sketch`; raises ValueError on a payload of another version or size."""
    version, flags, k, m = _HEADER.unpack_from(payload)
    if version != PAYLOAD_VERSION or len(payload) != _HEADER.size + 4 * (k + m):
        raise ValueError("not a thresher MinHash payload of this version")
    view = memoryview(payload)
    sig = _u32_list(view[_HEADER.size : _HEADER.size + 4 * k])
    sample = _u32_list(view[_HEADER.size + 4 * k :])
    return Sketch(list(sig), list(sample), bool(flags & _FLAG_COMPLETE))


class PreparedSketch:
    """A payload made ready for many comparisons: the signature decoded at once (every comparison
    needs it), the shingle-id sample only when a comparison gets past the signature estimate, and
    then kept as a set as well, so that the Jaccard of two complete samples is one intersection."""

    __slots__ = ("signature", "complete", "sample_size", "_payload", "_sample", "_set")

    def __init__(self, payload: bytes) -> None:
        version, flags, k, m = _HEADER.unpack_from(payload)
        if version != PAYLOAD_VERSION or len(payload) != _HEADER.size + 4 * (k + m):
            raise ValueError("not a thresher MinHash payload of this version")
        self.signature = _u32_list(memoryview(payload)[_HEADER.size : _HEADER.size + 4 * k])
        self.complete = bool(flags & _FLAG_COMPLETE)
        self.sample_size = m
        self._payload = payload
        self._sample: list[int] | None = None
        self._set: frozenset[int] | None = None

    @property
    def sample(self) -> list[int]:
        if self._sample is None:
            k = len(self.signature)
            self._sample = list(_u32_list(memoryview(self._payload)[_HEADER.size + 4 * k :]))
        return self._sample

    @property
    def sample_set(self) -> frozenset[int]:
        if self._set is None:
            self._set = frozenset(self.sample)
        return self._set


def prepared_jaccard(a: PreparedSketch, b: PreparedSketch) -> float:
    """`sample_jaccard` of two prepared sketches (the same value), with the complete-sample case as
    one set intersection."""
    if a.complete and b.complete:
        sa, sb = a.sample_set, b.sample_set
        inter = len(sa & sb)
        union = len(sa) + len(sb) - inter
        return inter / union if union else 0.0
    return sample_jaccard(a.sample, a.complete, b.sample, b.complete)


def signature_bytes(payload: bytes) -> memoryview:
    """The signature part of a payload, for band keys, without decoding it."""
    k = _HEADER.unpack_from(payload)[2]
    return memoryview(payload)[_HEADER.size : _HEADER.size + 4 * k]


def estimate_jaccard(sig_a: list[int] | array[int], sig_b: list[int] | array[int]) -> float:
    """The fraction of equal signature positions: an unbiased estimate of the Jaccard similarity."""
    if len(sig_a) != len(sig_b) or not sig_a:
        raise ValueError(f"signatures of different lengths: {len(sig_a)} vs {len(sig_b)}")
    equal: int = sum(map(eq, sig_a, sig_b))
    return equal / len(sig_a)


def sample_jaccard(a: list[int], a_complete: bool, b: list[int], b_complete: bool) -> float:
    """Jaccard similarity from two bottom-k samples of shingle ids (each sorted ascending).

    Exact when both samples are complete. Otherwise only ids up to tau, the smaller of the two
    incomplete samples' largest id, are known for both sets; the estimate is the share of the
    union's ids <= tau that both contain."""
    tau = None
    if not a_complete and a:
        tau = a[-1]
    if not b_complete and b:
        tau = b[-1] if tau is None else min(tau, b[-1])
    if tau is not None:
        a = a[: bisect_right(a, tau)]
        b = b[: bisect_right(b, tau)]
    sa = set(a)
    inter = len(sa.intersection(b))
    union = len(sa) + len(b) - inter
    return inter / union if union else 0.0


class MinHasher:
    """Text -> MinHash `Sketch`, deterministic for a given configuration.

    Word documents are shingled in `shingle_size`-word windows, documents in scripts without spaces
    in `char_shingle_size`-character windows (see `thresher.dedup.shingles`). A document with fewer
    tokens than its shingle size has no shingles: `sketch` returns None. `kernel` picks the pure or
    NumPy implementation; both give identical sketches.
    """

    __slots__ = ("num_hashes", "scheme", "shingle_kind", "sample_size", "_kernel", "_coeffs", "_fn", "_array")

    def __init__(
        self,
        num_hashes: int = 128,
        *,
        shingle_size: int = 5,
        char_shingle_size: int = 5,
        shingle_kind: ShingleKind = "auto",
        scheme: Scheme = "one_permutation",
        seed: int = 0,
        sample_size: int = 1024,
        kernel: KernelName = "auto",
    ) -> None:
        self.num_hashes = num_hashes
        self.scheme = scheme
        self.shingle_kind = shingle_kind
        self.sample_size = sample_size
        self._kernel = kernels.KernelSwitch(kernel, pure_is_compiled=kernels.compiled_available())
        word = kernels.make_coefficients(scheme, num_hashes, shingle_size, seed)
        char = (
            word
            if char_shingle_size == shingle_size
            else kernels.make_coefficients(scheme, num_hashes, char_shingle_size, seed)
        )
        self._coeffs = {"word": word, "char": char}
        self._use_kernel()

    @property
    def kernel(self) -> Literal["pure", "numpy"]:
        return self._kernel.current

    def _use_kernel(self) -> None:
        self._array = self.kernel == "numpy"
        self._fn = kernels.minhash_numpy if self._array else kernels.minhash_small

    def sketch(self, text: str, memo: dict[str, Any] | None = None) -> Sketch | None:
        if self._kernel.count():
            self._use_kernel()
        toks = tokenize(text, self.shingle_kind, array=self._array, memo=memo)
        return self._fn(toks.values, self._coeffs[toks.kind], self.sample_size)

    def signature(self, text: str) -> list[int] | None:
        sk = self.sketch(text)
        return None if sk is None else sk.signature
