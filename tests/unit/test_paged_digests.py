"""`PagedDigests` (`thresher.mapped_file`): membership in a sorted section of a file, a block read
per lookup, answers exactly as a bisection of the whole array; a file cut short is an error, not a
silent miss."""

from __future__ import annotations

import bisect
import random
from array import array

import pytest

from thresher.mapped_file import PagedDigests, little_endian


def _write(path, values, before=b"", after=b""):
    path.write_bytes(before + bytes(little_endian(array("Q", values))) + after)


@pytest.mark.parametrize("count", [0, 1, 511, 512, 513, 1024, 5 * 512 * 256 + 7])
def test_answers_as_a_bisection_of_the_whole_array(tmp_path, count):
    rng = random.Random(count)
    values = sorted(set(rng.getrandbits(64) for _ in range(count)))
    path = tmp_path / "digests"
    _write(path, values, before=b"H" * 40, after=b"tail")
    with open(path, "rb") as f:
        paged = PagedDigests(f.fileno(), 40, len(values))
    assert len(paged) == len(values) and list(paged) == values  # its own descriptor: usable after close
    probes = values[::97] + [v + 1 for v in values[::89]] + [0, 2**64 - 1] + [rng.getrandbits(64) for _ in range(500)]
    for probe in probes:
        i = bisect.bisect_left(values, probe)
        assert (probe in paged) == (i < len(values) and values[i] == probe), probe
    assert "not a number" not in paged


def test_a_file_cut_short_is_an_error(tmp_path):
    path = tmp_path / "digests"
    values = list(range(0, 3000 * 7, 7))
    _write(path, values)
    with open(path, "rb") as f:
        paged = PagedDigests(f.fileno(), 0, len(values))
    with open(path, "r+b") as f:
        f.truncate(8 * 2000)
    assert 7 in paged
    with pytest.raises(OSError, match="ended early"):
        _ = values[-1] in paged
