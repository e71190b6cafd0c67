"""Open input files whatever their compression, and recognise their format by magic bytes.

Compression: gzip (`1f 8b`) always; zstd (`28 b5 2f fd`) with the `zstd` extra. Format: looked up
from the first decompressed bytes (`{` JSONL, `WARC/` WARC, `filedesc://` ARC, `PAR1` Parquet,
`<` HTML), falling back to the file name; each reader declares its own (`thresher.read.readers`).
"""

from __future__ import annotations

import gzip
import io
import sys
from typing import IO, BinaryIO

from thresher.core.errors import ConfigError

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PARQUET_MAGIC = b"PAR1"


def compression_of(head: bytes) -> str | None:
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return None


def file_is_compressed(path: str) -> bool:
    """Whether the input at `path` starts with a compression magic (False when it cannot be read)."""
    from thresher.core.errors import InputError
    from thresher.read.paths import open_input

    try:
        with open_input(path) as f:
            return compression_of(f.read(4)) is not None
    except (OSError, InputError):
        return False


def _zstd_reader(raw: BinaryIO) -> BinaryIO:
    try:
        import zstandard
    except ImportError as exc:
        raise ConfigError("reading .zst input needs the zstd extra: pip install 'thresher[zstd]'") from exc
    from thresher.read.zstd_frames import CheckedZstdReader

    # a cut stream raises EOFError at its end, like gzip (python-zstandard's own reader is silent)
    return io.BufferedReader(CheckedZstdReader(raw, zstandard), 1 << 16)  # adds readline()


def open_binary(path: str) -> BinaryIO:
    """Open a local file or `-` (stdin) and undo gzip/zstd compression found by magic bytes."""
    raw: BinaryIO
    if path == "-":
        raw = sys.stdin.buffer
    else:
        from thresher.read.paths import open_input

        raw = open_input(path)
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)  # type: ignore[type-var]
    head = buffered.peek(4)[:4]
    kind = compression_of(head)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
    if kind == "zstd":
        return _zstd_reader(buffered)
    return buffered


def sniff_format(path: str, head: bytes) -> str | None:
    """The input kind from decompressed leading bytes, else from the file name; None if unknown.
    The kinds and their magic bytes and names are the reader registry's (`thresher.read.readers`)."""
    from thresher.read.readers import specs

    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    # magic bytes first, built-ins first: a built-in's magic is the answer whatever plugins exist,
    # so the entry points (importing importlib.metadata, ~20 ms) are read only when none matches
    for spec in specs(plugins=False):
        if spec.magic and stripped.startswith(spec.magic):
            return spec.kind
    known = specs()
    for spec in known:
        if spec.magic and stripped.startswith(spec.magic):
            return spec.kind
    name = path.lower()
    for suffix in (".gz", ".zst", ".zstd", ".lz4"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    for spec in known:
        if spec.suffixes and name.endswith(spec.suffixes):
            return spec.kind
    return None


def peek_decompressed(path: str, n: int = 64) -> bytes:
    """The first `n` decompressed bytes of a file (empty for an empty or unreadable stream)."""
    from thresher.read.paths import open_input

    with open_input(path) as raw:
        head = raw.read(4)
        raw.seek(0)
        if raw.read(4) == PARQUET_MAGIC:
            return PARQUET_MAGIC
        raw.seek(0)
        kind = compression_of(head)
        stream: IO[bytes]
        if kind == "gzip":
            stream = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]  # an IO[bytes] in practice
        elif kind == "zstd":
            stream = _zstd_reader(raw)
        else:
            stream = raw
        try:
            return stream.read(n)
        except Exception:  # noqa: BLE001 - OSError, EOFError, a codec's own (ZstdError): the read reports it
            return b""
