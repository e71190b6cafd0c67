"""The `.thc` model file: versioned, checksummed, byte-reproducible.

Layout (integers little-endian):

    magic       8 bytes  b"\\x89THC\\r\\n\\x1a\\n"  (a binary file that text tools do not mangle)
    version     uint16   FORMAT_VERSION; a reader refuses a newer one
    header_len  uint32
    header      JSON, UTF-8, sorted keys: labels, loss, dim, features (the FeatureSpec), scale_bits,
                rows, and the training record (hyper-parameters, examples per label, trainer)
    row_ids     uint32 × rows          bucket ids with a trained embedding row, ascending
    rows        int32 × rows × dim     the rows, fixed point: value = int × 2^-scale_bits
    output      float32 × labels × dim the output matrix
    sha256      32 bytes               of everything above

Nothing in the file depends on the clock or the machine, so the same training data and seed give
the same bytes. A file that is truncated, from a newer version, or altered is refused with a
`ModelFileError` that says which.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
from array import array
from pathlib import Path
from typing import Any

from thresher.classify.features import FeatureSpec
from thresher.classify.model import Model
from thresher.core.errors import ThresherError

MAGIC = b"\x89THC\r\n\x1a\n"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sHI")
_DIGEST = 32


class ModelFileError(ThresherError):
    """A classifier model file cannot be used: missing, not a model, truncated, newer, altered."""


def _le(a: array[Any]) -> bytes:
    if sys.byteorder == "big":
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def _from_le(typecode: str, data: bytes) -> array[Any]:  # the item type follows `typecode`
    a = array(typecode)
    a.frombytes(data)
    if sys.byteorder == "big":
        a.byteswap()
    return a


def dump_model(model: Model) -> bytes:
    header = {
        "format": "thresher-classifier",
        "labels": list(model.labels),
        "loss": model.loss,
        "dim": model.dim,
        "features": model.spec.to_dict(),
        "scale_bits": model.scale_bits,
        "rows": len(model.row_ids),
        "training": model.info,
    }
    header_bytes = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    body = b"".join(
        [
            _PREFIX.pack(MAGIC, FORMAT_VERSION, len(header_bytes)),
            header_bytes,
            _le(model.row_ids),
            _le(model.rows),
            _le(model.output),
        ]
    )
    return body + hashlib.sha256(body).digest()


def save_model(model: Model, path: str | os.PathLike[str]) -> str:
    data = dump_model(model)
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)
    model.sha256 = hashlib.sha256(data).hexdigest()
    return model.sha256


def read_header(data: bytes, where: str) -> tuple[dict[str, Any], int]:
    """The header of a model file's bytes and where its weights start; checks magic and version."""
    if len(data) < _PREFIX.size:
        raise ModelFileError(f"{where}: truncated classifier model ({len(data)} bytes)")
    magic, version, header_len = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise ModelFileError(f"{where}: not a thresher classifier model (.thc)")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{where}: model file format version {version} is newer than this thresher reads ({FORMAT_VERSION}); "
            f"upgrade thresher"
        )
    start = _PREFIX.size + header_len
    if len(data) < start + _DIGEST:
        raise ModelFileError(f"{where}: truncated classifier model (header incomplete)")
    try:
        header = json.loads(data[_PREFIX.size : start].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{where}: damaged classifier model header ({exc})") from None
    return header, start


def model_from_bytes(data: bytes, where: str = "model") -> Model:
    header, start = read_header(data, where)
    try:
        labels = tuple(header["labels"])
        dim = int(header["dim"])
        rows = int(header["rows"])
        loss = header["loss"]
        spec = FeatureSpec.from_dict(header["features"])
        scale_bits = int(header["scale_bits"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFileError(f"{where}: damaged classifier model header ({exc})") from None
    expected = start + 4 * rows + 4 * rows * dim + 4 * len(labels) * dim + _DIGEST
    if len(data) < expected:
        raise ModelFileError(f"{where}: truncated classifier model ({len(data)} of {expected} bytes)")
    if len(data) > expected:
        raise ModelFileError(f"{where}: classifier model has {len(data) - expected} unexpected trailing bytes")
    body = data[: -_DIGEST]
    if hashlib.sha256(body).digest() != data[-_DIGEST:]:
        raise ModelFileError(f"{where}: classifier model checksum mismatch: the file was altered or damaged")
    pos = start
    row_ids = _from_le("I", data[pos : pos + 4 * rows])
    pos += 4 * rows
    weights = _from_le("i", data[pos : pos + 4 * rows * dim])
    pos += 4 * rows * dim
    output = _from_le("f", data[pos : pos + 4 * len(labels) * dim])
    try:
        model = Model(
            labels=labels, loss=loss, dim=dim, spec=spec, scale_bits=scale_bits,
            row_ids=row_ids, rows=weights, output=output, info=header.get("training") or {},
        )
    except ValueError as exc:
        raise ModelFileError(f"{where}: {exc}") from None
    model.sha256 = hashlib.sha256(data).hexdigest()
    return model


def load_model(path: str | os.PathLike[str]) -> Model:
    """Read and verify a `.thc` file (magic, version, size, sha256)."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise ModelFileError(f"classifier model not found: {path}") from None
    except IsADirectoryError:
        raise ModelFileError(f"classifier model is a directory: {path}") from None
    return model_from_bytes(data, str(path))


def load_thc(path: str, *, tokenizer: str | None = None, max_len: int = 256) -> Model:
    """The `thc` classifier kind's loader (`thresher.classify.kinds`): `load_model` (a `.thc` model
    reads no tokenizer and scores whole texts, so both are unused)."""
    return load_model(path)
