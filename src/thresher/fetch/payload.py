"""Decompression bombs: a body sent compressed is decoded under a cap before it is kept.

The archive keeps the body as sent (with its Content-Encoding); the reader decodes it again when it
builds documents. Decoding here, in bounded steps, is what proves that the decoded page is no
larger than `max_decoded_bytes` and no more than `max_decompression_ratio` times the bytes sent (a
gzip of zeros reaches about 1000:1, a real page 3 to 15:1), so a bomb costs at most the cap."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

_STEP = 64 * 1024
_RATIO_FLOOR_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class DecodeProblem:
    reason: str  # decompression_bomb | decoded_too_large | bad_encoding | unsupported_encoding
    detail: str
    value: float | None = None
    limit: float | None = None


def accepted_encodings() -> str:
    """The Accept-Encoding the fetcher sends: br only when a brotli module is installed."""
    try:
        import brotli  # noqa: F401
    except ImportError:
        return "gzip, deflate"
    return "gzip, deflate, br"


def _zlib_size(body: bytes, wbits: int, cap: int) -> int:
    d = zlib.decompressobj(wbits)
    size = 0
    data = body
    while True:
        out = d.decompress(data, _STEP)
        size += len(out)
        if size > cap:
            return size
        data = d.unconsumed_tail
        if not data and (d.eof or not out):
            return size


def _brotli_size(body: bytes, cap: int) -> int:
    import brotli

    d = brotli.Decompressor()
    size = len(d.process(body, output_buffer_limit=_STEP))
    while size <= cap and not d.is_finished():
        out = d.process(b"", output_buffer_limit=_STEP)
        if not out:
            break
        size += len(out)
    return size


def check_decoded_size(body: bytes, encoding: str, max_decoded_bytes: int, max_ratio: float) -> int | DecodeProblem:
    """The decoded size of a body sent with `encoding`, or the problem that stops it."""
    coding = encoding.strip().lower()
    if coding in ("", "identity"):
        return len(body)
    # the ratio binds only past 1 MiB decoded: a tiny repetitive page legitimately compresses 100:1
    ratio_cap = max(int(max_ratio * len(body)), _RATIO_FLOOR_BYTES)
    cap = min(max_decoded_bytes, ratio_cap)
    try:
        if coding in ("gzip", "x-gzip"):
            size = _zlib_size(body, 16 + zlib.MAX_WBITS, cap)
        elif coding == "deflate":
            try:
                size = _zlib_size(body, zlib.MAX_WBITS, cap)
            except zlib.error:  # servers send raw deflate as often as zlib-wrapped
                size = _zlib_size(body, -zlib.MAX_WBITS, cap)
        elif coding == "br":
            try:
                size = _brotli_size(body, cap)
            except ImportError:
                return DecodeProblem("unsupported_encoding", "br (no brotli module installed)")
        else:
            return DecodeProblem("unsupported_encoding", coding[:40])
    except Exception as exc:  # zlib.error, brotli.error: a corrupt stream
        return DecodeProblem("bad_encoding", f"{coding}: {exc}"[:200])
    if size > cap:
        if cap == max_decoded_bytes and max_decoded_bytes < ratio_cap:
            return DecodeProblem("decoded_too_large", f"{coding} body decodes past the cap", size, max_decoded_bytes)
        return DecodeProblem(
            "decompression_bomb", f"{coding}: {len(body)} bytes decode to more than {cap}",
            round(size / max(len(body), 1), 1), max_ratio,
        )
    return size
