"""Randomly damaged archives: the reader never raises, every problem is located in the file, and the
FastWARC-backed reader still gives exactly the pure reader's items."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_warc_bad_input import ARC_PAGE, ARC_VERSION_BLOCK, A, B, C, arc, gz

from thresher.core.document import Document, Malformed
from thresher.read.base import Event, Partition, Skip
from thresher.read.config import InputConfig
from thresher.read.warc import read_warc_pure
from thresher.read.warc_config import WarcConfig

_ARC = arc(ARC_VERSION_BLOCK, ARC_PAGE)
BASES = (gz(A, B, C), A + B + C, gz(A + B + C), _ARC + _ARC.split(b"\n\n", 1)[1] * 2, gzip.compress(_ARC * 1, mtime=0))


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(("flip", "insert", "delete", "cut")))
        if action == "flip" and at < len(data):
            data[at] ^= draw(st.integers(1, 255))
        elif action == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=40))
        elif action == "delete":
            del data[at:at + draw(st.integers(1, 200))]
        elif action == "cut":
            del data[at:]
    return bytes(data)


def _read(path: Path, fast: bool) -> list:
    part = Partition(0, "warc", (str(path),))
    if fast:
        from thresher.read.warc_fast import read_warc_fast

        return list(read_warc_fast(part, InputConfig(), WarcConfig()))
    return list(read_warc_pure(part, InputConfig(), WarcConfig()))


def _has_fastwarc() -> bool:
    try:
        import fastwarc.warc  # noqa: F401
    except ImportError:
        return False
    return True


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged())
def test_damaged_archives_are_read_without_raising_and_fast_equals_pure(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "damaged.warc"
        path.write_bytes(data)
        items = _read(path, fast=False)
        for item in items:
            assert isinstance(item, Document | Skip | Malformed | Event)
            if isinstance(item, Malformed):
                assert item.location.startswith(str(path))
        if _has_fastwarc():
            assert _read(path, fast=True) == items
