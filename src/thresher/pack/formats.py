"""Token file writers, one per format a trainer reads. Each takes documents' token sequences in
order (`add`) and, at `close`, names the files it wrote with their sizes and sha256.

- `megatron`: `NAME.bin` (the tokens, back to back) and `NAME.idx` (megatron-core's `IndexedDataset`
  index: header `MMIDIDX\\0\\0`, version 1, dtype code, sequence and document counts, then int32
  lengths, int64 byte pointers and int64 document boundaries), one sequence per document;
- `npy`: `NAME.npy` (one flat array, nanoGPT-style) and `NAME.offsets.npy` (int64, where each document
  starts, plus the end);
- `datatrove`: `NAME.ds` (the tokens, back to back, little-endian), `NAME.ds.index` (uint64 document
  ends, in tokens, as datatrove's `TokenizedFile` writes them and its `DatatroveFolderDataset` reads
  them for positions) and `NAME.ds.metadata` (`tokenizer|token size`, the token count, the count
  written short); no `.loss` file, since every token is trained on;
- `mds`: `NAME.mds`, a mosaicml-streaming shard with one column, `tokens` (`ndarray:uint16` or
  `ndarray:uint32`, one sample per document); the split's `index.json`, which `StreamingDataset`
  opens, is written when the split is finished (`finish_split`).

Tokens are uint16 when the vocabulary fits, else int32 (megatron) or uint32 (the others).
"""

from __future__ import annotations

import hashlib
import json
import struct
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

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
    def fits(self, tokens: int) -> bool:
        """Whether a sequence of `tokens` more still fits this file's format (not its token budget)."""
        ...

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

    def fits(self, tokens: int) -> bool:
        return True

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

    def fits(self, tokens: int) -> bool:
        return True

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


class DatatroveWriter:
    def __init__(self, root: Path, name: str, typecode: str, tokenizer: str) -> None:
        self.root = root
        self.typecode = typecode
        self.tokenizer = tokenizer
        self.tokens = _Hashed(root / f"{name}.ds")
        self.base = root / f"{name}.ds"
        self.ends = array("Q")
        self.count = 0

    def fits(self, tokens: int) -> bool:
        return True

    def add(self, tokens: array[int]) -> None:
        data = tokens if tokens.typecode == self.typecode else array(self.typecode, tokens)
        self.tokens.write(data.tobytes())
        self.count += len(data)
        self.ends.append(self.count)

    def close(self) -> list[WrittenFile]:
        files = [self.tokens.close(self.root)]
        index = _Hashed(self.base.with_name(self.base.name + ".index"))
        index.write(self.ends.tobytes())
        files.append(index.close(self.root))
        meta = _Hashed(self.base.with_name(self.base.name + ".metadata"))
        token_size = array(self.typecode).itemsize
        meta.write(f"{self.tokenizer}|{token_size}\n{self.count}\n{_short_count(self.count)}T".encode())
        files.append(meta.close(self.root))
        return files


def _short_count(n: int) -> str:
    """`n` as people read large counts: 1.23 M, 456 k, 17."""
    for scale, suffix in ((10**12, " T"), (10**9, " G"), (10**6, " M"), (10**3, " k")):
        if n >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n} "


MDS_MAX_SHARD = (1 << 32) - 1  # sample offsets are uint32
MDS_SAMPLE_OVERHEAD = 4 + 4 + 1 + 4  # its offset, its size, the shape byte, its length (uint32 at most)


def _mds_config(typecode: str) -> dict[str, Any]:
    """The shard-writing settings mosaicml-streaming records in each shard and in `index.json`."""
    dtype = {"H": "uint16", "I": "uint32"}[typecode]
    return {"column_encodings": [f"ndarray:{dtype}"], "column_names": ["tokens"], "column_sizes": [None],
            "compression": None, "format": "mds", "hashes": [], "size_limit": None, "version": 2}


class MdsWriter:
    """One MDS shard: `[samples: uint32][offsets: (samples + 1) x uint32][config JSON][samples]`. The
    header's length depends on the number of samples, so the samples go to a work file first and are
    copied behind the header at `close`; only the offsets (4 bytes a document) are held in memory."""

    def __init__(self, root: Path, name: str, typecode: str, tokenizer: str) -> None:
        self.root = root
        self.typecode = typecode
        self.path = root / f"{name}.mds"
        self.body_path = self.path.with_name(f".{self.path.name}.body")
        self.body_path.parent.mkdir(parents=True, exist_ok=True)
        self.body = open(self.body_path, "wb")
        self.config = json.dumps(_mds_config(typecode), sort_keys=True).encode()
        self.ends = array("I")
        self.size = 0
        self.itemsize = array(typecode).itemsize

    def fits(self, tokens: int) -> bool:
        header = 4 + 4 * (len(self.ends) + 2) + len(self.config)
        return header + self.size + MDS_SAMPLE_OVERHEAD + tokens * self.itemsize <= MDS_MAX_SHARD

    def add(self, tokens: array[int]) -> None:
        data = tokens if tokens.typecode == self.typecode else array(self.typecode, tokens)
        n = len(data)
        if n < 1 << 8:
            shape = bytes([4 | 0, n])  # ndim 1, uint8 shape
        elif n < 1 << 16:
            shape = bytes([4 | 1]) + struct.pack("<H", n)
        else:
            shape = bytes([4 | 2]) + struct.pack("<I", n)
        payload = data.tobytes()
        self.body.write(struct.pack("<I", len(shape) + len(payload)) + shape)
        self.body.write(payload)
        self.size += 4 + len(shape) + len(payload)
        self.ends.append(self.size)

    def close(self) -> list[WrittenFile]:
        self.body.close()
        out = _Hashed(self.path)
        n = len(self.ends)
        start = 4 + 4 * (n + 1) + len(self.config)
        offsets = array("I", [start])
        offsets.extend(start + end for end in self.ends)
        out.write(struct.pack("<I", n) + offsets.tobytes() + self.config)
        with open(self.body_path, "rb") as body:
            while chunk := body.read(1 << 22):
                out.write(chunk)
        self.body_path.unlink()
        return [out.close(self.root)]


def _mds_index(root: Path, split: str, files: list[WrittenFile], typecode: str) -> list[WrittenFile]:
    """The split's `index.json`: every shard with its sample count (read from the shard's first 4
    bytes) and size, in order."""
    shards = []
    for f in files:
        with open(root / f.path, "rb") as shard:
            (samples,) = struct.unpack("<I", shard.read(4))
        shards.append({**_mds_config(typecode), "raw_data": {"basename": Path(f.path).name, "bytes": f.bytes,
                                                               "hashes": {}}, "samples": samples, "zip_data": None})
    index = _Hashed(root / split / "index.json")
    index.write(json.dumps({"shards": shards, "version": 2}, sort_keys=True).encode())
    return [index.close(root)]


WRITERS: dict[str, Callable[[Path, str, str, str], TokenWriter]] = {
    "megatron": lambda root, name, typecode, tokenizer: MegatronWriter(root, name, typecode),
    "npy": lambda root, name, typecode, tokenizer: NpyWriter(root, name, typecode),
    "datatrove": DatatroveWriter,
    "mds": MdsWriter,
}
# the files a format writes for a whole split, once its token files are closed
SPLIT_FINISHERS: dict[str, Callable[[Path, str, list[WrittenFile], str], list[WrittenFile]]] = {"mds": _mds_index}


def open_writer(fmt: str, root: Path, name: str, typecode: str, tokenizer: str = "") -> TokenWriter:
    """A writer of `fmt` for the file `root/name` (+ the format's extensions); `tokenizer` names the
    tokenizer where the format records it."""
    try:
        writer_class = WRITERS[fmt]
    except KeyError:
        raise ConfigError(f"unknown pack format {fmt!r} (known: {', '.join(WRITERS)})") from None
    return writer_class(root, name, typecode, tokenizer)


def finish_split(fmt: str, root: Path, split: str, files: list[WrittenFile], typecode: str) -> list[WrittenFile]:
    """The split-level files `fmt` needs besides its token files (none for most formats)."""
    finisher = SPLIT_FINISHERS.get(fmt)
    return finisher(root, split, files, typecode) if finisher and files else []
