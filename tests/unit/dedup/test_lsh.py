"""LSH parameters derived from the threshold, band keys and bounded hot-bucket pairs."""

from __future__ import annotations

import pytest

from thresher.dedup.lsh import (
    FALSE_NEGATIVE_WEIGHT,
    band_keys,
    collision_probability,
    derive_bands_rows,
    false_negative_mass,
    false_positive_mass,
    representative_pairs,
)


def test_s_curve_matches_closed_form() -> None:
    assert collision_probability(0.8, 21, 6) == pytest.approx(1 - (1 - 0.8**6) ** 21)
    assert collision_probability(0.0, 21, 6) == 0.0
    assert collision_probability(1.0, 21, 6) == 1.0


def test_masses_are_areas_under_and_over_the_s_curve() -> None:
    # with one band of one row P(s) = s: FP area = t^2/2, FN area = (1-t)^2/2
    assert false_positive_mass(0.8, 1, 1) == pytest.approx(0.32)
    assert false_negative_mass(0.8, 1, 1) == pytest.approx(0.02)


@pytest.mark.parametrize("threshold, expected", [(0.7, (27, 4)), (0.8, (21, 6)), (0.9, (14, 9))])
def test_default_derivation_is_pinned_and_favours_recall(threshold: float, expected: tuple[int, int]) -> None:
    params = derive_bands_rows(threshold, 128)
    assert (params.bands, params.rows) == expected
    assert collision_probability(threshold, params.bands, params.rows) >= 0.997


def test_table_of_derived_parameters_matches_the_search() -> None:
    from thresher.dedup.lsh import _DERIVED, search_bands_rows

    assert _DERIVED  # the table answers the default settings without a search
    assert (0.8, 128, FALSE_NEGATIVE_WEIGHT) in _DERIVED
    for (threshold, num_hashes, weight), expected in _DERIVED.items():
        found = search_bands_rows(threshold, num_hashes, weight)
        assert (found.bands, found.rows) == expected, (threshold, num_hashes, weight)


def test_equal_weights_move_the_knee_to_the_threshold() -> None:
    params = derive_bands_rows(0.8, 128, false_negative_weight=0.5)
    assert abs(params.knee - 0.8) < 0.06
    assert params.bands * params.rows <= 128


def test_derivation_rejects_bad_threshold() -> None:
    with pytest.raises(ValueError, match="threshold"):
        derive_bands_rows(0.0, 128)


def test_band_keys_are_16_bytes_and_differ_per_band_for_equal_values() -> None:
    sig = bytes(4 * 8)  # eight zero values
    keys = band_keys(sig, 4, 2)
    assert len(keys) == 4 and all(len(k) == 16 for k in keys)
    assert len(set(keys)) == 4  # the band index is part of the key
    assert band_keys(sig, 4, 2) == keys
    with pytest.raises(ValueError):
        band_keys(sig, 5, 2)


def test_small_bucket_yields_all_pairs() -> None:
    assert sorted(representative_pairs(4, 16)) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]


def test_hot_bucket_yields_linear_pairs_to_representatives() -> None:
    pairs = list(representative_pairs(10_000, 4))
    assert len(pairs) == 4 * 10_000 - (1 + 2 + 3 + 4)
    assert {i for i, _ in pairs} == {0, 1, 2, 3}
    assert {j for _, j in pairs} == set(range(1, 10_000))


def test_band_keys_fill_key_buckets_evenly_when_documents_share_a_band_value() -> None:
    """Templated pages share shingles, so many signatures share a band's first value; the key
    bucket must still depend on the whole band, or one group task gets most of the keys."""
    import random
    import struct

    from thresher.run.records import KEY_BUCKETS, key_bucket

    rnd = random.Random(5)
    counts = [0] * KEY_BUCKETS
    for _ in range(20 * KEY_BUCKETS):
        values = [0x5845] + [rnd.getrandbits(32) for _ in range(7)]  # first value common to all
        sig = struct.pack("<8I", *values)
        for key in band_keys(sig, 1, 8):
            counts[key_bucket(key)] += 1
    assert max(counts) < 3 * 20  # ~20 per bucket; bucketing by the first value puts all in one
