"""MinHash sketches: pinned values (a silent hash change invalidates every stored signature), the
payload format, and the similarity estimators."""

from __future__ import annotations

import hashlib

import pytest

from thresher.dedup import kernels
from thresher.dedup.kernels import Sketch
from thresher.dedup.minhash import (
    MinHasher,
    PreparedSketch,
    decode_sketch,
    encode_sketch,
    estimate_jaccard,
    prepared_jaccard,
    sample_jaccard,
    signature_bytes,
)
from thresher.dedup.shingles import char_tokens, detect_kind, tokenize, word_token_values

TEXT = "The quick brown fox jumps over the lazy dog while the five boxing wizards jump quickly."
KERNELS = ["pure", pytest.param("numpy", marks=pytest.mark.skipif(not kernels.numpy_available(), reason="numpy"))]

# Pinned on 2026-11-30 with seed 0. Re-pin only deliberately: stored signatures become incomparable.
PINNED = {
    "one_permutation": (
        [1952463229, 422707856, 3418361664, 807558424, 2809483845, 3997784317],
        "3934c8c38cb44dd9e8705e8d24d25054",
    ),
    "k_permutation": (
        [124564491, 206464248, 373934580, 707018115, 82004768, 83296616],
        "be4f53d6172b35dd851766a49375f64b",
    ),
}


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("scheme", ["one_permutation", "k_permutation"])
def test_signature_values_are_pinned(scheme: str, kernel: str) -> None:
    sketch = MinHasher(128, scheme=scheme, kernel=kernel).sketch(TEXT)  # type: ignore[arg-type]
    assert sketch is not None
    head, digest = PINNED[scheme]
    assert sketch.signature[:6] == head
    assert hashlib.sha256(encode_sketch(sketch)).hexdigest()[:32] == digest
    assert sketch.sample[:3] == [93814814, 254235786, 419002177]
    assert sketch.complete


def test_hash_constants_and_token_values_are_pinned() -> None:
    c = kernels.make_coefficients("one_permutation", 128, 5, 0)
    assert (c.window[0], c.offset) == (0x910A2DEC89025CC1, 0xC34D0BFF90150280)
    assert word_token_values("Hello, World") == [907060870, 980881731]  # CRC-32 of b"hello", b"world"


def test_payload_round_trips_and_exposes_signature_bytes() -> None:
    sketch = Sketch([1, 2, 2**32 - 1], [5, 9], True)
    payload = encode_sketch(sketch)
    assert len(payload) == 8 + 4 * 5
    assert decode_sketch(payload) == sketch
    assert bytes(signature_bytes(payload)) == b"\x01\x00\x00\x00\x02\x00\x00\x00\xff\xff\xff\xff"


def test_decode_rejects_foreign_payload() -> None:
    with pytest.raises(ValueError, match="not a thresher MinHash payload"):
        decode_sketch(b"\x09\x00\x01\x00\x00\x00\x00\x00abcd")


def test_estimate_is_fraction_of_equal_positions() -> None:
    assert estimate_jaccard([1, 2, 3, 4], [1, 2, 0, 0]) == 0.5
    with pytest.raises(ValueError):
        estimate_jaccard([1], [1, 2])


def test_sample_jaccard_uses_only_ids_below_the_smaller_incomplete_maximum() -> None:
    # a is complete {1,2,3,10}; b is a bottom-3 sample {1,3,4} of a larger set: only ids <= 4 count
    assert sample_jaccard([1, 2, 3, 10], True, [1, 3, 4], False) == pytest.approx(2 / 4)
    assert sample_jaccard([1, 2], True, [1, 2], True) == 1.0


def test_short_text_has_no_sketch_and_case_punctuation_do_not_matter() -> None:
    h = MinHasher(64)
    assert h.sketch("four words only here") is None
    assert h.sketch(TEXT) == h.sketch(TEXT.upper().replace(" ", "  ,"))


def test_script_detection_picks_char_tokens_for_cjk_and_thai_only() -> None:
    assert detect_kind("これは日本語の文章です。東京は晴れです。") == "char"
    assert detect_kind("ภาษาไทยเขียนติดกันโดยไม่มีช่องว่าง") == "char"
    assert detect_kind("한국어는 띄어쓰기를 합니다") == "word"
    assert detect_kind("An English page quoting 東京 once.") == "word"
    assert tokenize("東京 は、晴れ!").kind == "char"
    assert char_tokens("東京 は、晴れ!") == "東京は晴れ"


@pytest.mark.parametrize("sample_size", [1024, 8])  # complete samples, and truncated ones
def test_prepared_sketches_give_the_sample_jaccard(sample_size):
    import random

    rng = random.Random(4)
    words = [f"w{i}" for i in range(300)]
    hasher = MinHasher(sample_size=sample_size, kernel="pure")
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(6, 120))) for _ in range(12)]
    sketches = [hasher.sketch(t) for t in texts]
    for a in sketches:
        for b in sketches:
            pa, pb = PreparedSketch(encode_sketch(a)), PreparedSketch(encode_sketch(b))
            assert list(pa.signature) == a.signature and pa.sample == a.sample and pa.complete == a.complete
            assert prepared_jaccard(pa, pb) == sample_jaccard(a.sample, a.complete, b.sample, b.complete)
    with pytest.raises(ValueError):
        PreparedSketch(b"\x09\x00\x01\x00\x00\x00\x00\x00abcd")


def test_auto_kernel_starts_pure_and_resolves_after_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """`auto` hashes its first documents with the pure kernel (NumPy's import costs more than it
    saves on a small build) and then resolves; every sketch equals the pure kernel's throughout.
    Where the pure kernel runs compiled (faster than NumPy's), `auto` stays on it."""
    monkeypatch.setattr(kernels, "AUTO_PURE_DOCUMENTS", 3)

    def kernels_used(hasher: MinHasher) -> list[str]:
        pure = MinHasher(kernel="pure")
        used = []
        for i in range(6):
            text = f"{TEXT} document {i} " + " ".join(f"w{i * j}" for j in range(40))
            assert hasher.sketch(text) == pure.sketch(text)
            used.append(hasher.kernel)
        return used

    if kernels.compiled_available():
        assert kernels_used(MinHasher(kernel="auto")) == ["pure"] * 6
    monkeypatch.setattr(kernels, "compiled_available", lambda: False)
    later = "numpy" if kernels.numpy_available() else "pure"
    assert kernels_used(MinHasher(kernel="auto")) == ["pure", "pure", later, later, later, later]
