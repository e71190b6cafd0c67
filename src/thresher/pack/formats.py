"""Token file writers, one per format a trainer reads. Each takes documents' token sequences in
order (`add`) and, at `close`, names the files it wrote with their sizes and sha256.

- `megatron`: `NAME.bin` (the tokens, back to back) and `NAME.idx` (megatron-core's `IndexedDataset`
  index: header `MMIDIDX\\0\\0`, version 1, dtype code, sequence and document counts, then int32
  lengths, int64 byte pointers and int64 document boundaries), one sequence per document;
- `npy`: `NAME.npy` (one flat array, nanoGPT-style) and `NAME.offsets.npy` (int64, where each document
  starts, plus the end).

Tokens are uint16 when the vocabulary fits, else int32 (megatron) or uint32 (npy).
"""

from __future__ import annotations

import hashlib
import struct
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from thresher.core.errors import ConfigError
from thresher.write.atomic import atomic_open

MEGATRON_HEADER = b"MMIDIDX\x00\x00"
MEGATRON_DTYPES = {"H": 8, "i": 4}  # array typecode -> megatron-core's DType code (uint16, int32)
NPY_HEADER_BYTES = 128  # room for any shape: the header is rewritten with the final one at close


@dataclass(frozen=True, slots=True)
class WrittenFile:
    path: str  # relative to the pack's output folder
    bytes: int
    sha256: str


class TokenWriter(Protocol):
    def add(self, tokens: array[int]) -> None: ...

    def close(self) -> list[WrittenFile]: ...


def token_typecode(vocab_size: int, fmt: str) -> str:
    if vocab_size <= 1 << 16:
        return "H"
    return "i" if fmt == "megatron" else "I"


class _Hashed:
    """A file written in order, hashed as it is written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.cm = atomic_open(path, "wb")
        self.out = self.cm.__enter__()
        self.sha = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> None:
        self.out.write(data)
        self.sha.update(data)
        self.size += len(data)

    def close(self, root: Path) -> WrittenFile:
        self.cm.__exit__(None, None, None)
        return WrittenFile(self.path.relative_to(root).as_posix(), self.size, self.sha.hexdigest())


class MegatronWriter:
    def __init__(self, root: Path, name: str, typecode: str) -> None:
        self.root = root
        self.typecode = typecode
        self.bin = _Hashed(root / f"{name}.bin")
        self.idx_path = root / f"{name}.idx"
        self.lengths = array("i")

    def add(self, tokens: array[int]) -> None:
        data = tokens if tokens.typecode == self.typecode else array(self.typecode, tokens)
        self.bin.write(data.tobytes())
        self.lengths.append(len(data))

    def close(self) -> list[WrittenFile]:
        files = [self.bin.close(self.root)]
        idx = _Hashed(self.idx_path)
        n = len(self.lengths)
        idx.write(MEGATRON_HEADER + struct.pack("<Q", 1) + struct.pack("<B", MEGATRON_DTYPES[self.typecode]))
        idx.write(struct.pack("<Q", n) + struct.pack("<Q", n + 1))
        idx.write(self.lengths.tobytes())
        pointers = array("q", [0] * n)
        itemsize = array(self.typecode).itemsize
        at = 0
        for i, length in enumerate(self.lengths):
            pointers[i] = at
            at += length * itemsize
        idx.write(pointers.tobytes())
        idx.write(array("q", range(n + 1)).tobytes())
        files.append(idx.close(self.root))
        return files


def _npy_header(descr: str, length: int) -> bytes:
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({length},), }}"
    magic = b"\x93NUMPY\x01\x00"
    room = NPY_HEADER_BYTES - len(magic) - 2
    body = text.ljust(room - 1) + "\n"
    return magic + struct.pack("<H", room) + body.encode("latin-1")


class NpyWriter:
    def __init__(self, root: Path, name: str, typecode: str) -> None:
        self.root = root
        self.typecode = typecode
        self.descr = {"H": "<u2", "I": "<u4", "i": "<i4"}[typecode]
        self.path = root / f"{name}.npy"
        self.offsets_path = root / f"{name}.offsets.npy"
        self.cm = atomic_open(self.path, "w+b")
        self.out = self.cm.__enter__()
        self.out.write(_npy_header(self.descr, 0))
        self.offsets = array("q", [0])

    def add(self, tokens: array[int]) -> None:
        data = tokens if tokens.typecode == self.typecode else array(self.typecode, tokens)
        self.out.write(data.tobytes())
        self.offsets.append(self.offsets[-1] + len(data))

    def close(self) -> list[WrittenFile]:
        self.out.seek(0)
        self.out.write(_npy_header(self.descr, self.offsets[-1]))
        self.out.seek(0)
        sha = hashlib.sha256()
        size = 0
        while chunk := self.out.read(1 << 20):
            sha.update(chunk)
            size += len(chunk)
        self.cm.__exit__(None, None, None)
        files = [WrittenFile(self.path.relative_to(self.root).as_posix(), size, sha.hexdigest())]
        offsets = _Hashed(self.offsets_path)
        offsets.write(_npy_header("<i8", len(self.offsets)) + self.offsets.tobytes())
        files.append(offsets.close(self.root))
        return files


WRITERS: dict[str, Callable[[Path, str, str], TokenWriter]] = {"megatron": MegatronWriter, "npy": NpyWriter}


def open_writer(fmt: str, root: Path, name: str, typecode: str) -> TokenWriter:
    try:
        writer_class = WRITERS[fmt]
    except KeyError:
        raise ConfigError(f"unknown pack format {fmt!r} (known: {', '.join(WRITERS)})") from None
    writer: TokenWriter = writer_class(root, name, typecode)
    return writer
