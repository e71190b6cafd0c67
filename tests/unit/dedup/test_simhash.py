"""SimHash fingerprints, block-permutation keys and the short-text rule."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from thresher.dedup import kernels
from thresher.dedup.simhash import Fingerprint, SimHasher, block_masks, fingerprint_keys, hamming

TEXT = "The quick brown fox jumps over the lazy dog while the five boxing wizards jump quickly."
KERNELS = ["pure", pytest.param("numpy", marks=pytest.mark.skipif(not kernels.numpy_available(), reason="numpy"))]


@pytest.mark.parametrize("kernel", KERNELS)
def test_fingerprint_is_pinned(kernel: str) -> None:
    fp = SimHasher(min_shingles=1, kernel=kernel).fingerprint(TEXT)  # type: ignore[arg-type]
    assert fp == Fingerprint(2498682394055914641)


def test_block_masks_partition_bits_and_cover_every_combination() -> None:
    masks = block_masks(3)
    assert len(masks) == 20  # C(6, 3)
    assert all(m.bit_count() in (31, 32, 33) for m in masks)
    full = 0
    for m in masks:
        full |= m
    assert full == 2**64 - 1


@pytest.mark.parametrize("max_hamming", [0, 1, 3, 5])
def test_any_pair_within_max_hamming_shares_a_key(max_hamming: int) -> None:
    """Pigeonhole: flipping <= max_hamming bits leaves some block combination intact."""
    masks = block_masks(max_hamming)
    rnd = random.Random(max_hamming)
    for _ in range(300):
        a = rnd.getrandbits(64)
        b = a
        for bit in rnd.sample(range(64), max_hamming):
            b ^= 1 << bit
        assert hamming(a, b) == max_hamming
        assert set(fingerprint_keys(Fingerprint(a), masks)) & set(fingerprint_keys(Fingerprint(b), masks))


def test_unrelated_fingerprints_rarely_share_a_key() -> None:
    masks = block_masks(3)
    rnd = random.Random(1)
    fps = [Fingerprint(rnd.getrandbits(64)) for _ in range(200)]
    keysets = [set(fingerprint_keys(f, masks)) for f in fps]
    assert sum(1 for a, b in combinations(keysets, 2) if a & b) == 0


def test_payload_round_trips() -> None:
    for fp in (Fingerprint(2**64 - 1), Fingerprint(0, True, bytes(range(16)))):
        assert Fingerprint.decode(fp.encode()) == fp
    with pytest.raises(ValueError):
        Fingerprint.decode(b"\x03abc")


def test_short_text_gets_a_token_sequence_digest() -> None:
    h = SimHasher(min_shingles=16)
    short = h.fingerprint("one two three four five six seven")
    assert short is not None and short.short and len(short.digest) == 16
    assert h.fingerprint("ONE two, three four five six seven!") == short
    assert h.fingerprint("one two three four five six eight") != short
    long = h.fingerprint(" ".join(f"w{i}" for i in range(40)))
    assert long is not None and not long.short


def test_auto_kernel_starts_pure_and_resolves_after_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernels, "AUTO_PURE_DOCUMENTS", 2)
    auto, pure = SimHasher(min_shingles=1, kernel="auto"), SimHasher(min_shingles=1, kernel="pure")
    used = []
    for i in range(4):
        text = f"{TEXT} document {i} " + " ".join(f"w{i * j}" for j in range(40))
        assert auto.fingerprint(text) == pure.fingerprint(text)
        used.append(auto.kernel)
    later = "numpy" if kernels.numpy_available() else "pure"
    assert used == ["pure", later, later, later]
