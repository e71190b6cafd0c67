"""Whether a zstd stream ended inside a frame: a truncated `.zst` file.

python-zstandard's stream reader ends a cut frame as if the file had ended cleanly, so a `.zst`
input cut mid-stream would lose its tail with nothing said but, at best, one broken last line.
`FrameWalker` follows the frame layout of RFC 8878 over the compressed bytes as they are read —
frame headers, block headers (3 bytes each, with the block's size in the stream) and checksums —
without decompressing anything, so it knows at the end of the input whether the last frame was
complete. It reads a few header bytes per block (at most 128 KiB of output), so it costs nothing
next to the decompression.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE_MAGIC_TAIL = b"\x2a\x4d\x18"  # skippable frames: 0x184D2A50..5F, little-endian
_DICT_ID_BYTES = (0, 1, 2, 4)
_CONTENT_SIZE_BYTES = (0, 2, 4, 8)  # by the Frame_Content_Size flag; flag 0 is 1 byte for a single segment
_RLE_BLOCK = 1

TRUNCATED_MESSAGE = "the zstd stream ends inside a frame: the file is truncated"


class FrameWalker:
    """Fed the compressed bytes in order; `inside_frame` says whether they stop mid-frame. Bytes that
    are not a frame (garbage) stop the walk: the decompressor reports those itself."""

    def __init__(self) -> None:
        self._buf = b""
        self._skip = 0  # stream bytes still to pass over (a block's content, a checksum, a skippable frame)
        self._state = "frame"  # frame | block | lost
        self._checksum = False
        self.frames = 0

    @property
    def inside_frame(self) -> bool:
        return self._state == "block" or self._skip > 0 or (self._state == "frame" and bool(self._buf))

    def feed(self, data: bytes) -> None:
        if self._state == "lost" or not data:
            return
        if self._skip >= len(data):
            self._skip -= len(data)
            return
        # a partial header waits in _buf (then nothing is to be skipped); else walk `data` in place
        buf, pos = (self._buf + data, 0) if self._buf else (data, self._skip)
        self._skip = 0
        while True:
            if self._state == "block":
                if len(buf) - pos < 3:
                    break
                header = int.from_bytes(buf[pos : pos + 3], "little")
                pos += 3
                size = 1 if (header >> 1) & 3 == _RLE_BLOCK else header >> 3
                if header & 1:  # the frame's last block
                    self._state = "frame"
                    self.frames += 1
                    size += 4 if self._checksum else 0
            else:
                need = _frame_header_size(buf, pos)
                if need is None:
                    self._state, buf, pos = "lost", b"", 0
                    break
                if len(buf) - pos < need:
                    break
                if buf[pos + 1 : pos + 4] == _SKIPPABLE_MAGIC_TAIL:
                    size = int.from_bytes(buf[pos + 4 : pos + 8], "little")
                    self.frames += 1
                else:
                    self._checksum = bool(buf[pos + 4] & 4)
                    self._state = "block"
                    size = 0
                pos += need
            if size >= len(buf) - pos:
                self._skip = size - (len(buf) - pos)
                buf, pos = b"", 0
                break
            pos += size
        self._buf = buf[pos:]


def _frame_header_size(buf: bytes, pos: int) -> int | None:
    """Bytes of the frame header at `pos` (magic included); a count to wait for while too few bytes
    have arrived to tell; None when the bytes there start no frame."""
    have = len(buf) - pos
    if have < 4:
        head = buf[pos:]
        return 4 if ZSTD_MAGIC.startswith(head) or _could_be_skippable(head) else None
    if buf[pos : pos + 4] == ZSTD_MAGIC:
        if have < 5:
            return 5
        descriptor = buf[pos + 4]
        single_segment = bool(descriptor & 0x20)
        content_flag = descriptor >> 6
        content_bytes = 1 if content_flag == 0 and single_segment else _CONTENT_SIZE_BYTES[content_flag]
        return 5 + (0 if single_segment else 1) + _DICT_ID_BYTES[descriptor & 3] + content_bytes
    if _could_be_skippable(buf[pos : pos + 4]):
        return 8
    return None


def _could_be_skippable(head: bytes) -> bool:
    return (not head or head[0] & 0xF0 == 0x50) and _SKIPPABLE_MAGIC_TAIL.startswith(head[1:4])


class _Tee:
    """The compressed source as the decompressor reads it, shown to the walker on the way."""

    def __init__(self, raw: BinaryIO, walker: FrameWalker) -> None:
        self.raw = raw
        self.walker = walker

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.walker.feed(data)
        return data

    def close(self) -> None:
        self.raw.close()


class CheckedZstdReader(io.RawIOBase):
    """Decompressed bytes of a zstd stream (every frame in turn) that raises EOFError at the end when
    the input stopped inside a frame, as `gzip` does for a cut gzip member."""

    def __init__(self, raw: BinaryIO, zstandard: Any) -> None:
        self.walker = FrameWalker()
        self._raw = raw
        self._inner = zstandard.ZstdDecompressor().stream_reader(_Tee(raw, self.walker), read_across_frames=True)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n: int = self._inner.readinto(buffer)
        if n == 0 and self.walker.inside_frame:
            raise EOFError(TRUNCATED_MESSAGE)
        return n

    def close(self) -> None:
        if not self.closed:
            self._inner.close()  # closes the raw file too
        super().close()
