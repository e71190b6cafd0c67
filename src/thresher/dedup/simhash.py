"""SimHash fingerprints (Charikar 2002) and the block-permutation index of Manku, Jain & Das Sarma
("Detecting near-duplicates for web crawling", WWW 2007).

A document's fingerprint is the 64-bit SimHash of its distinct shingles (`thresher.dedup.kernels`).
Two documents are duplicates when their fingerprints differ in at most `max_hamming` bits.

**Candidates by block permutation.** Cut the 64 bits into `max_hamming + KEPT_BLOCKS` contiguous
blocks. Two fingerprints within `max_hamming` bits differ in at most `max_hamming` blocks, so they
agree exactly on at least `KEPT_BLOCKS` of them (pigeonhole) — and in particular on one of the
C(blocks, KEPT_BLOCKS) combinations of blocks. Each combination is one key (the fingerprint masked
to those blocks): every true pair shares a key, and a key keeps ~64 * 3/6 = 32 bits at the default
`max_hamming = 3` (6 blocks, 20 keys), so unrelated documents rarely collide.

**Short-text rule.** With few features a SimHash is unreliable: one changed word replaces
`shingle_size` of a handful of features and flips bits at random, and unrelated short texts are no
longer far apart in expectation. Documents with fewer than `min_shingles` distinct shingles are
therefore not fingerprinted: their key is a digest of their token sequence and they match only a
document with the identical (lower-cased, punctuation-free) token sequence, similarity 1.0.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

from thresher.dedup import kernels
from thresher.dedup.kernels import KernelName
from thresher.dedup.minhash import u32_bytes
from thresher.dedup.shingles import ShingleKind, tokenize

#: Blocks every candidate key keeps; blocks = max_hamming + KEPT_BLOCKS.
KEPT_BLOCKS = 3
_FULL = b"\x01"
_SHORT = b"\x02"


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def block_masks(max_hamming: int, kept_blocks: int = KEPT_BLOCKS) -> list[int]:
    """One 64-bit mask per combination of `kept_blocks` of the `max_hamming + kept_blocks` blocks."""
    blocks = max_hamming + kept_blocks
    bounds = [round(i * 64 / blocks) for i in range(blocks + 1)]
    block = [((1 << (bounds[i + 1] - bounds[i])) - 1) << bounds[i] for i in range(blocks)]
    masks = []
    for combo in combinations(range(blocks), kept_blocks):
        m = 0
        for i in combo:
            m |= block[i]
        masks.append(m)
    return masks


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A document's SimHash, or (`short`) the digest of its token sequence."""

    value: int
    short: bool = False
    digest: bytes = b""

    def encode(self) -> bytes:
        if self.short:
            return _SHORT + self.digest
        return _FULL + self.value.to_bytes(8, "little")

    @classmethod
    def decode(cls, payload: bytes) -> Fingerprint:
        if payload[:1] == _SHORT and len(payload) == 17:
            return cls(0, True, bytes(payload[1:]))
        if payload[:1] == _FULL and len(payload) == 9:
            return cls(int.from_bytes(payload[1:], "little"))
        raise ValueError("not a thresher SimHash payload")


class SimHasher:
    """Text -> `Fingerprint` (None when the text has fewer tokens than one shingle)."""

    __slots__ = ("shingle_kind", "min_shingles", "_coeffs", "_fn", "_kernel", "_array")

    def __init__(
        self,
        *,
        shingle_size: int = 5,
        char_shingle_size: int = 5,
        shingle_kind: ShingleKind = "auto",
        min_shingles: int = 16,
        seed: int = 0,
        kernel: KernelName = "auto",
    ) -> None:
        self.shingle_kind = shingle_kind
        self.min_shingles = min_shingles
        self._kernel = kernels.KernelSwitch(kernel)
        # SimHash reuses the shingle hash of the one-permutation scheme (seeded apart from MinHash).
        word = kernels.make_coefficients("one_permutation", 1, shingle_size, seed ^ 0x5117)
        char = kernels.make_coefficients("one_permutation", 1, char_shingle_size, seed ^ 0x5117)
        self._coeffs = {"word": word, "char": char}
        self._use_kernel()

    @property
    def kernel(self) -> Literal["pure", "numpy"]:
        return self._kernel.current

    def _use_kernel(self) -> None:
        self._array = self.kernel == "numpy"
        self._fn = kernels.simhash_numpy if self._array else kernels.simhash_pure

    def fingerprint(self, text: str, memo: dict[str, Any] | None = None) -> Fingerprint | None:
        if self._kernel.count():
            self._use_kernel()
        toks = tokenize(text, self.shingle_kind, array=self._array, memo=memo)
        res = self._fn(toks.values, self._coeffs[toks.kind])
        if res is None:
            return None
        value, n_features = res
        if n_features < self.min_shingles:
            digest = hashlib.blake2b(
                u32_bytes([int(v) for v in toks.values]), digest_size=16, person=b"simhash-short"
            ).digest()
            return Fingerprint(0, True, digest)
        return Fingerprint(value)


def fingerprint_keys(fp: Fingerprint, masks: list[int]) -> list[bytes]:
    """The 16-byte candidate keys of a fingerprint: one per block combination (or the short digest)."""
    if fp.short:
        return [hashlib.blake2b(fp.digest, digest_size=16, person=b"sh-short").digest()]
    out = []
    for i, mask in enumerate(masks):
        data = (fp.value & mask).to_bytes(8, "little")
        out.append(hashlib.blake2b(data, digest_size=16, person=b"sh" + i.to_bytes(4, "little")).digest())
    return out
