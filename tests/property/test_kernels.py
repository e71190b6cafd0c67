"""The NumPy kernels give bit-identical results to the pure-Python reference, and MinHash estimates
stay within statistical bounds of the true Jaccard similarity."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.dedup import kernels
from thresher.dedup.minhash import MinHasher, estimate_jaccard, sample_jaccard
from thresher.dedup.shingles import shingle_set, tokenize, word_token_array, word_token_values

pytest.importorskip("numpy")

token_values = st.lists(st.integers(min_value=0, max_value=2**32 - 1), max_size=300)
schemes = st.sampled_from(["one_permutation", "k_permutation"])
sizes = st.integers(min_value=1, max_value=7)


@settings(max_examples=150, deadline=None)
@given(
    tokens=token_values,
    scheme=schemes,
    shingle_size=sizes,
    seed=st.integers(0, 2**64 - 1),
    log_k=st.integers(0, 8),
    sample_size=st.integers(0, 64),
)
def test_numpy_minhash_is_bit_identical_to_pure(
    tokens: list[int], scheme: str, shingle_size: int, seed: int, log_k: int, sample_size: int
) -> None:
    c = kernels.make_coefficients(scheme, 1 << log_k, shingle_size, seed)  # type: ignore[arg-type]
    assert kernels.minhash_numpy(tokens, c, sample_size) == kernels.minhash_pure(tokens, c, sample_size)


@settings(max_examples=150, deadline=None)
@given(tokens=token_values, shingle_size=sizes, seed=st.integers(0, 2**64 - 1))
def test_numpy_simhash_is_bit_identical_to_pure(tokens: list[int], shingle_size: int, seed: int) -> None:
    c = kernels.make_coefficients("one_permutation", 1, shingle_size, seed)
    assert kernels.simhash_numpy(tokens, c) == kernels.simhash_pure(tokens, c)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=400), scheme=schemes)
def test_numpy_and_pure_sketches_agree_on_any_text(text: str, scheme: str) -> None:
    pure = MinHasher(64, scheme=scheme, kernel="pure", sample_size=32)  # type: ignore[arg-type]
    fast = MinHasher(64, scheme=scheme, kernel="numpy", sample_size=32)  # type: ignore[arg-type]
    assert pure.sketch(text) == fast.sketch(text)


@settings(max_examples=150, deadline=None)
@given(text=st.one_of(st.text(max_size=200), st.text(alphabet=st.characters(max_codepoint=127), max_size=200)))
def test_word_token_array_equals_word_token_values(text: str) -> None:
    assert word_token_array(text).tolist() == word_token_values(text)


@settings(max_examples=60, deadline=None)
@given(tokens=st.lists(st.integers(0, 2**32 - 1), min_size=5, max_size=200), scheme=schemes)
def test_signature_ignores_duplicate_shingles_and_is_deterministic(tokens: list[int], scheme: str) -> None:
    c = kernels.make_coefficients(scheme, 32, 1, 7)  # type: ignore[arg-type]
    once = kernels.minhash_pure(tokens, c)
    assert once == kernels.minhash_pure(tokens + tokens[::-1], c)
    assert once == kernels.minhash_pure(list(tokens), kernels.make_coefficients(scheme, 32, 1, 7))  # type: ignore[arg-type]


def _pair(rnd: random.Random, n_union: int, jaccard: float) -> tuple[list[int], list[int]]:
    """Two token sets (shingle size 1) with exactly the given Jaccard over n_union elements."""
    universe = rnd.sample(range(2**32), n_union)
    common = round(jaccard * n_union)
    rest = universe[common:]
    half = len(rest) // 2
    return universe[:common] + rest[:half], universe[:common] + rest[half:]


@pytest.mark.parametrize("scheme", ["one_permutation", "k_permutation"])
@pytest.mark.parametrize("n_union", [60, 400, 2000])
def test_estimates_stay_within_statistical_bounds_of_true_jaccard(scheme: str, n_union: int) -> None:
    """Over 160 random pairs per setting (8 seeds x 20 pairs), the mean error is ~0 and the spread
    matches sqrt(J(1-J)/k); one-permutation hashing is at most as variable, densification adds a
    little for sets smaller than k. (NumPy kernel for speed: it is bit-identical, see above.)"""
    k = 128
    rnd = random.Random(n_union)
    for jaccard in (0.5, 0.8):
        errors = []
        for seed in range(8):
            c = kernels.make_coefficients(scheme, k, 1, seed)  # type: ignore[arg-type]
            for _ in range(20):
                a, b = _pair(rnd, n_union, jaccard)
                true = len(set(a) & set(b)) / len(set(a) | set(b))
                sa, sb = kernels.minhash_numpy(a, c), kernels.minhash_numpy(b, c)
                assert sa is not None and sb is not None
                errors.append(estimate_jaccard(sa.signature, sb.signature) - true)
        sigma = math.sqrt(jaccard * (1 - jaccard) / k)
        mean = sum(errors) / len(errors)
        rmse = math.sqrt(sum(e * e for e in errors) / len(errors))
        assert abs(mean) < 4 * sigma / math.sqrt(len(errors)) + 0.01, (jaccard, mean)
        assert rmse < 1.35 * sigma, (jaccard, rmse, sigma)


@settings(max_examples=80, deadline=None)
@given(
    a=st.sets(st.integers(0, 2**32 - 1), min_size=1, max_size=300),
    b=st.sets(st.integers(0, 2**32 - 1), min_size=1, max_size=300),
    shared=st.sets(st.integers(0, 2**32 - 1), max_size=300),
)
def test_sample_jaccard_is_exact_for_complete_samples(a: set[int], b: set[int], shared: set[int]) -> None:
    a, b = a | shared, b | shared
    expected = len(a & b) / len(a | b)
    assert sample_jaccard(sorted(a), True, sorted(b), True) == pytest.approx(expected, abs=1e-12)


def test_sample_jaccard_of_bottom_k_samples_is_close_to_exact() -> None:
    rnd = random.Random(3)
    universe = rnd.sample(range(2**32), 20_000)
    a, b = set(universe[:15_000]), set(universe[3_000:18_000])  # J = 12000 / 18000
    k = 1024
    est = sample_jaccard(sorted(a)[:k], False, sorted(b)[:k], False)
    assert est == pytest.approx(2 / 3, abs=4 * math.sqrt((2 / 9) / k))


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_tokenization_matches_the_reference_shingle_definition(text: str) -> None:
    """Distinct token windows of the hashed path correspond one to one to reference shingles
    (no CRC-32 collision among a handful of tokens)."""
    toks = tokenize(text)
    ref = shingle_set(text, 3, toks.kind)
    windows = {tuple(toks.values[i : i + 3]) for i in range(len(toks.values) - 2)}
    assert len(windows) == len(ref)
