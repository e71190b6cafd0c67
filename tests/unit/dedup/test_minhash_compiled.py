"""The compiled MinHash kernel (`thresher.dedup._minhash`) gives the pure reference's sketches, value
for value: every scheme, hash count, shingle size and sample size, on random token values (any int,
reduced modulo 2^64 as the reference's `& MASK64` does) and on real page texts."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pytest
from tests.conftest import shared_path

from thresher.dedup import kernels
from thresher.dedup.shingles import tokenize

pytestmark = pytest.mark.skipif(not kernels.compiled_available(),
                                reason="thresher.dedup._minhash is not built (no C compiler at install)")


def _same(tokens: list[int], c: kernels.Coefficients, sample_size: int) -> None:
    want = kernels.minhash_pure(tokens, c, sample_size)
    got = kernels.minhash_compiled(tokens, c, sample_size)
    assert got == want, (c.scheme, c.num_hashes, c.shingle_size, sample_size, len(tokens))


@pytest.mark.parametrize("scheme", ["one_permutation", "k_permutation"])
def test_random_token_values(scheme: kernels.Scheme) -> None:
    rng = random.Random(15)
    for num_hashes in (1, 2, 8, 128, 512):
        for shingle_size in (1, 2, 5, 7):
            c = kernels.make_coefficients(scheme, num_hashes, shingle_size, seed=num_hashes + shingle_size)
            for _ in range(12):
                size = rng.choice((0, 1, shingle_size - 1, shingle_size, rng.randint(1, 60), rng.randint(100, 3000)))
                alphabet = rng.choice((2, 30, 1 << 32, 1 << 70))  # repeats, 32-bit values, ints past 2^64
                tokens = [rng.randrange(alphabet) - (alphabet // 3 if alphabet > 1 << 64 else 0) for _ in range(size)]
                for sample_size in (0, 1, 5, 1024):
                    _same(tokens, c, sample_size)


def test_real_texts() -> None:
    import json

    truth = json.loads(shared_path("extraction", "aeb", "ground-truth.json").read_text(encoding="utf-8"))
    texts = [page["articleBody"] for page in truth.values() if page.get("articleBody")]
    assert len(texts) > 100
    one = kernels.make_coefficients("one_permutation", 128, 5)
    k = kernels.make_coefficients("k_permutation", 64, 5)
    for text in texts:
        values = tokenize(text, "auto").values
        for c in (one, k):
            _same(values, c, 1024)


def test_pure_python_switch_turns_it_off() -> None:
    code = "from thresher.dedup import kernels; print(kernels.compiled_available(), kernels.minhash_small.__name__)"
    env = dict(os.environ, THRESHER_PURE_PYTHON="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["False", "minhash_pure"]


def test_bad_arguments_raise_not_crash() -> None:
    from thresher.dedup import _minhash  # type: ignore[attr-defined]

    with pytest.raises(TypeError):
        _minhash.minhash(["a", "b"], (3,), 1, False, 2, (), (), 0)
    with pytest.raises(ValueError):
        _minhash.minhash([1, 2], (), 1, False, 2, (), (), 0)
    with pytest.raises(ValueError):
        _minhash.minhash([1, 2], (3,), 1, False, 40, (), (), 0)
    with pytest.raises(ValueError):
        _minhash.minhash([1, 2], (3,), 1, True, 0, (1, 3), (5,), 0)
