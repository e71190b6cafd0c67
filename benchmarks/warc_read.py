"""Reading web archives: thresher's pure and FastWARC-backed readers next to warcio and FastWARC used
directly, in one run on one core; then Parquet shard write/read throughput next to JSONL.gz.

Corpus: the per-record-gzip WARC samples of ../shared/data/warc concatenated `--copies` times into
benchmarks/.data/warc_bench.warc.gz (gzip members concatenate into a valid WARC.gz). The copies are
the same real records repeated, so the numbers measure parsing, not variety.

Readers and what each one does per record:
- `warcio`: ArchiveIterator, `content_stream().read()` (payload de-chunked and content-decoded);
- `fastwarc`: ArchiveIterator(parse_http=True), `reader.read()` of the payload;
- `thresher pure frames` / `thresher fast frames`: framing only (headers and block bytes);
- `thresher pure` / `thresher fast`: the whole reader (HTTP parsing, decoding, media type, charset,
  documents with provenance), which is what a build pays.

Peers are optional: install warcio and fastwarc in a side environment (benchmarks/.venvs/warc) or
the project one. Writes benchmarks/results/warc_read.json.

    python benchmarks/warc_read.py --copies 10
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from thresher.core.document import Document
from thresher.read.base import Partition
from thresher.read.config import InputConfig
from thresher.read.warc import iter_records, read_warc_pure
from thresher.read.warc_config import WarcConfig
from thresher.read.warc_payload import RawRecord

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "warc"
SAMPLES = (
    "aut/example.warc.gz",
    "dolma/sample-0000.warc.gz",
    "dolma/sample-0001.warc.gz",
    "pywb/iana.warc.gz",
    "resiliparse/warcfile.warc.gz",
    "resiliparse/clueweb-quirk.warc.gz",
    "ukwa/BL-20140325121225068-00000-32090_opera_8443.warc.gz",
    "ukwa/BL-20140325122341434-00000-32090_opera_8443.warc.gz",
    "ukwa/IAH-urls-wget.warc.gz",
    "ukwa/flashfrozen-jwat-recompressed.warc.gz",
    "whirlwind/whirlwind.warc.gz",
)
CAP = 64 * 1024 * 1024


def build_corpus(copies: int) -> Path:
    dest = ROOT / "benchmarks" / ".data" / f"warc_bench_x{copies}.warc.gz"
    if dest.exists():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    blobs = [(DATA / name).read_bytes() for name in SAMPLES]
    tmp = dest.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        for _ in range(copies):
            for blob in blobs:
                out.write(blob)
    os.replace(tmp, dest)
    return dest


def measure(fn: Callable[[], int], size: int) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    records = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    # Rates are per CPU second: every reader here is single-threaded, and CPU time is what stays
    # comparable on a shared machine (wall time is kept for reference).
    return {
        "records": records,
        "wall_seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
        "records_per_s": round(records / cpu),
        "mb_per_s": round(size / cpu / 1e6, 1),
    }


def run_warcio(path: Path) -> int:
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh):
            rec.content_stream().read()
            n += 1
    return n


def run_fastwarc(path: Path) -> int:
    from fastwarc.warc import ArchiveIterator

    n = 0
    for rec in ArchiveIterator(str(path), parse_http=True, fsspec_args=False):
        rec.reader.read()
        n += 1
    return n


def run_frames(path: Path, fast: bool) -> int:
    if fast:
        from thresher.read.warc_fast import iter_records_fast

        records = iter_records_fast(str(path), CAP, WarcConfig())
    else:
        records = iter_records(str(path), CAP, WarcConfig())
    return sum(1 for r in records if isinstance(r, RawRecord))


def documents(path: Path) -> list[dict[str, Any]]:
    part = Partition(0, "warc", (str(path),))
    out = []
    for item in read_warc_pure(part, InputConfig(), WarcConfig()):
        if isinstance(item, Document):
            item.text, item.html = item.html or "", None
            out.append(item.to_record())
    return out


def parquet_bench(path: Path) -> dict[str, Any]:
    try:
        from thresher.write.parquet import ParquetFormat, read_records
    except ImportError:
        return {"skipped": "pyarrow not installed"}
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return {"skipped": "pyarrow not installed"}
    from thresher.read.parquet import read_parquet
    from thresher.write.atomic import dumps_line
    from thresher.write.formats import JsonlGzFormat

    base = documents(path)
    recs = []
    while len(recs) < 20_000:  # the real pages repeated with new ids, to a size worth timing
        for r in base:
            recs.append({**r, "id": f"{len(recs):016x}"})
    text_mb = sum(len(r["text"].encode()) for r in recs) / 1e6
    out: dict[str, Any] = {"documents": len(recs), "text_mb": round(text_mb, 1)}
    with tempfile.TemporaryDirectory() as tmp:
        piece = Path(tmp) / "piece.jsonl"
        piece.write_bytes(b"".join(dumps_line(r) for r in recs))
        for name, fmt in (("parquet_zstd", ParquetFormat()), ("jsonl_gz", JsonlGzFormat())):
            dest = Path(tmp) / f"shard{fmt.suffix}"
            t0 = time.process_time()
            fmt.assemble([piece], dest)
            wall = time.process_time() - t0
            out[f"{name}_assemble"] = {
                "cpu_seconds": round(wall, 3),
                "docs_per_s": round(len(recs) / wall),
                "text_mb_per_s": round(text_mb / wall, 1),
                "bytes": dest.stat().st_size,
            }
        shard = Path(tmp) / "shard.parquet"
        t0 = time.process_time()
        n = sum(1 for _ in read_records(shard))
        wall = time.process_time() - t0
        out["parquet_read_records"] = {"cpu_seconds": round(wall, 3), "docs_per_s": round(n / wall)}
        t0 = time.process_time()
        n = sum(1 for _ in read_parquet(Partition(0, "parquet", (str(shard),)), InputConfig()))
        wall = time.process_time() - t0
        out["parquet_read_parquet_input"] = {"cpu_seconds": round(wall, 3), "docs_per_s": round(n / wall)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=10)
    args = ap.parse_args(argv)
    if not DATA.is_dir():
        print(f"no sample data at {DATA}", file=sys.stderr)
        return 1
    path = build_corpus(args.copies)
    size = path.stat().st_size
    results: dict[str, Any] = {
        "corpus": {"files": list(SAMPLES), "copies": args.copies, "bytes": size},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
        "readers": {},
    }
    readers: dict[str, Callable[[], int]] = {
        "thresher pure frames": lambda: run_frames(path, fast=False),
        "thresher pure": lambda: _reader(path, False),
    }
    try:
        import fastwarc  # noqa: F401

        readers["thresher fast frames"] = lambda: run_frames(path, fast=True)
        readers["thresher fast"] = lambda: _reader(path, True)
        readers["fastwarc"] = lambda: run_fastwarc(path)
    except ImportError:
        results["readers"]["fastwarc"] = "not installed"
    try:
        import warcio  # noqa: F401

        readers["warcio"] = lambda: run_warcio(path)
    except ImportError:
        results["readers"]["warcio"] = "not installed"
    path.read_bytes()  # warm the page cache so that the first reader is not charged for the disk
    for name, fn in readers.items():
        row = measure(fn, size)
        results["readers"][name] = row
        print(f"{name:22s} {row['records']:>8} records {row['cpu_seconds']:>7.2f}s cpu "
              f"{row['records_per_s']:>8} rec/s {row['mb_per_s']:>6} MB/s", file=sys.stderr)
    results["parquet"] = parquet_bench(DATA / "aut" / "example.warc.gz")
    print(json.dumps(results["parquet"]), file=sys.stderr)
    dest = ROOT / "benchmarks" / "results" / "warc_read.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {dest}", file=sys.stderr)
    return 0


def _reader(path: Path, fast: bool) -> int:
    """Records framed while reading documents (every record is parsed, documents are built)."""
    part = Partition(0, "warc", (str(path),))
    if fast:
        from thresher.read.warc_fast import iter_records_fast

        records = iter_records_fast(str(path), CAP, WarcConfig())
    else:
        records = iter_records(str(path), CAP, WarcConfig())
    from thresher.read.warc import _Counter, read_records_as_items

    counter = _Counter(records)
    for _ in read_records_as_items(iter(counter), str(path), part.index, InputConfig(), WarcConfig()):
        pass
    return counter.next_index


if __name__ == "__main__":
    sys.exit(main())
