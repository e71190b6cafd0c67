"""The cluster phase's distinct-ordinal collection: NumPy and pure paths agree, chunk merges are exact."""

import builtins
import random

import pytest

from thresher.clusters import DistinctOrdinals


def _collect(values, chunk=None, set_limit=None):
    d = DistinctOrdinals()
    if chunk is not None:
        d.CHUNK = chunk
    if set_limit is not None:
        d.SET_LIMIT = set_limit
    for v in values:
        d.add(v)
    return list(d.result())


def test_distinct_ordinals_sorted_and_unique_across_chunk_merges():
    pytest.importorskip("numpy")
    rng = random.Random(3)
    values = [rng.randrange(1 << 64) for _ in range(500)] + [7, 7, (1 << 64) - 1, 0]
    values += values[:100]
    expected = sorted(set(values))
    assert _collect(values) == expected
    assert _collect(values, chunk=17) == expected  # all in the set: NumPy never imported
    assert _collect(values, chunk=17, set_limit=50) == expected  # the set moved to NumPy, then many merges
    assert _collect(values, set_limit=1) == expected
    assert _collect([]) == []


def test_distinct_ordinals_without_numpy(monkeypatch):
    real_import = builtins.__import__

    def no_numpy(name, *args, **kwargs):
        if name == "numpy":
            raise ImportError("numpy blocked for this test")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_numpy)
    values = [9, 1, 9, 5, 1 << 63]
    assert _collect(values) == [1, 5, 9, 1 << 63]
    assert _collect(values, set_limit=2) == [1, 5, 9, 1 << 63]  # past the limit, the set goes on
