"""A `.zst` input cut anywhere is reported as truncated, never read as if it had ended cleanly
(python-zstandard's own stream reader is silent about a cut frame), and an uncut stream of any
layout — several frames, skippable frames, checksums, no content size, RLE blocks — reads whole."""

from __future__ import annotations

import io

import pytest

from thresher.read.sniff import open_binary
from thresher.read.zstd_frames import FrameWalker

zstandard = pytest.importorskip("zstandard")

TEXT = b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"ab" * (i % 97)) for i in range(3000))


def _layouts() -> dict[str, tuple[bytes, set[int]]]:
    """Compressed streams and the cut points that are frame boundaries (a legitimate end)."""
    one = zstandard.ZstdCompressor().compress(TEXT)
    first = zstandard.ZstdCompressor(write_checksum=True).compress(TEXT[:5000])
    skippable = b"\x5a\x2a\x4d\x18" + (3).to_bytes(4, "little") + b"abc"
    second = zstandard.ZstdCompressor(write_content_size=False, level=1).compress(TEXT[5000:])
    rle = zstandard.ZstdCompressor().compress(b"\n" * 1_000_000)
    return {
        "one frame": (one, set()),
        "checksum + skippable + no content size": (
            first + skippable + second,
            {len(first), len(first) + len(skippable)},
        ),
        "rle blocks": (rle, set()),
    }


@pytest.mark.parametrize("name", list(_layouts()))
def test_every_cut_of_a_zstd_stream_is_truncated_unless_at_a_frame_boundary(name):
    data, boundaries = _layouts()[name]
    for chunk in (1, 5, 1 << 16):  # however the bytes arrive
        walker = FrameWalker()
        for i in range(0, len(data), chunk):
            walker.feed(data[i : i + chunk])
        assert not walker.inside_frame
    step = max(1, len(data) // 400)
    for cut in [*range(1, len(data), step), *boundaries, len(data) - 1]:
        walker = FrameWalker()
        walker.feed(data[:cut])
        assert walker.inside_frame is (cut not in boundaries), cut


@pytest.mark.parametrize("name", list(_layouts()))
def test_reader_raises_eof_on_a_cut_stream_and_reads_a_whole_one(name, tmp_path):
    data, _ = _layouts()[name]
    path = tmp_path / "a.jsonl.zst"
    path.write_bytes(data)
    with open_binary(str(path)) as stream:
        whole = stream.read()
    assert whole == zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True).read()
    path.write_bytes(data[:-2])
    with open_binary(str(path)) as stream, pytest.raises(EOFError, match="truncated"):
        stream.read()
