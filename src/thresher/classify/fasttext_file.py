"""Reading a fastText model file (`.bin`, or `.ftz` when quantized), as fastText 0.9 writes it.

Layout (little-endian; `FastText::saveModel` in fastText's `fasttext.cc`):

    magic, version      int32 793712314, int32 12 (11 is read too: its supervised models have no
                        character n-grams)
    args                int32 dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket, minn,
                        maxn, lrUpdateRate; float64 t
    dictionary          int32 size, nwords, nlabels; int64 ntokens, pruneidx_size; then `size`
                        entries (the word's bytes, NUL, int64 count, int8 type: 0 word, 1 label), then
                        pruneidx_size (int32 bucket, int32 row) pairs
    quant_input         uint8; the input matrix: dense (int64 m, n; float32 m x n) or quantized
    qout                uint8; the output matrix, quantized when quant_input and qout
    quantized matrix    uint8 qnorm; int64 m, n; int32 codesize; uint8 codes[codesize]; the product
                        quantizer (int32 dim, nsubq, dsub, lastdsub; float32 centroids[dim x 256]);
                        with qnorm, uint8 norm_codes[m] and a second quantizer (of the norms)

Matrices are not copied: they are NumPy views of the file's bytes, memory-mapped read-only, so the
pages of a model loaded by several workers are the page cache's, shared. A file that is not a
fastText model, is truncated, or is of another version is refused with one line
(`ModelFileError`).
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from typing import Any

from thresher.classify.format import ModelFileError

MAGIC = 793712314
VERSIONS = (11, 12)
LOSSES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
MODELS = {1: "cbow", 2: "skipgram", 3: "supervised"}
MAX_VALUES = 1 << 40  # a count beyond any real model's: the file is not one (below it, a short file is truncated)
KSUB = 256  # centroids per sub-quantizer (8-bit codes)
_ARGS = struct.Struct("<12id")
_DICT = struct.Struct("<3i2q")


@dataclass(frozen=True, slots=True)
class FastTextArgs:
    """The training arguments a model file records (those prediction reads, and the rest)."""

    dim: int
    ws: int
    epoch: int
    min_count: int
    neg: int
    word_ngrams: int
    loss: str
    model: str
    bucket: int
    minn: int
    maxn: int
    lr_update_rate: int
    t: float


@dataclass(frozen=True, slots=True)
class QuantizedMatrix:
    """A product-quantized matrix: row i is the concatenation over sub-quantizers m of
    `centroids[m][codes[i, m]]`, times the row's quantized norm when `norms` is given."""

    rows: int
    dim: int
    codes: Any  # uint8, rows x nsubq
    centroids: Any  # float32, nsubq x 256 x dsub (the last sub-quantizer's lastdsub columns padded with 0)
    dsub: int
    lastdsub: int
    norms: Any  # float32 per row, or None


@dataclass(frozen=True, slots=True)
class FastTextFile:
    """What a model file holds, its matrices as views of the mapped file."""

    version: int
    args: FastTextArgs
    words: list[bytes]  # dictionary entries, words first (ids < nwords), then labels (a loaded
    counts: list[int]  # FastTextModel keeps only the labels' entries and counts)
    nwords: int
    nlabels: int
    pruneidx: dict[int, int] | None  # bucket -> input row (a pruned, quantized model); None: not pruned
    input: Any  # float32 ndarray (rows x dim) or QuantizedMatrix
    output: Any  # float32 ndarray (labels x dim) or QuantizedMatrix
    quantized: bool


class _Reader:
    def __init__(self, buf: Any, path: str) -> None:
        self.buf = buf
        self.pos = 0
        self.path = path

    def take(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > len(self.buf):
            raise ModelFileError(f"{self.path}: truncated fastText model (ends at byte {len(self.buf)}, "
                                 f"{start + n} needed)")
        self.pos = start + n
        return start

    def unpack(self, st: struct.Struct) -> tuple[Any, ...]:
        return st.unpack_from(self.buf, self.take(st.size))

    def array(self, np: Any, dtype: str, count: int) -> Any:
        size = np.dtype(dtype).itemsize * count
        return np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.take(size))


def _quantizer(r: _Reader, np: Any) -> tuple[int, int, int, int, Any]:
    dim, nsubq, dsub, lastdsub = r.unpack(struct.Struct("<4i"))
    if dim <= 0 or nsubq <= 0 or dsub <= 0 or lastdsub <= 0 or (nsubq - 1) * dsub + lastdsub != dim:
        raise ModelFileError(f"{r.path}: not a fastText model (a product quantizer of {dim} = "
                             f"{nsubq - 1} x {dsub} + {lastdsub} dimensions)")
    flat = r.array(np, "<f4", dim * KSUB)
    # centroids of sub-quantizer m (< nsubq - 1) at [m * 256 * dsub], the last's at [m * 256 * dsub]
    # too, each of lastdsub floats: padded into one nsubq x 256 x dsub array
    width = max(dsub, lastdsub)
    table = np.zeros((nsubq, KSUB, width), dtype=np.float32)
    head = (nsubq - 1) * KSUB * dsub
    table[: nsubq - 1, :, :dsub] = flat[:head].reshape(nsubq - 1, KSUB, dsub)
    table[nsubq - 1, :, :lastdsub] = flat[head:].reshape(KSUB, lastdsub)
    return dim, nsubq, dsub, lastdsub, table


def _dense(r: _Reader, np: Any) -> Any:
    m, n = r.unpack(struct.Struct("<2q"))
    if m < 0 or n <= 0 or m * n > MAX_VALUES:
        raise ModelFileError(f"{r.path}: not a fastText model (a matrix of {m} x {n})")
    return r.array(np, "<f4", m * n).reshape(m, n)


def _quantized(r: _Reader, np: Any) -> QuantizedMatrix:
    (qnorm,) = r.unpack(struct.Struct("<?"))
    m, n = r.unpack(struct.Struct("<2q"))
    (codesize,) = r.unpack(struct.Struct("<i"))
    if m < 0 or n <= 0 or codesize < 0 or m * n > MAX_VALUES:
        raise ModelFileError(f"{r.path}: not a fastText model (a quantized matrix of {m} x {n})")
    codes = r.array(np, "u1", codesize)
    dim, nsubq, dsub, lastdsub, table = _quantizer(r, np)
    if dim != n or codesize != m * nsubq:
        raise ModelFileError(f"{r.path}: not a fastText model (a quantized matrix of {m} x {n} with "
                             f"{codesize} codes of {nsubq} sub-quantizers)")
    norms = None
    if qnorm:
        norm_codes = r.array(np, "u1", m)
        ndim, _, _, _, norm_table = _quantizer(r, np)
        if ndim != 1:
            raise ModelFileError(f"{r.path}: not a fastText model (a norm quantizer of {ndim} dimensions)")
        norms = norm_table[0, :, 0][norm_codes]
    return QuantizedMatrix(m, n, codes.reshape(m, nsubq), table, dsub, lastdsub, norms)


def read_fasttext(path: str) -> tuple[FastTextFile, Any]:
    """The model at `path` and the memory map its matrices view (keep it open as long as they are
    used). Raises `ModelFileError` with one line."""
    import numpy as np

    try:
        with open(path, "rb") as f:
            try:
                buf: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            except ValueError:  # an empty file cannot be mapped
                buf = b""
    except FileNotFoundError:
        raise ModelFileError(f"fastText model not found: {path}") from None
    except IsADirectoryError:
        raise ModelFileError(f"{path}: a directory, not a fastText model") from None
    r = _Reader(buf, path)
    if len(buf) < 8:
        raise ModelFileError(f"{path}: not a fastText model ({len(buf)} bytes)")
    magic, version = r.unpack(struct.Struct("<2i"))
    if magic != MAGIC:
        raise ModelFileError(f"{path}: not a fastText model (no fastText magic number)")
    if version not in VERSIONS:
        raise ModelFileError(f"{path}: fastText model version {version}; versions {VERSIONS} are read")
    a = r.unpack(_ARGS)
    args = FastTextArgs(a[0], a[1], a[2], a[3], a[4], a[5], LOSSES.get(a[6], f"loss{a[6]}"),
                        MODELS.get(a[7], f"model{a[7]}"), a[8], a[9], a[10], a[11], a[12])
    if version == 11 and args.model == "supervised":  # fastText's own rule: no character n-grams then
        args = FastTextArgs(**{**{f: getattr(args, f) for f in FastTextArgs.__slots__}, "maxn": 0})
    size, nwords, nlabels, _ntokens, prune_size = r.unpack(_DICT)
    if not 0 <= nwords <= size or nlabels != size - nwords or size > MAX_VALUES:
        raise ModelFileError(f"{path}: not a fastText model (a dictionary of {size} entries, {nwords} words)")
    words: list[bytes] = []
    counts: list[int] = []
    entry = struct.Struct("<qb")
    for _ in range(size):
        end = buf.find(b"\0", r.pos)
        if end < 0:
            r.take(len(buf))  # raises: truncated
        words.append(bytes(buf[r.pos:end]))
        r.pos = end + 1
        count, _type = r.unpack(entry)
        counts.append(count)
    pruneidx: dict[int, int] | None = None
    if prune_size >= 0:
        pairs = r.array(np, "<i4", 2 * prune_size).reshape(-1, 2).tolist()
        pruneidx = {first: second for first, second in pairs}
    (quant_input,) = r.unpack(struct.Struct("<?"))
    inp = _quantized(r, np) if quant_input else _dense(r, np)
    if not quant_input and pruneidx is not None:
        raise ModelFileError(f"{path}: not a fastText model (a pruned dictionary over a dense matrix)")
    (qout,) = r.unpack(struct.Struct("<?"))
    out = _quantized(r, np) if quant_input and qout else _dense(r, np)
    dims = (inp.dim if isinstance(inp, QuantizedMatrix) else inp.shape[1],
            out.dim if isinstance(out, QuantizedMatrix) else out.shape[1])
    if dims != (args.dim, args.dim):
        raise ModelFileError(f"{path}: not a fastText model (matrices of {dims} columns, dim {args.dim})")
    if r.pos != len(buf):
        raise ModelFileError(f"{path}: not a fastText model ({len(buf) - r.pos} bytes after the output matrix)")
    return FastTextFile(version, args, words, counts, nwords, nlabels, pruneidx, inp, out,
                        bool(quant_input)), buf
